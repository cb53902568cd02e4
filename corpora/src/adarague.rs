//! AdaRAGUE's Adaptive-RAG outcomes of LLaMA-3.1-8B-Instruct (`../shared/datasets/adarague-llama8b`,
//! SOURCE.txt there), read as upstream ships them: per arm and data set the predicted answers
//! and gold answers of the 3,000 test and 3,000 training questions, the multi-step run's step
//! counts, the published Adaptive-RAG classifier's choices and answers, and SeaKR's first-pass
//! uncertainty for the 1,500 single-hop test questions.
//!
//! Two imports come out, `test` and `train`; the harness then scores every answer itself
//! (`ragrouter import`, with `metrics`). Corpora are named `adarague-<data set>`, so they never
//! collide with the FLAN-T5 import's `squad`, `nq`, ...

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use bench_core::input::{json_error, nul_message};
use bench_core::outcomes::{ArmOutcome, OutcomeImport, OutcomeRecord, SplitTag, MAX_MAGNITUDE};
use bench_core::{ParadigmId, PublishedChoice, QueryType, Signal};
use serde_json::Value;

use crate::error::{CorpusError, Result};
use crate::outcomes::{malformed, read, usage};

/// The six data sets, in upstream's order.
pub(crate) const DATASETS: [&str; 6] = [
    "squad",
    "nq",
    "trivia",
    "musique",
    "hotpotqa",
    "2wikimultihopqa",
];

/// Upstream's arms: no retrieval, single-step, multi-step (IRCoT), as the adaptive-rag import
/// maps them.
pub(crate) const ARMS: [(&str, ParadigmId); 3] = [
    ("nor", ParadigmId::LlmOnly),
    ("oner", ParadigmId::Naive),
    ("ircot", ParadigmId::Iterative),
];

/// The multi-step cost of a training question, which upstream ships without step counts: the
/// mean step count of the multi-step run on the 3,000 test questions (SOURCE.txt: 3.35).
pub(crate) const TRAIN_MULTI_STEP_COST: f64 = 3.35;

/// The corpus-name prefix.
pub(crate) const PREFIX: &str = "adarague-";

/// The published classifier's row name.
pub(crate) const CLASSIFIER: &str = "adaptive-rag (published)";

/// SeaKR's outputs: folder tag → data set; the uncertainty fields read from each row.
const SEAKR: [(&str, &str); 3] = [("sq", "squad"), ("nq", "nq"), ("tq", "trivia")];
const SEAKR_FIELDS: [&str; 4] = ["perplexity", "energy_score", "ln_entropy", "eigen_score"];

/// How to read the folder.
#[derive(Debug, Clone)]
pub struct AdaragueOptions {
    /// The shared folder (holds `Adaptive_Rag/`, `SeaKR/`, `dev_questions.jsonl`).
    pub dir: PathBuf,
    /// The test questions' text: `[{"id", "question", "dataset_name"}]` (default: the sibling
    /// `../adaptive-rag-outcomes/classifier/data/valid.json`).
    pub queries: Option<PathBuf>,
    /// The source name (default `adarague/llama_8b_it`).
    pub source: Option<String>,
}

/// A JSON parse error of `text` (read from `file`) at its line and column, lone surrogates named.
fn json_err(file: &Path, text: &str, e: &serde_json::Error, what: &str) -> CorpusError {
    let line = text.lines().nth(e.line().saturating_sub(1)).unwrap_or("");
    malformed(
        file,
        format!("line {} column {}", e.line(), e.column()),
        format!("{what}: {}", json_error(e, line)),
    )
}

/// `s`, refused when it holds a NUL (the results database cannot store one): `what` names it.
fn no_nul(file: &Path, at: &str, what: &str, s: String) -> Result<String> {
    match nul_message(&s) {
        Some(m) => Err(malformed(file, at.to_string(), format!("{what} {m}"))),
        None => Ok(s),
    }
}

/// A number of the files checked finite and within `[low, MAX_MAGNITUDE]`, the bound the
/// arithmetic downstream (costs summed over every question, squared features) holds.
fn bounded(v: &Value, low: f64) -> Option<f64> {
    v.as_f64()
        .filter(|x| x.is_finite() && *x >= low && *x <= MAX_MAGNITUDE)
}

