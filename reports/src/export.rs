//! Raw exports: the tuples and the router evaluation rows as CSV (RFC 4180 quoting) and JSON lines.

use serde_json::json;

use crate::model::{RouteEval, SignalRow, Tuple};

/// One CSV field: quoted when it holds a comma, a quote, a line break or edge spaces; quotes
/// inside are doubled.
pub fn csv_field(s: &str) -> String {
    let needs = s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ');
    if needs {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

fn opt(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

const TUPLE_COLUMNS: [&str; 25] = [
    "run_id",
    "corpus",
    "query_id",
    "qtype",
    "paradigm",
    "query",
    "answer",
    "judge_label",
    "correct",
    "em",
    "f1",
    "semantic_f1",
    "evidence_recall",
    "tokens_construction_in",
    "tokens_construction_out",
    "tokens_retrieval_in",
    "tokens_retrieval_out",
    "tokens_generation_in",
    "tokens_generation_out",
    "tokens_judge_in",
    "tokens_judge_out",
    "context_tokens",
    "latency_ms",
    "mode",
    "error",
];

/// The judge label as exported: its stored text, `None` when the tuple failed.
fn judge(t: &Tuple) -> Option<&'static str> {
    t.judge_label.map(|j| j.as_str())
}

fn tuple_fields(t: &Tuple) -> [String; 25] {
    let k = &t.tokens.phases;
    [
        t.run_id.to_string(),
        t.corpus.clone(),
        t.query_id.clone(),
        t.qtype.as_str().to_owned(),
        t.paradigm.as_str().to_owned(),
        t.question.clone(),
        t.answer.clone(),
        judge(t).unwrap_or_default().to_owned(),
        t.correct().to_string(),
        t.em.to_string(),
        t.f1.to_string(),
        opt(t.semantic_f1),
        opt(t.evidence_recall),
        k.construction_in.to_string(),
        k.construction_out.to_string(),
        k.retrieval_in.to_string(),
        k.retrieval_out.to_string(),
        k.generation_in.to_string(),
        k.generation_out.to_string(),
        t.tokens.judge_in.to_string(),
        t.tokens.judge_out.to_string(),
        t.context_tokens.to_string(),
        t.latency_ms.to_string(),
        t.mode.label(),
        t.error.clone().unwrap_or_default(),
    ]
}

/// The tuples as CSV, one line per tuple after a header.
pub fn tuples_csv(tuples: &[Tuple]) -> String {
    let mut out = TUPLE_COLUMNS.join(",") + "\n";
    for t in tuples {
        let f: Vec<String> = tuple_fields(t).iter().map(|s| csv_field(s)).collect();
        out.push_str(&f.join(","));
        out.push('\n');
    }
    out
}

/// The tuples as JSON lines (same fields as the CSV; absent values are `null`).
pub fn tuples_jsonl(tuples: &[Tuple]) -> String {
    let mut out = String::new();
    // Counts stay JSON floats (`12.0`), as earlier exports wrote them.
    let n = |v: u64| v as f64;
    for t in tuples {
        let k = &t.tokens.phases;
        let v = json!({
            "run_id": t.run_id,
            "corpus": t.corpus,
            "query_id": t.query_id,
            "qtype": t.qtype.as_str(),
            "paradigm": t.paradigm.as_str(),
            "query": t.question,
            "answer": t.answer,
            "judge_label": judge(t),
            "correct": t.correct(),
            "em": t.em,
            "f1": t.f1,
            "semantic_f1": t.semantic_f1,
            "evidence_recall": t.evidence_recall,
            "tokens_construction_in": n(k.construction_in),
            "tokens_construction_out": n(k.construction_out),
            "tokens_retrieval_in": n(k.retrieval_in),
            "tokens_retrieval_out": n(k.retrieval_out),
            "tokens_generation_in": n(k.generation_in),
            "tokens_generation_out": n(k.generation_out),
            "tokens_judge_in": n(t.tokens.judge_in),
            "tokens_judge_out": n(t.tokens.judge_out),
            "context_tokens": n(t.context_tokens),
            "latency_ms": t.latency_ms,
            "mode": t.mode,
            "error": t.error,
        });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

const SIGNAL_COLUMNS: [&str; 10] = [
    "run_id",
    "corpus",
    "query_id",
    "name",
    "value",
    "present",
    "probe",
    "paradigms",
    "cost",
    "cost_ms",
];

/// The probe signals as CSV, one line per (run, question, signal): a missing signal has an
/// empty value and `present` false; `paradigms` lists (`;`-separated) the paradigms whose
/// answers the probe used, `cost` is its own cost in the run's unit, `cost_ms` its time.
pub fn signals_csv(rows: &[SignalRow]) -> String {
    let mut out = SIGNAL_COLUMNS.join(",") + "\n";
    for r in rows {
        let s = &r.signal;
        let f = [
            r.run_id.to_string(),
            r.corpus.clone(),
            r.query_id.clone(),
            s.name.clone(),
            opt(s.value),
            s.value.is_some().to_string(),
            s.probe.clone(),
            s.paradigms
                .iter()
                .map(|p| p.as_str())
                .collect::<Vec<_>>()
                .join(";"),
            s.cost.to_string(),
            s.cost_ms.to_string(),
        ];
        let f: Vec<String> = f.iter().map(|v| csv_field(v)).collect();
        out.push_str(&f.join(","));
        out.push('\n');
    }
    out
}

/// The probe signals as JSON lines (same fields; a missing value is `null`, `paradigms` a list).
pub fn signals_jsonl(rows: &[SignalRow]) -> String {
    let mut out = String::new();
    for r in rows {
        let s = &r.signal;
        let v = json!({
            "run_id": r.run_id,
            "corpus": r.corpus,
            "query_id": r.query_id,
            "name": s.name,
            "value": s.value,
            "present": s.value.is_some(),
            "probe": s.probe,
            "paradigms": s.paradigms.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
            "cost": s.cost,
            "cost_ms": s.cost_ms,
        });
        out.push_str(&v.to_string());
        out.push('\n');
    }
    out
}

const EVAL_COLUMNS: [&str; 20] = [
    "eval_id",
    "split",
    "features",
    "policy",
    "mode",
    "router",
    "param",
    "corpus",
    "fold",
    "n",
    "accuracy",
    "macro_f1",
    "mrr",
    "correct_rate",
    "mean_tokens",
    "regret_correct",
    "regret_tokens",
    "latency_ms",
    "fit_ms",
    "seed",
];

/// Every row of the evaluations as CSV.
pub fn evals_csv(evals: &[RouteEval]) -> String {
    let mut out = EVAL_COLUMNS.join(",") + "\n";
    for e in evals {
        for r in &e.rows {
            let f = [
                e.id.to_string(),
                e.spec.split.clone(),
                e.spec.features.clone(),
                e.spec.policy.clone(),
                e.spec.mode.clone(),
                r.router.clone(),
                opt(r.param),
                r.corpus.clone(),
                r.fold.to_string(),
                r.n.to_string(),
                r.measures.accuracy.to_string(),
                r.measures.macro_f1.to_string(),
                r.measures.mrr.to_string(),
                r.measures.correct_rate.to_string(),
                r.measures.mean_tokens.to_string(),
                r.measures.regret_correct.to_string(),
                r.measures.regret_tokens.to_string(),
                r.measures.latency_ms.to_string(),
                r.measures.fit_ms.to_string(),
                e.spec.seed.to_string(),
            ];
            let f: Vec<String> = f.iter().map(|s| csv_field(s)).collect();
            out.push_str(&f.join(","));
            out.push('\n');
        }
    }
    out
}

/// Every row of the evaluations as JSON lines, each with its evaluation's settings.
pub fn evals_jsonl(evals: &[RouteEval]) -> String {
    let mut out = String::new();
    for e in evals {
        for r in &e.rows {
            let mut v = serde_json::to_value(r).expect("serialisable row");
            if let Some(o) = v.as_object_mut() {
                o.insert("eval_id".into(), json!(e.id));
                o.insert("split".into(), json!(e.spec.split));
                o.insert("features".into(), json!(e.spec.features));
                o.insert("policy".into(), json!(e.spec.policy));
                o.insert("mode".into(), json!(e.spec.mode));
                o.insert("seed".into(), json!(e.spec.seed));
            }
            out.push_str(&v.to_string());
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::{ParadigmId, Signal};

    fn rows() -> Vec<SignalRow> {
        let mut agree = Signal::free(
            "agree.f1",
            Some(0.5),
            "answers",
            &[ParadigmId::LlmOnly, ParadigmId::Naive],
        );
        agree.cost = 2.0;
        agree.cost_ms = 0.25;
        let row = |q: &str, signal: Signal| SignalRow {
            run_id: 7,
            corpus: "c".into(),
            query_id: q.into(),
            signal,
        };
        vec![
            row("q1", agree),
            row(
                "q,2",
                Signal::free("entity.hit_rate", None, "entities", &[]),
            ),
        ]
    }

    #[test]
    fn signals_export_value_present_flag_and_cost() {
        let csv = signals_csv(&rows());
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines,
            [
                "run_id,corpus,query_id,name,value,present,probe,paradigms,cost,cost_ms",
                "7,c,q1,agree.f1,0.5,true,answers,llm-only;naive,2,0.25",
                // A missing signal: empty value, present false; a comma in an id is quoted.
                "7,c,\"q,2\",entity.hit_rate,,false,entities,,0,0",
            ]
        );
        let json: Vec<serde_json::Value> = signals_jsonl(&rows())
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(json[0]["paradigms"], json!(["llm-only", "naive"]));
        assert_eq!(
            (json[0]["value"].clone(), json[0]["cost"].clone()),
            (json!(0.5), json!(2.0))
        );
        assert_eq!(json[1]["value"], serde_json::Value::Null);
        assert_eq!(json[1]["present"], json!(false));
    }
}
