//! Loaders of published outcome matrices: the generic JSON-lines format of
//! docs/outcomes-format.md and Adaptive-RAG's classifier files, read exactly as upstream ships them.
//!
//! Both produce a `bench_core::outcomes::OutcomeImport`; every malformed input is reported with
//! its file, line (or record) and field.

use std::collections::BTreeMap;
use std::path::Path;

use bench_core::outcomes::{ArmOutcome, OutcomeImport, OutcomeRecord, SplitTag};
use bench_core::{ParadigmId, QueryType};
use serde_json::Value;

use crate::error::{CorpusError, Result};

/// How a source's strategy names map to paradigms and what each costs by default.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmSpec {
    /// Source name → paradigm.
    pub arms: BTreeMap<String, ParadigmId>,
    /// Paradigm → default cost (used where a record gives none).
    pub costs: BTreeMap<ParadigmId, f64>,
}

impl ArmSpec {
    /// Adaptive-RAG's strategies: no retrieval → LLM-only, single-step → NaiveRAG, multi-step →
    /// IterativeRAG, costing 0 / 1 / 4.69 retrieval steps (the averages Adaptive-RAG reports for
    /// FLAN-T5-XL on its test set).
    pub fn adaptive_rag() -> ArmSpec {
        ArmSpec {
            arms: [
                ("zero", ParadigmId::LlmOnly),
                ("one", ParadigmId::Naive),
                ("multiple", ParadigmId::Iterative),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
            costs: [
                (ParadigmId::LlmOnly, 0.0),
                (ParadigmId::Naive, 1.0),
                (ParadigmId::Iterative, 4.69),
            ]
            .into_iter()
            .collect(),
        }
    }

    /// Applies `name=paradigm` overrides (`--arm zero=llm-only,one=naive`).
    pub fn with_arms(mut self, overrides: &[String]) -> Result<ArmSpec> {
        for o in overrides {
            let (k, v) = split_pair(o, "--arm", "NAME=PARADIGM")?;
            let p: ParadigmId = v.parse().map_err(|e| usage(format!("--arm {o:?}: {e}")))?;
            self.arms.insert(k.to_string(), p);
        }
        let mut seen: BTreeMap<ParadigmId, &str> = BTreeMap::new();
        for (k, p) in &self.arms {
            if let Some(other) = seen.insert(*p, k) {
                return Err(usage(format!(
                    "--arm: strategies {other:?} and {k:?} both map to {p}; each paradigm may stand for one strategy"
                )));
            }
        }
        Ok(self)
    }

    /// Applies `name=cost` overrides, where name is a source strategy or a paradigm id.
    pub fn with_costs(mut self, overrides: &[String]) -> Result<ArmSpec> {
        for o in overrides {
            let (k, v) = split_pair(o, "--cost", "NAME=NUMBER")?;
            let p = match self.arms.get(k) {
                Some(p) => *p,
                None => k.parse().map_err(|_| {
                    usage(format!(
                        "--cost {o:?}: {k:?} is neither a strategy ({}) nor a paradigm id",
                        self.arms.keys().cloned().collect::<Vec<_>>().join(", ")
                    ))
                })?,
            };
            let c: f64 = v
                .parse()
                .ok()
                .filter(|c: &f64| c.is_finite() && *c >= 0.0)
                .ok_or_else(|| usage(format!("--cost {o:?}: expected a finite number >= 0")))?;
            self.costs.insert(p, c);
        }
        Ok(self)
    }

    fn paradigm(&self, name: &str) -> Option<ParadigmId> {
        self.arms.get(name).copied().or_else(|| name.parse().ok())
    }

    /// As stored with the runs.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "arms": self.arms.iter().map(|(k, p)| (k.clone(), Value::from(p.as_str()))).collect::<serde_json::Map<_, _>>(),
            "default_costs": self.costs.iter().map(|(p, c)| (p.as_str().to_string(), Value::from(*c))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

fn usage(message: String) -> CorpusError {
    CorpusError::Core(bench_core::BenchError::Invalid(message))
}

fn split_pair<'a>(s: &'a str, flag: &str, shape: &str) -> Result<(&'a str, &'a str)> {
    s.split_once('=')
        .map(|(k, v)| (k.trim(), v.trim()))
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| usage(format!("{flag} {s:?}: expected {shape}")))
}

fn malformed(file: &Path, location: String, message: String) -> CorpusError {
    CorpusError::Malformed {
        file: file.display().to_string(),
        location,
        message,
    }
}

/// The file as text: bytes that are not UTF-8 are named by line (a leading BOM is dropped).
fn read(file: &Path) -> Result<String> {
    let bytes = std::fs::read(file)
        .map_err(|e| CorpusError::io(format!("reading {}", file.display()), e))?;
    Ok(bench_core::input::decode_utf8(
        bytes,
        &file.display().to_string(),
    )?)
}

/// A string field's text, refused when it holds a NUL (the results database cannot store it).
fn no_nul(s: String, field: &str, at: &dyn Fn(String) -> CorpusError) -> Result<String> {
    match bench_core::input::nul_message(&s) {
        Some(m) => Err(at(format!("field {field:?}: {m}"))),
        None => Ok(s),
    }
}

/// A required string field; one holding a NUL is refused (the results database cannot store it).
fn str_field<'a>(v: &'a Value, field: &str, at: &dyn Fn(String) -> CorpusError) -> Result<&'a str> {
    let s = v
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| at(format!("field {field:?}: expected a string")))?;
    match bench_core::input::nul_message(s) {
        Some(m) => Err(at(format!("field {field:?}: {m}"))),
        None => Ok(s),
    }
}

