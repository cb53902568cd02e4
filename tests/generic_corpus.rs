//! Bringing one's own corpus in the generic format: evidence by document id with
//! document-level recall, evidence that names nothing, and a short name that does not depend
//! on the path the folder is reached by.

mod common;

use common::*;

use std::path::Path;
use std::process::{Command, Output};

fn bench(db: &Path, corpus: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragrouter"))
        .env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", corpus, "--paradigms", "naive", "--db"])
        .arg(db)
        .arg("--cache-dir")
        .arg(shared_cache())
        .args(extra)
        .output()
        .unwrap()
}

/// A long "book" (many chunks) and a short note; question 1's evidence is the book's id.
fn write_set(dir: &Path, queries: &str) {
    std::fs::create_dir_all(dir).unwrap();
    let page = "The lighthouse keeper logged every ship that passed the northern cape. ";
    let book: String = (0..40)
        .map(|i| format!("Chapter {i}. {}", page.repeat(12)))
        .collect();
    let book = book.replace(
        "Chapter 7.",
        "Chapter 7. The keeper's name was Ansel Varga.",
    );
    std::fs::write(
        dir.join("corpus.jsonl"),
        format!(
            "{{\"id\": \"book\", \"title\": \"The Keeper\", \"text\": \"{book}\"}}\n\
             {{\"id\": \"note\", \"text\": \"A note about tides and weather.\"}}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.join("queries.jsonl"), queries).unwrap();
}

const QUERIES: &str = r#"{"id": "1", "question": "What was the name of the lighthouse keeper?", "answers": ["Ansel Varga"], "type": "factual", "evidence": ["book"]}
{"id": "2", "question": "What is the note about?", "answers": ["tides"], "type": "factual", "evidence": ["note"]}
"#;

#[test]
fn id_evidence_gives_document_recall_and_the_folder_names_the_corpus() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("keeper-set");
    write_set(&dir, QUERIES);
    let db = root.path().join("r.sqlite");
    // A context far smaller than the book, so that most of its chunks stay out.
    let config = root.path().join("small.toml");
    std::fs::write(&config, "[retrieval]\ncontext_budget = 600\n").unwrap();
    let small = ["--config", config.to_str().unwrap()];
    let out = bench(&db, &format!("jsonl:{}", dir.display()), &small);
    check_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("doc recall"), "{stdout}");
    assert!(stdout.contains("on keeper-set:"), "{stdout}");
    assert_eq!(
        query_strings(&db, "SELECT name FROM corpora"),
        ["keeper-set"]
    );
    // The book is many chunks: chunk-level recall stays low while the document is found.
    let recall = |sql: &str| query_strings(&db, sql)[0].parse::<f64>().unwrap();
    let chunks = query_db(
        &db,
        "SELECT json_array_length(gold_chunks_json) FROM queries WHERE query_id = '1'",
    )[0];
    assert!(chunks > 4, "{chunks} gold chunks");
    assert!(recall("SELECT CAST(evidence_recall AS TEXT) FROM results WHERE query_id = '1'") < 0.5);
    assert_eq!(
        recall("SELECT CAST(document_recall AS TEXT) FROM results WHERE query_id = '1'"),
        1.0
    );

    // The same folder by another path: the same corpus, so the run resumes with nothing to do.
    let other = format!("jsonl:{}/../keeper-set", dir.display());
    let out = bench(&db, &other, &small);
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("run 1 (resumed)"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(query_db(&db, "SELECT count(*) FROM corpora")[0], 1);
}

#[test]
fn evidence_that_names_nothing_fails_unless_allowed_and_is_counted() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("set");
    let queries = format!(
        "{QUERIES}{}",
        r#"{"id": "3", "question": "Who built it?", "answers": ["Orla"], "type": "factual", "evidence": ["chapter-99"]}"#
    );
    write_set(&dir, &queries);
    let db = root.path().join("r.sqlite");
    let name = format!("jsonl:{}", dir.display());
    let out = bench(&db, &name, &[]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "queries.jsonl: line 3 (id \"3\"): field \"evidence\": \"chapter-99\" matched no"
        ),
        "{err}"
    );
    assert!(!db.exists(), "nothing written");

    let out = bench(&db, &name, &["--allow-missing-evidence"]);
    check_ok(&out);
    let err = text(&out.stderr);
    assert!(
        err.contains("1 of 3 questions: evidence matched no document or chunk"),
        "{err}"
    );
}
