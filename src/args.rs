//! Flag groups that several commands flatten into their arguments, each declared once: the
//! results database, the encoder, the data directory and the LLM endpoint.

use std::path::PathBuf;

use clap::Args;

/// The results database flag of every command that reads or writes it.
#[derive(Debug, Args, Clone)]
pub struct StoreArgs {
    /// Results database: an SQLite file, or postgres://USER@HOST[:PORT]/DB (which several
    /// `bench` workers, on one machine or many, share to answer one run together).
    #[arg(
        long,
        env = "RAGROUTER_DB",
        default_value = ".ragrouter/results.sqlite",
        value_parser = DbParser
    )]
    pub db: store::DbTarget,
}

/// Removes every `RAGROUTER_*` variable whose value is empty from this process's environment,
/// so that an empty value means unset for every reader: clap's `env =` takes an empty value
/// as given (`RAGROUTER_MODEL_DIR=` became `--model-dir ''`, refused), while the library
/// readers ignored it. Called first thing in `main`, before the flags are parsed and before
/// any thread starts (changing the environment is not safe once other threads may read it).
pub fn unset_empty_env() {
    let empty: Vec<std::ffi::OsString> = std::env::vars_os()
        .filter(|(k, v)| v.is_empty() && k.to_str().is_some_and(|k| k.starts_with("RAGROUTER_")))
        .map(|(k, _)| k)
        .collect();
    for k in empty {
        std::env::remove_var(k);
    }
}

/// The local sentence encoder's flag of every command that loads it.
#[derive(Debug, Args, Clone)]
pub struct EncoderArgs {
    /// Directory of the encoder's weights [default: ~/.cache/ragrouter/models/all-MiniLM-L6-v2,
    /// under $XDG_CACHE_HOME when set]. An empty $RAGROUTER_MODEL_DIR (as any empty
    /// RAGROUTER_* variable) counts as unset.
    #[arg(long, env = "RAGROUTER_MODEL_DIR")]
    pub model_dir: Option<PathBuf>,
}

impl EncoderArgs {
    /// Refuses a `--model-dir` that is a file or lies under one, before any work.
    pub fn check(&self) -> Result<(), crate::checks::BadInput> {
        match &self.model_dir {
            Some(dir) => crate::checks::check_folder("--model-dir", dir),
            None => Ok(()),
        }
    }
}

/// Parses `--db` (and $RAGROUTER_DB) without echoing it: clap's own "invalid value '...'" would
/// print a malformed URL raw, password included; this message shows it masked.
#[derive(Debug, Clone, Copy)]
pub struct DbParser;

impl clap::builder::TypedValueParser for DbParser {
    type Value = store::DbTarget;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let fail = |m: String| {
            clap::Error::raw(clap::error::ErrorKind::ValueValidation, format!("{m}\n"))
                .with_cmd(cmd)
        };
        let s = value.to_str().ok_or_else(|| {
            fail(format!(
                "--db {}: not valid UTF-8",
                store::redact(&value.to_string_lossy())
            ))
        })?;
        s.parse()
            .map_err(|e: store::StoreError| fail(e.to_string()))
    }
}

/// What a command that loads a corpus by name and embeds it reads: the vector cache, the data
/// directory and the encoder.
#[derive(Debug, Args, Clone)]
pub struct LoadArgs {
    /// Directory for cached vectors.
    #[arg(long, default_value = ".ragrouter/cache")]
    pub cache_dir: PathBuf,
    #[command(flatten)]
    pub data: DataArgs,
    #[command(flatten)]
    pub encoder: EncoderArgs,
}

#[derive(Debug, Args, Clone)]
pub struct DataArgs {
    /// Directory holding the data sets (else $RAGROUTER_DATA_DIR, else ../shared/datasets).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Generic format: load a set whose `evidence` names no document id, title or sentence of
    /// the corpus (such questions are counted; without it the first one is an error).
    #[arg(long)]
    pub allow_missing_evidence: bool,
}

impl DataArgs {
    /// The loader's options under `config`.
    pub fn load_options(&self, config: &bench_core::BenchConfig) -> corpora::LoadOptions {
        corpora::LoadOptions {
            data_dir: self.data_dir.clone(),
            chunking: config.chunking.clone(),
            data: config.data.clone(),
            allow_missing_evidence: self.allow_missing_evidence,
            semantic: None,
        }
    }

    /// The loader's options with evidence statements matched by meaning through the local
    /// `encoder` and the vector cache in `cache_dir` (every command that stores by corpus hash
    /// loads this way, so they agree on the gold chunks).
    pub fn load_options_matching(
        &self,
        config: &bench_core::BenchConfig,
        encoder: std::sync::Arc<dyn bench_core::Embedder>,
        cache_dir: &std::path::Path,
    ) -> corpora::LoadOptions {
        corpora::LoadOptions {
            semantic: Some(corpora::SemanticMatching {
                encoder,
                cache: corpora::VectorCache::new(cache_dir),
            }),
            ..self.load_options(config)
        }
    }
}

/// The LLM endpoint flags of `bench` and `generate`.
#[derive(Debug, Args, Clone)]
pub struct LlmArgs {
    /// Base URL of the OpenAI-compatible answering endpoint (else the configuration's
    /// llm.answer.base_url, else $OPENAI_BASE_URL, else OpenAI's). Needs a model to take effect.
    #[arg(long)]
    pub llm_base_url: Option<String>,
    /// Model of the answering endpoint: naming one switches to LLM mode. The API key is read
    /// from $OPENAI_API_KEY (or the configuration's api_key_env), never from a flag.
    #[arg(long)]
    pub llm_model: Option<String>,
}
