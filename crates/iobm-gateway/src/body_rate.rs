//! The minimum rate of request bodies (`--min-body-rate`): every request body the gateway reads
//! passes through [`Metered`], which keeps what it brought over the last [`WINDOW`] of the time
//! the gateway spent waiting for it ([`Meter`]: time spent on what arrived does not count), and
//! cuts it when it brought less than the minimum over a whole window, when nothing arrived for
//! the body timeout, or when its connection was chosen to make room ([`crate::conn`]). The
//! request is then answered `RequestTimeout` ([`crate::guard`]).

use crate::conn::Conn;
use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// The span over which a body's rate is measured.
pub const WINDOW: Duration = Duration::from_secs(10);
/// The window's slots: bytes are counted per slot, and leave the window a slot at a time.
const SLOTS: usize = 10;
const SLOT: Duration = Duration::from_secs(1);

/// What a body may not do.
#[derive(Debug, Clone, Copy)]
pub struct BodyLimits {
    /// Bytes a second over a whole window; 0: no minimum.
    pub min_rate: u64,
    /// Longest nothing may arrive.
    pub timeout: Duration,
}

/// Why a body was cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// It brought less than the minimum rate over a whole window.
    Slow,
    /// Nothing arrived for the body timeout.
    Stopped,
    /// Its connection was closed to make room for another.
    Evicted,
}

impl std::fmt::Display for Cut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Cut::Slow => "the request body arrived slower than the gateway's minimum body rate",
            Cut::Stopped => "the request body stopped arriving for the body timeout",
            Cut::Evicted => {
                "the request body arrived slowest while the gateway was at its connection limit"
            }
        })
    }
}

impl std::error::Error for Cut {}

/// A body's bytes over the last [`WINDOW`] of a clock that runs only while the gateway waits
/// for it, in [`SLOTS`] slots.
#[derive(Debug, Default, Clone)]
pub struct Meter {
    waited: Duration,
    /// Bytes of slot `n` at `n % SLOTS`, for the last `SLOTS` slots.
    slots: [u64; SLOTS],
}

impl Meter {
    fn slot(&self) -> u64 {
        (self.waited.as_nanos() / SLOT.as_nanos()) as u64
    }

    /// `bytes` arrived after the gateway waited `wait` more for them.
    pub fn add(&mut self, wait: Duration, bytes: u64) {
        let before = self.slot();
        self.waited += wait;
        let now = self.slot();
        // The slots passed meanwhile held nothing.
        for n in (before + 1..=now).rev().take(SLOTS) {
            self.slots[n as usize % SLOTS] = 0;
        }
        self.slots[now as usize % SLOTS] += bytes;
    }

    /// Bytes a second over the window, once the body has been waited for a slot's time.
    pub fn rate(&self) -> Option<u64> {
        if self.waited < SLOT {
            return None;
        }
        let oldest = self.slot().saturating_sub(SLOTS as u64 - 1);
        let span = self.waited - SLOT * oldest as u32;
        let bytes: u64 = self.slots.iter().sum();
        Some((bytes as u128 * 1_000_000_000 / span.as_nanos()) as u64)
    }

    /// Whether the body, waited for a whole window, brought less than `min` bytes a second.
    pub fn below(&self, min: u64) -> bool {
        self.waited >= WINDOW && self.rate().is_some_and(|r| r < min)
    }

    /// Waiting time until the next slot begins (when the oldest slot leaves the window).
    pub fn until_next_slot(&self) -> Duration {
        SLOT * (self.slot() + 1) as u32 - self.waited
    }
}

/// A request body as the gateway reads it: metered, and cut by [`BodyLimits`] or eviction.
pub struct Metered {
    inner: Incoming,
    conn: Arc<Conn>,
    limits: BodyLimits,
    meter: Meter,
    /// Waiting time since bytes last arrived.
    quiet: Duration,
    /// Since when the gateway has been waiting, while it is.
    waiting_since: Option<Instant>,
    /// Wakes the reader when the body is next to be judged while nothing arrives.
    check: Pin<Box<Sleep>>,
    cut: Arc<OnceLock<Cut>>,
}

impl Metered {
    pub fn new(inner: Incoming, conn: Arc<Conn>, limits: BodyLimits) -> Metered {
        Metered {
            inner,
            conn,
            limits,
            meter: Meter::default(),
            quiet: Duration::ZERO,
            waiting_since: None,
            check: Box::pin(tokio::time::sleep(Duration::ZERO)),
            cut: Arc::default(),
        }
    }

    /// Why the body was cut, once it is.
    pub fn verdict(&self) -> Arc<OnceLock<Cut>> {
        self.cut.clone()
    }

