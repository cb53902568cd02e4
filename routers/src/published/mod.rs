//! Routers of the paper's Table 3 that come from other papers: Adaptive-RAG's complexity
//! classifier, MBA-RAG's contextual bandit and RouterDC's dual-contrastive router, rebuilt on
//! this crate's features (the originals fine-tune T5 / DistilBERT / mDeBERTa encoders; here the
//! question's sentence embedding and syntax features stand in for the encoder).

pub(crate) mod adaptive_rag;
pub(crate) mod mba_rag;
pub(crate) mod router_dc;

use bench_core::RoutingRow;

use crate::seed_papers::outcome_of_class;

/// The cheapest correct paradigm class of a row (fewest cost, then class order), if any.
pub fn cheapest_correct(row: &RoutingRow) -> Option<usize> {
    (0..row.outcomes.len())
        .filter_map(|c| {
            outcome_of_class(row, c)
                .filter(|o| o.correct)
                .map(|o| (c, o.tokens))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
        .map(|(c, _)| c)
}
