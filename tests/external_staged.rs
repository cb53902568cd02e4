//! Protocol version 2 end to end: a program that answers `fit` as version 2 is asked stage by
//! stage, may deliver any arm it played, pays each arm once, and fails with the question and
//! the arm named when it delivers one it did not play or continues past the last stage.

mod common;

use common::*;

use std::path::Path;

/// 60 questions with three arms (costs 0, 1 and 3 steps) and the cheap pair's agreement signal.
fn outcomes() -> String {
    (0..60)
        .map(|i| {
            format!(
                r#"{{"id":"q{i}","corpus":"c1","question":"Question number {i}?","outcomes":{{"llm-only":{{"correct":{},"cost":0}},"naive":{{"correct":{},"cost":1}},"iterative":{{"correct":{},"cost":3}}}},"signals":{{"agree.em":{{"value":{},"paradigms":["llm-only","naive"]}}}}}}"#,
                i % 3 == 0,
                i % 2 == 0,
                i % 5 != 0,
                u8::from(i % 4 == 0)
            ) + "\n"
        })
        .collect()
}

/// A staged program whose decision for every question at stage `s` is `rule[s]`.
fn program(dir: &Path, name: &str, rules: &[&str]) -> String {
    let path = dir.join(format!("{name}.py"));
    let rules: Vec<String> = rules.iter().map(|r| format!("{r:?}")).collect();
    std::fs::write(
        &path,
        format!(
            r#"import json, sys
RULES = [{}]
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "fit":
        print(json.dumps({{"ok": True, "version": 2}}), flush=True)
    else:
        rule = RULES[msg["stage"]]
        d = "continue" if rule == "continue" else {{"stop": rule}}
        print(json.dumps({{"decisions": [d for _ in msg["rows"]]}}), flush=True)
"#,
            rules.join(", ")
        ),
    )
    .unwrap();
    format!("{name}=python3 {}", path.display())
}

fn eval(db: &Path, external: &[String]) -> std::process::Output {
    let mut args: Vec<&str> = vec!["route", "eval", "--features", "p", "--folds", "2"];
    args.extend(["--routers", "best-single"]);
    for e in external {
        args.extend(["--external", e.as_str()]);
    }
    run_on(db, &args)
}

/// (pooled correct rate, mean cost) of `router`'s row in the paired table.
fn row(table: &str, router: &str) -> (f64, f64) {
    let line = table
        .lines()
        .skip_while(|l| !l.starts_with("paired against"))
        .find(|l| l.split_whitespace().next() == Some(router))
        .unwrap_or_else(|| panic!("no paired row {router} in\n{table}"));
    let f: Vec<&str> = line.split_whitespace().collect();
    (f[1].parse().unwrap(), f[f.len() - 1].parse().unwrap())
}

#[test]
fn staged_programs_deliver_any_arm_played_and_pay_each_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let file = dir.path().join("o.jsonl");
    std::fs::write(&file, outcomes()).unwrap();
    let import = [
        "import",
        "outcomes",
        file.to_str().unwrap(),
        "--cost-unit",
        "steps",
    ];
    check_ok(&run_on(&db, &import));
    let d = dir.path();
    let out = eval(
        &db,
        &[
            program(d, "cheap", &["naive", "naive"]),
            program(d, "back", &["continue", "llm-only"]),
        ],
    );
    check_ok(&out);
    let table = text(&out.stdout);
    // Stage 1 runs LLM-only and NaiveRAG together: both are paid (0 + 1), NaiveRAG delivered.
    let rate = |keep: fn(usize) -> bool| 100.0 * (0..60).filter(|&i| keep(i)).count() as f64 / 60.0;
    assert_eq!(
        row(&table, "cheap"),
        ((rate(|i| i % 2 == 0) * 100.0).round() / 100.0, 1.0)
    );
    // Escalating to multi-step and delivering LLM-only's answer: all three arms paid once.
    assert_eq!(
        row(&table, "back"),
        ((rate(|i| i % 3 == 0) * 100.0).round() / 100.0, 4.0)
    );
}

#[test]
fn an_arm_not_played_or_a_continue_at_the_end_fails_the_router_alone() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let file = dir.path().join("o.jsonl");
    std::fs::write(&file, outcomes()).unwrap();
    check_ok(&run_on(
        &db,
        &["import", "outcomes", file.to_str().unwrap()],
    ));
    let d = dir.path();
    let out = eval(
        &db,
        &[
            program(d, "early", &["iterative", "iterative"]),
            program(d, "endless", &["continue", "continue"]),
            "plain=python3 examples/external_router.py".to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("delivers \"iterative\", an arm it did not play (played: llm-only, naive)"),
        "{err}"
    );
    assert!(err.contains("\"continue\" at the last stage"), "{err}");
    // A version-1 program beside them is evaluated as before.
    let table = text(&out.stdout);
    row(&table, "plain");
}
