//! The run configuration: every setting decisions.md names, with its default; stored with each run.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{BenchError, Result};

/// `[chunking]`: how documents are cut into retrieval units (token windows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ChunkingConfig {
    /// Window size in cl100k tokens.
    pub size: usize,
    /// Tokens shared by neighbouring windows.
    pub overlap: usize,
}

impl Default for ChunkingConfig {
    fn default() -> Self {
        ChunkingConfig {
            size: 512,
            overlap: 100,
        }
    }
}

/// `[retrieval]`: the context budget and dense retrieval shared by every retrieving paradigm.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetrievalConfig {
    /// Context budget in cl100k tokens, for every retrieving paradigm.
    pub context_budget: u64,
    /// Minimum cosine similarity for a dense hit.
    pub min_similarity: f32,
    /// Dense top-K before the budget cut.
    pub top_k: usize,
    /// The dense chunk index: `exact` (default), `ivf` or `hnsw` (approximate, built once and
    /// cached).
    /// Not serialised while exact, so the configuration hash of every exact run is unchanged.
    #[serde(skip_serializing_if = "IndexKind::is_exact")]
    pub index: IndexKind,
    /// Corpora with fewer chunks than this use exact search whatever `index` says: below it
    /// exact search is fast enough and an approximate one would only lose recall. Default
    /// 100,000 (docs/performance.md has the measurements); not serialised at the default.
    #[serde(skip_serializing_if = "is_default_approx_min_chunks")]
    pub approx_min_chunks: usize,
    /// Lists an `ivf` index scans per query (default 24: recall@100 0.99 on the 1M-vector
    /// benchmark, 0.87 on 21k real 2Wiki sentence vectors, where 64 gives 0.97; see
    /// docs/performance.md). Not serialised at the default.
    #[serde(skip_serializing_if = "is_default_ivf_nprobe")]
    pub ivf_nprobe: usize,
}

/// Default of `retrieval.ivf_nprobe`.
const DEFAULT_IVF_NPROBE: usize = 24;

fn is_default_ivf_nprobe(n: &usize) -> bool {
    *n == DEFAULT_IVF_NPROBE
}

/// Default of `retrieval.approx_min_chunks` (docs/performance.md has the measurements).
const DEFAULT_APPROX_MIN_CHUNKS: usize = 100_000;

fn is_default_approx_min_chunks(n: &usize) -> bool {
    *n == DEFAULT_APPROX_MIN_CHUNKS
}

/// `[retrieval] index`: which dense index answers queries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexKind {
    /// Brute-force inner products (gemm): every query sees every chunk.
    #[default]
    Exact,
    /// An HNSW graph (the `hnsw_rs` crate), candidates rescored exactly.
    Hnsw,
    /// Inverted lists (k-means over the chunks, gemm over the probed lists): the approximate
    /// index that meets #31's recall/throughput goal at 1M vectors (docs/performance.md).
    Ivf,
}

impl IndexKind {
    /// Whether this is the default exact index (then the setting is not serialised).
    fn is_exact(&self) -> bool {
        *self == IndexKind::Exact
    }
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        RetrievalConfig {
            context_budget: 8_000,
            min_similarity: 0.4,
            top_k: 100,
            index: IndexKind::Exact,
            approx_min_chunks: DEFAULT_APPROX_MIN_CHUNKS,
            ivf_nprobe: DEFAULT_IVF_NPROBE,
        }
    }
}

/// The reader's sampling. (A request's timeout is the endpoint's: `[llm.answer] timeout_s`.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GenerationConfig {
    /// Sampling temperature of an answer with retrieved context.
    pub temperature: f32,
    /// Sampling temperature of an answer without context (the LLM-only paradigm).
    pub llm_only_temperature: f32,
    /// Largest answer, in tokens.
    pub max_tokens: u32,
}

impl Default for GenerationConfig {
    fn default() -> Self {
        GenerationConfig {
            temperature: 0.3,
            llm_only_temperature: 0.7,
            max_tokens: 1_000,
        }
    }
}