/// The file's top-level object, its entries in file order (serde_json's map is sorted; SeaKR's
/// rows follow the ground-truth file's order), parsed strictly: a key given twice at any depth
/// is an error, and so is a key holding a NUL.
fn object(file: &Path) -> Result<Vec<(String, Value)>> {
    let text = read(file)?;
    let entries = bench_core::strict_json::object_entries(&text)
        .map_err(|e| json_err(file, &text, &e, "expected a JSON object"))?;
    for (k, _) in &entries {
        no_nul(file, &format!("key {k:?}"), "the key", k.clone())?;
    }
    Ok(entries)
}

fn strings(file: &Path, what: &str) -> Result<Vec<(String, String)>> {
    object(file)?
        .into_iter()
        .map(|(k, v)| match v {
            Value::String(s) => {
                let s = no_nul(file, &format!("key {k:?}"), what, s)?;
                Ok((k, s))
            }
            other => Err(malformed(
                file,
                format!("key {k:?}"),
                format!("expected a string answer, got {other}"),
            )),
        })
        .collect()
}

/// The entries of a folder upstream's layout requires: a missing folder, or a file in its
/// place, is named (exit 2), not an I/O error.
fn list_dir(dir: &Path, what: &str) -> Result<Vec<std::fs::DirEntry>> {
    if !dir.is_dir() {
        let why = if dir.exists() {
            "not a folder"
        } else {
            "missing"
        };
        return Err(malformed(
            dir,
            what.to_string(),
            format!("{why}: upstream's layout has a folder here (see SOURCE.txt)"),
        ));
    }
    let io = |e| CorpusError::io(format!("reading {}", dir.display()), e);
    std::fs::read_dir(dir)
        .map_err(io)?
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(io)
}

/// The one folder under `root` whose name starts with `{arm}_qa_` and holds data set `ds`.
fn arm_dir(root: &Path, arm: &str, ds: &str) -> Result<PathBuf> {
    let mut found: Vec<PathBuf> = list_dir(root, "arms")?
        .into_iter()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.starts_with(&format!("{arm}_qa_")) && n.contains(&format!("_{ds}____"))
            })
        })
        .collect();
    found.sort();
    match found.len() {
        1 if found[0].is_dir() => Ok(found.remove(0)),
        1 => Err(malformed(
            &found[0],
            format!("arm {arm}, data set {ds}"),
            "not a folder: an arm's answers are a folder of JSON files".into(),
        )),
        0 => Err(malformed(
            root,
            format!("arm {arm}, data set {ds}"),
            format!("no folder {arm}_qa_<model>_{ds}____..."),
        )),
        _ => Err(malformed(
            root,
            format!("arm {arm}, data set {ds}"),
            format!("{} folders match: {:?}", found.len(), found),
        )),
    }
}

/// One arm's answers and the gold answers of one data set of one split.
struct ArmFiles {
    predictions: BTreeMap<String, String>,
    gold: Vec<(String, Vec<String>)>,
    steps: Option<BTreeMap<String, f64>>,
}

