//! Graph structure metrics over a knowledge-graph edge list (simple, undirected, self-loops dropped).

use std::io::BufRead;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::error::MetricsError;
use super::sum::neumaier_sum;

/// One parsed triple, as interned ids into [`EdgeList::node_names`] and [`EdgeList::relation_names`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Triple {
    /// The subject node's id.
    pub head: u32,
    /// The relation's id.
    pub relation: u32,
    /// The object node's id.
    pub tail: u32,
}

/// Parsed triples with interned node and relation ids (ids follow first appearance, head before tail).
#[derive(Debug, Clone, Default)]
pub struct EdgeList {
    /// Node names by id.
    pub node_names: Vec<String>,
    /// Relation names by id.
    pub relation_names: Vec<String>,
    /// Every well-formed line, in file order: repeats and self-loops included.
    pub triples: Vec<Triple>,
    /// Lines skipped by [`parse_edges_tsv_lenient`]; always 0 from the strict parser.
    pub malformed_lines: usize,
    node_ids: Interner,
    relation_ids: Interner,
}

impl EdgeList {
    /// An empty edge list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Builds an edge list from `(head, relation, tail)` string triples.
    pub fn from_triples<I, S>(triples: I) -> Self
    where
        I: IntoIterator<Item = (S, S, S)>,
        S: AsRef<str>,
    {
        let mut list = Self::new();
        for (h, r, t) in triples {
            list.push(h.as_ref(), r.as_ref(), t.as_ref());
        }
        list
    }

    /// Adds one triple, interning its strings.
    pub fn push(&mut self, head: &str, relation: &str, tail: &str) {
        let head = self.node_ids.intern(&mut self.node_names, head);
        let tail = self.node_ids.intern(&mut self.node_names, tail);
        let relation = self.relation_ids.intern(&mut self.relation_names, relation);
        self.triples.push(Triple {
            head,
            relation,
            tail,
        });
    }

    /// Adds a node that takes part in no triple (it still counts in |V|).
    pub fn add_node(&mut self, name: &str) -> u32 {
        self.node_ids.intern(&mut self.node_names, name)
    }

    /// Number of nodes, isolated ones included.
    pub fn node_count(&self) -> usize {
        self.node_names.len()
    }
}

/// Ids of interned strings, keyed by the strings in the names vector they index: each name is
/// stored once, and a lookup hashes once (foldhash) and compares against that one copy. With
/// `HashMap<String, u32>` (SipHash, every name stored twice) parsing MuSiQue-sized triples took
/// about twice as long (`perf_metrics`' "parse TSV" stage: 0.15-0.17 s against 0.07-0.08 s).
#[derive(Debug, Clone, Default)]
struct Interner {
    table: hashbrown::HashTable<u32>,
    hasher: hashbrown::DefaultHashBuilder,
}

impl Interner {
    fn intern(&mut self, names: &mut Vec<String>, s: &str) -> u32 {
        use std::hash::BuildHasher as _;
        let Interner { table, hasher } = self;
        let hash = hasher.hash_one(s);
        let entry = table.entry(
            hash,
            |&id| names[id as usize] == s,
            |&id| hasher.hash_one(names[id as usize].as_str()),
        );
        match entry {
            hashbrown::hash_table::Entry::Occupied(e) => *e.get(),
            hashbrown::hash_table::Entry::Vacant(e) => {
                let id = u32::try_from(names.len()).expect("more than u32::MAX distinct strings");
                names.push(s.to_owned());
                e.insert(id);
                id
            }
        }
    }
}

/// Parses `head<TAB>relation<TAB>tail` lines; any malformed line is an error naming file and line.
/// Empty lines are skipped; a trailing `\r` is removed.
pub fn parse_edges_tsv<R: BufRead>(reader: R, file_name: &str) -> Result<EdgeList, MetricsError> {
    parse(reader, file_name, true)
}

/// Like [`parse_edges_tsv`] but skips and counts malformed lines (invalid UTF-8 is still an error).
pub fn parse_edges_tsv_lenient<R: BufRead>(
    reader: R,
    file_name: &str,
) -> Result<EdgeList, MetricsError> {
    parse(reader, file_name, false)
}

