//! Syntactic complexity of a question, after EA-GraphRAG's heuristic scorer (seed 002), computed
//! with lexical rules instead of a dependency parser.
//!
//! EA-GraphRAG extracts its features with spaCy. No parser ships with this project, so the
//! dependency-based features are approximated by markers that a parser would label the same way:
//! subordinators and relative pronouns for clauses, conjunctions for coordination, and a depth
//! proxy that grows with clauses, prepositional attachments and possessive chains.

use serde::{Deserialize, Serialize};

const SUBORDINATORS: &[&str] = &[
    "who", "whom", "whose", "which", "that", "when", "where", "while", "because", "although",
    "though", "since", "if", "unless", "after", "before", "until", "whereas", "whether",
];
const COORDINATORS: &[&str] = &["and", "or", "but", "nor", "both", "either", "neither"];
const WH_WORDS: &[&str] = &[
    "what", "which", "who", "whom", "whose", "when", "where", "why", "how",
];
const PREPOSITIONS: &[&str] = &[
    "of", "in", "on", "at", "by", "for", "with", "from", "to", "into", "about", "than", "as",
    "under", "over", "between", "during", "against",
];

/// The features the scorer reads; all counts are over word tokens of the question.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct QueryFeatures {
    /// Word tokens in the question.
    pub word_count: usize,
    /// Subordinators and relative pronouns after the first word (the opening wh-word asks, it
    /// does not subordinate).
    pub clause_count: usize,
    /// Coordinating conjunctions ("and", "or", "but", ...).
    pub coordination_count: usize,
    /// Prepositions (a proxy for nested relations).
    pub preposition_count: usize,
    /// `'s` possessives: "X's mother's birthplace" is a two-hop chain.
    pub possessive_count: usize,
    /// Maximal runs of capitalised words (not counting the first word), numbers and dates.
    pub entity_count: usize,
    /// Distinct kinds among name / number / date entities.
    pub entity_type_count: usize,
    /// Whether the question opens with a wh-word.
    pub wh_question: bool,
    /// Stand-in for the dependency tree depth.
    pub depth_proxy: f64,
}

impl QueryFeatures {
    /// Whether the question has a subordinate clause.
    pub fn has_subordination(&self) -> bool {
        self.clause_count > 0
    }
    /// Whether the question coordinates two parts.
    pub fn has_coordination(&self) -> bool {
        self.coordination_count > 0
    }

    /// The features as a fixed-order vector (for routers), with their names.
    pub fn to_vec(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("word_count", self.word_count as f64),
            ("clause_count", self.clause_count as f64),
            ("coordination_count", self.coordination_count as f64),
            ("preposition_count", self.preposition_count as f64),
            ("possessive_count", self.possessive_count as f64),
            ("entity_count", self.entity_count as f64),
            ("entity_type_count", self.entity_type_count as f64),
            ("wh_question", f64::from(u8::from(self.wh_question))),
            ("depth_proxy", self.depth_proxy),
        ]
    }
}

fn words(q: &str) -> Vec<&str> {
    q.split(|c: char| {
        c.is_whitespace() || matches!(c, ',' | ';' | ':' | '?' | '!' | '"' | '(' | ')')
    })
    .map(|w| w.trim_matches(|c: char| c == '.' || c == '\''))
    .filter(|w| !w.is_empty())
    .collect()
}

fn is_capitalised(w: &str) -> bool {
    w.chars().next().is_some_and(char::is_uppercase)
}

fn is_number(w: &str) -> bool {
    w.chars().any(|c| c.is_ascii_digit())
        && w.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '/'))
}

