//! blktrace as `blkparse` prints it by default: per event `MAJ,MIN CPU SEQ SECONDS.NANOS PID
//! ACTION RWBS`, and for a request `SECTOR + BLOCKS [PROCESS]`, until the summary (`CPU0
//! (8,0):`, `Total (8,0):`). iobm replays the queue (`Q`) events, as fio replays a binary
//! blktrace: what the processes asked for, before the block layer merged or split it.
//! RWBS: a leading `F` is a flush (a sync before the request), then `R` read, `W` write,
//! `D` discard (a trim, not replayed) or `N` no data; sectors and blocks are 512 bytes.

use super::trace::{number, BadLine, Kind, Names, Trace, TraceOp};
use iobm_stats::names::TraceFormat;

const SECTOR: u64 = 512;

/// Whether a line is a blkparse event (its first word `MAJ,MIN`).
pub fn looks_like(line: &str) -> bool {
    line.split_whitespace()
        .next()
        .is_some_and(|w| device(w).is_some())
}

fn device(word: &str) -> Option<(u32, u32)> {
    let (major, minor) = word.split_once(',')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// `SECONDS.NANOS` in ns.
fn time_ns(word: &str, n: usize) -> Result<u64, BadLine> {
    let bad = || BadLine::new(n, format!("the time '{word}' is not SECONDS.NANOSECONDS"));
    let (s, frac) = word.split_once('.').ok_or_else(bad)?;
    let digits = frac.len();
    if digits == 0 || digits > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let s: u64 = s.parse().map_err(|_| bad())?;
    let frac: u64 = frac.parse().map_err(|_| bad())?;
    Ok(s * 1_000_000_000 + frac * 10u64.pow(9 - digits as u32))
}

/// What a queue event (its words) asks for, by its RWBS: a sync for a flush, then its read,
/// write or trim as `(kind, offset, length)` in bytes.
fn request(words: &[&str], n: usize) -> Result<Vec<(Kind, u64, u64)>, BadLine> {
    let rwbs = words[6];
    let (flush, rest) = match rwbs.strip_prefix('F') {
        Some(rest) => (true, rest),
        None => (false, rwbs),
    };
    let kind = match rest.chars().next() {
        Some('R') => Kind::Read,
        Some('W') => Kind::Write,
        Some('D') => Kind::Trim,
        Some('N') => Kind::Sync,
        None if flush => Kind::Sync,
        _ => {
            let why = format!("RWBS '{rwbs}' has no R, W, D or N");
            return Err(BadLine::new(n, why));
        }
    };
    let mut asked = Vec::new();
    if flush || kind == Kind::Sync {
        asked.push((Kind::Sync, 0, 0));
    }
    if kind == Kind::Sync {
        return Ok(asked);
    }
    let (sector, blocks) = match words.get(7..10) {
        Some([sector, "+", blocks]) => (
            number(sector, "the sector", n)?,
            number(blocks, "the blocks", n)?,
        ),
        // A flush of no data: `FWS 0 [proc]` or `FWS [proc]`.
        _ if flush => return Ok(asked),
        _ => return Err(BadLine::new(n, "expected SECTOR + BLOCKS after the RWBS")),
    };
    let len = blocks
        .checked_mul(SECTOR)
        .ok_or_else(|| BadLine::new(n, "the blocks are past 2^64 bytes"))?;
    let offset = sector
        .checked_mul(SECTOR)
        .filter(|o| o.checked_add(len).is_some())
        .ok_or_else(|| BadLine::new(n, "the sector is past 2^64 bytes"))?;
    if len > 0 {
        asked.push((kind, offset, len));
    }
    Ok(asked)
}

/// Parses blkparse's text output.
pub fn parse(text: &str) -> Result<Trace, BadLine> {
    let mut names = Names::default();
    let mut ops = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&first) = words.first() else {
            continue;
        };
        if first.starts_with("CPU") || first == "Total" {
            break;
        }
        if device(first).is_none() {
            return Err(BadLine::new(
                n,
                format!("'{first}' is not a device MAJ,MIN: not a blkparse event"),
            ));
        }
        if words.len() < 7 {
            return Err(BadLine::new(
                n,
                "expected MAJ,MIN CPU SEQ TIME PID ACTION RWBS ...",
            ));
        }
        if words[5] != "Q" {
            continue;
        }
        let at_ns = time_ns(words[3], n)?;
        let pid = number(words[4], "the PID", n)?;
        let file = names.add(first);
        for (kind, offset, len) in request(&words, n)? {
            ops.push(TraceOp {
                line: n,
                at_ns,
                stream: pid,
                file,
                kind,
                offset,
                len,
            });
        }
    }
    let trace = Trace {
        format: TraceFormat::Blkparse,
        files: names.names,
        ops,
    };
    trace.finish(text.lines().count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use parse as parse_any;

    #[test]
    fn queue_events_are_replayed_with_sectors_in_bytes() {
        let text = "  8,0    3        1     0.000000000   697  Q  WS 2048 + 8 [kjournald]\n  8,0    3        2     0.000001000   697  G  WS 2048 + 8 [kjournald]\n  8,0    3        3     0.000002000   697  D  WS 2048 + 8 [kjournald]\n  8,16   1        1     0.150000000   700  Q   R 16 + 16 [cat]\n  8,0    3        4     0.300000000   697  Q FWS [kjournald]\n  8,0    3        5     0.400000000   697  Q   D 0 + 8 [fstrim]\n  8,0    3        6     0.500000000   697  C  WS 2048 + 8 [0]\n\nCPU3 (8,0):\n Reads Queued:           0,        0KiB\n";
        let t = parse_any(text).unwrap();
        assert_eq!(t.format, TraceFormat::Blkparse);
        assert_eq!(t.files, ["8,0", "8,16"]);
        let got: Vec<_> = t
            .ops
            .iter()
            .map(|o| (o.line, o.at_ns, o.stream, o.file, o.kind, o.offset, o.len))
            .collect();
        assert_eq!(
            got,
            [
                (1, 0, 697, 0, Kind::Write, 2048 * 512, 4096),
                (4, 150_000_000, 700, 1, Kind::Read, 16 * 512, 8192),
                (5, 300_000_000, 697, 0, Kind::Sync, 0, 0),
                (6, 400_000_000, 697, 0, Kind::Trim, 0, 4096),
            ]
        );
    }

    #[test]
    fn a_flush_with_data_is_a_sync_then_the_write() {
        let text = "8,0 0 1 1.5 9 Q FWFS 8 + 8 [x]\n";
        let kinds: Vec<_> = parse_any(text)
            .unwrap()
            .ops
            .iter()
            .map(|o| o.kind)
            .collect();
        assert_eq!(kinds, [Kind::Sync, Kind::Write]);
    }

    #[test]
    fn malformed_lines_are_named_with_why() {
        let cases = [
            (
                "8,0 0 1 0.000000000 9 Q W 8 + 8 [x]\nhello there\n",
                2,
                "'hello' is not a device",
            ),
            ("8,0 0 1 0.000000000 9 Q\n", 1, "expected MAJ,MIN CPU SEQ"),
            (
                "8,0 0 1 0.000000000 9 Q W 8 + 8 [x]\n8,0 0 2 zero 9 Q W 8 + 8 [x]\n",
                2,
                "the time 'zero'",
            ),
            (
                "8,0 0 1 0.000000000 9 Q X 8 + 8 [x]\n",
                1,
                "RWBS 'X' has no R, W, D or N",
            ),
            (
                "8,0 0 1 0.000000000 9 Q W 8 - 8 [x]\n",
                1,
                "expected SECTOR + BLOCKS",
            ),
            (
                "8,0 0 1 0.000000000 pid Q W 8 + 8 [x]\n",
                1,
                "the PID 'pid'",
            ),
            (
                "8,0 0 1 0.000000000 9 C W 8 + 8 [0]\n",
                1,
                "no read or write",
            ),
        ];
        for (text, line, why) in cases {
            let e = parse_any(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e:?}");
            assert!(e.why.contains(why), "{text:?}: {e:?}");
        }
    }
}
