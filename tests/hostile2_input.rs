//! Hostile input to the importers and loaders (hostile test of 2026-12-07, H7 H9 H10 H14 H15 H16
//! H19 H20): an import's identity by content whatever the path's spelling, a classifier folder
//! that links to itself, devices, FIFOs and oversized files as input files, NUL characters,
//! duplicate keys and absurd numbers in every imported field, an arm folder that is a file, an
//! over-long corpus name, and the unmatched-evidence list left alone when it is up to date.
//! Each refusal exits 2, names the file, the line or key and the field, and writes nothing.

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn datasets() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/datasets")
}

fn adarague() -> PathBuf {
    datasets().join("adarague-llama8b")
}

fn classifier_data() -> PathBuf {
    datasets().join("adaptive-rag-outcomes/classifier/data")
}

/// Runs `cmd`, killing it after `secs`: a hang is a failure, not a test that never ends.
fn run_limited(cmd: &mut Command, secs: u64) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("out"), dir.path().join("err"));
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{cmd:?} did not finish within {secs} s; stderr so far:\n{}",
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: std::fs::read(&out).unwrap(),
        stderr: std::fs::read(&err).unwrap(),
    }
}

/// `ragrouter ARGS --db DB`, run from `cwd`, within `secs`.
fn run_in(cwd: &Path, db: &Path, args: &[&str], secs: u64) -> Output {
    run_limited(bin().current_dir(cwd).args(args).arg("--db").arg(db), secs)
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A writable copy of the AdaRAGUE folder under `root/ds`, with the test questions beside it
/// where the importer looks for them by default; returns the folder.
fn adarague_copy(root: &Path) -> PathBuf {
    let ds = root.join("ds");
    copy_tree(&adarague(), &ds.join("adarague-llama8b"));
    let data = ds.join("adaptive-rag-outcomes/classifier/data");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(
        classifier_data().join("valid.json"),
        data.join("valid.json"),
    )
    .unwrap();
    ds.join("adarague-llama8b")
}

/// Replaces the first `from` in the file with `to`.
fn edit(file: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    assert!(text.contains(from), "{} lacks {from:?}", file.display());
    std::fs::write(file, text.replacen(from, to, 1)).unwrap();
}

const SQUAD_NOR: &str = "Adaptive_Rag/predictions/test/nor_qa_llama_8b_it_squad____prompt_set_1";
const SQUAD_IRCOT: &str = "Adaptive_Rag/predictions/test/ircot_qa_llama_8b_it_squad____prompt_set_1___bm25_retrieval_count__6___distractor_count__1";
const CLASSIFIER_DS: &str =
    "Adaptive_Rag/predictions/classifier/t5-large/llama_8b_it/epoch/25/2024_11_28/14_25_04";

/// Imports the AdaRAGUE copy at `dir` into `db` (within 300 s).
fn import_adarague(dir: &Path, db: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["import", "adarague", s(dir)];
    args.extend_from_slice(extra);
    run_in(Path::new(env!("CARGO_MANIFEST_DIR")), db, &args, 300)
}

/// The import was refused with exit 2 naming every needle, and nothing was stored.
fn refused(out: &Output, db: &Path, needles: &[&str]) {
    check_fails(out, 2, needles);
    assert!(
        !db.exists() || query_db(db, "SELECT count(*) FROM runs") == [0],
        "something was stored: {}",
        text(&out.stderr)
    );
}

fn runs(db: &Path) -> i64 {
    query_db(db, "SELECT count(*) FROM runs")[0]
}

/// No stored run configuration or tuple trace holds `path`.
fn no_path_stored(db: &Path, path: &Path) {
    let p = path.to_str().unwrap();
    for sql in [
        "SELECT config_json FROM runs",
        "SELECT DISTINCT trace_json FROM results",
    ] {
        for v in query_strings(db, sql) {
            assert!(!v.contains(p), "{sql}: {v} holds {p}");
        }
    }
    for v in query_strings(db, "SELECT config_json FROM runs") {
        assert!(!v.contains('/'), "a path in the settings: {v}");
    }
}

const GOOD: &str = r#"{"id": "a", "corpus": "nq", "question": "who?", "answers": ["x"], "outcomes": {"llm-only": {"answer": "x", "cost": 0}, "naive": {"correct": true, "cost": 1}}}
{"id": "b", "corpus": "nq", "question": "what?", "outcomes": {"llm-only": {"correct": false, "cost": 0}, "naive": {"correct": true, "cost": 1}}}
"#;

#[test]
fn h7_outcomes_reimported_by_any_spelling_or_copy_adds_nothing() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().canonicalize().unwrap();
    let db = r.join("o.sqlite");
    std::fs::create_dir_all(r.join("imp")).unwrap();
    std::fs::create_dir_all(r.join("copy")).unwrap();
    std::fs::write(r.join("imp/good.jsonl"), GOOD).unwrap();
    std::fs::write(r.join("copy/good.jsonl"), GOOD).unwrap();
    std::os::unix::fs::symlink(r.join("imp"), r.join("lnk")).unwrap();
    let abs = r.join("imp/good.jsonl");
    for (i, file) in [
        "imp/good.jsonl",
        "./imp/good.jsonl",
        abs.to_str().unwrap(),
        "lnk/good.jsonl",
        "imp/../imp/good.jsonl",
        "copy/good.jsonl",
    ]
    .into_iter()
    .enumerate()
    {
        let out = run_in(&r, &db, &["import", "outcomes", file], 60);
        check_ok(&out);
        if i > 0 {
            assert!(
                text(&out.stdout).contains("nothing added"),
                "{file}: {}",
                text(&out.stdout)
            );
        }
        assert_eq!(runs(&db), 1, "{file}");
    }
    no_path_stored(&db, &r);
}

