//! Hostile test of 2026-12-07, `bench` part: `--retrieval-only` with an LLM (H3), credentials in
//! the LLM base URL (H4), a corrupted vector cache (H6), a run that fails midway (H11), empty
//! environment values (H23) and odd `--probes` lists (H24).

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use llm::mock::{MockReply, MockServer};

const CANARY: &str = "sk-CANARYQ1";

/// A mock that answers every chat request with a short text.
fn answering_mock() -> MockServer {
    MockServer::start(|_| MockReply::text("mock answer"))
}

/// `bench demo` on `db` with the tests' shared vector cache and `extra` arguments.
fn bench_on(db: &Path, extra: &[&str]) -> Command {
    let mut c = bin();
    c.args(["bench", "demo"])
        .args(extra)
        .arg("--db")
        .arg(db)
        .arg("--cache-dir")
        .arg(shared_cache());
    c
}

/// Neither stream of `out` holds `needle`.
fn nowhere_in(out: &Output, needle: &str) {
    let (o, e) = (text(&out.stdout), text(&out.stderr));
    assert!(!o.contains(needle), "{needle} in stdout:\n{o}");
    assert!(!e.contains(needle), "{needle} in stderr:\n{e}");
}

/// No panic message and no backtrace reached the user.
fn no_panic(out: &Output) {
    let err = text(&out.stderr);
    assert!(
        !err.contains("panicked"),
        "a panic reached the user:\n{err}"
    );
    assert!(!err.contains("stack backtrace"), "a backtrace:\n{err}");
}

#[test]
fn h3_retrieval_only_with_an_llm_is_exit_2_before_any_work() {
    let mock = answering_mock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let base = mock.base_url();
    // The model by flag, and by the configuration file.
    let config = dir.path().join("llm.toml");
    std::fs::write(
        &config,
        format!("[llm.answer]\nmodel = \"m\"\nbase_url = \"{base}\"\n"),
    )
    .unwrap();
    let by_flag = ["--llm-model", "m", "--llm-base-url", base.as_str()];
    let by_file = ["--config", config.to_str().unwrap()];
    for llm in [&by_flag[..], &by_file[..]] {
        let out = bench_on(&db, &["--retrieval-only", "--paradigms", "naive"])
            .args(llm)
            .env("OPENAI_API_KEY", CANARY)
            .output()
            .unwrap();
        check_fails(&out, 2, &["--retrieval-only", "offline"]);
        no_panic(&out);
        nowhere_in(&out, CANARY);
    }
    assert_eq!(mock.chat_requests(), 0, "an answer call was sent");
    assert!(!db.exists(), "the results store was created");
}

#[test]
fn h3_retrieval_only_offline_neither_creates_nor_writes_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sub").join("r.sqlite");
    let args = [
        "--retrieval-only",
        "--paradigms",
        "naive,graph,iterative",
        "--limit",
        "3",
    ];
    let out = bench_on(&db, &args).output().unwrap();
    check_ok(&out);
    assert!(
        text(&out.stderr).contains("retrieval only: 9 tuples"),
        "{}",
        text(&out.stderr)
    );
    assert!(!db.exists(), "--retrieval-only created the results store");
    assert!(
        !db.parent().unwrap().exists(),
        "--retrieval-only created the store's folder"
    );
    // An existing store is read (cached extractions) but not written.
    check_ok(
        &bench_on(&db, &["--paradigms", "naive", "--limit", "1"])
            .output()
            .unwrap(),
    );
    let before: Vec<(PathBuf, Vec<u8>)> = ["", "-wal", "-shm"]
        .iter()
        .map(|s| PathBuf::from(format!("{}{s}", db.display())))
        .filter(|p| p.exists())
        .map(|p| (p.clone(), std::fs::read(&p).unwrap()))
        .collect();
    check_ok(&bench_on(&db, &args).output().unwrap());
    for (p, bytes) in before {
        assert!(
            std::fs::read(&p).unwrap() == bytes,
            "--retrieval-only wrote into {}",
            p.display()
        );
    }
}

