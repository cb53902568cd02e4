//! A small report rendered from a hand-made store: the files, PNGs with drawn text, SVGs that
//! parse, escaped HTML, quoted CSV, and a report without router evaluations.

use std::path::Path;

use bench_core::{
    BenchConfig, Corpus, JudgeLabel, ParadigmId, ParadigmOutput, PhaseTokens, QualityMetrics,
    QueryType, ResultRecord, RouteEvalRow, RouteEvalSpec,
};
use reports::{load, write_report, Selection};
use store::{RunSpec, Store};

const SCRIPT_QUERY: &str = "Who said \"hi\", <script>alert(1)</script> & left?";

fn corpus(name: &str, questions: &[(&str, &str, QueryType)]) -> Corpus {
    let queries = questions
        .iter()
        .map(|&(id, text, t)| fixtures::query(id, text, t, "a", &[]))
        .collect();
    Corpus {
        name: name.into(),
        content_hash: format!("hash-{name}"),
        ..fixtures::tiny_corpus(&[("d", "text")], queries)
    }
}

fn record(q: &str, p: ParadigmId, label: JudgeLabel, gen_in: u64) -> ResultRecord {
    ResultRecord {
        query_id: q.into(),
        paradigm: p,
        output: ParadigmOutput {
            answer: "an answer".into(),
            context_tokens: gen_in / 2,
            tokens: PhaseTokens {
                generation_in: gen_in,
                generation_out: 10,
                ..PhaseTokens::default()
            },
            ..Default::default()
        },
        judge: Some(label),
        quality: QualityMetrics::default(),
        judge_tokens_in: 50,
        judge_tokens_out: 5,
        mode: "offline".into(),
        config_hash: "c".into(),
        error: None,
        graph_build: None,
    }
}

async fn bench(store: &Store, c: &Corpus, results: &[(&str, ParadigmId, JudgeLabel, u64)]) -> i64 {
    let cfg = BenchConfig::default();
    store.upsert_corpus(c).await.unwrap();
    let spec = RunSpec {
        corpus: c,
        config: &cfg,
        mode: bench_core::Mode::Offline,
        reader: "r".into(),
        judge: "j".into(),
        embedder: "e".into(),
        extractor: String::new(),
        crate_version: "0".into(),
        llm: None,
    };
    let run = store.start_run(&spec, false).await.unwrap();
    for (q, p, l, t) in results {
        store
            .write_result(run.id, &record(q, *p, *l, *t))
            .await
            .unwrap();
    }
    store.finish_run(run.id).await.unwrap();
    run.id
}

fn eval_row(
    router: &str,
    param: Option<f64>,
    corpus: &str,
    fold: u32,
    acc: f64,
    cr: f64,
    tok: f64,
) -> RouteEvalRow {
    let base = fixtures::route_eval_row(router, param, corpus, fold);
    RouteEvalRow {
        n: 2,
        measures: bench_core::Measures {
            accuracy: acc,
            macro_f1: acc / 2.0,
            mrr: acc,
            correct_rate: cr,
            mean_tokens: tok,
            latency_ms: 0.1,
            fit_ms: 1.0,
            ..base.measures
        },
        ..base
    }
}

fn eval_spec(features: &str, runs: Vec<(String, i64)>) -> RouteEvalSpec {
    RouteEvalSpec {
        split: "kfold".into(),
        folds: 2,
        seed: 7,
        features: features.into(),
        policy: "best-semantic-f1".into(),
        mode: "offline".into(),
        runs,
        config: serde_json::json!({"note": "<b>not bold</b>"}),
    }
}

