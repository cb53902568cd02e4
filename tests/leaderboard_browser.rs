//! The leaderboard page in a real browser: headless Chromium loads index.html from a file with
//! `#selftest`, its script draws the table and then clicks through it, writing what it saw into
//! `<pre id="selftest">`; the DOM Chromium dumps says the row count, the top row, the row orders
//! after header clicks, the plots' points, and Chromium's log says whether any script error or
//! console message happened.

#[path = "../reports/tests/leaderboard_fixture/mod.rs"]
mod leaderboard_fixture;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use leaderboard_fixture::{board, EVIL};
use reports::leaderboard::{write_page, Board};
use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Chromium's dump of the page's DOM after its script ran, and its log.
fn load_in_chromium(page: &Path, profile: &Path) -> (String, String) {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium; .ci/run does)"
    );
    let url = format!("file://{}#selftest", page.display());
    let out_file = profile.join("dom.html");
    let err_file = profile.join("chromium.log");
    let mut child = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.join("profile").display()
        ))
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_file).unwrap())
        .stderr(std::fs::File::create(&err_file).unwrap())
        .spawn()
        .expect("starting chromium");
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within 120 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let dom = std::fs::read_to_string(&out_file).unwrap();
    let log = std::fs::read_to_string(&err_file).unwrap();
    assert!(status.success(), "chromium failed ({status}):\n{log}");
    (dom, log)
}

/// The self-test's JSON from the dumped DOM (text content, so `<`, `>` and `&` are escaped).
fn selftest(dom: &str) -> Value {
    let open = "<pre id=\"selftest\">";
    let start = dom
        .find(open)
        .unwrap_or_else(|| panic!("no self-test result in the DOM:\n{dom}"))
        + open.len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let text = dom[start..end]
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("self-test JSON: {e}\n{text}"))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect()
}

/// Router names in the table's first order: by rank, unranked ones last in the board's order.
fn by_rank(b: &Board) -> Vec<String> {
    let mut rs: Vec<_> = b.routers.iter().collect();
    rs.sort_by_key(|r| r.rank.unwrap_or(u32::MAX));
    rs.iter().map(|r| r.name.clone()).collect()
}

/// The points a matrix's plot must hold: best-single and Oracle and every router that ran, per view.
fn plot_points(b: &Board, matrix: &str) -> Vec<String> {
    let m = b.matrices.iter().find(|m| m.id == matrix).unwrap();
    if m.skipped.is_some() {
        return Vec::new();
    }
    let mut want = Vec::new();
    for v in &m.views {
        want.push("best-single".to_owned());
        want.push("Oracle".to_owned());
        for r in &b.routers {
            let ran = b.cells.iter().any(|c| {
                c.router == r.name && c.matrix == m.id && c.view == *v && c.status == "ok"
            });
            if ran && r.name != "best-single" && r.name != "oracle" {
                want.push(r.name.clone());
            }
        }
    }
    want
}

#[test]
#[ignore = "needs Debian's chromium (/usr/bin/chromium; .ci/run installs it)"]
fn the_page_draws_sorts_and_plots_in_chromium() {
    let b = board();
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("board");
    std::fs::create_dir(&site).unwrap();
    write_page(&site, &b).unwrap();
    let (dom, log) = load_in_chromium(&site.join("index.html"), dir.path());

    // No script error, no console message of any kind (the page logs nothing).
    let console: Vec<&str> = log
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .collect();
    assert!(console.is_empty(), "console:\n{}", console.join("\n"));
    let t = selftest(&dom);
    assert_eq!(t["errors"], Value::Array(vec![]), "script errors");
    assert_eq!(t["images"], 0, "a name became an <img>");

    // Every router is a row, the best-ranked on top, in rank order.
    assert_eq!(t["rows"], b.routers.len());
    let ranked = by_rank(&b);
    assert_eq!(t["top"], ranked[0].as_str());
    assert_eq!(t["top"], "utility");
    assert_eq!(strings(&t["initial"]), ranked);
    assert!(strings(&t["initial"]).iter().any(|n| n == EVIL));

    // A click on a header sorts by it; a second click reverses.
    let mut names = ranked.clone();
    names.sort();
    assert_eq!(strings(&t["by_router"]), names);
    names.reverse();
    assert_eq!(strings(&t["by_router_again"]), names);
    let mut by_wins: Vec<_> = b.routers.iter().collect();
    by_wins.sort_by_key(|r| std::cmp::Reverse(r.wins));
    let by_wins: Vec<String> = by_wins.iter().map(|r| r.name.clone()).collect();
    assert_eq!(strings(&t["by_wins"]), by_wins);
    assert_ne!(
        by_wins, ranked,
        "the fixture's wins order must differ from its ranks"
    );

    // One plot per matrix, each with every point it must show.
    let plots = t["plots"].as_array().unwrap();
    assert_eq!(plots.len(), b.matrices.len());
    for (p, m) in plots.iter().zip(&b.matrices) {
        assert_eq!(p["matrix"], m.id.as_str());
        assert_eq!(strings(&p["points"]), plot_points(&b, &m.id), "{}", m.id);
    }
    let options = strings(&t["matrix_options"]);
    assert_eq!(options.len(), b.matrices.len() + 2);

    // The filters: the ranked matrices' columns at first, one matrix's (ranked or not) when it
    // is chosen, and one view's of it when that is chosen too.
    let fixed = ["rank", "router", "kind", "gap", "ran", "wins", "losses"];
    let columns = |pairs: &[(&str, &str)]| -> Vec<String> {
        let mut keys: Vec<String> = fixed.iter().map(|k| (*k).to_owned()).collect();
        for (m, v) in pairs {
            keys.push(format!("rate:{m}/{v}"));
            keys.push(format!("delta:{m}/{v}"));
        }
        keys
    };
    let pairs =
        |ranked_only: bool, id: Option<&str>, view: Option<&str>| -> Vec<(String, String)> {
            b.matrices
                .iter()
                .filter(|m| (!ranked_only || m.ranked) && id.is_none_or(|i| i == m.id))
                .flat_map(|m| m.views.iter().map(|v| (m.id.clone(), v.clone())))
                .filter(|(_, v)| view.is_none_or(|w| w == v))
                .collect()
        };
    let refs = |p: &[(String, String)]| {
        columns(
            &p.iter()
                .map(|(m, v)| (m.as_str(), v.as_str()))
                .collect::<Vec<_>>(),
        )
    };
    assert_eq!(strings(&t["headers"]), refs(&pairs(true, None, None)));
    let one = t["filter_matrix"].as_str().unwrap();
    assert_eq!(one, "offline-2wiki");
    assert_eq!(
        strings(&t["filtered"]),
        refs(&pairs(false, Some(one), None))
    );
    let view = t["filter_view"].as_str().unwrap();
    assert_eq!(view, "q");
    assert_eq!(
        strings(&t["filtered_view"]),
        refs(&pairs(false, Some(one), Some(view)))
    );
    assert_eq!(t["filtered_rows"], b.routers.len());

    // The drill-down of the top router lists its cells on every matrix.
    let first = &b.routers[0].name;
    let cells = b.cells.iter().filter(|c| &c.router == first).count();
    assert_eq!(t["drill_rows"], cells);
}
