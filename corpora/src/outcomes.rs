//! Loaders of published outcome matrices: the generic JSON-lines format of
//! docs/outcomes-format.md and Adaptive-RAG's classifier files, read exactly as upstream ships them.
//!
//! Both produce a `bench_core::outcomes::OutcomeImport`; every malformed input is reported with
//! its file, line (or record) and field.

use std::collections::BTreeMap;
use std::path::Path;

use bench_core::outcomes::{ArmOutcome, OutcomeImport, OutcomeRecord, SplitTag, MAX_MAGNITUDE};
use bench_core::{ParadigmId, PublishedChoice, QueryType, Signal};
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

    pub(crate) fn paradigm(&self, name: &str) -> Option<ParadigmId> {
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

pub(crate) fn usage(message: String) -> CorpusError {
    CorpusError::Core(bench_core::BenchError::Invalid(message))
}

fn split_pair<'a>(s: &'a str, flag: &str, shape: &str) -> Result<(&'a str, &'a str)> {
    s.split_once('=')
        .map(|(k, v)| (k.trim(), v.trim()))
        .filter(|(k, v)| !k.is_empty() && !v.is_empty())
        .ok_or_else(|| usage(format!("{flag} {s:?}: expected {shape}")))
}

pub(crate) fn malformed(file: &Path, location: String, message: String) -> CorpusError {
    CorpusError::Malformed {
        file: file.display().to_string(),
        location,
        message,
    }
}

/// The file as text: anything but a regular file under the input cap is refused unread, and
/// bytes that are not UTF-8 are named by line (a leading BOM is dropped).
pub(crate) fn read(file: &Path) -> Result<String> {
    let bytes = bench_core::input::read_input(file, "input file")?;
    Ok(bench_core::input::decode_utf8(
        bytes,
        &file.display().to_string(),
    )?)
}