#[test]
fn h4_a_credential_in_the_base_url_is_exit_2_and_masked() {
    let mock = answering_mock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let base = mock.base_url();
    let host = base.trim_start_matches("http://");
    let urls = [
        format!("{base}?api_key={CANARY}"),
        format!("{base}?key={CANARY}"),
        format!("{base}?foo=1&access_token={CANARY}"),
        format!("{base}?sig={CANARY}&x=1"),
        format!("{base}?X-Auth-Header={CANARY}"),
        format!("{base}?Client_Secret={CANARY}"),
        format!("{base}?api%5Fkey={CANARY}"),
        format!("http://user:{CANARY}@{host}"),
    ];
    for url in &urls {
        let out = bench_on(&db, &["--paradigms", "naive", "--limit", "1"])
            .args(["--llm-model", "m", "--llm-base-url", url])
            .output()
            .unwrap();
        check_fails(&out, 2, &["credential"]);
        no_panic(&out);
        nowhere_in(&out, CANARY);
        // The same through the configuration file, and for `check-llm` and `generate`.
        let config = dir.path().join("c.toml");
        std::fs::write(
            &config,
            format!("[llm.answer]\nmodel = \"m\"\nbase_url = \"{url}\"\n"),
        )
        .unwrap();
        let out = bench_on(
            &db,
            &["--paradigms", "naive", "--config", config.to_str().unwrap()],
        )
        .output()
        .unwrap();
        check_fails(&out, 2, &["credential"]);
        nowhere_in(&out, CANARY);
        let out = run(&["check-llm", "--llm-model", "m", "--llm-base-url", url]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        nowhere_in(&out, CANARY);
    }
    assert_eq!(mock.chat_requests(), 0, "a request was sent");
    assert!(!db.exists(), "the results store was created");
}

#[test]
fn h4_redact_masks_every_credential_query_parameter() {
    for (raw, shown) in [
        (
            "mode: llm:m@http://h:1/v1?api_key=sk-CANARYQ1",
            "mode: llm:m@http://h:1/v1?api_key=***",
        ),
        (
            "see http://h/v1?key=sk-CANARYQ1&model=x done",
            "see http://h/v1?key=***&model=x done",
        ),
        (
            "\"base_url\":\"https://h/v1?Access_Token=sk-CANARYQ1\"",
            "\"base_url\":\"https://h/v1?Access_Token=***\"",
        ),
        (
            "http://h/v1?a=1&sig=sk-CANARYQ1#f",
            "http://h/v1?a=1&sig=***#f",
        ),
        (
            "http://h/v1?x-authorization=sk-CANARYQ1",
            "http://h/v1?x-authorization=***",
        ),
        (
            "http://h/v1?clientSecret=sk-CANARYQ1",
            "http://h/v1?clientSecret=***",
        ),
        (
            "http://h/v1?api%5Fkey=sk-CANARYQ1",
            "http://h/v1?api%5Fkey=***",
        ),
        // Parameters that name no credential are kept.
        ("http://h/v1?model=m&top=3", "http://h/v1?model=m&top=3"),
    ] {
        assert_eq!(store::redact(raw), shown, "{raw}");
        assert!(!store::redact(raw).contains("CANARY"), "{raw}");
    }
}

/// Every file under `dir` (recursively).
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn h4_a_credential_stored_by_an_older_build_is_masked_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    check_ok(
        &bench_on(&db, &["--paradigms", "naive", "--limit", "2"])
            .output()
            .unwrap(),
    );
    // As a build that took `?api_key=` in a base URL left the store.
    let label = format!("llm:m@http://h:1/v1?api_key={CANARY}");
    exec_db(
        &db,
        &format!(
            "UPDATE runs SET mode = '{label}'; UPDATE results SET mode = '{label}'; \
             UPDATE results SET error = 'LLM call failed: m@http://h:1/v1?api_key={CANARY} \
             after 1 attempt', judge_label = NULL WHERE rowid = 1;"
        ),
    );
    let out_dir = dir.path().join("report");
    let out = bin()
        .args(["report", "--out"])
        .arg(&out_dir)
        .arg("--db")
        .arg(&db)
        .output()
        .unwrap();
    check_ok(&out);
    nowhere_in(&out, CANARY);
    let files = files_under(&out_dir);
    assert!(files.len() > 3, "{files:?}");
    for f in files {
        let bytes = std::fs::read(&f).unwrap();
        assert!(
            !bytes.windows(CANARY.len()).any(|w| w == CANARY.as_bytes()),
            "the key is in {}",
            f.display()
        );
    }
}

/// Every `.vecs` file under `dir` whose name starts with `prefix`.
fn vecs_files(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(prefix) && name.ends_with(".vecs")
        })
        .collect()
}

/// The stored tuples of a store, ordered: (query, paradigm, label, answer).
fn tuples(db: &Path) -> Vec<String> {
    query_strings(
        db,
        "SELECT query_id || '|' || paradigm || '|' || coalesce(judge_label, '-') || '|' || \
         coalesce(answer, '') || '|' || coalesce(context_json, '') FROM results \
         ORDER BY query_id, paradigm",
    )
}

