//! Hostile input to `route eval`, external routers and `report` (second hostile test, H1, H12,
//! H13, H15, H19, H22, H25 and the notes on inherited keys and leakage): each refusal exits 2
//! naming the flag, limit or key; nothing outside what a command created is removed; secrets
//! an external router prints are masked and kept off stdout.

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::Output;

/// A generic outcomes file of `n` questions over two corpora, each with `signals` probe
/// signals (`s0`, `s1`, ...); `seed` varies the outcomes.
fn outcomes_with_signals(path: &Path, n: usize, signals: usize, seed: usize) {
    let mut text = String::new();
    for i in 0..n {
        let corpus = if i.is_multiple_of(2) { "alpha" } else { "beta" };
        let naive = !(i + seed).is_multiple_of(3);
        let graph = (i + seed).is_multiple_of(2);
        let sig: serde_json::Map<String, serde_json::Value> = (0..signals)
            .map(|j| {
                (
                    format!("s{j}"),
                    serde_json::json!(((i * 31 + j * 7) % 13) as f64 / 13.0),
                )
            })
            .collect();
        let mut rec = serde_json::json!({
            "id": format!("q{i}"),
            "corpus": corpus,
            "question": format!("Question number {i} about item {}?", i * 7 % 11),
            "type": "factual",
            "outcomes": {
                "naive": {"correct": naive, "cost": 100 + i},
                "graph": {"correct": graph, "cost": 900 + i},
            },
        });
        if signals > 0 {
            rec["signals"] = serde_json::Value::Object(sig);
        }
        text.push_str(&rec.to_string());
        text.push('\n');
    }
    std::fs::write(path, text).unwrap();
}

/// A store with one import of `n` questions (no signals) in `dir`.
fn imported_db(dir: &Path, n: usize) -> PathBuf {
    let db = dir.join("r.sqlite");
    let f = dir.join("o.jsonl");
    outcomes_with_signals(&f, n, 0, 0);
    check_ok(&run(&["import", "outcomes", s(&f), "--db", s(&db)]));
    db
}

/// `route eval` on `db` with `args` (the tests' vector cache, q features, 2 folds).
fn route_eval(db: &Path, args: &[&str]) -> Output {
    let mut all = vec!["route", "eval", "--features", "q", "--folds", "2"];
    all.extend(args);
    run_on(db, &all)
}

/// A python program in `dir` that speaks the router protocol: `fit` says ok, `predict` replies
/// with `predict_reply` (a Python expression over `k` classes and `rows`); `prelude` runs first.
fn python_router(dir: &Path, name: &str, prelude: &str, predict_reply: &str) -> PathBuf {
    let path = dir.join(name);
    let program = format!(
        "import json, os, sys\n{prelude}\nk = 0\nfor line in sys.stdin:\n    msg = json.loads(line)\n    if msg['type'] == 'fit':\n        k = len(msg['schema']['classes'])\n        print(json.dumps({{'ok': True}}), flush=True)\n    else:\n        rows = msg['rows']\n        print({predict_reply}, flush=True)\n"
    );
    std::fs::write(&path, program).unwrap();
    path
}

#[test]
fn h1_report_never_removes_folders_it_did_not_create() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path(), 20);
    let out = dir.path().join("rep");
    check_ok(&run(&["report", "--db", s(&db), "--out", s(&out)]));
    // The staging and old folders' names were `.rep.staging-PID` and `.rep.old-PID`: the user's
    // folders with the names of the next process ids must survive the next report.
    let probe = std::process::Command::new("true").spawn().unwrap();
    let pid = probe.id();
    let mut probe = probe;
    probe.wait().unwrap();
    let mut decoys = Vec::new();
    for next in pid + 1..pid + 1500 {
        for kind in ["staging", "old"] {
            let d = dir.path().join(format!(".rep.{kind}-{next}"));
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("notes.txt"), "mine").unwrap();
            decoys.push(d);
        }
    }
    check_ok(&run(&["report", "--db", s(&db), "--out", s(&out)]));
    let gone: Vec<&PathBuf> = decoys
        .iter()
        .filter(|d| !d.join("notes.txt").exists())
        .collect();
    assert!(
        gone.is_empty(),
        "report removed the user's folders {gone:?}"
    );
    assert!(out.join("report.html").exists());
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".rep.") && !decoys.iter().any(|d| d.ends_with(n)))
        .collect();
    assert!(left.is_empty(), "staging left behind: {left:?}");
}

