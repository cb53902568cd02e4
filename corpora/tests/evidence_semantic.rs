//! Evidence by meaning on the real data sets and the real encoder: calibration on 2Wiki, Medical's
//! gold chunks, passage-named evidence untouched, a statement that matches nothing, determinism
//! and the cache. Vectors are cached under the target directory, so only the first run encodes.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bench_core::config::EvidenceMatchConfig;
use bench_core::{Embedder, Embeddings};
use corpora::{
    calibrate, load_corpus, twowiki_statements, unmatched_path, LoadOptions, MiniLm,
    SemanticMatching, SentenceIndex, SentenceSearch, VectorCache,
};

fn datasets() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/datasets"
    ))
}

fn minilm() -> Arc<MiniLm> {
    static M: OnceLock<Arc<MiniLm>> = OnceLock::new();
    M.get_or_init(|| Arc::new(MiniLm::new().expect("load all-MiniLM-L6-v2")))
        .clone()
}

/// The real encoder, counting the texts it is asked to embed.
struct Counting {
    inner: Arc<MiniLm>,
    texts: AtomicUsize,
}

impl Embedder for Counting {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> bench_core::Result<Embeddings> {
        self.texts.fetch_add(texts.len(), Ordering::SeqCst);
        self.inner.embed(texts)
    }
}

fn counting() -> Arc<Counting> {
    Arc::new(Counting {
        inner: minilm(),
        texts: AtomicUsize::new(0),
    })
}

/// Vectors of the real corpora persist across test runs (content-addressed, so never stale).
fn shared_cache() -> VectorCache {
    VectorCache::new(PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("evidence-vectors"))
}

fn opts(semantic: Option<SemanticMatching>) -> LoadOptions {
    LoadOptions {
        data_dir: Some(datasets()),
        semantic,
        ..LoadOptions::default()
    }
}

#[test]
#[ignore = "encodes every sentence of 2Wiki and Medical (about 6 minutes on two cores from a cold cache): `just test-evidence`"]
fn twowiki_triples_as_statements_land_in_their_gold_passage() {
    let corpus = load_corpus("2wiki", &opts(None)).unwrap();
    // A fixed sample: every 10th question's triples.
    let (statements, gold_docs) = twowiki_statements(&corpus, 10);
    assert!(statements.len() > 150, "{} statements", statements.len());
    assert_eq!(statements[0], "Lothair II mother Ermengarde of Tours.");
    let m = SemanticMatching {
        encoder: minilm(),
        cache: shared_cache(),
    };
    let doc_of: HashMap<&str, usize> = corpus
        .documents
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let index = SentenceIndex::new(&corpus.chunks, &corpus.documents);
    // Title lines are hidden: no sentence is a passage's title.
    assert!(!index.texts.iter().any(|t| t == "Lothair II"));
    let sentence_doc: Vec<usize> = index
        .chunks
        .iter()
        .map(|c| doc_of[corpus.chunks[c[0] as usize].document.as_str()])
        .collect();
    // The search runs over every sentence of the corpus, not only the gold passages'.
    let search = SentenceSearch::new(index, "2wiki-calibration", &m).unwrap();
    assert!(
        search.sentences.len() > 20_000,
        "{}",
        search.sentences.len()
    );
    let texts: Vec<&str> = statements.iter().map(String::as_str).collect();
    let cfg = EvidenceMatchConfig::default();
    let cands = search
        .candidates(&texts, "2wiki-calibration", &m, cfg.candidates)
        .unwrap();
    let is_gold = |i: usize, s: u32| gold_docs[i].contains(&sentence_doc[s as usize]);
    let c = calibrate(&cands, is_gold, cfg.min_similarity, cfg.min_content_overlap);
    eprintln!(
        "{c:?} precision {:.4} recall {:.4}",
        c.precision(),
        c.recall()
    );
    // Measured 2026-12-07 with the stop words shared with the offline extractor: 152 of 171
    // matches right (88.9 %), recall 72.7 % of 209 (153 before); on all 2,249 triples 88.7 % at
    // 73.2 % (docs/results.md).
    assert_eq!((c.total, c.accepted, c.correct), (209, 171, 152));
    assert!(
        c.precision() >= PRECISION_BAR,
        "precision {:.4}",
        c.precision()
    );
    assert!(c.recall() >= RECALL_BAR, "recall {:.4}", c.recall());
    // Looser thresholds match more and land right less often: the defaults are not at an end.
    let loose = calibrate(&cands, is_gold, 0.0, 0.0);
    assert_eq!(loose.accepted, loose.total);
    assert!(loose.precision() < c.precision());
}