/// Two corpora with three paradigms each; optionally router evaluations and corpus metrics.
async fn fixture_store(path: &Path, with_evals: bool) -> Store {
    use JudgeLabel::{Correct, Incorrect, NoAnswer};
    use ParadigmId::{Graph, LlmOnly, Naive};
    let store = Store::open(path).await.unwrap();
    let alpha = corpus(
        "alpha",
        &[
            ("q1", SCRIPT_QUERY, QueryType::Factual),
            ("q2", "Where, exactly?", QueryType::Reasoning),
            ("q3", "Why?", QueryType::Factual),
        ],
    );
    let beta = corpus(
        "beta",
        &[
            ("b1", "When?", QueryType::Factual),
            ("b2", "How?", QueryType::Summary),
        ],
    );
    let a = bench(
        &store,
        &alpha,
        &[
            ("q1", LlmOnly, NoAnswer, 30),
            ("q2", LlmOnly, NoAnswer, 30),
            ("q3", LlmOnly, NoAnswer, 30),
            ("q1", Naive, Correct, 2000),
            ("q2", Naive, Incorrect, 2000),
            ("q3", Naive, Correct, 2000),
            ("q1", Graph, Correct, 6000),
            ("q2", Graph, Correct, 6000),
            ("q3", Graph, Incorrect, 6000),
        ],
    )
    .await;
    let b = bench(
        &store,
        &beta,
        &[
            ("b1", LlmOnly, NoAnswer, 20),
            ("b2", LlmOnly, NoAnswer, 20),
            ("b1", Naive, Correct, 1500),
            ("b2", Naive, Incorrect, 1500),
            ("b1", Graph, Correct, 9000),
            ("b2", Graph, Correct, 9000),
        ],
    )
    .await;
    store
        .put_corpus_metrics(
            "alpha",
            "hash-alpha",
            "test",
            &serde_json::json!({"graph.lcc_ratio": 0.8, "graph.density": 0.0004, "embeddings.twonn_mle": 9.5}),
        )
        .await
        .unwrap();
    if with_evals {
        let runs = vec![("alpha".to_owned(), a), ("beta".to_owned(), b)];
        for (features, lift) in [("q", 0.0), ("q+c", 0.1)] {
            let mut rows = Vec::new();
            for key in ["alpha", "beta", "*"] {
                for fold in 0..2 {
                    rows.push(eval_row("random", None, key, fold, 0.3, 0.4, 3000.0));
                    rows.push(eval_row("oracle", None, key, fold, 1.0, 0.9, 2500.0));
                    rows.push(eval_row(
                        "lr",
                        None,
                        key,
                        fold,
                        0.5 + lift,
                        0.6 + lift,
                        2200.0,
                    ));
                    rows.push(eval_row(
                        "svm",
                        None,
                        key,
                        fold,
                        0.45 + lift,
                        0.55 + lift,
                        2600.0,
                    ));
                    for (l, cr, tok) in [(0.0, 0.7, 5000.0), (0.5, 0.6, 2000.0), (1.0, 0.3, 100.0)]
                    {
                        rows.push(eval_row("cost-knn", Some(l), key, fold, 0.4, cr, tok));
                    }
                }
            }
            store
                .put_route_eval(&eval_spec(features, runs.clone()), &rows)
                .await
                .unwrap();
        }
    }
    store
}

/// Pixels of `img` in the rectangle that differ from white.
fn ink(img: &image::RgbImage, x0: u32, y0: u32, x1: u32, y1: u32) -> usize {
    let mut n = 0;
    for y in y0..y1.min(img.height()) {
        for x in x0..x1.min(img.width()) {
            let p = img.get_pixel(x, y).0;
            if p[0] < 200 || p[1] < 200 || p[2] < 200 {
                n += 1;
            }
        }
    }
    n
}

