//! `ragrouter import adarague` end to end on the shared AdaRAGUE folder (the figures SOURCE.txt
//! states, reproduced by the harness's own EM), bad records, the generic format's answers,
//! signals and published choices, pooling refused across sources, and the external protocol
//! carrying the probe signals.

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::Output;

fn folder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets/adarague-llama8b")
}

fn import(db: &Path) -> Output {
    run_on(db, &["import", "adarague", folder().to_str().unwrap()])
}

/// The pooled correct rate (percent, two decimals) of a router's row in the paired table.
fn pooled_cr(table: &str, router: &str) -> String {
    let paired = after(table, "paired against best-single");
    let line = paired
        .lines()
        .find(|l| l.starts_with(router) && l[router.len()..].starts_with("  "))
        .unwrap_or_else(|| panic!("no row {router} in\n{table}"));
    line[router.len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_string()
}

#[test]
fn adarague_import_reproduces_the_stated_figures() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.sqlite");
    check_ok(&import(&db));
    // Per split and arm: correct answers by the harness's EM, and the mean cost in steps.
    assert_eq!(
        query_strings(
            &db,
            "SELECT u.split || ':' || paradigm || ':' || CAST(sum(judge_label = 'correct') AS INTEGER) || ':' || count(*) || ':' || CAST(round(avg(cost) * 1000) AS INTEGER)
             FROM results r JOIN runs u ON u.id = r.run_id GROUP BY u.split, paradigm ORDER BY 1"
        ),
        [
            // test: 33.60 / 30.20 / 32.23 % of 3,000; multi-step costs its real step counts.
            "test:iterative:1008:3000:3347",
            "test:llm-only:906:3000:0",
            "test:naive:967:3000:1000",
            // train: the 2,233 questions with text; multi-step at the stated 3.35.
            "train:iterative:1041:2233:3350",
            "train:llm-only:844:2233:0",
            "train:naive:946:2233:1000",
        ]
    );
    // The published classifier: 34.70 % at 1.85 steps, its own answers scored by the harness.
    assert_eq!(
        query_strings(
            &db,
            "SELECT router || ':' || CAST(sum(correct) AS INTEGER) || ':' || count(*) || ':' || CAST(round(avg(cost) * 10000) AS INTEGER) FROM published_choices GROUP BY router"
        ),
        ["adaptive-rag (published):1041:3000:18503"]
    );
    // SeaKR covers the 1,500 single-hop test questions; the rest are explicit missing rows.
    assert_eq!(
        query_strings(
            &db,
            "SELECT name || ':' || CAST(sum(present) AS INTEGER) || ':' || count(*) || ':' || paradigms FROM signals
             WHERE name IN ('seakr.perplexity', 'agree.em') GROUP BY name, paradigms ORDER BY 1"
        ),
        ["agree.em:5233:5233:llm-only,naive", "seakr.perplexity:1500:3000:llm-only"]
    );
    // Corpora cannot collide with the FLAN-T5 import's.
    assert!(query_strings(&db, "SELECT DISTINCT corpus FROM runs")
        .iter()
        .all(|c| c.starts_with("adarague-")));
    // Again: nothing added.
    let again = import(&db);
    check_ok(&again);
    assert!(text(&again.stdout).contains("already imported"));
    assert_eq!(query_db(&db, "SELECT count(*) FROM results"), [9000 + 6699]);

    // route eval --features q, k-fold: the arms, best-single, Oracle and the published row.
    let out = run_on(
        &db,
        &[
            "route",
            "eval",
            "--features",
            "q",
            "--folds",
            "5",
            "--routers",
            "oracle",
        ],
    );
    check_ok(&out);
    let table = text(&out.stdout);
    assert!(
        table.contains("paired against best-single (C.R 33.60)"),
        "{table}"
    );
    for (router, cr) in [
        ("llm-only", "30.20"),
        ("naive", "32.23"),
        ("iterative", "33.60"),
        ("oracle", "47.20"),
        ("adaptive-rag (published)", "34.70"),
    ] {
        assert_eq!(pooled_cr(&table, router), cr, "{router}\n{table}");
    }
    let published = after(&table, "paired against best-single")
        .lines()
        .find(|l| l.starts_with("adaptive-rag (published)"))
        .unwrap()
        .to_string();
    assert!(published.trim_end().ends_with("1.85"), "{published}");

    // Probe features: the pooled block reads the signals; a router reading them pays the
    // cheap arms once (probe 1 step), so every one of its predictions costs at least 1.
    let out = run_on(
        &db,
        &[
            "route",
            "eval",
            "--features",
            "p",
            "--folds",
            "3",
            "--routers",
            "lr,oracle",
        ],
    );
    check_ok(&out);
    let table = text(&out.stdout);
    assert!(
        table.contains("agree.em") && table.contains("CostSave"),
        "{table}"
    );
    let eval = query_db(&db, "SELECT max(id) FROM route_evals")[0];
    let lr = query_strings(
        &db,
        &format!(
            "SELECT CAST(min(probe_cost) AS TEXT) || ':' || CAST(max(probe_cost) AS TEXT) || ':' || CAST(sum(cost < 1) AS TEXT) || ':' || CAST(sum(played = 'iterative' AND cost < 1.5) AS TEXT)
             FROM route_predictions WHERE eval_id = {eval} AND router = 'lr'"
        ),
    );
    assert_eq!(lr, ["1.0:1.0:0:0"], "{table}");
    // Baselines read no feature and pay no probe.
    assert_eq!(
        query_db(
            &db,
            &format!("SELECT CAST(max(probe_cost) AS INTEGER) FROM route_predictions WHERE eval_id = {eval} AND router = 'naive'")
        ),
        [0]
    );
}

