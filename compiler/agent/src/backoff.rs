//! Calling again after a failure: capped exponential back-off with jitter, so many agents that
//! lost one server do not all come back at the same instant.

use std::time::Duration;

pub(crate) struct Backoff {
    failures: u32,
    first: Duration,
    cap: Duration,
}

impl Backoff {
    pub(crate) fn new(first: Duration, cap: Duration) -> Backoff {
        Backoff { failures: 0, first, cap }
    }

    /// The wait after one more failure: `first × 2^n`, at most `cap`, then a random 50–100% of it.
    pub(crate) fn next(&mut self) -> Duration {
        let exponent = self.failures.min(16);
        self.failures += 1;
        let full = self.first.saturating_mul(1 << exponent).min(self.cap);
        let jitter = modelc_store::random_bytes(1).map_or(0.5, |byte| f64::from(byte[0]) / 255.0);
        full.mul_f64(0.5 + 0.5 * jitter)
    }

    pub(crate) fn reset(&mut self) {
        self.failures = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_to_the_cap_with_jitter() {
        let mut backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(2));
        let waits: Vec<Duration> = (0..10).map(|_| backoff.next()).collect();
        assert!(waits[0] >= Duration::from_millis(50) && waits[0] <= Duration::from_millis(100));
        assert!(waits.iter().all(|w| *w <= Duration::from_secs(2)));
        assert!(waits[9] >= Duration::from_secs(1));
        backoff.reset();
        assert!(backoff.next() <= Duration::from_millis(100));
    }
}
