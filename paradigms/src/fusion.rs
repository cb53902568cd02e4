//! Rank fusion of two retrievers: RRF (HybridRAG), interleaving (the paper's public code) and
//! complexity-weighted RRF (EA-GraphRAG's fusion lane).

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
pub use bench_core::config::FusionMethod;
use bench_core::{ParadigmId, Retrieval, RetrievalQuery, RetrievedChunk, Retriever};

use crate::rag::read_with;
use crate::toolkit::{CallBounds, Registered};

/// HybridRAG in the registry: dense and graph fused with equal weights (`hybrid.fusion`,
/// `hybrid.rrf_k`), then one reader call.
pub const HYBRID: Registered = Registered {
    id: ParadigmId::Hybrid,
    faithfulness: false,
    build: |kit| {
        let h = &kit.config().hybrid;
        let fused = FusedRetriever::new(
            kit.dense(),
            kit.graph()?,
            Weighting::Equal(h.fusion),
            kit.complexity(),
        )
        .with_rrf_k(h.rrf_k);
        Ok(read_with(kit, ParadigmId::Hybrid, Arc::new(fused)))
    },
    cost: CallBounds::entities_then_read,
};

/// The EA-GraphRAG fusion in the registry: dense and graph weighted by the question's
/// complexity, then one reader call.
pub const FUSION: Registered = Registered {
    id: ParadigmId::Fusion,
    faithfulness: false,
    build: |kit| {
        let fused = FusedRetriever::new(
            kit.dense(),
            kit.graph()?,
            Weighting::Complexity,
            kit.complexity(),
        )
        .with_rrf_k(kit.config().hybrid.rrf_k);
        Ok(read_with(kit, ParadigmId::Fusion, Arc::new(fused)))
    },
    cost: CallBounds::entities_then_read,
};

/// RRF's default smoothing constant (Cormack et al. 2009; decisions.md; `hybrid.rrf_k`).
pub const RRF_K: f64 = 60.0;

/// Weighted RRF: score(c) = sum_i w_i / (k + rank_i(c)), ranks from 1; a chunk missing from a
/// list gets nothing from it. Ties keep first appearance (list order, then rank).
pub fn weighted_rrf(lists: &[(&[RetrievedChunk], f64)], k: f64) -> Vec<RetrievedChunk> {
    let mut scores: HashMap<&str, (f64, usize)> = HashMap::new();
    let mut order = 0usize;
    for (list, weight) in lists {
        let mut seen = std::collections::HashSet::new();
        for (i, c) in list.iter().enumerate() {
            if !seen.insert(c.chunk_id.as_str()) {
                continue; // a list votes once per chunk
            }
            let e = scores.entry(&c.chunk_id).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            e.0 += weight / (k + (i + 1) as f64);
        }
    }
    let mut out: Vec<(&str, f64, usize)> =
        scores.into_iter().map(|(c, (s, o))| (c, s, o)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    out.into_iter()
        .map(|(c, s, _)| RetrievedChunk {
            chunk_id: c.to_owned(),
            score: s as f32,
        })
        .collect()
}

/// Plain RRF with equal weights.
pub fn rrf(a: &[RetrievedChunk], b: &[RetrievedChunk], k: f64) -> Vec<RetrievedChunk> {
    weighted_rrf(&[(a, 1.0), (b, 1.0)], k)
}

/// Alternates between the lists, starting with `a`, dropping chunks already taken.
pub fn interleave(a: &[RetrievedChunk], b: &[RetrievedChunk]) -> Vec<RetrievedChunk> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(a.len() + b.len());
    for i in 0..a.len().max(b.len()) {
        for list in [a, b] {
            if let Some(c) = list.get(i) {
                if seen.insert(c.chunk_id.clone()) {
                    out.push(c.clone());
                }
            }
        }
    }
    out
}

/// How the fused retriever weighs its two inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Weighting {
    /// HybridRAG: the two lists count equally (RRF) or alternate (interleave).
    Equal(FusionMethod),
    /// Fusion: weights (1 - s) for the dense list and s for the graph list, s = s(q).
    Complexity,
}

/// A retriever that runs a dense and a graph retriever and fuses their rankings.
pub struct FusedRetriever {
    /// The dense retriever.
    pub dense: Arc<dyn Retriever>,
    /// The graph retriever.
    pub graph: Arc<dyn Retriever>,
    /// How the two rankings are weighted.
    pub weighting: Weighting,
    /// s(q) for the complexity weighting; unused otherwise.
    pub complexity: fn(&str) -> f64,
    /// RRF's k (`hybrid.rrf_k`); unused by interleaving.
    pub rrf_k: f64,
    name: String,
}

impl std::fmt::Debug for FusedRetriever {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FusedRetriever")
            .field("name", &self.name)
            .finish()
    }
}

impl FusedRetriever {
    /// A fused retriever over `dense` and `graph`, weighted by `weighting`.
    pub fn new(
        dense: Arc<dyn Retriever>,
        graph: Arc<dyn Retriever>,
        weighting: Weighting,
        complexity: fn(&str) -> f64,
    ) -> Self {
        let name = match weighting {
            Weighting::Equal(m) => format!("hybrid-{}", m.as_str()),
            Weighting::Complexity => "fusion-weighted-rrf".to_owned(),
        };
        FusedRetriever {
            dense,
            graph,
            weighting,
            complexity,
            rrf_k: RRF_K,
            name,
        }
    }

    /// RRF's k instead of the default, 60 (`RRF_K`, Cormack et al. 2009).
    pub fn with_rrf_k(mut self, k: f64) -> Self {
        self.rrf_k = k;
        self
    }
}

#[async_trait]
impl Retriever for FusedRetriever {
    fn name(&self) -> &str {
        &self.name
    }

