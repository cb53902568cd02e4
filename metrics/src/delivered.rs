//! The offline judge "answer delivered": does the context a paradigm delivered hold the gold answer?
//!
//! decisions.md, "Offline default" (revised 2026-12-01). With no LLM there is no generator whose
//! answer could be judged, so the offline outcome is retrieval-side, as dense-retrieval papers'
//! top-k answer accuracy:
//!
//! - No context (LLM-only, or a retriever that found nothing): `NoAnswer`.
//! - Otherwise, when some gold answer or alias is *informative*, the label is `Correct` when the
//!   context (the chunks the reader received, after the budget cut) contains one of the
//!   informative ones as a whole-token sequence after SQuAD normalisation, inside one chunk;
//!   `Incorrect` when none does.
//! - A gold string is *uninformative* when any text may contain it: it normalises to nothing,
//!   to `yes` or `no`, or to one token of a single character (a digit, a letter). When every gold
//!   string is uninformative the label comes from the gold evidence instead: `Correct` when every
//!   gold chunk is in the context (full evidence recall), `Incomplete` when some are, `Incorrect`
//!   when none is or the question has no gold chunks.
//! - Long answers (added 2026-12-03): a question whose evidence is given as statements and whose
//!   every informative gold string is longer than a short span (more than `short_answer_tokens`
//!   normalised tokens, 5 by default) cannot be delivered verbatim: a context delivers it when it
//!   holds the gold evidence, i.e. at least `statement_share` (0.8) of the question's matched
//!   statements each have a chunk in the context (`Correct`), some (`Incomplete`), none or no
//!   matched statement (`Incorrect`). Short answers keep the rules above, unchanged.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use bench_core::config::JudgeConfig;
use bench_core::{ContextChunk, GoldAnswer, Judge, JudgeLabel, Query, StatementMatch, Verdict};

use crate::answer::{evidence_recall, tokens};

/// The judge's identity: part of a run's key, so rows of this judge never mix with the sentence
/// judge's (`offline-recall>=…`).
pub const DELIVERED_JUDGE: &str = "offline-delivered-v2";

/// Whether any text may contain this (SQuAD-tokenised) gold string: see the module doc.
pub fn is_uninformative(gold_tokens: &[String]) -> bool {
    match gold_tokens {
        [] => true,
        [t] => t == "yes" || t == "no" || t.chars().count() == 1,
        _ => false,
    }
}

/// The informative gold strings, each as its normalised tokens joined by single spaces.
pub fn informative_golds(gold: &GoldAnswer) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for g in gold.all() {
        let t = tokens(g);
        if !is_uninformative(&t) {
            let joined = t.join(" ");
            if !out.contains(&joined) {
                out.push(joined);
            }
        }
    }
    out
}