/// The file's name without its folders (where a record came from, kept in its tuples' trace:
/// never the path, which is no part of an import).
fn file_name(file: &Path) -> String {
    file.file_name().map_or_else(
        || file.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

/// A string field's text, refused when it holds a NUL (the results database cannot store it).
fn no_nul(s: String, field: &str, at: &dyn Fn(String) -> CorpusError) -> Result<String> {
    match bench_core::input::nul_message(&s) {
        Some(m) => Err(at(format!("field {field:?}: {m}"))),
        None => Ok(s),
    }
}

/// A number in `[low, MAX_MAGNITUDE]`: the bound the arithmetic downstream holds (costs summed
/// over every question, features squared), docs/outcomes-format.md.
fn bounded(v: &Value, low: f64) -> Option<f64> {
    v.as_f64()
        .filter(|x| x.is_finite() && *x >= low && *x <= MAX_MAGNITUDE)
}

/// A cost field: a finite number in `[0, MAX_MAGNITUDE]`.
fn cost_of(c: &Value, f: &dyn Fn(String) -> CorpusError) -> Result<f64> {
    bounded(c, 0.0).ok_or_else(|| {
        f(format!(
            "field \"cost\": {c} is not a number in [0, {MAX_MAGNITUDE:e}]"
        ))
    })
}

/// A name given as a key (a router's, a signal's), refused when it holds a NUL.
fn key_name(name: &str, field: &str, at: &dyn Fn(String) -> CorpusError) -> Result<()> {
    match bench_core::input::nul_message(name) {
        Some(m) => Err(at(format!("field {field:?}: the name {name:?} {m}"))),
        None => Ok(()),
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
    crate::load::check_corpus_name(name).map_err(|why| {
        at(format!(
            "field {field:?}: corpus name {} {why}",
            crate::load::quoted_name(name)
        ))
    })?;
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
    for name in STRATEGIES {
        if !spec.arms.contains_key(name) {
            return Err(usage(format!(
                "--arm: no paradigm for Adaptive-RAG's strategy {name:?}"
            )));
        }
    }
    let (correct_sets, label_questions) = read_labels(labels)?;
    let (question_file, question_records) = match queries {
        Some(q) => (q, parse_json_records(q)?),
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
        records.push(OutcomeRecord {
            id,
            corpus,
            question,
            qtype: QueryType::Other,
            answers: Vec::new(),
            outcomes: strategy_outcomes(correct, spec),
            signals: Vec::new(),
            published: Vec::new(),
            origin: format!("{} record {i}", file_name(question_file)),
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
    let imp = adaptive_import(labels, spec, split, source, records);
    imp.validate()?;
    Ok(imp)
}

/// Adaptive-RAG's strategies, cheapest first, and the label that names each.
const STRATEGIES: [&str; 3] = ["zero", "one", "multiple"];
const STRATEGY_LABELS: [&str; 3] = ["A", "B", "C"];

/// Per labelled question, the strategies that answered it correctly and its record's index;
/// and the label records themselves (the questions when there is no questions file).
type Labels = (BTreeMap<String, (Vec<String>, usize)>, Vec<Value>);

/// A file that is one JSON array of records.
fn parse_json_records(file: &Path) -> Result<Vec<Value>> {
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
}

/// Reads the labels file: each record's `total_answer` (strategy names) and `answer` (the
/// label of the cheapest of them), with ids unique.
fn read_labels(labels: &Path) -> Result<Labels> {
    let label_records = parse_json_records(labels)?;
    let mut correct_sets: BTreeMap<String, (Vec<String>, usize)> = BTreeMap::new();
    let mut label_questions = Vec::new();
    for (i, r) in label_records.iter().enumerate() {
        let at = |m: String| malformed(labels, format!("record {i}"), m);
        let id = str_field(r, "id", &at)?.to_string();
        let answer = str_field(r, "answer", &at)?;
        let names = total_answer(r, &at)?;
        let cheapest = STRATEGIES.iter().position(|s| names.iter().any(|n| n == s));
        let want = cheapest.map(|c| STRATEGY_LABELS[c]);
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
    Ok((correct_sets, label_questions))
}

/// A label record's `total_answer`: the names of the strategies that answered correctly.
fn total_answer(r: &Value, at: &dyn Fn(String) -> CorpusError) -> Result<Vec<String>> {
    let total = r
        .get("total_answer")
        .and_then(Value::as_array)
        .ok_or_else(|| at("field \"total_answer\": expected an array of strategy names".into()))?;
    let mut names = Vec::new();
    for t in total {
        let t = t
            .as_str()
            .filter(|t| STRATEGIES.contains(t))
            .ok_or_else(|| {
                at(format!(
                    "field \"total_answer\": {t} is not one of \"zero\", \"one\", \"multiple\""
                ))
            })?;
        names.push(t.to_string());
    }
    Ok(names)
}

/// One question's outcome per strategy's paradigm (correct where the strategy is in
/// `correct`), in `ParadigmId::ALL` order.
fn strategy_outcomes(correct: &[String], spec: &ArmSpec) -> Vec<(ParadigmId, ArmOutcome)> {
    let mut outcomes: Vec<(ParadigmId, ArmOutcome)> = STRATEGIES
        .iter()
        .map(|s| {
            let p = spec.arms[*s];
            (
                p,
                ArmOutcome::verdict(
                    correct.iter().any(|c| c == s),
                    None,
                    spec.costs.get(&p).copied().unwrap_or(0.0),
                ),
            )
        })
        .collect();
    outcomes.sort_by_key(|(p, _)| ParadigmId::ALL.iter().position(|q| q == p));
    outcomes
}

/// The import of Adaptive-RAG's `records`, named after the labels file's folder (the model).
fn adaptive_import(
    labels: &Path,
    spec: &ArmSpec,
    split: Option<SplitTag>,
    source: Option<&str>,
    records: Vec<OutcomeRecord>,
) -> OutcomeImport {
    let model = labels
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "unknown".into());
    OutcomeImport {
        source: source.map_or_else(|| format!("adaptive-rag/{model}"), str::to_string),
        split,
        cost_unit: "retrieval steps".into(),
        metric: format!("exact match (Adaptive-RAG silver labels, {model})"),
        // No path: the same files read by another path are the same import.
        config: serde_json::json!({
            "format": "adaptive-rag",
            "mapping": spec.to_json(),
        }),
        records,
    }
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
        let origin = format!("{}:{line_no}", file_name(file));
        records.push(jsonl_record(&v, spec, &at, origin)?);
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
        // No path: the same file read by another path, or a copy of it, is the same import.
        config: serde_json::json!({
            "format": "outcomes-jsonl",
            "mapping": spec.to_json(),
        }),
        records,
    };
    imp.validate()
        .map_err(|e| malformed(file, "records".into(), e.to_string()))?;
    Ok(imp)
}

/// One line's record of the generic format (`v` is an object; `at` names the line).
fn jsonl_record(
    v: &Value,
    spec: &ArmSpec,
    at: &dyn Fn(String) -> CorpusError,
    origin: String,
) -> Result<OutcomeRecord> {
    let id = match v.get("id") {
        Some(Value::String(s)) => no_nul(s.clone(), "id", at)?,
        Some(Value::Number(n)) => n.to_string(),
        _ => return Err(at("field \"id\": expected a string or a number".into())),
    };
    let corpus = corpus_field(v, "corpus", at)?;
    let question = text_field(v, "question", at)?.to_string();
    let qtype = match v.get("type") {
        None | Some(Value::Null) => QueryType::Other,
        Some(Value::String(s)) => s.parse().map_err(|e| at(format!("field \"type\": {e}")))?,
        Some(_) => return Err(at("field \"type\": expected a string".into())),
    };
    let answers = answers_field(v, at)?;
    let outcomes = arm_outcomes(v, spec, &answers, at)?;
    let signals = parse_signals(v.get("signals"), at)?;
    let published = parse_routers(v.get("routers"), spec, &outcomes, at)?;
    Ok(OutcomeRecord {
        id,
        corpus,
        question,
        qtype,
        answers,
        outcomes,
        signals,
        published,
        origin,
    })
}

/// A record's `answers`: absent, one string or an array of strings.
fn answers_field(v: &Value, at: &dyn Fn(String) -> CorpusError) -> Result<Vec<String>> {
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
    answers
        .into_iter()
        .map(|a| no_nul(a, "answers", at))
        .collect()
}

/// A record's `outcomes`: at least one, at most one per paradigm, in `ParadigmId::ALL` order.
fn arm_outcomes(
    v: &Value,
    spec: &ArmSpec,
    answers: &[String],
    at: &dyn Fn(String) -> CorpusError,
) -> Result<Vec<(ParadigmId, ArmOutcome)>> {
    let obj = v
        .get("outcomes")
        .and_then(Value::as_object)
        .ok_or_else(|| at("field \"outcomes\": expected an object of paradigm → outcome".into()))?;
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
        outcomes.push((p, arm_outcome(o, p, spec, answers, &f)?));
    }
    if outcomes.is_empty() {
        return Err(at("field \"outcomes\": no paradigm outcome".into()));
    }
    outcomes.sort_by_key(|(p, _)| ParadigmId::ALL.iter().position(|q| q == p));
    Ok(outcomes)
}

/// One paradigm's outcome `o`: `correct`, or an `answer` for the harness to score against the
/// record's `answers`; optional `score` in [0, 1] and `cost` (else `--cost`'s).
fn arm_outcome(
    o: &Value,
    p: ParadigmId,
    spec: &ArmSpec,
    answers: &[String],
    f: &dyn Fn(String) -> CorpusError,
) -> Result<ArmOutcome> {
    let answer = match o.get("answer") {
        None | Some(Value::Null) => None,
        Some(Value::String(a)) => Some(no_nul(a.clone(), "answer", f)?),
        Some(_) => return Err(f("field \"answer\": expected a string".into())),
    };
    let source_correct = match o.get("correct") {
        None | Some(Value::Null) if answer.is_some() => None,
        Some(Value::Bool(b)) => Some(*b),
        _ => {
            return Err(f(
                "field \"correct\": expected true or false (or give an \"answer\" for the harness to score)".into(),
            ))
        }
    };
    if answer.is_some() && answers.is_empty() {
        return Err(f(
            "field \"answer\": the harness scores answers against the record's \"answers\", and it has none".into(),
        ));
    }
    let correct = source_correct.unwrap_or(false);
    let score = match o.get("score") {
        None | Some(Value::Null) => None,
        Some(s) => Some(
            s.as_f64()
                .filter(|s| s.is_finite() && (0.0..=1.0).contains(s))
                .ok_or_else(|| f(format!("field \"score\": {s} is not a number in [0, 1]")))?,
        ),
    };
    let cost = match o.get("cost") {
        None | Some(Value::Null) => spec
            .costs
            .get(&p)
            .copied()
            .ok_or_else(|| f(format!("no \"cost\", and --cost gives none for {p}")))?,
        Some(c) => cost_of(c, f)?,
    };
    Ok(ArmOutcome {
        correct,
        score,
        cost,
        source_correct: if answer.is_some() {
            source_correct
        } else {
            None
        },
        answer,
    })
}

/// `signals`: name → number, `null` (missing for this question) or `{"value", "cost",
/// "cost_ms", "probe", "paradigms"}`.
fn parse_signals(v: Option<&Value>, at: &dyn Fn(String) -> CorpusError) -> Result<Vec<Signal>> {
    let obj = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(o)) => o,
        Some(_) => {
            return Err(at(
                "field \"signals\": expected an object of name → value".into()
            ))
        }
    };
    let mut out = Vec::with_capacity(obj.len());
    for (name, s) in obj {
        key_name(name, "signals", at)?;
        let f = |m: String| at(format!("field \"signals.{name}\": {m}"));
        let num = |x: &Value, what: &str| -> Result<Option<f64>> {
            match x {
                Value::Null => Ok(None),
                x => bounded(x, -MAX_MAGNITUDE).map(Some).ok_or_else(|| {
                    f(format!(
                        "{what}: {x} is not a number within ±{MAX_MAGNITUDE:e} or null"
                    ))
                }),
            }
        };
        let mut sig = Signal::free(name, None, "imported", &[]);
        match s {
            Value::Object(o) => {
                sig.value = num(o.get("value").unwrap_or(&Value::Null), "value")?;
                for (key, slot) in [("cost", &mut sig.cost), ("cost_ms", &mut sig.cost_ms)] {
                    if let Some(c) = o.get(key) {
                        *slot = num(c, key)?.filter(|c| *c >= 0.0).ok_or_else(|| {
                            f(format!(
                                "{key}: {c} is not a number in [0, {MAX_MAGNITUDE:e}]"
                            ))
                        })?;
                    }
                }
                if let Some(p) = o.get("probe") {
                    let probe = p
                        .as_str()
                        .filter(|p| !p.is_empty())
                        .ok_or_else(|| f("probe: expected a non-empty string".into()))?;
                    sig.probe = no_nul(probe.to_string(), "probe", &f)?;
                }
                if let Some(ps) = o.get("paradigms") {
                    sig.paradigms = ps
                        .as_array()
                        .ok_or_else(|| f("paradigms: expected an array of paradigm ids".into()))?
                        .iter()
                        .map(|p| {
                            p.as_str()
                                .and_then(|p| p.parse().ok())
                                .ok_or_else(|| f(format!("paradigms: {p} is not a paradigm id")))
                        })
                        .collect::<Result<_>>()?;
                }
            }
            x => sig.value = num(x, "value")?,
        }
        out.push(sig);
    }
    Ok(out)
}

/// `routers`: published router name → `{"choice", "answer", "correct", "cost"}`; the cost
/// defaults to the chosen paradigm's cost on the record.
fn parse_routers(
    v: Option<&Value>,
    spec: &ArmSpec,
    outcomes: &[(ParadigmId, ArmOutcome)],
    at: &dyn Fn(String) -> CorpusError,
) -> Result<Vec<PublishedChoice>> {
    let obj = match v {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Object(o)) => o,
        Some(_) => {
            return Err(at(
                "field \"routers\": expected an object of router → choice".into(),
            ))
        }
    };
    let mut out = Vec::with_capacity(obj.len());
    for (name, r) in obj {
        key_name(name, "routers", at)?;
        let f = |m: String| at(format!("field \"routers.{name}\": {m}"));
        let choice = r
            .get("choice")
            .and_then(Value::as_str)
            .ok_or_else(|| f("field \"choice\": expected a paradigm or strategy name".into()))?;
        let choice = spec
            .paradigm(choice)
            .ok_or_else(|| f(format!("field \"choice\": unknown paradigm {choice:?}")))?;
        let answer = match r.get("answer") {
            None | Some(Value::Null) => None,
            Some(Value::String(a)) => Some(no_nul(a.clone(), "answer", &f)?),
            Some(_) => return Err(f("field \"answer\": expected a string".into())),
        };
        let source_correct = match r.get("correct") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(f("field \"correct\": expected true or false".into())),
        };
        if answer.is_none() && source_correct.is_none() {
            return Err(f(
                "needs \"answer\" (scored by the harness) or \"correct\"".into()
            ));
        }
        let cost = match r.get("cost") {
            None | Some(Value::Null) => outcomes
                .iter()
                .find(|(p, _)| *p == choice)
                .map(|(_, o)| o.cost)
                .ok_or_else(|| {
                    f(format!(
                        "no \"cost\", and the record has no outcome of {choice} to take it from"
                    ))
                })?,
            Some(c) => cost_of(c, &f)?,
        };
        out.push(PublishedChoice {
            router: name.clone(),
            choice,
            correct: source_correct.unwrap_or(false),
            source_correct,
            answer,
            cost,
        });
    }
    Ok(out)
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
