//! The graph's data: triplets, the CSR adjacency and the knowledge graph (a leaf: the builders
//! and extractors beside it name these, and nothing here names them).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// One (subject, relation, object) fact as extracted from a chunk.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Triplet {
    /// The entity the fact is about.
    pub subject: String,
    /// What links subject and object, e.g. `born in`.
    pub relation: String,
    /// The other entity.
    pub object: String,
}

/// A triplet attached to the graph: node ids of its ends, its relation id and source chunk row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphTriplet {
    /// Node id of the subject.
    pub u: u32,
    /// Node id of the object.
    pub v: u32,
    /// Index into [`KnowledgeGraph::relations`].
    pub relation: u32,
    /// Row of the source chunk in the corpus's chunk list (`Chunk::index`).
    pub chunk: u32,
}

/// Undirected adjacency in compressed sparse row form: the neighbours of node `i` are
/// `neighbors[offsets[i]..offsets[i + 1]]`, sorted ascending, each undirected edge stored in
/// both directions, no self-loops, no parallel edges.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Csr {
    /// `node_count() + 1` row starts into `neighbors`.
    pub offsets: Vec<u32>,
    /// Every node's neighbours, one run per node.
    pub neighbors: Vec<u32>,
}

impl Csr {
    /// Builds the simple undirected graph on `n` nodes from an edge list (either direction,
    /// repeats and self-loops allowed in the input and removed here).
    pub fn from_edges(n: usize, edges: impl IntoIterator<Item = (u32, u32)>) -> Csr {
        let mut pairs: Vec<(u32, u32)> = Vec::new();
        for (a, b) in edges {
            if a != b {
                pairs.push((a, b));
                pairs.push((b, a));
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let mut offsets = vec![0u32; n + 1];
        for &(a, _) in &pairs {
            offsets[a as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        Csr {
            offsets,
            neighbors: pairs.into_iter().map(|(_, b)| b).collect(),
        }
    }

    /// Nodes, isolated ones included.
    pub fn node_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Undirected edges.
    pub fn edge_count(&self) -> usize {
        self.neighbors.len() / 2
    }

    /// The neighbours of `node`, ascending.
    pub fn neighbors(&self, node: u32) -> &[u32] {
        let (a, b) = (
            self.offsets[node as usize] as usize,
            self.offsets[node as usize + 1] as usize,
        );
        &self.neighbors[a..b]
    }

    /// Neighbours of `node`.
    pub fn degree(&self, node: u32) -> usize {
        self.neighbors(node).len()
    }
}

/// A corpus's knowledge graph.
#[derive(Debug, Clone, Default)]
pub struct KnowledgeGraph {
    /// Normalised entity names; the index is the node id.
    pub nodes: Vec<String>,
    /// Node id of each name in `nodes`.
    pub node_ids: HashMap<String, u32>,
    /// Distinct relation strings; `GraphTriplet::relation` indexes this.
    pub relations: Vec<String>,
    /// Every triplet with its source chunk (several may share an edge).
    pub triplets: Vec<GraphTriplet>,
    /// The simple undirected graph of the triplets' ends.
    pub adjacency: Csr,
}

impl KnowledgeGraph {
    /// The node id of a normalised entity name.
    pub fn node(&self, name: &str) -> Option<u32> {
        self.node_ids.get(name).copied()
    }
}
