//! `ragrouter leaderboard` (H49): the board on the benched demo and on a generated import
//! slice carries `route eval`'s numbers for every router, `verify` passes on it and fails on one
//! changed number, a rebuild is identical but for the date and reuses every stored evaluation
//! (an added router alone is evaluated), failing external routers become failed cells while the
//! rest builds, a one-class matrix is skipped with why, and a foreign `--out` is exit 2.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// The demo benched offline into `dir/demo.sqlite`.
fn demo_db(dir: &Path) -> PathBuf {
    let db = dir.join("demo.sqlite");
    let mut bench = bin();
    bench
        .args(["bench", "demo", "--cache-dir"])
        .arg(shared_cache())
        .arg("--db")
        .arg(&db);
    check_ok(&bench.output().unwrap());
    db
}

/// A generated import of `n` questions over two corpora with two probe signals; with
/// `one_class` every question is answered by `naive` alone, so every label is the same.
fn import_db(dir: &Path, name: &str, n: usize, one_class: bool) -> PathBuf {
    let f = dir.join(format!("{name}.jsonl"));
    let mut text = String::new();
    for i in 0..n {
        let (naive, graph) = if one_class {
            (true, false)
        } else {
            (i % 3 != 0, i % 2 == 0)
        };
        let rec = serde_json::json!({
            "id": format!("q{i}"),
            "corpus": if i % 2 == 0 { "alpha" } else { "beta" },
            "question": format!("Question number {i} about item {}?", i * 7 % 11),
            "type": "factual",
            "outcomes": {
                "naive": {"correct": naive, "cost": 100 + i},
                "graph": {"correct": graph, "cost": 900 + i},
            },
            "signals": {"s0": ((i * 31) % 13) as f64 / 13.0, "s1": ((i * 17 + 5) % 13) as f64 / 13.0},
        });
        text.push_str(&rec.to_string());
        text.push('\n');
    }
    std::fs::write(&f, text).unwrap();
    let db = dir.join(format!("{name}.sqlite"));
    check_ok(&run(&["import", "outcomes", s(&f), "--db", s(&db)]));
    db
}

/// `leaderboard` on `dbs` into `out`, with the tests' vector cache and `extra` flags.
fn board(dbs: &[&Path], out: &Path, extra: &[&str]) -> Output {
    let mut c = bin();
    c.arg("leaderboard");
    for db in dbs {
        c.arg("--db").arg(db);
    }
    c.arg("--out")
        .arg(out)
        .arg("--cache-dir")
        .arg(shared_cache());
    c.args(extra).output().unwrap()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The ok cells of (matrix, view).
fn ok_cells<'a>(b: &'a Value, matrix: &str, view: &str) -> Vec<&'a Value> {
    b["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["matrix"] == matrix && c["view"] == view && c["status"] == "ok")
        .collect()
}

