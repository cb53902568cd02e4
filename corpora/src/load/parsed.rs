//! What a loader hands back before evidence is mapped to chunks (a leaf shared by every loader
//! and the assembly step in `load`).

use bench_core::{Document, Query};

/// A question as a loader reads it, before its gold evidence is mapped to chunks.
#[derive(Debug)]
pub(crate) struct PendingQuery {
    /// `gold_chunks` still empty.
    pub query: Query,
    /// Where the record is, for duplicate-id errors.
    pub location: String,
    /// Documents that are gold as a whole (by title or passage): all their chunks are gold.
    pub gold_docs: Vec<usize>,
    /// Evidence sentences: the chunks that contain one are gold.
    pub gold_sentences: Vec<String>,
}

/// What a loader reads: documents and questions, with the files they came from.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub documents: Vec<Document>,
    pub corpus_file: String,
    pub queries: Vec<PendingQuery>,
    pub queries_file: String,
    /// The corpus's short name when the files give one (generic format: `corpus.toml` or the
    /// folder's name); else the name it was asked for by.
    pub name: Option<String>,
    /// Evidence that matches no document id, title or chunk sentence is an error (generic
    /// format, unless `--allow-missing-evidence`).
    pub evidence_must_resolve: bool,
}

impl Parsed {
    /// What a loader read, under the name it was asked for; evidence need not resolve.
    pub(crate) fn new(
        documents: Vec<Document>,
        corpus_file: String,
        queries: Vec<PendingQuery>,
        queries_file: String,
    ) -> Self {
        Parsed {
            documents,
            corpus_file,
            queries,
            queries_file,
            name: None,
            evidence_must_resolve: false,
        }
    }
}
