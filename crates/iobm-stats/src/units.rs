//! Units: byte sizes and durations parsed from strings such as `32G`, `1MiB`, `30s`, `3m`, and
//! formatted back for people (binary and decimal rates side by side, as the seeds print them).

use std::fmt;
use std::time::Duration;

/// Why a size or duration string could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnitError {
    #[error("'{0}' is empty; expected a number with an optional unit")]
    Empty(String),
    #[error("'{0}' is not a number with a unit (examples: {1})")]
    Malformed(String, &'static str),
    #[error("'{0}' has an unknown unit '{1}' (use {2})")]
    UnknownUnit(String, String, &'static str),
    #[error("'{0}' is too large")]
    Overflow(String),
}

const SIZE_EXAMPLES: &str = "4096, 4k, 1MiB, 32G, 1.5GB";
const SIZE_UNITS: &str =
    "B, K/KiB, M/MiB, G/GiB, T/TiB, P/PiB, or KB, MB, GB, TB, PB for powers of 1000";
const TIME_EXAMPLES: &str = "30, 500ms, 30s, 3m, 1h";
const TIME_UNITS: &str = "ns, us, ms, s, m, h";

/// Splits "1.5GiB" into ("1.5", "GiB").
fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Parses a byte size. Single letters and `*iB` are powers of 1024 (`4k` = 4096, as in fio and
/// dd); `KB`, `MB`, ... are powers of 1000.
pub fn parse_bytes(input: &str) -> Result<u64, UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty(input.to_string()));
    }
    let (num, unit) = split_number(s);
    if num.is_empty() || num.chars().filter(|c| *c == '.').count() > 1 {
        return Err(UnitError::Malformed(input.to_string(), SIZE_EXAMPLES));
    }
    let multiplier: u64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kib" => 1 << 10,
        "m" | "mib" => 1 << 20,
        "g" | "gib" => 1 << 30,
        "t" | "tib" => 1 << 40,
        "p" | "pib" => 1 << 50,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "pb" => 1_000_000_000_000_000,
        _ => {
            return Err(UnitError::UnknownUnit(
                input.to_string(),
                unit.to_string(),
                SIZE_UNITS,
            ))
        }
    };
    if let Ok(whole) = num.parse::<u64>() {
        return whole
            .checked_mul(multiplier)
            .ok_or_else(|| UnitError::Overflow(input.to_string()));
    }
    let value: f64 = num
        .parse()
        .map_err(|_| UnitError::Malformed(input.to_string(), SIZE_EXAMPLES))?;
    let bytes = value * multiplier as f64;
    if bytes >= u64::MAX as f64 {
        return Err(UnitError::Overflow(input.to_string()));
    }
    Ok(bytes.round() as u64)
}

const RATE_EXAMPLES: &str = "100Gbit, 25Gbit/s, 10Gbps, 1.25GB/s, 800MiB/s";

/// Parses a network's speed into bytes per second: bits with `bit`/`bit/s`/`bps` after a decimal
/// prefix (`100Gbit` = 12.5 GB/s, as links are sold), or a byte size per second (`1.25GB/s`,
/// `800MiB/s`).
pub fn parse_rate(input: &str) -> Result<u64, UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty(input.to_string()));
    }
    let (num, unit) = split_number(s);
    let lower = unit.to_ascii_lowercase();
    let bits = lower
        .strip_suffix("bit/s")
        .or_else(|| lower.strip_suffix("bps"))
        .or_else(|| lower.strip_suffix("bit"));
    if let Some(prefix) = bits {
        let bits_per_unit: f64 = match prefix {
            "" => 1.0,
            "k" => 1e3,
            "m" => 1e6,
            "g" => 1e9,
            "t" => 1e12,
            _ => return Err(UnitError::UnknownUnit(
                input.to_string(),
                unit.to_string(),
                "bit, Kbit, Mbit, Gbit, Tbit (or bit/s, bps), or a size per second such as GB/s",
            )),
        };
        let value: f64 = num
            .parse()
            .map_err(|_| UnitError::Malformed(input.to_string(), RATE_EXAMPLES))?;
        let bytes = value * bits_per_unit / 8.0;
        if bytes >= u64::MAX as f64 {
            return Err(UnitError::Overflow(input.to_string()));
        }
        return Ok(bytes.round() as u64);
    }
    match s.strip_suffix("/s") {
        Some(size) => parse_bytes(size),
        None => Err(UnitError::Malformed(input.to_string(), RATE_EXAMPLES)),
    }
}

