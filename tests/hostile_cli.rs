//! Hostile input to the command line (issue #29, part B): every numeric setting out of range,
//! runs of no question, names `bench` would refuse, hostile corpus names, duplicate JSON keys,
//! empty values, a shard merged twice, a report folder that holds another report or the user's
//! files, a token budget smaller than one call, an external router that fails in every fold.
//! Each refusal exits 2, names the file, line, field or key, and writes nothing.

mod common;

use common::*;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use llm::mock::{MockReply, MockServer};

/// Every file under `dir`, relative to it.
fn listing(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

/// Numeric leaves of a JSON object as dotted keys.
fn numeric_keys(v: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
    if let Some(o) = v.as_object() {
        for (k, v) in o {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            if v.is_number() {
                out.insert(key);
            } else {
                numeric_keys(v, &key, out);
            }
        }
    }
}

#[test]
fn every_numeric_setting_out_of_range_is_refused_naming_key_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    // (key, TOML line in its table, what must be refused)
    let bench_cases: &[(&str, &str)] = &[
        ("chunking.size", "0"),
        ("chunking.overlap", "512"),
        ("retrieval.context_budget", "0"),
        ("retrieval.min_similarity", "nan"),
        ("retrieval.top_k", "0"),
        ("generation.temperature", "-0.5"),
        ("generation.llm_only_temperature", "2.5"),
        ("generation.max_tokens", "0"),
        ("offline_reader.bm25_k1", "-1.2"),
        ("offline_reader.bm25_b", "1.5"),
        ("offline_reader.rank_bonus", "nan"),
        ("offline_reader.summary_sentences", "0"),
        ("graph.link_k", "0"),
        ("graph.seed_k", "0"),
        ("graph.min_entity_similarity", "nan"),
        ("graph.damping", "1.0"),
        ("graph.min_ppr_score", "-1e-5"),
        ("graph.top_nodes", "0"),
        ("graph.max_triplets", "0"),
        ("hybrid.rrf_k", "-60.0"),
        ("iterative.max_rounds", "0"),
        ("iterative.evaluator_temperature", "-0.1"),
        ("iterative.offline_sufficient_coverage", "-0.5"),
        ("judge.correct_recall", "inf"),
        ("judge.statement_share", "0"),
        ("judge.short_answer_tokens", "0"),
        ("data.evidence.min_similarity", "nan"),
        ("data.evidence.min_content_overlap", "1.5"),
        ("data.evidence.candidates", "0"),
        ("seed", "-1"),
        ("concurrency", "0"),
    ];
    // The table covers every numeric setting the configuration has.
    let mut keys = BTreeSet::new();
    numeric_keys(
        &serde_json::to_value(bench_core::BenchConfig::default()).unwrap(),
        "",
        &mut keys,
    );
    keys.insert("concurrency".into()); // not serialised: not part of a run's identity
    let covered: BTreeSet<String> = bench_cases.iter().map(|(k, _)| k.to_string()).collect();
    assert_eq!(keys, covered, "a numeric setting without a range check");

    let llm_cases: &[(&str, &str, &str)] = &[
        ("answer", "timeout_s", "0"),
        ("answer", "timeout_s", "1000000"),
        ("answer", "max_in_flight", "0"),
        ("answer", "rpm", "0"),
        ("answer", "tpm", "0"),
        ("answer", "max_retries", "1000"),
        ("answer", "backoff_base_ms", "4000000"),
        ("answer", "backoff_max_ms", "4000000"),
        ("embedding", "batch_size", "0"),
        ("embedding", "batch_size", "5000"),
        ("judge", "timeout_s", "0"),
        ("graph", "max_in_flight", "0"),
    ];
    let mut llm_keys = BTreeSet::new();
    numeric_keys(
        &serde_json::to_value(llm::EndpointConfig::new("http://h/v1", "m")).unwrap(),
        "",
        &mut llm_keys,
    );
    llm_keys.extend(["rpm", "tpm", "batch_size"].map(String::from)); // unset by default
    llm_keys.remove("seed"); // any u64: no range
    let llm_covered: BTreeSet<String> = llm_cases.iter().map(|(_, k, _)| k.to_string()).collect();
    assert_eq!(
        llm_keys, llm_covered,
        "an endpoint setting without a range check"
    );

    let mut files: Vec<(String, String, String)> = Vec::new();
    for (key, value) in bench_cases {
        let text = match key.split_once('.') {
            Some((table, k)) => format!("[{table}]\n{k} = {value}\n"),
            None => format!("{key} = {value}\n"),
        };
        files.push((key.to_string(), text, key.to_string()));
    }
    for (role, key, value) in llm_cases {
        let answer = "[llm.answer]\nmodel = \"m\"\nbase_url = \"http://127.0.0.1:9/v1\"\n";
        let text = if *role == "answer" {
            format!("{answer}{key} = {value}\n")
        } else {
            format!("{answer}[llm.{role}]\n{key} = {value}\n")
        };
        files.push((
            format!("llm.{role}.{key}"),
            text,
            format!("llm.{role}.{key}"),
        ));
    }
    for (i, (key, text, needle)) in files.iter().enumerate() {
        let cfg = dir.path().join(format!("case-{i}.toml"));
        std::fs::write(&cfg, text).unwrap();
        let out = run(&[
            "bench",
            "demo",
            "--dry-run",
            "--config",
            s(&cfg),
            "--db",
            s(&db),
            "--cache-dir",
            s(&dir.path().join("cache")),
        ]);
        let err = text_of(&out);
        assert_eq!(out.status.code(), Some(2), "{key}: {err}");
        assert!(
            err.contains(&format!("case-{i}.toml")) && err.contains(needle.as_str()),
            "{key}: the message names neither the file nor the key:\n{err}"
        );
    }
    assert!(
        !db.exists(),
        "nothing is written for a refused configuration"
    );
}