/// Whether `normalised` (tokens joined by single spaces) holds `needle` (likewise) as a whole-token
/// sequence.
pub fn contains_tokens(normalised: &str, needle: &str) -> bool {
    if needle.is_empty() {
        return false;
    }
    let (h, n) = (normalised.as_bytes(), needle.as_bytes());
    let mut from = 0;
    while let Some(pos) = normalised[from..].find(needle) {
        let start = from + pos;
        let end = start + n.len();
        let left_ok = start == 0 || h[start - 1] == b' ';
        let right_ok = end == h.len() || h[end] == b' ';
        if left_ok && right_ok {
            return true;
        }
        // Tokens are separated by one space, so the next whole-token match starts past this one's
        // first byte; `find` moves on by one character.
        from = start + normalised[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// The "answer delivered" label of a context (texts already SQuAD-normalised, in context order,
/// with their chunk ids) for a question.
pub fn delivered_label<'a>(
    gold: &GoldAnswer,
    gold_chunks: &[String],
    context: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> JudgeLabel {
    let context: Vec<(&str, &str)> = context.into_iter().collect();
    if context.is_empty() {
        return JudgeLabel::NoAnswer;
    }
    let golds = informative_golds(gold);
    if golds.is_empty() {
        return match evidence_recall(gold_chunks, context.iter().map(|(id, _)| *id)) {
            Some(r) if r >= 1.0 => JudgeLabel::Correct,
            Some(r) if r > 0.0 => JudgeLabel::Incomplete,
            _ => JudgeLabel::Incorrect,
        };
    }
    let hit = context
        .iter()
        .any(|(_, text)| golds.iter().any(|g| contains_tokens(text, g)));
    if hit {
        JudgeLabel::Correct
    } else {
        JudgeLabel::Incorrect
    }
}

/// Which rule labels a question's tuples offline (see the module doc); recorded in each tuple's
/// trace as `judge_rule`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeliveredRule {
    /// Some informative gold string is a short span (or there are no statements): it must be in
    /// the context.
    Answer,
    /// Every gold string is uninformative (yes/no, one character): every gold chunk.
    EvidenceChunks,
    /// A long gold answer with evidence statements: the share of statements delivered.
    EvidenceStatements,
}

impl DeliveredRule {
    /// The rule's name, as recorded in a tuple's trace.
    pub fn as_str(self) -> &'static str {
        match self {
            DeliveredRule::Answer => "answer",
            DeliveredRule::EvidenceChunks => "evidence-chunks",
            DeliveredRule::EvidenceStatements => "evidence-statements",
        }
    }
}

/// The rule for a question with these gold strings and evidence statements, where a short span
/// has at most `short_answer_tokens` normalised tokens.
pub fn delivered_rule(
    gold: &GoldAnswer,
    statements: &[StatementMatch],
    short_answer_tokens: usize,
) -> DeliveredRule {
    let golds = informative_golds(gold);
    if golds.is_empty() {
        DeliveredRule::EvidenceChunks
    } else if !statements.is_empty()
        && golds
            .iter()
            .all(|g| g.split(' ').count() > short_answer_tokens)
    {
        DeliveredRule::EvidenceStatements
    } else {
        DeliveredRule::Answer
    }
}

/// The long-answer label: the share of matched statements with a chunk among `context_ids`
/// against `share` (no context: `NoAnswer`; no matched statement: `Incorrect`).
pub fn statements_label<'a>(
    statements: &[StatementMatch],
    share: f64,
    context_ids: impl IntoIterator<Item = &'a str>,
) -> JudgeLabel {
    let ids: Vec<&str> = context_ids.into_iter().collect();
    if ids.is_empty() {
        return JudgeLabel::NoAnswer;
    }
    let matched: Vec<&StatementMatch> = statements.iter().filter(|s| s.is_matched()).collect();
    if matched.is_empty() {
        return JudgeLabel::Incorrect;
    }
    let held = matched
        .iter()
        .filter(|s| s.chunks.iter().any(|c| ids.contains(&c.as_str())))
        .count();
    // Compared as counts, so that a share of 0.8 of 5 statements asks for exactly 4.
    if held as f64 >= share * matched.len() as f64 - 1e-9 {
        JudgeLabel::Correct
    } else if held > 0 {
        JudgeLabel::Incomplete
    } else {
        JudgeLabel::Incorrect
    }
}

/// The offline judge of decisions.md: looks at the delivered context, never at the reader's answer.
/// Normalised chunk texts are kept by chunk id, so a chunk is normalised once per run.
#[derive(Debug)]
pub struct DeliveredJudge {
    normalised: Mutex<HashMap<String, Arc<str>>>,
    short_answer_tokens: usize,
    statement_share: f64,
}

impl Default for DeliveredJudge {
    fn default() -> Self {
        Self::with_config(&JudgeConfig::default())
    }
}

impl DeliveredJudge {
    /// The judge with the default configuration.
    pub fn new() -> Self {
        Self::default()
    }

    /// With the long-answer settings of `config` (`short_answer_tokens`, `statement_share`).
    pub fn with_config(config: &JudgeConfig) -> Self {
        DeliveredJudge {
            normalised: Mutex::default(),
            short_answer_tokens: config.short_answer_tokens,
            statement_share: config.statement_share,
        }
    }