/// A string field that must hold some text (a question, a corpus name).
fn text_field<'a>(
    v: &'a Value,
    field: &str,
    at: &dyn Fn(String) -> CorpusError,
) -> Result<&'a str> {
    let s = str_field(v, field, at)?;
    if s.trim().is_empty() {
        return Err(at(format!("field {field:?}: is empty")));
    }
    Ok(s)
}

/// The corpus name of a record: the rule of a generic corpus's `corpus.toml` (letters, digits,
/// '-', '_' or '.', not a built-in corpus's name), since it becomes a file and table name.
fn corpus_field(v: &Value, field: &str, at: &dyn Fn(String) -> CorpusError) -> Result<String> {
    let name = str_field(v, field, at)?;
    crate::load::check_corpus_name(name)
        .map_err(|why| at(format!("field {field:?}: corpus name {name:?} {why}")))?;
    Ok(name.to_string())
}

/// Adaptive-RAG's classifier data: `queries` lists the questions ([{id, question, dataset_name}]),
/// `labels` the silver labels ([{id, answer: A|B|C, total_answer: [zero|one|multiple]}]). A
/// question without a label record had no correct strategy. With no `queries` file the labels
/// file's own questions are imported (the training file lists only questions some strategy
/// answered).
pub fn load_adaptive_rag(
    queries: Option<&Path>,
    labels: &Path,
    spec: &ArmSpec,
    split: Option<SplitTag>,
    source: Option<&str>,
) -> Result<OutcomeImport> {
    let parse = |file: &Path| -> Result<Vec<Value>> {
        let text = read(file)?;
        let v: Value = bench_core::strict_json::from_str(&text).map_err(|e| {
            let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
            malformed(
                file,
                format!("line {} column {}", e.line(), e.column()),
                format!("not JSON: {}", bench_core::input::json_error(&e, line)),
            )
        })?;
        match v {
            Value::Array(a) => Ok(a),
            _ => Err(malformed(
                file,
                "top level".into(),
                "expected a JSON array of records".into(),
            )),
        }
    };
    for name in ["zero", "one", "multiple"] {
        if !spec.arms.contains_key(name) {
            return Err(usage(format!(
                "--arm: no paradigm for Adaptive-RAG's strategy {name:?}"
            )));
        }
    }
    let label_records = parse(labels)?;
    let mut correct_sets: BTreeMap<String, (Vec<String>, usize)> = BTreeMap::new();
    let mut label_questions = Vec::new();
    for (i, r) in label_records.iter().enumerate() {
        let at = |m: String| malformed(labels, format!("record {i}"), m);
        let id = str_field(r, "id", &at)?.to_string();
        let answer = str_field(r, "answer", &at)?;
        let total = r
            .get("total_answer")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                at("field \"total_answer\": expected an array of strategy names".into())
            })?;
        let mut names = Vec::new();
        for t in total {
            let t = t
                .as_str()
                .filter(|t| ["zero", "one", "multiple"].contains(t))
                .ok_or_else(|| {
                    at(format!(
                        "field \"total_answer\": {t} is not one of \"zero\", \"one\", \"multiple\""
                    ))
                })?;
            names.push(t.to_string());
        }
        let cheapest = ["zero", "one", "multiple"]
            .iter()
            .position(|s| names.iter().any(|n| n == s));
        let want = cheapest.map(|c| ["A", "B", "C"][c]);
        if want != Some(answer) {
            return Err(at(format!(
                "field \"answer\": {answer:?} is not the cheapest strategy of total_answer {names:?} (expected {})",
                want.map_or("a non-empty total_answer".to_string(), |w| format!("{w:?}"))
            )));
        }
        if correct_sets.insert(id.clone(), (names, i)).is_some() {
            return Err(at(format!("field \"id\": {id:?} appears twice")));
        }
        label_questions.push(r.clone());
    }
    let (question_file, question_records) = match queries {
        Some(q) => (q, parse(q)?),
        None => (labels, label_questions),
    };
    let mut records = Vec::with_capacity(question_records.len());
    let mut seen = BTreeMap::new();
    for (i, r) in question_records.iter().enumerate() {
        let at = |m: String| malformed(question_file, format!("record {i}"), m);
        let id = str_field(r, "id", &at)?.to_string();
        let question = text_field(r, "question", &at)?.to_string();
        let corpus = corpus_field(r, "dataset_name", &at)?;
        if seen.insert(id.clone(), i).is_some() {
            return Err(at(format!("field \"id\": {id:?} appears twice")));
        }
        let correct = correct_sets
            .get(&id)
            .map(|(n, _)| n.as_slice())
            .unwrap_or(&[]);
        let mut outcomes: Vec<(ParadigmId, ArmOutcome)> = ["zero", "one", "multiple"]
            .iter()
            .map(|s| {
                let p = spec.arms[*s];
                (
                    p,
                    ArmOutcome {
                        correct: correct.iter().any(|c| c == s),
                        score: None,
                        cost: spec.costs.get(&p).copied().unwrap_or(0.0),
                    },
                )
            })
            .collect();
        outcomes.sort_by_key(|(p, _)| ParadigmId::ALL.iter().position(|q| q == p));
        records.push(OutcomeRecord {
            id,
            corpus,
            question,
            qtype: QueryType::Other,
            answers: Vec::new(),
            outcomes,
            origin: format!("{} record {i}", question_file.display()),
        });
    }
    if let Some((id, (_, i))) = correct_sets.iter().find(|(id, _)| !seen.contains_key(*id)) {
        return Err(malformed(
            labels,
            format!("record {i}"),
            format!(
                "field \"id\": {id:?} is not a question of {}",
                question_file.display()
            ),
        ));
    }
    let model = labels
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unknown".into());
    let imp = OutcomeImport {
        source: source.map_or_else(|| format!("adaptive-rag/{model}"), str::to_string),
        split,
        cost_unit: "retrieval steps".into(),
        metric: format!("exact match (Adaptive-RAG silver labels, {model})"),
        config: serde_json::json!({
            "format": "adaptive-rag",
            "queries": queries.map(|q| q.display().to_string()),
            "labels": labels.display().to_string(),
            "mapping": spec.to_json(),
        }),
        records,
    };
    imp.validate()?;
    Ok(imp)
}

