//! Metadata operations that move data bytes without reading or writing a file's blocks:
//! their caching (dentries, inodes) is not measured.

use crate::verdict::rule::{judged, Class, Evidence, Rule};
use crate::{CacheVerdict, Verdict};

pub struct MetadataOps;

impl Rule for MetadataOps {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.class == Class::Namespace).then_some(())?;
        judged(
            Verdict::Unknown,
            "metadata operations: their caching (dentries, inodes) is not measured",
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
    fn fires_on_metadata_phases_only() {
        let m = Machine::with_ram(RAM);
        let create = phase(OpName::Create, [MIB, MIB], [1; 2]);
        let v = MetadataOps.judge(&Evidence::of(&create, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Unknown);
        let read = phase(OpName::Read, [MIB, MIB], [1; 2]);
        assert!(MetadataOps.judge(&Evidence::of(&read, &m)).is_none());
    }
}