    /// Takes `bytes` that came after waiting `wait`: whether the body is now to be cut.
    fn judge(&mut self, wait: Duration, bytes: u64) -> Option<Cut> {
        self.meter.add(wait, bytes);
        self.quiet = if bytes > 0 {
            Duration::ZERO
        } else {
            self.quiet + wait
        };
        self.conn.set_body_rate(self.meter.rate());
        if self.conn.evicted() {
            Some(Cut::Evicted)
        } else if self.meter.below(self.limits.min_rate) {
            Some(Cut::Slow)
        } else if self.quiet >= self.limits.timeout {
            Some(Cut::Stopped)
        } else {
            None
        }
    }
}

impl Body for Metered {
    type Data = Bytes;
    type Error = s3s::StdError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, s3s::StdError>>> {
        let this = self.get_mut();
        if let Some(cut) = this.cut.get() {
            return Poll::Ready(Some(Err(Box::new(*cut))));
        }
        let now = Instant::now();
        let waited = this
            .waiting_since
            .take()
            .map_or(Duration::ZERO, |t| now - t);
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        let bytes = match &polled {
            Poll::Ready(Some(Ok(frame))) => frame.data_ref().map_or(0, |d| d.len() as u64),
            Poll::Ready(_) => {
                this.conn.set_body_rate(None);
                return polled.map_err(|e| Box::new(e) as s3s::StdError);
            }
            Poll::Pending => 0,
        };
        if let Some(cut) = this.judge(waited, bytes) {
            let _ = this.cut.set(cut);
            this.conn.set_body_rate(None);
            return Poll::Ready(Some(Err(Box::new(cut))));
        }
        if polled.is_pending() {
            this.waiting_since = Some(now);
            let next = (this.meter.until_next_slot()).min(this.limits.timeout - this.quiet);
            this.check.as_mut().reset(now + next);
            if this.check.as_mut().poll(cx).is_ready() {
                cx.waker().wake_by_ref();
            }
        }
        polled.map_err(|e| Box::new(e) as s3s::StdError)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for Metered {
    fn drop(&mut self) {
        self.conn.set_body_rate(None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    #[test]
    fn a_rate_is_known_after_a_slot_and_counts_only_the_window() {
        let mut m = Meter::default();
        m.add(Duration::from_millis(500), 1000);
        assert_eq!(m.rate(), None, "not yet measured for a slot");
        assert!(!m.below(u64::MAX));
        m.add(Duration::from_millis(500), 1000);
        assert_eq!(m.rate(), Some(2000));
        // 10 KiB each second for 20 s: about 10 KiB/s (the slot begun holds a second's bytes
        // already: at most a ninth more), whatever came before.
        let mut m = Meter::default();
        m.add(Duration::ZERO, 1 << 30);
        for _ in 0..20 {
            m.add(S, 10 << 10);
        }
        let rate = m.rate().unwrap();
        assert!((10 << 10..=(10 << 10) * 10 / 9).contains(&rate), "{rate}");
        assert!(m.below(16 << 10) && !m.below(10 << 10));
        // So is a steady stream, at any point of a slot.
        let mut m = Meter::default();
        for _ in 0..250 {
            m.add(Duration::from_millis(100), 1000);
            let rate = m.rate().unwrap_or(10_000);
            assert!((10_000..=10_000 * 10 / 9).contains(&rate), "{rate}");
        }
    }

    #[test]
    fn a_body_is_judged_only_once_waited_for_a_whole_window() {
        let mut m = Meter::default();
        for _ in 0..9 {
            m.add(S, 1);
            assert!(!m.below(16 << 10), "{:?}", m.waited);
        }
        m.add(S, 1);
        assert!(m.below(16 << 10));
        assert!(!m.below(0), "no minimum");
    }

    #[test]
    fn bursts_are_averaged_over_the_window_and_a_long_wait_empties_it() {
        // 80 KiB every 4.5 s: about 17.8 KiB/s, two or three bursts in a window, so measured
        // as 16 to 27 KiB/s: above 16 KiB/s, below four times that.
        let mut m = Meter::default();
        for _ in 0..10 {
            m.add(Duration::from_millis(4500), 80 << 10);
            let rate = m.rate().unwrap();
            assert!(
                m.waited < WINDOW || (16 << 10..=27 << 10).contains(&rate),
                "{rate}"
            );
        }
        // A wait longer than the window leaves nothing in it.
        m.add(Duration::from_secs(30), 0);
        assert_eq!(m.rate(), Some(0));
        m.add(Duration::ZERO, 5);
        assert_eq!(m.rate(), Some(0), "5 bytes over the window round down");
    }

    #[test]
    fn the_next_check_is_when_the_next_slot_begins() {
        let mut m = Meter::default();
        assert_eq!(m.until_next_slot(), S);
        m.add(Duration::from_millis(300), 0);
        assert_eq!(m.until_next_slot(), Duration::from_millis(700));
        m.add(Duration::from_millis(700), 0);
        assert_eq!(m.until_next_slot(), S);
    }
}
