//! Corpus metrics: graph structure and embedding-space semantics, as metric-fixtures/README.md defines them.

mod bf16;
pub mod embedding;
mod error;
pub mod graph;
pub mod knn;
mod rows;
mod screen;
mod sum;

use serde::Serialize;
use serde_json::{Map, Value};

pub use embedding::{embedding_metrics, read_f32_file, EmbeddingMetrics};
pub use error::MetricsError;
pub use graph::{graph_metrics, parse_edges_tsv, EdgeList, GraphMetrics};

/// The metrics of one corpus; either half may be absent when its input was not given.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CorpusMetrics {
    /// Metrics of the knowledge graph, when one was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph: Option<GraphMetrics>,
    /// Metrics of the chunk embeddings, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbeddingMetrics>,
}

impl CorpusMetrics {
    /// Flat map with dotted keys (`graph.nodes`, `embeddings.twonn_mle`,
    /// `embeddings.dispersion_unitrow_centroid.mean`, ...), the key names of the fixtures' expected.json.
    pub fn flat_map(&self) -> Map<String, Value> {
        let mut out = Map::new();
        // Serialising a struct of numbers cannot fail.
        let value = serde_json::to_value(self).expect("metrics serialise to JSON");
        flatten("", &value, &mut out);
        out
    }
}

/// Flattens nested JSON objects into `prefix.key` entries (non-object values are leaves).
pub fn flatten(prefix: &str, value: &Value, out: &mut Map<String, Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        leaf => {
            out.insert(prefix.to_owned(), leaf.clone());
        }
    }
}