/// The offline reader of decisions.md.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct OfflineReaderConfig {
    /// BM25's term-frequency saturation k1, for scoring context sentences against the question.
    pub bm25_k1: f64,
    /// BM25's length normalisation b.
    pub bm25_b: f64,
    /// Bonus added to a sentence's BM25 score: `rank_bonus / (1 + chunk rank)`.
    pub rank_bonus: f64,
    /// Sentences answered for summary questions.
    pub summary_sentences: usize,
}

impl Default for OfflineReaderConfig {
    fn default() -> Self {
        OfflineReaderConfig {
            bm25_k1: 1.2,
            bm25_b: 0.75,
            rank_bonus: 0.5,
            summary_sentences: 3,
        }
    }
}

/// GraphRAG (Algorithm 4) settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GraphConfig {
    /// Nearest graph entities looked up per query entity.
    pub link_k: usize,
    /// Seeds kept after max-pooling.
    pub seed_k: usize,
    /// Minimum entity similarity for a seed.
    pub min_entity_similarity: f32,
    /// Personalized PageRank's damping (restart probability 1 − damping).
    pub damping: f64,
    /// Nodes with a PPR score below this are dropped.
    pub min_ppr_score: f64,
    /// Expanded nodes kept, best PPR score first (besides the seeds).
    pub top_nodes: usize,
    /// Most triplets serialised into the context.
    pub max_triplets: usize,
    /// The PPR solver.
    pub ppr_engine: PprEngineName,
}

/// The PPR solver GraphRAG runs (`graph.ppr_engine`); unknown names are refused at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PprEngineName {
    /// The exact top-k, proven per query (the default).
    #[default]
    Certified,
    /// Power iteration to 1e-6 L1.
    Exact,
    /// Forward push: approximate and local.
    Push,
}

/// How HybridRAG merges its two rankings (`hybrid.fusion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FusionMethod {
    /// score(c) = sum over lists of 1 / (k + rank), ranks from 1 (the paper's text).
    #[default]
    Rrf,
    /// First of list A, first of list B, second of A, ... skipping repeats (the paper's code).
    Interleave,
}

impl FusionMethod {
    /// The configured name: `rrf` or `interleave`.
    pub fn as_str(self) -> &'static str {
        match self {
            FusionMethod::Rrf => "rrf",
            FusionMethod::Interleave => "interleave",
        }
    }
}

impl Default for GraphConfig {
    fn default() -> Self {
        GraphConfig {
            link_k: 20,
            seed_k: 20,
            min_entity_similarity: 0.4,
            damping: 0.85,
            min_ppr_score: 1e-5,
            top_nodes: 100,
            max_triplets: 500,
            ppr_engine: PprEngineName::Certified,
        }
    }
}

/// HybridRAG and Fusion settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HybridConfig {
    /// How HybridRAG merges the dense and graph rankings.
    pub fusion: FusionMethod,
    /// RRF's smoothing constant k (Cormack et al. 2009), for HybridRAG and the fusion lane.
    pub rrf_k: f64,
}

impl Default for HybridConfig {
    fn default() -> Self {
        HybridConfig {
            fusion: FusionMethod::Rrf,
            rrf_k: 60.0,
        }
    }
}

/// IterativeRAG (Algorithm 3) settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct IterativeConfig {
    /// Retrieval rounds after the direct answer of round 0.
    pub max_rounds: usize,
    /// Sampling temperature of the LLM self-evaluation that decides whether to go on.
    pub evaluator_temperature: f32,
    /// Offline evaluator: share of the question's IDF mass the answer must cover to count as
    /// sufficient (it must also name an entity the question does not).
    pub offline_sufficient_coverage: f64,
}

impl Default for IterativeConfig {
    fn default() -> Self {
        IterativeConfig {
            max_rounds: 3,
            evaluator_temperature: 0.1,
            offline_sufficient_coverage: 0.5,
        }
    }
}

/// `[judge]`: the offline judge's thresholds (decisions.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct JudgeConfig {
    /// Answer recall at or above which the offline judge says Correct.
    pub correct_recall: f64,
    /// A gold answer of at most this many SQuAD-normalised tokens is a short span; a question
    /// with evidence statements whose every informative gold string is longer is judged offline
    /// by its evidence (decisions.md, "long answers").
    pub short_answer_tokens: usize,
    /// Long answers: the share of a question's matched evidence statements the delivered context
    /// must hold for "delivered" (fixed before Medical was measured; see decisions.md).
    pub statement_share: f64,
}

