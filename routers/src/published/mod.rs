//! Routers of the paper's Table 3 that come from other papers: Adaptive-RAG's complexity
//! classifier, MBA-RAG's contextual bandit and RouterDC's dual-contrastive router, rebuilt on
//! this crate's features (the originals fine-tune T5 / DistilBERT / mDeBERTa encoders; here the
//! question's sentence embedding and syntax features stand in for the encoder).

pub mod adaptive_rag;
pub mod mba_rag;
pub mod router_dc;

use bench_core::{RoutingRow, RoutingSet};

use crate::seeds::outcome_of_class;

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

/// The mean cost of every training tuple (1 when there is none or it is 0): the scale that
/// makes a cost penalty unit-free.
pub fn cost_scale(train: &RoutingSet) -> f64 {
    let (mut s, mut n) = (0.0, 0usize);
    for r in &train.rows {
        for o in r.outcomes.iter().flatten() {
            s += o.tokens;
            n += 1;
        }
    }
    if n > 0 && s > 0.0 {
        s / n as f64
    } else {
        1.0
    }
}
