//! The value parsers of flags with units (sizes, rates, durations) and of the small languages
//! of `--data` and bonnie's `--files`: each error is the text clap prints after the flag.

use super::{FilesArg, LineRate, Rate, Sweep};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use iobm_engine::DataKind;
use std::time::Duration;

/// The values of a vocabulary another crate owns (`all` of them, each by its `name` there,
/// with its `help` line): the names are written once, beside the type, and parse back to it.
pub(super) fn named<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    help: Option<fn(T) -> &'static str>,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(all.iter().map(move |&v| {
        let value = PossibleValue::new(name(v));
        match help {
            Some(help) => value.help(help(v)),
            None => value,
        }
    }))
    .map(move |s| {
        *all.iter()
            .find(|&&v| name(v) == s)
            .expect("one of the possible values")
    })
}

pub(super) fn parse_line_rate(s: &str) -> Result<LineRate, String> {
    if s == "auto" {
        return Ok(LineRate::Auto);
    }
    parse_positive_rate(s).map(LineRate::Rate)
}

pub(super) fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = parse_positive_duration(s)?;
    if d < Duration::from_millis(10) {
        return Err("must be at least 10ms".to_string());
    }
    Ok(d)
}

pub(super) fn parse_positive_size(s: &str) -> Result<u64, String> {
    match iobm_stats::parse_bytes(s) {
        Ok(0) => Err("must be greater than 0".to_string()),
        Ok(v) => Ok(v),
        Err(e) => Err(e.to_string()),
    }
}

pub(super) fn parse_size(s: &str) -> Result<u64, String> {
    iobm_stats::parse_bytes(s).map_err(|e| e.to_string())
}

/// A size per second or a bit rate (`16KiB/s`, `1Mbit`), or `0`.
pub(super) fn parse_rate(s: &str) -> Result<u64, String> {
    if s.trim() == "0" {
        return Ok(0);
    }
    iobm_stats::parse_rate(s).map_err(|e| e.to_string())
}

pub(super) fn parse_positive_rate(s: &str) -> Result<u64, String> {
    match iobm_stats::parse_rate(s) {
        Ok(0) => Err("must be more than zero".into()),
        r => r.map_err(|e| e.to_string()),
    }
}

/// `--until-stable`'s `TOL/WINDOW`: a tolerance in percent (above 0, below 100) and a window of
/// at least 100ms (ten ticks of at least 10ms).
pub(super) fn parse_steady(s: &str) -> Result<iobm_engine::Steady, String> {
    let (tolerance, window) = s
        .split_once('/')
        .ok_or("expected TOL/WINDOW, e.g. 7.5%/15s")?;
    let pct: f64 = tolerance
        .strip_suffix('%')
        .ok_or_else(|| format!("the tolerance '{tolerance}' needs a %, e.g. 7.5%"))?
        .parse()
        .map_err(|_| format!("the tolerance '{tolerance}' is not a number of percent"))?;
    if !(pct > 0.0 && pct < 100.0) {
        return Err(format!(
            "the tolerance {tolerance} is not between 0% and 100%"
        ));
    }
    let window = parse_positive_duration(window)?;
    if window < Duration::from_millis(100) {
        return Err("the window must be at least 100ms (ten samples of 10ms)".to_string());
    }
    Ok(iobm_engine::Steady {
        tolerance_ppm: (pct * 1e4).round() as u32,
        window,
    })
}

/// `--rate`: `N/s` operations per second, or a size per second (`200MiB/s`).
pub(super) fn parse_op_rate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    if let Some(n) = t
        .strip_suffix("/s")
        .and_then(|n| n.trim().parse::<f64>().ok())
    {
        return match n {
            n if !n.is_finite() => Err("must be a finite number of operations per second".into()),
            n if n <= 0.0 => Err("must be more than zero operations per second".into()),
            n if n < 0.001 => Err("must be at least 0.001 operations per second".into()),
            n => Ok(Rate::Ops(n)),
        };
    }
    match iobm_stats::parse_rate(t) {
        Ok(0) => Err("must be more than zero".into()),
        Ok(bytes) => Ok(Rate::Bytes(bytes)),
        Err(e) => Err(format!("{e}; or N/s, operations per second")),
    }
}

