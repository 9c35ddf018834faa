//! A token bucket (meta `limit` and `burst`): at most `burst` runs at once, refilled at `limit`
//! runs per second. Events that arrive while a run waits for a token are coalesced into that
//! one run, so a storm of 10,000 events costs `burst` runs and one more, not 10,000.

use std::time::Duration;

#[derive(Debug, Clone)]
pub struct TokenBucket {
    /// Tokens per second.
    rate: f64,
    burst: f64,
    tokens: f64,
    /// When `tokens` was last brought up to date.
    at: Duration,
}

impl TokenBucket {
    /// A full bucket; `None` when `limit` is not set (no limit).
    pub fn new(limit: Option<f64>, burst: u32, now: Duration) -> Option<TokenBucket> {
        let rate = limit?;
        let burst = f64::from(burst.max(1));
        Some(TokenBucket { rate, burst, tokens: burst, at: now })
    }

    fn refill(&mut self, now: Duration) {
        let elapsed = now.saturating_sub(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.at = now;
    }

    /// Takes a token for a run now, or says how long until one is there (`None`: never, with a
    /// limit of 0 once the burst is spent).
    pub fn take(&mut self, now: Duration) -> Result<(), Option<Duration>> {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            return Ok(());
        }
        if self.rate <= 0.0 {
            // A limit of 0: nothing beyond the burst, ever.
            return Err(None);
        }
        Err(Some(Duration::from_secs_f64((1.0 - self.tokens) / self.rate)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_bucket_lets_its_burst_through_then_one_per_interval() {
        let at = |s: f64| Duration::from_secs_f64(s);
        let mut bucket = TokenBucket::new(Some(2.0), 3, at(0.0)).unwrap();
        assert!((0..3).all(|_| bucket.take(at(0.0)).is_ok()));
        assert_eq!(bucket.take(at(0.0)), Err(Some(at(0.5))));
        assert_eq!(bucket.take(at(0.25)), Err(Some(at(0.25))));
        assert!(bucket.take(at(0.5)).is_ok());
        assert!(bucket.take(at(10.0)).is_ok(), "refilled");
        assert!(TokenBucket::new(None, 1, at(0.0)).is_none());
        let mut closed = TokenBucket::new(Some(0.0), 1, at(0.0)).unwrap();
        assert!(closed.take(at(0.0)).is_ok());
        assert_eq!(closed.take(at(1e6)), Err(None), "a limit of 0 never refills");
    }
}
