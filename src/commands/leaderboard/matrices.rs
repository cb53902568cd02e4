//! The outcome matrices of the stores and their fixed protocols: an offline store gives one
//! pooled matrix (ranked) and one per corpus (shown), an AdaRAGUE import its given split on
//! views `p` and `q`, an Adaptive-RAG import stratified 5-fold on `q`, anything else its given
//! split where it has one, else 5-fold, on its richest view and `q`.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;
use bench_core::{BenchError, Mode, SplitTag};
use reports::leaderboard::{Matrix, Reference};
use routers::eval::Split;
use routers::protocol::Protocol;
use sha2::{Digest, Sha256};
use store::{DbTarget, RunSelection, SplitUse, Store};

/// Seed of every split, router and bootstrap on the board.
pub const SEED: u64 = 42;
/// Folds of the stratified k-fold split.
pub const FOLDS: usize = 5;

/// One matrix and how it is evaluated.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The matrix as the board shows it (baselines filled in once evaluated).
    pub matrix: Matrix,
    /// The protocol of its first view (each view replaces the features).
    pub protocol: Protocol,
    /// Published aggregate figures on this matrix.
    pub references: Vec<Reference>,
}

/// What kind of runs a matrix holds, which fixes its protocol.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Offline,
    AdaRague,
    AdaptiveRag,
    /// Any other import.
    Import,
    /// LLM-mode runs.
    Other,
}

/// The matrices of one store (`name`: its file name), in a stable order: offline ones first
/// (pooled, then each corpus), then one per imported source or LLM run.
pub async fn plan(store: &Store, name: &str) -> Result<Vec<Plan>> {
    let runs = store::select_runs(store, &RunSelection::default()).await?;
    if runs.is_empty() {
        return Err(BenchError::Invalid(format!(
            "--db {name}: the store holds no runs with results: bench or import into it first"
        ))
        .into());
    }
    let mut groups: BTreeMap<String, (Mode, BTreeSet<String>)> = BTreeMap::new();
    for r in &runs {
        groups
            .entry(r.mode.label())
            .or_insert_with(|| (r.mode.clone(), BTreeSet::new()))
            .1
            .insert(r.corpus.clone());
    }
    let mut out = Vec::new();
    for (_, (mode, corpora)) in groups {
        let corpora: Vec<String> = corpora.into_iter().collect();
        let kind = kind_of(&mode);
        if kind == Kind::Offline {
            if corpora.len() > 1 {
                let title = format!("Offline, pooled ({})", corpora.join(", "));
                out.push(
                    one(
                        store,
                        name,
                        "offline-pooled".into(),
                        title,
                        &corpora,
                        kind,
                        true,
                    )
                    .await?,
                );
            }
            for c in &corpora {
                let ranked = corpora.len() == 1;
                let title = format!("Offline: {c}");
                out.push(
                    one(
                        store,
                        name,
                        format!("offline-{}", slug(c)),
                        title,
                        std::slice::from_ref(c),
                        kind,
                        ranked,
                    )
                    .await?,
                );
            }
        } else {
            let (id, title) = match &mode {
                Mode::Imported { source } => (slug(source), format!("Imported: {source}")),
                other => (
                    format!("llm-{}", slug(&other.label())),
                    format!("LLM runs: {}", other.label()),
                ),
            };
            out.push(one(store, name, id, title, &corpora, kind, true).await?);
        }
    }
    Ok(out)
}

fn kind_of(mode: &Mode) -> Kind {
    match mode {
        Mode::Offline => Kind::Offline,
        Mode::Imported { source } if source.starts_with("adarague") => Kind::AdaRague,
        Mode::Imported { source } if source.starts_with("adaptive-rag") => Kind::AdaptiveRag,
        Mode::Imported { .. } => Kind::Import,
        _ => Kind::Other,
    }
}

/// An id made of letters, digits, `-` and `_` only (file names and HTML ids).
pub fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One matrix: its split and views by kind, its digest and size.
#[allow(clippy::too_many_arguments)]
async fn one(
    store: &Store,
    name: &str,
    id: String,
    title: String,
    corpora: &[String],
    kind: Kind,
    ranked: bool,
) -> Result<Plan> {
    let given = match kind {
        Kind::AdaRague => true,
        Kind::Offline | Kind::AdaptiveRag => false,
        Kind::Other | Kind::Import => has_given_split(store, corpora).await?,
    };
    let split = if given {
        Split::Given
    } else {
        Split::KFold(FOLDS)
    };
    let views: Vec<String> = match kind {
        Kind::Offline => vec!["q+c+p".into(), "q".into()],
        Kind::AdaRague => vec!["p".into(), "q".into()],
        Kind::AdaptiveRag => vec!["q".into()],
        Kind::Other if corpora.len() > 1 => vec!["q+c+p".into(), "q".into()],
        // Imports carry no documents, hence no corpus indicators.
        Kind::Other | Kind::Import => vec!["q+p".into(), "q".into()],
    };
    let protocol = Protocol {
        split,
        features: views[0].parse()?,
        seed: SEED,
        corpora: corpora.to_vec(),
        ..Protocol::default()
    };
    let (digest, n, cost_unit) = digest(store, corpora, given).await?;
    let references = match (kind, id.ends_with("flan_t5_xl")) {
        (Kind::AdaptiveRag, true) => published_flan_t5(&id),
        _ => Vec::new(),
    };
    Ok(Plan {
        matrix: Matrix {
            id,
            title,
            store: name.to_string(),
            digest,
            split: split.name().to_string(),
            folds: if given { 1 } else { FOLDS as u32 },
            seed: SEED,
            views,
            ranked,
            cost_unit,
            n,
            baselines: Vec::new(),
            skipped: None,
        },
        protocol,
        references,
    })
}