/// What the defaults reach on the sample, with a margin. The issue asked for 90 % / 90 %: on all
/// 2,249 triples the defaults give precision 88.7 % at recall 73.2 % and on this sample 88.9 %
/// at 72.7 % (docs/results.md; README, "Evidence by meaning": many triples are not one sentence of their passage,
/// so no threshold reaches 90 % recall; the nearest sentence lies in the gold passage for 79 %).
const PRECISION_BAR: f64 = 0.88;
const RECALL_BAR: f64 = 0.70;

#[test]
fn passage_named_evidence_is_untouched_by_the_matcher() {
    for name in ["2wiki", "musique-dev"] {
        let plain = load_corpus(name, &opts(None)).unwrap();
        let enc = counting();
        let tmp = tempfile::tempdir().unwrap();
        let with = load_corpus(
            name,
            &opts(Some(SemanticMatching {
                encoder: enc.clone(),
                cache: VectorCache::new(tmp.path()),
            })),
        )
        .unwrap();
        // Same questions, same gold chunks, no statements, same hash: the same labels.
        assert_eq!(with.queries, plain.queries, "{name}");
        assert_eq!(with.content_hash, plain.content_hash, "{name}");
        assert!(with.queries.iter().all(|q| q.statements.is_empty()));
        assert_eq!(
            enc.texts.load(Ordering::SeqCst),
            0,
            "{name}: nothing embedded"
        );
    }
}

#[test]
#[ignore = "encodes every sentence of 2Wiki and Medical (about 6 minutes on two cores from a cold cache): `just test-evidence`"]
fn medical_statements_map_to_gold_chunks_deterministically_and_from_the_cache() {
    let plain = load_corpus("medical", &opts(None)).unwrap();
    let before = plain.queries_with_gold_chunks();
    let enc = counting();
    let m = SemanticMatching {
        encoder: enc.clone(),
        cache: shared_cache(),
    };
    let first = load_corpus("medical", &opts(Some(m.clone()))).unwrap();
    let n = first.queries.len();
    let with_gold = first.queries_with_gold_chunks();
    eprintln!("medical: gold chunks for {before} of {n} verbatim, {with_gold} with meaning");
    assert!(before * 10 < n, "verbatim alone: {before} of {n}");
    // Measured 2026-12-07 with the stop words shared with the offline extractor: 1,460 of 1,896
    // (77.0 %; 1,482 before), short of the issue's 90 % (docs/results.md).
    assert_eq!(
        with_gold, 1460,
        "{with_gold} of {n} questions with gold chunks"
    );
    // Verbatim matches are kept as they were, with score 1.
    for (p, q) in plain.queries.iter().zip(&first.queries) {
        for (a, b) in p.statements.iter().zip(&q.statements) {
            if a.is_matched() {
                assert_eq!(a, b);
                assert_eq!((b.score, b.semantic), (1.0, false));
            }
        }
        // Every gold chunk comes from a matched statement.
        let from_statements: std::collections::BTreeSet<&String> =
            q.statements.iter().flat_map(|s| &s.chunks).collect();
        assert_eq!(
            q.gold_chunks
                .iter()
                .collect::<std::collections::BTreeSet<_>>(),
            from_statements
        );
    }
    let cfg = EvidenceMatchConfig::default();
    for s in first.queries.iter().flat_map(|q| &q.statements) {
        if s.semantic && s.is_matched() {
            assert!(s.score >= cfg.min_similarity && s.sentence.is_some());
        }
    }
    // The unmatched statements are written, one line each.
    let unmatched = first
        .queries
        .iter()
        .flat_map(|q| &q.statements)
        .filter(|s| !s.is_matched())
        .count();
    let path = unmatched_path(m.cache.dir(), "medical", &first.content_hash);
    let listed = std::fs::read_to_string(&path).unwrap();
    assert_eq!(listed.lines().count(), unmatched);
    // A second load embeds nothing and gives the same corpus.
    let used = enc.texts.load(Ordering::SeqCst);
    let second = load_corpus("medical", &opts(Some(m))).unwrap();
    assert_eq!(
        enc.texts.load(Ordering::SeqCst),
        used,
        "second load embedded again"
    );
    assert_eq!(second.queries, first.queries);
    assert_eq!(second.content_hash, first.content_hash);
    assert_ne!(second.content_hash, plain.content_hash);
}

