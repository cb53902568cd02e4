//! The LLM-as-a-Judge of Appendix C.1: its prompt, the strict parsing of its reply, and `LlmJudge`.
//!
//! The paper's Figure 17 template is not reproduced; the prompt below states the paper's three
//! categories in this project's own words. Changing the prompt changes results, so it is
//! versioned and the version is part of the judge's identity (and hence of a run's key).

use std::sync::Arc;

use async_trait::async_trait;
use bench_core::{
    BenchError, ChatMessage, ChatRequest, GoldAnswer, Judge, JudgeLabel, Llm, LlmErrorKind, Query,
    Verdict,
};

/// Version of the judge's system prompt (`JUDGE_SYSTEM_PROMPT`) and of the user message layout
/// of [`judge_request`].
pub const JUDGE_PROMPT_VERSION: &str = "judge-v1";

/// The judge's instructions: the paper's three mutually exclusive categories.
pub const JUDGE_SYSTEM_PROMPT: &str = "\
You grade answers to questions. You are given a question, its reference answer (possibly with \
other acceptable forms of it) and a response to grade. Put the response in exactly one category:
- Correct: the response is accurate and contains the essential information of the reference \
answer. Different wording, extra detail or a longer explanation is fine as long as nothing \
contradicts the reference.
- Incorrect: the response states something wrong, or something that contradicts the reference \
answer.
- Incomplete: the response is partly right but leaves out information the reference answer \
requires, or it declines to answer or says it cannot answer.
Reply with JSON only, exactly one of: {\"label\": \"Correct\"}, {\"label\": \"Incorrect\"}, \
{\"label\": \"Incomplete\"}.";

/// Long enough for the JSON label (and a code fence some models add), short enough to be cheap.
pub const JUDGE_MAX_TOKENS: u32 = 32;

/// The chat request that asks the judge to grade `response` against the gold answers.
pub fn judge_request(question: &str, gold: &GoldAnswer, response: &str) -> ChatRequest {
    let mut user = format!(
        "Question: {}\nReference answer: {}\n",
        question.trim(),
        gold.answer.trim()
    );
    let aliases: Vec<&str> = gold
        .aliases
        .iter()
        .map(|a| a.trim())
        .filter(|a| !a.is_empty())
        .collect();
    if !aliases.is_empty() {
        user.push_str(&format!("Also acceptable: {}\n", aliases.join(" | ")));
    }
    user.push_str(&format!("Response: {}\n", response.trim()));
    ChatRequest {
        messages: vec![
            ChatMessage::system(JUDGE_SYSTEM_PROMPT),
            ChatMessage::user(user),
        ],
        // Grading must be repeatable.
        temperature: 0.0,
        max_tokens: JUDGE_MAX_TOKENS,
        json: true,
    }
}

/// The three labels a judge may give, lower-cased.
const LABELS: [(&str, JudgeLabel); 3] = [
    ("correct", JudgeLabel::Correct),
    ("incorrect", JudgeLabel::Incorrect),
    ("incomplete", JudgeLabel::Incomplete),
];

/// Words that turn a following label into something else ("not correct", "partially correct").
const QUALIFIERS: &[&str] = &[
    "not",
    "t", // the tail of "isn't", "wasn't" once split at the apostrophe
    "never",
    "no",
    "partially",
    "partly",
    "mostly",
    "largely",
    "almost",
    "somewhat",
    "half",
];

/// The label in a judge's reply, or `None` when it cannot be read with certainty (never guessed).
///
/// Accepted, case-insensitively: a JSON object with a string `label` (also inside a code fence
/// or prose; its value must then be exactly one label), a bare word, or a label somewhere in
/// prose ("Verdict: Incomplete."). `None` when no label appears, when different labels appear
/// ("correct but incomplete"), or when a label is qualified ("not correct", "partially correct").
pub fn parse_judge_reply(reply: &str) -> Option<JudgeLabel> {
    if let Some(value) = json_label(reply) {
        // The reply stated its label field: trust that field alone, and only if it is clean.
        let word = value
            .trim()
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        return LABELS.iter().find(|(w, _)| *w == word).map(|&(_, l)| l);
    }
    let words: Vec<String> = reply
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let mut found: Option<JudgeLabel> = None;
    for (i, w) in words.iter().enumerate() {
        let Some(&(_, label)) = LABELS.iter().find(|(l, _)| l == w) else {
            continue;
        };
        if i > 0 && QUALIFIERS.contains(&words[i - 1].as_str()) {
            return None;
        }
        match found {
            Some(f) if f != label => return None,
            _ => found = Some(label),
        }
    }
    found
}

/// The string value of a `label` key (any case) of the first JSON object in `reply`.
fn json_label(reply: &str) -> Option<String> {
    let start = reply.find('{')?;
    let end = reply.rfind('}')?;
    if end < start {
        return None;
    }
    let value: serde_json::Value = serde_json::from_str(&reply[start..=end]).ok()?;
    let obj = value.as_object()?;
    obj.iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("label"))
        // A label field that is not a string still states the label: it reads as no label.
        .map(|(_, v)| v.as_str().unwrap_or_default().to_owned())
}