#[test]
fn h7_adaptive_rag_reimported_by_any_spelling_adds_nothing() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().canonicalize().unwrap();
    let db = r.join("a.sqlite");
    std::os::unix::fs::symlink(classifier_data(), r.join("d")).unwrap();
    let abs = classifier_data().canonicalize().unwrap();
    let rel = "../shared/datasets/adaptive-rag-outcomes/classifier/data";
    let odd = "../shared/datasets/../datasets/adaptive-rag-outcomes/classifier/data";
    let mut first = None;
    for d in [
        rel,
        abs.to_str().unwrap(),
        odd,
        r.join("d").to_str().unwrap(),
    ] {
        let (q, l) = (
            format!("{d}/valid.json"),
            format!("{d}/flan_t5_xl/valid.json"),
        );
        let args = [
            "import",
            "adaptive-rag",
            "--queries",
            &q,
            "--labels",
            &l,
            "--split",
            "test",
        ];
        let out = run_in(Path::new(env!("CARGO_MANIFEST_DIR")), &db, &args, 120);
        check_ok(&out);
        let n = runs(&db);
        assert_eq!(*first.get_or_insert(n), n, "{d}: {}", text(&out.stdout));
    }
    no_path_stored(&db, &abs);
}

#[test]
fn h7_adarague_reimported_by_any_spelling_or_copy_adds_nothing() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().canonicalize().unwrap();
    let db = r.join("a.sqlite");
    let abs = adarague().canonicalize().unwrap();
    check_ok(&import_adarague(&abs, &db, &[]));
    assert_eq!(runs(&db), 12);
    std::os::unix::fs::symlink(&abs, r.join("lnk")).unwrap();
    let copy = adarague_copy(&r);
    let odd = datasets().join("../datasets/adarague-llama8b");
    let rel = PathBuf::from("../shared/datasets/adarague-llama8b");
    for dir in [rel, odd, r.join("lnk"), copy] {
        let out = import_adarague(&dir, &db, &[]);
        check_ok(&out);
        assert_eq!(runs(&db), 12, "{}: {}", dir.display(), text(&out.stdout));
    }
    no_path_stored(&db, &abs);
    no_path_stored(&db, &r);
}

/// Runs statements on a SQLite file, in order (each through the shared `exec_db`).
fn sqlite_exec(db: &Path, sql: &[&str]) {
    for s in sql {
        exec_db(db, s);
    }
}

