//! `OpenAiLlm` against the mock server: every fault retried or classified, limits respected.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bench_core::{BenchError, ChatMessage, ChatRequest, Llm, LlmErrorKind, TokenSource};
use llm::mock::{MockReply, MockServer};
use llm::{EndpointConfig, OpenAiLlm};

const KEY: &str = "sk-test-7d1f0c2b9e4a-DO-NOT-LEAK";

fn endpoint(mock: &MockServer) -> EndpointConfig {
    let mut c = EndpointConfig::new(mock.base_url(), "mock-model");
    c.timeout_s = 1;
    c.max_retries = 3;
    c.backoff_base_ms = 10;
    c.backoff_max_ms = 40;
    c.seed = 7;
    c
}

fn with_key(k: &str) -> Option<String> {
    (k == "OPENAI_API_KEY").then(|| KEY.to_owned())
}

fn client_for(cfg: EndpointConfig) -> OpenAiLlm {
    OpenAiLlm::with_env(cfg, &with_key).unwrap()
}

fn request(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::system("Be brief."), ChatMessage::user(text)],
        temperature: 0.0,
        max_tokens: 50,
        json: false,
    }
}

fn kind_of(e: &BenchError) -> LlmErrorKind {
    match e {
        BenchError::Llm { kind, .. } => *kind,
        other => panic!("not an LLM error: {other}"),
    }
}

