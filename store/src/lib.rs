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
//! # Store by facet
//!
//! Every public method of [`Store`] lives in the one module of its facet, in one `impl Store`
//! block (the modules are private; their types are re-exported below):
//!
//! | Facet | Module | Methods |
//! |---|---|---|
//! | Opening and maintenance | `lifecycle.rs` | `open`, `open_in_memory`, `open_existing`, `open_read_only`, `check`, `open_db`, `open_existing_db`, `open_read_only_db`, `check_db`, `info`, `path`, `backend`, `close` |
//! | Runs and tuples, written | `runs.rs` | `upsert_corpus`, `start_run`, `finished_pairs`, `drop_other_graph_builds`, `write_result`, `finish_run`, `put_corpus_metrics`, `add_embedding_usage` |
//! | Runs and tuples, read | `reads.rs` | `runs_with_results`, `corpus_metrics`, `run_tokens`, `stage_totals`, `routing_tuples`, `stored_questions`, `run_row`, `run_construction_tokens`, `corpus_row`, `answered`, `report_tuples`, `run_outcome` |
//! | Runs and tuples, summed | `summary.rs` | `count_results`, `count_stops`, `count_unreadable_entities`, `summary` |
//! | Evaluations | `route_evals.rs` | `put_route_eval`, `route_evals`, `route_eval_rows`, `put_route_eval_full`, `route_eval_tests`, `route_predictions` |
//! | Caches (graph extractions, LLM replies) | `caches.rs` | `cached_extractions`, `put_extraction`, `extraction_failures`, `record_graph_build`, `construction_tokens`, `llm_cache_get`, `llm_cache_logprobs`, `llm_cache_put`, `llm_cache_len` |
//! | Imports | `imports.rs` | `import_outcomes`, `import_outcomes_all` |
//! | Signals | `signals.rs` | `put_signals`, `signals`, `published_choices` |
//! | Leases and sharing | `leases.rs` | `clock_ms`, `claim`, `release_done` |
//! | Merge | `merge.rs` | `run_keys`, `check_same_runs`, `merge_from` |
//!
//! Beside the facets: the run-selection rule of `route eval` and `report` ([`select_runs`],
//! `selection.rs`); the bench-core cache traits the store implements (`caches.rs`); its own error
//! [`StoreError`] (`error.rs`: `Sql`, `Incompatible`, `Invalid`, ...), converted into `BenchError`
//! at the boundary; and the engine in `db/`: the handle and the crate-private plumbing every query
//! uses (`db.rs`, `db/handle.rs`), what differs per backend (`db/backend.rs`), safe opening
//! (`db/open.rs`), the final checkpoint of a writer (`db/checkpoint.rs`), what a file is and holds
//! (`db/info.rs`) and the versioned migrations (`db/schema.rs`).
//!
//! Why a crate of its own: the only crate that links sqlx; a private module tree behind one curated
//! `pub use` list.

#![warn(missing_docs)]

mod caches;
mod db;
mod error;
mod imports;
mod leaderboard;
mod leases;
mod lifecycle;
mod merge;
mod reads;
mod route_evals;
mod runs;
mod selection;
mod signals;
mod summary;

pub use db::{
    printable, redact, Backend, DbInfo, DbTarget, Ownership, Store, APPLICATION_ID, SCHEMA_VERSION,
};
pub use error::{Result, StoreError};
pub use imports::ImportedCorpus;
pub use leases::{Claimed, Lease};
pub use merge::MergedRun;
pub use reads::{
    CorpusRow, ReportTupleRow, RoutingTupleRow, RunOutcome, RunRow, StoredQuestion, TupleTokens,
};
pub use runs::{EmbeddingUsage, RunHandle, RunSpec};
pub use selection::{select_runs, RunRef, RunSelection, SplitUse};
pub use summary::SummaryRow;