#[test]
fn h12_external_timeout_huge_is_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("none.sqlite");
    for t in ["1e300", "86401", "inf", "0"] {
        let out = run(&["route", "eval", "--external-timeout", t, "--db", s(&db)]);
        check_fails(&out, 2, &["--external-timeout", "86400"]);
    }
}

#[test]
fn h13_more_signals_than_the_limit_is_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (db, f) = (dir.path().join("r.sqlite"), dir.path().join("o.jsonl"));
    outcomes_with_signals(&f, 12, 1001, 0);
    check_ok(&run(&["import", "outcomes", s(&f), "--db", s(&db)]));
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
            "best-fixed",
        ],
    );
    check_fails(&out, 2, &["1001 signals", "at most 1000"]);
    // Without the signals among the features the limit does not apply.
    check_ok(&route_eval(&db, &["--routers", "best-fixed"]));
}

#[test]
fn h13_route_eval_prints_a_progress_line_per_router_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path(), 20);
    let out = route_eval(&db, &["--routers", "best-fixed,lr,knn"]);
    check_ok(&out);
    let err = text(&out.stderr);
    for r in ["best-fixed", "lr", "knn", "best-single"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with("route eval: ") && l.contains(&format!(" {r} "))),
            "no progress line for {r}:\n{err}"
        );
    }
    assert!(
        !text(&out.stdout).contains("route eval: "),
        "progress on stdout"
    );
}

#[test]
fn h15_external_reply_with_a_duplicate_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path(), 20);
    let reply = "'{\"scores\": %s, \"scores\": %s}' % (json.dumps([[0.0] * k for _ in rows]), json.dumps([[1.0] * k for _ in rows]))";
    let py = python_router(dir.path(), "dup.py", "", reply);
    let out = route_eval(
        &db,
        &[
            "--routers",
            "best-fixed",
            "--external",
            &format!("dup=python3 {}", s(&py)),
        ],
    );
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{all}");
    assert!(
        all.contains("failed dup") && all.contains("duplicate key \"scores\""),
        "{all}"
    );
}

#[test]
fn h19_report_out_root_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path(), 10);
    let out = run(&["report", "--db", s(&db), "--out", "/"]);
    check_fails(
        &out,
        2,
        &["report --out /", "which no earlier report wrote"],
    );
    // A folder whose first level holds a foreign file is refused at that file, whatever the
    // folders beside it hold.
    let mine = dir.path().join("mine");
    std::fs::create_dir_all(mine.join("deep/deeper")).unwrap();
    std::fs::write(mine.join("deep/deeper/a.txt"), "a").unwrap();
    std::fs::write(mine.join("top.txt"), "t").unwrap();
    let out = run(&["report", "--db", s(&db), "--out", s(&mine)]);
    check_fails(&out, 2, &["top.txt"]);
}

#[test]
fn h22_external_router_stderr_is_redacted_and_kept_off_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path(), 20);
    let py = python_router(
        dir.path(),
        "leaky.py",
        "print('connecting with password=hunter2 to postgres://u:pw1234@h/db', file=sys.stderr, flush=True)\nsys.exit(3)",
        "''",
    );
    let out = route_eval(
        &db,
        &[
            "--routers",
            "best-fixed",
            "--external",
            &format!("leaky=python3 {}", s(&py)),
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(stderr.contains("failed leaky"), "{stderr}");
    assert!(stderr.contains("password=***"), "{stderr}");
    for secret in ["hunter2", "pw1234"] {
        assert!(!stdout.contains(secret), "stdout shows {secret}: {stdout}");
        assert!(!stderr.contains(secret), "stderr shows {secret}: {stderr}");
    }
    assert!(!stdout.contains("failed leaky"), "{stdout}");
}

#[test]
fn h25_mixed_modes_refusal_is_worded_by_whether_runs_were_given() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path(), 20);
    check_ok(
        &bin()
            .args([
                "bench",
                "demo",
                "--paradigms",
                "naive,llm-only",
                "--limit",
                "4",
            ])
            .arg("--cache-dir")
            .arg(shared_cache())
            .args(["--db", s(&db)])
            .output()
            .unwrap(),
    );
    let ids = query_db(&db, "SELECT id FROM runs ORDER BY id");
    // Two imported runs (alpha, beta), then the benched demo run.
    assert_eq!(ids.len(), 3, "{ids:?}");
    let runs = format!("{},{}", ids[0], ids[2]);
    let given = route_eval(&db, &["--routers", "best-fixed", "--runs", &runs]);
    check_fails(&given, 2, &["mix modes"]);
    let err = text(&given.stderr);
    assert!(!err.contains("choose runs with --runs"), "{err}");
    assert!(err.contains("--runs"), "{err}");
    let latest = route_eval(&db, &["--routers", "best-fixed"]);
    check_fails(&latest, 2, &["mix modes", "choose runs with --runs"]);
    // `report` words its refusal the same way.
    let out = dir.path().join("rep");
    let given = run(&["report", "--db", s(&db), "--runs", &runs, "--out", s(&out)]);
    check_fails(&given, 2, &["mix modes", "--runs"]);
    let err = text(&given.stderr);
    assert!(!err.contains("or runs with --runs"), "{err}");
}

