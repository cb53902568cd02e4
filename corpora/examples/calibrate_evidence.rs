//! Calibrates matching evidence by meaning on 2Wiki: each evidence triple written as a statement
//! ("<subject> <relation> <object>."), the title path hidden (title lines are not sentences and
//! titles are not looked up), searched over every sentence of the corpus; a match is right when
//! its sentence lies in a passage titled by the triple's subject. Prints precision and recall per
//! (min_similarity, min_content_overlap) and the figures at the configured defaults.
//!
//! `cargo run --release -p corpora --example calibrate_evidence -- [EVERY_NTH] [CACHE_DIR]`
//! (every question by default; vectors cached in CACHE_DIR, default `target/evidence-vectors`).
//!
//! `... --example calibrate_evidence -- medical [CACHE_DIR]` checks Medical instead: its gold
//! chunks with the matcher, the statements matched verbatim run through the semantic path (do
//! they land in their verbatim chunks?), and 100 semantic matches drawn with seed 42, printed as
//! JSON lines for reading (docs/evidence-sample.md).

use std::collections::HashMap;
use std::sync::Arc;

use bench_core::config::EvidenceMatchConfig;
use corpora::{
    calibrate, load_corpus, LoadOptions, MiniLm, SemanticMatching, SentenceIndex, SentenceSearch,
    VectorCache,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let first = args.next();
    let cache_dir = args
        .next()
        .unwrap_or_else(|| "target/evidence-vectors".into());
    if first.as_deref() == Some("medical") {
        return medical(&cache_dir);
    }
    let every: usize = first.map_or(Ok(1), |a| a.parse())?;
    let corpus = load_corpus("2wiki", &LoadOptions::default())?;
    let m = SemanticMatching {
        encoder: Arc::new(MiniLm::new()?),
        cache: VectorCache::new(&cache_dir),
    };
    let (statements, gold_docs) = corpora::twowiki_statements(&corpus, every);
    let doc_of: HashMap<&str, usize> = corpus
        .documents
        .iter()
        .enumerate()
        .map(|(i, d)| (d.id.as_str(), i))
        .collect();
    let t = std::time::Instant::now();
    let index = SentenceIndex::new(&corpus.chunks, &corpus.documents);
    let sentence_doc: Vec<usize> = index
        .chunks
        .iter()
        .map(|c| doc_of[corpus.chunks[c[0] as usize].document.as_str()])
        .collect();
    let search = SentenceSearch::new(index, "2wiki-calibration", &m)?;
    let texts: Vec<&str> = statements.iter().map(String::as_str).collect();
    let cfg = EvidenceMatchConfig::default();
    let cands = search.candidates(&texts, "2wiki-calibration", &m, cfg.candidates)?;
    eprintln!(
        "{} statements (every {every}th question), {} sentences, {:.1}s",
        texts.len(),
        search.sentences.len(),
        t.elapsed().as_secs_f64()
    );
    let is_gold = |i: usize, s: u32| gold_docs[i].contains(&sentence_doc[s as usize]);
    println!("min_similarity min_overlap precision recall accepted");
    for sim in (6..=16).map(|x| x as f32 * 0.05) {
        for ov in (0..=8).map(|x| x as f64 * 0.1) {
            let c = calibrate(&cands, is_gold, sim, ov);
            println!(
                "{sim:.2} {ov:.1} {:.4} {:.4} {}",
                c.precision(),
                c.recall(),
                c.accepted
            );
        }
    }
    let d = calibrate(&cands, is_gold, cfg.min_similarity, cfg.min_content_overlap);
    println!(
        "defaults (min_similarity {}, min_content_overlap {}): precision {:.4} ({} of {}), recall {:.4} ({} of {})",
        cfg.min_similarity,
        cfg.min_content_overlap,
        d.precision(),
        d.correct,
        d.accepted,
        d.recall(),
        d.correct,
        d.total
    );
    Ok(())
}

fn medical(cache_dir: &str) -> Result<(), Box<dyn std::error::Error>> {
    let m = SemanticMatching {
        encoder: Arc::new(MiniLm::new()?),
        cache: VectorCache::new(cache_dir),
    };
    let plain = load_corpus("medical", &LoadOptions::default())?;
    let t = std::time::Instant::now();
    let corpus = load_corpus(
        "medical",
        &LoadOptions {
            semantic: Some(m.clone()),
            ..LoadOptions::default()
        },
    )?;
    let all: Vec<(&str, &bench_core::StatementMatch)> = corpus
        .queries
        .iter()
        .flat_map(|q| q.statements.iter().map(move |s| (q.id.as_str(), s)))
        .collect();
    let semantic: Vec<_> = all
        .iter()
        .filter(|(_, s)| s.semantic && s.is_matched())
        .collect();
    let verbatim = all.iter().filter(|(_, s)| !s.semantic).count();
    println!(
        "medical: {} questions, gold chunks for {} verbatim, {} with the matcher ({:.1} %); statements {}: {verbatim} verbatim, {} by meaning, {} nothing ({:.1}s)",
        corpus.queries.len(),
        plain.queries_with_gold_chunks(),
        corpus.queries_with_gold_chunks(),
        100.0 * corpus.queries_with_gold_chunks() as f64 / corpus.queries.len() as f64,
        all.len(),
        semantic.len(),
        all.len() - verbatim - semantic.len(),
        t.elapsed().as_secs_f64()
    );
    // Second check: the verbatim statements through the semantic path.
    let verbatim: Vec<&bench_core::StatementMatch> = all
        .iter()
        .filter(|(_, s)| !s.semantic)
        .map(|(_, s)| *s)
        .collect();
    let texts: Vec<&str> = verbatim.iter().map(|s| s.text.as_str()).collect();
    let search = SentenceSearch::new(
        SentenceIndex::new(&corpus.chunks, &corpus.documents),
        "medical",
        &m,
    )?;
    let cfg = EvidenceMatchConfig::default();
    let cands = search.candidates(&texts, "medical-verbatim", &m, cfg.candidates)?;
    let is_gold = |i: usize, s: u32| {
        search.sentences.chunks[s as usize]
            .iter()
            .any(|&c| verbatim[i].chunks.contains(&corpus.chunks[c as usize].id))
    };
    let c = calibrate(&cands, is_gold, cfg.min_similarity, cfg.min_content_overlap);
    println!(
        "verbatim statements through the semantic path: {} of {} matched, {} in their verbatim chunks (precision {:.4}, recall {:.4})",
        c.accepted,
        c.total,
        c.correct,
        c.precision(),
        c.recall()
    );
    // 100 semantic matches drawn with seed 42.
    let mut order: Vec<usize> = (0..semantic.len()).collect();
    bench_core::rng::SplitMix64::new(42).shuffle(&mut order);
    for &i in order.iter().take(100) {
        let (q, s) = semantic[i];
        println!(
            "{}",
            serde_json::json!({"query": q, "score": s.score, "statement": s.text, "sentence": s.sentence, "chunks": s.chunks})
        );
    }
    Ok(())
}