fn arm_files(root: &Path, arm: &str, ds: &str, tag: &str) -> Result<ArmFiles> {
    let dir = arm_dir(root, arm, ds)?;
    let pred_file = dir.join(format!("prediction__{ds}_to_{ds}__{tag}_subsampled.json"));
    let gold_file = dir.join(format!("ground_truth__{ds}_to_{ds}__{tag}_subsampled.json"));
    let predictions: BTreeMap<String, String> = strings(&pred_file, "the predicted answer")?
        .into_iter()
        .collect();
    let gold = object(&gold_file)?
        .into_iter()
        .map(|(k, v)| {
            let at = format!("key {k:?}");
            let answers = v
                .as_array()
                .and_then(|a| {
                    a.iter()
                        .map(|x| x.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()
                })
                .filter(|a| !a.is_empty())
                .ok_or_else(|| {
                    malformed(
                        &gold_file,
                        at.clone(),
                        "expected a non-empty array of gold answers".into(),
                    )
                })?
                .into_iter()
                .map(|a| no_nul(&gold_file, &at, "a gold answer", a))
                .collect::<Result<Vec<_>>>()?;
            Ok((k, answers))
        })
        .collect::<Result<Vec<_>>>()?;
    if let Some((k, _)) = gold.iter().find(|(k, _)| !predictions.contains_key(k)) {
        return Err(malformed(
            &pred_file,
            format!("key {k:?}"),
            format!(
                "no prediction for question {k:?} of {}",
                gold_file.display()
            ),
        ));
    }
    let steps_file = dir.join("stepNum.json");
    let steps = if tag == "test" && arm == "ircot" {
        let m = object(&steps_file)?
            .into_iter()
            .map(|(k, v)| {
                bounded(&v, 0.0).map(|s| (k.clone(), s)).ok_or_else(|| {
                    malformed(
                        &steps_file,
                        format!("key {k:?}"),
                        format!("expected a step count in [0, {MAX_MAGNITUDE:e}], got {v}"),
                    )
                })
            })
            .collect::<Result<BTreeMap<_, _>>>()?;
        Some(m)
    } else {
        None
    };
    Ok(ArmFiles {
        predictions,
        gold,
        steps,
    })
}

/// Question id → (text, data set), from a JSON array of `{"id", "question", "dataset_name"}`
/// (the test file) or JSON lines of `{"id", "question", "dataset"}` (the training file), parsed
/// strictly; a question that is empty or blank, or any text holding a NUL, is refused.
fn questions(file: &Path, lines: bool) -> Result<BTreeMap<String, (String, String)>> {
    let text = read(file)?;
    let records: Vec<(String, Value)> = if lines {
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                let at = format!("line {}", i + 1);
                bench_core::strict_json::from_str(l)
                    .map(|v| (at.clone(), v))
                    .map_err(|e| {
                        malformed(
                            file,
                            at,
                            format!("column {}: not JSON: {}", e.column(), json_error(&e, l)),
                        )
                    })
            })
            .collect::<Result<_>>()?
    } else {
        match bench_core::strict_json::from_str(&text)
            .map_err(|e| json_err(file, &text, &e, "not JSON"))?
        {
            Value::Array(a) => a
                .into_iter()
                .enumerate()
                .map(|(i, v)| (format!("record {i}"), v))
                .collect(),
            _ => {
                return Err(malformed(
                    file,
                    "top level".into(),
                    "expected a JSON array of questions".into(),
                ))
            }
        }
    };
    let ds_field = if lines { "dataset" } else { "dataset_name" };
    let mut out = BTreeMap::new();
    for (at, r) in records {
        let field = |f: &str| {
            let s = r
                .get(f)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    malformed(file, at.clone(), format!("field {f:?}: expected a string"))
                })?;
            no_nul(file, &at, &format!("field {f:?}:"), s)
        };
        let id = field("id")?;
        let question = field("question")?;
        if question.trim().is_empty() {
            return Err(malformed(file, at, "field \"question\": is empty".into()));
        }
        if out
            .insert(id.clone(), (question, field(ds_field)?))
            .is_some()
        {
            return Err(malformed(
                file,
                at,
                format!("field \"id\": {id:?} appears twice"),
            ));
        }
    }
    Ok(out)
}

/// Files named `name` below `root` (sorted) and the directory links the walk met. Links are
/// followed, but every folder is entered once, known by its (device, inode): links that lead
/// back up or to each other (`loop -> .`) cannot make the walk endless.
fn find_below(root: &Path, name: &str) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    use std::os::unix::fs::MetadataExt;
    let io = |p: &Path, e| CorpusError::io(format!("reading {}", p.display()), e);
    let mut seen = HashSet::new();
    let mut stack = vec![root.to_path_buf()];
    let (mut found, mut links) = (Vec::new(), Vec::new());
    while let Some(d) = stack.pop() {
        let meta = std::fs::metadata(&d).map_err(|e| io(&d, e))?;
        if !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        for e in list_dir(&d, "classifier")? {
            let p = e.path();
            let kind = e.file_type().map_err(|e| io(&p, e))?;
            // A link's target decides; a dangling link names nothing.
            let is_dir = if kind.is_symlink() {
                let target = std::fs::metadata(&p).ok();
                if target.as_ref().is_some_and(|m| m.is_dir()) {
                    links.push(p.clone());
                }
                target.is_some_and(|m| m.is_dir())
            } else {
                kind.is_dir()
            };
            if is_dir {
                stack.push(p);
            } else if e.file_name().to_str() == Some(name) {
                found.push(p);
            }
        }
    }
    found.sort();
    links.sort();
    Ok((found, links))
}

