//! The leaderboard's page and plots from a hand-built board: the files written, the embedded JSON
//! (serde's text, unable to close its script), escaping of names and reasons, every router's
//! fixed point on every plot, the frontier, the protocol and the reference lines.

mod leaderboard_fixture;

use std::collections::BTreeSet;
use std::fs;
use std::path::PathBuf;

use leaderboard_fixture::{board, EVIL, EVIL_REASON, PUBLISHED};
use reports::leaderboard::{board_json, embed_json, plot_file_name, plot_files, write_page, Board};

const OPEN: &str = "<script type=\"application/json\" id=\"board\">";

fn written(board: &Board) -> (tempfile::TempDir, Vec<PathBuf>, String) {
    let dir = tempfile::tempdir().unwrap();
    let files = write_page(dir.path(), board).unwrap();
    let page = fs::read_to_string(dir.path().join("index.html")).unwrap();
    (dir, files, page)
}

/// The page without the board's JSON (inside its script, markup is text).
fn outside_json(page: &str) -> String {
    page.replace(embedded(page), "")
}

/// The text between the board's script tags.
fn embedded(page: &str) -> &str {
    let start = page.find(OPEN).expect("the board's script") + OPEN.len();
    let len = page[start..].find("</script>").unwrap();
    &page[start..start + len]
}

#[test]
fn writes_the_page_and_one_plot_per_matrix() {
    let b = board();
    let (dir, files, page) = written(&b);
    let mut expected: Vec<PathBuf> = b
        .matrices
        .iter()
        .map(|m| PathBuf::from(format!("pareto-{}.svg", m.id)))
        .collect();
    expected.push("index.html".into());
    assert_eq!(files, expected);
    let on_disk: BTreeSet<_> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| PathBuf::from(e.unwrap().file_name()))
        .collect();
    assert_eq!(on_disk, expected.iter().cloned().collect());
    // Self-contained: every plot is inline, byte for byte.
    for f in &files[..files.len() - 1] {
        let svg = fs::read_to_string(dir.path().join(f)).unwrap();
        assert!(page.contains(&svg), "{} is not inline", f.display());
    }
}

#[test]
fn embeds_serdes_json_that_no_name_can_close() {
    let b = board();
    let (_dir, _, page) = written(&b);
    let text = embedded(&page);
    assert!(!text.contains("</"), "a name closes the script");
    assert!(
        !text.contains("<!--"),
        "a name opens a comment in the script"
    );
    // Verbatim but for the two escapes, which JSON reads back as the same strings.
    let json = board_json(&b).unwrap();
    assert_eq!(text, embed_json(&json));
    assert_eq!(
        text.replace("<\\/", "</").replace("<\\u0021--", "<!--"),
        json
    );
    // JSON reads back the router names, markup and all, exactly.
    let back: Board = serde_json::from_str(text).unwrap();
    let names = |b: &Board| b.routers.iter().map(|r| r.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(&back), names(&b));
    assert!(names(&back).iter().any(|n| n == EVIL));
    // Exactly the page's own two scripts end: the board's and the code.
    assert_eq!(page.matches("</script>").count(), 2);
    assert_eq!(outside_json(&page).matches("<script").count(), 2);
}

#[test]
fn names_and_reasons_are_escaped_everywhere() {
    let b = board();
    let (_dir, _, whole) = written(&b);
    let page = outside_json(&whole);
    assert!(!page.contains("<img"), "a router's name became markup");
    assert!(!page.contains("<b>boom"), "a reason became markup");
    assert!(page.contains("mine&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"));
    // The reason is only in the JSON (drawn by the script as text), escaped there.
    assert!(embedded(&whole).contains("<b>boom<\\/b>"));
    assert!(EVIL_REASON.contains("</script>"));
}

#[test]
fn no_resource_is_fetched_from_anywhere() {
    let (_dir, _, whole) = written(&board());
    let page = outside_json(&whole);
    for needle in [
        "<link",
        "<iframe",
        "<img",
        "@import",
        "url(",
        "<script src",
        "fetch(",
    ] {
        assert!(!page.contains(needle), "the page holds {needle}");
    }
    let http: BTreeSet<_> = page
        .match_indices("http")
        .map(|(i, _)| &page[i..(i + 26).min(page.len())])
        .collect();
    assert_eq!(http, BTreeSet::from(["http://www.w3.org/2000/svg"]));
    assert!(page.contains("<noscript>"));
}

/// A plotted point: router, cost, correct rate.
type Pt = (String, f64, f64);

/// Each panel's points of one matrix's plot, by view.
fn panels(svg: &str) -> Vec<(String, Vec<Pt>)> {
    let doc = roxmltree::Document::parse(svg).expect("the plot is well-formed XML");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some("panel"))
        .map(|p| {
            let pts = p
                .descendants()
                .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("pt ")))
                .map(|n| {
                    let num = |a: &str| n.attribute(a).unwrap().parse::<f64>().unwrap();
                    (
                        n.attribute("data-router").unwrap().to_owned(),
                        num("data-cost"),
                        num("data-rate"),
                    )
                })
                .collect();
            (p.attribute("data-view").unwrap().to_owned(), pts)
        })
        .collect()
}

