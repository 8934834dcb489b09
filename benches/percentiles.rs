//! Latency summaries shared by the benchmarks.

use std::time::Duration;

/// Samples sorted once, read by fraction (0.5 = median).
pub struct Percentiles(Vec<Duration>);

impl Percentiles {
    pub fn new(samples: &[Duration]) -> Self {
        let mut sorted = samples.to_vec();
        sorted.sort();
        Self(sorted)
    }

    /// The sample at `fraction` of the way through, in milliseconds.
    pub fn ms(&self, fraction: f64) -> f64 {
        let index = ((self.0.len().saturating_sub(1)) as f64 * fraction).round() as usize;
        self.0
            .get(index)
            .map_or(f64::NAN, |sample| sample.as_secs_f64() * 1000.0)
    }

    pub fn count(&self) -> usize {
        self.0.len()
    }
}

/// Prints one line: the label, then the median, p90 and p99 of `samples`.
pub fn report(label: &str, samples: &[Duration]) {
    let p = Percentiles::new(samples);
    println!(
        "{label:<44} median {:>9.3} ms  p90 {:>9.3} ms  p99 {:>9.3} ms  (n={})",
        p.ms(0.5),
        p.ms(0.9),
        p.ms(0.99),
        p.count()
    );
}
