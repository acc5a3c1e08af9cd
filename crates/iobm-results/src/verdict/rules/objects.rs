//! An object phase no server counter judged: PUTs to a foreign server, GETs that read the
//! data set many times over, or nothing to tell by.

use super::gateway::get_bytes;
use crate::verdict::rule::{judged, Class, Evidence, Rule};
use crate::{CacheVerdict, Verdict};
use iobm_stats::format_bytes;

/// Writes to a foreign S3 server: its write-back caches cannot be seen.
pub struct WritesUnseen;

/// GETs that read the data set more than twice over: a server's caches can hold it.
pub struct Passes;

/// Nothing tells where an object phase's bytes came from.
pub struct Unseen;

impl Rule for WritesUnseen {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.class == Class::Object && get_bytes(e.phase) == 0).then_some(())?;
        judged(
            Verdict::Unknown,
            "a foreign S3 server's write-back caches cannot be seen from the client",
        )
    }
}

impl Rule for Passes {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        let (data, gets) = (e.phase.settings.data_bytes, get_bytes(e.phase));
        (e.class == Class::Object && data > 0 && gets > 2 * data).then_some(())?;
        judged(
            Verdict::PossiblyCached,
            format!(
                "the GETs read the data set ({}) {:.1} times over; a server's caches can hold it",
                format_bytes(data),
                gets as f64 / data as f64
            ),
        )
    }
}

impl Rule for Unseen {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.class == Class::Object).then_some(())?;
        judged(
            Verdict::Unknown,
            if e.machine.builtin_gateway {
                "the built-in gateway's counters are not in this document"
            } else {
                "the server is not an iobm gateway, so where its bytes came from cannot be seen; state --server-ram or --line-rate"
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::verdict::rules::tests::operation;
    use iobm_stats::names::OpName;

    #[test]
    fn writes_unseen_fires_on_object_phases_without_gets() {
        let m = Machine::with_ram(RAM);
        let mut put = phase(OpName::Put, [MIB, MIB], [1; 2]);
        put.operations = vec![operation(&put, OpName::Put, 2 * MIB)];
        let v = WritesUnseen.judge(&Evidence::of(&put, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Unknown);
        put.operations = vec![operation(&put, OpName::Get, 2 * MIB)];
        assert!(WritesUnseen.judge(&Evidence::of(&put, &m)).is_none());
    }

    #[test]
    fn passes_fires_on_gets_over_twice_the_data_set() {
        let m = Machine::with_ram(RAM);
        let mut get = phase(OpName::Get, [MIB, MIB], [1; 2]);
        get.settings.data_bytes = MIB;
        get.operations = vec![operation(&get, OpName::Get, 2 * MIB)];
        assert!(Passes.judge(&Evidence::of(&get, &m)).is_none());
        get.operations = vec![operation(&get, OpName::Get, 3 * MIB)];
        let v = Passes.judge(&Evidence::of(&get, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::PossiblyCached);
    }

    #[test]
    fn unseen_fires_on_any_object_phase_and_no_file_phase() {
        let m = Machine::with_ram(RAM);
        let mut get = phase(OpName::Get, [MIB, MIB], [1; 2]);
        get.operations = vec![operation(&get, OpName::Get, 2 * MIB)];
        assert_eq!(
            Unseen.judge(&Evidence::of(&get, &m)).unwrap().verdict,
            Verdict::Unknown
        );
        let read = phase(OpName::Read, [MIB, MIB], [1; 2]);
        assert!(Unseen.judge(&Evidence::of(&read, &m)).is_none());
    }
}
