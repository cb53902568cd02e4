//! Endpoint settings per role (answer, judge, graph construction, embedding) and how they resolve.
//!
//! Precedence for the answering endpoint: flags (`--llm-base-url`, `--llm-model`), then the
//! configuration file's `[llm.answer]`, then the conventional `OPENAI_BASE_URL` for the base
//! URL. The key comes only from an environment variable (`api_key_env`, default
//! `OPENAI_API_KEY`); no flag and no file carries it. An endpoint is configured only when a
//! model is named: an API key or base URL lying in the environment never turns an offline run
//! into an online one.

use std::fmt;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::LlmError;

/// The OpenAI SDKs' default base URL, used when a model is named but no base URL is.
pub const OPENAI_DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";
/// Environment variable the OpenAI SDKs read the base URL from.
pub const BASE_URL_ENV: &str = "OPENAI_BASE_URL";
/// Environment variable the OpenAI SDKs read the key from.
pub const DEFAULT_KEY_ENV: &str = "OPENAI_API_KEY";

/// One OpenAI-compatible endpoint, fully resolved. Holds the name of the key's variable, never
/// the key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EndpointConfig {
    /// Base URL including the version path, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// Model name sent with every request.
    pub model: String,
    /// Environment variable holding the API key.
    #[serde(default = "default_key_env")]
    pub api_key_env: String,
    /// Limit per attempt, connection to last byte.
    #[serde(default = "default_timeout_s")]
    pub timeout_s: u64,
    /// Requests in flight at once.
    #[serde(default = "default_max_in_flight")]
    pub max_in_flight: usize,
    /// Requests per minute (none: unlimited).
    #[serde(default)]
    pub rpm: Option<u32>,
    /// Tokens per minute, counted as prompt tokens plus `max_tokens` as OpenAI counts them.
    #[serde(default)]
    pub tpm: Option<u32>,
    /// Retries after the first attempt.
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// First retry delay; it doubles per retry (with jitter).
    #[serde(default = "default_backoff_base_ms")]
    pub backoff_base_ms: u64,
    /// Longest retry delay.
    #[serde(default = "default_backoff_max_ms")]
    pub backoff_max_ms: u64,
    /// Seed of the backoff jitter.
    #[serde(default)]
    pub seed: u64,
    /// Texts per request; read by the embedding endpoint only (none: 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<usize>,
}

/// Most inputs one `/embeddings` request may carry (OpenAI's limit).
pub const MAX_EMBED_BATCH: usize = 2048;

fn default_key_env() -> String {
    DEFAULT_KEY_ENV.into()
}
fn default_timeout_s() -> u64 {
    120
}
fn default_max_in_flight() -> usize {
    8
}
fn default_max_retries() -> u32 {
    5
}
fn default_backoff_base_ms() -> u64 {
    500
}
fn default_backoff_max_ms() -> u64 {
    60_000
}

