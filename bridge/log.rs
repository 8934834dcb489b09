//! The bridge's few log lines (attached, the daemon lost, a fallback), to
//! stderr and to the log file `windlass` chose; never to stdout, which is
//! the MCP channel.

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;

static FILE: Mutex<Option<File>> = Mutex::new(None);

pub fn open(path: Option<PathBuf>) {
    let file = path.and_then(|path| File::options().create(true).append(true).open(path).ok());
    if let Ok(mut slot) = FILE.lock() {
        *slot = file;
    }
}

pub fn info(message: &str) {
    write("INFO", message);
}

pub fn warn(message: &str) {
    write("WARN", message);
}

pub fn error(message: &str) {
    write("ERROR", message);
}

fn write(level: &str, message: &str) {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let line = format!(
        "{} {level:>5} windlass-bridge: {message}\n",
        timestamp(since_epoch)
    );
    let _ = std::io::stderr().write_all(line.as_bytes());
    if let Ok(mut slot) = FILE.lock()
        && let Some(file) = slot.as_mut()
    {
        let _ = file.write_all(line.as_bytes());
    }
}

/// UTC time as the rest of windlass's log writes it
/// (`2026-11-22T11:02:35.207008Z`), without a calendar crate.
fn timestamp(since_epoch: std::time::Duration) -> String {
    let seconds = since_epoch.as_secs();
    let (year, month, day) = civil_date(seconds / 86_400);
    let of_day = seconds % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        since_epoch.subsec_micros()
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01, counted in
/// 400-year eras that start on March 1st so leap days fall at the end.
fn civil_date(days: u64) -> (u64, u64, u64) {
    let days = days + 719_468;
    let era = days / 146_097;
    let day_of_era = days % 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_utc_calendar_times() {
        assert_eq!(timestamp(Duration::ZERO), "1970-01-01T00:00:00.000000Z");
        assert_eq!(
            timestamp(Duration::from_micros(1_795_345_355_207_008)),
            "2026-11-22T11:02:35.207008Z"
        );
        // A leap day, and the day after a century that is not a leap year.
        assert_eq!(
            timestamp(Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000000Z"
        );
        assert_eq!(
            timestamp(Duration::from_secs(4_107_542_400)),
            "2100-03-01T00:00:00.000000Z"
        );
    }
}
