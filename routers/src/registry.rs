//! The router registry: every built-in router is one file exposing `entry()` and one line here;
//! the entry types live in the leaf module `entry`, so no router names this file.

use bench_core::Result;

use crate::entry::RouterEntry;

/// Every built-in router, in table order.
pub fn registry() -> Vec<RouterEntry> {
    vec![
        crate::baselines::random_entry(),
        crate::baselines::best_fixed_entry(),
        crate::baselines::oracle_entry(),
        crate::baselines::best_single_entry(),
        crate::baselines::oracle_per_corpus_entry(),
        // ML and neural
        crate::models::lr::entry(),
        crate::models::svm::entry(),
        crate::models::rf::entry(),
        crate::models::gbt::entry(),
        crate::models::knn::entry(),
        crate::models::mlp::entry(),
        crate::models::dnn::entry(),
        crate::models::two_tower::entry(),
        // seed papers, published routers, cost-aware and utility
        crate::seed_papers::ner::entry(),
        crate::seed_papers::ea_graphrag::entry(),
        crate::seed_papers::rap_rag::entry(),
        crate::seed_papers::r2adapter::entry(),
        crate::seed_papers::llm_router::entry(),
        crate::published::adaptive_rag::entry(),
        crate::published::mba_rag::entry(),
        crate::published::router_dc::entry(),
        crate::seed_papers::cost_aware::entry(),
        crate::utility::lr_entry(),
        crate::utility::gbt_entry(),
        crate::utility::knn_entry(),
        crate::utility::mlp_entry(),
        crate::utility::tfidf::entry(),
        crate::utility::safe::entry(),
    ]
}

/// Routers that `--routers all` leaves out because one costs far more than the rest together;
/// named in `--routers` they run. `util-tfidf` fits per paradigm a logistic model on about
/// 4,400 dense columns (the question's TF-IDF beside its vector): 253 s on the 3,000 AdaRAGUE
/// questions with `--features q` (2 cores, 2026-12-03), where every other router together took
/// 23.2 s (2026-12-01, README's performance table).
pub const OPT_IN: &[&str] = &[crate::utility::tfidf::NAME];

/// The routers `--routers all` names: the registry without [`OPT_IN`], in table order.
pub(crate) fn default_routers() -> Vec<RouterEntry> {
    registry()
        .into_iter()
        .filter(|e| !OPT_IN.contains(&e.name))
        .collect()
}

/// The entry of `name`, or an error listing the known names.
pub fn lookup(name: &str) -> Result<RouterEntry> {
    let all = registry();
    all.iter().find(|e| e.name == name).copied().ok_or_else(|| {
        bench_core::BenchError::UnknownName {
            kind: bench_core::NameKind::Router,
            name: name.to_owned(),
            known: all.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
        }
    })
}