#[test]
fn bad_folders_and_records_name_the_file_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.sqlite");
    // Not the folder.
    let out = run_on(&db, &["import", "adarague", dir.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("Adaptive_Rag/predictions"));
    // The question file lacks a test question: named, nothing written.
    let q = dir.path().join("valid.json");
    std::fs::write(
        &q,
        r#"[{"id":"nope","question":"Who?","dataset_name":"nq"}]"#,
    )
    .unwrap();
    let out = run_on(
        &db,
        &[
            "import",
            "adarague",
            folder().to_str().unwrap(),
            "--queries",
            q.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("valid.json") && err.contains("no text for test question"),
        "{err}"
    );
    assert!(!db.exists() || query_db(&db, "SELECT count(*) FROM results") == [0]);
}

#[test]
fn generic_records_carry_answers_signals_and_published_choices() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("g.sqlite");
    let file = dir.path().join("ans.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"id":"q1","corpus":"c","question":"Who wrote Hamlet?","answers":["William Shakespeare","Shakespeare"],"#,
            r#""outcomes":{"llm-only":{"answer":"shakespeare","correct":false,"cost":0},"naive":{"answer":"Marlowe","cost":1}},"#,
            r#""signals":{"conf":0.7,"lp":null,"dense.top1":{"value":0.4,"cost_ms":2.5,"probe":"dense"}},"#,
            r#""routers":{"mine":{"choice":"naive","answer":"The Shakespeare"}}}"#,
            "\n"
        ),
    )
    .unwrap();
    check_ok(&run_on(
        &db,
        &["import", "outcomes", file.to_str().unwrap()],
    ));
    // The harness's EM decides; the source's verdict (false) stays beside it.
    assert_eq!(
        query_strings(
            &db,
            "SELECT paradigm || ':' || judge_label || ':' || answer || ':' || coalesce(source_correct, -1) || ':' || f1 FROM results ORDER BY 1"
        ),
        ["llm-only:correct:shakespeare:0:1.0", "naive:incorrect:Marlowe:-1:0.0"]
    );
    // Missing is explicit; the agreement probe is derived from the two answers.
    assert_eq!(
        query_strings(
            &db,
            "SELECT name || ':' || value || ':' || present || ':' || probe || ':' || paradigms || ':' || cost_ms FROM signals ORDER BY name"
        ),
        [
            "agree.em:0.0:1:answers:llm-only,naive:0.0",
            "agree.f1:0.0:1:answers:llm-only,naive:0.0",
            "conf:0.7:1:imported::0.0",
            "dense.top1:0.4:1:dense::2.5",
            "len.llm-only:1.0:1:answers:llm-only,naive:0.0",
            "len.naive:1.0:1:answers:llm-only,naive:0.0",
            "lp:0.0:0:imported::0.0",
            "refusal.llm-only:0.0:1:answers:llm-only,naive:0.0",
            "refusal.naive:0.0:1:answers:llm-only,naive:0.0",
        ]
    );
    assert_eq!(
        query_strings(
            &db,
            "SELECT router || ':' || choice || ':' || correct || ':' || cost FROM published_choices"
        ),
        ["mine:naive:1:1.0"]
    );
    // An answer without gold answers, a non-numeric signal: named, nothing written.
    for (line, needle) in [
        (
            r#"{"id":"x","corpus":"c","question":"q","outcomes":{"naive":{"answer":"a","cost":1}}}"#,
            "\"answers\"",
        ),
        (
            r#"{"id":"x","corpus":"c","question":"q","outcomes":{"naive":{"correct":true,"cost":1}},"signals":{"s":"high"}}"#,
            "signals.s",
        ),
        (
            r#"{"id":"x","corpus":"c","question":"q","outcomes":{"naive":{"correct":true,"cost":1}},"routers":{"r":{"choice":"warp"}}}"#,
            "routers.r",
        ),
    ] {
        let bad = dir.path().join("bad.jsonl");
        std::fs::write(&bad, line).unwrap();
        let before = query_db(&db, "SELECT count(*) FROM signals");
        let out = run_on(&db, &["import", "outcomes", bad.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{line}");
        let err = text(&out.stderr);
        assert!(
            err.contains("line 1") && err.contains(needle),
            "{needle}: {err}"
        );
        assert_eq!(query_db(&db, "SELECT count(*) FROM signals"), before);
    }
}

/// A router that checks the probe block arrived with explicit present flags and routes on
/// `agree.em`: naive when the cheap answers agree, else multi-step.
const PROBE_ROUTER: &str = r#"
import json, sys
cols = None
for line in sys.stdin:
    req = json.loads(line)
    if req["type"] == "fit":
        s = req["schema"]
        blocks = [b["kind"] for b in s["blocks"]]
        names = s["feature_names"]
        if "probe-signals" not in blocks or "p:agree.em:present" not in names:
            print(json.dumps({"error": "no probe signals: %s" % blocks}), flush=True)
            continue
        cols = (names.index("p:agree.em"), s["classes"])
        print(json.dumps({"ok": True}), flush=True)
    else:
        i, classes = cols
        out = []
        for r in req["rows"]:
            pick = "naive" if r["features"][i] > 0.5 else "iterative"
            out.append([1.0 if c == pick else 0.0 for c in classes])
        print(json.dumps({"scores": out}), flush=True)
"#;

#[test]
fn the_external_protocol_carries_the_probe_signals_and_sources_are_not_pooled() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("a.sqlite");
    check_ok(&import(&db));
    let script = dir.path().join("probe_router.py");
    std::fs::write(&script, PROBE_ROUTER).unwrap();
    let ext = format!("agree=python3 {}", script.display());
    let out = run_on(
        &db,
        &[
            "route",
            "eval",
            "--features",
            "q+p",
            "--folds",
            "2",
            "--routers",
            "best-single",
            "--external",
            &ext,
        ],
    );
    check_ok(&out);
    let eval = query_db(&db, "SELECT max(id) FROM route_evals")[0];
    // Every prediction paid the probe (llm-only + naive: 1 step) and naive added nothing.
    assert_eq!(
        query_strings(
            &db,
            &format!(
                "SELECT played || ':' || CAST(min(cost) AS TEXT) || ':' || CAST(max(probe_cost) AS TEXT) FROM route_predictions
                 WHERE eval_id = {eval} AND router = 'agree' GROUP BY played ORDER BY played"
            )
        )[1],
        "naive:1.0:1.0"
    );
    // A second source in the same database: not pooled unless asked.
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets/adaptive-rag-outcomes/classifier/data");
    check_ok(&run_on(
        &db,
        &[
            "import",
            "adaptive-rag",
            "--queries",
            d.join("valid.json").to_str().unwrap(),
            "--labels",
            d.join("flan_t5_xl/valid.json").to_str().unwrap(),
        ],
    ));
    // One data set of each source keeps the pooled run small (1,000 questions).
    let args = [
        "route",
        "eval",
        "--features",
        "q",
        "--routers",
        "best-single",
        "--corpora",
        "adarague-nq,nq",
    ];
    let out = run_on(&db, &args);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    assert!(
        text(&out.stderr).contains("--pool-sources"),
        "{}",
        text(&out.stderr)
    );
    check_ok(&run_on(&db, &[&args[..], &["--pool-sources"]].concat()));
    // A report draws one mode on one axis: two import sources are refused, writing nothing,
    // and one source chosen with --corpora is drawn.
    let out_dir = db.with_file_name("report");
    let report = |corpora: &str| {
        run_on(
            &db,
            &[
                "report",
                "--out",
                out_dir.to_str().unwrap(),
                "--corpora",
                corpora,
            ],
        )
    };
    let out = report("adarague-nq,nq");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("mix modes") && err.contains("--corpora"),
        "{err}"
    );
    assert!(!out_dir.exists());
    check_ok(&report("nq"));
}