fn parse<R: BufRead>(mut reader: R, file: &str, strict: bool) -> Result<EdgeList, MetricsError> {
    let mut list = EdgeList::new();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    let bad = |line: usize, message: String| MetricsError::BadLine {
        file: file.to_owned(),
        line,
        message,
    };
    loop {
        buf.clear();
        let read = reader
            .read_until(b'\n', &mut buf)
            .map_err(|e| MetricsError::io(format!("{file}: reading line {}", line_no + 1), e))?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let mut bytes = buf.as_slice();
        if let Some(rest) = bytes.strip_suffix(b"\n") {
            bytes = rest;
        }
        if let Some(rest) = bytes.strip_suffix(b"\r") {
            bytes = rest;
        }
        if bytes.is_empty() {
            continue;
        }
        let line = std::str::from_utf8(bytes).map_err(|e| {
            bad(
                line_no,
                format!("invalid UTF-8 at byte {} of the line", e.valid_up_to()),
            )
        })?;
        let mut fields = line.split('\t');
        let (h, r, t) = (fields.next(), fields.next(), fields.next());
        let extra = fields.next().is_some();
        let problem = match (h, r, t) {
            _ if extra => Some("more than 3 tab-separated fields".to_owned()),
            (Some(h), Some(r), Some(t)) => {
                if h.is_empty() || r.is_empty() || t.is_empty() {
                    Some("empty head, relation or tail".to_owned())
                } else {
                    list.push(h, r, t);
                    None
                }
            }
            _ => Some(format!(
                "expected 3 tab-separated fields (head, relation, tail), found {}",
                line.split('\t').count()
            )),
        };
        if let Some(message) = problem {
            if strict {
                return Err(bad(line_no, message));
            }
            list.malformed_lines += 1;
        }
    }
    Ok(list)
}

/// Simple undirected graph in CSR form: sorted, duplicate-free adjacency, no self-loops.
#[derive(Debug, Clone)]
pub struct Graph {
    offsets: Vec<usize>,
    adjacency: Vec<u32>,
}

impl Graph {
    /// Collapses (h,t), (t,h) and repeated triples into one edge; self-loops add no edge.
    pub fn from_edge_list(list: &EdgeList) -> Self {
        let n = list.node_count();
        let mut pairs: Vec<(u32, u32)> = list
            .triples
            .iter()
            .filter(|t| t.head != t.tail)
            .map(|t| (t.head.min(t.tail), t.head.max(t.tail)))
            .collect();
        pairs.par_sort_unstable();
        pairs.dedup();
        let mut degree = vec![0usize; n];
        for &(a, b) in &pairs {
            degree[a as usize] += 1;
            degree[b as usize] += 1;
        }
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        for d in &degree {
            offsets.push(offsets.last().unwrap() + d);
        }
        let mut fill = offsets[..n].to_vec();
        let mut adjacency = vec![0u32; 2 * pairs.len()];
        // Pairs are sorted by (low, high), so each list is filled in increasing order: the smaller
        // neighbours of v arrive (as `low`) before any pair where v is `low`.
        for &(a, b) in &pairs {
            adjacency[fill[a as usize]] = b;
            fill[a as usize] += 1;
            adjacency[fill[b as usize]] = a;
            fill[b as usize] += 1;
        }
        Graph { offsets, adjacency }
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of undirected edges.
    pub fn edge_count(&self) -> usize {
        self.adjacency.len() / 2
    }

    /// Number of neighbours of `v`.
    pub fn degree(&self, v: usize) -> usize {
        self.offsets[v + 1] - self.offsets[v]
    }

    /// Neighbours of `v`, sorted ascending.
    pub fn neighbours(&self, v: usize) -> &[u32] {
        &self.adjacency[self.offsets[v]..self.offsets[v + 1]]
    }
}

/// Connected components: (number of components, size of the largest).
pub fn components(g: &Graph) -> (usize, usize) {
    let n = g.node_count();
    let mut parent: Vec<u32> = (0..n as u32).collect();
    fn find(parent: &mut [u32], mut x: u32) -> u32 {
        while parent[x as usize] != x {
            // Path halving keeps the trees shallow without recursion.
            let grand = parent[parent[x as usize] as usize];
            parent[x as usize] = grand;
            x = grand;
        }
        x
    }
    for v in 0..n {
        for &u in g.neighbours(v) {
            if (u as usize) > v {
                let (a, b) = (find(&mut parent, v as u32), find(&mut parent, u));
                if a != b {
                    parent[a.max(b) as usize] = a.min(b);
                }
            }
        }
    }
    let mut size = vec![0usize; n];
    for v in 0..n {
        let root = find(&mut parent, v as u32);
        size[root as usize] += 1;
    }
    let count = size.iter().filter(|&&s| s > 0).count();
    (count, size.into_iter().max().unwrap_or(0))
}

/// Number of triangles through each node.
///
/// Each edge is oriented from lower to higher (degree, id) rank, so every triangle is found once
/// from its lowest-ranked corner and out-lists stay short even around hubs (O(m^1.5) overall).
pub fn triangles_per_node(g: &Graph) -> Vec<u64> {
    let n = g.node_count();
    let rank_key = |v: usize| (g.degree(v), v);
    let mut out_offsets = Vec::with_capacity(n + 1);
    out_offsets.push(0usize);
    let mut out = Vec::with_capacity(g.edge_count());
    for v in 0..n {
        out.extend(
            g.neighbours(v)
                .iter()
                .copied()
                .filter(|&u| rank_key(u as usize) > rank_key(v)),
        );
        out_offsets.push(out.len());
    }
    let out_of = |v: usize| &out[out_offsets[v]..out_offsets[v + 1]];
    let counts: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
    (0..n).into_par_iter().with_min_len(256).for_each_init(
        || vec![u32::MAX; n],
        |mark, v| {
            let ov = out_of(v);
            if ov.len() < 2 {
                return;
            }
            for &u in ov {
                mark[u as usize] = v as u32;
            }
            let mut found_v = 0u64;
            for &u in ov {
                let mut found_u = 0u64;
                for &w in out_of(u as usize) {
                    if mark[w as usize] == v as u32 {
                        found_u += 1;
                        counts[w as usize].fetch_add(1, Ordering::Relaxed);
                    }
                }
                if found_u > 0 {
                    counts[u as usize].fetch_add(found_u, Ordering::Relaxed);
                    found_v += found_u;
                }
            }
            if found_v > 0 {
                counts[v].fetch_add(found_v, Ordering::Relaxed);
            }
            // Marks are stamped with v, so the next v needs no clearing pass.
        },
    );
    counts.into_iter().map(AtomicU64::into_inner).collect()
}

/// networkx.average_clustering: mean over all nodes, nodes of degree < 2 counting as 0.
pub fn average_clustering(g: &Graph) -> f64 {
    let n = g.node_count();
    if n == 0 {
        return 0.0;
    }
    let tri = triangles_per_node(g);
    let local = (0..n).map(|v| {
        let d = g.degree(v) as u64;
        if d < 2 || tri[v] == 0 {
            0.0
        } else {
            // One correctly rounded division of exact integers, as networkx does.
            (2 * tri[v]) as f64 / (d * (d - 1)) as f64
        }
    });
    neumaier_sum(local) / n as f64
}

/// The graph metrics, keyed as in metric-fixtures' `expected.json` (`graph.*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphMetrics {
    /// Distinct relations.
    pub relation_types: u64,
    /// Well-formed triples, repeats included.
    pub triples: u64,
    /// Triples whose head is their tail.
    pub self_loop_triples: u64,
    /// Lines skipped as malformed (lenient parser only).
    pub malformed_lines: u64,
    /// Nodes, isolated ones included.
    pub nodes: u64,
    /// Distinct undirected edges (no self-loops).
    pub edges: u64,
    /// 2|E| / (|V|(|V|-1)); 0 when |V| < 2.
    pub density: f64,
    /// The RAGRouter-Bench leaderboard convention: |E| / (|V|(|V|-1)) rounded to 6 decimals.
    pub density_leaderboard: f64,
    /// 2|E| / |V|.
    pub average_degree: f64,
    /// Connected components.
    pub connected_components: u64,
    /// Nodes of the largest connected component.
    pub lcc_nodes: u64,
    /// Share of the nodes in the largest connected component.
    pub lcc_ratio: f64,
    /// Mean local clustering coefficient.
    pub average_clustering: f64,
    /// Largest degree.
    pub max_degree: u64,
    /// max degree / (|V|-1); 0 when |V| < 2.
    pub max_degree_centrality: f64,
}

