//! Wall-clock helpers: RFC 3339 and ISO 8601 stamps without a date-time dependency.

use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch, now.
pub fn unix_ns_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// (year, month, day, seconds into the day) of a time in ns since the Unix epoch.
fn civil(unix_ns: u64) -> (i64, i64, i64, u64) {
    let secs = unix_ns / 1_000_000_000;
    let days = (secs / 86_400) as i64;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day, secs % 86_400)
}

/// `2026-11-30T07:02:37.123Z` for a time in ns since the Unix epoch.
pub fn rfc3339(unix_ns: u64) -> String {
    let (year, month, day, rem) = civil(unix_ns);
    let millis = (unix_ns / 1_000_000) % 1000;
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

/// `20261130T070237Z` (ISO 8601 basic format, as AWS signatures use it).
pub fn iso8601_basic(unix_ns: u64) -> String {
    let (year, month, day, rem) = civil(unix_ns);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(951_782_400_000_000_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            rfc3339(1_796_022_157_123_000_000),
            "2026-11-30T07:02:37.123Z"
        );
        assert_eq!(iso8601_basic(1_796_022_157_123_000_000), "20261130T070237Z");
    }
}