impl EndpointConfig {
    /// An endpoint with every limit at its default.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        EndpointConfig {
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: default_key_env(),
            timeout_s: default_timeout_s(),
            max_in_flight: default_max_in_flight(),
            rpm: None,
            tpm: None,
            max_retries: default_max_retries(),
            backoff_base_ms: default_backoff_base_ms(),
            backoff_max_ms: default_backoff_max_ms(),
            seed: 0,
            batch_size: None,
        }
    }

    /// `model@base_url`: what results record; never a key.
    pub fn identity(&self) -> String {
        format!("{}@{}", self.model, self.base_url)
    }

    /// Checks ranges serde cannot; `role` names the table in messages.
    pub fn validate(&self, role: &str) -> Result<(), LlmError> {
        let bad = |m: String| Err(LlmError::Config(format!("llm.{role}: {m}")));
        if !(self.base_url.starts_with("http://") || self.base_url.starts_with("https://")) {
            return bad(format!(
                "base_url must start with http:// or https://, not {:?}",
                shown_url(&self.base_url)
            ));
        }
        if let Some(what) = url_credential(&self.base_url) {
            // A secret there would go into every recorded identity, mode label and report.
            return bad(format!(
                "base_url {} must not carry credentials ({what}); give the key in the \
                 environment variable api_key_env names (default {DEFAULT_KEY_ENV})",
                shown_url(&self.base_url)
            ));
        }
        if self.model.trim().is_empty() {
            return bad("model is empty".into());
        }
        check_ranges(
            &format!("llm.{role}"),
            &[
                ("timeout_s", Some(self.timeout_s)),
                ("max_in_flight", Some(self.max_in_flight as u64)),
                ("rpm", self.rpm.map(u64::from)),
                ("tpm", self.tpm.map(u64::from)),
                ("max_retries", Some(u64::from(self.max_retries))),
                ("backoff_base_ms", Some(self.backoff_base_ms)),
                ("backoff_max_ms", Some(self.backoff_max_ms)),
                ("batch_size", self.batch_size.map(|b| b as u64)),
            ],
        )?;
        if self.backoff_base_ms > self.backoff_max_ms {
            return bad("backoff_base_ms must not exceed backoff_max_ms".into());
        }
        if self.api_key_env.trim().is_empty() {
            return bad("api_key_env is empty".into());
        }
        Ok(())
    }

    /// Reads the key from `api_key_env`. A missing default variable means "no key" (local
    /// servers need none); a missing variable the configuration named explicitly is an error.
    pub fn api_key(
        &self,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Option<ApiKey>, LlmError> {
        match env(&self.api_key_env).filter(|k| !k.trim().is_empty()) {
            Some(k) => ApiKey::new(k).map(Some),
            None if self.api_key_env == DEFAULT_KEY_ENV => Ok(None),
            None => Err(LlmError::Config(format!(
                "environment variable {} (api_key_env of model {}) is not set",
                self.api_key_env, self.model
            ))),
        }
    }
}

use bench_core::credentials::{is_credential_param, percent_decoded};

/// What of `url` is a credential, described without its value: user information (`user:pw@`),
/// or a query parameter whose name contains one of
/// [`CREDENTIAL_PARAM_WORDS`](bench_core::credentials::CREDENTIAL_PARAM_WORDS). `None`: none.
pub fn url_credential(url: &str) -> Option<String> {
    if url.contains('@') {
        return Some("user information before '@'".into());
    }
    let query = url.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or("");
    query.split(['&', ';']).find_map(|param| {
        let name = param.split('=').next().unwrap_or("");
        is_credential_param(name).then(|| format!("query parameter {:?}", percent_decoded(name)))
    })
}

/// A URL as messages show it: without user information and with its query elided, so no
/// credential in either is ever printed.
fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let (before_query, query) = match rest.split_once('?') {
        Some((b, _)) => (b, "?..."),
        None => (rest, ""),
    };
    let host_and_path = before_query
        .rsplit_once('@')
        .map_or(before_query, |(_, h)| h);
    if scheme.is_empty() {
        format!("{host_and_path}{query}")
    } else {
        format!("{scheme}://{host_and_path}{query}")
    }
}

/// The range of every numeric endpoint setting: (key, lowest, highest). The upper limits keep
/// durations and counts where the client's arithmetic cannot overflow and a typo (a timeout in
/// milliseconds) is caught.
const RANGES: [(&str, u64, u64); 8] = [
    ("timeout_s", 1, 86_400),
    ("max_in_flight", 1, 4_096),
    ("rpm", 1, 10_000_000),
    ("tpm", 1, 1_000_000_000),
    ("max_retries", 0, 100),
    ("backoff_base_ms", 0, 3_600_000),
    ("backoff_max_ms", 0, 3_600_000),
    ("batch_size", 1, MAX_EMBED_BATCH as u64),
];

