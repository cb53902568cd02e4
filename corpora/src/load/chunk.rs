//! Sliding-window chunking of documents into cl100k token windows (decisions.md, "Corpus preparation").

use bench_core::config::ChunkingConfig;
use bench_core::tokens::{decode_lossy, encode, window_starts};
use bench_core::{BenchError, Chunk, Document};
use rayon::prelude::*;

/// Checks the settings `window_starts` would otherwise panic on.
pub(crate) fn validate(cfg: &ChunkingConfig) -> Result<(), BenchError> {
    if cfg.size == 0 || cfg.overlap >= cfg.size {
        return Err(BenchError::Invalid(format!(
            "chunking: size ({}) must be positive and larger than overlap ({})",
            cfg.size, cfg.overlap
        )));
    }
    Ok(())
}

/// Cuts each document's `chunk_source()` into windows of `cfg.size` tokens starting every
/// `size - overlap` tokens. Chunk ids are `"{doc id}#{window}"`, `index` is the position in the
/// returned list, `tokens` the window length. Each document is encoded once; documents (and the
/// windows of a long document) are processed in parallel, and the order stays deterministic.
/// `cfg` must have passed `validate`.
pub fn chunk_documents(docs: &[Document], cfg: &ChunkingConfig) -> Vec<Chunk> {
    let per_doc: Vec<Vec<(String, u32)>> = docs
        .par_iter()
        .map(|doc| {
            let tokens = encode(&doc.chunk_source());
            window_starts(tokens.len(), cfg.size, cfg.overlap)
                .into_par_iter()
                .map(|start| {
                    let window = &tokens[start..(start + cfg.size).min(tokens.len())];
                    (decode_lossy(window), window.len() as u32)
                })
                .collect()
        })
        .collect();
    let mut chunks = Vec::with_capacity(per_doc.iter().map(Vec::len).sum());
    for (doc, windows) in docs.iter().zip(per_doc) {
        for (w, (text, tokens)) in windows.into_iter().enumerate() {
            chunks.push(Chunk {
                id: format!("{}#{w}", doc.id),
                index: chunks.len() as u32,
                document: doc.id.clone(),
                text,
                tokens,
            });
        }
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(id: &str, title: &str, text: &str) -> Document {
        Document {
            id: id.into(),
            title: title.into(),
            text: text.into(),
        }
    }

    #[test]
    fn short_documents_give_one_chunk_each_with_title() {
        let docs = [doc("a", "Title", "Body text."), doc("b", "", "Other.")];
        let chunks = chunk_documents(&docs, &ChunkingConfig::default());
        assert_eq!(chunks.len(), 2);
        assert_eq!(chunks[0].id, "a#0");
        assert_eq!(chunks[0].text, "Title\nBody text.");
        assert_eq!(
            u64::from(chunks[0].tokens),
            bench_core::tokens::count("Title\nBody text.")
        );
        assert_eq!((chunks[1].id.as_str(), chunks[1].index), ("b#0", 1));
        assert_eq!(chunks[1].text, "Other.");
    }

    #[test]
    fn long_documents_overlap_and_reassemble() {
        let text: String = (0..300).map(|i| format!("word{i} ")).collect();
        let cfg = ChunkingConfig {
            size: 50,
            overlap: 10,
        };
        let chunks = chunk_documents(&[doc("d", "", &text)], &cfg);
        let n = encode(&text).len();
        assert_eq!(chunks.len(), window_starts(n, 50, 10).len());
        assert!(chunks.iter().all(|c| c.tokens > 0 && c.tokens <= 50));
        assert!(chunks[..chunks.len() - 1].iter().all(|c| c.tokens == 50));
        // Windows taken at the stride, with the overlap dropped, give back the text.
        let mut rebuilt = Vec::new();
        let tokens = encode(&text);
        for (i, start) in window_starts(n, 50, 10).into_iter().enumerate() {
            let skip = if i == 0 { 0 } else { 10 };
            rebuilt.extend_from_slice(&tokens[start + skip..(start + 50).min(n)]);
        }
        assert_eq!(decode_lossy(&rebuilt), text);
        assert!(chunks
            .iter()
            .enumerate()
            .all(|(i, c)| c.index as usize == i && c.id == format!("d#{i}")));
    }

    #[test]
    fn empty_documents_give_no_chunks_and_bad_settings_are_rejected() {
        assert!(chunk_documents(&[doc("e", "", "")], &ChunkingConfig::default()).is_empty());
        assert!(validate(&ChunkingConfig {
            size: 10,
            overlap: 10
        })
        .is_err());
        assert!(validate(&ChunkingConfig {
            size: 0,
            overlap: 0
        })
        .is_err());
        assert!(validate(&ChunkingConfig::default()).is_ok());
    }
}
