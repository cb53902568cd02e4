//! `util-tfidf`: the utility router of `util-lr` (per paradigm a cross-fitted, Platt-calibrated
//! logistic P(correct), the paradigm of highest P(correct) − λ·cost) that also reads the
//! question's words: a TF-IDF of its unigrams and bigrams, fitted on the training rows only,
//! appended to the data set's features.
//!
//! Why: a sentence embedding blurs exactly the surface cues that say which strategy a question
//! needs ("which film came out first", "who is the father of the director of"); on the
//! Adaptive-RAG outcome matrices a TF-IDF logistic check per arm closes more of the gap to
//! Oracle than the MiniLM vector does. The vocabulary and document frequencies come from the
//! training fold alone, so no test question shapes its own features.

use std::fmt;
use std::sync::Arc;

use bench_core::{
    BenchError, FeatureBlock, FeatureKind, Result, Router, RoutingRow, RoutingSchema, RoutingSet,
};
use linfa_preprocessing::tf_idf_vectorization::{FittedTfIdfVectorizer, TfIdfVectorizer};
use ndarray::Array1;

use super::{Learner, UtilityRouter, LR_ALPHAS};
use crate::entry::{FitCache, RouterContext, RouterEntry};

/// The router's name.
pub const NAME: &str = "util-tfidf";
/// At most this many terms (the most frequent in the training questions).
pub const MAX_TERMS: usize = 4000;
/// A term must occur in at least this many training questions.
pub const MIN_DF: usize = 2;

/// The registry entry.
pub fn entry() -> RouterEntry {
    super::entry_of(
        NAME,
        "util-lr plus the question's TF-IDF (unigrams and bigrams, fitted per training fold): argmax calibrated P(correct) − λ·cost; λ swept 0 → 1. Not in `all` (minutes on 3,000 questions): name it",
        |ctx: &RouterContext, param| {
            Ok(Box::new(
                TfidfUtility::new(ctx.seed, param)?.sharing(&ctx.fits),
            ))
        },
    )
}

fn lr_make(_seed: u64, g: usize) -> Box<dyn Router + Sync> {
    let mut m = crate::models::lr::Logistic::default();
    m.alpha = LR_ALPHAS[g];
    m.max_iterations = 50;
    Box::new(crate::models::ModelRouter::new(NAME, m))
}

const LR: Learner = Learner {
    make: lr_make,
    grid: LR_ALPHAS.len(),
    held_scores: None,
};

/// The fitted vocabulary and the schema of the rows the inner router sees.
struct Terms {
    vectorizer: FittedTfIdfVectorizer,
    /// The vectorizer's column → our column: the vectorizer orders its vocabulary by a hash map,
    /// so the kept terms are chosen and ordered here (document frequency, then the term).
    cols: Vec<Option<usize>>,
    kept: usize,
    schema: Arc<RoutingSchema>,
}

/// `util-lr` on the data set's features plus the question's TF-IDF.
pub struct TfidfUtility {
    inner: UtilityRouter,
    terms: Option<Terms>,
}

impl fmt::Debug for TfidfUtility {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TfidfUtility")
            .field("inner", &self.inner)
            .field("terms", &self.terms.as_ref().map(|t| t.kept))
            .finish()
    }
}

impl TfidfUtility {
    /// Shares the λ-independent fit through `fits` (the evaluation's): a sweep's routers see
    /// the same TF-IDF rows, so they fit once.
    pub fn sharing(mut self, fits: &FitCache) -> Self {
        self.inner = self.inner.sharing(fits);
        self
    }

    /// The router at λ = `param` (`None`: 0), seeded.
    pub fn new(seed: u64, param: Option<f64>) -> Result<Self> {
        Ok(TfidfUtility {
            inner: UtilityRouter::new(NAME, LR, seed, param)?,
            terms: None,
        })
    }
}