#[test]
fn h6_a_corrupted_vector_cache_is_detected_and_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let bench = |db: &str| {
        bin()
            .args(["bench", "demo", "--paradigms", "naive,iterative"])
            .arg("--db")
            .arg(dir.path().join(db))
            .arg("--cache-dir")
            .arg(&cache)
            .output()
            .unwrap()
    };
    let clean = bench("clean.sqlite");
    check_ok(&clean);
    let files = vecs_files(&cache, "demo_chunks");
    assert_eq!(files.len(), 1, "{files:?}");
    // 32 bytes flipped in the middle of the body, as the hostile test did.
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let mid = bytes.len() / 2;
    for b in &mut bytes[mid..mid + 32] {
        *b ^= 0x5a;
    }
    std::fs::write(&files[0], &bytes).unwrap();
    let again = bench("again.sqlite");
    check_ok(&again);
    let err = text(&again.stderr);
    assert_eq!(
        err.matches("is corrupt").count(),
        1,
        "one line says the cache was corrupt:\n{err}"
    );
    assert!(err.contains("re-embedding"), "{err}");
    assert_eq!(
        tuples(&dir.path().join("clean.sqlite")),
        tuples(&dir.path().join("again.sqlite")),
        "a corrupted cache changed the results"
    );
    // Rewritten whole: a third run reads it without a word.
    let third = bench("third.sqlite");
    check_ok(&third);
    assert!(
        !text(&third.stderr).contains("corrupt"),
        "{}",
        text(&third.stderr)
    );
}

#[test]
fn h11_a_run_that_fails_midway_exits_1_without_a_panic() {
    // The store's file may not grow past 300 kB (the corpus, the graph's extractions and the
    // run fit; the tuples, 580 kB in all, do not): writes fail midway with "file too large",
    // as on a full disk. Each write waits 100 ms first, so other units are in flight when the
    // first one fails.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let script = "ulimit -f 600; trap '' XFSZ; exec \"$0\" \"$@\"";
    let out = Command::new("sh")
        .args(["-c", script, env!("CARGO_BIN_EXE_ragrouter")])
        .args(["bench", "demo", "--cache-dir"])
        .arg(shared_cache())
        .arg("--db")
        .arg(&db)
        .env_remove("RAGROUTER_DATA_DIR")
        .env_remove("RAGROUTER_DB")
        .env("RAGROUTER_FAULT_DELAY_MS", "100")
        .env("RAGROUTER_LOG", "warn")
        .env("RUST_BACKTRACE", "1")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    no_panic(&out);
    // The real error: the store's write that failed.
    assert!(
        err.lines()
            .any(|l| l.starts_with("error: ") && l.contains("results store")),
        "{err}"
    );
    assert!(
        query_db(&db, "SELECT count(*) FROM results")[0] < 140,
        "the run was meant to fail midway"
    );
}

#[test]
fn h23_empty_environment_values_count_as_unset() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    for var in [
        "RAGROUTER_MODEL_DIR",
        "RAGROUTER_DB",
        "RAGROUTER_LOG",
        "RAGROUTER_DATA_DIR",
        "RAGROUTER_PG_CONNECT_TIMEOUT",
    ] {
        let out = bench_on(&db, &["--dry-run", "--paradigms", "naive"])
            .env(var, "")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{var}= : exit {:?}\n{}",
            out.status.code(),
            text(&out.stderr)
        );
        let out = bin().args(["corpora"]).env(var, "").output().unwrap();
        assert!(
            out.status.success(),
            "corpora with {var}= : {}",
            text(&out.stderr)
        );
    }
    assert!(!db.exists(), "a dry run wrote the store");
}

#[test]
fn h24_empty_or_contradictory_probes_are_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    for (probes, needle) in [
        ("", "--probes"),
        (",", "--probes"),
        ("dense,,bm25", "--probes"),
        ("none,dense", "none"),
        ("dense,none", "none"),
    ] {
        let out = bench_on(&db, &["--paradigms", "naive", "--probes", probes])
            .output()
            .unwrap();
        check_fails(&out, 2, &[needle]);
        assert!(!db.exists(), "--probes {probes:?}: the store was created");
    }
}

#[test]
fn h24_a_probe_that_cannot_run_offline_is_said_once_when_named() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let named = bench_on(
        &db,
        &[
            "--paradigms",
            "naive",
            "--limit",
            "2",
            "--probes",
            "dense,answers",
        ],
    )
    .output()
    .unwrap();
    check_ok(&named);
    let err = text(&named.stderr);
    assert_eq!(
        err.matches("probes: answers").count(),
        1,
        "said once:\n{err}"
    );
    assert!(err.contains("LLM"), "{err}");
    // The default list names answers too, but the user did not: no note.
    let default = bench_on(&db, &["--paradigms", "naive", "--limit", "2", "--fresh"])
        .output()
        .unwrap();
    check_ok(&default);
    assert!(
        !text(&default.stderr).contains("probes: answers"),
        "{}",
        text(&default.stderr)
    );
}
