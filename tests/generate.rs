//! `ragrouter generate` (paper Algorithm 2): offline templates that `bench` runs, and each
//! filter of verify-then-filter dropping what it should against a scripted LLM.

mod common;

use common::*;

use std::path::Path;
use std::process::{Command, Output};

use llm::mock::{ChatRequestSeen, MockReply, MockServer};

fn ragrouter(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env("RAGROUTER_LOG", "warn")
        .env("OPENAI_API_KEY", "sk-generate-test")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args);
    c
}

fn generate(dir: &Path, out: &str, extra: &[&str]) -> Output {
    let db = dir.join("r.sqlite");
    let out_dir = dir.join(out);
    ragrouter(&["generate", "demo", "--out", out_dir.to_str().unwrap()])
        .args(["--db", db.to_str().unwrap()])
        .args(extra)
        .output()
        .unwrap()
}

fn construction(dir: &Path, out: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(out).join("construction.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn offline_templates_write_a_set_that_bench_runs_and_the_same_seed_gives_the_same_set() {
    let dir = tempfile::tempdir().unwrap();
    let out = generate(dir.path(), "set", &["--per-type", "5"]);
    check_ok(&out);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("construction statistics (offline-templates/1)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("n/a: shortcut, closed-book-leakage need an LLM"),
        "{stdout}"
    );
    let stats = construction(dir.path(), "set");
    for t in ["factual", "reasoning", "summary"] {
        assert_eq!(stats["per_type"][t]["kept"], 5, "{t}: {stats}");
    }
    let queries = std::fs::read_to_string(dir.path().join("set/queries.jsonl")).unwrap();
    assert_eq!(queries.lines().count(), 15);
    for line in queries.lines() {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        let filters = &q["provenance"]["filters"];
        assert_eq!(filters["grounding"], "passed");
        assert_eq!(filters["closed-book-leakage"], "not-applied");
        assert!(!q["evidence"].as_array().unwrap().is_empty());
        // The answer is not in the question (lexical leakage), and it is in the sources.
        let (question, answer) = (
            q["question"].as_str().unwrap(),
            q["answers"][0].as_str().unwrap(),
        );
        if q["type"] != "summary" {
            assert!(!question.contains(answer), "{question} / {answer}");
        }
    }
    // The same seed gives the same set; the set runs as a corpus of its own name.
    check_ok(&generate(dir.path(), "again", &["--per-type", "5"]));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("again/queries.jsonl")).unwrap(),
        queries
    );
    let set = format!("jsonl:{}", dir.path().join("set").display());
    let out = ragrouter(&["bench", &set, "--paradigms", "naive,graph"])
        .arg("--db")
        .arg(dir.path().join("r.sqlite"))
        .arg("--cache-dir")
        .arg(shared_cache())
        .output()
        .unwrap();
    check_ok(&out);
    assert!(
        text(&out.stdout).contains("on demo-generated: 30 tuples"),
        "{}",
        text(&out.stdout)
    );
    // An existing --out is refused before any work.
    let out = generate(dir.path(), "set", &["--per-type", "1"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("already exists"));
}

/// What the scripted LLM does, per scenario.
#[derive(Clone, Copy)]
struct Script {
    /// Generation replies put the answer inside the question.
    leak_answer: bool,
    /// Every generation reply is the same question.
    same_question: bool,
    /// The reader answers right given this many passages or more (0: also closed book);
    /// `usize::MAX`: never.
    right_from: usize,
}

const QUESTIONS: [&str; 8] = [
    "Who designed the stone bridge over the river?",
    "In which year did the great flood destroy the old crossing?",
    "How many inhabitants does the market town have today?",
    "Which university trained the surveyor as an engineer?",
    "What is held every October in the old salt market?",
    "Which railway station lies north of the valley?",
    "Where was the astronomer teaching before his death?",
    "What replaced the wooden footbridge in the nineteenth century?",
];

fn start(script: Script) -> MockServer {
    MockServer::start(move |r: &ChatRequestSeen| {
        let system = r.messages.first().map_or("", |(_, c)| c.as_str());
        let user = r.last_content();
        let content = if system.starts_with("You write questions for a retrieval benchmark") {
            let q = if script.same_question {
                QUESTIONS[0].to_owned()
            } else {
                QUESTIONS[r.index % QUESTIONS.len()].to_owned()
            };
            let q = if script.leak_answer {
                format!("{q} Is it Bluefin?")
            } else {
                q
            };
            serde_json::json!({"question": q, "answer": "Bluefin"}).to_string()
        } else if system.starts_with("You answer questions from") {
            let passages = if system.starts_with("You answer questions from the numbered passages")
            {
                user.matches("\n\n[").count() + 1
            } else {
                0
            };
            if passages >= script.right_from {
                "RIGHT".into()
            } else {
                "WRONG".into()
            }
        } else if system.starts_with("You grade answers") {
            let response = after(user, "\nResponse: ");
            if response.starts_with("RIGHT") {
                r#"{"label": "Correct"}"#.into()
            } else {
                r#"{"label": "Incorrect"}"#.into()
            }
        } else {
            content_for(kind_of(r), user)
        };
        MockReply::with_usage(content.clone(), 50, content.len() as u64 / 4 + 1)
    })
}