#[test]
fn every_router_that_ran_is_a_point_at_its_fixed_operating_point() {
    let b = board();
    let dir = tempfile::tempdir().unwrap();
    write_page(dir.path(), &b).unwrap();
    for (m, file) in b.matrices.iter().zip(plot_files(&b)) {
        let svg = fs::read_to_string(dir.path().join(file)).unwrap();
        let panels = panels(&svg);
        assert_eq!(
            panels.iter().map(|p| p.0.as_str()).collect::<Vec<_>>(),
            m.views
        );
        for (view, pts) in panels {
            let mut want: Vec<Pt> = b
                .cells
                .iter()
                .filter(|c| c.matrix == m.id && c.view == view && c.status == "ok")
                .filter(|c| c.router != "best-single" && c.router != "oracle")
                .map(|c| {
                    let x = c.measures.as_ref().unwrap();
                    (c.router.clone(), x.mean_cost, x.correct_rate)
                })
                .collect();
            if m.skipped.is_none() {
                let base = m.baselines.iter().find(|x| x.view == view).unwrap();
                want.insert(0, ("Oracle".into(), base.oracle_cost, base.oracle_correct));
                want.insert(
                    0,
                    (
                        "best-single".into(),
                        base.best_single_cost,
                        base.best_single_correct,
                    ),
                );
            }
            let mut got = pts.clone();
            got.sort_by(|a, b| a.0.cmp(&b.0));
            want.sort_by(|a, b| a.0.cmp(&b.0));
            assert_eq!(got, want, "{} view {view}", m.id);
        }
    }
    // The published router ran on one matrix only; the external one everywhere but the import.
    let adarague = fs::read_to_string(dir.path().join("pareto-adarague-llama8b.svg")).unwrap();
    let names = |svg: &str| -> BTreeSet<String> {
        panels(svg)
            .into_iter()
            .flat_map(|p| p.1)
            .map(|p| p.0)
            .collect()
    };
    assert!(names(&adarague).contains(PUBLISHED));
    assert!(!names(&adarague).contains(EVIL));
    let pooled = fs::read_to_string(dir.path().join("pareto-offline-pooled.svg")).unwrap();
    assert!(!names(&pooled).contains(PUBLISHED));
    assert!(names(&pooled).contains(EVIL));
}

#[test]
fn the_frontier_joins_undominated_deployable_points_only() {
    let b = board();
    let dir = tempfile::tempdir().unwrap();
    write_page(dir.path(), &b).unwrap();
    let svg = fs::read_to_string(dir.path().join("pareto-offline-pooled.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    for (panel, (_, pts)) in doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("panel"))
        .zip(panels(&svg))
    {
        let line = panel
            .descendants()
            .find(|n| n.attribute("class") == Some("frontier"))
            .expect("a frontier");
        let on: Vec<&str> = line.attribute("data-points").unwrap().lines().collect();
        assert!(!on.is_empty());
        assert!(!on.contains(&"Oracle"), "Oracle reads the labels");
        let deployable: Vec<_> = pts.iter().filter(|p| p.0 != "Oracle").collect();
        for p in &deployable {
            let dominated = deployable
                .iter()
                .any(|q| q.1 <= p.1 && q.2 >= p.2 && (q.1 < p.1 || q.2 > p.2));
            assert_eq!(on.contains(&p.0.as_str()), !dominated, "{}", p.0);
        }
        // Drawn in increasing cost.
        let costs: Vec<f64> = on
            .iter()
            .map(|n| deployable.iter().find(|p| p.0 == *n).unwrap().1)
            .collect();
        assert!(costs.windows(2).all(|w| w[0] <= w[1]));
    }
}

#[test]
fn the_protocol_references_and_skipped_matrices_are_printed() {
    let b = board();
    let (dir, _, page) = written(&b);
    for m in &b.matrices {
        assert!(page.contains(&format!("<tr data-matrix=\"{}\">", m.id)));
        assert!(page.contains(&m.digest));
    }
    assert!(page.contains("skipped: one class: every question&#39;s best arm is no-retrieval"));
    assert!(page.contains(&b.protocol.ranking));
    assert!(page.contains("after Holm's correction over the 10 routers"));
    assert_eq!(page.matches("<li class=\"reference\">").count(), 2);
    assert!(
        page.contains("Adaptive-RAG on Adaptive-RAG FLAN-T5-XL: 37.17 % correct — not re-scored")
    );
    // The skipped matrix's plot says why instead of drawing points.
    let svg = fs::read_to_string(dir.path().join("pareto-offline-medical.svg")).unwrap();
    assert!(svg.contains("Nothing to plot: one class"));
    assert!(panels(&svg).iter().all(|p| p.1.is_empty()));
    // The reference lines are on their matrix's plot.
    let svg = fs::read_to_string(dir.path().join("pareto-adaptive-rag-flan-t5-xl.svg")).unwrap();
    assert!(svg.contains("MBA-RAG (not re-scored): 38.8 %"));
}

#[test]
fn two_ids_of_one_file_name_get_two_plots() {
    let mut b = board();
    let mut twin = b.matrices[0].clone();
    b.matrices[0].id = "x/y".into();
    twin.id = "x_y".into();
    b.matrices.insert(1, twin);
    let (_dir, files, page) = written(&b);
    assert_eq!(files[0], PathBuf::from("pareto-x_y.svg"));
    assert_eq!(files[1], PathBuf::from("pareto-x_y-2.svg"));
    assert_eq!(files.iter().collect::<BTreeSet<_>>().len(), files.len());
    assert!(page.contains("<code>pareto-x_y-2.svg</code>"));
}

#[test]
fn a_matrix_id_cannot_name_a_path() {
    assert_eq!(
        plot_file_name("offline-pooled"),
        "pareto-offline-pooled.svg"
    );
    assert_eq!(plot_file_name("../a b/c"), "pareto-.._a_b_c.svg");
    assert_eq!(embed_json("\"</script><!--\""), "\"<\\/script><\\u0021--\"");
}
