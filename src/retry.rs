//! The one retry loop: a try is repeated after a pause that grows by a typed rule, until
//! it wins, fails for good, or the limit (a number of tries, or a deadline) is reached.
//! Used by the ledger's compare-and-swap appends (`ledger/append.rs`), `sync`'s
//! fetch-merge-push (`sync/`) and every forge request (`forge/client.rs`); the pauses
//! they use are the constants of their own modules. A leaf.

use std::time::{Duration, Instant};

/// How the pause grows with the retry number `n` (1 = the pause before the first retry).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Growth {
    /// `first` every time (the tests' policies).
    #[cfg(test)]
    Constant,
    /// `first × n`.
    Linear,
    /// `first × 2^(n-1)`.
    Doubling,
}

/// The pause before each retry: `first` grown by `growth`, at most `cap`, plus a jitter
/// below `jitter` (0 for none) taken from the pid, the retry number and the clock's
/// microseconds, so that racing processes fall out of step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Pause {
    /// The pause before the first retry (before jitter).
    pub first: Duration,
    /// How it grows.
    pub growth: Growth,
    /// The longest pause (before jitter).
    pub cap: Duration,
    /// The jitter's exclusive upper bound, in whole milliseconds.
    pub jitter: Duration,
}

impl Pause {
    /// The pause before retry `n` (1-based), without jitter.
    pub(crate) fn base(&self, n: u32) -> Duration {
        let n = n.max(1);
        let grown = match self.growth {
            #[cfg(test)]
            Growth::Constant => self.first,
            Growth::Linear => self.first.saturating_mul(n),
            Growth::Doubling => self.first.saturating_mul(1u32 << (n - 1).min(20)),
        };
        grown.min(self.cap)
    }

    /// The pause before retry `n` (1-based), jitter included.
    pub(crate) fn before(&self, n: u32) -> Duration {
        let span = self.jitter.as_millis() as u64;
        if span == 0 {
            return self.base(n);
        }
        let micros = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::from(d.subsec_micros()));
        let seed = u64::from(std::process::id()) * 7919 + u64::from(n) * 104_729 + micros;
        self.base(n) + Duration::from_millis(seed % span)
    }
}

/// When to stop retrying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// At most this many tries in all (the first included).
    Tries(u32),
    /// No pause that would end at or past this instant.
    Until(Instant),
}

/// What one try says.
#[derive(Debug)]
pub(crate) enum Try<T, E> {
    /// It won: the loop returns `T`.
    Done(T),
    /// It failed for good: the loop returns `E` at once.
    Fail(E),
    /// It lost (a race, a transient failure): try again after the policy's pause; `E` is
    /// returned when the limit is reached.
    Lost(E),
    /// As `Lost`, but after this pause (one the other side asked for; zero: at once).
    LostWait(Duration, E),
}

/// A retry loop's pause and limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Policy {
    /// The pause between tries.
    pub pause: Pause,
    /// When to stop.
    pub limit: Limit,
}

/// Run `attempt(n)` (`n` = 1, 2, …) under `policy` until it is `Done` or `Fail`, or it
/// lost and the limit leaves no further try: then the last loss's `E`.
pub(crate) fn retry<T, E>(
    policy: Policy,
    mut attempt: impl FnMut(u32) -> Try<T, E>,
) -> Result<T, E> {
    let mut n = 0u32;
    loop {
        n += 1;
        let (pause, lost) = match attempt(n) {
            Try::Done(v) => return Ok(v),
            Try::Fail(e) => return Err(e),
            Try::Lost(e) => (policy.pause.before(n), e),
            Try::LostWait(d, e) => (d, e),
        };
        let more = match policy.limit {
            Limit::Tries(max) => n < max,
            Limit::Until(deadline) => Instant::now() + pause < deadline,
        };
        if !more {
            return Err(lost);
        }
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn pause(first: u32, growth: Growth, cap: u32) -> Pause {
        Pause {
            first: MS * first,
            growth,
            cap: MS * cap,
            jitter: Duration::ZERO,
        }
    }

    #[test]
    fn pauses_grow_by_their_rule_up_to_the_cap() {
        let d = pause(4, Growth::Doubling, 64);
        let got: Vec<u128> = (1..=7).map(|n| d.base(n).as_millis()).collect();
        assert_eq!(got, [4, 8, 16, 32, 64, 64, 64]);
        let l = pause(20, Growth::Linear, 200);
        let got: Vec<u128> = [1, 2, 9, 10, 11].map(|n| l.base(n).as_millis()).to_vec();
        assert_eq!(got, [20, 40, 180, 200, 200]);
        let c = pause(1, Growth::Constant, 1);
        assert_eq!(c.base(9), MS);
        // Far retries saturate instead of overflowing.
        assert_eq!(pause(500, Growth::Doubling, 4000).base(u32::MAX), MS * 4000);
    }

    #[test]
    fn jitter_stays_below_its_bound() {
        let p = Pause {
            jitter: MS * 7,
            ..pause(4, Growth::Doubling, 64)
        };
        for n in 1..50 {
            let j = p.before(n) - p.base(n);
            assert!(j < MS * 7, "{j:?}");
        }
    }

    #[test]
    fn a_loss_is_retried_until_the_tries_run_out_and_returns_the_last_loss() {
        let policy = Policy {
            pause: pause(0, Growth::Constant, 0),
            limit: Limit::Tries(3),
        };
        let mut seen = Vec::new();
        let r: Result<(), u32> = retry(policy, |n| {
            seen.push(n);
            Try::Lost(n)
        });
        assert_eq!(r, Err(3));
        assert_eq!(seen, [1, 2, 3]);
        let r: Result<u32, u32> =
            retry(policy, |n| if n == 2 { Try::Done(7) } else { Try::Lost(n) });
        assert_eq!(r, Ok(7));
        let r: Result<u32, &str> = retry(policy, |_| Try::Fail("bad"));
        assert_eq!(r, Err("bad"));
    }

    #[test]
    fn a_deadline_stops_before_a_pause_that_would_pass_it() {
        let policy = Policy {
            pause: pause(10, Growth::Constant, 10),
            limit: Limit::Until(Instant::now()),
        };
        let r: Result<(), u32> = retry(policy, Try::Lost);
        assert_eq!(r, Err(1), "a deadline already reached: one try");
        let policy = Policy {
            limit: Limit::Until(Instant::now() + Duration::from_secs(10)),
            ..policy
        };
        let r: Result<u32, u32> =
            retry(policy, |n| if n == 3 { Try::Done(n) } else { Try::Lost(n) });
        assert_eq!(r, Ok(3), "before the deadline, a loss is retried");
        // A wait the other side asked for counts against the deadline too.
        let policy = Policy {
            limit: Limit::Until(Instant::now() + MS * 20),
            ..policy
        };
        let r: Result<(), u32> = retry(policy, |n| Try::LostWait(MS * 30, n));
        assert_eq!(r, Err(1));
    }
}
