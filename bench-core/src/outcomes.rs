//! Imported outcome matrices: per question, what each paradigm achieved, as someone else measured
//! it (docs/outcomes-format.md). The loaders in `corpora` (`load_outcomes_jsonl`,
//! `load_adaptive_rag`, `load_adarague`) parse files into an [`OutcomeImport`];
//! `Store::import_outcomes` writes it as one run per corpus.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::config::hash_parts;
use crate::error::{BenchError, Result};
use crate::signals::{PublishedChoice, Signal};
use crate::types::{ParadigmId, QueryType};

pub use crate::signals::MAX_MAGNITUDE;

/// Which part of a data set's own split a run holds; `route eval --split given` trains on
/// `train` and tests on `test`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SplitTag {
    /// The data set's training part.
    Train,
    /// The data set's test part.
    Test,
}

impl SplitTag {
    /// The stored name: `train` or `test`.
    pub fn as_str(self) -> &'static str {
        match self {
            SplitTag::Train => "train",
            SplitTag::Test => "test",
        }
    }
}

impl fmt::Display for SplitTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SplitTag {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self> {
        match s.trim() {
            "train" => Ok(SplitTag::Train),
            "test" => Ok(SplitTag::Test),
            other => Err(BenchError::Invalid(format!(
                "unknown split tag {other:?}: expected train or test"
            ))),
        }
    }
}

/// What one paradigm achieved on one imported question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArmOutcome {
    /// The verdict routers learn from: the harness's exact match when `answer` was scored,
    /// else the source's.
    pub correct: bool,
    /// A graded quality in [0, 1] (F1, semantic F1, a judge's score), when the source has one;
    /// the harness's token F1 when it scored `answer`.
    pub score: Option<f64>,
    /// What the paradigm cost on this question, in the import's cost unit.
    pub cost: f64,
    /// The paradigm's predicted answer, when the source gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    /// The source's own verdict, kept beside the harness's when the harness scored `answer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_correct: Option<bool>,
}

impl ArmOutcome {
    /// A verdict, score and cost, without an answer.
    pub fn verdict(correct: bool, score: Option<f64>, cost: f64) -> ArmOutcome {
        ArmOutcome {
            correct,
            score,
            cost,
            answer: None,
            source_correct: None,
        }
    }
}

/// One imported question and its per-paradigm outcomes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutcomeRecord {
    /// The question's id in its data set (unique per corpus).
    pub id: String,
    /// The data set the question belongs to; every one becomes a corpus of its own.
    pub corpus: String,
    /// The question text.
    pub question: String,
    /// Its type (`other` when the source gives none).
    pub qtype: QueryType,
    /// Gold answers when the source gives them (the first is the answer, the rest aliases).
    pub answers: Vec<String>,
    /// In `ParadigmId::ALL` order, one entry per paradigm the source measured.
    pub outcomes: Vec<(ParadigmId, ArmOutcome)>,
    /// Per-question probe signals (stored in `signals`).
    pub signals: Vec<Signal>,
    /// Published routers' choices on this question (stored in `published_choices`).
    pub published: Vec<PublishedChoice>,
    /// Where the record came from (`file:line` or `file record N`), kept in the tuple's trace.
    pub origin: String,
}

/// A whole import: records plus what identifies and describes them.
#[derive(Debug, Clone, PartialEq)]
pub struct OutcomeImport {
    /// Names the source in every record's mode: `imported:SOURCE` (e.g. `adaptive-rag/flan_t5_xl`).
    pub source: String,
    /// Which part of the data set's own split the records are, when the import names one.
    pub split: Option<SplitTag>,
    /// What `ArmOutcome::cost` counts (`retrieval steps`, `tokens`, ...).
    pub cost_unit: String,
    /// How the source decided `correct` (stored as the runs' judge identity).
    pub metric: String,
    /// How the files were read (arm map, default costs, file names): stored with every run.
    pub config: serde_json::Value,
    /// The questions, in input order.
    pub records: Vec<OutcomeRecord>,
}

