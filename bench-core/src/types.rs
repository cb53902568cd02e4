//! The benchmark's nouns: documents, chunks, queries, query types and paradigm ids.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::BenchError;

/// One source document of a corpus, as loaded (before chunking).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Document {
    /// Stable id inside the corpus (the data set's id, or its position when it has none).
    pub id: String,
    /// Title; empty when the data set has none.
    pub title: String,
    /// The document's body text.
    pub text: String,
}

impl Document {
    /// The text that is chunked: `title + "\n" + text`, or the text alone when untitled (decisions.md).
    pub fn chunk_source(&self) -> String {
        if self.title.is_empty() {
            self.text.clone()
        } else {
            format!("{}\n{}", self.title, self.text)
        }
    }
}

/// A retrieval unit: a window of a document's tokens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// `"{document id}#{window index}"`: stable across runs for the same corpus and chunking.
    pub id: String,
    /// Position of the chunk in the corpus's chunk list (its row in the vector index).
    pub index: u32,
    /// Id of the document the window was cut from ([`Document::id`]).
    pub document: String,
    /// The window's text (decoded from its tokens).
    pub text: String,
    /// cl100k_base tokens of `text`.
    pub tokens: u32,
}

impl Chunk {
    /// The document of a chunk id (`"{document id}#{window index}"`; a document id may itself
    /// hold `#`, the window index never does).
    pub fn document_of(chunk_id: &str) -> &str {
        chunk_id.rsplit_once('#').map_or(chunk_id, |(d, _)| d)
    }
}

/// Query type, as the paper groups them (Table 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryType {
    /// One fact, found in one place.
    Factual,
    /// The answer needs two or more pieces of evidence (multi-hop, comparison).
    Reasoning,
    /// The answer gathers a topic from several places.
    Summary,
    /// Anything else (e.g. GraphRAG-Bench's creative generation, when kept).
    Other,
}

impl QueryType {
    /// Every query type, in the order tables and one-hot features use.
    pub const ALL: [QueryType; 4] = [
        QueryType::Factual,
        QueryType::Reasoning,
        QueryType::Summary,
        QueryType::Other,
    ];

    /// The stored name (`factual`, `reasoning`, `summary`, `other`), as serde writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryType::Factual => "factual",
            QueryType::Reasoning => "reasoning",
            QueryType::Summary => "summary",
            QueryType::Other => "other",
        }
    }
}

impl fmt::Display for QueryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for QueryType {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        QueryType::ALL
            .into_iter()
            .find(|t| t.as_str() == s.trim().to_ascii_lowercase())
            .ok_or_else(|| {
                BenchError::Invalid(format!(
                    "unknown query type {s:?}: expected factual, reasoning, summary or other"
                ))
            })
    }
}

/// A gold answer and its accepted aliases.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct GoldAnswer {
    /// The answer as the data set gives it.
    pub answer: String,
    /// Other strings that count as the same answer (empty when the data set lists none).
    #[serde(default)]
    pub aliases: Vec<String>,
}

impl GoldAnswer {
    /// The answer followed by its aliases.
    pub fn all(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.answer.as_str()).chain(self.aliases.iter().map(String::as_str))
    }
}

/// A benchmark question with its gold answer and evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// Stable id inside the corpus (the data set's question id).
    pub id: String,
    /// The question as asked.
    pub text: String,
    /// Its type, from the data set's own category.
    pub qtype: QueryType,
    /// The gold answer and its aliases.
    pub gold: GoldAnswer,
    /// Gold evidence as the data set states it (titles, sentences, triples), for the record.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Gold evidence mapped to chunk ids; empty when the data did not allow a mapping.
    #[serde(default)]
    pub gold_chunks: Vec<String>,
    /// Documents the evidence names as a whole (by id or title): all their chunks are in
    /// `gold_chunks`, and document-level recall asks only for one chunk of each.
    #[serde(default)]
    pub gold_documents: Vec<String>,
    /// Evidence given as statements (sentences the data set states, quoted or paraphrased), each
    /// with where it was found; empty when the evidence names documents or passages.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statements: Vec<StatementMatch>,
}

/// Where one evidence statement was found: the chunks holding the corpus sentence it matched,
/// verbatim or by meaning, and the match's score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StatementMatch {
    /// The statement as the data set gives it.
    pub text: String,
    /// The chunks that hold it (verbatim) or hold the sentence it matched by meaning; empty when
    /// it matched nothing.
    pub chunks: Vec<String>,
    /// 1 for a verbatim match; else the cosine between the statement and the best sentence found
    /// (for an unmatched statement: the best candidate's, which did not pass).
    pub score: f32,
    /// Whether the match is by meaning (encoder vectors plus the content-word check).
    pub semantic: bool,
    /// The corpus sentence it matched by meaning (or the best candidate when unmatched), so a
    /// reader can recheck the match; `None` for a verbatim match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence: Option<String>,
}

impl StatementMatch {
    /// Whether the statement was found in some chunk (verbatim or by meaning).
    pub fn is_matched(&self) -> bool {
        !self.chunks.is_empty()
    }
}

