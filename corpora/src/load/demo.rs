//! The demo corpus, embedded in the binary so that it loads without a data directory.

use super::jsonl::parse_texts;
use super::loader::{CorpusInfo, Loader, Source};
use super::parsed::Parsed;
use crate::error::Result;

/// The demo's registry entry.
pub(crate) const LOADER: Loader = Loader {
    info: CorpusInfo {
        name: "demo",
        description: "small invented corpus shipped with the binary (16 documents, 20 questions)",
        folder: "",
        files: &[],
    },
    load: parse,
    embedded_source: "embedded:corpora/data/demo",
};

const CORPUS: &str = include_str!("../../data/demo/corpus.jsonl");
const QUERIES: &str = include_str!("../../data/demo/queries.jsonl");

/// Parses the embedded files (the source needs nothing).
fn parse(_: &Source<'_>) -> Result<Parsed> {
    parse_texts(
        "corpora/data/demo/corpus.jsonl",
        CORPUS,
        "corpora/data/demo/queries.jsonl",
        QUERIES,
    )
}