    async fn retrieve(&self, query: RetrievalQuery<'_>) -> bench_core::Result<Retrieval> {
        let d = self.dense.retrieve(query).await?;
        let g = self.graph.retrieve(query).await?;
        let (ranked, s) = match self.weighting {
            Weighting::Equal(FusionMethod::Rrf) => (rrf(&d.ranked, &g.ranked, self.rrf_k), None),
            Weighting::Equal(FusionMethod::Interleave) => (interleave(&d.ranked, &g.ranked), None),
            Weighting::Complexity => {
                let s = (self.complexity)(query.text).clamp(0.0, 1.0);
                (
                    weighted_rrf(&[(&d.ranked, 1.0 - s), (&g.ranked, s)], self.rrf_k),
                    Some(s),
                )
            }
        };
        Ok(Retrieval {
            ranked,
            tokens_in: d.tokens_in + g.tokens_in,
            tokens_out: d.tokens_out + g.tokens_out,
            trace: serde_json::json!({
                "fusion": self.name,
                "complexity_score": s,
                "dense_candidates": d.ranked.len(),
                "graph_candidates": g.ranked.len(),
                "graph": g.trace,
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(ids: &[&str]) -> Vec<RetrievedChunk> {
        ids.iter()
            .map(|id| RetrievedChunk {
                chunk_id: (*id).into(),
                score: 0.0,
            })
            .collect()
    }

    fn ids(v: &[RetrievedChunk]) -> Vec<&str> {
        v.iter().map(|c| c.chunk_id.as_str()).collect()
    }

    #[test]
    fn rrf_matches_hand_computed_scores() {
        // a: 1/61 + 1/63; b: 1/62 + 1/61; c: 1/63; d: 1/62.
        let fused = rrf(&list(&["a", "b", "c"]), &list(&["b", "d", "a"]), 60.0);
        assert_eq!(ids(&fused), ["b", "a", "d", "c"]);
        let b = 1.0 / 62.0 + 1.0 / 61.0;
        assert!((f64::from(fused[0].score) - b).abs() < 1e-7);
        assert!((f64::from(fused[3].score) - 1.0 / 63.0).abs() < 1e-7);
    }

    #[test]
    fn rrf_ties_keep_first_appearance_and_lists_vote_once() {
        let fused = rrf(&list(&["x", "x", "y"]), &list(&["y", "x"]), 60.0);
        // x: 1/61 + 1/62, y: 1/63 + 1/61 → x first; the repeated x in list one adds nothing.
        assert_eq!(ids(&fused), ["x", "y"]);
        let tie = rrf(&list(&["p"]), &list(&["q"]), 60.0);
        assert_eq!(ids(&tie), ["p", "q"]);
    }

    #[test]
    fn weighted_rrf_moves_with_the_complexity_score() {
        let (d, g) = (list(&["d1", "d2"]), list(&["g1", "g2"]));
        let simple = weighted_rrf(&[(&d, 0.9), (&g, 0.1)], 60.0);
        assert_eq!(ids(&simple), ["d1", "d2", "g1", "g2"]);
        let complex = weighted_rrf(&[(&d, 0.1), (&g, 0.9)], 60.0);
        assert_eq!(ids(&complex), ["g1", "g2", "d1", "d2"]);
        // s = 0 is the dense list alone (graph chunks trail with score 0).
        let dense_only = weighted_rrf(&[(&d, 1.0), (&g, 0.0)], 60.0);
        assert_eq!(ids(&dense_only)[..2], ["d1", "d2"]);
        assert_eq!(dense_only[2].score, 0.0);
    }

    #[test]
    fn interleave_alternates_and_dedups() {
        let out = interleave(&list(&["a", "b", "c", "e"]), &list(&["b", "d"]));
        assert_eq!(ids(&out), ["a", "b", "d", "c", "e"]);
        assert!(interleave(&[], &[]).is_empty());
    }

    /// A retriever that returns a fixed ranking.
    struct Fixed(Vec<RetrievedChunk>);

    #[async_trait]
    impl Retriever for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        async fn retrieve(&self, _: RetrievalQuery<'_>) -> bench_core::Result<Retrieval> {
            Ok(Retrieval {
                ranked: self.0.clone(),
                ..Default::default()
            })
        }
    }

    /// `hybrid.rrf_k` reaches HybridRAG's ranking: p is first in the dense list only, q is 13th
    /// in both; 1/(k+1) beats 2/(k+13) exactly when k < 11.
    #[tokio::test]
    async fn rrf_k_changes_the_hybrid_ranking() {
        let mut dense: Vec<String> = vec!["p".into()];
        dense.extend((1..=11).map(|i| format!("d{i}")));
        dense.push("q".into());
        let mut graph: Vec<String> = (1..=12).map(|i| format!("g{i}")).collect();
        graph.push("q".into());
        let as_list = |v: &[String]| list(&v.iter().map(String::as_str).collect::<Vec<_>>());
        let order = |k: f64| {
            let fused = FusedRetriever::new(
                Arc::new(Fixed(as_list(&dense))),
                Arc::new(Fixed(as_list(&graph))),
                Weighting::Equal(FusionMethod::Rrf),
                |_| 0.5,
            )
            .with_rrf_k(k);
            async move {
                let r = fused
                    .retrieve(RetrievalQuery {
                        text: "x",
                        vector: None,
                    })
                    .await
                    .unwrap();
                let pos = |id: &str| r.ranked.iter().position(|c| c.chunk_id == id).unwrap();
                (pos("p"), pos("q"))
            }
        };
        let (p, q) = order(RRF_K).await;
        assert!(q < p, "k = 60: q ({q}) above p ({p})");
        let (p, q) = order(10.0).await;
        assert!(p < q, "k = 10: p ({p}) above q ({q})");
    }
}