fn faults() -> Vec<(&'static str, MockReply)> {
    vec![
        ("500", MockReply::status(500)),
        ("503", MockReply::status(503)),
        ("429", MockReply::rate_limited(0)),
        ("408", MockReply::status(408)),
        ("truncated body", MockReply::TruncatedBody),
        ("non-JSON body", MockReply::NonJson),
        ("dropped connection", MockReply::DropConnection),
        (
            "slower than the timeout",
            MockReply::text("late").delayed(Duration::from_millis(2_500)),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_once_is_retried_and_succeeds() {
    for (name, fault) in faults() {
        let mock = MockServer::start(move |seen| {
            if seen.index == 0 {
                fault.clone()
            } else {
                MockReply::with_usage("fine", 9, 1)
            }
        });
        let client = client_for(endpoint(&mock));
        let r = client
            .chat(&request("hi"))
            .await
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.content, "fine", "{name}");
        assert_eq!(mock.chat_requests(), 2, "{name}");
        assert_eq!(client.stats.retries.load(Ordering::Relaxed), 1, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_faults_exhaust_the_retries_with_the_right_kind() {
    let cases = vec![
        ("500", MockReply::status(500), LlmErrorKind::Retryable),
        (
            "truncated",
            MockReply::TruncatedBody,
            LlmErrorKind::Retryable,
        ),
        (
            "dropped",
            MockReply::DropConnection,
            LlmErrorKind::Retryable,
        ),
        ("non-JSON", MockReply::NonJson, LlmErrorKind::Unparseable),
        (
            "no content",
            MockReply::Status {
                code: 200,
                retry_after: None,
                message: "an error object with status 200".into(),
            },
            LlmErrorKind::Unparseable,
        ),
    ];
    for (name, fault, kind) in cases {
        let mock = MockServer::start(move |_| fault.clone());
        let mut cfg = endpoint(&mock);
        cfg.max_retries = 2;
        let client = client_for(cfg);
        let e = client.chat(&request("hi")).await.unwrap_err();
        assert_eq!(kind_of(&e), kind, "{name}: {e}");
        assert_eq!(mock.chat_requests(), 3, "{name}");
        assert!(e.to_string().contains("after 3 attempts"), "{name}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_is_retried_then_reported() {
    let mock = MockServer::start(|_| MockReply::text("late").delayed(Duration::from_secs(3)));
    let mut cfg = endpoint(&mock);
    cfg.max_retries = 1;
    let client = client_for(cfg);
    let e = client.chat(&request("hi")).await.unwrap_err();
    assert_eq!(kind_of(&e), LlmErrorKind::Retryable);
    assert!(e.to_string().contains("timed out"), "{e}");
    assert_eq!(mock.chat_requests(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_errors_are_fatal_and_not_retried() {
    for code in [400u16, 401, 403, 422] {
        let mock = MockServer::start(move |_| MockReply::status(code));
        let client = client_for(endpoint(&mock));
        let e = client.chat(&request("hi")).await.unwrap_err();
        assert_eq!(kind_of(&e), LlmErrorKind::Fatal, "{code}: {e}");
        assert!(e.to_string().contains(&format!("HTTP {code}")), "{e}");
        assert_eq!(mock.chat_requests(), 1, "{code}");
    }
    // An unknown model is the server's 404.
    let mock = MockServer::start(|_| MockReply::text("never"));
    let mut cfg = endpoint(&mock);
    cfg.model = "no-such-model".into();
    let e = client_for(cfg).chat(&request("hi")).await.unwrap_err();
    assert_eq!(kind_of(&e), LlmErrorKind::Fatal, "{e}");
    assert!(e.to_string().contains("no-such-model"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_honoured() {
    let mock = MockServer::start(|seen| {
        if seen.index == 0 {
            MockReply::rate_limited(1)
        } else {
            MockReply::text("after the wait")
        }
    });
    // The backoff alone would wait at most 40 ms.
    let client = client_for(endpoint(&mock));
    let r = client.chat(&request("hi")).await.unwrap();
    assert_eq!(r.content, "after the wait");
    let at = mock.arrivals();
    assert_eq!(at.len(), 2);
    let waited = at[1].duration_since(at[0]);
    assert!(waited >= Duration::from_secs(1), "retried after {waited:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_asks_for_json_and_extracts_it() {
    let mock = MockServer::start(|seen| {
        assert!(seen.json_mode, "response_format json_object was not sent");
        MockReply::text("Here you go:\n```json\n{\"answer\": \"Paris\"}\n```")
    });
    let client = client_for(endpoint(&mock));
    let mut req = request("Capital of France, as JSON?");
    req.json = true;
    let r = client.chat(&req).await.unwrap();
    assert_eq!(r.content, "{\"answer\": \"Paris\"}");
    assert_eq!(mock.chat_requests(), 1);
}

/// Issue #20 item 8: a server without JSON mode replies in prose; the reply reaches the caller
/// (whose parser may well read it) at the first attempt instead of failing seven times.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_hands_prose_to_the_caller_without_retrying() {
    let mock = MockServer::start(|_| MockReply::text("Correct"));
    let client = client_for(endpoint(&mock));
    let mut req = request("Grade this, as JSON");
    req.json = true;
    let r = client.chat(&req).await.unwrap();
    assert_eq!(r.content, "Correct");
    assert_eq!(mock.chat_requests(), 1);
    assert_eq!(client.stats.retries.load(Ordering::Relaxed), 0);
}

/// An unreadable reply is retried, but the same one twice (a deterministic server) ends the
/// retries: seen with llama.cpp, whose self-evaluation replies repeated byte for byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_unreadable_reply_twice_stops_the_retries() {
    let mock = MockServer::start(|seen| match seen.index {
        0 => MockReply::text("{\"id\": 1}"),
        1 | 2 => MockReply::text("{\"id\": 2}"),
        _ => MockReply::text("{\"sufficient\": true}"),
    });
    let mut cfg = endpoint(&mock);
    cfg.max_retries = 5;
    let client = client_for(cfg);
    let mut req = request("Is it sufficient?");
    req.json = true;
    let readable = |c: &str| c.contains("sufficient");
    let e = client.chat_readable(&req, &readable).await.unwrap_err();
    assert_eq!(kind_of(&e), LlmErrorKind::Unparseable, "{e}");
    assert!(e.to_string().contains("after 3 attempts"), "{e}");
    assert!(e.to_string().contains("the same reply twice"), "{e}");
    assert_eq!(mock.chat_requests(), 3);
}

/// JSON cut at `max_tokens` (seen from llama.cpp's grammar-constrained JSON mode with a small
/// model): an unparseable error at once, since the same request is cut the same way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_cut_at_the_token_limit_is_unparseable_and_not_retried() {
    let mock = MockServer::start(|_| {
        MockReply::CutAtLimit("{\"label\": \"Correct\", \"reason\": \"the response na".into())
    });
    let client = client_for(endpoint(&mock));
    let mut req = request("Grade this, as JSON");
    req.json = true;
    let e = client.chat(&req).await.unwrap_err();
    assert_eq!(kind_of(&e), LlmErrorKind::Unparseable, "{e}");
    assert!(e.to_string().contains("cut at max_tokens"), "{e}");
    assert!(e.to_string().contains("after 1 attempt:"), "{e}");
    assert_eq!(mock.chat_requests(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_source_follows_reported_usage() {
    let mock = MockServer::start(|seen| {
        if seen.last_content() == "with" {
            MockReply::with_usage("hello world", 40, 2)
        } else {
            MockReply::text("hello world")
        }
    });
    let client = client_for(endpoint(&mock));
    let req = request("with");
    let r = client.chat(&req).await.unwrap();
    assert_eq!(r.token_bill(&req), (40, 2, TokenSource::Usage));
    let req = request("without");
    let r = client.chat(&req).await.unwrap();
    let (_, out, source) = r.token_bill(&req);
    assert_eq!((out, source), (2, TokenSource::Cl100k));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_key_is_sent_as_bearer_and_masked_in_errors() {
    // A server that echoes the key back, as some do in 401 messages.
    let mock = MockServer::start(|seen| MockReply::Status {
        code: 401,
        retry_after: None,
        message: format!("Incorrect API key provided: {:?}", seen.authorization),
    });
    let client = client_for(endpoint(&mock));
    assert!(!format!("{client:?}").contains(KEY));
    let e = client.chat(&request("hi")).await.unwrap_err();
    assert_eq!(mock.authorizations(), vec![Some(format!("Bearer {KEY}"))]);
    let text = format!("{e} {e:?}");
    assert!(!text.contains(KEY), "{text}");
    assert!(text.contains("***"), "{text}");
    assert!(!client.identity().contains(KEY));

    // Without a key no Authorization header is sent at all.
    let mock = MockServer::start(|_| MockReply::text("ok"));
    let client = OpenAiLlm::with_env(endpoint(&mock), &|_| None).unwrap();
    client.chat(&request("hi")).await.unwrap();
    assert_eq!(mock.authorizations(), vec![None]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_limit_is_respected() {
    let mock = MockServer::start(|_| MockReply::text("ok").delayed(Duration::from_millis(150)));
    let mut cfg = endpoint(&mock);
    cfg.max_in_flight = 2;
    let client = Arc::new(client_for(cfg));
    let mut set = tokio::task::JoinSet::new();
    for i in 0..8 {
        let c = client.clone();
        set.spawn(async move { c.chat(&request(&format!("q{i}"))).await });
    }
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
    }
    assert_eq!(mock.chat_requests(), 8);
    assert_eq!(mock.max_concurrent(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpm_limit_spaces_calls() {
    let mock = MockServer::start(|_| MockReply::text("ok"));
    let mut cfg = endpoint(&mock);
    cfg.rpm = Some(600); // 10 a second, a bucket of 10
    cfg.max_in_flight = 32;
    let client = Arc::new(client_for(cfg));
    let start = Instant::now();
    let mut set = tokio::task::JoinSet::new();
    for i in 0..15 {
        let c = client.clone();
        set.spawn(async move { c.chat(&request(&format!("q{i}"))).await });
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    // The bucket's 10 plus at most 1.5 refilled: never the whole burst.
    assert!(mock.chat_requests() <= 12, "{} sent", mock.chat_requests());
    while let Some(r) = set.join_next().await {
        r.unwrap().unwrap();
    }
    assert_eq!(mock.chat_requests(), 15);
    assert!(start.elapsed() >= Duration::from_millis(450));
}