#[test]
fn h7_a_store_keyed_by_path_is_migrated_to_the_content_key() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path().canonicalize().unwrap();
    let db = r.join("m.sqlite");
    std::fs::write(r.join("good.jsonl"), GOOD).unwrap();
    check_ok(&run_in(&r, &db, &["import", "outcomes", "good.jsonl"], 60));
    // The row as an import before schema version 16 stored it: its settings held the path it
    // was read from, and the run key hashed them.
    let config = query_strings(&db, "SELECT config_json FROM runs").remove(0);
    let mut old: serde_json::Value = serde_json::from_str(&config).unwrap();
    old["file"] = serde_json::json!(r.join("good.jsonl").to_str().unwrap());
    let old = old.to_string().replace('\'', "''");
    // Its tuples' traces held the path too (`/tmp/.../good.jsonl:3`).
    let traced = format!(
        "UPDATE results SET trace_json = replace(trace_json, '\"good.jsonl:', '\"{}/good.jsonl:')",
        r.display()
    );
    sqlite_exec(
        &db,
        &[
            &format!("UPDATE runs SET run_key = 'keyed-by-path', config_hash = 'old', config_json = '{old}'"),
            "UPDATE results SET config_hash = 'old'",
            &traced,
            // Version 17's column did not exist yet.
            "ALTER TABLE route_predictions DROP COLUMN arms_played",
            "PRAGMA user_version = 15",
        ],
    );
    let p = r.to_str().unwrap();
    let traces = query_strings(&db, "SELECT DISTINCT trace_json FROM results");
    assert!(traces.iter().all(|t| t.contains(p)), "{traces:?}");
    let out = run_in(&r, &db, &["import", "outcomes", "good.jsonl"], 60);
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("nothing added"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(runs(&db), 1);
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM runs WHERE run_key = 'keyed-by-path' OR config_hash = 'old'"
        ),
        [0]
    );
    assert_eq!(
        query_db(
            &db,
            "SELECT count(*) FROM results WHERE config_hash = 'old'"
        ),
        [0]
    );
    no_path_stored(&db, &r);
    let traces = query_strings(&db, "SELECT DISTINCT trace_json FROM results");
    assert!(
        traces.iter().all(|t| t.contains("\"good.jsonl:")),
        "{traces:?}"
    );
}

#[test]
fn h9_classifier_folder_links_to_itself_do_not_hang() {
    let root = tempfile::tempdir().unwrap();
    let dir = adarague_copy(root.path());
    let musique = dir.join(CLASSIFIER_DS).join("musique");
    std::os::unix::fs::symlink(".", musique.join("loop1")).unwrap();
    std::os::unix::fs::symlink(".", musique.join("loop2")).unwrap();
    let db = root.path().join("a.sqlite");
    let out = import_adarague(&dir, &db, &[]);
    check_ok(&out);
    assert_eq!(runs(&db), 12);
    // A link to a second copy of the file: two found, and the message names the link.
    let elsewhere = root.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(
        musique.join("musique_option_with_probas.json"),
        elsewhere.join("musique_option_with_probas.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&elsewhere, musique.join("extra")).unwrap();
    let db2 = root.path().join("b.sqlite");
    let out = import_adarague(&dir, &db2, &[]);
    refused(
        &out,
        &db2,
        &[
            "musique_option_with_probas.json",
            "found 2",
            "extra",
            "link",
        ],
    );
}

#[test]
fn h10_devices_fifos_and_oversized_files_are_refused_before_reading() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let fifo = r.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    // Sparse: one byte past the cap, nothing on disk.
    let big = r.join("big.jsonl");
    std::fs::File::create(&big)
        .unwrap()
        .set_len((1 << 30) + 1)
        .unwrap();
    let labels = classifier_data().join("flan_t5_xl/valid.json");
    let f = s(&fifo);
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["import", "outcomes", "/dev/zero"], "/dev/zero"),
        (
            vec!["import", "adaptive-rag", "--labels", "/dev/zero"],
            "/dev/zero",
        ),
        (
            vec![
                "import",
                "adaptive-rag",
                "--labels",
                s(&labels),
                "--queries",
                f,
            ],
            f,
        ),
        (
            vec![
                "import",
                "adarague",
                "../shared/datasets/adarague-llama8b",
                "--queries",
                "/dev/zero",
            ],
            "/dev/zero",
        ),
        (vec!["bench", "demo", "--config", "/dev/zero"], "/dev/zero"),
        (vec!["import", "outcomes", f], f),
        (vec!["bench", "demo", "--config", f], f),
    ];
    for (i, (args, named)) in cases.iter().enumerate() {
        let db = r.join(format!("d{i}.sqlite"));
        let out = run_in(Path::new(env!("CARGO_MANIFEST_DIR")), &db, args, 30);
        check_fails(&out, 2, &[named, "not a regular file"]);
        assert!(!db.exists(), "{args:?} created the store");
    }
    // Files read as a stream are checked the same way.
    for args in [
        ["metrics", "--edges", f, "", ""],
        ["metrics", "--embeddings", "/dev/zero", "--dim", "4"],
    ] {
        let args: Vec<&str> = args.into_iter().filter(|a| !a.is_empty()).collect();
        let out = run_limited(bin().args(&args), 30);
        check_fails(&out, 2, &[args[2], "not a regular file"]);
    }
    let db = r.join("big.sqlite");
    let out = run_in(r, &db, &["import", "outcomes", "big.jsonl"], 30);
    check_fails(&out, 2, &["big.jsonl", "1073741825 bytes", "1 GiB"]);
    assert!(!db.exists());
}

