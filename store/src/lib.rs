//! The results store of ragrouter-bench: one database (SQLite file or PostgreSQL) holding
//! corpora, runs, one result tuple per (run, question, paradigm), router evaluations, work
//! leases, imported outcome matrices, probe signals and the two caches (LLM replies, graph
//! extractions). Everything that speaks SQL lives here, on top of `bench-core`'s vocabulary.
//!
//! The principal types: [`Store`] (open, write, read), [`DbTarget`] (what `--db` names),
//! [`RunSpec`] and [`RunHandle`] (start or resume a run), the typed rows of the reads
//! ([`RunRow`], [`RoutingTupleRow`], [`ReportTupleRow`]), [`RunSelection`] with
//! [`select_runs`] (which runs a routing set or a report reads), and [`StoreError`].
//!
//! ```
//! use store::{select_runs, DbTarget, RunSelection, Store};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // What `--db` names: a file, or a PostgreSQL URL.
//! let target: DbTarget = "results.sqlite".parse().unwrap();
//! assert!(matches!(target, DbTarget::Sqlite(_)));
//!
//! let store = Store::open_in_memory().await.unwrap();
//! assert!(store.route_evals().await.unwrap().is_empty());
//! // Nothing benched yet: selecting runs is the caller's mistake (exit code 2), not a crash.
//! let err = select_runs(&store, &RunSelection::default()).await.unwrap_err();
//! assert!(err.is_bad_input());
//! # });
//! ```
//!
//! # Modules
//!
//! - The results store (SQLite file or shared PostgreSQL database, `DbTarget`) and everything that
//!   speaks SQL: versioned migrations (`db/schema.rs`) and the core queries (`db.rs`: `Store`,
//!   `RunSpec`, `RunHandle`).
//! - What differs per backend (`db/backend.rs`).
//! - Safe opening (`db/open.rs`), the final checkpoint of a writer (`db/checkpoint.rs`) and
//!   what a file is and holds (`db/info.rs`).
//! - Typed reads for routers, reports and the CLI (`reads.rs`: `RunRow`, `RoutingTupleRow`,
//!   `ReportTupleRow` with `TupleTokens`, `StoredQuestion`; names, modes and labels parsed here,
//!   once).
//! - The one run-selection rule of `route eval` and `report` (`runs.rs`).
//! - Work leases (`leases.rs`).
//! - Router evaluations (`route_evals.rs`).
//! - Imported outcome matrices (`imports.rs`).
//! - Signals and published choices (`signals.rs`).
//! - Shard merge (`merge.rs`).
//! - The graph extraction cache and the LLM response cache (`extractions.rs`, `llm_cache.rs`) and
//!   their bench-core traits (`caches.rs`).
//! - Its own error `StoreError` (`error.rs`: `Sql`, `Incompatible`, `Invalid`, ...), converted into
//!   `BenchError` at the boundary.
//!
//! Why a crate of its own: the only crate that links sqlx; a private module tree behind one curated
//! `pub use` list.

#![warn(missing_docs)]

mod caches;
mod db;
mod error;
mod extractions;
mod imports;
mod leases;
mod llm_cache;
mod merge;
mod reads;
mod route_evals;
mod runs;
mod signals;

pub use db::{
    printable, redact, Backend, DbInfo, DbTarget, Ownership, RunHandle, RunSpec, Store, SummaryRow,
    APPLICATION_ID, SCHEMA_VERSION,
};
pub use error::{Result, StoreError};
pub use imports::ImportedCorpus;
pub use leases::{Claimed, Lease};
pub use merge::MergedRun;
pub use reads::{
    CorpusRow, EmbeddingUsage, ReportTupleRow, RoutingTupleRow, RunOutcome, RunRow, StoredQuestion,
    TupleTokens,
};
pub use runs::{select_runs, RunRef, RunSelection, SplitUse};