impl Default for JudgeConfig {
    fn default() -> Self {
        JudgeConfig {
            correct_recall: 0.8,
            short_answer_tokens: 5,
            statement_share: 0.8,
        }
    }
}

/// `[data]`: what the corpus loaders keep and how they map evidence to chunks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct DataConfig {
    /// Keep GraphRAG-Bench's Creative Generation questions (the paper leaves them out).
    pub include_creative: bool,
    /// Evidence statements that match no sentence verbatim, matched by meaning.
    pub evidence: EvidenceMatchConfig,
}

/// Matching evidence statements by meaning (the local encoder plus a content-word check); the
/// defaults were calibrated on 2Wiki's evidence triples (docs/results.md, "Evidence by meaning").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvidenceMatchConfig {
    /// Match statements that are not quotes by meaning (else only verbatim).
    pub semantic: bool,
    /// Lowest cosine between a statement and a corpus sentence that counts as a match.
    pub min_similarity: f32,
    /// Lowest share of the statement's content words (stemmed) the sentence must hold.
    pub min_content_overlap: f64,
    /// Nearest sentences by cosine that are checked, best first; the first that passes wins.
    pub candidates: usize,
}

impl Default for EvidenceMatchConfig {
    fn default() -> Self {
        EvidenceMatchConfig {
            semantic: true,
            min_similarity: 0.45,
            min_content_overlap: 0.6,
            candidates: 10,
        }
    }
}

/// Everything that decides a run's results. Two runs with equal hashes are the same run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BenchConfig {
    /// Seed of the run's sampled choices (the stratified `--sample` of questions, generated
    /// questions).
    pub seed: u64,
    /// `[chunking]`.
    pub chunking: ChunkingConfig,
    /// `[retrieval]`.
    pub retrieval: RetrievalConfig,
    /// `[generation]`: the LLM reader's sampling.
    pub generation: GenerationConfig,
    /// `[offline_reader]`.
    pub offline_reader: OfflineReaderConfig,
    /// `[graph]`: GraphRAG.
    pub graph: GraphConfig,
    /// `[hybrid]`: HybridRAG and Fusion.
    pub hybrid: HybridConfig,
    /// `[iterative]`: IterativeRAG.
    pub iterative: IterativeConfig,
    /// `[judge]`.
    pub judge: JudgeConfig,
    /// `[data]`.
    pub data: DataConfig,
    /// Queries answered concurrently.
    #[serde(skip_serializing)]
    pub concurrency: usize,
    /// The `[llm.*]` endpoint tables of the same file, read by the `llm` crate; they are
    /// recorded with the run by the LLM settings, not hashed here (their identities are).
    #[serde(skip_serializing)]
    pub llm: Option<serde_json::Value>,
    /// The file this configuration was read from, for messages about its `[llm]` tables.
    #[serde(skip)]
    pub source: Option<std::path::PathBuf>,
}

impl Default for BenchConfig {
    fn default() -> Self {
        BenchConfig {
            seed: 42,
            chunking: ChunkingConfig::default(),
            retrieval: RetrievalConfig::default(),
            generation: GenerationConfig::default(),
            offline_reader: OfflineReaderConfig::default(),
            graph: GraphConfig::default(),
            hybrid: HybridConfig::default(),
            iterative: IterativeConfig::default(),
            judge: JudgeConfig::default(),
            data: DataConfig::default(),
            concurrency: 4,
            llm: None,
            source: None,
        }
    }
}

impl BenchConfig {
    /// Reads a TOML configuration; unknown keys are errors naming the file.
    pub fn from_toml_file(path: &std::path::Path) -> Result<Self> {
        let text = crate::input::read_text(path, "config")?;
        let mut cfg: BenchConfig = toml_from_str(&text)
            .map_err(|e| BenchError::Invalid(format!("config {}: {e}", path.display())))?;
        cfg.source = Some(path.to_path_buf());
        cfg.validate()
            .map_err(|e| BenchError::Invalid(format!("config {}: {e}", path.display())))?;
        Ok(cfg)
    }

