//! The endpoint probe behind `ragrouter check-llm`: reachable, model listed, chat, JSON mode,
//! context window; each a line of a checklist.

use std::fmt::Write as _;
use std::time::Instant;

use bench_core::{ChatMessage, ChatRequest, Llm};

use crate::client::OpenAiLlm;
use crate::embed::OpenAiEmbedder;

/// Metadata keys servers use for a model's context window (vLLM, OpenRouter, LM Studio,
/// llama.cpp, others), looked up on the model entry and in its `meta` object.
const CONTEXT_KEYS: &[&str] = &[
    "context_length",
    "max_model_len",
    "context_window",
    "max_context_length",
    "n_ctx",
    "n_ctx_train",
];

/// One line of the checklist.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckItem {
    /// What was checked (`models`, `chat`, ...).
    pub name: &'static str,
    /// Whether the check passed.
    pub ok: bool,
    /// What was found, or why it failed.
    pub detail: String,
}

/// What the probe of one endpoint found.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// Roles sharing this endpoint, e.g. `answer, judge`.
    pub roles: String,
    /// The endpoint's identity (`model@base_url`).
    pub identity: String,
    /// Where the API key came from (never the key itself).
    pub key_note: String,
    /// The checklist, in the order run.
    pub items: Vec<CheckItem>,
}

impl CheckReport {
    /// Whether every check passed.
    pub fn passed(&self) -> bool {
        self.items.iter().all(|i| i.ok)
    }

    /// How many checks failed.
    pub fn failures(&self) -> usize {
        self.items.iter().filter(|i| !i.ok).count()
    }

    /// The checklist as printed.
    pub fn render(&self) -> String {
        let mut s = format!("{} [{}] ({})\n", self.identity, self.roles, self.key_note);
        for i in &self.items {
            let _ = writeln!(
                s,
                "  [{}] {:<15} {}",
                if i.ok { " ok " } else { "FAIL" },
                i.name,
                i.detail
            );
        }
        s
    }
}

fn item(name: &'static str, ok: bool, detail: impl Into<String>) -> CheckItem {
    CheckItem {
        name,
        ok,
        detail: detail.into(),
    }
}

/// Text of at least `tokens` cl100k tokens ending in a short instruction.
pub fn filler_prompt(tokens: u64) -> String {
    const SENTENCE: &str = "The archive lists every river, bridge and mill of the old county. ";
    const ASK: &str = "\nIgnore the text above and reply with the single word OK.";
    let per = bench_core::tokens::count(SENTENCE).max(1);
    let mut body = String::new();
    // Repeated sentences merge tokens at their seams, so measure and top up until long enough.
    loop {
        let s = format!("{body}{ASK}");
        let n = bench_core::tokens::count(&s);
        if n >= tokens {
            return s;
        }
        body.push_str(&SENTENCE.repeat(((tokens - n) / per) as usize + 1));
    }
}

/// Probes a chat endpoint. `needed_context` is the prompt-plus-reply size a run needs (the
/// 8k context budget, the question and instructions, `max_tokens`); `reply_tokens` is the
/// run's `max_tokens`.
pub async fn probe_chat(
    client: &OpenAiLlm,
    roles: &str,
    needed_context: u64,
    reply_tokens: u32,
) -> CheckReport {
    let cfg = client.config();
    let mut report = CheckReport {
        roles: roles.into(),
        identity: client.identity(),
        key_note: key_note(cfg, client.has_key()),
        items: Vec::new(),
    };
    let Some(entry) = list_models(client, &mut report).await else {
        return report;
    };

    let t = Instant::now();
    let tiny = ChatRequest {
        messages: vec![ChatMessage::user("Reply with the single word OK.")],
        temperature: 0.0,
        max_tokens: 5,
        json: false,
    };
    report.items.push(match client.chat(&tiny).await {
        Ok(r) => {
            let (i, o, source) = r.token_bill(&tiny);
            item(
                "chat",
                !r.content.trim().is_empty(),
                format!(
                    "replied {:?} in {} ms; tokens {i} in, {o} out ({})",
                    r.content.trim(),
                    t.elapsed().as_millis(),
                    match source {
                        bench_core::TokenSource::Usage => "usage reported by the server",
                        _ => "no usage reported: counted with cl100k",
                    }
                ),
            )
        }
        Err(e) => item("chat", false, e.to_string()),
    });

    let json = ChatRequest {
        messages: vec![
            ChatMessage::system("You reply with one JSON object and nothing else."),
            ChatMessage::user("Return the JSON object {\"ok\": true}."),
        ],
        temperature: 0.0,
        max_tokens: 20,
        json: true,
    };
    report.items.push(match client.chat(&json).await {
        Ok(r) => match serde_json::from_str::<serde_json::Value>(&r.content) {
            Ok(v) if v.is_object() => item("JSON mode", true, format!("reply parses: {v}")),
            _ => item(
                "JSON mode",
                false,
                format!("reply is not a JSON object: {}", r.content),
            ),
        },
        Err(e) => item("JSON mode", false, e.to_string()),
    });

    report
        .items
        .push(context_window(client, &entry, needed_context, reply_tokens).await);
    report
}

