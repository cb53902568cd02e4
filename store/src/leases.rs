//! Facet "leases and sharing": many `bench` workers on one shared store cooperate on one run.
//!
//! A worker claims a (question, paradigm) item before answering it. A claim is a row that
//! expires (`expires_ms`, on the database's clock) unless the worker marks it done; a worker that
//! dies loses only the items it held, which others take once the lease has expired. The claim is
//! one conditional upsert (`ON CONFLICT ... DO UPDATE ... WHERE` the lease has expired): the
//! database serialises claimers on the row, so of two workers exactly one gets it, the
//! equivalent of `SELECT ... FOR UPDATE SKIP LOCKED` in a statement both backends accept.
//! Results keep their own key, so a tuple is written once whatever the leases did.

use sqlx::Row;

use bench_core::ParadigmId;

use crate::error::Result;
use crate::Store;

/// A done claim never expires.
const NEVER: i64 = i64::MAX;

/// One worker's identity and lease on one run.
#[derive(Debug, Clone)]
pub struct Lease {
    /// The run the claimed item belongs to.
    pub run_id: i64,
    /// Unique per worker process (host, pid, start time): shown in the claims table.
    pub worker: String,
    /// How long a claimed item is the worker's before another may take it.
    pub lease_ms: i64,
    /// The database clock when the worker started: a done claim older than this is an
    /// attempt of an earlier invocation (a failed tuple to retry), not of a live peer.
    pub started_ms: i64,
}

/// What a claim of one unit (a question's pending paradigms) gave.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Claimed {
    /// Now this worker's to answer.
    pub mine: Vec<ParadigmId>,
    /// Held by a live lease of another worker: try again once it may have expired.
    pub held: Vec<ParadigmId>,
    /// Answered (or attempted) by a peer since this worker started: nothing to do.
    pub gone: Vec<ParadigmId>,
}

impl Store {
    /// The database clock in milliseconds since the epoch.
    pub async fn clock_ms(&self) -> Result<i64> {
        sqlx::query_scalar(&format!("SELECT {}", self.backend().now_ms()))
            .fetch_one(self.pool())
            .await
            .map_err(|e| self.err(e))
    }

    /// Claims the items of one question under `lease`; see [`Claimed`].
    pub async fn claim(
        &self,
        lease: &Lease,
        query_id: &str,
        paradigms: &[ParadigmId],
    ) -> Result<Claimed> {
        let now = self.backend().now_ms();
        let sql = format!(
            "INSERT INTO claims (run_id, query_id, paradigm, worker, claimed_ms, expires_ms, done)
             VALUES ($1, $2, $3, $4, {now}, {now} + $5, 0)
             ON CONFLICT (run_id, query_id, paradigm) DO UPDATE
             SET worker = excluded.worker, claimed_ms = excluded.claimed_ms,
                 expires_ms = excluded.expires_ms, done = 0
             WHERE claims.expires_ms < {now} OR (claims.done = 1 AND claims.claimed_ms < $6)"
        );
        let mut out = Claimed::default();
        for &p in paradigms {
            let got = sqlx::query(&sql)
                .bind(lease.run_id)
                .bind(query_id)
                .bind(p.as_str())
                .bind(&lease.worker)
                .bind(lease.lease_ms)
                .bind(lease.started_ms)
                .execute(self.pool())
                .await
                .map_err(|e| self.err(e))?
                .rows_affected();
            if got == 1 {
                out.mine.push(p);
                continue;
            }
            let done: i64 = sqlx::query(
                "SELECT done FROM claims WHERE run_id = $1 AND query_id = $2 AND paradigm = $3",
            )
            .bind(lease.run_id)
            .bind(query_id)
            .bind(p.as_str())
            .fetch_one(self.pool())
            .await
            .map_err(|e| self.err(e))?
            .get(0);
            if done == 1 {
                out.gone.push(p);
            } else {
                out.held.push(p);
            }
        }
        // A claim may land on an item a peer finished before its claim was marked done.
        if !out.mine.is_empty() {
            let finished: Vec<String> = sqlx::query_scalar(
                "SELECT paradigm FROM results WHERE run_id = $1 AND query_id = $2 AND error IS NULL",
            )
            .bind(lease.run_id)
            .bind(query_id)
            .fetch_all(self.pool())
            .await
            .map_err(|e| self.err(e))?;
            let (left, gone): (Vec<_>, Vec<_>) = out
                .mine
                .into_iter()
                .partition(|p| !finished.iter().any(|f| f == p.as_str()));
            out.mine = left;
            for p in gone {
                self.release_done(lease, query_id, p).await?;
                out.gone.push(p);
            }
        }
        Ok(out)
    }

    /// Marks a claimed item done (its tuple is written, with or without an error): peers of
    /// this invocation leave it alone; a later invocation may retry a failed one.
    pub async fn release_done(&self, lease: &Lease, query_id: &str, p: ParadigmId) -> Result<()> {
        sqlx::query(
            "UPDATE claims SET done = 1, expires_ms = $1
             WHERE run_id = $2 AND query_id = $3 AND paradigm = $4 AND worker = $5",
        )
        .bind(NEVER)
        .bind(lease.run_id)
        .bind(query_id)
        .bind(p.as_str())
        .bind(&lease.worker)
        .execute(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(())
    }
}
