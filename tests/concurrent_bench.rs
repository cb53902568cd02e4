//! Scaling out on SQLite. Several `bench` processes started at once on one new file: all
//! finish, one run, every (question, paradigm) tuple exactly once, equal to a single process's.
//! Shards (`--shard I/N`, each into its own file) merged by `ragrouter merge` equal an unsharded
//! run; inputs of different runs are refused and nothing is written.

mod common;

use common::*;

use std::path::Path;
use std::process::{Command, Stdio};

fn bench(db: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", "demo", "--db"])
        .arg(db)
        .arg("--cache-dir")
        .arg(shared_cache());
    c
}

/// Every stored tuple as one line (ids, answer, label, context), in key order.
fn tuples(db: &Path) -> Vec<String> {
    query_strings(
        db,
        "SELECT query_id || '|' || paradigm || '|' || answer || '|' || coalesce(judge_label, '-')
                || '|' || context_json
         FROM results ORDER BY query_id, paradigm",
    )
}

#[test]
fn three_processes_on_one_new_file_store_every_tuple_once() {
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join("alone.sqlite");
    check_ok(&bench(&alone).output().unwrap());

    let shared = dir.path().join("shared.sqlite");
    let children: Vec<_> = (0..3)
        .map(|_| {
            bench(&shared)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        check_ok(&c.wait_with_output().unwrap());
    }
    assert_eq!(query_db(&shared, "SELECT count(*) FROM runs")[0], 1);
    let n = query_db(&shared, "SELECT count(*) FROM results")[0];
    assert_eq!(
        n,
        query_db(
            &shared,
            "SELECT count(*) FROM (SELECT DISTINCT query_id, paradigm FROM results)"
        )[0]
    );
    assert_eq!(n, 20 * 7, "20 questions x 7 paradigms");
    assert_eq!(tuples(&shared), tuples(&alone));
}

#[test]
fn two_shards_merged_equal_an_unsharded_run() {
    let dir = tempfile::tempdir().unwrap();
    let p = |name: &str| dir.path().join(name);
    check_ok(&bench(&p("whole.sqlite")).output().unwrap());
    for (shard, file) in [("1/2", "a.sqlite"), ("2/2", "b.sqlite")] {
        let out = bench(&p(file)).args(["--shard", shard]).output().unwrap();
        check_ok(&out);
        assert!(text(&out.stderr).contains(&format!("shard {shard}: 10 questions")));
    }
    let merge = |out: &str, inputs: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ragrouter"))
            .arg("merge")
            .arg(p(out))
            .args(inputs.iter().map(|i| p(i)))
            .output()
            .unwrap()
    };
    let out = merge("merged.sqlite", &["a.sqlite", "b.sqlite"]);
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("140 tuples from 2 inputs"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(tuples(&p("merged.sqlite")), tuples(&p("whole.sqlite")));
    let key = "SELECT run_key || '/' || (finished_at IS NOT NULL) FROM runs";
    assert_eq!(
        query_strings(&p("merged.sqlite"), key),
        query_strings(&p("whole.sqlite"), key)
    );
    for table in ["corpora", "queries", "corpus_metrics"] {
        let n = format!("SELECT count(*) FROM {table}");
        assert_eq!(
            query_db(&p("merged.sqlite"), &n),
            query_db(&p("whole.sqlite"), &n),
            "{table}"
        );
    }

    // Another run (another seed, so another run key): refused, exit 2, no output file.
    check_ok(
        &bench(&p("c.sqlite"))
            .args(["--shard", "2/2", "--seed", "7"])
            .output()
            .unwrap(),
    );
    let out = merge("bad.sqlite", &["a.sqlite", "c.sqlite"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("hold different runs"),
        "{}",
        text(&out.stderr)
    );
    assert!(!p("bad.sqlite").exists());
    // A shard that does not exist is bad input.
    let out = bench(&p("d.sqlite"))
        .args(["--shard", "3/2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("expected I/N"),
        "{}",
        text(&out.stderr)
    );
    // An existing output is refused too.
    let out = merge("merged.sqlite", &["a.sqlite", "b.sqlite"]);
    assert_eq!(out.status.code(), Some(2));
}