/// Whether the corpora have both a `train` and a `test` run.
async fn has_given_split(store: &Store, corpora: &[String]) -> Result<bool> {
    let sel = RunSelection {
        corpora: corpora.to_vec(),
        splits: SplitUse::Given,
        ..RunSelection::default()
    };
    let Ok(runs) = store::select_runs(store, &sel).await else {
        return Ok(false);
    };
    let tags: BTreeSet<Option<SplitTag>> = runs.iter().map(|r| r.split).collect();
    Ok(tags.contains(&Some(SplitTag::Train)) && tags.contains(&Some(SplitTag::Test)))
}

/// sha256 of the selected runs' content (corpus, its hash, mode, split tag, cost unit, then
/// every tuple in (query, paradigm) order), the number of distinct questions, and the cost unit.
async fn digest(store: &Store, corpora: &[String], given: bool) -> Result<(String, u32, String)> {
    let sel = RunSelection {
        corpora: corpora.to_vec(),
        splits: if given {
            SplitUse::Given
        } else {
            SplitUse::Pooled
        },
        ..RunSelection::default()
    };
    let mut runs = store::select_runs(store, &sel).await?;
    runs.sort_by(|a, b| {
        (&a.corpus, a.split.map(|s| s.as_str())).cmp(&(&b.corpus, b.split.map(|s| s.as_str())))
    });
    let mut h = Sha256::new();
    let mut questions = BTreeSet::new();
    for r in &runs {
        let head = serde_json::json!([
            r.corpus,
            r.corpus_hash,
            r.mode.label(),
            r.split.map(|s| s.as_str()),
            r.cost_unit()
        ]);
        h.update(head.to_string().as_bytes());
        h.update(b"\n");
        for t in store.routing_tuples(r.id).await? {
            let line = serde_json::json!([
                t.query_id,
                t.paradigm.to_string(),
                t.judge_label.map(|j| format!("{j:?}")),
                t.score.map(f64::to_bits),
                t.llm_tokens,
                t.error,
                t.context_tokens,
                t.cost.map(f64::to_bits),
            ]);
            h.update(line.to_string().as_bytes());
            h.update(b"\n");
            if !(given && r.split == Some(SplitTag::Train)) {
                questions.insert((r.corpus.clone(), t.query_id));
            }
        }
    }
    let unit = runs.first().map(|r| r.cost_unit()).unwrap_or_default();
    Ok((hex::encode(h.finalize()), questions.len() as u32, unit))
}

/// The FLAN-T5-XL figures Adaptive-RAG and MBA-RAG published, with no per-question choices.
fn published_flan_t5(matrix: &str) -> Vec<Reference> {
    [("Adaptive-RAG", 0.3717), ("MBA-RAG", 0.3880)]
        .into_iter()
        .map(|(name, rate)| Reference {
            matrix: matrix.to_string(),
            name: name.to_string(),
            correct_rate: rate,
            note: format!(
                "{name}'s published FLAN-T5-XL accuracy; no per-question choices, not re-scored"
            ),
        })
        .collect()
}

/// The store's file name as the board shows it (never a folder path, never a URL's secret).
pub(super) fn store_name(db: &DbTarget) -> String {
    match db.sqlite_path() {
        Some(p) => p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ),
        None => store::redact(&db.to_string()),
    }
}

/// Opens every `--db` for reading and writing evaluations; a missing file is bad input.
pub(super) async fn open_all(dbs: &[DbTarget]) -> Result<Vec<Store>> {
    let mut out = Vec::new();
    for db in dbs {
        if db.sqlite_path().is_some_and(|p| !p.exists()) {
            return Err(BenchError::Invalid(format!(
                "results database {db} does not exist: run `ragrouter bench <corpus>` or `ragrouter import` first"
            ))
            .into());
        }
        out.push(Store::open_existing_db(db).await?);
    }
    Ok(out)
}