/// Declares the paradigm ids: one line per paradigm gives its variant, its stored name and
/// whether it reads the knowledge graph. Its constructor and cost model are its line in
/// `paradigms::registry` (a test there checks both lists name the same paradigms).
macro_rules! paradigm_ids {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, graph: $graph:literal; )*) => {
        /// The RAG paradigms a router chooses between (paper §3.2, plus the seeds' variants).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        pub enum ParadigmId {
            $( $(#[$doc])* #[serde(rename = $name)] $variant, )*
        }

        impl ParadigmId {
            /// Every paradigm, in declaration order: the order of classes, columns and tables.
            pub const ALL: [ParadigmId; [$($name),*].len()] = [$(ParadigmId::$variant),*];

            /// The stored name (`llm-only`, `naive`, ...), as serde writes it and the CLI reads it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ParadigmId::$variant => $name,)*
                }
            }

            /// Whether the paradigm reads the knowledge graph (alone or fused with dense
            /// retrieval): it needs the graph built and carries a share of its construction.
            pub fn uses_graph(self) -> bool {
                match self {
                    $(ParadigmId::$variant => $graph,)*
                }
            }
        }
    };
}

paradigm_ids! {
    /// The reader alone, no retrieval.
    LlmOnly = "llm-only", graph: false;
    /// Dense top-K chunks.
    Naive = "naive", graph: false;
    /// Seed entities and Personalized PageRank over the knowledge graph.
    Graph = "graph", graph: true;
    /// Dense and graph retrieval fused by reciprocal rank.
    Hybrid = "hybrid", graph: true;
    /// Retrieve, read, self-evaluate, ask a sub-question, repeat (dense).
    Iterative = "iterative", graph: false;
    /// The iterative loop over graph retrieval.
    IterativeGraph = "iterative-graph", graph: true;
    /// Dense and graph fused with weights from the question's complexity (EA-GraphRAG).
    Fusion = "fusion", graph: true;
}

impl ParadigmId {
    /// Whether the paradigm reads retrieved context (everything but LLM-only).
    pub fn retrieves(self) -> bool {
        self != ParadigmId::LlmOnly
    }
}

impl fmt::Display for ParadigmId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ParadigmId {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        ParadigmId::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| {
                let known: Vec<_> = ParadigmId::ALL.iter().map(|p| p.as_str()).collect();
                BenchError::UnknownName {
                    kind: crate::NameKind::Paradigm,
                    name: s.to_owned(),
                    known: known.join(", "),
                }
            })
    }
}

/// A loaded, chunked corpus with its questions.
#[derive(Debug, Clone)]
pub struct Corpus {
    /// Registry name (`demo`, `musique-dev`, ...).
    pub name: String,
    /// The source documents, in load order.
    pub documents: Vec<Document>,
    /// The chunks of all documents; a chunk's [`Chunk::index`] is its position here.
    pub chunks: Vec<Chunk>,
    /// The benchmark questions.
    pub queries: Vec<Query>,
    /// sha256 over the documents, chunking settings and questions: a run's identity includes it.
    pub content_hash: String,
    /// Where the files were read from, for the record.
    pub source: String,
}

impl Corpus {
    /// Total cl100k tokens over all chunks.
    pub fn chunk_tokens(&self) -> u64 {
        self.chunks.iter().map(|c| u64::from(c.tokens)).sum()
    }

    /// Questions whose gold evidence mapped to at least one chunk.
    pub fn queries_with_gold_chunks(&self) -> usize {
        self.queries
            .iter()
            .filter(|q| !q.gold_chunks.is_empty())
            .count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paradigm_ids_round_trip_through_text_and_serde() {
        for p in ParadigmId::ALL {
            assert_eq!(p.as_str().parse::<ParadigmId>().unwrap(), p);
            let json = serde_json::to_string(&p).unwrap();
            assert_eq!(json, format!("\"{}\"", p.as_str()));
        }
        let err = "graphrag".parse::<ParadigmId>().unwrap_err().to_string();
        assert!(err.contains("iterative-graph"), "{err}");
    }

    #[test]
    fn a_chunk_id_names_its_document() {
        assert_eq!(Chunk::document_of("doc#3"), "doc");
        assert_eq!(Chunk::document_of("a#b#12"), "a#b");
        assert_eq!(Chunk::document_of("plain"), "plain");
    }

    #[test]
    fn query_types_parse_case_insensitively() {
        assert_eq!("Summary".parse::<QueryType>().unwrap(), QueryType::Summary);
        assert!("creative".parse::<QueryType>().is_err());
    }

    #[test]
    fn chunk_source_joins_title_and_text() {
        let d = Document {
            id: "1".into(),
            title: "T".into(),
            text: "body".into(),
        };
        assert_eq!(d.chunk_source(), "T\nbody");
        let d = Document {
            title: String::new(),
            ..d
        };
        assert_eq!(d.chunk_source(), "body");
    }
}