/// The classifier's per-query choices of one data set: qid → (option, answer, steps).
fn classifier(root: &Path, ds: &str) -> Result<BTreeMap<String, (ParadigmId, String, f64)>> {
    let name = format!("{ds}_option_with_probas.json");
    let (found, links) = find_below(root, &name)?;
    let [file] = found.as_slice() else {
        // Below `root`, links first: the message is read before its long list of files.
        let shown = |ps: &[PathBuf]| {
            ps.iter()
                .map(|p| p.strip_prefix(root).unwrap_or(p).display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut why = format!("expected one {name} below, found {}", found.len());
        if !links.is_empty() {
            why += &format!(" (following the directory links {})", shown(&links));
        }
        if !found.is_empty() {
            why += &format!(": {}", shown(&found));
        }
        return Err(malformed(root, format!("data set {ds}"), why));
    };
    object(file)?
        .into_iter()
        .map(|(k, v)| {
            let at = |m: String| malformed(file, format!("key {k:?}"), m);
            let option = v
                .get("option")
                .and_then(Value::as_str)
                .ok_or_else(|| at("field \"option\": expected A, B or C".into()))?;
            let choice = match option {
                "A" => ParadigmId::LlmOnly,
                "B" => ParadigmId::Naive,
                "C" => ParadigmId::Iterative,
                o => return Err(at(format!("field \"option\": {o:?} is not A, B or C"))),
            };
            let answer = v
                .get("prediction")
                .and_then(Value::as_str)
                .ok_or_else(|| at("field \"prediction\": expected a string".into()))?;
            let answer = no_nul(
                file,
                &format!("key {k:?}"),
                "field \"prediction\":",
                answer.to_string(),
            )?;
            let steps = v
                .get("stepNum")
                .and_then(|s| bounded(s, 0.0))
                .ok_or_else(|| {
                    at(format!(
                        "field \"stepNum\": expected a number in [0, {MAX_MAGNITUDE:e}], got {}",
                        v.get("stepNum").unwrap_or(&Value::Null)
                    ))
                })?;
            Ok((k, (choice, answer, steps)))
        })
        .collect()
}

/// SeaKR's uncertainty rows of one data set, in its ground-truth file's order.
fn seakr(dir: &Path, tag: &str) -> Result<Vec<[f64; 4]>> {
    let file = dir.join(format!("SeaKR/results/outputs_{tag}_ours_3_1/direct.jsonl"));
    let text = read(&file)?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let at = |m: String| malformed(&file, format!("line {}", i + 1), m);
            let v = bench_core::strict_json::from_str(l).map_err(|e| {
                at(format!(
                    "column {}: not JSON: {}",
                    e.column(),
                    json_error(&e, l)
                ))
            })?;
            let mut out = [0.0; 4];
            for (slot, f) in out.iter_mut().zip(SEAKR_FIELDS) {
                *slot = v
                    .get(f)
                    .and_then(|x| bounded(x, -MAX_MAGNITUDE))
                    .ok_or_else(|| {
                        at(format!(
                            "field {f:?}: expected a number within ±{MAX_MAGNITUDE:e}"
                        ))
                    })?;
            }
            Ok(out)
        })
        .collect()
}

