//! A session's tool calls in flight: each call is entered as it starts
//! and leaves as it ends, however it ends, so that `status` and
//! `windlass top` can say what a session is doing and for how long.
//! Shared by the session's Gateway and, for an HTTP session, the service
//! that serves its calls.

use super::status::RunningCall;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Clone, Default)]
pub struct InFlight {
    calls: Arc<Mutex<Vec<(u64, String, Instant)>>>,
    next: Arc<AtomicU64>,
}

/// A call in flight; it leaves the list when dropped.
pub struct Entered {
    in_flight: InFlight,
    id: u64,
}

impl InFlight {
    pub fn enter(&self, tool: &str) -> Entered {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut calls) = self.calls.lock() {
            calls.push((id, tool.to_owned(), Instant::now()));
        }
        Entered {
            in_flight: self.clone(),
            id,
        }
    }

    /// The calls in flight, the longest running first.
    pub fn calls(&self) -> Vec<RunningCall> {
        let Ok(calls) = self.calls.lock() else {
            return Vec::new();
        };
        calls
            .iter()
            .map(|(_, tool, since)| RunningCall {
                tool: tool.clone(),
                seconds: since.elapsed().as_secs_f64(),
            })
            .collect()
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        if let Ok(mut calls) = self.in_flight.calls.lock() {
            calls.retain(|(id, _, _)| *id != self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_listed_while_it_runs_oldest_first() {
        let in_flight = InFlight::default();
        let hover = in_flight.enter("hover");
        let diagnostics = in_flight.enter("diagnostics");
        let tools: Vec<String> = in_flight
            .calls()
            .into_iter()
            .map(|call| call.tool)
            .collect();
        assert_eq!(tools, ["hover", "diagnostics"]);
        drop(hover);
        assert_eq!(in_flight.calls().len(), 1);
        drop(diagnostics);
        assert!(in_flight.calls().is_empty());
    }
}
