//! `ragrouter check-llm`: probes the configured LLM endpoints before a long run (reachable, model
//! listed, chat, JSON mode, context window) and prints a checklist; fails if any check does.

use std::path::PathBuf;

use anyhow::{bail, Context as _, Result};
use bench_core::{BenchConfig, BenchError};
use llm::{
    probe_chat, probe_embedding, CheckReport, EndpointConfig, LlmFileConfig, LlmFlags,
    OpenAiEmbedder, OpenAiLlm,
};

/// Prompt tokens a run adds around the retrieved context: instructions and the question.
const PROMPT_OVERHEAD_TOKENS: u64 = 512;
/// Retries per call during the probe: enough to ride out a blip, short enough to fail fast.
const PROBE_RETRIES: u32 = 2;

#[derive(clap::Args, Debug)]
pub struct CheckLlmArgs {
    /// Base URL of an OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 (else the
    /// configuration's llm.answer.base_url, else $OPENAI_BASE_URL, else OpenAI's).
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// Model to probe (else the configuration's llm.answer.model). The API key is read from
    /// $OPENAI_API_KEY or the configured api_key_env, never from a flag.
    #[arg(long)]
    pub llm_model: Option<String>,
    /// TOML configuration: its [llm.*] tables, and the context budget and max_tokens to check for.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// The run configuration of `path` with its `[llm]` tables set aside (they are `llm`'s).
fn bench_config(path: &std::path::Path) -> Result<BenchConfig> {
    let text = bench_core::input::read_text(path, "config")?;
    let mut table: toml::Table = text
        .parse()
        .map_err(|e| BenchError::Invalid(format!("config {}: {e}", path.display())))?;
    table.remove("llm");
    let config: BenchConfig = toml::Value::Table(table)
        .try_into()
        .map_err(|e| BenchError::Invalid(format!("config {}: {e}", path.display())))?;
    config
        .validate()
        .map_err(|e| BenchError::Invalid(format!("config {}: {e}", path.display())))?;
    Ok(config)
}

fn probe_client(cfg: &EndpointConfig) -> Result<OpenAiLlm> {
    let mut cfg = cfg.clone();
    cfg.max_retries = cfg.max_retries.min(PROBE_RETRIES);
    Ok(OpenAiLlm::new(cfg).map_err(BenchError::from)?)
}

pub fn run(args: &CheckLlmArgs) -> Result<()> {
    let (config, file) = match &args.config {
        Some(p) => (
            bench_config(p)?,
            LlmFileConfig::from_toml_file(p).map_err(BenchError::from)?,
        ),
        None => (BenchConfig::default(), None),
    };
    let flags = LlmFlags {
        base_url: args.llm_base_url.clone(),
        model: args.llm_model.clone(),
    };
    let settings = llm::resolve(file.as_ref(), &flags, &|k| std::env::var(k).ok())
        .map_err(BenchError::from)?
        .ok_or_else(|| {
            BenchError::Invalid(
                "no LLM endpoint is configured (runs are offline): pass --llm-model \
                 (and --llm-base-url), or set [llm.answer] model in --config"
                    .into(),
            )
        })?;
    let needed = config.retrieval.context_budget
        + u64::from(config.generation.max_tokens)
        + PROMPT_OVERHEAD_TOKENS;
    let reply_tokens = config.generation.max_tokens;

    // Roles sharing an endpoint are probed once.
    let mut chat: Vec<(String, Vec<&str>, &EndpointConfig)> = Vec::new();
    for (role, cfg) in settings.roles().into_iter().take(3) {
        match chat.iter_mut().find(|(id, _, _)| *id == cfg.identity()) {
            Some((_, roles, _)) => roles.push(role),
            None => chat.push((cfg.identity(), vec![role], cfg)),
        }
    }
    let separate_embedding = settings.embedding.model != settings.answer.model;

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let mut reports: Vec<CheckReport> = Vec::new();
    for (_, roles, cfg) in &chat {
        let client = probe_client(cfg)?;
        reports.push(runtime.block_on(probe_chat(
            &client,
            &roles.join(", "),
            needed,
            reply_tokens,
        )));
    }
    if separate_embedding {
        let client = probe_client(&settings.embedding)?;
        let embedder =
            OpenAiEmbedder::with_env(settings.embedding.clone(), &|k| std::env::var(k).ok())
                .map_err(BenchError::from)?;
        reports.push(runtime.block_on(probe_embedding(&client, &embedder)));
    }

    println!(
        "context needed: {needed} tokens (context budget {} + max_tokens {} + {PROMPT_OVERHEAD_TOKENS} for instructions and question)",
        config.retrieval.context_budget, config.generation.max_tokens
    );
    for r in &reports {
        print!("{}", r.render());
    }
    if !separate_embedding {
        println!("embedding: no separate embedding model configured (the local encoder embeds)");
    }
    let failed: usize = reports.iter().map(CheckReport::failures).sum();
    let total: usize = reports.iter().map(|r| r.items.len()).sum();
    if failed > 0 {
        bail!("{failed} of {total} LLM checks failed");
    }
    println!("all {total} checks passed");
    Ok(())
}