/// One question's answer and cost per arm: no retrieval 0 steps, single-step 1, multi-step its
/// own step count (test) or the test set's mean (train, which upstream ships without counts).
/// Answers are kept unscored.
fn arm_outcomes(
    arms: &[(ParadigmId, ArmFiles)],
    qid: &str,
    ds: &str,
    root: &Path,
) -> Result<Vec<(ParadigmId, ArmOutcome)>> {
    let missing = |m: String| malformed(root, format!("question {qid:?}"), m);
    let mut outcomes = Vec::with_capacity(arms.len());
    for (p, files) in arms {
        let answer = files
            .predictions
            .get(qid)
            .cloned()
            .ok_or_else(|| missing(format!("arm {p} has no prediction")))?;
        let cost = match (p, &files.steps) {
            (ParadigmId::LlmOnly, _) => 0.0,
            (ParadigmId::Naive, _) => 1.0,
            (_, Some(steps)) => *steps
                .get(qid)
                .ok_or_else(|| missing(format!("no step count of {ds}'s multi-step run")))?,
            (_, None) => TRAIN_MULTI_STEP_COST,
        };
        let mut o = ArmOutcome::verdict(false, None, cost);
        o.answer = Some(answer);
        outcomes.push((*p, o));
    }
    Ok(outcomes)
}

/// Reads the folder: `[test, train]` imports. Answers are kept unscored (`correct` false):
/// the caller scores them against the gold answers with the harness's EM and F1.
pub fn load_adarague(opts: &AdaragueOptions) -> Result<Vec<OutcomeImport>> {
    let dir = &opts.dir;
    let pred = dir.join("Adaptive_Rag/predictions");
    if !pred.is_dir() {
        return Err(usage(format!(
            "{}: not AdaRAGUE's folder (no Adaptive_Rag/predictions inside; see SOURCE.txt of ../shared/datasets/adarague-llama8b)",
            dir.display()
        )));
    }
    let queries = opts
        .queries
        .clone()
        .unwrap_or_else(|| dir.join("../adaptive-rag-outcomes/classifier/data/valid.json"));
    let test_q = questions(&queries, false)?;
    let train_file = dir.join("dev_questions.jsonl");
    let train_q = questions(&train_file, true)?;
    let source = opts
        .source
        .clone()
        .unwrap_or_else(|| "adarague/llama_8b_it".into());
    let mut imports = Vec::new();
    for (split, tag) in [(SplitTag::Test, "test"), (SplitTag::Train, "dev_500")] {
        let (qs, qfile) = match split {
            SplitTag::Test => (&test_q, &queries),
            SplitTag::Train => (&train_q, &train_file),
        };
        let part = Split {
            dir,
            pred: &pred,
            root: pred.join(tag),
            split,
            tag,
            qs,
            qfile,
        };
        let mut records = Vec::new();
        let mut without_text = 0usize;
        for ds in DATASETS {
            without_text += dataset_records(&part, ds, &mut records)?;
        }
        imports.push(split_import(&source, split, tag, without_text, records));
    }
    for imp in &imports {
        imp.validate()?;
    }
    Ok(imports)
}

/// One split of the folder being read, and the questions' texts for it.
struct Split<'a> {
    dir: &'a Path,
    pred: &'a Path,
    /// `Adaptive_Rag/predictions/<tag>`.
    root: PathBuf,
    split: SplitTag,
    tag: &'a str,
    /// Per question id, its text and data set.
    qs: &'a BTreeMap<String, (String, String)>,
    /// Where `qs` came from.
    qfile: &'a Path,
}

