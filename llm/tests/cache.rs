//! `CachedLlm` over the mock server and a SQLite file: reruns make no calls, failures are not
//! cached, and the key appears nowhere in the database.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bench_core::{ChatMessage, ChatRequest, Llm};
use llm::mock::{MockReply, MockServer};
use llm::{CachedLlm, EndpointConfig, OpenAiLlm};
use store::Store;

const KEY: &str = "sk-cache-5b8e21f3a9-DO-NOT-LEAK";

fn client(mock: &MockServer) -> OpenAiLlm {
    let mut c = EndpointConfig::new(mock.base_url(), "mock-model");
    c.timeout_s = 2;
    c.max_retries = 1;
    c.backoff_base_ms = 5;
    c.backoff_max_ms = 10;
    OpenAiLlm::with_env(c, &|k| (k == "OPENAI_API_KEY").then(|| KEY.to_owned())).unwrap()
}

fn request(text: &str, temperature: f32) -> ChatRequest {
    ChatRequest {
        messages: vec![ChatMessage::user(text)],
        temperature,
        max_tokens: 30,
        json: false,
    }
}

/// Every byte of the database and its WAL and shared-memory files.
fn db_bytes(dir: &std::path::Path) -> Vec<u8> {
    let mut all = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        all.extend(std::fs::read(e.unwrap().path()).unwrap());
    }
    all
}

fn contains(hay: &[u8], needle: &str) -> bool {
    hay.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_makes_zero_calls_and_bills_the_same_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let mock = MockServer::start(|seen| {
        MockReply::with_usage(format!("answer to {}", seen.last_content()), 11, 3)
    });
    let questions = ["q1", "q2", "q3"];
    let first = {
        let cached = CachedLlm::new(client(&mock), Store::open(&db).await.unwrap(), "v1");
        let mut bills = Vec::new();
        for q in questions {
            let req = request(q, 0.3);
            let r = cached.chat(&req).await.unwrap();
            bills.push((r.content.clone(), r.token_bill(&req)));
        }
        // The same call again within the run is a hit too.
        cached.chat(&request("q1", 0.3)).await.unwrap();
        assert_eq!((cached.hits(), cached.misses()), (1, 3));
        bills
    };
    assert_eq!(mock.chat_requests(), 3);

    // A new process: new store handle, new client.
    let cached = CachedLlm::new(client(&mock), Store::open(&db).await.unwrap(), "v1");
    for (q, expected) in questions.iter().zip(&first) {
        let req = request(q, 0.3);
        let r = cached.chat(&req).await.unwrap();
        assert_eq!(&(r.content.clone(), r.token_bill(&req)), expected);
    }
    assert_eq!(mock.chat_requests(), 3, "the rerun called the endpoint");
    assert_eq!(cached.hits(), 3);

    // Sampling parameters and the prompt version are part of the key.
    cached.chat(&request("q1", 0.7)).await.unwrap();
    assert_eq!(mock.chat_requests(), 4);
    let bumped = CachedLlm::new(client(&mock), Store::open(&db).await.unwrap(), "v2");
    bumped.chat(&request("q1", 0.3)).await.unwrap();
    assert_eq!(mock.chat_requests(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_not_cached_and_the_key_is_nowhere() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let fail_first = Arc::new(AtomicUsize::new(0));
    let f = fail_first.clone();
    let mock = MockServer::start(move |seen| {
        if f.fetch_add(1, Ordering::SeqCst) == 0 {
            // Fatal, and echoing the key as some servers do.
            MockReply::Status {
                code: 401,
                retry_after: None,
                message: format!("bad key {:?}", seen.authorization),
            }
        } else {
            MockReply::text("ok now")
        }
    });
    let store = Store::open(&db).await.unwrap();
    let cached = CachedLlm::new(client(&mock), store.clone(), "v1");
    let e = cached.chat(&request("q", 0.0)).await.unwrap_err();
    assert!(!format!("{e} {e:?}").contains(KEY), "{e}");
    assert_eq!(store.llm_cache_len().await.unwrap(), 0);

    let r = cached.chat(&request("q", 0.0)).await.unwrap();
    assert_eq!(r.content, "ok now");
    assert_eq!(r.usage, None);
    assert_eq!(mock.chat_requests(), 2);
    cached.chat(&request("q", 0.0)).await.unwrap();
    assert_eq!(mock.chat_requests(), 2);
    assert_eq!(store.llm_cache_len().await.unwrap(), 1);

    // The key was sent ...
    assert!(mock
        .authorizations()
        .iter()
        .all(|a| a.as_deref() == Some(&format!("Bearer {KEY}")[..])));
    // ... and stored nowhere.
    let bytes = db_bytes(dir.path());
    assert!(contains(&bytes, "ok now"), "the grep itself works");
    assert!(!contains(&bytes, KEY));
    drop(cached);
    store.close().await;
    assert!(!contains(&db_bytes(dir.path()), KEY));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_reply_is_retried_and_never_cached() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(|_| MockReply::text("no JSON here"));
    let store = Store::open(&dir.path().join("r.sqlite")).await.unwrap();
    let cached = CachedLlm::new(client(&mock), store.clone(), "v1");
    let mut req = request("json please", 0.0);
    req.json = true;
    let is_object = |c: &str| c.trim_start().starts_with('{');
    for _ in 0..2 {
        let e = cached.chat_readable(&req, &is_object).await.unwrap_err();
        assert!(e.to_string().contains("no JSON here"), "{e}");
    }
    assert_eq!(mock.chat_requests(), 4, "two calls, one retry each");
    assert_eq!(store.llm_cache_len().await.unwrap(), 0);
}

/// Issue #20 item 8, through the cache: prose to a JSON request that the caller can read (a
/// judge's bare "Correct") is taken at the first attempt, cached, and served on the rerun.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prose_the_caller_reads_is_taken_at_once_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    let mock = MockServer::start(|seen| {
        assert!(seen.json_mode);
        MockReply::with_usage("Correct", 30, 1)
    });
    let store = Store::open(&dir.path().join("r.sqlite")).await.unwrap();
    let cached = CachedLlm::new(client(&mock), store.clone(), "v1");
    let mut req = request("grade this as JSON", 0.0);
    req.json = true;
    let is_label = |c: &str| c.trim() == "Correct";
    for _ in 0..2 {
        let r = cached.chat_readable(&req, &is_label).await.unwrap();
        assert_eq!(r.content, "Correct");
    }
    assert_eq!(mock.chat_requests(), 1);
    assert_eq!((cached.hits(), cached.misses()), (1, 1));
    assert_eq!(store.llm_cache_len().await.unwrap(), 1);
}

