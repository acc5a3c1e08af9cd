//! A phase that moved no data: nothing to judge.

use crate::verdict::rule::{judged, Evidence, Rule};
use crate::{CacheVerdict, Verdict};

pub struct NothingMoved;

impl Rule for NothingMoved {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.moved == 0).then_some(())?;
        judged(
            Verdict::Unknown,
            format!("no data moved ({} operations)", e.phase.op),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use iobm_stats::names::OpName;

    #[test]
    fn fires_when_no_data_moved() {
        let m = Machine::with_ram(RAM);
        let v = NothingMoved
            .judge(&Evidence::of(&phase(OpName::Create, [0, 0], [1; 2]), &m))
            .unwrap();
        assert_eq!(
            (v.verdict, v.evidence.as_str()),
            (Verdict::Unknown, "no data moved (create operations)")
        );
        let read = phase(OpName::Read, [MIB, 0], [1; 2]);
        assert!(NothingMoved.judge(&Evidence::of(&read, &m)).is_none());
    }
}