    /// Checks the range of every numeric setting (serde checks only the types): a value that
    /// makes every tuple useless (a zero budget, a NaN threshold, a negative temperature) is
    /// refused with its key. The checks run in a fixed order, so the first bad key is reported.
    pub fn validate(&self) -> std::result::Result<(), String> {
        self.validate_chunking()?;
        self.validate_counts()?;
        self.validate_judge()?;
        self.validate_evidence()?;
        if self.concurrency == 0 {
            return Err("concurrency must be at least 1".into());
        }
        self.validate_reals()
    }

    /// `[chunking]`: a positive size and an overlap smaller than it.
    fn validate_chunking(&self) -> std::result::Result<(), String> {
        let c = &self.chunking;
        if c.size == 0 {
            return Err("chunking.size = 0: must be at least 1".into());
        }
        if c.overlap >= c.size {
            return Err(format!(
                "chunking.overlap = {}: must be smaller than chunking.size ({})",
                c.overlap, c.size
            ));
        }
        Ok(())
    }

    /// The counts and budgets of every section: none may be zero.
    fn validate_counts(&self) -> std::result::Result<(), String> {
        let r = &self.retrieval;
        let (g, o, gr) = (&self.generation, &self.offline_reader, &self.graph);
        let counts: [(&str, u64); 11] = [
            ("retrieval.context_budget", r.context_budget),
            ("retrieval.top_k", r.top_k as u64),
            ("generation.max_tokens", u64::from(g.max_tokens)),
            (
                "offline_reader.summary_sentences",
                o.summary_sentences as u64,
            ),
            ("graph.link_k", gr.link_k as u64),
            ("graph.seed_k", gr.seed_k as u64),
            ("graph.top_nodes", gr.top_nodes as u64),
            ("iterative.max_rounds", self.iterative.max_rounds as u64),
            ("retrieval.approx_min_chunks", r.approx_min_chunks as u64),
            ("retrieval.ivf_nprobe", r.ivf_nprobe as u64),
            ("graph.max_triplets", gr.max_triplets as u64),
        ];
        for (key, v) in counts {
            if v == 0 {
                return Err(format!("{key} = 0: must be at least 1"));
            }
        }
        Ok(())
    }

    /// `[judge]`: a statement share in (0, 1] and a positive short-answer length.
    fn validate_judge(&self) -> std::result::Result<(), String> {
        if !(self.judge.statement_share > 0.0 && self.judge.statement_share <= 1.0) {
            return Err(format!(
                "judge.statement_share = {}: must lie in (0, 1]",
                self.judge.statement_share
            ));
        }
        if self.judge.short_answer_tokens == 0 {
            return Err("judge.short_answer_tokens = 0: must be at least 1".into());
        }
        Ok(())
    }

    /// `[data.evidence]`: similarity in [-1, 1], overlap in [0, 1], at least one candidate.
    fn validate_evidence(&self) -> std::result::Result<(), String> {
        let ev = &self.data.evidence;
        if !(-1.0..=1.0).contains(&ev.min_similarity) {
            return Err(format!(
                "data.evidence.min_similarity = {}: must lie in [-1, 1]",
                ev.min_similarity
            ));
        }
        if !(0.0..=1.0).contains(&ev.min_content_overlap) {
            return Err(format!(
                "data.evidence.min_content_overlap = {}: must lie in [0, 1]",
                ev.min_content_overlap
            ));
        }
        if ev.candidates == 0 {
            return Err("data.evidence.candidates = 0: must be at least 1".into());
        }
        Ok(())
    }

    /// The real-valued settings: each within its range (NaN fails every comparison, so it is
    /// refused).
    fn validate_reals(&self) -> std::result::Result<(), String> {
        for (key, v, lo, hi, closed) in self.real_ranges() {
            check_real_range(key, v, lo, hi, closed)?;
        }
        Ok(())
    }

