//! The route-eval protocol called as a library (`routers::protocol`, no binary) gives the same
//! header and tables as `ragrouter route eval` on the same store: on the benched demo and on
//! the imported Adaptive-RAG test split.

mod common;

use common::*;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bench_core::Embedder;
use corpora::{MiniLm, VectorCache};
use routers::eval::{Fallback, Split};
use routers::protocol::{
    evaluate_protocol, BoxError, Inputs, Protocol, RandomBaseline, Resources, RouterChoice,
};
use routers::FeatureSet;
use store::Store;

/// The shared vector cache as the protocol's question vectors, as the binary wires it.
struct Cached(VectorCache);

impl routers::dataset::QuestionVectors for Cached {
    fn get_or_embed(
        &self,
        key: &str,
        texts: &[&str],
        embedder: &dyn Embedder,
    ) -> bench_core::Result<bench_core::Embeddings> {
        Ok(self.0.get_or_embed(key, texts, embedder, &|_, _| {})?)
    }
}

/// The protocol on `db` as a library: header lines and tables, as `route eval` prints them.
fn library_output(db: &Path, protocol: &Protocol, routers: &[&str]) -> String {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let target: store::DbTarget = db.to_str().unwrap().parse().unwrap();
        let store = Store::open_existing_db(&target).await.unwrap();
        let load =
            || -> Result<Arc<dyn Embedder>, BoxError> { Ok(Arc::new(MiniLm::from_dir(None)?)) };
        let choice = RouterChoice {
            names: routers.iter().map(|s| s.to_string()).collect(),
            external: Vec::new(),
            external_timeout: Duration::from_secs(60),
        };
        let r = evaluate_protocol(
            &store,
            protocol,
            choice.resolve().unwrap(),
            Resources {
                encoder: &load,
                vectors: Some(Arc::new(Cached(VectorCache::new(shared_cache())))),
                llm: None,
            },
        )
        .await
        .unwrap();
        assert!(r.evaluation.failed.is_empty(), "{:?}", r.evaluation.failed);
        format!(
            "{}\n{}\n{}",
            r.tuples_line(),
            r.rows_line(protocol),
            r.render_tables()
        )
    })
}

/// Table 3, the paired tests and the readings (everything after the two header lines) fit 100
/// columns by default (`--wide` shows every corpus's measures), and the cost column names `unit`.
fn fits_100_columns(tables: &str, unit: &str) {
    for line in tables.lines().skip(2) {
        let n = line.chars().count();
        assert!(n <= 100, "{n} columns: {line}\n{tables}");
    }
    assert!(tables.contains(&format!("cost in {unit}")), "{tables}");
}

/// `route eval ARGS` through the binary: its stdout.
fn binary_output(db: &Path, args: &[&str]) -> String {
    let out = run_on(db, &[&["route", "eval"], args].concat());
    check_ok(&out);
    text(&out.stdout)
}

#[test]
fn the_library_protocol_prints_what_route_eval_prints_on_the_demo() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let mut bench = bin();
    bench
        .args(["bench", "demo", "--cache-dir"])
        .arg(shared_cache())
        .arg("--db")
        .arg(&db);
    check_ok(&bench.output().unwrap());
    let routers = "random,best-fixed,oracle,lr,knn,util-lr";
    let cli = binary_output(
        &db,
        &[
            "--features",
            "q",
            "--folds",
            "3",
            "--seed",
            "7",
            "--routers",
            routers,
            "--random",
            "all-classes",
        ],
    );
    let protocol = Protocol {
        split: Split::KFold(3),
        features: FeatureSet::Q,
        seed: 7,
        random: RandomBaseline::AllClasses,
        ..Protocol::default()
    };
    let lib = library_output(&db, &protocol, &routers.split(',').collect::<Vec<_>>());
    assert!(lib.contains("routing rows: 20"), "{lib}");
    assert!(
        lib.contains("util-lr") && lib.contains("best-single"),
        "{lib}"
    );
    assert!(cli.starts_with(&lib), "library:\n{lib}\n--- binary:\n{cli}");
    fits_100_columns(&lib, "context tokens");
}

#[test]
fn the_library_protocol_prints_what_route_eval_prints_on_the_adaptive_rag_import() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let d = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/datasets/adaptive-rag-outcomes/classifier/data");
    // Adaptive-RAG's own protocol: train on the training labels, test on the 3,000.
    let valid = d.join("valid.json");
    let (train, test) = (
        d.join("flan_t5_xl/train.json"),
        d.join("flan_t5_xl/valid.json"),
    );
    for args in [
        vec![
            "--queries",
            valid.to_str().unwrap(),
            "--labels",
            test.to_str().unwrap(),
        ],
        vec!["--labels", train.to_str().unwrap()],
    ] {
        let split = if args.len() == 4 { "test" } else { "train" };
        let import = [&["import", "adaptive-rag"], &args[..], &["--split", split]].concat();
        check_ok(&run_on(&db, &import));
    }
    let routers = "random,oracle,util-knn,safe-lr";
    let cli = binary_output(
        &db,
        &[
            "--features",
            "q",
            "--split",
            "given",
            "--routers",
            routers,
            "--inputs",
            "paper",
            "--fallback",
            "most-frequent",
        ],
    );
    let protocol = Protocol {
        split: Split::Given,
        features: FeatureSet::Q,
        inputs: Inputs::Paper,
        fallback: Fallback::MostFrequent,
        ..Protocol::default()
    };
    let lib = library_output(&db, &protocol, &routers.split(',').collect::<Vec<_>>());
    assert!(lib.contains("imported:adaptive-rag/flan_t5_xl"), "{lib}");
    assert!(cli.starts_with(&lib), "library:\n{lib}\n--- binary:\n{cli}");
    // Costs in retrieval steps keep two decimals.
    fits_100_columns(&lib, "retrieval steps");
    let oracle = lib.lines().find(|l| l.starts_with("oracle ")).unwrap();
    let cost_block = oracle.rsplit('|').next().unwrap();
    assert!(cost_block.contains('.'), "{oracle}");
}
