//! O_DIRECT without device counters: the bytes bypassed this machine's page cache.

use crate::verdict::rule::{Class, Evidence, Rule};
use crate::{CacheVerdict, Verdict};

pub struct Direct;

impl Rule for Direct {
    fn judge(&self, e: &Evidence) -> Option<CacheVerdict> {
        (e.phase.settings.direct && e.storage.device.is_none()).then_some(())?;
        match e.class {
            Class::Write => Some(e.below(
                Verdict::Uncached,
                "O_DIRECT writes bypass the page cache (no device counters to confirm)".into(),
            )),
            Class::Read => Some(e.client_read(
                Verdict::Uncached,
                "O_DIRECT reads bypass this machine's page cache (no device counters to confirm)"
                    .into(),
            )),
            Class::Object | Class::Namespace => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::tests::{phase, MIB, RAM};
    use crate::machine::Machine;
    use iobm_stats::names::OpName;

    #[test]
    fn fires_on_o_direct_without_device_counters() {
        let m = Machine::with_ram(RAM);
        let mut write = phase(OpName::Write, [MIB, MIB], [1; 2]);
        assert!(Direct.judge(&Evidence::of(&write, &m)).is_none());
        write.settings.direct = true;
        let v = Direct.judge(&Evidence::of(&write, &m)).unwrap();
        assert_eq!(v.verdict, Verdict::Uncached);
        assert!(v.evidence.starts_with("O_DIRECT writes"), "{}", v.evidence);
    }
}
