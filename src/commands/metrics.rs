//! `ragrouter metrics`: corpus metrics of raw files (TSV triples, raw little-endian float32 rows).

use std::fs::File;
use std::io::BufReader;
use std::path::PathBuf;

use anyhow::Context;

use crate::checks::BadInput;
use crate::indicators::{configuration, format_value, knowledge_graph_metrics, render_indicators};
use metrics::corpus::{
    embedding_metrics, graph_metrics, parse_edges_tsv, read_f32_file, CorpusMetrics,
};
use serde_json::Value;

/// Arguments of `ragrouter metrics`.
#[derive(clap::Args, Debug)]
pub struct MetricsArgs {
    /// Corpus name (corpus mode); for raw files use --edges and/or --embeddings instead.
    pub corpus: Option<String>,
    /// Knowledge-graph triples, one `head<TAB>relation<TAB>tail` a line.
    #[arg(long)]
    pub edges: Option<PathBuf>,
    /// Raw little-endian float32 embeddings, row-major, no header (needs --dim).
    #[arg(long)]
    pub embeddings: Option<PathBuf>,
    /// Columns of the --embeddings matrix.
    #[arg(long)]
    pub dim: Option<usize>,
    /// Print JSON (`graph.*`, `embeddings.*` as in the metric fixtures) instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub store: crate::args::StoreArgs,
    #[command(flatten)]
    pub load: crate::args::LoadArgs,
}

/// `ragrouter metrics`: a corpus by name, or raw files.
pub fn run(args: &MetricsArgs) -> anyhow::Result<()> {
    match &args.corpus {
        Some(name) => run_corpus(name, args),
        None => run_files(args),
    }
}

/// Corpus mode: the metrics of the corpus's knowledge graph and chunk vectors, stored in the
/// results database under the extractor and encoder identities, and printed.
fn run_corpus(name: &str, args: &MetricsArgs) -> anyhow::Result<()> {
    use bench_core::{BenchConfig, Embedder};
    use corpora::{build_graph, BuildOptions, OfflineExtractor, TripletExtractor};
    use std::sync::Arc;
    use store::Store;

    if args.edges.is_some() || args.embeddings.is_some() {
        return Err(
            BadInput("give either a corpus name or --edges/--embeddings, not both".into()).into(),
        );
    }
    crate::checks::check_folder("--cache-dir", &args.load.cache_dir)?;
    args.load.encoder.check()?;
    // A --db that would be refused is refused before the corpus is embedded.
    crate::checks::check_db(&args.store.db)?;
    let config = BenchConfig::default();
    let embedder = Arc::new(
        corpora::MiniLm::from_dir(args.load.encoder.model_dir.as_deref())
            .context("loading the sentence encoder")?,
    );
    let opts =
        args.load
            .data
            .load_options_matching(&config, embedder.clone(), &args.load.cache_dir);
    let corpus =
        corpora::load_corpus(name, &opts).with_context(|| format!("loading corpus {name}"))?;
    let cache = corpora::VectorCache::new(&args.load.cache_dir);
    let texts: Vec<&str> = corpus.chunks.iter().map(|c| c.text.as_str()).collect();
    let vectors = cache
        .get_or_embed(
            &format!("{}:chunks", corpus.name),
            &texts,
            embedder.as_ref(),
            &|_, _| {},
        )
        .context("embedding chunks")?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let store = Store::open_db(&args.store.db).await?;
        store.upsert_corpus(&corpus).await?;
        let extractor = Arc::new(OfflineExtractor::new());
        let id = extractor.identity();
        let build = build_graph(
            &corpus,
            extractor,
            &store,
            &BuildOptions::default(),
            &|_, _| {},
        )
        .await
        .context("building the knowledge graph")?;
        let metrics = CorpusMetrics {
            graph: Some(knowledge_graph_metrics(&build.graph)),
            embeddings: Some(embedding_metrics(&vectors.data, vectors.dim)?),
        };
        let configuration = configuration(Some(&id), embedder.name());
        let flat = Value::Object(metrics.flat_map());
        store
            .put_corpus_metrics(&corpus.name, &corpus.content_hash, &configuration, &flat)
            .await?;
        if !build.stats.failures.is_empty() {
            eprintln!(
                "warning: {} chunks failed extraction and are not in the graph",
                build.stats.failures.len()
            );
        }
        println!("corpus {} ({configuration})", corpus.name);
        print!("{}", render(&metrics, args.json)?);
        if !args.json {
            println!("\nrouter indicators:");
            print!("{}", render_indicators(&flat));
        }
        Ok(())
    })
}

