//! A token bucket for requests- and tokens-per-minute limits.
//!
//! The bucket holds one second's worth of budget (at least one unit), so calls are spread
//! evenly instead of bursting a minute's worth at start-up. A cost larger than the bucket waits
//! only for a full bucket and leaves the balance negative: big requests still pass, and the long
//! run rate stays at the limit.

use std::time::Duration;

use tokio::sync::Mutex;
use tokio::time::Instant;

/// A token bucket: the requests-per-minute and tokens-per-minute limits of one endpoint.
#[derive(Debug)]
pub struct TokenBucket {
    capacity: f64,
    per_sec: f64,
    // The lock is held while waiting: tokio's mutex is fair, so waiters go in arrival order.
    state: Mutex<(f64, Instant)>,
}

impl TokenBucket {
    /// A bucket refilled at `per_minute` units a minute.
    pub fn per_minute(per_minute: u32) -> Self {
        let per_sec = f64::from(per_minute.max(1)) / 60.0;
        let capacity = per_sec.max(1.0);
        TokenBucket {
            capacity,
            per_sec,
            state: Mutex::new((capacity, Instant::now())),
        }
    }

    /// Waits until `cost` units may be spent, then spends them.
    pub async fn acquire(&self, cost: f64) {
        let mut state = self.state.lock().await;
        let need = cost.min(self.capacity);
        loop {
            let now = Instant::now();
            let (tokens, last) = *state;
            let tokens =
                (tokens + now.duration_since(last).as_secs_f64() * self.per_sec).min(self.capacity);
            *state = (tokens, now);
            if tokens >= need {
                state.0 = tokens - cost;
                return;
            }
            let wait = (need - tokens) / self.per_sec;
            tokio::time::sleep(Duration::from_secs_f64(wait)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn spaces_calls_at_the_rate() {
        // 600 a minute: 10 a second, a bucket of 10; 15 calls need about half a second.
        let b = TokenBucket::per_minute(600);
        let t = std::time::Instant::now();
        for _ in 0..15 {
            b.acquire(1.0).await;
        }
        assert!(
            t.elapsed() >= Duration::from_millis(450),
            "{:?}",
            t.elapsed()
        );
    }

    #[tokio::test]
    async fn a_cost_above_capacity_passes_and_leaves_a_debt() {
        let b = TokenBucket::per_minute(6_000); // 100 a second
        let t = std::time::Instant::now();
        b.acquire(150.0).await; // full bucket: passes now, balance -50
        b.acquire(50.0).await; // waits for 100 units: ~1 s
        assert!(
            t.elapsed() >= Duration::from_millis(900),
            "{:?}",
            t.elapsed()
        );
    }
}