#[tokio::test]
async fn a_full_report_renders_every_part() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture_store(&dir.path().join("r.sqlite"), true).await;
    let data = load(&store, &Selection::default()).await.unwrap();
    assert_eq!(data.runs.len(), 2);
    assert_eq!(data.tuples.len(), 15);
    assert_eq!(data.evals.len(), 2);
    let out = dir.path().join("report");
    let written = write_report(&data, &out).unwrap();
    assert!(
        written.missing.iter().all(|m| !m.contains("router")),
        "{:?}",
        written.missing
    );
    for f in [
        "report.html",
        "figures/fig7_cost_accuracy.svg",
        "figures/fig7_cost_accuracy.png",
        "figures/fig4_heatmap.svg",
        "figures/fig4_heatmap.png",
        "figures/fig5_feature_sets.svg",
        "figures/fig5_feature_sets.png",
        "figures/fig6_corpus_profiles.svg",
        "figures/fig6_corpus_profiles.png",
        "tables/table2.md",
        "tables/table2.csv",
        "tables/table3.md",
        "tables/table3.csv",
        "tables/table16.md",
        "tables/table16.csv",
        "tables/frontier.csv",
        "tables/aiq.csv",
        "exports/tuples.csv",
        "exports/tuples.jsonl",
        "exports/route_evals.csv",
        "exports/route_evals.jsonl",
    ] {
        assert!(out.join(f).is_file(), "missing {f}");
    }
    // No staging directory is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".staging"))
        .collect();
    assert!(leftovers.is_empty());

    // Every SVG is well-formed XML with text in it.
    for e in std::fs::read_dir(out.join("figures")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "svg") {
            let s = std::fs::read_to_string(&p).unwrap();
            let doc =
                roxmltree::Document::parse(&s).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert!(
                doc.descendants().any(|n| n.has_tag_name("text")),
                "{}",
                p.display()
            );
        }
    }

    // Figure 7: the first panel (two panels a row, 560x430 each, 40 px title band) has its axis
    // descriptions and tick labels drawn: ink in the bottom label band and the left label band.
    let img = image::open(out.join("figures/fig7_cost_accuracy.png"))
        .unwrap()
        .to_rgb8();
    assert_eq!((img.width(), img.height()), (2 * 560 + 270, 2 * 430 + 40));
    let bottom = ink(&img, 80, 40 + 430 - 58, 540, 40 + 430 - 12);
    let left = ink(&img, 12, 80, 72, 400);
    let title = ink(&img, 0, 0, 1120, 36);
    assert!(
        bottom > 200 && left > 200 && title > 200,
        "bottom {bottom}, left {left}, title {title}"
    );
    // The legend column lists the strategies in text.
    assert!(ink(&img, 2 * 560 + 30, 40, 2 * 560 + 270, 300) > 300);
    // A blank canvas would fail the same measure.
    let blank = image::RgbImage::from_pixel(100, 100, image::Rgb([255, 255, 255]));
    assert_eq!(ink(&blank, 0, 0, 100, 100), 0);
    // Figure 4: row labels (query types) are drawn left of the first panel's cells.
    let heat = image::open(out.join("figures/fig4_heatmap.png"))
        .unwrap()
        .to_rgb8();
    assert!(ink(&heat, 10, 90, 10 + 72, 90 + 3 * 40) > 100);

    // The HTML escapes the question and the evaluation settings; figures are inline.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; left?"));
    assert!(!html.contains("<script>"));
    assert!(!html.contains("<b>not bold</b>"));
    assert_eq!(html.matches("<svg").count(), 4);
    assert!(html.contains("hash-alpha") && html.contains("offline"));

    // CSV quotes the question; JSON lines parse back to the same text.
    let csv = std::fs::read_to_string(out.join("exports/tuples.csv")).unwrap();
    assert!(csv.contains("\"Who said \"\"hi\"\", <script>alert(1)</script> & left?\""));
    let jsonl = std::fs::read_to_string(out.join("exports/tuples.jsonl")).unwrap();
    let lines: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 15);
    assert!(lines.iter().any(|v| v["query"] == SCRIPT_QUERY));

    // Table 2: graph on alpha is 2 of 3 correct; the runs are offline, so its cost is its
    // 3000 context tokens per query (its 6010 stored LLM tokens are in Table 16).
    let t2 = std::fs::read_to_string(out.join("tables/table2.csv")).unwrap();
    let graph = t2.lines().find(|l| l.starts_with("graph,")).unwrap();
    assert!(graph.contains("66.7,3000"), "{graph}");
    let t16 = std::fs::read_to_string(out.join("tables/table16.csv")).unwrap();
    assert!(
        t16.contains("alpha,graph,3,3000,0,0,0,0,18000,30,18030,150,15"),
        "{t16}"
    );
    let svg = std::fs::read_to_string(out.join("figures/fig7_cost_accuracy.svg")).unwrap();
    assert!(svg.contains("context tokens per query"));
    let frontier = std::fs::read_to_string(out.join("tables/frontier.csv")).unwrap();
    assert!(
        frontier.contains("alpha,lr,router,2200,70.0,4,"),
        "{frontier}"
    );
    // Table 3 comes from the joint-feature evaluation: lr at 60% accuracy.
    let t3 = std::fs::read_to_string(out.join("tables/table3.md")).unwrap();
    assert!(t3.contains("| lr | 60.0 ± 0.0"), "{t3}");
    assert!(t3.contains("cost-knn (λ=0.5)"));
}

#[tokio::test]
async fn without_router_evaluations_the_paradigm_parts_still_render() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture_store(&dir.path().join("r.sqlite"), false).await;
    let data = load(
        &store,
        &Selection {
            corpora: vec!["beta".into()],
            ..Selection::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(data.corpus_names(), vec!["beta"]);
    let out = dir.path().join("report");
    let written = write_report(&data, &out).unwrap();
    assert!(written.missing.iter().any(|m| m.contains("router parts")));
    assert!(written.missing.iter().any(|m| m.contains("Figure 6")));
    assert!(out.join("figures/fig7_cost_accuracy.png").is_file());
    assert!(!out.join("tables/table3.md").exists());
    assert!(!out.join("figures/fig5_feature_sets.svg").exists());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("router parts"));
}

#[tokio::test]
async fn unknown_runs_and_evaluations_are_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture_store(&dir.path().join("r.sqlite"), false).await;
    for sel in [
        Selection {
            runs: vec![99],
            ..Selection::default()
        },
        Selection {
            evals: vec![5],
            ..Selection::default()
        },
        Selection {
            corpora: vec!["gamma".into()],
            ..Selection::default()
        },
    ] {
        let e = load(&store, &sel).await.unwrap_err();
        assert!(matches!(e, bench_core::BenchError::Invalid(_)), "{e}");
    }
    let empty = Store::open(&dir.path().join("empty.sqlite")).await.unwrap();
    assert!(load(&empty, &Selection::default()).await.is_err());
}