impl OutcomeImport {
    /// The runs' mode: `Mode::Imported` of the source.
    pub fn mode(&self) -> crate::record::Mode {
        crate::record::Mode::Imported {
            source: self.source.clone(),
        }
    }

    /// Checks what a loader may have missed: ids unique per corpus, scores in [0, 1], costs
    /// finite and non-negative, at least one outcome per record, names non-empty.
    pub fn validate(&self) -> Result<()> {
        if self.source.trim().is_empty() {
            return Err(BenchError::Invalid("an import needs a source name".into()));
        }
        if self.records.is_empty() {
            return Err(BenchError::Invalid(format!(
                "import {}: no records",
                self.source
            )));
        }
        let mut seen: BTreeMap<(&str, &str), &str> = BTreeMap::new();
        for r in &self.records {
            let bad = |m: String| BenchError::Invalid(format!("{}: {m}", r.origin));
            if r.id.is_empty() {
                return Err(bad("field \"id\": expected a non-empty string".into()));
            }
            if r.corpus.is_empty() {
                return Err(bad("field \"corpus\": expected a non-empty string".into()));
            }
            if let Some(first) = seen.insert((&r.corpus, &r.id), &r.origin) {
                return Err(bad(format!(
                    "field \"id\": {:?} of corpus {:?} appears twice (first at {first})",
                    r.id, r.corpus
                )));
            }
            if r.outcomes.is_empty() {
                return Err(bad("no paradigm outcome".into()));
            }
            for (p, o) in &r.outcomes {
                if let Some(s) = o.score {
                    if !(s.is_finite() && (0.0..=1.0).contains(&s)) {
                        return Err(bad(format!("{p}: score {s} is outside [0, 1]")));
                    }
                }
                if !(o.cost.is_finite() && (0.0..=MAX_MAGNITUDE).contains(&o.cost)) {
                    return Err(bad(format!(
                        "{p}: cost {} is not a number in [0, {MAX_MAGNITUDE:e}]",
                        o.cost
                    )));
                }
            }
            let mut names = BTreeMap::new();
            for s in &r.signals {
                s.validate().map_err(bad)?;
                if names.insert(s.name.as_str(), ()).is_some() {
                    return Err(bad(format!("signal {:?} appears twice", s.name)));
                }
            }
            let mut routers = BTreeMap::new();
            for c in &r.published {
                if c.router.trim().is_empty() {
                    return Err(bad("a published router needs a non-empty name".into()));
                }
                if routers.insert(c.router.as_str(), ()).is_some() {
                    return Err(bad(format!(
                        "published router {:?} appears twice",
                        c.router
                    )));
                }
                if !(c.cost.is_finite() && (0.0..=MAX_MAGNITUDE).contains(&c.cost)) {
                    return Err(bad(format!(
                        "published router {:?}: cost {} is not a number in [0, {MAX_MAGNITUDE:e}]",
                        c.router, c.cost
                    )));
                }
            }
        }
        Ok(())
    }

    /// The records grouped by corpus (corpus name order), each in input order.
    pub fn by_corpus(&self) -> BTreeMap<&str, Vec<&OutcomeRecord>> {
        let mut out: BTreeMap<&str, Vec<&OutcomeRecord>> = BTreeMap::new();
        for r in &self.records {
            out.entry(r.corpus.as_str()).or_default().push(r);
        }
        out
    }
}

