//! Answer-quality metrics (SQuAD EM and F1, answer recall, evidence recall) and the offline judge.

use std::collections::HashMap;

use async_trait::async_trait;
use bench_core::{GoldAnswer, Judge, JudgeLabel, QualityMetrics, Query, Verdict};

/// SQuAD normalisation: lower case, punctuation removed, articles removed, whitespace collapsed.
pub fn normalize_answer(s: &str) -> String {
    tokens(s).join(" ")
}

/// Tokens of the SQuAD-normalised text.
pub fn tokens(s: &str) -> Vec<String> {
    let lowered = s.to_lowercase();
    let no_punct: String = lowered
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c.is_whitespace() {
                c
            } else if c.is_ascii_punctuation() || is_unicode_punctuation(c) {
                // SQuAD deletes ASCII punctuation (joining the words around it); typographic
                // dashes and quotes are deleted too, so "1914–1918" and "1914-1918" agree.
                '\u{0}'
            } else {
                c
            }
        })
        .filter(|&c| c != '\u{0}')
        .collect();
    no_punct
        .split_whitespace()
        .filter(|w| !matches!(*w, "a" | "an" | "the"))
        .map(str::to_owned)
        .collect()
}

fn is_unicode_punctuation(c: char) -> bool {
    matches!(
        c,
        '\u{2010}'..='\u{2027}' | '\u{2030}'..='\u{205E}' | '\u{00A1}' | '\u{00A7}' | '\u{00AB}'
            | '\u{00B6}' | '\u{00B7}' | '\u{00BB}' | '\u{00BF}'
    )
}

fn bag(tokens: &[String]) -> HashMap<&str, usize> {
    let mut m = HashMap::new();
    for t in tokens {
        *m.entry(t.as_str()).or_insert(0) += 1;
    }
    m
}

/// Tokens shared by `pred` and `gold`, counted with multiplicity.
fn common(pred: &[String], gold: &[String]) -> usize {
    let p = bag(pred);
    bag(gold)
        .into_iter()
        .map(|(t, n)| n.min(p.get(t).copied().unwrap_or(0)))
        .sum()
}

/// 1.0 when the normalised strings are equal.
pub fn exact_match(pred: &str, gold: &str) -> f64 {
    f64::from(u8::from(normalize_answer(pred) == normalize_answer(gold)))
}

/// SQuAD token F1.
pub fn token_f1(pred: &str, gold: &str) -> f64 {
    let (p, g) = (tokens(pred), tokens(gold));
    if p.is_empty() || g.is_empty() {
        // SQuAD: F1 is 1 when both are empty, else 0.
        return f64::from(u8::from(p.is_empty() && g.is_empty()));
    }
    let c = common(&p, &g);
    if c == 0 {
        return 0.0;
    }
    let precision = c as f64 / p.len() as f64;
    let recall = c as f64 / g.len() as f64;
    2.0 * precision * recall / (precision + recall)
}

/// Share of the gold answer's normalised tokens (with multiplicity) that the response contains.
/// A gold answer that normalises to nothing (e.g. "The") counts as recalled only on exact match.
pub fn answer_recall(pred: &str, gold: &str) -> f64 {
    let g = tokens(gold);
    if g.is_empty() {
        return exact_match(pred, gold);
    }
    common(&tokens(pred), &g) as f64 / g.len() as f64
}

/// Share of `gold` chunk ids present in `context`; `None` when there is no gold evidence.
pub fn evidence_recall<'a>(
    gold: &[String],
    context: impl IntoIterator<Item = &'a str>,
) -> Option<f64> {
    if gold.is_empty() {
        return None;
    }
    let ctx: std::collections::HashSet<&str> = context.into_iter().collect();
    let hit = gold.iter().filter(|g| ctx.contains(g.as_str())).count();
    Some(hit as f64 / gold.len() as f64)
}

/// Share of `gold` documents with at least one chunk in `context` (chunk ids); `None` when the
/// evidence names no whole document.
pub fn document_recall<'a>(
    gold: &[String],
    context: impl IntoIterator<Item = &'a str>,
) -> Option<f64> {
    if gold.is_empty() {
        return None;
    }
    let docs: std::collections::HashSet<&str> = context
        .into_iter()
        .map(bench_core::Chunk::document_of)
        .collect();
    let hit = gold.iter().filter(|g| docs.contains(g.as_str())).count();
    Some(hit as f64 / gold.len() as f64)
}

/// EM, F1 and answer recall, each the best over the gold answer and its aliases.
pub fn answer_quality(pred: &str, gold: &GoldAnswer) -> QualityMetrics {
    let best = |f: fn(&str, &str) -> f64| gold.all().map(|g| f(pred, g)).fold(0.0, f64::max);
    QualityMetrics {
        em: best(exact_match),
        f1: best(token_f1),
        answer_recall: best(answer_recall),
        ..QualityMetrics::default()
    }
}