    /// Every real-valued setting as (key, value, low, high, high included).
    fn real_ranges(&self) -> [(&'static str, f64, f64, f64, bool); 13] {
        let (r, g, o, gr) = (
            &self.retrieval,
            &self.generation,
            &self.offline_reader,
            &self.graph,
        );
        let (it, j) = (&self.iterative, &self.judge);
        let temp = MAX_TEMPERATURE;
        [
            (
                "retrieval.min_similarity",
                f64::from(r.min_similarity),
                -1.0,
                1.0,
                true,
            ),
            (
                "generation.temperature",
                f64::from(g.temperature),
                0.0,
                temp,
                true,
            ),
            (
                "generation.llm_only_temperature",
                f64::from(g.llm_only_temperature),
                0.0,
                temp,
                true,
            ),
            ("offline_reader.bm25_k1", o.bm25_k1, 0.0, f64::MAX, true),
            ("offline_reader.bm25_b", o.bm25_b, 0.0, 1.0, true),
            (
                "offline_reader.rank_bonus",
                o.rank_bonus,
                0.0,
                f64::MAX,
                true,
            ),
            (
                "graph.min_entity_similarity",
                f64::from(gr.min_entity_similarity),
                -1.0,
                1.0,
                true,
            ),
            ("graph.damping", gr.damping, 0.0, 1.0, false),
            ("graph.min_ppr_score", gr.min_ppr_score, 0.0, 1.0, false),
            ("hybrid.rrf_k", self.hybrid.rrf_k, 0.0, f64::MAX, true),
            (
                "iterative.evaluator_temperature",
                f64::from(it.evaluator_temperature),
                0.0,
                temp,
                true,
            ),
            (
                "iterative.offline_sufficient_coverage",
                it.offline_sufficient_coverage,
                0.0,
                1.0,
                true,
            ),
            ("judge.correct_recall", j.correct_recall, 0.0, 1.0, true),
        ]
    }

    /// Canonical JSON of the settings that decide results (concurrency excluded).
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(self).expect("config serialises")
    }
}

/// `Err` naming `key` and its range unless `lo <= v <= hi` (`v < hi` when `closed` is false);
/// a range up to `f64::MAX` reads as "finite".
fn check_real_range(
    key: &str,
    v: f64,
    lo: f64,
    hi: f64,
    closed: bool,
) -> std::result::Result<(), String> {
    let ok = v >= lo && if closed { v <= hi } else { v < hi };
    if ok {
        return Ok(());
    }
    let range = match (hi == f64::MAX, closed) {
        (true, _) => format!("a finite number >= {lo}"),
        (false, true) => format!("a number in [{lo}, {hi}]"),
        (false, false) => format!("a number in [{lo}, {hi})"),
    };
    Err(format!("{key} = {v}: must be {range}"))
}

fn toml_from_str(text: &str) -> std::result::Result<BenchConfig, String> {
    toml::from_str(text).map_err(|e| e.to_string())
}

/// Highest sampling temperature an OpenAI-compatible endpoint accepts.
pub const MAX_TEMPERATURE: f64 = 2.0;