fn text_of(out: &Output) -> String {
    text(&out.stderr)
}

#[test]
fn runs_of_no_question_are_refused_and_a_clamped_sample_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let bench = |extra: &[&str]| {
        let mut args = vec!["bench", "demo", "--db", s(&db), "--paradigms", "naive"];
        args.extend_from_slice(extra);
        run(&args)
    };
    for (extra, needle) in [
        (&["--limit", "0"][..], "--limit 0"),
        (&["--sample", "0"][..], "--sample 0"),
        // The demo has 20 questions: shard 25 of 25 holds none.
        (&["--shard", "25/25"][..], "--shard 25/25"),
        (&["--limit", "3", "--shard", "4/4"][..], "--shard 4/4"),
    ] {
        let out = bench(extra);
        check_fails(&out, 2, &[needle]);
        assert!(!db.exists(), "{extra:?}: nothing written");
    }
    // More than there are: the sample is clamped, and the run says so.
    let out = bench(&["--sample", "100", "--dry-run"]);
    check_ok(&out);
    let err = text_of(&out);
    assert!(
        err.contains("--sample 100") && err.contains("clamped to all 20"),
        "{err}"
    );
}

/// A generic corpus of one document in lower case (no entity, so no graph fact) and one question.
fn factless_corpus(root: &Path) -> PathBuf {
    let d = root.join("plain");
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("corpus.jsonl"),
        "{\"id\": \"d1\", \"title\": \"t\", \"text\": \"all of this text is in lower case and names nothing.\"}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("queries.jsonl"),
        "{\"id\": \"q1\", \"question\": \"what is named?\", \"answers\": [\"nothing\"], \"type\": \"factual\"}\n",
    )
    .unwrap();
    d
}