    /// The rule that labels `query`'s tuples.
    pub fn rule_for(&self, query: &Query) -> DeliveredRule {
        delivered_rule(&query.gold, &query.statements, self.short_answer_tokens)
    }

    fn normalised(&self, chunk: &ContextChunk<'_>) -> Arc<str> {
        if let Some(t) = self
            .normalised
            .lock()
            .expect("not poisoned")
            .get(chunk.chunk_id)
        {
            return t.clone();
        }
        let t: Arc<str> = tokens(chunk.text).join(" ").into();
        self.normalised
            .lock()
            .expect("not poisoned")
            .insert(chunk.chunk_id.to_owned(), t.clone());
        t
    }

    /// The label of `context` for `query` (see the module doc).
    pub fn label(&self, query: &Query, context: &[ContextChunk<'_>]) -> JudgeLabel {
        if self.rule_for(query) == DeliveredRule::EvidenceStatements {
            return statements_label(
                &query.statements,
                self.statement_share,
                context.iter().map(|c| c.chunk_id),
            );
        }
        let texts: Vec<Arc<str>> = context.iter().map(|c| self.normalised(c)).collect();
        delivered_label(
            &query.gold,
            &query.gold_chunks,
            context.iter().zip(&texts).map(|(c, t)| (c.chunk_id, &**t)),
        )
    }
}

#[async_trait]
impl Judge for DeliveredJudge {
    fn identity(&self) -> String {
        DELIVERED_JUDGE.to_owned()
    }

    fn rule(&self, query: &Query) -> Option<&'static str> {
        Some(self.rule_for(query).as_str())
    }

    /// Without a context nothing was delivered.
    async fn judge(&self, _query: &Query, _response: &str) -> bench_core::Result<Verdict> {
        Ok(Verdict {
            label: JudgeLabel::NoAnswer,
            tokens_in: 0,
            tokens_out: 0,
        })
    }

