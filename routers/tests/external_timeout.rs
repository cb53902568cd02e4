//! An external router that never reads its input: the fit request (larger than a pipe's
//! buffer) must not block the harness past the timeout, and the program (and what it started)
//! must not outlive it.

use std::time::Duration;

use routers::external::ExternalSpec;
use routers::synthetic::widen_embedding;
use routers::{synthetic_set_with, RouterContext};

/// Processes whose command line is exactly `argv` (Linux /proc).
fn running(argv: &[&str]) -> Vec<u32> {
    let want = argv.join("\0") + "\0";
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| {
                let e = e.ok()?;
                let pid: u32 = e.file_name().to_str()?.parse().ok()?;
                let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
                // A zombie has an empty command line: it is gone.
                (cmd == want.as_bytes()).then_some(pid)
            })
            .collect()
        })
        .unwrap_or_default()
}

/// Fits a router running `argv` (which never reads) and returns the error.
fn check(argv: &[&str]) -> String {
    // 2,000 rows of 384-dim embeddings: megabytes of JSON, far more than a 64 KiB pipe holds.
    let set = widen_embedding(&synthetic_set_with(2000, 2, 5), 384, 5);
    assert!(serde_json::to_string(&set.rows).unwrap().len() > 1 << 20);
    let spec = ExternalSpec {
        name: "deaf".into(),
        argv: argv.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_millis(500),
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ctx = RouterContext::new(0);
        let mut r = (spec.candidate().make)(&ctx, None).unwrap();
        let _ = tx.send(r.fit(&set).map_err(|e| e.to_string()));
    });
    // Before the writer thread, fit blocked in write() forever; a minute is only a guard so a
    // regression fails instead of hanging the suite.
    let outcome = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("fit did not return: blocked writing to a program that never reads");
    let err = outcome.unwrap_err();
    assert!(err.contains("deaf") && err.contains("timeout"), "{err}");
    err
}

#[test]
fn a_program_that_never_reads_times_out_and_is_killed() {
    // An unusual duration so no other process matches.
    let argv = ["sleep", "987.654"];
    check(&argv);
    assert!(
        running(&argv).is_empty(),
        "the external program outlived its timeout"
    );
}

#[test]
fn what_the_program_started_is_killed_with_it() {
    // The shell waits on a child of its own: killing the shell alone would orphan the sleep.
    check(&["sh", "-c", "sleep 876.543 & wait"]);
    // The kill is sent before fit returns; the orphan would be running still.
    assert!(
        running(&["sleep", "876.543"]).is_empty(),
        "the program's child outlived it"
    );
}

/// Evaluates a router running `sh -c script` (the script gets a counter file as `$0`) on five
/// folds; returns how often the program was started and the evaluation's failure message.
fn starts_over_five_folds(script: &str, timeout: Duration) -> (usize, String) {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("starts");
    let spec = ExternalSpec {
        name: "broken".into(),
        argv: vec![
            "sh".into(),
            "-c".into(),
            script.into(),
            counter.display().to_string(),
        ],
        timeout,
    };
    let set = synthetic_set_with(200, 2, 3);
    let labels: Vec<usize> = set.rows.iter().map(|r| r.label).collect();
    let folds = routers::eval::stratified_kfold(&labels, 5, 1).unwrap();
    let ctx = RouterContext::new(0);
    let ev = routers::eval::evaluate(&set, &[spec.candidate()], &folds, &ctx).unwrap();
    let starts = std::fs::read_to_string(&counter)
        .unwrap_or_default()
        .lines()
        .count();
    assert_eq!(ev.failed.len(), 1, "{:?}", ev.failed);
    assert!(ev.rows.is_empty(), "a failed router leaves no rows");
    (starts, ev.failed[0].1.clone())
}

#[test]
fn a_failed_program_is_started_once_per_evaluation_not_once_per_fold() {
    // Exits at once with status 1.
    let (starts, err) = starts_over_five_folds("echo x >> \"$0\"; exit 1", Duration::from_secs(30));
    assert_eq!(starts, 1, "{err}");
    assert!(err.contains("broken") && err.contains("exit"), "{err}");
    // Never answers: one timeout, not five.
    let (starts, err) = starts_over_five_folds(
        "echo x >> \"$0\"; exec sleep 765.432",
        Duration::from_millis(300),
    );
    assert_eq!(starts, 1, "{err}");
    assert!(err.contains("timeout"), "{err}");
    assert!(running(&["sleep", "765.432"]).is_empty());
}