#[test]
fn generate_refuses_what_bench_would_refuse_and_caps_what_cannot_be_met() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let out_dir = dir.path().join("set");
    let generate = |corpus: &str, extra: &[&str]| {
        let mut args = vec!["generate", corpus, "--out", s(&out_dir), "--db", s(&db)];
        args.extend_from_slice(extra);
        run(&args)
    };
    for (extra, needles) in [
        (
            &["--name", "../x y"][..],
            &["--name", "../x y", "letters"][..],
        ),
        (&["--name", "demo"][..], &["--name", "built-in"][..]),
        (&["--name", ".."][..], &["--name", "\"..\""][..]),
        (&["--max-candidates", "0"][..], &["--max-candidates 0"][..]),
        (&["--temperature=-1"][..], &["--temperature"][..]),
    ] {
        let out = generate("demo", extra);
        check_fails(&out, 2, needles);
        assert!(
            !out_dir.exists() && !db.exists(),
            "{extra:?}: nothing written"
        );
    }
    // A corpus whose graph has no fact: a million questions asked, the cap is said up front
    // (one chunk, so at most one factual source and four draws), and the empty result is refused
    // with nothing written.
    let plain = format!("jsonl:{}", factless_corpus(dir.path()).display());
    let out = generate(
        &plain,
        &["--per-type", "1000000", "--types", "factual,reasoning"],
    );
    check_fails(&out, 2, &["kept no question", "nothing written"]);
    let err = text_of(&out);
    assert!(
        err.contains("capped: --per-type 1000000")
            && err.contains("at most 1 distinct sources for factual")
            && err.contains("estimate: at most 4 candidates"),
        "{err}"
    );
    assert!(!out_dir.exists(), "an empty set is not written");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().contains("set"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn imports_refuse_hostile_names_empty_values_and_duplicate_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let file = dir.path().join("in.jsonl");
    let good = r#"{"id":"q0","corpus":"fine","question":"Who?","outcomes":{"naive":{"correct":true,"cost":1}}}"#;
    for (record, needles) in [
        (
            r#"{"id":"q1","corpus":"<script>alert(1)</script>","question":"Who?","outcomes":{"naive":{"correct":true,"cost":1}}}"#,
            &["in.jsonl", "line 2", "\"corpus\"", "<script>"][..],
        ),
        (
            r#"{"id":"q1","corpus":"../../etc","question":"Who?","outcomes":{"naive":{"correct":true,"cost":1}}}"#,
            &["in.jsonl", "line 2", "\"corpus\"", "../../etc"][..],
        ),
        (
            r#"{"id":"q1","corpus":"musique-dev","question":"Who?","outcomes":{"naive":{"correct":true,"cost":1}}}"#,
            &["in.jsonl", "line 2", "built-in"][..],
        ),
        (
            r#"{"id":"q1","corpus":"c","question":"  ","outcomes":{"naive":{"correct":true,"cost":1}}}"#,
            &["in.jsonl", "line 2", "\"question\"", "empty"][..],
        ),
        (
            r#"{"id":"q1","corpus":"c","question":"Who?","outcomes":{"naive":{"correct":true,"correct":false,"cost":1}}}"#,
            &["in.jsonl", "line 2", "duplicate key \"correct\""][..],
        ),
        (
            r#"{"id":"q1","id":"q2","corpus":"c","question":"Who?","outcomes":{"naive":{"correct":true,"cost":1}}}"#,
            &["in.jsonl", "line 2", "duplicate key \"id\""][..],
        ),
    ] {
        std::fs::write(&file, format!("{good}\n{record}\n")).unwrap();
        let out = run(&["import", "outcomes", s(&file), "--db", s(&db)]);
        check_fails(&out, 2, needles);
        assert!(!db.exists(), "{record}: nothing written");
    }
    std::fs::write(&file, format!("{good}\n")).unwrap();
    for (flag, needle) in [("--cost-unit", "--cost-unit"), ("--source", "--source")] {
        let out = run(&["import", "outcomes", s(&file), flag, "", "--db", s(&db)]);
        check_fails(&out, 2, &[needle, "empty"]);
        assert!(!db.exists());
    }
    // The same rule for corpus data: a duplicate key in queries.jsonl names file, line and key.
    let d = factless_corpus(dir.path());
    std::fs::write(
        d.join("queries.jsonl"),
        "{\"id\": \"q1\", \"question\": \"what?\", \"answers\": [\"x\"], \"type\": \"factual\", \"type\": \"summary\"}\n",
    )
    .unwrap();
    let corpus = format!("jsonl:{}", d.display());
    let out = run(&["bench", &corpus, "--dry-run", "--db", s(&db)]);
    check_fails(
        &out,
        2,
        &["queries.jsonl", "line 1", "duplicate key \"type\""],
    );
}

#[test]
fn a_shard_merged_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.sqlite");
    let file = dir.path().join("in.jsonl");
    std::fs::write(
        &file,
        r#"{"id":"q0","corpus":"fine","question":"Who?","outcomes":{"naive":{"correct":true,"cost":1}}}"#,
    )
    .unwrap();
    check_ok(&run(&["import", "outcomes", s(&file), "--db", s(&a)]));
    let copy = dir.path().join("copy.sqlite");
    std::fs::copy(&a, &copy).unwrap();
    let out_db = dir.path().join("all.sqlite");
    let same_by_other_path = dir.path().join(".").join("a.sqlite");
    for (inputs, needle) in [
        (vec![s(&a), s(&a)], "the same file"),
        (vec![s(&a), s(&same_by_other_path)], "the same file"),
        (vec![s(&a), s(&copy)], "byte-identical"),
    ] {
        let mut args = vec!["merge", s(&out_db)];
        args.extend(inputs);
        let out = run(&args);
        check_fails(&out, 2, &[needle, "a.sqlite", "given once"]);
        assert!(!out_db.exists(), "nothing written");
    }
}

