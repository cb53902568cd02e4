//! Facet "merge": merging shard databases: `bench --shard I/N` files of the same runs into one
//! results file.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use sqlx::{Connection, Row};

use crate::error::{Result, StoreError};
use crate::Store;

/// Tables copied as they are (content-keyed, so a row present twice is the same row).
const KEYED: &[&str] = &[
    "corpora",
    "queries",
    "extractions",
    "llm_cache",
    "corpus_metrics",
];

/// Inputs of one merge: SQLite attaches at most 10 databases to a connection.
const MAX_INPUTS: usize = 9;

/// A tuple's identity across files: (run key, question, paradigm).
type TupleKey = (String, String, String);

/// What a merge did for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergedRun {
    /// The run's key (same key in two shards: the same run).
    pub run_key: String,
    /// The run's corpus.
    pub corpus: String,
    /// The run's id in the merged database.
    pub id: i64,
    /// Its tuples after the merge.
    pub tuples: i64,
    /// Whether it is finished.
    pub finished: bool,
}

impl Store {
    /// The run keys a results database holds, with their corpus.
    pub async fn run_keys(&self) -> Result<BTreeMap<String, String>> {
        let rows = sqlx::query("SELECT DISTINCT run_key, corpus FROM runs")
            .fetch_all(self.pool())
            .await
            .map_err(|e| self.err(e))?;
        Ok(rows.iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// (run key, question, paradigm) of every tuple the database holds: what a shard is,
    /// whatever the bytes of its file (a `VACUUM`ed copy holds the same).
    async fn tuple_keys(&self) -> Result<BTreeSet<TupleKey>> {
        let rows = sqlx::query(
            "SELECT r.run_key, t.query_id, t.paradigm FROM results t JOIN runs r ON r.id = t.run_id",
        )
        .fetch_all(self.pool())
        .await
        .map_err(|e| self.err(e))?;
        Ok(rows
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect())
    }

    /// Checks that every input is a results database of this schema (opening migrates an
    /// older one), that all hold the same runs (run keys), and that no two hold the same
    /// tuples (one shard given twice, by a copy whatever its bytes); writes nothing else.
    pub async fn check_same_runs(inputs: &[&Path]) -> Result<()> {
        let mut keys: Option<(BTreeSet<String>, &Path)> = None;
        let mut held: Vec<(&Path, BTreeSet<TupleKey>)> = Vec::new();
        for &input in inputs {
            let store = Store::open_existing(input).await?;
            let read =
                async { Ok::<_, StoreError>((store.run_keys().await?, store.tuple_keys().await?)) }
                    .await;
            store.close().await;
            let (runs, tuples) = read?;
            let these: BTreeSet<String> = runs.into_keys().collect();
            if let Some((first, _)) = held
                .iter()
                .find(|(_, t)| !tuples.is_empty() && *t == tuples)
            {
                return Err(StoreError::Invalid(format!(
                    "merge: {} and {} hold the same {} tuples (the same questions and paradigms \
                     of the same runs): each shard must be given once",
                    first.display(),
                    input.display(),
                    tuples.len()
                )));
            }
            held.push((input, tuples));
            match &keys {
                None => keys = Some((these, input)),
                Some((first, first_path)) if *first != these => {
                    let only: Vec<&String> = these.symmetric_difference(first).collect();
                    return Err(StoreError::Invalid(format!(
                        "merge: {} and {} hold different runs (run keys {}): merge combines \
                         shards of the same runs (same corpus, configuration, mode and models)",
                        first_path.display(),
                        input.display(),
                        only.iter()
                            .map(
                                |k| crate::printable(&k.chars().take(12).collect::<String>())
                                    .into_owned()
                            )
                            .collect::<Vec<_>>()
                            .join(", ")
                    )));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// Merges `inputs` (results databases of this schema holding shards of the same runs) into
    /// this one, which must hold no run yet, in one transaction: all or nothing. Corpora,
    /// questions and the caches are united; each run key becomes one run whose tuples are the
    /// union of the shards' (a tuple in two inputs keeps a successful row over a failed one);
    /// the run is finished when every input's is. Router evaluations are not merged (run
    /// `route eval` on the result).
    pub async fn merge_from(&self, inputs: &[&Path]) -> Result<Vec<MergedRun>> {
        if self.backend() != crate::db::Backend::Sqlite {
            return Err(StoreError::Invalid(format!(
                "merge: the output {} is not an SQLite file: merge joins shard files into a new \
                 file; workers that share a PostgreSQL database need no merge",
                self.path()
            )));
        }
        if !self.run_keys().await?.is_empty() {
            return Err(StoreError::Invalid(format!(
                "merge: the output {} already holds runs; merge into a new file",
                self.path()
            )));
        }
        Store::check_same_runs(inputs).await?;
        if inputs.len() > MAX_INPUTS {
            return Err(StoreError::Invalid(format!(
                "merge: {} inputs, at most {MAX_INPUTS} at once (SQLite attaches at most 10 \
                 files): merge them in groups into new files, then merge those",
                inputs.len()
            )));
        }
        let results_cols = table_columns(self, "results").await?;
        let runs_cols = table_columns(self, "runs").await?;
        let builds_cols = table_columns(self, "graph_builds").await?;
        // The store's single connection: ATTACH is per connection and refused inside a
        // transaction, so every input is attached first.
        let mut conn = self.pool().acquire().await.map_err(|e| self.err(e))?;
        for (n, &input) in inputs.iter().enumerate() {
            sqlx::query(&format!("ATTACH DATABASE $1 AS shard{n}"))
                .bind(input.to_string_lossy().into_owned())
                .execute(&mut *conn)
                .await
                .map_err(|e| self.err(e))?;
        }
        let outcome = self
            .merge_attached(
                &mut conn,
                inputs.len(),
                &results_cols,
                &runs_cols,
                &builds_cols,
            )
            .await;
        for n in 0..inputs.len() {
            // Best effort: the connection is the store's, and a failed DETACH only leaves an
            // attachment until the process ends.
            let _ = sqlx::query(&format!("DETACH DATABASE shard{n}"))
                .execute(&mut *conn)
                .await;
        }
        outcome
    }

    /// Copies every attached input (`shard0`, `shard1`, ...) into the store in one transaction:
    /// the keyed tables, the graph builds, each run key once and its tuples.
    async fn merge_attached(
        &self,
        conn: &mut sqlx::AnyConnection,
        inputs: usize,
        results_cols: &str,
        runs_cols: &str,
        builds_cols: &str,
    ) -> Result<Vec<MergedRun>> {
        let mut tx = conn.begin().await.map_err(|e| self.err(e))?;
        let mut merged: BTreeMap<String, MergedRun> = BTreeMap::new();
        for n in 0..inputs {
            let alias = format!("shard{n}");
            for table in KEYED {
                sqlx::query(&format!(
                    "INSERT OR IGNORE INTO main.{table} SELECT * FROM {alias}.{table}"
                ))
                .execute(&mut *tx)
                .await
                .map_err(|e| self.err(e))?;
            }
            let no_id = without(builds_cols, "id");
            sqlx::query(&format!(
                "INSERT INTO main.graph_builds ({no_id}) SELECT {no_id} FROM {alias}.graph_builds"
            ))
            .execute(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
            let results_sql = merge_results_sql(results_cols, &alias);
            let runs = sqlx::query(&format!(
                "SELECT id, run_key, corpus, CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END FROM {alias}.runs ORDER BY id"
            ))
            .fetch_all(&mut *tx)
            .await
            .map_err(|e| self.err(e))?;
            for r in runs {
                let (old, key, corpus, finished): (i64, String, String, bool) =
                    (r.get(0), r.get(1), r.get(2), r.get::<i64, _>(3) != 0);
                let id = match merged.get_mut(&key) {
                    Some(m) => {
                        m.finished &= finished;
                        m.id
                    }
                    None => {
                        let no_id = without(runs_cols, "id");
                        let id: i64 = sqlx::query_scalar(&format!(
                            "INSERT INTO main.runs ({no_id}) SELECT {no_id} FROM {alias}.runs \
                             WHERE id = $1 RETURNING id"
                        ))
                        .bind(old)
                        .fetch_one(&mut *tx)
                        .await
                        .map_err(|e| self.err(e))?;
                        merged.insert(
                            key.clone(),
                            MergedRun {
                                run_key: key.clone(),
                                corpus,
                                id,
                                tuples: 0,
                                finished,
                            },
                        );
                        id
                    }
                };
                sqlx::query(&results_sql)
                    .bind(id)
                    .bind(old)
                    .execute(&mut *tx)
                    .await
                    .map_err(|e| self.err(e))?;
            }
        }
        self.finish_merged(&mut tx, &mut merged).await?;
        tx.commit().await.map_err(|e| self.err(e))?;
        Ok(merged.into_values().collect())
    }

    /// Each merged run's count of tuples, and its end cleared unless every shard finished it.
    async fn finish_merged(
        &self,
        tx: &mut sqlx::Transaction<'_, sqlx::Any>,
        merged: &mut BTreeMap<String, MergedRun>,
    ) -> Result<()> {
        for m in merged.values_mut() {
            m.tuples = sqlx::query_scalar("SELECT count(*) FROM main.results WHERE run_id = $1")
                .bind(m.id)
                .fetch_one(&mut **tx)
                .await
                .map_err(|e| self.err(e))?;
            if !m.finished {
                sqlx::query("UPDATE main.runs SET finished_at = NULL WHERE id = $1")
                    .bind(m.id)
                    .execute(&mut **tx)
                    .await
                    .map_err(|e| self.err(e))?;
            }
        }
        Ok(())
    }
}

/// The statement that copies one shard run's tuples (`$2`) into the merged run (`$1`): a tuple
/// already merged is replaced only when it failed and the shard's did not.
fn merge_results_sql(results_cols: &str, alias: &str) -> String {
    let rest = without(results_cols, "run_id");
    let select: String = results_cols
        .split(", ")
        .map(|c| {
            if c == "run_id" {
                "$1".to_owned()
            } else {
                c.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let update: String = rest
        .split(", ")
        .filter(|c| !matches!(*c, "query_id" | "paradigm"))
        .map(|c| format!("{c} = excluded.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "INSERT INTO main.results ({results_cols}) SELECT {select} FROM {alias}.results \
         WHERE run_id = $2 \
         ON CONFLICT (run_id, query_id, paradigm) DO UPDATE SET {update} \
         WHERE main.results.error IS NOT NULL AND excluded.error IS NULL"
    )
}

/// A table's columns in order, comma-separated.
async fn table_columns(store: &Store, table: &str) -> Result<String> {
    let rows = sqlx::query(&format!("PRAGMA main.table_info({table})"))
        .fetch_all(store.pool())
        .await
        .map_err(|e| store.err(e))?;
    Ok(rows
        .iter()
        .map(|r| r.get::<String, _>("name"))
        .collect::<Vec<_>>()
        .join(", "))
}

/// `columns` without `name`.
fn without(columns: &str, name: &str) -> String {
    columns
        .split(", ")
        .filter(|c| *c != name)
        .collect::<Vec<_>>()
        .join(", ")
}
