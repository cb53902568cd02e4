//! Template questions from the knowledge graph's triplets: the offline generator.
//!
//! Factual: one fact (A, r, B) asks for B. Reasoning: two facts A -r1-> B -r2-> C from two
//! documents ask for C without naming the bridge B. Summary: an entity's facts from two or more
//! documents ask for every entity linked to it. The wording is a template, not natural
//! language: these sets prove the pipeline and exercise retrieval, not a reader's fluency.

use async_trait::async_trait;
use bench_core::QueryType;

use super::{Candidate, Generator, Source};
use crate::error::Result;

/// Bumped whenever a template changes.
pub const TEMPLATES_VERSION: &str = "offline-templates/1";

/// The offline generator.
#[derive(Debug, Default)]
pub struct TemplateGenerator;

#[async_trait]
impl Generator for TemplateGenerator {
    fn identity(&self) -> String {
        TEMPLATES_VERSION.to_owned()
    }

    async fn generate(&self, qtype: QueryType, source: &Source<'_>) -> Result<Option<Candidate>> {
        Ok(template(qtype, source))
    }
}

/// The entity as the source text spells it (graph names are lower-cased), else as stored.
fn surface(source: &Source<'_>, name: &str) -> String {
    for ch in &source.chunks {
        let lower = ch.text.to_lowercase();
        // Lower-casing kept the byte offsets only when the lengths agree.
        if lower.len() == ch.text.len() {
            if let Some(at) = lower.find(name) {
                if ch.text.is_char_boundary(at) && ch.text.is_char_boundary(at + name.len()) {
                    return ch.text[at..at + name.len()].to_owned();
                }
            }
        }
    }
    name.to_owned()
}

fn template(qtype: QueryType, source: &Source<'_>) -> Option<Candidate> {
    let rows = |facts: &[(String, String, String, u32)]| {
        let mut r: Vec<u32> = facts.iter().map(|f| f.3).collect();
        r.dedup();
        r
    };
    match qtype {
        QueryType::Factual | QueryType::Other => {
            let (a, r, b, _) = source.facts.first()?;
            let a_s = surface(source, a);
            Some(Candidate {
                qtype,
                question: format!("Which entity is {a_s} linked to by \"{r}\"?"),
                answer: surface(source, b),
                sources: rows(&source.facts[..1]),
                named: vec![a_s],
            })
        }
        QueryType::Reasoning => {
            let [(a, r1, _b, _), (_, r2, c, _)] = source.facts.get(..2)? else {
                return None;
            };
            let a_s = surface(source, a);
            Some(Candidate {
                qtype,
                question: format!(
                    "Which entity is linked by \"{r2}\" to the one that {a_s} is linked to by \"{r1}\"?"
                ),
                answer: surface(source, c),
                sources: source.chunks.iter().map(|c| c.index).collect(),
                named: vec![a_s],
            })
        }
        QueryType::Summary => {
            let focus = source.focus.as_deref()?;
            let mut others: Vec<String> = source
                .facts
                .iter()
                .map(|(s, _, o, _)| if s == focus { o } else { s })
                .map(|n| surface(source, n))
                .collect();
            others.sort();
            others.dedup();
            if others.len() < 2 {
                return None;
            }
            let last = others.pop()?;
            let f = surface(source, focus);
            Some(Candidate {
                qtype,
                question: format!(
                    "Across the documents, which entities are linked to {f}? Name them all."
                ),
                answer: format!("{} and {last}", others.join(", ")),
                sources: source.chunks.iter().map(|c| c.index).collect(),
                named: vec![f],
            })
        }
    }
}