/// The rows' TF-IDF (raw count times smoothed idf, L2-normalised over the kept terms), one
/// dense row per question; in a question a term rarely occurs twice, so the count is nearly
/// binary.
fn tfidf(
    v: &FittedTfIdfVectorizer,
    cols: &[Option<usize>],
    kept: usize,
    rows: &[RoutingRow],
) -> Result<Vec<Vec<f64>>> {
    let texts: Array1<String> = rows.iter().map(|r| r.text.clone()).collect();
    let m = v
        .transform(&texts)
        .map_err(|e| BenchError::Invalid(format!("router {NAME}: TF-IDF: {e}")))?;
    let mut out = vec![vec![0.0; kept]; rows.len()];
    for (i, row) in m.outer_iterator().enumerate() {
        for (j, &w) in row.iter() {
            if let Some(c) = cols[j] {
                out[i][c] = w;
            }
        }
        let norm = out[i].iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm > 0.0 {
            out[i].iter_mut().for_each(|x| *x /= norm);
        }
    }
    Ok(out)
}

/// `rows` with their TF-IDF appended to the features.
fn with_terms(t: &Terms, rows: &[RoutingRow]) -> Result<Vec<RoutingRow>> {
    Ok(tfidf(&t.vectorizer, &t.cols, t.kept, rows)?
        .into_iter()
        .zip(rows)
        .map(|(terms, r)| {
            let mut features = r.features.clone();
            features.extend(terms);
            RoutingRow {
                features,
                ..r.clone()
            }
        })
        .collect())
}

/// The kept terms: the [`MAX_TERMS`] of highest document frequency in the training questions,
/// ties by the term, in that order; `cols` maps the vectorizer's columns onto them.
fn choose_terms(
    v: &FittedTfIdfVectorizer,
    texts: &Array1<String>,
) -> Result<(Vec<Option<usize>>, Vec<String>)> {
    let m = v
        .transform(texts)
        .map_err(|e| BenchError::Invalid(format!("router {NAME}: TF-IDF: {e}")))?;
    let mut df = vec![0usize; v.nentries()];
    for row in m.outer_iterator() {
        for (j, _) in row.iter() {
            df[j] += 1;
        }
    }
    let vocab = v.vocabulary();
    let mut order: Vec<usize> = (0..v.nentries()).collect();
    order.sort_by(|&a, &b| df[b].cmp(&df[a]).then_with(|| vocab[a].cmp(&vocab[b])));
    order.truncate(MAX_TERMS);
    let mut cols = vec![None; v.nentries()];
    for (c, &j) in order.iter().enumerate() {
        cols[j] = Some(c);
    }
    Ok((cols, order.iter().map(|&j| vocab[j].clone()).collect()))
}

impl Router for TfidfUtility {
    fn name(&self) -> &str {
        NAME
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        // The question's words are a question feature: without one in the feature set (`c`,
        // `p`, `c+p`) the router reads no text and is util-lr.
        if !train.schema.blocks.iter().any(|b| b.kind.is_query()) {
            self.terms = None;
            return self.inner.fit(train);
        }
        let n = train.rows.len().max(1);
        let texts: Array1<String> = train.rows.iter().map(|r| r.text.clone()).collect();
        let vectorizer = TfIdfVectorizer::default()
            .convert_to_lowercase(true)
            .n_gram_range(1, 2)
            .document_frequency((MIN_DF as f32 / n as f32).min(1.0), 1.0)
            .fit(&texts)
            .map_err(|e| BenchError::Invalid(format!("router {NAME}: TF-IDF fit: {e}")))?;
        let (cols, names) = choose_terms(&vectorizer, &texts)?;
        let mut schema = (*train.schema).clone();
        let start = schema.feature_names.len();
        schema
            .feature_names
            .extend(names.iter().map(|w| format!("t:{w}")));
        schema.blocks.push(FeatureBlock {
            kind: FeatureKind::QueryTerms,
            start,
            len: names.len(),
        });
        let terms = Terms {
            vectorizer,
            cols,
            kept: names.len(),
            schema: Arc::new(schema),
        };
        let set = RoutingSet {
            schema: Arc::clone(&terms.schema),
            rows: with_terms(&terms, &train.rows)?,
        };
        self.inner.fit(&set)?;
        self.terms = Some(terms);
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        bench_core::routing::scores_via_batch(self, schema, row)
    }

    fn scores_batch(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        match &self.terms {
            Some(t) => self.inner.scores_batch(&t.schema, &with_terms(t, rows)?),
            None => self.inner.scores_batch(schema, rows),
        }
    }
}
