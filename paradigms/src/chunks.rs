//! The corpus's chunks by id, and the context-budget cut shared by every retrieving paradigm.

use std::collections::HashMap;

use bench_core::{BenchError, Chunk, ContextChunk, RetrievedChunk};

/// Chunks addressable by id and by row.
#[derive(Debug)]
pub struct ChunkTable {
    chunks: Vec<Chunk>,
    by_id: HashMap<String, usize>,
}

impl ChunkTable {
    /// A table of `chunks`, looked up by id and by row.
    pub fn new(chunks: Vec<Chunk>) -> Self {
        let by_id = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i))
            .collect();
        ChunkTable { chunks, by_id }
    }

    /// Number of chunks.
    pub fn len(&self) -> usize {
        self.chunks.len()
    }

    /// Whether there are no chunks.
    pub fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The chunk at `row` (the dense index's row order).
    pub fn row(&self, row: usize) -> &Chunk {
        &self.chunks[row]
    }

    /// The chunk with id `id`; an error naming the id when there is none.
    pub fn get(&self, id: &str) -> Result<&Chunk, BenchError> {
        self.by_id
            .get(id)
            .map(|&i| &self.chunks[i])
            .ok_or_else(|| BenchError::Other(format!("retriever returned unknown chunk id {id:?}")))
    }

    /// Every chunk, in row order.
    pub fn all(&self) -> &[Chunk] {
        &self.chunks
    }
}

/// Keeps the longest prefix of the ranked chunks (duplicates dropped) that fits in `budget`
/// tokens: the paper truncates the similarity ranking, it does not pack later, smaller chunks.
/// Returns the kept chunks and their token total.
pub fn fit_budget(
    ranked: &[RetrievedChunk],
    table: &ChunkTable,
    budget: u64,
) -> Result<(Vec<RetrievedChunk>, u64), BenchError> {
    let mut seen = std::collections::HashSet::new();
    let mut kept = Vec::new();
    let mut used = 0u64;
    for r in ranked {
        if !seen.insert(r.chunk_id.as_str()) {
            continue;
        }
        let tokens = u64::from(table.get(&r.chunk_id)?.tokens);
        if used + tokens > budget {
            break;
        }
        used += tokens;
        kept.push(r.clone());
    }
    Ok((kept, used))
}

/// The context as a reader receives it.
pub fn context_chunks<'a>(
    kept: &'a [RetrievedChunk],
    table: &'a ChunkTable,
) -> Result<Vec<ContextChunk<'a>>, BenchError> {
    kept.iter()
        .enumerate()
        .map(|(rank, r)| {
            Ok(ContextChunk {
                chunk_id: &r.chunk_id,
                text: &table.get(&r.chunk_id)?.text,
                rank,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: &str, tokens: u32) -> Chunk {
        Chunk {
            id: id.into(),
            index: 0,
            document: "d".into(),
            text: id.into(),
            tokens,
        }
    }

    fn hit(id: &str) -> RetrievedChunk {
        RetrievedChunk {
            chunk_id: id.into(),
            score: 0.5,
        }
    }

    #[test]
    fn budget_keeps_the_ranked_prefix_that_fits_and_dedups() {
        let t = ChunkTable::new(vec![chunk("a", 500), chunk("b", 400), chunk("c", 100)]);
        let (kept, used) = fit_budget(&[hit("a"), hit("a"), hit("b"), hit("c")], &t, 600).unwrap();
        let ids: Vec<_> = kept.iter().map(|k| k.chunk_id.as_str()).collect();
        // "b" overflows: the cut stops there even though "c" would fit.
        assert_eq!(ids, ["a"]);
        assert_eq!(used, 500);
        let (kept, used) = fit_budget(&[hit("c"), hit("b"), hit("a")], &t, 600).unwrap();
        assert_eq!((kept.len(), used), (2, 500));
        assert!(fit_budget(&[hit("zzz")], &t, 10).is_err());
    }
}