/// Every ok cell of (matrix, view) carries `route eval --json`'s numbers for its router's own
/// row (`param: null`): correct rate and cost (mean over folds, all corpora), Δ, CI and p.
fn same_as_route_eval(b: &Value, matrix: &str, view: &str, db: &Path) {
    let out = run_on(db, &["route", "eval", "--features", view, "--json"]);
    check_ok(&out);
    let e: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let cells = ok_cells(b, matrix, view);
    assert!(
        cells.len() >= 20,
        "{matrix} {view}: {} ok cells",
        cells.len()
    );
    for c in cells {
        let r = c["router"].as_str().unwrap();
        let m = &c["measures"];
        let row = e["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["router"] == r && x["param"].is_null() && x["corpus"] == "*")
            .unwrap_or_else(|| panic!("route eval has no row of {r}"));
        assert_eq!(m["correct_rate"], row["mean"]["correct_rate"], "{r} {view}");
        assert_eq!(m["mean_cost"], row["mean"]["mean_cost"], "{r} {view}");
        assert_eq!(m["n"], row["n"], "{r} {view}");
        match e["tests"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["router"] == r && t["param"].is_null())
        {
            Some(t) => {
                for (mine, theirs) in [
                    ("delta", "diff"),
                    ("ci_low", "ci_low"),
                    ("ci_high", "ci_high"),
                    ("p_mcnemar", "p_mcnemar"),
                ] {
                    assert_eq!(m[mine], t[theirs], "{r} {view} {mine}");
                }
            }
            None => assert_eq!(r, "best-single", "{r} has no test"),
        }
    }
}

#[test]
fn h49_board_numbers_are_route_evals_and_verify_catches_one_changed_number() {
    let dir = tempfile::tempdir().unwrap();
    let (demo, imp) = (
        demo_db(dir.path()),
        import_db(dir.path(), "slice", 40, false),
    );
    let out = dir.path().join("board");
    let o = board(&[&demo, &imp], &out, &[]);
    check_ok(&o);
    for f in [
        "index.html",
        "leaderboard.json",
        "leaderboard.csv",
        "provenance.json",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let b = read_json(&out.join("leaderboard.json"));
    let ids: Vec<&str> = b["matrices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["offline-demo", "slice"], "{ids:?}");
    same_as_route_eval(&b, "offline-demo", "q", &demo);
    same_as_route_eval(&b, "slice", "q+p", &imp);
    // Every built-in of `all` stands on the board, ranked or below.
    let names: Vec<&str> = b["routers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    for r in [
        "best-single",
        "oracle",
        "random",
        "oracle-per-corpus",
        "lr",
        "util-lr",
        "cost-aware",
    ] {
        assert!(names.contains(&r), "{r} not on the board: {names:?}");
    }
    let p = provenance_digests(&out);
    assert_eq!(p.len(), 2);
    let csv = std::fs::read_to_string(out.join("leaderboard.csv")).unwrap();
    assert_eq!(
        csv.lines().count(),
        b["cells"].as_array().unwrap().len() + 1
    );

    let verify = |args: &[&str]| {
        let mut c = bin();
        c.args(["leaderboard", "verify"]).arg(&out);
        for db in [&demo, &imp] {
            c.arg("--db").arg(db);
        }
        c.args(args).output().unwrap()
    };
    check_ok(&verify(&[]));
    // One number changed: verify names the router, the matrix and the field.
    let mut changed = b.clone();
    let i = changed["cells"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["router"] == "lr" && c["status"] == "ok")
        .unwrap();
    let cr = changed["cells"][i]["measures"]["correct_rate"]
        .as_f64()
        .unwrap();
    changed["cells"][i]["measures"]["correct_rate"] = serde_json::json!(cr + 0.01);
    std::fs::write(
        out.join("leaderboard.json"),
        serde_json::to_string_pretty(&changed).unwrap(),
    )
    .unwrap();
    let o = verify(&[]);
    check_fails(&o, 1, &["router lr", "correct_rate"]);
}

fn provenance_digests(out: &Path) -> Vec<String> {
    let p = read_json(&out.join("provenance.json"));
    p["matrices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["digest"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn h49_a_rebuild_is_identical_and_an_added_router_is_the_only_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let demo = demo_db(dir.path());
    let out = dir.path().join("board");
    check_ok(&board(&[&demo], &out, &[]));
    let first = read_json(&out.join("leaderboard.json"));
    let o = board(&[&demo], &out, &[]);
    check_ok(&o);
    let err = text(&o.stderr);
    assert!(
        err.contains("leaderboard: offline-demo q: 0 evaluation(s) to run"),
        "{err}"
    );
    let mut second = read_json(&out.join("leaderboard.json"));
    second["generated"] = first["generated"].clone();
    assert_eq!(first, second, "two builds differ beyond the date");

    // The added router speaks version 2: on the view with probe signals it is asked stage by
    // stage even though the cascades are not evaluated again.
    let o = board(
        &[&demo],
        &out,
        &[
            "--external",
            "mine=python3 examples/external_router.py --staged",
        ],
    );
    check_ok(&o);
    let err = text(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("leaderboard: offline-demo q:"))
        .unwrap();
    assert!(line.contains(": 1 evaluation(s) to run,"), "{err}");
    let third = read_json(&out.join("leaderboard.json"));
    let mine: Vec<&Value> = third["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["router"] == "mine")
        .collect();
    assert_eq!(mine.len(), 2, "{mine:?}");
    assert!(mine.iter().all(|c| c["status"] == "ok"), "{mine:?}");
    let staged = mine.iter().find(|c| c["view"] == "q+c+p").unwrap();
    let lines =
        std::fs::read_to_string(out.join(staged["measures"]["predictions"].as_str().unwrap()))
            .unwrap();
    // It never sees agreeing cheap answers offline, so it plays every stage.
    assert!(
        lines
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .all(|p| p["arms_played"].as_array().unwrap().len() > 2),
        "{lines}"
    );
    // The built-ins' numbers are the cached ones, unchanged by the new router.
    let lr = |b: &Value| {
        b["cells"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["router"] == "lr" && c["view"] == "q")
            .unwrap()["measures"]["correct_rate"]
            .clone()
    };
    assert_eq!(lr(&first), lr(&third));
    // --refresh evaluates that router again.
    let o = board(
        &[&demo],
        &out,
        &[
            "--external",
            "mine=python3 examples/external_router.py --staged",
            "--refresh",
            "lr",
        ],
    );
    check_ok(&o);
    assert!(
        text(&o.stderr).contains("offline-demo q: 1 evaluation(s) to run, 27 cached"),
        "{}",
        text(&o.stderr)
    );
}

/// A python router that fits fine and then does `predict` (a statement list).
fn python_router(dir: &Path, name: &str, predict: &str) -> PathBuf {
    let path = dir.join(name);
    let program = format!(
        "import json, sys, time\nk = 0\nfor line in sys.stdin:\n    msg = json.loads(line)\n    if msg['type'] == 'fit':\n        k = len(msg['schema']['classes'])\n        print(json.dumps({{'ok': True}}), flush=True)\n    else:\n        rows = msg['rows']\n        {predict}\n"
    );
    std::fs::write(&path, program).unwrap();
    path
}

#[test]
fn h49_failing_external_routers_are_failed_cells_while_the_board_builds() {
    let dir = tempfile::tempdir().unwrap();
    let imp = import_db(dir.path(), "slice", 30, false);
    let crash = python_router(
        dir.path(),
        "crash.py",
        "print('password=hunter2', file=sys.stderr, flush=True); sys.exit(3)",
    );
    let hang = python_router(dir.path(), "hang.py", "time.sleep(60)");
    let nan = python_router(
        dir.path(),
        "nan.py",
        "print(json.dumps({'scores': [[float('nan')] * k for _ in rows]}), flush=True)",
    );
    // One row of scores whatever the number of rows asked about.
    let shape = python_router(
        dir.path(),
        "shape.py",
        "print(json.dumps({'scores': [[0.0] * k]}), flush=True)",
    );
    let out = dir.path().join("board");
    let o = board(
        &[&imp],
        &out,
        &[
            "--routers",
            "lr",
            "--external",
            &format!("shape=python3 {}", s(&shape)),
            "--external-timeout",
            "2",
            "--external",
            &format!("crash=python3 {}", s(&crash)),
            "--external",
            &format!("hang=python3 {}", s(&hang)),
            "--external",
            &format!("nan=python3 {}", s(&nan)),
        ],
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        !err.contains("hunter2") && !text(&o.stdout).contains("hunter2"),
        "{err}"
    );
    let b = read_json(&out.join("leaderboard.json"));
    for r in ["crash", "hang", "nan", "shape"] {
        let cells: Vec<&Value> = b["cells"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["router"] == r)
            .collect();
        assert!(!cells.is_empty(), "{r}");
        for c in cells {
            assert_eq!(c["status"], "failed", "{c}");
            let why = c["reason"].as_str().unwrap();
            assert!(!why.is_empty() && !why.contains("hunter2"), "{why}");
        }
    }
    assert!(!ok_cells(&b, "slice", "q").is_empty());
    assert!(ok_cells(&b, "slice", "q")
        .iter()
        .any(|c| c["router"] == "lr"));
}

#[test]
fn h49_a_one_class_matrix_is_skipped_and_a_foreign_out_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let imp = import_db(dir.path(), "same", 30, true);
    let out = dir.path().join("board");
    let o = board(&[&imp], &out, &["--routers", "lr"]);
    check_ok(&o);
    let b = read_json(&out.join("leaderboard.json"));
    let why = b["matrices"][0]["skipped"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", b["matrices"]));
    assert!(!why.is_empty());
    assert!(b["cells"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["status"] == "skipped"));

    let foreign = dir.path().join("mine");
    std::fs::create_dir_all(&foreign).unwrap();
    std::fs::write(foreign.join("notes.txt"), "mine").unwrap();
    let o = board(&[&imp], &foreign, &["--routers", "lr"]);
    check_fails(&o, 2, &["notes.txt"]);
    assert_eq!(
        std::fs::read_to_string(foreign.join("notes.txt")).unwrap(),
        "mine"
    );
    assert_eq!(std::fs::read_dir(&foreign).unwrap().count(), 1);
    let o = board(
        &[&imp],
        &dir.path().join("b2"),
        &["--routers", "no-such-router"],
    );
    check_fails(&o, 2, &["no-such-router"]);
}