/// Checks each set value against [`RANGES`]; `table` prefixes the key in the message.
fn check_ranges(table: &str, values: &[(&str, Option<u64>)]) -> Result<(), LlmError> {
    for (key, v) in values {
        let Some(v) = v else { continue };
        let (_, lo, hi) = RANGES
            .iter()
            .find(|(k, ..)| k == key)
            .expect("every numeric key has a range");
        if v < lo || v > hi {
            return Err(LlmError::Config(format!(
                "{table}.{key} = {v}: must be between {lo} and {hi}"
            )));
        }
    }
    Ok(())
}

/// An API key. Debug and Display print `***`; only [`ApiKey::expose`] gives the text.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Rejects keys that cannot go into an HTTP header (they would otherwise panic there).
    pub fn new(key: String) -> Result<Self, LlmError> {
        let key = key.trim().to_owned();
        if key.bytes().any(|b| !(0x21..=0x7e).contains(&b)) {
            return Err(LlmError::Config(
                "the API key holds characters that cannot be sent in a header".into(),
            ));
        }
        Ok(ApiKey(key))
    }

    /// The key itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// `text` with every occurrence of the key replaced by `***`.
    pub fn redact(&self, text: &str) -> String {
        if self.0.is_empty() {
            text.to_owned()
        } else {
            text.replace(&self.0, "***")
        }
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// One role's table in the file: every field optional; missing ones come from `[llm.answer]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PartialEndpoint {
    /// As [`EndpointConfig::base_url`].
    pub base_url: Option<String>,
    /// As [`EndpointConfig::model`].
    pub model: Option<String>,
    /// As [`EndpointConfig::api_key_env`].
    pub api_key_env: Option<String>,
    /// As [`EndpointConfig::timeout_s`].
    pub timeout_s: Option<u64>,
    /// As [`EndpointConfig::max_in_flight`].
    pub max_in_flight: Option<usize>,
    /// As [`EndpointConfig::rpm`].
    pub rpm: Option<u32>,
    /// As [`EndpointConfig::tpm`].
    pub tpm: Option<u32>,
    /// As [`EndpointConfig::max_retries`].
    pub max_retries: Option<u32>,
    /// As [`EndpointConfig::backoff_base_ms`].
    pub backoff_base_ms: Option<u64>,
    /// As [`EndpointConfig::backoff_max_ms`].
    pub backoff_max_ms: Option<u64>,
    /// As [`EndpointConfig::seed`].
    pub seed: Option<u64>,
    /// As [`EndpointConfig::batch_size`].
    pub batch_size: Option<usize>,
}

impl PartialEndpoint {
    /// Checks the range of every numeric value set in this table (`llm.ROLE`), whether or not
    /// the role is used: a file is refused for any value out of range.
    pub fn validate(&self, table: &str) -> Result<(), LlmError> {
        check_ranges(
            table,
            &[
                ("timeout_s", self.timeout_s),
                ("max_in_flight", self.max_in_flight.map(|v| v as u64)),
                ("rpm", self.rpm.map(u64::from)),
                ("tpm", self.tpm.map(u64::from)),
                ("max_retries", self.max_retries.map(u64::from)),
                ("backoff_base_ms", self.backoff_base_ms),
                ("backoff_max_ms", self.backoff_max_ms),
                ("batch_size", self.batch_size.map(|v| v as u64)),
            ],
        )?;
        if let Some(m) = &self.model {
            if m.trim().is_empty() {
                return Err(LlmError::Config(format!("{table}.model is empty")));
            }
        }
        Ok(())
    }

    /// `self` where set, else `base`.
    fn over(&self, base: &PartialEndpoint) -> PartialEndpoint {
        macro_rules! pick {
            ($($f:ident),*) => { PartialEndpoint { $($f: self.$f.clone().or_else(|| base.$f.clone())),* } };
        }
        pick!(
            base_url,
            model,
            api_key_env,
            timeout_s,
            max_in_flight,
            rpm,
            tpm,
            max_retries,
            backoff_base_ms,
            backoff_max_ms,
            seed,
            batch_size
        )
    }

