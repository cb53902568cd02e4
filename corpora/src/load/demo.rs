//! The demo corpus, embedded in the binary so that it loads without a data directory.

use super::jsonl::parse_texts;
use super::parsed::Parsed;
use crate::error::Result;

/// What `Corpus::source` says for the demo.
pub(crate) const SOURCE: &str = "embedded:corpora/data/demo";

const CORPUS: &str = include_str!("../../data/demo/corpus.jsonl");
const QUERIES: &str = include_str!("../../data/demo/queries.jsonl");

pub(crate) fn parse() -> Result<Parsed> {
    parse_texts(
        "corpora/data/demo/corpus.jsonl",
        CORPUS,
        "corpora/data/demo/queries.jsonl",
        QUERIES,
    )
}