#[tokio::test]
async fn llm_runs_are_costed_by_llm_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture_store(&dir.path().join("r.sqlite"), true).await;
    let mut data = load(&store, &Selection::default()).await.unwrap();
    for t in &mut data.tuples {
        t.row.mode = bench_core::Mode::parse("llm:test@http://localhost").unwrap();
    }
    let out = dir.path().join("report");
    write_report(&data, &out).unwrap();
    let frontier = std::fs::read_to_string(out.join("tables/frontier.csv")).unwrap();
    assert!(
        frontier.contains("alpha,graph,paradigm,6010,66.7,3,"),
        "{frontier}"
    );
    assert!(frontier.contains(",router,"), "{frontier}");
    let svg = std::fs::read_to_string(out.join("figures/fig7_cost_accuracy.svg")).unwrap();
    assert!(svg.contains("LLM tokens per query"));
}

#[tokio::test]
async fn a_failed_report_leaves_no_page_and_no_staging() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture_store(&dir.path().join("r.sqlite"), false).await;
    let data = load(&store, &Selection::default()).await.unwrap();
    let out = dir.path().join("report");
    std::fs::create_dir_all(&out).unwrap();
    // A file where the figures directory must go: moving the figures into place fails.
    std::fs::write(out.join("figures"), b"in the way").unwrap();
    assert!(write_report(&data, &out).is_err());
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["figures"]);
}

#[tokio::test]
async fn a_loco_evaluation_does_not_hide_the_kfold_one() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture_store(&dir.path().join("r.sqlite"), true).await;
    let runs = store.route_evals().await.unwrap()[0].1.runs.clone();
    // A newer evaluation of the same features, leave-one-corpus-out.
    let mut spec = eval_spec("q+c", runs);
    spec.split = "loco".into();
    let rows: Vec<RouteEvalRow> = ["alpha", "beta", "*"]
        .iter()
        .flat_map(|key| {
            [
                eval_row("random", None, key, 0, 0.3, 0.4, 3000.0),
                eval_row("lr", None, key, 0, 0.25, 0.35, 2100.0),
            ]
        })
        .collect();
    let loco = store.put_route_eval(&spec, &rows).await.unwrap();
    let data = load(&store, &Selection::default()).await.unwrap();
    let mut kinds: Vec<(String, String)> = data
        .evals
        .iter()
        .map(|e| (e.spec.features.clone(), e.spec.split.clone()))
        .collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [("q", "kfold"), ("q+c", "kfold"), ("q+c", "loco")]
            .map(|(f, s)| (f.to_string(), s.to_string()))
    );
    // Table 3 and Figure 7 stay on the k-fold evaluation; the loco one gets its own table.
    let main = reports::main_eval(&data.evals).unwrap();
    assert_eq!(
        (main.spec.split.as_str(), main.spec.features.as_str()),
        ("kfold", "q+c")
    );
    let out = dir.path().join("report");
    write_report(&data, &out).unwrap();
    let loco_table = std::fs::read_to_string(out.join("tables/table3_loco.md")).unwrap();
    assert!(
        loco_table.contains(&format!("evaluation {loco}")),
        "{loco_table}"
    );
    assert!(out.join("tables/table3.md").exists());
}

/// Every figure in the registry is drawn into the full fixture's report, listed in its manifest
/// and inlined in its HTML: registering a figure is all it takes to have it written.
#[tokio::test]
async fn every_registered_figure_is_written_listed_and_inlined() {
    let dir = tempfile::tempdir().unwrap();
    let store = fixture_store(&dir.path().join("r.sqlite"), true).await;
    let data = load(&store, &Selection::default()).await.unwrap();
    let out = dir.path().join("report");
    let written = write_report(&data, &out).unwrap();
    assert!(written.missing.is_empty(), "{:?}", written.missing);
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report-manifest.json")).unwrap())
            .unwrap();
    let manifest: Vec<&str> = manifest["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    let stems: Vec<&str> = reports::figure_stems().collect();
    assert!(stems.len() >= 4, "{stems:?}");
    for stem in &stems {
        for ext in ["svg", "png"] {
            let rel = format!("figures/{stem}.{ext}");
            assert!(out.join(&rel).is_file(), "{rel} not written");
            assert!(
                manifest.contains(&rel.as_str()),
                "{rel} not in the manifest"
            );
            assert!(
                written.files.contains(&std::path::PathBuf::from(&rel)),
                "{rel} not in the summary"
            );
        }
        let svg = std::fs::read_to_string(out.join(format!("figures/{stem}.svg"))).unwrap();
        let body = &svg[svg.find("<svg").unwrap()..];
        assert!(
            html.contains(body.trim()),
            "{stem} not inlined in report.html"
        );
    }
    assert_eq!(html.matches("<svg").count(), stems.len());
}