/// Parses a duration: a plain number is seconds; units `ns`, `us`, `ms`, `s`, `m`, `h`.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty(input.to_string()));
    }
    let (num, unit) = split_number(s);
    let value: f64 = num
        .parse()
        .map_err(|_| UnitError::Malformed(input.to_string(), TIME_EXAMPLES))?;
    let seconds_per_unit = match unit {
        "" | "s" | "sec" => 1.0,
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(UnitError::UnknownUnit(
                input.to_string(),
                unit.to_string(),
                TIME_UNITS,
            ))
        }
    };
    Duration::try_from_secs_f64(value * seconds_per_unit)
        .map_err(|_| UnitError::Overflow(input.to_string()))
}

/// Formats a byte count with a binary unit: `512 B`, `4.00 KiB`, `1.50 GiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.2} {}", UNITS[unit])
}

/// Formats a duration compactly: `850ns`, `12.3us`, `4.56ms`, `32.682s`.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 1_000 {
        format!("{ns}ns")
    } else if ns < 1_000_000 {
        format!("{:.1}us", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2}ms", ns as f64 / 1e6)
    } else {
        format!("{:.3}s", ns as f64 / 1e9)
    }
}

/// A throughput in bytes per second that prints both ways: `1002.62 MiB/s (1051.33 MB/s)`.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
pub struct Rate(pub f64);

impl Rate {
    /// bytes / seconds; zero when no time has passed.
    pub fn from_bytes_secs(bytes: u64, secs: f64) -> Rate {
        if secs > 0.0 {
            Rate(bytes as f64 / secs)
        } else {
            Rate(0.0)
        }
    }
    pub fn mib_s(self) -> f64 {
        self.0 / (1024.0 * 1024.0)
    }
    pub fn mb_s(self) -> f64 {
        self.0 / 1e6
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.2} MiB/s ({:.2} MB/s)", self.mib_s(), self.mb_s())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_binary_and_decimal() {
        assert_eq!(parse_bytes("4096").unwrap(), 4096);
        assert_eq!(parse_bytes("4k").unwrap(), 4096);
        assert_eq!(parse_bytes("1MiB").unwrap(), 1 << 20);
        assert_eq!(parse_bytes("32G").unwrap(), 32 << 30);
        assert_eq!(parse_bytes("1.5GiB").unwrap(), 3 << 29);
        assert_eq!(parse_bytes("8MB").unwrap(), 8_000_000);
        assert_eq!(parse_bytes(" 2 KiB ").unwrap(), 2048);
    }

    #[test]
    fn sizes_rejected_with_reason() {
        assert!(matches!(
            parse_bytes("12X"),
            Err(UnitError::UnknownUnit(_, u, _)) if u == "X"
        ));
        assert!(matches!(parse_bytes(""), Err(UnitError::Empty(_))));
        assert!(matches!(parse_bytes("G"), Err(UnitError::Malformed(..))));
        assert!(matches!(
            parse_bytes("1.2.3M"),
            Err(UnitError::Malformed(..))
        ));
        assert!(matches!(parse_bytes("-1"), Err(UnitError::Malformed(..))));
        assert!(matches!(
            parse_bytes("99999999999P"),
            Err(UnitError::Overflow(_))
        ));
        let msg = parse_bytes("12X").unwrap_err().to_string();
        assert!(msg.contains("12X") && msg.contains("MiB"), "{msg}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("3m").unwrap(), Duration::from_secs(180));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("3x").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(32 << 30), "32.00 GiB");
        assert_eq!(format_duration(Duration::from_nanos(850)), "850ns");
        assert_eq!(format_duration(Duration::from_millis(32682)), "32.682s");
        let r = Rate::from_bytes_secs(1 << 20, 1.0);
        assert_eq!(r.to_string(), "1.00 MiB/s (1.05 MB/s)");
        assert_eq!(Rate::from_bytes_secs(10, 0.0).0, 0.0);
    }

    #[test]
    fn line_rates_are_read_in_bits_or_in_bytes_per_second() {
        assert_eq!(parse_rate("100Gbit").unwrap(), 12_500_000_000);
        assert_eq!(parse_rate("25Gbit/s").unwrap(), 3_125_000_000);
        assert_eq!(parse_rate("10Gbps").unwrap(), 1_250_000_000);
        assert_eq!(parse_rate("1.5Mbit").unwrap(), 187_500);
        assert_eq!(parse_rate("1.25GB/s").unwrap(), 1_250_000_000);
        assert_eq!(parse_rate("800MiB/s").unwrap(), 800 << 20);
        assert!(matches!(parse_rate("100G"), Err(UnitError::Malformed(..))));
        assert!(matches!(
            parse_rate("5Xbit"),
            Err(UnitError::UnknownUnit(..))
        ));
        assert!(matches!(parse_rate(""), Err(UnitError::Empty(..))));
    }
}