    fn complete(&self, role: &str, default_base: &str) -> Result<EndpointConfig, LlmError> {
        let model = self.model.clone().ok_or_else(|| {
            LlmError::Config(format!("llm.{role}: no model (set `model` or --llm-model)"))
        })?;
        let mut e = EndpointConfig::new(
            self.base_url.clone().unwrap_or_else(|| default_base.into()),
            model,
        );
        if let Some(v) = &self.api_key_env {
            e.api_key_env = v.clone();
        }
        e.timeout_s = self.timeout_s.unwrap_or(e.timeout_s);
        e.max_in_flight = self.max_in_flight.unwrap_or(e.max_in_flight);
        e.rpm = self.rpm;
        e.tpm = self.tpm;
        e.max_retries = self.max_retries.unwrap_or(e.max_retries);
        e.backoff_base_ms = self.backoff_base_ms.unwrap_or(e.backoff_base_ms);
        e.backoff_max_ms = self.backoff_max_ms.unwrap_or(e.backoff_max_ms);
        e.seed = self.seed.unwrap_or(e.seed);
        e.batch_size = self.batch_size;
        e.base_url = e.base_url.trim_end_matches('/').to_owned();
        e.validate(role)?;
        Ok(e)
    }
}

/// The `[llm]` table of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmFileConfig {
    /// `[llm.answer]`: the reader's endpoint, and the defaults of the other roles.
    #[serde(default)]
    pub answer: PartialEndpoint,
    /// `[llm.judge]`, if set.
    pub judge: Option<PartialEndpoint>,
    /// `[llm.graph]` (graph extraction), if set.
    pub graph: Option<PartialEndpoint>,
    /// `[llm.embedding]`, if set.
    pub embedding: Option<PartialEndpoint>,
}

impl LlmFileConfig {
    /// Checks every role's table ([`PartialEndpoint::validate`]).
    pub fn validate(&self) -> Result<(), LlmError> {
        self.answer.validate("llm.answer")?;
        for (role, t) in [
            ("judge", &self.judge),
            ("graph", &self.graph),
            ("embedding", &self.embedding),
        ] {
            if let Some(t) = t {
                t.validate(&format!("llm.{role}"))?;
            }
        }
        Ok(())
    }

    /// The `[llm]` table of a TOML text (other tables are left to their owners); `None` if absent.
    pub fn from_toml_str(text: &str) -> Result<Option<Self>, LlmError> {
        let value: toml::Table = text.parse().map_err(|e| LlmError::Config(format!("{e}")))?;
        match value.get("llm") {
            None => Ok(None),
            Some(v) => {
                let file: LlmFileConfig = v
                    .clone()
                    .try_into()
                    .map_err(|e| LlmError::Config(format!("[llm]: {e}")))?;
                file.validate()?;
                Ok(Some(file))
            }
        }
    }

    /// Reads the `[llm]` table of a TOML file; errors name the file.
    pub fn from_toml_file(path: &Path) -> Result<Option<Self>, LlmError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LlmError::Config(format!("reading config {}: {e}", path.display())))?;
        Self::from_toml_str(&text)
            .map_err(|e| LlmError::Config(format!("config {}: {e}", path.display())))
    }
}

/// The command-line flags that name an endpoint (never a key).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LlmFlags {
    /// `--llm-base-url`: the endpoint of every role.
    pub base_url: Option<String>,
    /// `--llm-model`: the model of every role.
    pub model: Option<String>,
}

/// Where each role's calls go. Roles not configured inherit `answer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmSettings {
    /// The reader (answers and iterative rounds).
    pub answer: EndpointConfig,
    /// The judge of answers.
    pub judge: EndpointConfig,
    /// Triplet extraction for the knowledge graph.
    pub graph: EndpointConfig,
    /// Embeddings, when an endpoint embeds instead of the local encoder.
    pub embedding: EndpointConfig,
}

impl LlmSettings {
    /// The same endpoint for every role.
    pub fn uniform(endpoint: EndpointConfig) -> Self {
        LlmSettings {
            answer: endpoint.clone(),
            judge: endpoint.clone(),
            graph: endpoint.clone(),
            embedding: endpoint,
        }
    }