/// Computes the features of a question.
pub fn query_features(question: &str) -> QueryFeatures {
    let ws = words(question);
    let lower: Vec<String> = ws.iter().map(|w| w.to_lowercase()).collect();
    let count_in = |set: &[&str], skip_first: bool| {
        lower
            .iter()
            .enumerate()
            .filter(|(i, w)| !(skip_first && *i == 0) && set.contains(&w.as_str()))
            .count()
    };
    let possessive_count = ws
        .iter()
        .filter(|w| w.ends_with("'s") || w.ends_with("’s"))
        .count();
    // Entities: runs of capitalised words after the first word; numbers; month-led dates.
    let (mut names, mut numbers, mut dates) = (0usize, 0usize, 0usize);
    let mut in_name = false;
    for (i, w) in ws.iter().enumerate() {
        let lw = &lower[i];
        if bench_core::text::MONTHS.contains(&lw.as_str()) && i > 0 {
            dates += 1;
            in_name = false;
        } else if is_number(w) {
            if w.len() == 4 {
                dates += 1; // a bare year
            } else {
                numbers += 1;
            }
            in_name = false;
        } else if i > 0 && is_capitalised(w) {
            if !in_name {
                names += 1;
            }
            in_name = true;
        } else if !(in_name && matches!(lw.as_str(), "of" | "de" | "von" | "the")) {
            in_name = false;
        }
    }
    let clause_count = count_in(SUBORDINATORS, true);
    let preposition_count = count_in(PREPOSITIONS, false);
    QueryFeatures {
        word_count: ws.len(),
        clause_count,
        coordination_count: count_in(COORDINATORS, false),
        preposition_count,
        possessive_count,
        entity_count: names + numbers + dates,
        entity_type_count: [names, numbers, dates].iter().filter(|&&n| n > 0).count(),
        wh_question: lower
            .first()
            .is_some_and(|w| WH_WORDS.contains(&w.as_str())),
        depth_proxy: 2.0
            + clause_count as f64
            + possessive_count as f64
            + preposition_count as f64 / 2.0,
    }
}

/// EA-GraphRAG's heuristic complexity score s(q) in [0, 1], over the features above:
/// min(depth/8, 0.3) + min(clauses/3, 0.25) + min(entities/5, 0.2)
/// + 0.15 if subordinated + 0.1 if coordinated, capped at 1.
pub fn complexity_score_of(f: &QueryFeatures) -> f64 {
    let mut s = (f.depth_proxy / 8.0).min(0.3);
    s += (f.clause_count as f64 / 3.0).min(0.25);
    s += (f.entity_count as f64 / 5.0).min(0.2);
    if f.has_subordination() {
        s += 0.15;
    }
    if f.has_coordination() {
        s += 0.1;
    }
    s.min(1.0)
}

/// s(q) of a question.
pub fn complexity_score(question: &str) -> f64 {
    complexity_score_of(&query_features(question))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_of_known_questions() {
        let f = query_features("When did Lothair II's mother die?");
        assert_eq!(f.word_count, 6);
        assert_eq!(f.possessive_count, 1);
        assert_eq!(f.entity_count, 1, "{f:?}"); // "Lothair II's" is one name
        assert!(f.wh_question);
        assert_eq!(f.clause_count, 0);

        let f = query_features(
            "Which drugs that treat both migraines and arthritis have interactions with ACE inhibitors?",
        );
        assert_eq!(f.clause_count, 1); // "that"; the opening "Which" asks
        assert_eq!(f.coordination_count, 2); // both, and
        assert_eq!(f.entity_count, 1); // ACE
        assert!(f.has_subordination() && f.has_coordination());

        let f = query_features("Who was born first, Ada Brook or Tom Vale, in 1832?");
        assert_eq!(f.entity_count, 3);
        assert_eq!(f.entity_type_count, 2);
    }

    #[test]
    fn score_follows_the_heuristic_formula() {
        // "What is aspirin?": depth 2 → 0.25, nothing else.
        assert!((complexity_score("What is aspirin?") - 0.25).abs() < 1e-12);
        let complex = complexity_score(
            "Which drugs that treat both migraines and arthritis have interactions with ACE inhibitors?",
        );
        // depth 2 + 1 clause + 1 prep/2 = 3.5 → 3.5/8 capped at 0.3; clauses min(1/3, 0.25);
        // entities min(1/5, 0.2); + 0.15 subordination + 0.1 coordination = 1.0.
        let expected = 0.3 + 0.25 + 0.2 + 0.15 + 0.1;
        assert!(
            (complex - expected).abs() < 1e-12,
            "{complex} vs {expected}"
        );
        assert!(complex > 0.7, "a complex question routes to the graph lane");
    }

    #[test]
    fn score_is_bounded() {
        for q in ["", "x", &"who and which and if ".repeat(30)] {
            let s = complexity_score(q);
            assert!((0.0..=1.0).contains(&s), "{q}: {s}");
        }
    }
}
