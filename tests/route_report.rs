//! `route eval` and `report` end to end on real tuples: MuSiQue questions benched offline, corpus
//! metrics stored, routers cross-validated twice with one seed (same numbers), a report written.

mod common;

use common::*;

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args);
    if args[0] != "report" {
        c.arg("--cache-dir").arg(shared_cache());
    }
    c.arg("--db").arg(dir.join("r.sqlite")).output().unwrap()
}

const EVAL_ROWS: &str =
    "SELECT router || '|' || param || '|' || corpus || '|' || fold || '|' || n || '|' ||
    accuracy || '|' || macro_f1 || '|' || mrr || '|' || correct_rate || '|' || mean_tokens
    FROM route_eval_results WHERE eval_id = ? ORDER BY router, param, corpus, fold";

#[test]
fn route_eval_and_report_on_benched_musique_tuples() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let eval = [
        "route",
        "eval",
        "--routers",
        "random,best-fixed,oracle,lr,ner",
        "--folds",
        "3",
        "--seed",
        "5",
    ];

    // The first 30 MuSiQue questions under these paradigms (and any further flags).
    let bench = |paradigms: &str, more: &[&str]| {
        let mut a = vec![
            "bench",
            "musique-dev",
            "--limit",
            "30",
            "--paradigms",
            paradigms,
        ];
        a.extend_from_slice(more);
        check_ok(&run(d, &a));
    };
    bench("llm-only,naive,graph", &[]);
    // The bench run stored the corpus indicators (it built the graph): all six are there, so
    // route eval needs no `metrics` step; `metrics` recomputes them under the same key.
    let six = "SELECT COUNT(*) FROM corpus_metrics, json_each(metrics_json)
        WHERE json_each.key IN ('graph.lcc_ratio', 'graph.density', 'graph.average_clustering',
        'embeddings.twonn_mle', 'embeddings.hubness_skew_k10', 'embeddings.dispersion_mean')
        AND json_each.type = 'real'";
    assert_eq!(query_db(&d.join("r.sqlite"), six), [6]);
    check_ok(&run(d, &["metrics", "musique-dev"]));
    assert_eq!(
        query_db(&d.join("r.sqlite"), "SELECT COUNT(*) FROM corpus_metrics"),
        [1]
    );
    let first = run(d, &eval);
    check_ok(&first);
    let table = text(&first.stdout);
    for needle in [
        "routing rows: 30",
        "R.A",
        "oracle",
        "lr",
        "ner",
        "musique-dev",
    ] {
        assert!(table.contains(needle), "table lacks {needle:?}:\n{table}");
    }
    let oracle = table
        .lines()
        .find(|l| l.starts_with("oracle"))
        .expect("an oracle row");
    assert!(oracle.contains("100.0"), "{oracle}");

    // Same seed, same numbers (timings aside).
    check_ok(&run(d, &eval));
    let db = d.join("r.sqlite");
    let rows = |id: i64| query_strings(&db, &EVAL_ROWS.replace('?', &id.to_string()));
    let (a, b) = (rows(1), rows(2));
    assert!(!a.is_empty());
    assert_eq!(a, b);
    // Three folds plus the pooled rows, per router.
    assert_eq!(
        query_db(
            &db,
            "SELECT COUNT(DISTINCT fold) FROM route_eval_results WHERE eval_id = 1 AND router = 'lr'"
        ),
        [3]
    );

    let bad = run(d, &["route", "eval", "--features", "query"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(text(&bad.stderr).contains("q+c"), "{}", text(&bad.stderr));

    let out_dir = d.join("report");
    let out = run(d, &["report", "--out", out_dir.to_str().unwrap()]);
    check_ok(&out);
    for f in [
        "report.html",
        "figures/fig7_cost_accuracy.svg",
        "figures/fig7_cost_accuracy.png",
        "figures/fig4_heatmap.png",
        "tables/table3.md",
        "tables/table2.csv",
    ] {
        assert!(out_dir.join(f).is_file(), "report lacks {f}");
    }
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("musique-dev") && html.contains("offline"));
    let t3 = std::fs::read_to_string(out_dir.join("tables/table3.md")).unwrap();
    assert!(t3.contains("oracle") && t3.contains("lr"), "{t3}");

    // The LLM router against the mock: one call per distinct question, answers cached (a
    // rerun calls nothing), its tokens charged to it, the key nowhere in the output.
    const KEY: &str = "sk-route-eval-secret-7731";
    let mock = llm::mock::MockServer::start(|r| {
        let q = r.last_content();
        let label = if q.contains(" and ") || q.contains("Who") {
            "reasoning"
        } else {
            "fact"
        };
        llm::mock::MockReply::with_usage(label, 40, 1)
    });
    let llm_eval = |d: &Path| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
        c.env_remove("RAGROUTER_DATA_DIR")
            .env_remove("OPENAI_BASE_URL")
            .env("OPENAI_API_KEY", KEY)
            .env("RAGROUTER_LOG", "info")
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "route",
                "eval",
                "--routers",
                "oracle,llm-router",
                "--folds",
                "3",
                "--llm-model",
                "mock-model",
                "--llm-base-url",
            ])
            .arg(mock.base_url())
            .arg("--cache-dir")
            .arg(shared_cache())
            .arg("--db")
            .arg(d.join("r.sqlite"));
        c.output().unwrap()
    };
    let out = llm_eval(d);
    check_ok(&out);
    let calls = mock.chat_requests();
    let questions = query_db(
        &db,
        "SELECT COUNT(DISTINCT q.text) FROM queries q WHERE q.corpus = 'musique-dev'
         AND q.query_id IN (SELECT query_id FROM results)",
    )[0] as usize;
    assert_eq!(
        calls,
        questions,
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let stdout = text(&out.stdout);
    let row = stdout
        .lines()
        .find(|l| l.starts_with("llm-router"))
        .expect("an llm-router row");
    // Pooled over folds, the router's tokens are its chosen paradigm's (offline: context
    // tokens) plus its own 40 + 1 per question, exactly as the script routed it.
    let eval_id = query_db(&db, "SELECT MAX(id) FROM route_evals")[0];
    let got = try_fetch::<f64>(
        &db,
        &format!(
            "SELECT SUM(n * mean_tokens) / SUM(n) FROM route_eval_results
             WHERE eval_id = {eval_id} AND router = 'llm-router' AND corpus = '*'"
        ),
    )
    .unwrap()[0];
    let want = try_fetch::<f64>(
        &db,
        "SELECT AVG(r.context_tokens) + 41.0 FROM results r JOIN queries q
           ON q.query_id = r.query_id AND q.corpus = 'musique-dev'
         WHERE r.paradigm = CASE WHEN instr(q.text, ' and ') > 0 OR instr(q.text, 'Who') > 0
                                 THEN 'graph' ELSE 'naive' END",
    )
    .unwrap()[0];
    assert!(
        (got - want).abs() < 1e-6,
        "llm-router tokens {got}, expected {want}: {row}"
    );
    let rerun = llm_eval(d);
    check_ok(&rerun);
    assert_eq!(
        mock.chat_requests(),
        calls,
        "a rerun is served from the cache"
    );
    for o in [&out, &rerun] {
        assert!(!text(&o.stdout).contains(KEY) && !text(&o.stderr).contains(KEY));
    }
    let stored: Vec<String> = query_strings(&db, "SELECT config_json FROM route_evals");
    assert!(stored.iter().all(|c| !c.contains(KEY)));
    assert!(stored.last().unwrap().contains("mock-model"));
    // The evaluation names the router's prompt as well as its model.
    let config: serde_json::Value = serde_json::from_str(stored.last().unwrap()).unwrap();
    assert_eq!(
        config["llm_router_prompt"], "route-fact-reasoning-v1",
        "{config}"
    );

    // A report draws the evaluations made on its own runs: after a fresh run and a Q-only
    // evaluation on it, the default report (the latest run) shows that one and none of the
    // q+c evaluations of run 1; `--runs 1` shows run 1's newest q+c and not the Q one.
    bench("llm-only,naive", &["--fresh"]);
    let q_eval = [
        "route",
        "eval",
        "--features",
        "q",
        "--routers",
        "random,oracle",
        "--folds",
        "3",
    ];
    check_ok(&run(d, &q_eval));
    let q_id = query_db(&db, "SELECT MAX(id) FROM route_evals")[0];
    let evals_in = |args: &[&str]| {
        let out_dir = d.join(format!("report-{}", args.join("-")));
        let mut a = vec!["report", "--out", out_dir.to_str().unwrap()];
        a.extend_from_slice(args);
        check_ok(&run(d, &a));
        let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
        html.match_indices("Router evaluation ")
            .map(|(i, _)| html[i..].split(')').next().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        evals_in(&[]),
        [format!("Router evaluation {q_id} (features q, kfold split")]
    );
    assert_eq!(
        evals_in(&["--runs", "1"]),
        [format!(
            "Router evaluation {} (features q+c, kfold split",
            q_id - 1
        )]
    );
}
