//! The corpus indicators as the binary stores and prints them: the key they are stored under,
//! the structure metrics of a built knowledge graph, and their two-column table.

use metrics::corpus::graph_metrics;
use serde_json::Value;

/// The six indicators of stored flat metrics as a two-column table.
pub fn render_indicators(flat: &Value) -> String {
    let mut out = String::new();
    for bench_core::routing::CorpusIndicator { key, label, .. } in
        bench_core::routing::CORPUS_INDICATORS
    {
        let v = flat.get(key).map_or_else(|| "n/a".to_owned(), format_value);
        out.push_str(&format!("  {label:<28} {v}\n"));
    }
    out
}

/// The structure metrics of a built knowledge graph.
pub fn knowledge_graph_metrics(g: &corpora::KnowledgeGraph) -> metrics::corpus::GraphMetrics {
    let mut list = metrics::corpus::EdgeList::new();
    for name in &g.nodes {
        list.add_node(name);
    }
    for t in &g.triplets {
        list.push(
            &g.nodes[t.u as usize],
            &g.relations[t.relation as usize],
            &g.nodes[t.v as usize],
        );
    }
    graph_metrics(&list)
}

/// The key corpus metrics are stored under: the graph extractor's and the encoder's identities.
pub fn configuration(extractor: Option<&corpora::ExtractorId>, encoder: &str) -> String {
    match extractor {
        Some(id) => format!(
            "extractor={}:{}:{}; encoder={encoder}",
            id.extractor, id.model, id.prompt_hash
        ),
        None => format!("extractor=none; encoder={encoder}"),
    }
}

/// A metric value as printed: tiny values in scientific notation.
pub fn format_value(value: &Value) -> String {
    match value {
        Value::Null => "n/a".to_owned(),
        Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            // Tiny densities would print as 0.000000 in fixed notation.
            if x != 0.0 && x.abs() < 1e-3 {
                format!("{x:.6e}")
            } else {
                format!("{x:.6}")
            }
        }
        other => other.to_string(),
    }
}
