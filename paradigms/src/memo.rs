//! A retriever whose results are computed once per query and shared by the paradigms built on it.
//!
//! NaiveRAG, HybridRAG, Fusion and IterativeRAG's first round all rank the question's vector
//! densely; GraphRAG, HybridRAG, Fusion and IterativeGraphRAG's first round all link the same
//! question entities and run the same PPR. Retrieval is deterministic, so the first paradigm to ask
//! computes and the others read the same `Retrieval`. Concurrent askers of one key wait for the
//! one computation (a `OnceCell` per key); a failed computation is not kept, so the next asker
//! retries. The cache keeps the most recent `capacity` keys: a run holds only the questions in
//! flight.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bench_core::{Retrieval, RetrievalQuery, Retriever};
use tokio::sync::OnceCell;

/// The query text and the bits of its vector (when given): equal keys, equal retrievals.
type Key = (String, Option<Vec<u32>>);

/// One cell per key, and the keys oldest first (for eviction).
type Cells = (HashMap<Key, Arc<OnceCell<Retrieval>>>, VecDeque<Key>);

/// Memoises a retriever's results by query.
pub struct MemoRetriever {
    inner: Arc<dyn Retriever>,
    capacity: usize,
    cells: Mutex<Cells>,
}

impl std::fmt::Debug for MemoRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoRetriever")
            .field("inner", &self.inner.name())
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl MemoRetriever {
    /// Shares `inner`'s results for the `capacity` most recent distinct queries.
    pub fn new(inner: Arc<dyn Retriever>, capacity: usize) -> Self {
        MemoRetriever {
            inner,
            capacity: capacity.max(1),
            cells: Mutex::new((HashMap::new(), VecDeque::new())),
        }
    }

    fn cell(&self, key: Key) -> Arc<OnceCell<Retrieval>> {
        let mut guard = self.cells.lock().expect("not poisoned");
        let (map, order) = &mut *guard;
        if let Some(c) = map.get(&key) {
            return c.clone();
        }
        let c = Arc::new(OnceCell::new());
        map.insert(key.clone(), c.clone());
        order.push_back(key);
        while order.len() > self.capacity {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
        c
    }
}

#[async_trait]
impl Retriever for MemoRetriever {
    fn name(&self) -> &str {
        self.inner.name()
    }

    async fn retrieve(&self, query: RetrievalQuery<'_>) -> bench_core::Result<Retrieval> {
        let key = (
            query.text.to_owned(),
            query
                .vector
                .map(|v| v.iter().map(|x| x.to_bits()).collect()),
        );
        let cell = self.cell(key);
        cell.get_or_try_init(|| self.inner.retrieve(query))
            .await
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bench_core::RetrievedChunk;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Ranks one chunk named after the query; counts its calls; fails on "fail".
    struct Counting(AtomicUsize);

    #[async_trait]
    impl Retriever for Counting {
        fn name(&self) -> &str {
            "counting"
        }
        async fn retrieve(&self, q: RetrievalQuery<'_>) -> bench_core::Result<Retrieval> {
            self.0.fetch_add(1, Ordering::SeqCst);
            if q.text == "fail" {
                return Err(bench_core::BenchError::Other("no".into()));
            }
            Ok(Retrieval {
                ranked: vec![RetrievedChunk {
                    chunk_id: format!("{}:{}", q.text, q.vector.map_or(0, <[f32]>::len)),
                    score: 1.0,
                }],
                ..Retrieval::default()
            })
        }
    }

    fn q<'a>(text: &'a str, vector: Option<&'a [f32]>) -> RetrievalQuery<'a> {
        RetrievalQuery { text, vector }
    }

    #[tokio::test]
    async fn same_query_computes_once_and_returns_the_same_result() {
        let inner = Arc::new(Counting(AtomicUsize::new(0)));
        let m = MemoRetriever::new(inner.clone(), 2);
        let v = [0.5f32, 0.25];
        let a = m.retrieve(q("x", Some(&v))).await.unwrap();
        let b = m.retrieve(q("x", Some(&v))).await.unwrap();
        assert_eq!(a, b);
        assert_eq!(inner.0.load(Ordering::SeqCst), 1);
        // Another vector or none is another query.
        let c = m.retrieve(q("x", None)).await.unwrap();
        assert_eq!(c.ranked[0].chunk_id, "x:0");
        let w = [0.5f32, 0.3];
        m.retrieve(q("x", Some(&w))).await.unwrap();
        assert_eq!(inner.0.load(Ordering::SeqCst), 3);
        // Capacity 2: the first key was evicted and is computed again.
        m.retrieve(q("x", Some(&v))).await.unwrap();
        assert_eq!(inner.0.load(Ordering::SeqCst), 4);
        assert_eq!(m.name(), "counting");
    }

    #[tokio::test]
    async fn a_failure_is_not_kept() {
        let inner = Arc::new(Counting(AtomicUsize::new(0)));
        let m = MemoRetriever::new(inner.clone(), 8);
        assert!(m.retrieve(q("fail", None)).await.is_err());
        assert!(m.retrieve(q("fail", None)).await.is_err());
        assert_eq!(inner.0.load(Ordering::SeqCst), 2);
    }
}