/// The content hash of one corpus's imported records: the source, the split and every field
/// that reaches the store (not the origin), so the same data from another path hashes the same.
pub fn content_hash(source: &str, split: Option<SplitTag>, records: &[&OutcomeRecord]) -> String {
    let mut canon: Vec<String> = records
        .iter()
        .map(|r| {
            // Signals and published choices join the hash only when present, so an import
            // without them hashes as it did before they existed.
            let mut v =
                serde_json::json!([r.id, r.question, r.qtype.as_str(), r.answers, r.outcomes]);
            if !r.signals.is_empty() || !r.published.is_empty() {
                if let Some(a) = v.as_array_mut() {
                    a.push(serde_json::json!(r.signals));
                    a.push(serde_json::json!(r.published));
                }
            }
            v.to_string()
        })
        .collect();
    canon.sort();
    let split = split.map_or("", SplitTag::as_str);
    let body = canon.join("\n");
    hash_parts([
        b"outcomes/1".as_slice(),
        source.as_bytes(),
        split.as_bytes(),
        body.as_bytes(),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, corpus: &str, line: usize) -> OutcomeRecord {
        OutcomeRecord {
            id: id.into(),
            corpus: corpus.into(),
            question: format!("question {id}?"),
            qtype: QueryType::Other,
            answers: vec![],
            outcomes: vec![(ParadigmId::Naive, ArmOutcome::verdict(true, None, 1.0))],
            signals: vec![],
            published: vec![],
            origin: format!("f.jsonl:{line}"),
        }
    }

    fn import(records: Vec<OutcomeRecord>) -> OutcomeImport {
        OutcomeImport {
            source: "s".into(),
            split: None,
            cost_unit: "steps".into(),
            metric: "em".into(),
            config: serde_json::Value::Null,
            records,
        }
    }

    #[test]
    fn validation_names_the_record_and_field() {
        assert!(import(vec![record("a", "c", 1), record("a", "d", 2)])
            .validate()
            .is_ok());
        let e = import(vec![record("a", "c", 1), record("a", "c", 2)])
            .validate()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.jsonl:2") && e.contains("f.jsonl:1") && e.contains("\"id\""),
            "{e}"
        );
        let mut r = record("a", "c", 3);
        r.outcomes[0].1.score = Some(1.5);
        let e = import(vec![r]).validate().unwrap_err().to_string();
        assert!(
            e.contains("f.jsonl:3") && e.contains("naive") && e.contains("1.5"),
            "{e}"
        );
        let mut r = record("a", "c", 4);
        r.outcomes[0].1.cost = -1.0;
        assert!(import(vec![r]).validate().is_err());
        let mut r = record("a", "c", 4);
        r.outcomes[0].1.cost = 1e308;
        let e = import(vec![r]).validate().unwrap_err().to_string();
        assert!(e.contains("[0, 1e12]"), "{e}");
        let mut r = record("a", "c", 4);
        r.signals = vec![Signal::free("s", Some(-1e13), "p", &[])];
        assert!(import(vec![r]).validate().is_err());
        assert!(import(vec![]).validate().is_err());
        let mut r = record("a", "c", 5);
        r.signals = vec![
            Signal::free("s", Some(1.0), "p", &[]),
            Signal::free("s", None, "p", &[]),
        ];
        let e = import(vec![r]).validate().unwrap_err().to_string();
        assert!(e.contains("f.jsonl:5") && e.contains("twice"), "{e}");
        let mut r = record("a", "c", 6);
        r.signals = vec![Signal::free("s", Some(f64::NAN), "p", &[])];
        assert!(import(vec![r]).validate().is_err());
    }

    #[test]
    fn content_hash_ignores_order_and_origin_but_not_content() {
        let a = record("a", "c", 1);
        let b = record("b", "c", 2);
        let h1 = content_hash("s", None, &[&a, &b]);
        let mut b2 = b.clone();
        b2.origin = "elsewhere:9".into();
        assert_eq!(h1, content_hash("s", None, &[&b2, &a]));
        assert_ne!(h1, content_hash("s", Some(SplitTag::Test), &[&a, &b]));
        assert_ne!(h1, content_hash("t", None, &[&a, &b]));
        let mut b3 = b.clone();
        b3.outcomes[0].1.correct = false;
        assert_ne!(h1, content_hash("s", None, &[&a, &b3]));
    }
}
