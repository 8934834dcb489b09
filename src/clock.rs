//! Times as the commands show and read them, in UTC: a store time shown
//! to the second, and a `--since` or `--older-than` argument (a duration
//! back, `today`, or a date) read into one; with the calendar arithmetic
//! they need, done here rather than by a calendar crate.

use anyhow::{Context as _, Result, bail};
use std::time::Duration;

/// A store time (milliseconds since the epoch) to the second, in UTC.
pub fn shown_time(at_ms: i64) -> String {
    let since = Duration::from_millis(u64::try_from(at_ms).unwrap_or(0));
    let mut shown = timestamp(since);
    // `…:SS.micros Z` → `…:SSZ`
    shown.truncate(19);
    shown.push('Z');
    shown
}

/// A `--since` (or `gc --older-than`) argument in milliseconds since the
/// epoch.
pub fn since_ms(since: &str, now_ms: i64) -> Result<i64> {
    const DAY_MS: i64 = 86_400_000;
    if since == "today" {
        return Ok(now_ms - now_ms.rem_euclid(DAY_MS));
    }
    if let Some(day) = parse_date(since) {
        return Ok(day * DAY_MS);
    }
    let unit = since.len().saturating_sub(1);
    let (number, unit) = since.split_at(unit);
    let scale = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => DAY_MS,
        _ => {
            bail!("--since {since:?}: expected a duration (30s, 15m, 1h, 7d), today, or YYYY-MM-DD")
        }
    };
    let number: i64 = number
        .parse()
        .with_context(|| format!("--since {since:?}: {number:?} is not a number"))?;
    Ok(now_ms - number.saturating_mul(scale))
}

/// Days since the epoch of a `YYYY-MM-DD` date.
fn parse_date(text: &str) -> Option<i64> {
    let mut parts = text.splitn(3, '-').map(|part| part.parse::<u64>().ok());
    let (year, month, day) = (parts.next()??, parts.next()??, parts.next()??);
    days_from_civil(year, month, day).and_then(|days| i64::try_from(days).ok())
}

/// UTC time to the microsecond, as log lines write it
/// (`2026-11-22T11:02:35.207008Z`).
fn timestamp(since_epoch: Duration) -> String {
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

/// Days from 1970-01-01 to the given proleptic Gregorian date, the
/// inverse of [`civil_date`]; `None` before 1970 or for a day that does
/// not exist.
fn days_from_civil(year: u64, month: u64, day: u64) -> Option<u64> {
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let year = if month <= 2 {
        year.checked_sub(1)?
    } else {
        year
    };
    let era = year / 400;
    let year_of_era = year % 400;
    let month_from_march = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * month_from_march + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    (era * 146_097 + day_of_era).checked_sub(719_468)
}

fn days_in_month(year: u64, month: u64) -> u64 {
    let leap = year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400));
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn dates_turn_back_into_days() {
        for days in [0, 10_956, 11_016, 20_414, 47_541, 1_000_000] {
            let (year, month, day) = civil_date(days);
            assert_eq!(days_from_civil(year, month, day), Some(days));
        }
        assert_eq!(days_from_civil(2026, 2, 29), None);
        assert_eq!(days_from_civil(2026, 13, 1), None);
        assert_eq!(days_from_civil(1969, 12, 31), None);
    }

    #[test]
    fn since_takes_durations_today_and_dates() {
        let now = 1_795_345_355_207;
        assert_eq!(since_ms("1h", now).unwrap(), now - 3_600_000);
        assert_eq!(since_ms("7d", now).unwrap(), now - 7 * 86_400_000);
        assert_eq!(since_ms("today", now).unwrap(), 1_795_305_600_000);
        assert_eq!(since_ms("2026-11-22", now).unwrap(), 1_795_305_600_000);
        assert!(since_ms("yesterday", now).is_err());
        assert!(since_ms("xh", now).is_err());
    }
}