/// All graph metrics of an edge list.
pub fn graph_metrics(list: &EdgeList) -> GraphMetrics {
    let g = Graph::from_edge_list(list);
    let ((components, lcc), clustering) = rayon::join(|| components(&g), || average_clustering(&g));
    metrics_from_parts(list, &g, components, lcc, clustering)
}

/// Assembles [`GraphMetrics`] from separately computed parts (lets a caller time each part).
pub fn metrics_from_parts(
    list: &EdgeList,
    g: &Graph,
    components: usize,
    lcc_nodes: usize,
    average_clustering: f64,
) -> GraphMetrics {
    let n = g.node_count();
    let m = g.edge_count();
    let (nf, mf) = (n as f64, m as f64);
    let pairs = nf * (nf - 1.0);
    let max_degree = (0..n).map(|v| g.degree(v)).max().unwrap_or(0);
    GraphMetrics {
        relation_types: list.relation_names.len() as u64,
        triples: list.triples.len() as u64,
        self_loop_triples: list.triples.iter().filter(|t| t.head == t.tail).count() as u64,
        malformed_lines: list.malformed_lines as u64,
        nodes: n as u64,
        edges: m as u64,
        density: if n < 2 { 0.0 } else { 2.0 * mf / pairs },
        density_leaderboard: if n < 2 {
            0.0
        } else {
            round_decimals(mf / pairs, 6)
        },
        average_degree: if n == 0 { 0.0 } else { 2.0 * mf / nf },
        connected_components: components as u64,
        lcc_nodes: lcc_nodes as u64,
        lcc_ratio: if n == 0 { 0.0 } else { lcc_nodes as f64 / nf },
        average_clustering,
        max_degree: max_degree as u64,
        max_degree_centrality: if n < 2 {
            0.0
        } else {
            max_degree as f64 / (nf - 1.0)
        },
    }
}

/// Rounds like Python's `round(x, places)`: on the exact decimal value, ties to even.
pub fn round_decimals(x: f64, places: usize) -> f64 {
    // Rust's `{:.N}` formatting rounds the exact binary value correctly, which is what Python does;
    // `(x * 1e6).round() / 1e6` can be off by one unit in the last place kept.
    format!("{x:.places$}").parse().unwrap_or(x)
}
