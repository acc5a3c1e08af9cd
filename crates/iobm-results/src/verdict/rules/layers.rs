//! What the layers below a file system's device, or this run's own bytes beside other I/O,
//! settle by themselves (`storage::judge`): a layer in memory, a caching layer that cannot be
//! followed, O_DIRECT over a cached backing file.

use crate::verdict::rule::{Evidence, Rule};
use crate::CacheVerdict;

pub struct Layers;

impl Rule for Layers {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        e.file_data().then_some(())?;
        let v = e.storage.verdict.clone()?;
        Some(e.below(v.verdict, v.evidence))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use crate::storage::Below;
    use crate::Verdict;
    use iobm_stats::names::OpName;

    #[test]
    fn fires_when_a_layer_below_is_in_memory() {
        let m = Machine::with_ram(RAM);
        let mut read = phase(OpName::Read, [MIB, MIB], [1; 2]);
        assert!(Layers.judge(&Evidence::of(&read, &m)).is_none());
        read.cache.below = vec![Below {
            top: "7:0".into(),
            unfollowed: vec!["the backing file /dev/shm/img is in memory".into()],
            ..Below::default()
        }];
        let v = Layers.judge(&Evidence::of(&read, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Memory, "{}", v.evidence);
    }
}