#[test]
fn h14_nul_in_any_adarague_text_field_is_exit_2_naming_place_and_field() {
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            "dev_questions.jsonl",
            r#""question": "Which film has the director born later, Bride"#,
            r#""question": "Which\u0000film has the director born later, Bride"#,
            &["dev_questions.jsonl", "line 1", "\"question\"", "NUL"],
        ),
        (
            "../adaptive-rag-outcomes/classifier/data/valid.json",
            r#""question": "What does the acronym"#,
            r#""question": "What\u0000does the acronym"#,
            &["valid.json", "record 0", "\"question\"", "NUL"],
        ),
        (
            &format!("{SQUAD_NOR}/prediction__squad_to_squad__test_subsampled.json"),
            r#""Eat Pray Love""#,
            r#""Eat\u0000Pray Love""#,
            &["prediction__squad", "single_squad_dev_4465", "NUL"],
        ),
        (
            &format!("{SQUAD_NOR}/ground_truth__squad_to_squad__test_subsampled.json"),
            r#""Mona Lisa Smile (2003)""#,
            r#""Mona\u0000Lisa""#,
            &["ground_truth__squad", "single_squad_dev_4465", "NUL"],
        ),
    ];
    for (file, from, to, needles) in cases {
        let root = tempfile::tempdir().unwrap();
        let dir = adarague_copy(root.path());
        edit(&dir.join(file), from, to);
        let db = root.path().join("a.sqlite");
        refused(&import_adarague(&dir, &db, &[]), &db, needles);
    }
}

/// A generic outcomes file of one line, imported into a fresh store: refused naming `needles`.
fn generic_refused(line: &str, needles: &[&str]) {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    std::fs::write(r.join("n.jsonl"), format!("{line}\n")).unwrap();
    let db = r.join("n.sqlite");
    let out = run_in(r, &db, &["import", "outcomes", "n.jsonl"], 60);
    let mut all = vec!["n.jsonl", "line 1"];
    all.extend_from_slice(needles);
    refused(&out, &db, &all);
}

fn generic(extra: &str) -> String {
    format!(
        r#"{{"id": "a", "corpus": "nq", "question": "q?", "answers": ["x"], "outcomes": {{"llm-only": {{"answer": "x", "cost": 0}}, "naive": {{"correct": true, "cost": 1}}}}{extra}}}"#
    )
}

