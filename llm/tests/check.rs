//! The endpoint probe of `check-llm` against the mock server.

use llm::mock::{MockOptions, MockReply, MockServer};
use llm::{probe_chat, probe_embedding, EndpointConfig, OpenAiEmbedder, OpenAiLlm};

const KEY: &str = "sk-check-3c9d77e1-DO-NOT-LEAK";

fn script(seen: &llm::mock::ChatRequestSeen) -> MockReply {
    if seen.json_mode {
        MockReply::with_usage("{\"ok\": true}", 20, 5)
    } else {
        MockReply::with_usage("OK", 10, 1)
    }
}

fn client(url: String, model: &str) -> OpenAiLlm {
    let mut c = EndpointConfig::new(url, model);
    c.timeout_s = 5;
    c.max_retries = 1;
    c.backoff_base_ms = 5;
    c.backoff_max_ms = 10;
    OpenAiLlm::with_env(c, &|k| (k == "OPENAI_API_KEY").then(|| KEY.to_owned())).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_good_endpoint_passes_every_check() {
    let mock = MockServer::start_with(
        MockOptions {
            context_length: Some(32_768),
            ..MockOptions::default()
        },
        script,
    );
    let report = probe_chat(
        &client(mock.base_url(), "mock-model"),
        "answer",
        9_512,
        1_000,
    )
    .await;
    let text = report.render();
    assert!(report.passed(), "{text}");
    assert_eq!(report.items.len(), 5, "{text}");
    assert!(
        text.contains("32768 tokens (from /models `context_length`)"),
        "{text}"
    );
    assert!(text.contains("usage reported"), "{text}");
    assert!(!text.contains(KEY));
    // Context from metadata: no big prompt was sent.
    assert_eq!(mock.chat_requests(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_metadata_the_context_is_probed_with_a_long_prompt() {
    let small = MockServer::start_with(
        MockOptions {
            max_prompt_tokens: Some(4_096),
            ..MockOptions::default()
        },
        script,
    );
    let report = probe_chat(
        &client(small.base_url(), "mock-model"),
        "answer",
        9_512,
        1_000,
    )
    .await;
    assert!(!report.passed());
    assert_eq!(report.failures(), 1, "{}", report.render());
    let last = report.items.last().unwrap();
    assert_eq!(last.name, "context window");
    assert!(last.detail.contains("refused"), "{}", last.detail);

    let big = MockServer::start_with(
        MockOptions {
            max_prompt_tokens: Some(20_000),
            ..MockOptions::default()
        },
        script,
    );
    let report = probe_chat(
        &client(big.base_url(), "mock-model"),
        "answer",
        9_512,
        1_000,
    )
    .await;
    assert!(report.passed(), "{}", report.render());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_model_or_a_dead_endpoint_fails() {
    let mock = MockServer::start(script);
    let report = probe_chat(
        &client(mock.base_url(), "other-model"),
        "answer",
        9_512,
        1_000,
    )
    .await;
    assert!(!report.passed());
    assert!(
        report.render().contains("other-model is not listed"),
        "{}",
        report.render()
    );

    let url = mock.base_url();
    drop(mock);
    let report = probe_chat(&client(url, "mock-model"), "answer", 9_512, 1_000).await;
    assert_eq!(report.items.len(), 1);
    assert!(!report.items[0].ok, "{}", report.render());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_json_reply_fails_the_json_check() {
    let mock = MockServer::start(|_| MockReply::text("OK"));
    let report = probe_chat(&client(mock.base_url(), "mock-model"), "answer", 100, 10).await;
    let json = report.items.iter().find(|i| i.name == "JSON mode").unwrap();
    assert!(!json.ok, "{}", report.render());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedding_probe_reports_an_unreachable_embedding_route() {
    // The mock has no /embeddings route: the probe must say so, not pass.
    let mock = MockServer::start(script);
    let c = client(mock.base_url(), "mock-model");
    let embedder = OpenAiEmbedder::with_env(c.config().clone(), &|_| None).unwrap();
    let report = probe_embedding(&c, &embedder).await;
    assert!(!report.passed(), "{}", report.render());
    assert_eq!(report.items.last().unwrap().name, "embedding");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_embedding_endpoint_returns_the_servers_vectors() {
    let mock = MockServer::start_with(
        MockOptions {
            models: vec!["embed-model".into()],
            embedding_dim: Some(3),
            ..MockOptions::default()
        },
        script,
    );
    let c = client(mock.base_url(), "embed-model");
    let embedder = OpenAiEmbedder::with_env(c.config().clone(), &|k| {
        (k == "OPENAI_API_KEY").then(|| KEY.to_owned())
    })
    .unwrap();
    let e = embedder
        .embed(&["a".to_owned(), "abcd".to_owned()])
        .await
        .unwrap();
    assert_eq!((e.dim, e.len()), (3, 2));
    assert_eq!(e.row(1), &llm::mock::bag_of_words("abcd", 3)[..]);
    let report = probe_embedding(&c, &embedder).await;
    assert!(report.passed(), "{}", report.render());
    assert!(mock
        .authorizations()
        .iter()
        .all(|a| a.as_deref() == Some(&format!("Bearer {KEY}")[..])));
}