/// Computes the metrics of the raw files named in `args`; either input may be absent, not both.
pub fn compute_files(args: &MetricsArgs) -> anyhow::Result<CorpusMetrics> {
    if args.edges.is_none() && args.embeddings.is_none() {
        return Err(BadInput(
            "nothing to measure: give a corpus name, or --edges FILE.tsv and/or --embeddings FILE.f32 --dim D"
                .into(),
        )
        .into());
    }
    if args.embeddings.is_some() != args.dim.is_some() {
        return Err(BadInput(
            "--embeddings and --dim go together (the raw float32 file has no header)".into(),
        )
        .into());
    }
    // Regular files only, checked before either is opened: a FIFO would block the open.
    for (path, what) in [
        (&args.edges, "--edges file"),
        (&args.embeddings, "--embeddings file"),
    ] {
        if let Some(p) = path {
            bench_core::input::check_input_file(p, what)?;
        }
    }
    // The graph (one thread: parsing, then small passes) beside the embeddings (the kNN pass
    // on the pool): neither waits for the other.
    let (graph, embeddings) = std::thread::scope(|scope| {
        let graph = scope.spawn(|| -> anyhow::Result<_> {
            let Some(path) = &args.edges else {
                return Ok(None);
            };
            let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
            let list = parse_edges_tsv(BufReader::new(file), &path.display().to_string())?;
            Ok(Some(graph_metrics(&list)))
        });
        let embeddings = (|| -> anyhow::Result<_> {
            let (Some(path), Some(dim)) = (&args.embeddings, args.dim) else {
                return Ok(None);
            };
            let data = read_f32_file(path, dim)?;
            Ok(Some(embedding_metrics(&data, dim).with_context(|| {
                format!("embeddings {}", path.display())
            })?))
        })();
        let graph = graph
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (graph, embeddings)
    });
    Ok(CorpusMetrics {
        graph: graph?,
        embeddings: embeddings?,
    })
}

/// Renders the metrics as pretty JSON or as a two-column table.
pub fn render(metrics: &CorpusMetrics, json: bool) -> anyhow::Result<String> {
    if json {
        return Ok(serde_json::to_string_pretty(metrics)? + "\n");
    }
    let flat = metrics.flat_map();
    let width = flat.keys().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for (key, value) in &flat {
        out.push_str(&format!("{key:<width$}  {}\n", format_value(value)));
    }
    Ok(out)
}

/// Raw-file mode of `ragrouter metrics`: prints a table, or JSON with --json.
pub fn run_files(args: &MetricsArgs) -> anyhow::Result<()> {
    let metrics = compute_files(args)?;
    print!("{}", render(&metrics, args.json)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(file: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/metric-fixtures/a_small")
            .join(file)
    }

    fn args(edges: Option<&str>, emb: Option<&str>, dim: Option<usize>) -> MetricsArgs {
        MetricsArgs {
            corpus: None,
            edges: edges.map(fixture),
            embeddings: emb.map(fixture),
            dim,
            json: true,
            store: crate::args::StoreArgs {
                db: store::DbTarget::Sqlite(PathBuf::from("unused.sqlite")),
            },
            load: crate::args::LoadArgs {
                cache_dir: PathBuf::from("unused-cache"),
                data: crate::args::DataArgs {
                    data_dir: None,
                    allow_missing_evidence: false,
                },
                encoder: crate::args::EncoderArgs { model_dir: None },
            },
        }
    }

    #[test]
    fn raw_files_give_fixture_keys() {
        let m = compute_files(&args(Some("edges.tsv"), Some("emb.f32"), Some(4))).unwrap();
        let json: Value = serde_json::from_str(&render(&m, true).unwrap()).unwrap();
        assert_eq!(json["graph"]["nodes"], 10);
        assert_eq!(json["embeddings"]["rows"], 12);
        let table = render(&m, false).unwrap();
        assert!(table.contains("graph.lcc_ratio") && table.contains("embeddings.twonn_mle"));
    }

    #[test]
    fn either_input_is_optional_but_not_both() {
        let m = compute_files(&args(Some("edges.tsv"), None, None)).unwrap();
        assert!(m.graph.is_some() && m.embeddings.is_none());
        assert!(compute_files(&args(None, None, None)).is_err());
        assert!(compute_files(&args(None, Some("emb.f32"), None)).is_err());
        // Wrong --dim: 48 floats do not form rows of 5.
        let err = compute_files(&args(None, Some("emb.f32"), Some(5))).unwrap_err();
        assert!(format!("{err:#}").contains("byte offset"), "{err:#}");
    }
}