/// A server whose replies to one request differ, as llama.cpp's do under batching: the i-th
/// request gets "reply i", after `delay_ms(i)`.
fn numbered_mock(delay_ms: fn(usize) -> u64) -> MockServer {
    let counter = Arc::new(AtomicUsize::new(0));
    MockServer::start(move |_| {
        let i = counter.fetch_add(1, Ordering::SeqCst);
        MockReply::with_usage(format!("reply {i}"), 5, 2)
            .delayed(std::time::Duration::from_millis(delay_ms(i)))
    })
}

/// A server whose replies to one request differ (llama.cpp's batching does this at temperature
/// 0): identical requests in flight together are sent once, so every caller, and a rerun from
/// the cache, reads the same reply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_concurrent_requests_are_sent_once_and_read_the_same_reply() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let mock = numbered_mock(|_| 50);
    let cached = Arc::new(CachedLlm::new(
        client(&mock),
        Store::open(&db).await.unwrap(),
        "v1",
    ));
    let calls: Vec<_> = (0..4)
        .map(|_| {
            let c = Arc::clone(&cached);
            tokio::spawn(async move { c.chat(&request("same", 0.0)).await.unwrap().content })
        })
        .collect();
    let mut replies = Vec::new();
    for c in calls {
        replies.push(c.await.unwrap());
    }
    assert_eq!(mock.chat_requests(), 1, "{replies:?}");
    assert!(replies.iter().all(|r| r == "reply 0"), "{replies:?}");
    assert_eq!((cached.hits(), cached.misses()), (3, 1));
    let rerun = CachedLlm::new(client(&mock), Store::open(&db).await.unwrap(), "v1");
    assert_eq!(
        rerun.chat(&request("same", 0.0)).await.unwrap().content,
        "reply 0"
    );
}

/// Another process stored its reply first: this one's is dropped for the stored one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_that_lost_the_race_is_replaced_by_the_stored_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    // The first reply is slow, so the second process stores its reply first.
    let mock = numbered_mock(|i| if i == 0 { 400 } else { 0 });
    let a = CachedLlm::new(client(&mock), Store::open(&db).await.unwrap(), "v1");
    let b = CachedLlm::new(client(&mock), Store::open(&db).await.unwrap(), "v1");
    let req = request("same", 0.0);
    let slow = a.chat(&req);
    let fast = async {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        b.chat(&req).await
    };
    let (slow, fast) = tokio::join!(slow, fast);
    assert_eq!(mock.chat_requests(), 2);
    assert_eq!(fast.unwrap().content, "reply 1");
    assert_eq!(
        slow.unwrap().content,
        "reply 1",
        "the later writer keeps its own reply"
    );
}
