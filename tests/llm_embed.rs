//! `ragrouter bench` with an `[llm.embedding]` endpoint (the mock): vectors come from it, the run names it, a rerun sends nothing, a changed dimension stops the run cleanly.

mod common;

use common::*;

use std::path::Path;
use std::process::{Command, Output};

use llm::mock::{ChatRequestSeen, MockOptions, MockReply, MockServer};

const DIM: usize = 64;
const BATCH: usize = 4;

/// Replies for NaiveRAG and GraphRAG in LLM mode, told apart by their system prompt.
fn script(r: &ChatRequestSeen) -> MockReply {
    let system = r.messages.first().map_or("", |(_, c)| c.as_str());
    let user = r.last_content();
    let content = if system.starts_with("You grade answers") {
        r#"{"label": "Correct"}"#.to_owned()
    } else if system.starts_with("You turn text into knowledge-graph triplets") {
        if user.starts_with("List the entities") {
            serde_json::to_string(&capitalised(after(user, "\nQuestion:\n"))).unwrap()
        } else {
            let words = capitalised(after(user, "\nText:\n"));
            let triplets: Vec<[&str; 3]> = words
                .windows(2)
                .take(6)
                .map(|w| [w[0].as_str(), "related to", w[1].as_str()])
                .collect();
            serde_json::to_string(&triplets).unwrap()
        }
    } else {
        "mock answer".to_owned()
    };
    MockReply::with_usage(content, 10, 2)
}

fn start(wrong_dim_from: Option<usize>) -> MockServer {
    MockServer::start_with(
        MockOptions {
            models: vec!["mock-model".into(), "embed-model".into()],
            embedding_dim: Some(DIM),
            embedding_wrong_dim_from: wrong_dim_from,
            ..MockOptions::default()
        },
        script,
    )
}

/// `bench demo --paradigms naive,graph` in LLM mode with `[llm.embedding]` at the mock; the
/// database and vector cache live in `dir`.
fn bench(dir: &Path, mock: &MockServer) -> Output {
    let config = dir.join("embed.toml");
    std::fs::write(
        &config,
        format!("[llm.embedding]\nmodel = \"embed-model\"\nbatch_size = {BATCH}\n"),
    )
    .unwrap();
    Command::new(env!("CARGO_BIN_EXE_ragrouter"))
        .env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .env_remove("RAGROUTER_FAULT_DELAY_MS")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["bench", "demo", "--paradigms", "naive,graph"])
        .args([
            "--llm-base-url",
            &mock.base_url(),
            "--llm-model",
            "mock-model",
        ])
        .arg("--config")
        .arg(&config)
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(dir.join("vectors"))
        .output()
        .unwrap()
}

fn usage_field(db: &Path, field: &str) -> i64 {
    query_db(
        db,
        &format!("SELECT json_extract(config_json, '$.embedding_usage.{field}') FROM runs"),
    )[0]
}

