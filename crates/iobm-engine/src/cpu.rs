//! iobm's own CPU time (user and system, all threads), read with `getrusage`, so every phase
//! can report what the benchmark itself cost.

use std::time::Duration;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user: Duration,
    pub system: Duration,
}

fn timeval(tv: libc::timeval) -> Duration {
    Duration::from_secs(tv.tv_sec as u64) + Duration::from_micros(tv.tv_usec as u64)
}

impl CpuTimes {
    /// CPU time used so far by this process.
    pub fn now() -> CpuTimes {
        // SAFETY: getrusage fills the zeroed struct it is given.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
        CpuTimes {
            user: timeval(usage.ru_utime),
            system: timeval(usage.ru_stime),
        }
    }

    pub fn since(self, earlier: CpuTimes) -> CpuTimes {
        CpuTimes {
            user: self.user.saturating_sub(earlier.user),
            system: self.system.saturating_sub(earlier.system),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's CPU time, by the kernel's per-thread clock.
    fn thread_cpu() -> Duration {
        let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
        // SAFETY: clock_gettime fills the timespec it is given.
        assert_eq!(
            unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) },
            0
        );
        Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
    }

    #[test]
    fn busy_loop_costs_user_time() {
        // Spin until this thread has had 50 ms of CPU by the kernel's thread clock, however
        // long that takes on a loaded machine; the process's rusage must show at least it
        // (to within the rusage's tick granularity).
        let before = CpuTimes::now();
        let start = thread_cpu();
        let mut x = 0u64;
        while thread_cpu() - start < Duration::from_millis(50) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let used = CpuTimes::now().since(before);
        assert!(
            used.user + used.system >= Duration::from_millis(40),
            "{used:?}"
        );
    }
}
