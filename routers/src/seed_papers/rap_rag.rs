//! A RAP-RAG-style planner (seed 004): four rule dimensions of the planner's prompt (entity
//! count, question scope, reasoning depth, relational complexity) each ask for a retrieval level;
//! the plan is the highest level any dimension asks for, mapped to one of our paradigms.
//!
//! RAP-RAG labels its fine-tuning data by the cheapest method that answers, in increasing
//! complexity (A direct generation, B vector, C local, D dual-level, E topology-enhanced), so a
//! question needs the most demanding level any of its traits requires: hence the maximum. RAP-RAG
//! prompts a small LM with these rules; here they are lexical rules over the question text and
//! `metrics::query` features (no LLM), read from the row, so the router learns nothing.
//!
//! | level | RAP-RAG method | our paradigm (then fallbacks, when the data set lacks it) |
//! |---|---|---|
//! | A | direct generation | llm-only, naive |
//! | B | vector search | naive, iterative, hybrid, fusion |
//! | C | local search (query entities and their one-hop neighbourhood) | graph, iterative-graph, hybrid, fusion |
//! | D | dual-level search (low-level entity plus high-level topic keywords) | hybrid, fusion, graph |
//! | E | topology-enhanced search (multi-hop paths over the whole graph) | iterative-graph, iterative, graph |
//!
//! `iterative` and `fusion` are reached only as fallbacks: RAP-RAG has no iterative dense method,
//! and its dual level is one fusion of the two sides, which our `hybrid` is (RRF) before `fusion`.
//!
//! The rules (each gives a level; A means "no demand" beyond direct generation or vector search):
//! - entities: none → A; one → B; two or more → C;
//! - scope: a closed question → A; an explicit local context ("according to", "mentioned",
//!   "in the document", ...) → C; summary questions and multi-level markers ("overall",
//!   "summarize", "across", ...) → D; global markers ("all", "every", "entire", ...) → E when the
//!   question also names two or more entities, else D;
//! - reasoning depth: hops = possessives + subordinate clauses, plus one for a question typed
//!   `reasoning`; 0 → A, 1 → C, 2 → D, 3 or more → E;
//! - relational complexity: a single point → A; combining facts (a coordination or a comparison
//!   word) → C; local-to-global inference (cause and effect words) → D; an explicit relation chain
//!   ("relationship", "connected", "between", ...) between two or more entities → E.

use bench_core::{
    ParadigmId as P, QueryType, Result, Router, RoutingRow, RoutingSchema, RoutingSet,
};

use super::{ranked, resolve};
use crate::entry::{Family, RouterContext, RouterEntry};

/// The registry entry.
pub fn entry() -> RouterEntry {
    RouterEntry {
        name: "rap-rag",
        about: "RAP-RAG-style planner: entity, scope, depth and relation rules → retrieval level → paradigm",
        family: Family::Seed,
        needs_llm: false,
        sees_outcomes: false,
        lanes: &[
            ("direct", &[P::LlmOnly, P::Naive]),
            ("vector", &[P::Naive, P::Iterative, P::Hybrid, P::Fusion]),
            ("local", &[P::Graph, P::IterativeGraph, P::Hybrid, P::Fusion]),
            ("dual", &[P::Hybrid, P::Fusion, P::Graph]),
            ("topology", &[P::IterativeGraph, P::Iterative, P::Graph]),
        ],
        sweep: &[],
        make: |_ctx: &RouterContext, _param| Ok(Box::new(RapRagPlanner)),
    }
}

/// RAP-RAG's retrieval levels, in increasing complexity (its labels A to E).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// A: direct generation, no retrieval.
    Direct,
    /// B: vector retrieval.
    Vector,
    /// C: local graph retrieval.
    Local,
    /// D: dual-level retrieval.
    Dual,
    /// E: topology-enhanced retrieval.
    Topology,
}

impl Level {
    /// Every level, A to E.
    pub const ALL: [Level; 5] = [
        Level::Direct,
        Level::Vector,
        Level::Local,
        Level::Dual,
        Level::Topology,
    ];