/// The sentence judge (decisions.md, "reader correct"), as a pure function of the response and
/// the gold answers: the offline judge before "answer delivered" replaced it.
pub fn offline_label(pred: &str, gold: &GoldAnswer, correct_recall: f64) -> JudgeLabel {
    if pred.trim().is_empty() {
        return JudgeLabel::NoAnswer;
    }
    let recall = answer_quality(pred, gold).answer_recall;
    if recall >= correct_recall {
        JudgeLabel::Correct
    } else if recall > 0.0 {
        JudgeLabel::Incomplete
    } else {
        JudgeLabel::Incorrect
    }
}

/// The sentence judge behind the `Judge` trait: deterministic, free, no LLM. Offline runs judge
/// with [`crate::DeliveredJudge`] and store this verdict as `reader_correct`.
#[derive(Debug, Clone)]
pub struct OfflineJudge {
    /// Share of the gold answer's tokens an answer must hold to count as correct.
    pub correct_recall: f64,
}

#[async_trait]
impl Judge for OfflineJudge {
    fn identity(&self) -> String {
        format!("offline-recall>={}", self.correct_recall)
    }

    async fn judge(&self, query: &Query, response: &str) -> bench_core::Result<Verdict> {
        Ok(Verdict {
            label: offline_label(response, &query.gold, self.correct_recall),
            tokens_in: 0,
            tokens_out: 0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gold(a: &str, aliases: &[&str]) -> GoldAnswer {
        GoldAnswer {
            answer: a.into(),
            aliases: aliases.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn squad_normalisation() {
        assert_eq!(normalize_answer("The  Eiffel-Tower!"), "eiffeltower");
        assert_eq!(normalize_answer("An apple, a pear"), "apple pear");
        assert_eq!(normalize_answer("  "), "");
    }

    #[test]
    fn em_and_f1_match_hand_values() {
        assert_eq!(exact_match("the Cat", "cat"), 1.0);
        assert_eq!(exact_match("cat sat", "cat"), 0.0);
        // pred {barack, obama, born}, gold {barack, obama}: P = 2/3, R = 1, F1 = 0.8.
        assert!((token_f1("Barack Obama born", "Barack Obama") - 0.8).abs() < 1e-12);
        assert_eq!(token_f1("", ""), 1.0);
        assert_eq!(token_f1("x", ""), 0.0);
        assert_eq!(token_f1("dog", "cat"), 0.0);
    }

    #[test]
    fn recall_counts_multiplicity() {
        // gold "new new york" needs "new" twice.
        assert!((answer_recall("new york", "new new york") - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(answer_recall("It was in 1955.", "1955"), 1.0);
        assert_eq!(answer_recall("anything", "The"), 0.0);
    }

    #[test]
    fn judge_labels_follow_the_recall_thresholds() {
        let g = gold("20 March 851", &["851"]);
        assert_eq!(offline_label("", &g, 0.8), JudgeLabel::NoAnswer);
        assert_eq!(offline_label("   ", &g, 0.8), JudgeLabel::NoAnswer);
        assert_eq!(
            offline_label("She died on 20 March 851 in Tours.", &g, 0.8),
            JudgeLabel::Correct
        );
        // The alias alone is enough.
        assert_eq!(offline_label("In 851.", &g, 0.8), JudgeLabel::Correct);
        let g = gold("Ermengarde of Tours", &[]);
        // Shares {ermengarde, of} of {ermengarde, of, tours}: recall 2/3, incomplete.
        assert_eq!(
            offline_label("Ermengarde of Hesbaye", &g, 0.8),
            JudgeLabel::Incomplete
        );
        assert_eq!(offline_label("Nobody", &g, 0.8), JudgeLabel::Incorrect);
    }

    #[test]
    fn evidence_recall_is_share_of_gold_in_context() {
        let gold = vec!["a#0".to_string(), "b#0".to_string()];
        assert_eq!(evidence_recall(&gold, ["b#0", "c#0"]), Some(0.5));
        assert_eq!(evidence_recall(&[], ["b#0"]), None);
    }

    #[tokio::test]
    async fn offline_judge_implements_the_trait() {
        let q = Query {
            id: "q".into(),
            text: "When?".into(),
            qtype: bench_core::QueryType::Factual,
            gold: gold("1955", &[]),
            evidence: vec![],
            gold_chunks: vec![],
            gold_documents: Vec::new(),
            statements: Vec::new(),
        };
        let v = OfflineJudge {
            correct_recall: 0.8,
        }
        .judge(&q, "In 1955.")
        .await
        .unwrap();
        assert_eq!(v.label, JudgeLabel::Correct);
        assert_eq!(v.tokens_in + v.tokens_out, 0);
    }
}