    async fn judge_in_context(
        &self,
        query: &Query,
        _response: &str,
        context: &[ContextChunk<'_>],
    ) -> bench_core::Result<Verdict> {
        Ok(Verdict {
            label: self.label(query, context),
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

    fn norm(s: &str) -> String {
        tokens(s).join(" ")
    }

    fn label(g: &GoldAnswer, gold_chunks: &[&str], ctx: &[(&str, &str)]) -> JudgeLabel {
        let gc: Vec<String> = gold_chunks.iter().map(|s| s.to_string()).collect();
        let normed: Vec<(String, String)> = ctx
            .iter()
            .map(|(id, t)| (id.to_string(), norm(t)))
            .collect();
        delivered_label(g, &gc, normed.iter().map(|(i, t)| (i.as_str(), t.as_str())))
    }

    #[test]
    fn whole_token_sequences_only() {
        assert!(contains_tokens("born in new york city", "new york"));
        assert!(contains_tokens("new york", "new york"));
        assert!(!contains_tokens("born in newark", "new"));
        assert!(!contains_tokens("anew york", "new york"));
        assert!(!contains_tokens("new yorker", "new york"));
        // The first occurrence is inside a token, the second is whole.
        assert!(contains_tokens("1955x 1955", "1955"));
        assert!(!contains_tokens("york new", "new york"));
        assert!(!contains_tokens("anything", ""));
        assert!(contains_tokens("café au lait", "café"));
    }

    #[test]
    fn answer_or_alias_in_any_chunk_after_squad_normalisation() {
        let g = gold("Ermengarde of Tours", &["Ermengarde"]);
        // Case, punctuation and articles are normalised away.
        assert_eq!(
            label(
                &g,
                &[],
                &[("a", "Lothair married ERMENGARDE OF TOURS, the daughter.")]
            ),
            JudgeLabel::Correct
        );
        // The alias alone is enough, in the second chunk.
        assert_eq!(
            label(
                &g,
                &[],
                &[("a", "Nothing here."), ("b", "Her name: Ermengarde.")]
            ),
            JudgeLabel::Correct
        );
        // Tokens present but not as a sequence: not delivered.
        let g = gold("Tours of Ermengarde", &[]);
        assert_eq!(
            label(&g, &[], &[("a", "Ermengarde of Tours")]),
            JudgeLabel::Incorrect
        );
        // A word that merely starts with the answer is not the answer.
        let g = gold("Paris", &[]);
        assert_eq!(
            label(&g, &[], &[("a", "The Parisian school.")]),
            JudgeLabel::Incorrect
        );
        // A match never spans two chunks.
        let g = gold("New York", &[]);
        assert_eq!(
            label(&g, &[], &[("a", "He moved to New"), ("b", "York Avenue.")]),
            JudgeLabel::Incorrect
        );
    }

    #[test]
    fn no_context_is_no_answer() {
        let g = gold("yes", &[]);
        assert_eq!(label(&g, &["a"], &[]), JudgeLabel::NoAnswer);
        let g = gold("Paris", &[]);
        assert_eq!(label(&g, &[], &[]), JudgeLabel::NoAnswer);
    }

    #[test]
    fn yes_no_and_one_character_golds_use_full_evidence_recall() {
        for g in [
            gold("yes", &[]),
            gold("No.", &["NO"]),
            gold("3", &[]),
            gold("The", &[]),
        ] {
            // The context says "yes", "no" and "3", which proves nothing.
            let ctx = [("c1", "yes no 3 the"), ("c2", "other")];
            assert_eq!(label(&g, &["c1", "c9"], &ctx), JudgeLabel::Incomplete);
            assert_eq!(label(&g, &["c1", "c2"], &ctx), JudgeLabel::Correct);
            assert_eq!(label(&g, &["c9"], &ctx), JudgeLabel::Incorrect);
            // No gold chunks: delivery cannot be shown.
            assert_eq!(label(&g, &[], &ctx), JudgeLabel::Incorrect);
        }
        // One informative alias is enough to use the string rule.
        let g = gold("3", &["three"]);
        assert_eq!(label(&g, &[], &[("c", "three sons")]), JudgeLabel::Correct);
        assert_eq!(label(&g, &["c"], &[("c", "3 sons")]), JudgeLabel::Incorrect);
        // Two-character numbers and years are informative.
        assert!(!is_uninformative(&tokens("12")));
        assert!(!is_uninformative(&tokens("1955")));
        assert!(is_uninformative(&tokens("Yes!")));
    }

    fn statement(text: &str, chunks: &[&str]) -> StatementMatch {
        StatementMatch {
            text: text.into(),
            chunks: chunks.iter().map(|c| c.to_string()).collect(),
            score: 0.7,
            semantic: true,
            sentence: None,
        }
    }

    #[test]
    fn long_answers_with_statements_are_judged_by_their_evidence() {
        let statements = vec![
            statement("BCC most commonly develops in sun-exposed areas.", &["c1"]),
            statement(
                "Common sun-exposed areas for BCC include the face.",
                &["c1", "c2"],
            ),
            statement(
                "Common sun-exposed areas for BCC include the head.",
                &["c2"],
            ),
            statement(
                "Common sun-exposed areas for BCC include the neck.",
                &["c3"],
            ),
            statement(
                "Common sun-exposed areas for BCC include the scalp.",
                &["c4"],
            ),
            statement("A statement the corpus does not hold.", &[]),
        ];
        let long = gold(
            "BCC most commonly develops in sun-exposed areas such as the face, head, and neck.",
            &[],
        );
        // 13 normalised tokens: longer than a short span of 5.
        assert_eq!(
            delivered_rule(&long, &statements, 5),
            DeliveredRule::EvidenceStatements
        );
        // Short answers keep the string rule, even with statements; yes/no keeps the chunk rule;
        // long answers without statements (2Wiki, MuSiQue titles) keep the string rule.
        let five = gold("Basal cell carcinoma of skin", &[]);
        assert_eq!(delivered_rule(&five, &statements, 5), DeliveredRule::Answer);
        assert_eq!(
            delivered_rule(&gold("yes", &[]), &statements, 5),
            DeliveredRule::EvidenceChunks
        );
        assert_eq!(delivered_rule(&long, &[], 5), DeliveredRule::Answer);
        // A short alias keeps the string rule.
        let aliased = gold(&long.answer, &["BCC"]);
        assert_eq!(
            delivered_rule(&aliased, &statements, 5),
            DeliveredRule::Answer
        );

        // 5 matched statements (the sixth matched nothing and does not count): 0.8 of 5 is 4.
        let label = |ids: &[&str]| statements_label(&statements, 0.8, ids.iter().copied());
        assert_eq!(label(&["c1", "c2", "c4"]), JudgeLabel::Correct);
        assert_eq!(label(&["c9", "c2", "c3", "c4"]), JudgeLabel::Correct);
        assert_eq!(label(&["c1", "c3"]), JudgeLabel::Incomplete);
        assert_eq!(label(&["c9"]), JudgeLabel::Incorrect);
        assert_eq!(label(&[]), JudgeLabel::NoAnswer);
        assert_eq!(
            statements_label(&statements, 1.0, ["c1", "c2", "c4"]),
            JudgeLabel::Incomplete
        );
        assert_eq!(
            statements_label(&statements[5..], 0.8, ["c1"]),
            JudgeLabel::Incorrect
        );

        // Through the judge: the context holds the evidence, never the answer's words.
        let q = Query {
            id: "q".into(),
            text: "Where does BCC develop?".into(),
            qtype: bench_core::QueryType::Factual,
            gold: long.clone(),
            evidence: statements.iter().map(|s| s.text.clone()).collect(),
            gold_chunks: vec!["c1".into(), "c2".into(), "c3".into(), "c4".into()],
            gold_documents: Vec::new(),
            statements: statements.clone(),
        };
        let j = DeliveredJudge::new();
        assert_eq!(j.rule(&q), Some("evidence-statements"));
        let ctx = |ids: &'static [&'static str]| -> Vec<ContextChunk<'static>> {
            ids.iter()
                .enumerate()
                .map(|(rank, id)| ContextChunk {
                    chunk_id: id,
                    text: "unrelated words",
                    rank,
                })
                .collect()
        };
        assert_eq!(j.label(&q, &ctx(&["c2", "c1", "c3"])), JudgeLabel::Correct);
        assert_eq!(j.label(&q, &ctx(&["c3"])), JudgeLabel::Incomplete);
        let strict = DeliveredJudge::with_config(&JudgeConfig {
            statement_share: 1.0,
            ..JudgeConfig::default()
        });
        assert_eq!(
            strict.label(&q, &ctx(&["c2", "c1", "c3"])),
            JudgeLabel::Incomplete
        );
    }

    #[tokio::test]
    async fn the_judge_sees_only_the_delivered_context() {
        let q = Query {
            id: "q".into(),
            text: "Where?".into(),
            qtype: bench_core::QueryType::Factual,
            gold: gold("Tours", &[]),
            evidence: vec![],
            gold_chunks: vec![],
            gold_documents: Vec::new(),
            statements: Vec::new(),
        };
        let j = DeliveredJudge::new();
        assert_eq!(j.identity(), "offline-delivered-v2");
        // The answer is irrelevant; the context decides.
        let ctx = [ContextChunk {
            chunk_id: "x#0",
            text: "She died in Tours.",
            rank: 0,
        }];
        let v = j.judge_in_context(&q, "", &ctx).await.unwrap();
        assert_eq!(v.label, JudgeLabel::Correct);
        let v = j.judge_in_context(&q, "Tours", &[]).await.unwrap();
        assert_eq!(v.label, JudgeLabel::NoAnswer);
        // Without a context nothing was delivered.
        assert_eq!(
            j.judge(&q, "Tours").await.unwrap().label,
            JudgeLabel::NoAnswer
        );
        // The cached normalisation is reused by chunk id.
        let v = j.judge_in_context(&q, "", &ctx).await.unwrap();
        assert_eq!(v.label, JudgeLabel::Correct);
    }
}
