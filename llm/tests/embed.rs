//! `EndpointEmbedder` against the mock's `/v1/embeddings`: called from async tasks, blocking threads and plain threads; batching, normalisation, retries, dimension checks and token counts.

use std::sync::Arc;

use bench_core::{Embedder, LlmErrorKind, TokenSource};
use llm::mock::{bag_of_words, MockOptions, MockReply, MockServer};
use llm::{EndpointConfig, EndpointEmbedder};

const DIM: usize = 16;

fn mock(options: MockOptions) -> MockServer {
    MockServer::start_with(
        MockOptions {
            models: vec!["embed-model".into()],
            embedding_dim: Some(DIM),
            ..options
        },
        |_| MockReply::text("unused"),
    )
}

fn config(mock: &MockServer, batch: usize) -> EndpointConfig {
    let mut c = EndpointConfig::new(mock.base_url(), "embed-model");
    c.batch_size = Some(batch);
    c.backoff_base_ms = 1;
    c.backoff_max_ms = 5;
    c.max_retries = 2;
    c
}

fn connect(mock: &MockServer, batch: usize) -> EndpointEmbedder {
    EndpointEmbedder::connect(config(mock, batch), &|_| None, None).unwrap()
}

const TEXTS: [&str; 5] = [
    "Alan Turing was born in London",
    "the Enigma machine",
    "London is a city",
    "a fourth text",
    "and a fifth",
];

/// The mock's vector of `t`, unit length: what the adapter must return.
fn expected(t: &str) -> Vec<f32> {
    let v = bag_of_words(t, DIM);
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.into_iter().map(|x| x / n).collect()
}

fn check_vectors(e: &bench_core::Embeddings) {
    assert_eq!((e.dim, e.len()), (DIM, TEXTS.len()));
    for (row, t) in e.rows().zip(TEXTS) {
        let want = expected(t);
        for (a, b) in row.iter().zip(&want) {
            assert!((a - b).abs() < 1e-6, "{t}: {row:?} vs {want:?}");
        }
        let norm: f32 = row.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn works_from_an_async_task_and_from_spawn_blocking_on_the_multi_thread_runtime() {
    let mock = mock(MockOptions::default());
    let e = Arc::new(connect(&mock, 2));
    assert_eq!(e.dim(), DIM);
    assert_eq!(e.name(), format!("embed-model@{}", mock.base_url()));
    // Directly inside the async test body, and inside a spawned task.
    check_vectors(&e.embed(&TEXTS).unwrap());
    let e2 = e.clone();
    let from_task = tokio::spawn(async move { e2.embed(&TEXTS) })
        .await
        .unwrap()
        .unwrap();
    check_vectors(&from_task);
    let e3 = e.clone();
    let from_blocking = tokio::task::spawn_blocking(move || e3.embed(&TEXTS))
        .await
        .unwrap()
        .unwrap();
    check_vectors(&from_blocking);
    // One probe, then 3 requests (2 + 2 + 1 texts) per call.
    assert_eq!(mock.embedding_requests(), 1 + 3 * 3);
    let u = e.usage();
    assert_eq!(u.requests, 10);
    assert_eq!(u.texts, 1 + 3 * 5);
    assert_eq!(u.tokens, mock.embedding_tokens());
    assert_eq!(u.source(), TokenSource::Usage);
    let probe = bench_core::tokens::count("dimension probe");
    let texts: u64 = TEXTS.iter().map(|t| bench_core::tokens::count(t)).sum();
    assert_eq!(u.tokens, probe + 3 * texts);
}

#[tokio::test]
async fn works_on_a_current_thread_runtime_and_from_plain_threads() {
    let mock = mock(MockOptions::default());
    let e = Arc::new(connect(&mock, 64));
    check_vectors(&e.embed(&TEXTS).unwrap());
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let e = e.clone();
            std::thread::spawn(move || e.embed(&TEXTS).unwrap())
        })
        .collect();
    for h in handles {
        check_vectors(&h.join().unwrap());
    }
    assert_eq!(mock.embedding_requests(), 1 + 4);
    // An empty call sends nothing.
    assert_eq!(e.embed(&[]).unwrap().len(), 0);
    assert_eq!(mock.embedding_requests(), 5);
}

#[test]
fn a_failed_request_is_retried_by_the_client() {
    let mock = mock(MockOptions {
        embedding_faults: vec![(1, 500), (2, 429)],
        ..MockOptions::default()
    });
    let e = connect(&mock, 64);
    check_vectors(&e.embed(&TEXTS).unwrap());
    assert_eq!(mock.embedding_requests(), 4);
    assert_eq!(
        e.client_stats()
            .retries
            .load(std::sync::atomic::Ordering::SeqCst),
        2
    );
    // Failed attempts are not billed.
    assert_eq!(e.usage().requests, 2);
    assert_eq!(e.usage().tokens, mock.embedding_tokens());
}

#[test]
fn a_changed_dimension_is_a_clear_error() {
    let mock = mock(MockOptions {
        embedding_wrong_dim_from: Some(2),
        ..MockOptions::default()
    });
    let e = connect(&mock, 64);
    e.embed(&TEXTS).unwrap();
    let err = e.embed(&TEXTS).unwrap_err();
    let text = err.to_string();
    assert!(
        matches!(
            err,
            bench_core::BenchError::Llm {
                kind: LlmErrorKind::Fatal,
                ..
            }
        ),
        "{text}"
    );
    for part in [
        "embed-model".to_owned(),
        mock.base_url(),
        format!("dimension {}", DIM + 1),
        format!("dimension {DIM}"),
    ] {
        assert!(text.contains(&part), "{part:?} missing from: {text}");
    }
}

#[test]
fn the_dimension_is_probed_once_and_then_read_from_the_record() {
    let mock = mock(MockOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let first = EndpointEmbedder::connect(config(&mock, 8), &|_| None, Some(dir.path())).unwrap();
    assert_eq!((first.dim(), mock.embedding_requests()), (DIM, 1));
    let second = EndpointEmbedder::connect(config(&mock, 8), &|_| None, Some(dir.path())).unwrap();
    assert_eq!((second.dim(), mock.embedding_requests()), (DIM, 1));
    assert_eq!(second.usage().requests, 0);
    // A different model is another identity: probed again.
    let mut other = config(&mock, 8);
    other.model = "missing-model".into();
    let err = EndpointEmbedder::connect(other, &|_| None, Some(dir.path())).unwrap_err();
    assert!(err.to_string().contains("missing-model"), "{err}");
}

#[test]
fn usage_is_taken_in_deltas() {
    let mock = mock(MockOptions::default());
    let e = connect(&mock, 64);
    let first = e.take_unrecorded();
    assert_eq!((first.requests, first.texts), (1, 1));
    e.embed(&TEXTS).unwrap();
    let second = e.take_unrecorded();
    assert_eq!((second.requests, second.texts), (1, 5));
    assert_eq!(e.take_unrecorded().requests, 0);
}