/// Hex sha256 of the given parts, separated so that ("ab","c") and ("a","bc") differ.
pub fn hash_parts<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    hex::encode(h.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_follow_decisions_md() {
        let c = BenchConfig::default();
        assert_eq!((c.chunking.size, c.chunking.overlap), (512, 100));
        assert_eq!(c.retrieval.context_budget, 8_000);
        assert_eq!(c.retrieval.min_similarity, 0.4);
        assert_eq!(c.generation.temperature, 0.3);
        assert_eq!(c.generation.llm_only_temperature, 0.7);
        assert!(c.validate().is_ok());
    }

    #[test]
    fn toml_overrides_and_rejects_unknown_keys() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(&p, "seed = 7\n[retrieval]\ntop_k = 5\n").unwrap();
        let c = BenchConfig::from_toml_file(&p).unwrap();
        assert_eq!(
            (c.seed, c.retrieval.top_k, c.retrieval.context_budget),
            (7, 5, 8000)
        );
        std::fs::write(&p, "[retrieval]\ntopk = 5\n").unwrap();
        let e = BenchConfig::from_toml_file(&p).unwrap_err().to_string();
        assert!(e.contains("c.toml") && e.contains("topk"), "{e}");
        std::fs::write(&p, "[chunking]\nsize = 10\noverlap = 10\n").unwrap();
        let e = BenchConfig::from_toml_file(&p).unwrap_err().to_string();
        assert!(e.contains("overlap"), "{e}");
        // Names are typed: an unknown one is refused with its key and the allowed values.
        std::fs::write(&p, "[graph]\nppr_engine = \"fast\"\n").unwrap();
        let e = BenchConfig::from_toml_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("ppr_engine") && e.contains("fast") && e.contains("certified"),
            "{e}"
        );
        std::fs::write(&p, "[hybrid]\nfusion = \"interleave\"\nrrf_k = 10\n").unwrap();
        let c = BenchConfig::from_toml_file(&p).unwrap();
        assert_eq!(
            (c.hybrid.fusion, c.hybrid.rrf_k),
            (FusionMethod::Interleave, 10.0)
        );
        std::fs::write(&p, "[hybrid]\nfusion = \"sum\"\n").unwrap();
        let e = BenchConfig::from_toml_file(&p).unwrap_err().to_string();
        assert!(e.contains("fusion") && e.contains("interleave"), "{e}");
    }

    #[test]
    fn llm_tables_are_accepted_and_do_not_change_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(&p, "[llm.answer]\nmodel = \"m\"\n").unwrap();
        let c = BenchConfig::from_toml_file(&p).unwrap();
        assert!(c.llm.is_some());
        assert_eq!(c.canonical_json(), BenchConfig::default().canonical_json());
    }

    #[test]
    fn retrieval_index_is_typed_checked_and_hashed_only_when_not_exact() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("c.toml");
        std::fs::write(&p, "[retrieval]\nindex = \"hnsw\"\n").unwrap();
        let c = BenchConfig::from_toml_file(&p).unwrap();
        assert_eq!(c.retrieval.index, IndexKind::Hnsw);
        assert_eq!(c.retrieval.approx_min_chunks, DEFAULT_APPROX_MIN_CHUNKS);
        // The index joins the run's configuration (and hash) only when it is not the default.
        assert!(c.canonical_json().contains("\"index\":\"hnsw\""));
        assert_ne!(c.canonical_json(), BenchConfig::default().canonical_json());
        std::fs::write(&p, "[retrieval]\nindex = \"exact\"\n").unwrap();
        let c = BenchConfig::from_toml_file(&p).unwrap();
        assert_eq!(c.canonical_json(), BenchConfig::default().canonical_json());
        assert!(!c.canonical_json().contains("index"));
        std::fs::write(&p, "[retrieval]\nindex = \"annoy\"\n").unwrap();
        let e = BenchConfig::from_toml_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("c.toml") && e.contains("index") && e.contains("hnsw"),
            "{e}"
        );
        std::fs::write(&p, "[retrieval]\nindex = \"ivf\"\n").unwrap();
        let c = BenchConfig::from_toml_file(&p).unwrap();
        assert_eq!(c.retrieval.index, IndexKind::Ivf);
        assert!(c.canonical_json().contains("\"index\":\"ivf\""));
        assert!(!c.canonical_json().contains("ivf_nprobe"));
        std::fs::write(&p, "[retrieval]\nindex = \"ivf\"\nivf_nprobe = 64\n").unwrap();
        let c = BenchConfig::from_toml_file(&p).unwrap();
        assert!(c.canonical_json().contains("\"ivf_nprobe\":64"));
        std::fs::write(&p, "[retrieval]\nivf_nprobe = 0\n").unwrap();
        let e = BenchConfig::from_toml_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("c.toml") && e.contains("retrieval.ivf_nprobe"),
            "{e}"
        );
        std::fs::write(&p, "[retrieval]\napprox_min_chunks = 0\n").unwrap();
        let e = BenchConfig::from_toml_file(&p).unwrap_err().to_string();
        assert!(
            e.contains("c.toml") && e.contains("retrieval.approx_min_chunks"),
            "{e}"
        );
    }

    #[test]
    fn hash_parts_separates_boundaries() {
        assert_ne!(
            hash_parts([b"ab".as_slice(), b"c"]),
            hash_parts([b"a".as_slice(), b"bc"])
        );
    }
}