    /// Our paradigms for the level, preferred first (see the module's table).
    pub fn paradigms(self) -> &'static [P] {
        match self {
            Level::Direct => &[P::LlmOnly, P::Naive],
            Level::Vector => &[P::Naive, P::Iterative, P::Hybrid, P::Fusion],
            Level::Local => &[P::Graph, P::IterativeGraph, P::Hybrid, P::Fusion],
            Level::Dual => &[P::Hybrid, P::Fusion, P::Graph],
            Level::Topology => &[P::IterativeGraph, P::Iterative, P::Graph],
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What each rule dimension asks for, and the plan (their maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The level the entity count asks for.
    pub entities: Level,
    /// The level the question's scope asks for.
    pub scope: Level,
    /// The level the reasoning depth asks for.
    pub depth: Level,
    /// The level the relational complexity asks for.
    pub relations: Level,
}

impl Plan {
    /// The plan's level: the highest any dimension asks for.
    pub fn level(&self) -> Level {
        self.entities
            .max(self.scope)
            .max(self.depth)
            .max(self.relations)
    }
}

const LOCAL_SCOPE: &[&str] = &[
    "according to",
    "mentioned",
    "described in",
    "in the document",
    "in the passage",
    "in the text",
    "in the article",
    "in the corpus",
    "in the database",
    "in this",
    "within",
];
const MULTI_LEVEL: &[&str] = &[
    "overall",
    "summarize",
    "summarise",
    "summary",
    "overview",
    "in general",
    "main themes",
    "across",
];
const GLOBAL: &[&str] = &["all", "every", "entire", "whole", "throughout", "global"];
const COMPARISON: &[&str] = &[
    "compare",
    "compared",
    "comparison",
    "difference",
    "differ",
    "similar",
    "versus",
    "vs",
    "both",
];
const CAUSAL: &[&str] = &[
    "why",
    "cause",
    "caused",
    "causes",
    "effect",
    "effects",
    "impact",
    "influence",
    "influenced",
    "lead",
    "led",
    "result",
];
const RELATION: &[&str] = &[
    "relationship",
    "relationships",
    "related",
    "relate",
    "connected",
    "connection",
    "connections",
    "link",
    "linked",
    "chain",
    "path",
    "between",
];

/// Lower-cased words of a question, punctuation stripped.
fn words(q: &str) -> Vec<String> {
    q.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

fn has_word(ws: &[String], set: &[&str]) -> bool {
    ws.iter().any(|w| set.contains(&w.as_str()))
}

/// Phrases match on word boundaries of the lower-cased, space-joined words.
fn has_phrase(joined: &str, set: &[&str]) -> bool {
    set.iter().any(|p| joined.contains(&format!(" {p} ")))
}

/// The planner's rules for one question (see the module documentation).
pub fn plan(question: &str, qtype: QueryType) -> Plan {
    let f = metrics::query::query_features(question);
    let ws = words(question);
    let joined = format!(" {} ", ws.join(" "));
    let many = f.entity_count >= 2;

    let entities = match f.entity_count {
        0 => Level::Direct,
        1 => Level::Vector,
        _ => Level::Local,
    };

    let global = has_word(&ws, GLOBAL);
    let scope = if global && many {
        Level::Topology
    } else if global || qtype == QueryType::Summary || has_phrase(&joined, MULTI_LEVEL) {
        Level::Dual
    } else if has_phrase(&joined, LOCAL_SCOPE) {
        Level::Local
    } else {
        Level::Direct
    };

    let hops = f.possessive_count + f.clause_count + usize::from(qtype == QueryType::Reasoning);
    let depth = match hops {
        0 => Level::Direct,
        1 => Level::Local,
        2 => Level::Dual,
        _ => Level::Topology,
    };

    let relations = if many && has_word(&ws, RELATION) {
        Level::Topology
    } else if has_word(&ws, CAUSAL) {
        Level::Dual
    } else if f.coordination_count > 0 || has_word(&ws, COMPARISON) {
        Level::Local
    } else {
        Level::Direct
    };

    Plan {
        entities,
        scope,
        depth,
        relations,
    }
}

/// The planner (stateless).
#[derive(Debug, Clone, Copy, Default)]
pub struct RapRagPlanner;

impl Router for RapRagPlanner {
    fn name(&self) -> &str {
        "rap-rag"
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        for l in Level::ALL {
            resolve(&train.schema, l.paradigms(), "rap-rag", &format!("{l:?}"))?;
        }
        Ok(())
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let chosen = plan(&row.text, row.qtype).level().index();
        // The plan first, then the other levels by distance from it (the cheaper one first on a
        // tie), each as its preferred present paradigm: a miss still ranks the near levels high.
        let mut levels: Vec<Level> = Level::ALL.to_vec();
        levels.sort_by_key(|l| (l.index().abs_diff(chosen), l.index()));
        let mut order = Vec::with_capacity(levels.len());
        for l in levels {
            order.push(resolve(
                schema,
                l.paradigms(),
                "rap-rag",
                &format!("{l:?}"),
            )?);
        }
        Ok(ranked(schema.n_classes(), &order))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seed_papers::testutil::{row, schema};

    fn level(q: &str, t: QueryType) -> Level {
        plan(q, t).level()
    }

    #[test]
    fn each_dimension_follows_its_rule() {
        let p = plan("What is aspirin?", QueryType::Factual);
        assert_eq!(
            p,
            Plan {
                entities: Level::Direct,
                scope: Level::Direct,
                depth: Level::Direct,
                relations: Level::Direct
            }
        );
        // One entity, closed: vector search.
        assert_eq!(
            level("When was Python released?", QueryType::Factual),
            Level::Vector
        );
        // Two entities: local search; the coordination asks for the same.
        let p = plan(
            "Did Ada Brook and Tom Vale share a teacher?",
            QueryType::Factual,
        );
        assert_eq!((p.entities, p.relations), (Level::Local, Level::Local));
        assert_eq!(p.level(), Level::Local);
        // An explicit local context.
        let p = plan("What dose is mentioned in the leaflet?", QueryType::Factual);
        assert_eq!((p.scope, p.level()), (Level::Local, Level::Local));
        // A summary question spans levels: dual.
        let p = plan("Give an overview of the treatments.", QueryType::Summary);
        assert_eq!((p.scope, p.level()), (Level::Dual, Level::Dual));
        // Depth: a possessive chain plus a relative clause = 2 hops, +1 as a reasoning question.
        let q = "Where was the man who founded Lothair's company born?";
        assert_eq!(plan(q, QueryType::Factual).depth, Level::Dual);
        assert_eq!(plan(q, QueryType::Reasoning).depth, Level::Topology);
        // Causal inference: dual; an explicit relation chain between entities: topology.
        assert_eq!(
            plan("Why did prices rise?", QueryType::Factual).relations,
            Level::Dual
        );
        let p = plan(
            "How is Ada Brook connected to Tom Vale?",
            QueryType::Factual,
        );
        assert_eq!((p.relations, p.level()), (Level::Topology, Level::Topology));
        // Global markers: topology with several entities, dual without.
        assert_eq!(
            plan(
                "Which all events involved Kyoto and Osaka?",
                QueryType::Other
            )
            .scope,
            Level::Topology
        );
        assert_eq!(
            plan("List every drug.", QueryType::Other).scope,
            Level::Dual
        );
    }

    #[test]
    fn levels_map_to_paradigms_with_fallbacks() {
        let full = schema(&P::ALL, 1);
        let class = |s: &RoutingSchema, q: &str, t: QueryType| {
            let mut r0 = row(s, "q", q, vec![0.0]);
            r0.qtype = t;
            s.classes[RapRagPlanner.predict(s, &r0).unwrap()].clone()
        };
        assert_eq!(
            class(&full, "What is aspirin?", QueryType::Factual),
            "llm-only"
        );
        assert_eq!(
            class(&full, "When was Python released?", QueryType::Factual),
            "naive"
        );
        assert_eq!(
            class(
                &full,
                "Did Ada Brook and Tom Vale share a teacher?",
                QueryType::Factual
            ),
            "graph"
        );
        assert_eq!(
            class(
                &full,
                "Give an overview of the treatments.",
                QueryType::Summary
            ),
            "hybrid"
        );
        assert_eq!(
            class(
                &full,
                "How is Ada Brook connected to Tom Vale?",
                QueryType::Factual
            ),
            "iterative-graph"
        );
        // Without llm-only, iterative-graph and hybrid: naive, iterative and fusion stand in.
        let part = schema(&[P::Naive, P::Graph, P::Iterative, P::Fusion], 1);
        assert_eq!(
            class(&part, "What is aspirin?", QueryType::Factual),
            "naive"
        );
        assert_eq!(
            class(
                &part,
                "Give an overview of the treatments.",
                QueryType::Summary
            ),
            "fusion"
        );
        assert_eq!(
            class(
                &part,
                "How is Ada Brook connected to Tom Vale?",
                QueryType::Factual
            ),
            "iterative"
        );
        // Runner-up: the neighbouring level (dual plan → topology's and local's classes next).
        let r = RapRagPlanner;
        let sc = r
            .scores(
                &full,
                &row(&full, "q", "Give an overview of the treatments.", vec![0.0]),
            )
            .unwrap();
        let mut by: Vec<usize> = (0..sc.len()).collect();
        by.sort_by(|&a, &b| sc[b].total_cmp(&sc[a]));
        let names: Vec<&str> = by[..3].iter().map(|&c| full.classes[c].as_str()).collect();
        assert_eq!(names, vec!["hybrid", "graph", "iterative-graph"]);
    }
}