#[test]
fn h14_nul_in_any_generic_text_field_is_exit_2_naming_place_and_field() {
    generic_refused(
        &generic("").replace(r#""answer": "x""#, r#""answer": "x\u0000y""#),
        &["outcomes.llm-only", "\"answer\"", "NUL"],
    );
    for (extra, needles) in [
        (
            r#", "routers": {"r\u0000x": {"choice": "naive", "correct": true}}"#,
            &["routers", "NUL"][..],
        ),
        (
            r#", "routers": {"r": {"choice": "naive", "answer": "a\u0000b"}}"#,
            &["routers.r", "\"answer\"", "NUL"],
        ),
        (r#", "signals": {"s\u0000t": 1}"#, &["signals", "NUL"]),
        (
            r#", "signals": {"s": {"value": 1, "probe": "p\u0000q"}}"#,
            &["signals.s", "probe", "NUL"],
        ),
    ] {
        generic_refused(&generic(extra), needles);
    }
}

#[test]
fn h15_adarague_files_are_read_strictly() {
    let pred = format!("{SQUAD_NOR}/prediction__squad_to_squad__test_subsampled.json");
    let cases: &[(&str, &str, &str, &[&str])] = &[
        (
            &pred,
            r#""single_squad_dev_4465": "Eat Pray Love","#,
            r#""single_squad_dev_4465": "Eat Pray Love", "single_squad_dev_4465": "other","#,
            &[
                "prediction__squad",
                "duplicate key \"single_squad_dev_4465\"",
            ],
        ),
        (
            &format!("{SQUAD_IRCOT}/stepNum.json"),
            r#""single_squad_dev_1002": 2,"#,
            r#""single_squad_dev_1002": 2, "single_squad_dev_1002": 7,"#,
            &["stepNum.json", "duplicate key \"single_squad_dev_1002\""],
        ),
        (
            "SeaKR/results/outputs_sq_ours_3_1/direct.jsonl",
            r#"{"answer": "eat pray love","#,
            r#"{"answer": "eat pray love", "answer": "x","#,
            &["direct.jsonl", "line 1", "duplicate key \"answer\""],
        ),
        (
            "dev_questions.jsonl",
            r#""dataset": "2wikimultihopqa"}"#,
            r#""dataset": "2wikimultihopqa", "dataset": "nq"}"#,
            &["dev_questions.jsonl", "line 1", "duplicate key \"dataset\""],
        ),
        (
            "../adaptive-rag-outcomes/classifier/data/valid.json",
            r#""id": "2hop__511176_22458","#,
            r#""id": "2hop__511176_22458", "id": "other","#,
            &["valid.json", "duplicate key \"id\""],
        ),
        (
            &pred,
            r#""Eat Pray Love""#,
            r#""Eat \ud800 Love""#,
            &["prediction__squad", "lone surrogate"],
        ),
        (
            "../adaptive-rag-outcomes/classifier/data/valid.json",
            r#""question": "What does the acronym of the organization Danish Football Union is part of stand for?""#,
            r#""question": "  ""#,
            &["valid.json", "record 0", "\"question\"", "empty"],
        ),
        (
            "dev_questions.jsonl",
            r#""question": "Which film has the director born later, Bride For Sale or Veena Meettiya Vilangukal?""#,
            r#""question": """#,
            &["dev_questions.jsonl", "line 1", "\"question\"", "empty"],
        ),
    ];
    for (file, from, to, needles) in cases {
        let root = tempfile::tempdir().unwrap();
        let dir = adarague_copy(root.path());
        edit(&dir.join(file), from, to);
        let db = root.path().join("a.sqlite");
        refused(&import_adarague(&dir, &db, &[]), &db, needles);
    }
}

#[test]
fn h16_absurd_numbers_are_refused_at_import_with_the_bound() {
    let root = tempfile::tempdir().unwrap();
    let dir = adarague_copy(root.path());
    edit(
        &dir.join(SQUAD_IRCOT).join("stepNum.json"),
        r#""single_squad_dev_1002": 2,"#,
        r#""single_squad_dev_1002": 1e308,"#,
    );
    let db = root.path().join("a.sqlite");
    refused(
        &import_adarague(&dir, &db, &[]),
        &db,
        &["stepNum.json", "single_squad_dev_1002", "1e+308", "1e12"],
    );
    for (extra, needles) in [
        (
            r#", "signals": {"s": {"value": 1, "cost": 1e308}}"#,
            &["signals.s", "cost", "1e+308", "1e12"][..],
        ),
        (
            r#", "signals": {"s": -1e308}"#,
            &["signals.s", "value", "1e12"],
        ),
        (
            r#", "signals": {"s": {"value": 1, "cost_ms": 1e300}}"#,
            &["signals.s", "cost_ms", "1e12"],
        ),
        (
            r#", "routers": {"r": {"choice": "naive", "correct": true, "cost": 1e308}}"#,
            &["routers.r", "cost", "1e12"],
        ),
    ] {
        generic_refused(&generic(extra), needles);
    }
    generic_refused(
        &generic("").replace(r#""cost": 1}"#, r#""cost": 1e300}"#),
        &["outcomes.naive", "cost", "1e12"],
    );
}

#[test]
fn h19_an_arm_folder_that_is_a_file_is_exit_2_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = adarague_copy(root.path());
    let arm = dir.join(SQUAD_NOR);
    std::fs::remove_dir_all(&arm).unwrap();
    std::fs::write(&arm, "not a folder").unwrap();
    let db = root.path().join("a.sqlite");
    refused(
        &import_adarague(&dir, &db, &[]),
        &db,
        &["nor_qa_llama_8b_it_squad____prompt_set_1", "not a folder"],
    );
}

#[test]
fn h19_an_over_long_corpus_name_is_refused_before_any_work() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    for len in [240, 300, 101] {
        let name = "n".repeat(len);
        // A generic corpus named by its corpus.toml.
        let set = r.join(format!("set{len}"));
        std::fs::create_dir_all(&set).unwrap();
        std::fs::write(set.join("corpus.toml"), format!("name = \"{name}\"\n")).unwrap();
        std::fs::write(
            set.join("corpus.jsonl"),
            "{\"id\": \"d\", \"text\": \"Some text.\"}\n",
        )
        .unwrap();
        std::fs::write(
            set.join("queries.jsonl"),
            "{\"id\": \"1\", \"question\": \"What?\", \"answers\": [\"text\"], \"type\": \"factual\"}\n",
        )
        .unwrap();
        let db = r.join(format!("b{len}.sqlite"));
        let cache = r.join(format!("cache{len}"));
        let corpus = format!("jsonl:{}", set.display());
        let out = run_in(
            r,
            &db,
            &[
                "bench",
                &corpus,
                "--paradigms",
                "naive",
                "--cache-dir",
                s(&cache),
            ],
            120,
        );
        check_fails(
            &out,
            2,
            &["corpus.toml", "corpus name", "at most 100 characters"],
        );
        assert!(
            !db.exists() && !cache.join("evidence").exists(),
            "work was done: {}",
            text(&out.stderr)
        );
        // An imported record's corpus.
        generic_refused(
            &generic("").replace(r#""corpus": "nq""#, &format!(r#""corpus": "{name}""#)),
            &["\"corpus\"", "at most 100 characters"],
        );
    }
}

/// A generic corpus whose evidence sentence appears nowhere verbatim (matched by meaning).
fn paraphrase_set(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(
        dir.join("corpus.jsonl"),
        "{\"id\": \"d1\", \"text\": \"The lighthouse keeper was Ansel Varga. He logged every ship.\"}\n\
         {\"id\": \"d2\", \"text\": \"A note about tides and weather on the northern cape.\"}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("queries.jsonl"),
        "{\"id\": \"1\", \"question\": \"Who kept the lighthouse?\", \"answers\": [\"Ansel Varga\"], \"type\": \"factual\", \"evidence\": [\"Ansel Varga kept the light on the cape.\"]}\n",
    )
    .unwrap();
}

#[test]
fn h20_the_unmatched_evidence_list_is_written_only_when_missing_or_changed() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let set = r.join("para");
    paraphrase_set(&set);
    let corpus = format!("jsonl:{}", set.display());
    let cache = r.join("cache");
    let evidence = cache.join("evidence");
    let bench = |db: &str, extra: &[&str]| {
        let mut args = vec![
            "bench",
            corpus.as_str(),
            "--paradigms",
            "naive",
            "--cache-dir",
            s(&cache),
        ];
        args.extend_from_slice(extra);
        run_in(r, &r.join(db), &args, 300)
    };
    // Refused before any write.
    for flag in ["--limit", "--sample"] {
        let out = bench("refused.sqlite", &[flag, "0"]);
        check_fails(&out, 2, &[flag]);
        assert!(!evidence.exists(), "{flag} 0 wrote {}", evidence.display());
    }
    check_ok(&bench("one.sqlite", &[]));
    let list = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    };
    let files = list(&evidence);
    assert_eq!(files.len(), 1, "{files:?}");
    use std::os::unix::fs::MetadataExt;
    let before = std::fs::metadata(&files[0]).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    check_ok(&bench("two.sqlite", &[]));
    let after = std::fs::metadata(&files[0]).unwrap();
    assert_eq!(list(&evidence), files);
    assert_eq!(
        (before.ino(), before.mtime(), before.mtime_nsec()),
        (after.ino(), after.mtime(), after.mtime_nsec()),
        "the up-to-date list was written again"
    );
}

#[test]
fn the_same_questions_with_other_labels_add_a_run_and_warn() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    let db = r.join("w.sqlite");
    std::fs::write(r.join("labels.jsonl"), GOOD).unwrap();
    check_ok(&run_in(r, &db, &["import", "outcomes", "labels.jsonl"], 60));
    std::fs::write(
        r.join("labels.jsonl"),
        GOOD.replace(
            r#""naive": {"correct": true"#,
            r#""naive": {"correct": false"#,
        ),
    )
    .unwrap();
    let out = run_in(r, &db, &["import", "outcomes", "labels.jsonl"], 60);
    check_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("warning: corpus nq: run 1 of the same source and split holds other outcomes"),
        "{err}"
    );
    assert_eq!(runs(&db), 2);
}