/// A generic outcomes file of `n` questions over two corpora; `seed` varies the outcomes.
fn outcomes_file(path: &Path, n: usize, seed: usize) {
    let mut text = String::new();
    for i in 0..n {
        let corpus = if i.is_multiple_of(2) { "alpha" } else { "beta" };
        let naive = !(i + seed).is_multiple_of(3);
        let graph = (i + seed).is_multiple_of(2);
        text.push_str(&format!(
            "{{\"id\":\"q{i}\",\"corpus\":\"{corpus}\",\"question\":\"Question number {i} about item {}?\",\"type\":\"factual\",\"outcomes\":{{\"naive\":{{\"correct\":{naive},\"cost\":{}}},\"graph\":{{\"correct\":{graph},\"cost\":{}}}}}}}\n",
            i * 7 % 11,
            100 + i,
            900 + i
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn report(db: &Path, out: &Path) -> Output {
    run(&["report", "--db", s(db), "--out", s(out)])
}

fn manifest_files(out: &Path) -> BTreeSet<PathBuf> {
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report-manifest.json")).unwrap())
            .unwrap();
    m["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| PathBuf::from(f.as_str().unwrap()))
        .collect()
}

#[test]
fn a_report_folder_holds_one_report_and_foreign_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (db1, db2) = (dir.path().join("one.sqlite"), dir.path().join("two.sqlite"));
    let f1 = dir.path().join("one.jsonl");
    outcomes_file(&f1, 40, 0);
    check_ok(&run(&["import", "outcomes", s(&f1), "--db", s(&db1)]));
    // The first database has a router evaluation: its report has Table 3, Figure 5 and the
    // significance tests; the second has none.
    let eval = bin()
        .args(["route", "eval", "--features", "q", "--folds", "2"])
        .args(["--routers", "best-fixed,oracle,lr", "--db", s(&db1)])
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap();
    check_ok(&eval);
    let f2 = dir.path().join("two.jsonl");
    outcomes_file(&f2, 10, 1);
    check_ok(&run(&["import", "outcomes", s(&f2), "--db", s(&db2)]));

    let out = dir.path().join("rep");
    check_ok(&report(&db1, &out));
    let first = listing(&out);
    let stale: Vec<&PathBuf> = first
        .iter()
        .filter(|p| {
            let n = p.to_string_lossy();
            n.contains("table3") || n.contains("fig5") || n.contains("significance")
        })
        .collect();
    assert!(
        !stale.is_empty(),
        "the first report lacks Table 3: {first:?}"
    );
    check_ok(&report(&db2, &out));
    let second = listing(&out);
    let mut listed = manifest_files(&out);
    listed.insert("report-manifest.json".into());
    assert_eq!(second, listed, "the folder holds exactly the second report");
    for p in stale {
        assert!(
            !second.contains(p),
            "{} of the first report was left",
            p.display()
        );
    }
    let siblings: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("rep") && n != "rep")
        .collect();
    assert!(siblings.is_empty(), "staging left behind: {siblings:?}");

    // A file the report did not write: refused before any work, the folder untouched.
    std::fs::write(out.join("tables").join("my-notes.md"), "mine").unwrap();
    let before = listing(&out);
    let refused = report(&db1, &out);
    check_fails(&refused, 2, &["my-notes.md", "report-manifest.json"]);
    assert_eq!(listing(&out), before);
    // A folder of other files, with no manifest at all.
    let other = dir.path().join("photos");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("cat.jpg"), "meow").unwrap();
    check_fails(&report(&db1, &other), 2, &["cat.jpg"]);
    assert_eq!(listing(&other), BTreeSet::from([PathBuf::from("cat.jpg")]));

    // A failing external router is started once for the evaluation, not once per fold, whether
    // it exits with an error or hangs past its (small) timeout.
    for (script, needle) in [
        ("echo x >> \"$1\"; exit 1", "exit"),
        ("echo x >> \"$1\"; exec sleep 654.321", "timeout"),
    ] {
        let sh = dir.path().join("router.sh");
        std::fs::write(&sh, script).unwrap();
        let counter = dir.path().join("starts");
        let _ = std::fs::remove_file(&counter);
        let out = bin()
            .args(["route", "eval", "--features", "q", "--folds", "5"])
            .args(["--routers", "best-fixed", "--external-timeout", "0.5"])
            .arg("--external")
            .arg(format!("broken=sh {} {}", s(&sh), s(&counter)))
            .args(["--db", s(&db1)])
            .arg("--cache-dir")
            .arg(shared_cache())
            .output()
            .unwrap();
        let err = format!("{}{}", text(&out.stdout), text(&out.stderr));
        assert_eq!(
            out.status.code(),
            Some(1),
            "a failed router fails the evaluation: {err}"
        );
        assert!(err.contains("broken") && err.contains(needle), "{err}");
        let starts = std::fs::read_to_string(&counter).unwrap().lines().count();
        assert_eq!(starts, 1, "started {starts} times over 5 folds: {err}");
    }
}

/// The mock's plausible replies, with usage a quarter of the characters.
fn mock() -> MockServer {
    MockServer::start(|r| {
        let content = content_for(kind_of(r), r.last_content());
        let prompt: u64 = r.messages.iter().map(|(_, c)| c.len() as u64 / 4 + 1).sum();
        MockReply::with_usage(content.clone(), prompt, content.len() as u64 / 4 + 1)
    })
}

fn llm_bench(dir: &Path, base_url: &str, extra: &[&str]) -> Output {
    bin()
        .env("OPENAI_API_KEY", "sk-hostile-test")
        .args(["bench", "demo", "--paradigms", "naive"])
        .args(["--llm-base-url", base_url, "--llm-model", "mock-model"])
        .args(extra)
        .arg("--db")
        .arg(dir.join("r.sqlite"))
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap()
}

/// The number before `marker` in `text`.
fn number_before(text: &str, marker: &str) -> u64 {
    let head = text
        .split(marker)
        .next()
        .filter(|h| h.len() < text.len())
        .unwrap_or_else(|| panic!("no {marker:?} in {text}"));
    head.rsplit(|c: char| !c.is_ascii_digit())
        .find(|w| !w.is_empty())
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn a_token_budget_is_never_passed_whatever_the_concurrency() {
    let server = mock();
    // A budget smaller than any call: nothing is sent, nothing stored.
    let dir = tempfile::tempdir().unwrap();
    let out = llm_bench(dir.path(), &server.base_url(), &["--max-tokens", "1"]);
    check_ok(&out);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("stopped at the token budget"), "{stdout}");
    assert_eq!(server.chat_requests(), 0, "a call was sent past the budget");
    assert_eq!(
        query_db(&dir.path().join("r.sqlite"), "SELECT count(*) FROM results"),
        [0]
    );
    assert!(
        stdout.contains("cost 0 tokens counted with cl100k") && stdout.contains("not sent"),
        "{stdout}"
    );

    // A whole run's cost, counted as the budget counts it.
    let full = tempfile::tempdir().unwrap();
    let out = llm_bench(full.path(), &server.base_url(), &[]);
    check_ok(&out);
    let whole = number_before(&text(&out.stderr), " counted with cl100k");
    assert!(whole > 0);
    // A third of it, four calls at a time: the cap holds, both counts are shown.
    let budget = whole / 3;
    let part = tempfile::tempdir().unwrap();
    let out = llm_bench(
        part.path(),
        &server.base_url(),
        &["--max-tokens", &budget.to_string(), "--concurrency", "4"],
    );
    check_ok(&out);
    let stdout = text(&out.stdout);
    let counted = number_before(&stdout, " tokens counted with cl100k");
    assert!(
        counted <= budget,
        "counted {counted} > budget {budget}: {stdout}"
    );
    assert!(stdout.contains("the endpoint reported"), "{stdout}");
    let rows = query_db(
        &part.path().join("r.sqlite"),
        "SELECT count(*) FROM results",
    )[0];
    assert!(
        rows > 0 && rows < 20,
        "{rows} tuples under a third of the bill"
    );
    println!("whole run {whole} tokens; budget {budget}: {counted} counted, {rows} tuples");
}