#[test]
fn bench_embeds_through_the_endpoint_and_a_rerun_sends_nothing() {
    let mock = start(None);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let out = bench(dir.path(), &mock);
    check_ok(&out);
    let identity = format!("embed-model@{}", mock.base_url());
    assert_eq!(
        query_strings(&db, "SELECT embedder FROM runs"),
        std::slice::from_ref(&identity)
    );
    assert!(text(&out.stderr).contains(&format!("encoder: {identity} ({DIM} dimensions")));

    // Every chunk, question and graph entity went to the endpoint, in batches of BATCH.
    let chunks = query_db(&db, "SELECT chunks FROM corpora")[0] as usize;
    let queries = query_db(&db, "SELECT count(*) FROM queries")[0] as usize;
    let entities = query_db(
        &db,
        "SELECT nodes FROM graph_builds ORDER BY rowid DESC LIMIT 1",
    )[0] as usize;
    assert!(chunks > 0 && queries > 0 && entities > 0);
    let corpus_requests =
        1 + chunks.div_ceil(BATCH) + queries.div_ceil(BATCH) + entities.div_ceil(BATCH);
    let requests = mock.embedding_requests();
    eprintln!(
        "{chunks} chunks, {queries} questions, {entities} entities: {requests} embedding requests, {} texts, {} tokens",
        mock.embedding_inputs(),
        mock.embedding_tokens()
    );
    // The corpus side exactly; GraphRAG's query entities add one request per question at most
    // (a question's few entities fit one batch, and a question without entities sends none),
    // and so does the probe step's entity linking (`--probes`, on by default), which links the
    // question's mentions with a retriever of its own.
    assert!(
        requests >= corpus_requests && requests <= corpus_requests + 2 * queries,
        "{requests} requests for {corpus_requests} corpus-side batches"
    );
    assert!(mock.embedding_inputs() >= 1 + chunks + queries + entities);

    // The run records the endpoint's bill, equal to what the mock served.
    assert_eq!(usage_field(&db, "requests") as usize, requests);
    assert_eq!(usage_field(&db, "texts") as usize, mock.embedding_inputs());
    assert_eq!(usage_field(&db, "tokens") as u64, mock.embedding_tokens());
    assert_eq!(
        usage_field(&db, "usage_tokens") as u64,
        mock.embedding_tokens()
    );
    assert_eq!(usage_field(&db, "counted_tokens"), 0);

    // Every tuple answered; retrieval over the endpoint's vectors found gold evidence.
    assert_eq!(
        query_db(&db, "SELECT count(*) FROM results WHERE error IS NULL")[0] as usize,
        2 * queries
    );
    let recall: Vec<f64> = try_fetch(
        &db,
        "SELECT avg(evidence_recall) FROM results WHERE paradigm = 'naive'",
    )
    .unwrap();
    eprintln!(
        "naive evidence recall over the mock's vectors: {:.3}",
        recall[0]
    );
    assert!(recall[0] > 0.0);

    // The same command again: resumed, not one embedding or chat request.
    let (chat_before, embed_before) = (mock.chat_requests(), mock.embedding_requests());
    let again = bench(dir.path(), &mock);
    check_ok(&again);
    assert!(
        text(&again.stdout).contains("resumed"),
        "{}",
        text(&again.stdout)
    );
    assert_eq!(
        mock.embedding_requests(),
        embed_before,
        "the rerun embedded"
    );
    assert_eq!(
        mock.chat_requests(),
        chat_before,
        "the rerun called the LLM"
    );
    assert_eq!(usage_field(&db, "requests") as usize, requests);
    assert_eq!(query_db(&db, "SELECT count(*) FROM runs")[0], 1);
}

#[test]
fn a_changed_dimension_stops_the_run_before_it_is_written() {
    // First learn where the entity requests start on this corpus: the probe, then the chunk
    // and question batches (each call's batches finish before the next call starts).
    let probe_mock = start(None);
    let dir = tempfile::tempdir().unwrap();
    check_ok(&bench(dir.path(), &probe_mock));
    let db = dir.path().join("r.sqlite");
    let chunks = query_db(&db, "SELECT chunks FROM corpora")[0] as usize;
    let queries = query_db(&db, "SELECT count(*) FROM queries")[0] as usize;
    let first_entity_request = 1 + chunks.div_ceil(BATCH) + queries.div_ceil(BATCH);

    for (stage, from) in [("chunks", 2), ("entities", first_entity_request)] {
        let mock = start(Some(from));
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.sqlite");
        let out = bench(dir.path(), &mock);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stage}: {stderr}");
        for part in [
            format!("embed-model@{}", mock.base_url()),
            format!("dimension {}", DIM + 1),
            format!("dimension {DIM}"),
        ] {
            assert!(
                stderr.contains(&part),
                "{stage}: {part:?} missing from:\n{stderr}"
            );
        }
        // No run was started: the database is absent (chunks are embedded before it is
        // opened) or holds no run and no result.
        if db.exists() {
            assert_eq!(query_db(&db, "SELECT count(*) FROM runs")[0], 0, "{stage}");
            assert_eq!(
                query_db(&db, "SELECT count(*) FROM results")[0],
                0,
                "{stage}"
            );
        } else {
            assert_eq!(stage, "chunks");
        }
        assert!(mock.embedding_requests() > from, "{stage}");
    }
}