/// The generic JSON-lines format (docs/outcomes-format.md): one question per line with `id`,
/// `corpus`, `question`, optional `type` and `answers`, and `outcomes`: paradigm (or a strategy
/// name mapped by `--arm`) → {`correct`, optional `score` in [0, 1], optional `cost`}.
pub fn load_outcomes_jsonl(
    file: &Path,
    spec: &ArmSpec,
    split: Option<SplitTag>,
    source: Option<&str>,
    cost_unit: &str,
) -> Result<OutcomeImport> {
    let text = read(file)?;
    let mut records = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: String| malformed(file, format!("line {line_no}"), m);
        let v: Value = bench_core::strict_json::from_str(line).map_err(|e| {
            at(format!(
                "column {}: not JSON: {}",
                e.column(),
                bench_core::input::json_error(&e, line)
            ))
        })?;
        if !v.is_object() {
            return Err(at("expected a JSON object".into()));
        }
        let id = match v.get("id") {
            Some(Value::String(s)) => no_nul(s.clone(), "id", &at)?,
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(at("field \"id\": expected a string or a number".into())),
        };
        let corpus = corpus_field(&v, "corpus", &at)?;
        let question = text_field(&v, "question", &at)?.to_string();
        let qtype = match v.get("type") {
            None | Some(Value::Null) => QueryType::Other,
            Some(Value::String(s)) => s.parse().map_err(|e| at(format!("field \"type\": {e}")))?,
            Some(_) => return Err(at("field \"type\": expected a string".into())),
        };
        let answers: Vec<String> = match v.get("answers") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .map(|x| x.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| at("field \"answers\": expected strings".into()))?,
            Some(_) => {
                return Err(at(
                    "field \"answers\": expected a string or an array of strings".into(),
                ))
            }
        };
        let answers = answers
            .into_iter()
            .map(|a| no_nul(a, "answers", &at))
            .collect::<Result<Vec<_>>>()?;
        let obj = v
            .get("outcomes")
            .and_then(Value::as_object)
            .ok_or_else(|| {
                at("field \"outcomes\": expected an object of paradigm → outcome".into())
            })?;
        let mut outcomes = Vec::with_capacity(obj.len());
        for (name, o) in obj {
            let f = |m: String| at(format!("field \"outcomes.{name}\": {m}"));
            let p = spec.paradigm(name).ok_or_else(|| {
                f(format!(
                    "unknown paradigm (known: {}; map other names with --arm NAME=PARADIGM)",
                    ParadigmId::ALL
                        .iter()
                        .map(|p| p.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
            if outcomes.iter().any(|(q, _)| *q == p) {
                return Err(f(format!("a second outcome for paradigm {p}")));
            }
            let correct = o
                .get("correct")
                .and_then(Value::as_bool)
                .ok_or_else(|| f("field \"correct\": expected true or false".into()))?;
            let score = match o.get("score") {
                None | Some(Value::Null) => None,
                Some(s) => Some(
                    s.as_f64()
                        .filter(|s| s.is_finite() && (0.0..=1.0).contains(s))
                        .ok_or_else(|| {
                            f(format!("field \"score\": {s} is not a number in [0, 1]"))
                        })?,
                ),
            };
            let cost = match o.get("cost") {
                None | Some(Value::Null) => spec
                    .costs
                    .get(&p)
                    .copied()
                    .ok_or_else(|| f(format!("no \"cost\", and --cost gives none for {p}")))?,
                Some(c) => c
                    .as_f64()
                    .filter(|c| c.is_finite() && *c >= 0.0)
                    .ok_or_else(|| f(format!("field \"cost\": {c} is not a finite number >= 0")))?,
            };
            outcomes.push((
                p,
                ArmOutcome {
                    correct,
                    score,
                    cost,
                },
            ));
        }
        if outcomes.is_empty() {
            return Err(at("field \"outcomes\": no paradigm outcome".into()));
        }
        outcomes.sort_by_key(|(p, _)| ParadigmId::ALL.iter().position(|q| q == p));
        records.push(OutcomeRecord {
            id,
            corpus,
            question,
            qtype,
            answers,
            outcomes,
            origin: format!("{}:{line_no}", file.display()),
        });
    }
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "outcomes".into());
    let imp = OutcomeImport {
        source: source.map_or(stem, str::to_string),
        split,
        cost_unit: cost_unit.to_string(),
        metric: "imported correct".into(),
        config: serde_json::json!({
            "format": "outcomes-jsonl",
            "file": file.display().to_string(),
            "mapping": spec.to_json(),
        }),
        records,
    };
    imp.validate()
        .map_err(|e| malformed(file, "records".into(), e.to_string()))?;
    Ok(imp)
}

impl ArmSpec {
    /// No mapping and no default costs: outcome keys must be paradigm ids and records carry costs.
    pub fn identity() -> ArmSpec {
        ArmSpec {
            arms: BTreeMap::new(),
            costs: BTreeMap::new(),
        }
    }
}