/// `--rate-sweep FROM..TO/STEPS`: FROM and TO operations per second (`100..1000/4`) or sizes
/// per second (`10MiB..100MiB/4`), TO at least FROM, 2 to 100 steps.
pub(super) fn parse_rate_sweep(s: &str) -> Result<Sweep, String> {
    const FORM: &str =
        "expected FROM..TO/STEPS, e.g. 100..1000/4 (operations per second) or 10MiB..100MiB/4";
    let (range, steps) = s.rsplit_once('/').ok_or(FORM)?;
    let (from, to) = range.split_once("..").ok_or(FORM)?;
    let steps: u32 = steps
        .trim()
        .parse()
        .map_err(|_| format!("STEPS '{steps}' is not a whole number; {FORM}"))?;
    if !(2..=100).contains(&steps) {
        return Err(format!("STEPS must be from 2 to 100, not {steps}"));
    }
    let (from, to) = (
        parse_op_rate(&format!("{from}/s"))?,
        parse_op_rate(&format!("{to}/s"))?,
    );
    let below = match (from, to) {
        (Rate::Ops(a), Rate::Ops(b)) => b < a,
        (Rate::Bytes(a), Rate::Bytes(b)) => b < a,
        _ => return Err("FROM and TO must both be operations or both sizes per second".into()),
    };
    if below {
        return Err("TO is below FROM".into());
    }
    Ok(Sweep { from, to, steps })
}

/// `MIN..MAX` with sizes that take units.
pub(super) fn parse_size_range(s: &str) -> Result<(u64, u64), String> {
    let (min, max) = s
        .split_once("..")
        .ok_or("expected MIN..MAX, e.g. 4KiB..1MiB")?;
    let (min, max) = (parse_size(min)?, parse_positive_size(max)?);
    if min > max {
        return Err(format!("MIN ({min}) is larger than MAX ({max})"));
    }
    Ok((min, max))
}

/// `FROM..TO` with durations (`2s..5s`, `0..500ms`), FROM before TO.
pub(super) fn parse_window(s: &str) -> Result<(Duration, Duration), String> {
    let (from, to) = s.split_once("..").ok_or("expected FROM..TO, e.g. 2s..5s")?;
    let (from, to) = (parse_any_duration(from)?, parse_any_duration(to)?);
    if from >= to {
        return Err(format!("FROM ({from:?}) is not before TO ({to:?})"));
    }
    Ok((from, to))
}

pub(super) fn parse_any_duration(s: &str) -> Result<Duration, String> {
    iobm_stats::parse_duration(s).map_err(|e| e.to_string())
}

pub(super) fn parse_positive_duration(s: &str) -> Result<Duration, String> {
    match iobm_stats::parse_duration(s) {
        Ok(d) if d.is_zero() => Err("must be greater than 0".to_string()),
        Ok(d) => Ok(d),
        Err(e) => Err(e.to_string()),
    }
}

/// `random`, `zero`, `compressible:PCT` or `dedupe:PCT`.
pub fn parse_data(s: &str) -> Result<DataKind, String> {
    match s {
        "random" => Ok(DataKind::Random),
        "zero" => Ok(DataKind::Zero),
        _ => {
            let (kind, pct): (fn(u8) -> DataKind, &str) =
                match (s.strip_prefix("compressible:"), s.strip_prefix("dedupe:")) {
                    (Some(p), _) => (DataKind::Compressible, p),
                    (_, Some(p)) => (DataKind::Dedupe, p),
                    _ => return Err("expected random, zero, compressible:PCT or dedupe:PCT".into()),
                };
            match pct.trim_end_matches('%').parse::<u8>() {
                Ok(p) if p <= 100 => Ok(kind(p)),
                _ => Err(format!("'{pct}' is not a percentage from 0 to 100")),
            }
        }
    }
}

/// `NUMBER[:MAX[:MIN[:DIRS]]]`, NUMBER in units of 1024 files (bonnie++ -n).
pub fn parse_files(s: &str) -> Result<FilesArg, String> {
    let parts: Vec<&str> = s.split(':').collect();
    if parts.len() > 4 {
        return Err("expected NUMBER[:MAX[:MIN[:DIRS]]]".into());
    }
    let number = |i: usize, what: &str| -> Result<u64, String> {
        match parts.get(i) {
            None | Some(&"") => Ok(0),
            Some(p) => iobm_stats::parse_bytes(p).map_err(|e| format!("{what}: {e}")),
        }
    };
    let files = FilesArg {
        count: number(0, "NUMBER")?
            .checked_mul(1024)
            .ok_or("NUMBER is too large")?,
        max_size: number(1, "MAX")?,
        min_size: number(2, "MIN")?,
        dirs: number(3, "DIRS")?,
    };
    if files.min_size > files.max_size {
        return Err(format!(
            "MIN ({}) is larger than MAX ({})",
            files.min_size, files.max_size
        ));
    }
    Ok(files)
}
