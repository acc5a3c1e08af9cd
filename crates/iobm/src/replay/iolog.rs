//! fio's iolog, versions 2 and 3 (fio's `read_iolog`): a header line, then per line
//! `FILE add|open|close` or `FILE read|write|sync|datasync|trim OFFSET LENGTH` (version 2 also
//! `FILE wait USECS 0`), each line of version 3 after its time in milliseconds. A file is
//! added before it is used; iobm keeps every file open for the whole replay, so open and
//! close only check that the file was added.

use super::trace::{number, BadLine, Kind, Names, Trace, TraceOp};
use iobm_stats::names::TraceFormat;

/// The header lines.
pub const V2: &str = "fio version 2 iolog";
pub const V3: &str = "fio version 3 iolog";

/// Parses an iolog of `format` (the header line already recognised).
pub fn parse(text: &str, format: TraceFormat) -> Result<Trace, BadLine> {
    let timed = format == TraceFormat::Iolog3;
    let mut names = Names::default();
    let mut ops = Vec::new();
    // Version 2's time: the waits so far.
    let mut waited_ns = 0u64;
    for (i, line) in text.lines().enumerate().skip(1) {
        let n = i + 1;
        let mut words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() {
            continue;
        }
        let at_ns = if timed {
            let ms = number(words.remove(0), "the time (ms)", n)?;
            ms.checked_mul(1_000_000)
                .ok_or_else(|| BadLine::new(n, "the time is too large"))?
        } else {
            waited_ns
        };
        match words[..] {
            [file, action] => file_action(&mut names, file, action, n)?,
            [file, action, offset, length] => {
                let offset = number(offset, "the offset", n)?;
                let len = number(length, "the length", n)?;
                let Some(kind) = io_action(action, timed, n)? else {
                    // Version 2's wait: OFFSET microseconds.
                    waited_ns = waited_ns.saturating_add(offset.saturating_mul(1000));
                    continue;
                };
                let Some(file) = names.get(file) else {
                    return Err(BadLine::new(
                        n,
                        format!("{file} is used before its 'add' line"),
                    ));
                };
                if len == 0 && matches!(kind, Kind::Read | Kind::Write) {
                    return Err(BadLine::new(n, "a read or write of 0 bytes"));
                }
                if offset.checked_add(len).is_none() {
                    return Err(BadLine::new(n, "offset + length is past 2^64"));
                }
                ops.push(TraceOp {
                    line: n,
                    at_ns,
                    stream: file as u64,
                    file,
                    kind,
                    offset,
                    len,
                });
            }
            _ => {
                let why = if timed {
                    "expected TIME FILE ACTION [OFFSET LENGTH]"
                } else {
                    "expected FILE ACTION [OFFSET LENGTH]"
                };
                return Err(BadLine::new(n, why));
            }
        }
    }
    let trace = Trace {
        format,
        files: names.names,
        ops,
    };
    trace.finish(text.lines().count())
}

/// What `FILE ACTION OFFSET LENGTH` does; None for version 2's wait.
fn io_action(action: &str, timed: bool, n: usize) -> Result<Option<Kind>, BadLine> {
    Ok(Some(match action {
        "read" => Kind::Read,
        "write" => Kind::Write,
        "sync" | "datasync" => Kind::Sync,
        "trim" => Kind::Trim,
        "wait" if !timed => return Ok(None),
        _ => {
            let why = format!(
                "unknown action '{action}' (read, write, sync, datasync, trim{})",
                if timed { "" } else { ", wait" }
            );
            return Err(BadLine::new(n, why));
        }
    }))
}

/// `FILE add|open|close`.
fn file_action(names: &mut Names, file: &str, action: &str, n: usize) -> Result<(), BadLine> {
    match action {
        "add" => {
            names.add(file);
            Ok(())
        }
        "open" | "close" if names.get(file).is_some() => Ok(()),
        "open" | "close" => Err(BadLine::new(
            n,
            format!("{file} {action} before its 'add' line"),
        )),
        _ => Err(BadLine::new(
            n,
            format!("unknown file action '{action}' (add, open, close)"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_any(text: &str) -> Result<Trace, BadLine> {
        match text.starts_with(V3) {
            true => parse(text, TraceFormat::Iolog3),
            false => parse(text, TraceFormat::Iolog2),
        }
    }

    #[test]
    fn version_2_reads_files_actions_and_waits() {
        let text = "fio version 2 iolog\n/dev/sda add\n/dev/sda open\n/dev/sda write 4096 8192\n/dev/sda wait 150000 0\n/dev/sda read 0 4096\n/dev/sda sync 0 0\n/dev/sda trim 0 4096\n/dev/sda close\n";
        let t = parse_any(text).unwrap();
        assert_eq!(t.format, TraceFormat::Iolog2);
        assert_eq!(t.files, ["/dev/sda"]);
        let got: Vec<_> = t
            .ops
            .iter()
            .map(|o| (o.line, o.at_ns, o.kind, o.offset, o.len))
            .collect();
        assert_eq!(
            got,
            [
                (4, 0, Kind::Write, 4096, 8192),
                (6, 150_000_000, Kind::Read, 0, 4096),
                (7, 150_000_000, Kind::Sync, 0, 0),
                (8, 150_000_000, Kind::Trim, 0, 4096),
            ]
        );
    }

    #[test]
    fn version_3_times_are_milliseconds_from_the_first_read_or_write() {
        let text = "fio version 3 iolog\n5 a add\n7 b add\n10 a write 0 512\n110 b read 512 1024\n310 a datasync 0 0\n";
        let t = parse_any(text).unwrap();
        assert_eq!(t.format, TraceFormat::Iolog3);
        let got: Vec<_> = t.ops.iter().map(|o| (o.at_ns, o.stream, o.kind)).collect();
        assert_eq!(
            got,
            [
                (0, 0, Kind::Write),
                (100_000_000, 1, Kind::Read),
                (300_000_000, 0, Kind::Sync)
            ]
        );
    }

    #[test]
    fn malformed_lines_are_named_with_why() {
        let cases = [
            (
                "fio version 2 iolog\nf add\nf write x 4096\n",
                3,
                "the offset 'x' is not a whole number",
            ),
            (
                "fio version 2 iolog\nf add\nf scribble 0 4096\n",
                3,
                "unknown action 'scribble'",
            ),
            (
                "fio version 2 iolog\ng read 0 4096\n",
                2,
                "g is used before its 'add' line",
            ),
            (
                "fio version 2 iolog\nf add\nf read 0\n",
                3,
                "expected FILE ACTION [OFFSET LENGTH]",
            ),
            (
                "fio version 3 iolog\n1 f add\nf read 0 4096\n",
                3,
                "the time (ms) 'f' is not a whole number",
            ),
            (
                "fio version 3 iolog\n1 f add\n2 f wait 10 0\n",
                3,
                "unknown action 'wait'",
            ),
            (
                "fio version 2 iolog\nf add\nf read 0 0\n",
                3,
                "a read or write of 0 bytes",
            ),
            (
                "fio version 2 iolog\nf add\nf remove\n",
                3,
                "unknown file action 'remove'",
            ),
            (
                "fio version 2 iolog\nf add\nf sync 0 0\n",
                3,
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