#[test]
fn note_external_routers_do_not_inherit_api_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = imported_db(dir.path(), 20);
    let seen = dir.path().join("env.json");
    let py = python_router(
        dir.path(),
        "env.py",
        &format!(
            "open({:?}, 'w').write(json.dumps(dict(os.environ)))",
            s(&seen)
        ),
        "json.dumps({'scores': [[1.0] * k for _ in rows]})",
    );
    let out = bin()
        .args(["route", "eval", "--features", "q", "--folds", "2"])
        .args(["--routers", "best-fixed", "--external"])
        .arg(format!("env=python3 {}", s(&py)))
        .arg("--cache-dir")
        .arg(shared_cache())
        .args(["--db", s(&db)])
        .env("OPENAI_API_KEY", "canary-openai-7731")
        .env("MY_SERVICE_API_KEY", "canary-service-7731")
        .env("PGPASSWORD", "canary-pg-7731")
        .env("RAGROUTER_HARMLESS_CANARY", "kept")
        .output()
        .unwrap();
    check_ok(&out);
    let env: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(env["RAGROUTER_HARMLESS_CANARY"], "kept", "{env}");
    let text = env.to_string();
    assert!(!text.contains("canary-"), "the router saw a key: {text}");
}

#[test]
fn note_given_split_on_its_own_test_rows_and_pooled_duplicates_warn() {
    let dir = tempfile::tempdir().unwrap();
    let (db, f) = (dir.path().join("r.sqlite"), dir.path().join("o.jsonl"));
    outcomes_with_signals(&f, 20, 0, 0);
    for split in ["train", "test"] {
        check_ok(&run(&[
            "import",
            "outcomes",
            s(&f),
            "--split",
            split,
            "--db",
            s(&db),
        ]));
    }
    let out = route_eval(&db, &["--routers", "best-fixed", "--split", "given"]);
    check_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: ") && err.contains("20 of the 20 test questions"),
        "{err}"
    );

    // The same questions imported from two sources under other corpus names, then pooled.
    let db2 = dir.path().join("pooled.sqlite");
    check_ok(&run(&[
        "import",
        "outcomes",
        s(&f),
        "--source",
        "first",
        "--db",
        s(&db2),
    ]));
    let renamed = dir.path().join("renamed.jsonl");
    let again = std::fs::read_to_string(&f).unwrap();
    std::fs::write(
        &renamed,
        again.replace("alpha", "gamma").replace("beta", "delta"),
    )
    .unwrap();
    check_ok(&run(&[
        "import",
        "outcomes",
        s(&renamed),
        "--source",
        "second",
        "--db",
        s(&db2),
    ]));
    let out = route_eval(&db2, &["--routers", "best-fixed", "--pool-sources"]);
    check_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: ") && err.contains("20 questions"),
        "{err}"
    );
    // One source alone: no warning.
    let out = route_eval(&db, &["--routers", "best-fixed"]);
    check_ok(&out);
    assert!(
        !text(&out.stderr).contains("warning: "),
        "{}",
        text(&out.stderr)
    );
}