/// `generate` of one type against the scripted LLM; the construction statistics of that type.
fn scenario(script: Script, qtype: &str) -> serde_json::Value {
    scenario_with(script, qtype, &[])["per_type"][qtype].clone()
}

/// The whole construction statistics, with `extra` arguments.
fn scenario_with(script: Script, qtype: &str, extra: &[&str]) -> serde_json::Value {
    let mock = start(script);
    let dir = tempfile::tempdir().unwrap();
    let out = generate(
        dir.path(),
        "set",
        &[
            "--types",
            qtype,
            "--per-type",
            "3",
            "--max-candidates",
            "4",
            "--llm-base-url",
            &mock.base_url(),
            "--llm-model",
            "mock-model",
        ]
        .iter()
        .chain(extra)
        .copied()
        .collect::<Vec<_>>(),
    );
    if dir.path().join("set").exists() {
        check_ok(&out);
        return construction(dir.path(), "set");
    }
    // A set that kept no question is refused and not written: the printed statistics say why.
    check_fails(&out, 2, &["kept no question"]);
    let stdout = text(&out.stdout);
    serde_json::json!({
        "per_type": {qtype: stats_from_table(&stdout, qtype)},
        "stopped_at_budget": stdout.contains("stopped at --max-tokens"),
    })
}

/// One type's row of the printed construction statistics, in construction.json's shape:
/// `generated` (candidates), `removed` (filters that removed any) and `kept`.
fn stats_from_table(stdout: &str, qtype: &str) -> serde_json::Value {
    let row: Vec<&str> = stdout
        .lines()
        .skip_while(|l| !l.starts_with("construction statistics"))
        .find(|l| l.split_whitespace().next() == Some(qtype))
        .unwrap_or_else(|| panic!("no {qtype} row in\n{stdout}"))
        .split_whitespace()
        .collect();
    // type, drawn, no source, candidates, one column per filter, kept, pass %.
    let filters = [
        "lexical-leakage",
        "duplicate",
        "grounding",
        "shortcut",
        "closed-book-leakage",
    ];
    let n = |i: usize| row[i].parse::<u64>().ok();
    let removed: serde_json::Map<String, serde_json::Value> = filters
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            n(4 + i)
                .filter(|&v| v > 0)
                .map(|v| (f.to_string(), v.into()))
        })
        .collect();
    serde_json::json!({"generated": n(3), "removed": removed, "kept": n(4 + filters.len())})
}

const HONEST: Script = Script {
    leak_answer: false,
    same_question: false,
    right_from: 1,
};

#[test]
fn lexical_leakage_drops_a_question_that_holds_its_answer() {
    let st = scenario(
        Script {
            leak_answer: true,
            ..HONEST
        },
        "factual",
    );
    assert_eq!(st["removed"]["lexical-leakage"], 4, "{st}");
    assert_eq!(st["kept"], 0);
}

#[test]
fn duplicates_are_dropped_by_question_similarity() {
    let st = scenario(
        Script {
            same_question: true,
            ..HONEST
        },
        "factual",
    );
    assert_eq!(st["kept"], 1, "{st}");
    assert_eq!(st["removed"]["duplicate"], 3, "{st}");
}

#[test]
fn grounding_drops_what_the_sources_do_not_answer() {
    let st = scenario(
        Script {
            right_from: usize::MAX,
            ..HONEST
        },
        "factual",
    );
    assert_eq!(st["removed"]["grounding"], 4, "{st}");
    assert_eq!(st["kept"], 0);
}

#[test]
fn shortcut_drops_reasoning_that_one_document_answers() {
    // Right with one passage: a shortcut. Right only with both: kept.
    let st = scenario(HONEST, "reasoning");
    assert!(st["generated"].as_u64().unwrap() > 0, "{st}");
    assert_eq!(st["removed"]["shortcut"], st["generated"], "{st}");
    let st = scenario(
        Script {
            right_from: 2,
            ..HONEST
        },
        "reasoning",
    );
    assert_eq!(st["removed"].get("shortcut"), None, "{st}");
    assert!(st["kept"].as_u64().unwrap() > 0, "{st}");
}

#[test]
fn closed_book_leakage_drops_what_the_model_knows_without_context() {
    let st = scenario(
        Script {
            right_from: 0,
            ..HONEST
        },
        "factual",
    );
    assert_eq!(st["removed"]["closed-book-leakage"], 4, "{st}");
    // And an honest script keeps them.
    let st = scenario(HONEST, "factual");
    assert_eq!(st["kept"], 3, "{st}");
}

#[test]
fn the_token_budget_stops_generation_and_says_so() {
    let all = scenario_with(HONEST, "factual", &[]);
    let spent = all["llm_tokens"].as_u64().unwrap();
    assert!(spent > 0 && all["stopped_at_budget"] == false, "{all}");
    let cut = scenario_with(
        HONEST,
        "factual",
        &["--max-tokens", &(spent / 2).to_string()],
    );
    assert_eq!(cut["stopped_at_budget"], true, "{cut}");
    assert!(
        cut["per_type"]["factual"]["kept"].as_u64().unwrap() < 3,
        "{cut}"
    );
}