/// The LLM-as-a-Judge behind the `Judge` trait.
///
/// An empty response is `NoAnswer` without a call (as in the offline judge: nothing to grade, and
/// the no-answer rate is reported apart). A reply that is not a clear label is an error of kind
/// `Unparseable`, so the run records a failed judgement instead of a guessed one.
#[derive(Clone)]
pub struct LlmJudge {
    /// The endpoint that grades.
    pub llm: Arc<dyn Llm>,
}

impl std::fmt::Debug for LlmJudge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmJudge")
            .field("llm", &self.llm.identity())
            .finish()
    }
}

impl LlmJudge {
    /// A judge grading through `llm`.
    pub fn new(llm: Arc<dyn Llm>) -> Self {
        LlmJudge { llm }
    }
}

#[async_trait]
impl Judge for LlmJudge {
    fn identity(&self) -> String {
        format!("llm-judge:{JUDGE_PROMPT_VERSION}:{}", self.llm.identity())
    }

    async fn judge(&self, query: &Query, response: &str) -> bench_core::Result<Verdict> {
        if response.trim().is_empty() {
            return Ok(Verdict {
                label: JudgeLabel::NoAnswer,
                tokens_in: 0,
                tokens_out: 0,
            });
        }
        let request = judge_request(&query.text, &query.gold, response);
        // Only a reply with one clear label is taken (and cached); another is retried by the
        // client, then recorded as a failed judgement.
        let reply = self
            .llm
            .chat_readable(&request, &|c| parse_judge_reply(c).is_some())
            .await?;
        let (tokens_in, tokens_out, _) = reply.token_bill(&request);
        let label = parse_judge_reply(&reply.content).ok_or_else(|| BenchError::Llm {
            kind: LlmErrorKind::Unparseable,
            message: format!(
                "judge reply is not one clear label: {:?}",
                reply.content.chars().take(200).collect::<String>()
            ),
        })?;
        Ok(Verdict {
            label,
            tokens_in,
            tokens_out,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use JudgeLabel::{Correct, Incomplete, Incorrect};

    #[test]
    fn bare_words_any_case() {
        assert_eq!(parse_judge_reply("Correct"), Some(Correct));
        assert_eq!(parse_judge_reply("  incorrect.\n"), Some(Incorrect));
        assert_eq!(parse_judge_reply("INCOMPLETE"), Some(Incomplete));
    }

    #[test]
    fn json_in_fences_and_prose() {
        assert_eq!(parse_judge_reply(r#"{"label": "Correct"}"#), Some(Correct));
        assert_eq!(
            parse_judge_reply("```json\n{\"Label\": \"incomplete\"}\n```"),
            Some(Incomplete)
        );
        // The JSON field decides even when the prose mentions another label.
        assert_eq!(
            parse_judge_reply(r#"Not correct. {"label": "Incorrect"}"#),
            Some(Incorrect)
        );
        // A label field that is not a label is not guessed from the rest.
        assert_eq!(parse_judge_reply(r#"{"label": "mostly correct"}"#), None);
        assert_eq!(parse_judge_reply(r#"{"label": 1} Correct"#), None);
    }

    #[test]
    fn after_prose() {
        assert_eq!(
            parse_judge_reply("The response names the right year. Verdict: Correct"),
            Some(Correct)
        );
        assert_eq!(
            parse_judge_reply("Incomplete - it names one of the two authors; incomplete."),
            Some(Incomplete)
        );
    }

    #[test]
    fn unclear_replies_are_none() {
        assert_eq!(parse_judge_reply(""), None);
        assert_eq!(parse_judge_reply("I cannot decide."), None);
        assert_eq!(parse_judge_reply("Correct but incomplete"), None);
        assert_eq!(parse_judge_reply("Correct, Incorrect or Incomplete?"), None);
        assert_eq!(parse_judge_reply("The answer is not correct."), None);
        assert_eq!(parse_judge_reply("It isn't correct"), None);
        assert_eq!(parse_judge_reply("Partially correct."), None);
        // "correctly" is not the label "correct".
        assert_eq!(parse_judge_reply("It answers correctly"), None);
    }

    #[test]
    fn request_carries_question_gold_and_response() {
        let gold = GoldAnswer {
            answer: "20 March 851".into(),
            aliases: vec!["851".into(), " ".into()],
        };
        let r = judge_request("When did she die?", &gold, " In 851. ");
        assert_eq!(r.messages.len(), 2);
        assert_eq!(r.messages[0].content, JUDGE_SYSTEM_PROMPT);
        assert_eq!(
            r.messages[1].content,
            "Question: When did she die?\nReference answer: 20 March 851\n\
             Also acceptable: 851\nResponse: In 851.\n"
        );
        assert!(r.json);
        assert_eq!(r.temperature, 0.0);
    }
}
