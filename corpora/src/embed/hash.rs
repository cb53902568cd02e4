//! `HashEmbedder`: a tiny deterministic bag-of-words encoder for unit tests only.

use bench_core::{Embedder, Embeddings};

/// Feature hashing of lowercased word unigrams and bigrams into `dim` signed buckets, L2
/// normalised. No semantics beyond word overlap: for tests that need an encoder without weights.
#[derive(Debug, Clone)]
pub struct HashEmbedder {
    dim: usize,
    name: String,
}

impl HashEmbedder {
    /// An encoder of `dim` buckets (panics on 0).
    pub fn new(dim: usize) -> Self {
        assert!(dim > 0, "dim must be positive");
        HashEmbedder {
            dim,
            name: format!("test-only-hash-embedder(unigram+bigram,dim={dim})"),
        }
    }

    /// The vector of one text.
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let lower = text.to_lowercase();
        let words: Vec<&str> = lower
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        let mut v = vec![0.0f32; self.dim];
        let mut add = |feature: &[&str]| {
            let mut h = Fnv::default();
            for w in feature {
                h.write(w.as_bytes());
                h.write(&[0xff]); // separator, so ("ab","c") and ("a","bc") differ
            }
            let x = h.0;
            let sign = if x >> 63 == 0 { 1.0 } else { -1.0 };
            v[(x % self.dim as u64) as usize] += sign;
        };
        for w in &words {
            add(&[w]);
        }
        for pair in words.windows(2) {
            add(pair);
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm == 0.0 {
            // No words (or cancelling buckets): a fixed unit vector keeps the unit-length promise.
            v[0] = 1.0;
        } else {
            v.iter_mut().for_each(|x| *x /= norm);
        }
        v
    }
}

impl Default for HashEmbedder {
    fn default() -> Self {
        HashEmbedder::new(384)
    }
}

impl Embedder for HashEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        let data = texts.iter().flat_map(|t| self.vector(t)).collect();
        Ok(Embeddings::new(self.dim, data))
    }
}

/// FNV-1a 64: stable across Rust versions and platforms, unlike `DefaultHasher`.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dot(a: &[f32], b: &[f32]) -> f32 {
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn unit_length_deterministic_and_case_insensitive() {
        let e = HashEmbedder::default();
        let a = e.vector("The Cat sat on the mat");
        assert_eq!(a.len(), 384);
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert_eq!(a, e.vector("the cat SAT on the mat!"));
        assert_eq!(a, HashEmbedder::new(384).vector("The Cat sat on the mat"));
        assert!((dot(&e.vector(""), &e.vector("")) - 1.0).abs() < 1e-6);
        assert!(e.name().contains("test-only"));
    }

    #[test]
    fn overlap_ranks_above_unrelated_and_bigrams_matter() {
        let e = HashEmbedder::default();
        let q = e.vector("reset my password");
        let near = e.vector("how to reset my password quickly");
        let far = e.vector("stock market crashed today");
        assert!(dot(&q, &near) > 0.5, "{}", dot(&q, &near));
        assert!(dot(&q, &far).abs() < 0.3, "{}", dot(&q, &far));
        // Same words, different order: unigrams agree, bigrams do not.
        let s = dot(&e.vector("dog bites man"), &e.vector("man bites dog"));
        assert!(s < 0.99 && s > 0.2, "{s}");
        let out = e.embed(&["a b", "c"]).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out.row(1), e.vector("c").as_slice());
    }
}