    /// Every role's settings as JSON, for recording with results (names of key variables only).
    pub fn record_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("settings serialise")
    }

    /// (role, endpoint) pairs in a fixed order.
    pub fn roles(&self) -> [(&'static str, &EndpointConfig); 4] {
        [
            ("answer", &self.answer),
            ("judge", &self.judge),
            ("graph", &self.graph),
            ("embedding", &self.embedding),
        ]
    }
}

/// Resolves the settings from the file's `[llm]` table, the flags and the environment (`env`
/// looks a variable up; pass `|k| std::env::var(k).ok()`). `Ok(None)`: no endpoint is
/// configured and the caller runs offline, saying so.
pub fn resolve(
    file: Option<&LlmFileConfig>,
    flags: &LlmFlags,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<LlmSettings>, LlmError> {
    let empty = LlmFileConfig::default();
    let file = file.unwrap_or(&empty);
    let mut answer = file.answer.clone();
    if flags.base_url.is_some() {
        answer.base_url = flags.base_url.clone();
    }
    if flags.model.is_some() {
        answer.model = flags.model.clone();
    }
    let any_role_model = answer.model.is_some()
        || [&file.judge, &file.graph, &file.embedding]
            .iter()
            .any(|r| r.as_ref().is_some_and(|r| r.model.is_some()));
    if !any_role_model {
        if answer.base_url.is_some() {
            return Err(LlmError::Config(
                "an LLM base URL is set but no model: set --llm-model or llm.answer.model".into(),
            ));
        }
        return Ok(None);
    }
    let env_base = env(BASE_URL_ENV).filter(|s| !s.trim().is_empty());
    let default_base = env_base.as_deref().unwrap_or(OPENAI_DEFAULT_BASE_URL);
    let answer_cfg = answer.complete("answer", default_base)?;
    let role = |r: &Option<PartialEndpoint>, name: &str| -> Result<EndpointConfig, LlmError> {
        match r {
            None => Ok(answer_cfg.clone()),
            Some(p) => p.over(&answer).complete(name, default_base),
        }
    };
    Ok(Some(LlmSettings {
        judge: role(&file.judge, "judge")?,
        graph: role(&file.graph, "graph")?,
        embedding: role(&file.embedding, "embedding")?,
        answer: answer_cfg,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn nothing_configured_is_offline_even_with_a_key_in_the_environment() {
        let env = env_of(&[
            ("OPENAI_API_KEY", "sk-x"),
            ("OPENAI_BASE_URL", "http://h/v1"),
        ]);
        assert_eq!(resolve(None, &LlmFlags::default(), &env).unwrap(), None);
    }

    #[test]
    fn flags_beat_file_beats_environment() {
        let file = LlmFileConfig::from_toml_str(
            "seed = 1\n[llm.answer]\nmodel = \"file-model\"\nrpm = 60\n[llm.judge]\nmodel = \"judge\"\n",
        )
        .unwrap()
        .unwrap();
        let env = env_of(&[("OPENAI_BASE_URL", "http://env:1/v1/")]);
        let s = resolve(Some(&file), &LlmFlags::default(), &env)
            .unwrap()
            .unwrap();
        assert_eq!(s.answer.identity(), "file-model@http://env:1/v1");
        assert_eq!((s.judge.model.as_str(), s.judge.rpm), ("judge", Some(60)));
        assert_eq!(s.graph, s.answer);
        let flags = LlmFlags {
            base_url: Some("http://flag:2/v1".into()),
            model: Some("flag-model".into()),
        };
        let s = resolve(Some(&file), &flags, &env).unwrap().unwrap();
        assert_eq!(s.answer.identity(), "flag-model@http://flag:2/v1");
        assert_eq!(s.judge.identity(), "judge@http://flag:2/v1");
        let s = resolve(
            None,
            &LlmFlags {
                model: Some("m".into()),
                base_url: None,
            },
            &|_| None,
        )
        .unwrap()
        .unwrap();
        assert_eq!(s.answer.base_url, OPENAI_DEFAULT_BASE_URL);
    }

    #[test]
    fn bad_settings_are_errors_naming_the_role() {
        let flags = LlmFlags {
            base_url: Some("http://h/v1".into()),
            model: None,
        };
        assert!(resolve(None, &flags, &|_| None).is_err());
        let e = LlmFileConfig::from_toml_str("[llm.answer]\nmodle = \"x\"\n").unwrap_err();
        assert!(e.to_string().contains("modle"), "{e}");
        // A value out of range is refused at load, in a role not used too, naming the key.
        for (text, key) in [
            ("[llm.judge]\ntimeout_s = 0\n", "llm.judge.timeout_s = 0"),
            (
                "[llm.graph]\nmax_retries = 101\n",
                "llm.graph.max_retries = 101",
            ),
            ("rpm = 0\n", "llm.answer.rpm = 0"),
            (
                "[llm.embedding]\nbatch_size = 2049\n",
                "llm.embedding.batch_size = 2049",
            ),
        ] {
            let e = LlmFileConfig::from_toml_str(&format!("[llm.answer]\nmodel = \"m\"\n{text}"))
                .unwrap_err();
            assert!(e.to_string().contains(key), "{e}");
        }
        // A flag-made endpoint is checked as well.
        let mut e = EndpointConfig::new("http://h/v1", "m");
        e.timeout_s = 100_000;
        let e = e.validate("answer").unwrap_err();
        assert!(e.to_string().contains("llm.answer.timeout_s"), "{e}");
    }

    #[test]
    fn a_credential_in_the_base_url_is_refused_without_printing_it() {
        for (url, what) in [
            ("http://h/v1?api_key=sk-CANARYQ1", "\"api_key\""),
            ("http://h/v1?model=x&key=sk-CANARYQ1", "\"key\""),
            ("https://h/v1?Access_Token=sk-CANARYQ1", "\"Access_Token\""),
            ("http://h/v1?sig=sk-CANARYQ1#f", "\"sig\""),
            ("http://h/v1?X-Auth=sk-CANARYQ1", "\"X-Auth\""),
            (
                "http://h/v1?client%5Fsecret=sk-CANARYQ1",
                "\"client_secret\"",
            ),
            ("http://h/v1?a=1;passphrase=sk-CANARYQ1", "\"passphrase\""),
            ("http://u:sk-CANARYQ1@h/v1", "user information"),
        ] {
            let flags = LlmFlags {
                base_url: Some(url.into()),
                model: Some("m".into()),
            };
            let e = resolve(None, &flags, &|_| None).unwrap_err().to_string();
            assert!(!e.contains("CANARY"), "{e}");
            assert!(e.contains(what) && e.contains("credentials"), "{url}: {e}");
        }
        assert_eq!(url_credential("http://h/v1?model=m&top=3"), None);
        assert_eq!(url_credential("http://h:8080/v1"), None);
        assert_eq!(shown_url("http://u:p@h/v1?k=s"), "http://h/v1?...");
        let e = EndpointConfig::new("ftp://h/v1?key=sk-CANARYQ1", "m")
            .validate("answer")
            .unwrap_err()
            .to_string();
        assert!(!e.contains("CANARY"), "{e}");
    }

    #[test]
    fn key_comes_from_the_named_variable_and_never_prints() {
        let mut e = EndpointConfig::new("http://h/v1", "m");
        assert_eq!(e.api_key(&|_| None).unwrap(), None);
        e.api_key_env = "MY_KEY".into();
        assert!(e.api_key(&|_| None).is_err());
        let k = e
            .api_key(&|n| (n == "MY_KEY").then(|| "sk-secret".to_string()))
            .unwrap()
            .unwrap();
        assert_eq!(format!("{k} {k:?}"), "*** ***");
        assert_eq!(k.redact("bad key sk-secret"), "bad key ***");
        assert!(!serde_json::to_string(&LlmSettings::uniform(e))
            .unwrap()
            .contains("sk-"));
    }
}