/// Adds the records of data set `ds` of one split; returns how many training questions were
/// left out for want of a text.
fn dataset_records(part: &Split<'_>, ds: &str, records: &mut Vec<OutcomeRecord>) -> Result<usize> {
    let (split, tag, qfile) = (part.split, part.tag, part.qfile);
    let arms: Vec<(ParadigmId, ArmFiles)> = ARMS
        .iter()
        .map(|(a, p)| Ok((*p, arm_files(&part.root, a, ds, tag)?)))
        .collect::<Result<_>>()?;
    let gold = &arms[0].1.gold;
    let published = match split {
        SplitTag::Test => Some(classifier(&part.pred.join("classifier"), ds)?),
        SplitTag::Train => None,
    };
    let uncertainty = seakr_uncertainty(part, ds, gold.len())?;
    let mut without_text = 0;
    for (i, (qid, answers)) in gold.iter().enumerate() {
        let Some((text, qds)) = part.qs.get(qid) else {
            if split == SplitTag::Train {
                without_text += 1;
                continue;
            }
            return Err(malformed(
                qfile,
                format!("question {qid:?}"),
                format!("no text for test question {qid:?} of {ds}"),
            ));
        };
        if qds != ds {
            return Err(malformed(
                qfile,
                format!("question {qid:?}"),
                format!("data set {qds:?}, but upstream's files hold it under {ds:?}"),
            ));
        }
        let outcomes = arm_outcomes(&arms, qid, ds, &part.root)?;
        let mut signals = Vec::new();
        if split == SplitTag::Test {
            // Missing for the multi-hop data sets: explicit, value and present flag.
            for (j, f) in SEAKR_FIELDS.iter().enumerate() {
                let value = uncertainty.as_ref().map(|rows| rows[i][j]);
                signals.push(Signal::free(
                    &format!("seakr.{f}"),
                    value,
                    "seakr",
                    &[ParadigmId::LlmOnly],
                ));
            }
        }
        let published = match &published {
            Some(c) => published_choice(c, part.pred, qid, ds)?,
            None => Vec::new(),
        };
        records.push(OutcomeRecord {
            id: qid.clone(),
            corpus: format!("{PREFIX}{ds}"),
            question: text.clone(),
            qtype: QueryType::Other,
            answers: answers.clone(),
            outcomes,
            signals,
            published,
            // Where in the folder, never the path it was reached by.
            origin: format!("Adaptive_Rag/predictions/{tag} {ds} {qid}"),
        });
    }
    Ok(without_text)
}

/// SeaKR's uncertainty rows for data set `ds` of the test split (one per question of its
/// ground truth, `questions` of them, matched by order); None where SeaKR has none.
fn seakr_uncertainty(
    part: &Split<'_>,
    ds: &str,
    questions: usize,
) -> Result<Option<Vec<[f64; 4]>>> {
    match SEAKR.iter().find(|(_, d)| *d == ds) {
        Some((t, _)) if part.split == SplitTag::Test => {
            let rows = seakr(part.dir, t)?;
            if rows.len() != questions {
                return Err(malformed(
                    &part.dir.join(format!("SeaKR/results/outputs_{t}_ours_3_1/direct.jsonl")),
                    "rows".into(),
                    format!("{} rows, the ground truth of {ds} has {} questions (rows are matched by order)", rows.len(), questions),
                ));
            }
            Ok(Some(rows))
        }
        _ => Ok(None),
    }
}

/// The published classifier's choice for question `qid` of `ds`.
fn published_choice(
    classifier: &BTreeMap<String, (ParadigmId, String, f64)>,
    pred: &Path,
    qid: &str,
    ds: &str,
) -> Result<Vec<PublishedChoice>> {
    let (choice, answer, steps) = classifier.get(qid).cloned().ok_or_else(|| {
        malformed(
            &pred.join("classifier"),
            format!("question {qid:?}"),
            format!("no classifier choice for {ds}"),
        )
    })?;
    Ok(vec![PublishedChoice {
        router: CLASSIFIER.into(),
        choice,
        answer: Some(answer),
        correct: false,
        source_correct: None,
        cost: steps,
    }])
}

/// The import of one split's records.
fn split_import(
    source: &str,
    split: SplitTag,
    tag: &str,
    without_text: usize,
    records: Vec<OutcomeRecord>,
) -> OutcomeImport {
    OutcomeImport {
        source: source.to_string(),
        split: Some(split),
        cost_unit: "retrieval steps".into(),
        metric: "exact match (harness SQuAD normalisation) of the arms' answers".into(),
        // No path: an import is the same whatever path its folder is read by.
        config: serde_json::json!({
            "format": "adarague",
            "split": tag,
            "costs": {"llm-only": 0, "naive": 1, "iterative": if split == SplitTag::Test { serde_json::json!("stepNum") } else { serde_json::json!(TRAIN_MULTI_STEP_COST) }},
            "questions_without_text": without_text,
        }),
        records,
    }
}