#[test]
fn a_statement_that_matches_nothing_is_counted_and_listed() {
    let dir = tempfile::tempdir().unwrap();
    let set = dir.path().join("set");
    std::fs::create_dir_all(&set).unwrap();
    std::fs::write(
        set.join("corpus.jsonl"),
        concat!(
            r#"{"id": "d1", "text": "Basal cell carcinoma is the most common type of skin cancer. It grows slowly and rarely spreads to other organs."}"#,
            "\n",
            r#"{"id": "d2", "text": "Melanoma arises from melanocytes. It is less common but more dangerous than basal cell carcinoma."}"#,
            "\n"
        ),
    )
    .unwrap();
    std::fs::write(
        set.join("queries.jsonl"),
        concat!(
            r#"{"id": "q1", "question": "How does BCC grow?", "answers": ["Basal cell carcinoma grows slowly and seldom spreads to other organs of the body."], "type": "factual", "evidence": ["Basal cell carcinoma grows slowly.", "The Eiffel Tower was finished in 1889 for a world fair."]}"#,
            "\n"
        ),
    )
    .unwrap();
    let name = format!("jsonl:{}", set.display());
    let cache = dir.path().join("cache");
    let m = SemanticMatching {
        encoder: minilm(),
        cache: VectorCache::new(&cache),
    };
    // The generic format refuses evidence that matches nothing, by meaning too.
    let strict = LoadOptions {
        semantic: Some(m.clone()),
        ..LoadOptions::default()
    };
    let e = load_corpus(&name, &strict).unwrap_err().to_string();
    assert!(e.contains("Eiffel Tower") && e.contains("q1"), "{e}");
    let lenient = LoadOptions {
        allow_missing_evidence: true,
        ..strict
    };
    let corpus = load_corpus(&name, &lenient).unwrap();
    let q = &corpus.queries[0];
    let [slow, eiffel] = q.statements.as_slice() else {
        panic!("{:?}", q.statements)
    };
    assert!(slow.semantic && slow.is_matched(), "{slow:?}");
    assert_eq!(slow.chunks, ["d1#0"]);
    assert!(!eiffel.is_matched(), "{eiffel:?}");
    assert_eq!(q.gold_chunks, ["d1#0"]);
    let path = unmatched_path(&cache, &corpus.name, &corpus.content_hash);
    let listed = std::fs::read_to_string(&path).unwrap();
    assert_eq!(listed.lines().count(), 1);
    let line: serde_json::Value = serde_json::from_str(listed.trim()).unwrap();
    assert_eq!(line["query"], "q1");
    assert_eq!(line["statement"], eiffel.text);
    // Without the matcher the paraphrase matches nothing either.
    let verbatim = load_corpus(
        &name,
        &LoadOptions {
            allow_missing_evidence: true,
            ..LoadOptions::default()
        },
    )
    .unwrap();
    assert!(verbatim.queries[0].gold_chunks.is_empty());
}