/// Probes an embedding endpoint: listed, and one vector back.
pub async fn probe_embedding(client: &OpenAiLlm, embedder: &OpenAiEmbedder) -> CheckReport {
    let mut report = CheckReport {
        roles: "embedding".into(),
        identity: embedder.identity(),
        key_note: key_note(client.config(), client.has_key()),
        items: Vec::new(),
    };
    if list_models(client, &mut report).await.is_none() {
        return report;
    }
    report
        .items
        .push(match embedder.embed(&["reachable?".to_owned()]).await {
            Ok(e) => item(
                "embedding",
                true,
                format!("one vector of {} dimensions", e.dim),
            ),
            Err(e) => item("embedding", false, e.to_string()),
        });
    report
}

fn key_note(cfg: &crate::EndpointConfig, has_key: bool) -> String {
    if has_key {
        format!("API key from ${}", cfg.api_key_env)
    } else {
        format!("no API key: ${} is not set", cfg.api_key_env)
    }
}

/// `GET /models`: pushes the reachability and model checks; the model's entry when both pass.
async fn list_models(client: &OpenAiLlm, report: &mut CheckReport) -> Option<serde_json::Value> {
    let model = client.config().model.clone();
    let t = Instant::now();
    let (status, body) = match client.get_json("/models").await {
        Ok(x) => x,
        Err(e) => {
            report.items.push(item("reachable", false, e.to_string()));
            return None;
        }
    };
    if !(200..300).contains(&status) {
        let hint = if status == 401 || status == 403 {
            " (the key was rejected)"
        } else {
            ""
        };
        report.items.push(item(
            "reachable",
            false,
            format!("GET /models answered HTTP {status}{hint}: {body}"),
        ));
        return None;
    }
    let ids: Vec<&str> = body["data"]
        .as_array()
        .map(|a| a.iter().filter_map(|m| m["id"].as_str()).collect())
        .unwrap_or_default();
    report.items.push(item(
        "reachable",
        true,
        format!(
            "GET /models answered in {} ms, {} models",
            t.elapsed().as_millis(),
            ids.len()
        ),
    ));
    match body["data"]
        .as_array()
        .and_then(|a| a.iter().find(|m| m["id"] == model.as_str()))
    {
        Some(entry) => {
            report
                .items
                .push(item("model present", true, format!("{model} is listed")));
            Some(entry.clone())
        }
        None => {
            let shown: Vec<&str> = ids.iter().take(12).copied().collect();
            report.items.push(item(
                "model present",
                false,
                format!(
                    "{model} is not listed; the server lists: {}",
                    shown.join(", ")
                ),
            ));
            None
        }
    }
}

/// The context window from the model's metadata, else by sending a prompt of the needed size.
async fn context_window(
    client: &OpenAiLlm,
    entry: &serde_json::Value,
    needed: u64,
    reply_tokens: u32,
) -> CheckItem {
    let reported = CONTEXT_KEYS.iter().find_map(|k| {
        entry[*k]
            .as_u64()
            .or_else(|| entry["meta"][*k].as_u64())
            .map(|n| (*k, n))
    });
    if let Some((key, n)) = reported {
        return item(
            "context window",
            n >= needed,
            format!("{n} tokens (from /models `{key}`); a run needs {needed}"),
        );
    }
    let prompt_tokens = needed.saturating_sub(u64::from(reply_tokens));
    let request = ChatRequest {
        messages: vec![ChatMessage::user(filler_prompt(prompt_tokens))],
        temperature: 0.0,
        max_tokens: reply_tokens,
        json: false,
    };
    let sent = bench_core::tokens::count(&request.messages[0].content);
    match client.chat(&request).await {
        Ok(_) => item(
            "context window",
            true,
            format!("not reported; a {sent}-token prompt with max_tokens {reply_tokens} was accepted (a run needs {needed})"),
        ),
        Err(e) => item(
            "context window",
            false,
            format!("not reported; a {sent}-token prompt with max_tokens {reply_tokens} was refused: {e}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn filler_prompt_reaches_the_size() {
        for n in [10, 1_000, 8_512] {
            let c = bench_core::tokens::count(&super::filler_prompt(n));
            assert!(c >= n && c < n + 40, "{n}: {c}");
        }
    }
}
