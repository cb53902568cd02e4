//! The README walked top to bottom, as a new user would: every ```sh block that runs offline on
//! the shared data is run in order, in one shell, in a fresh working folder (a fresh
//! `.ragrouter/`), with `cargo run --release --` standing for this build's binary; every command
//! must exit 0. Blocks that need an LLM server, a PostgreSQL host, a GPU or the test command itself
//! are listed in [`NOT_WALKED`] with why, and a README block that is neither walked nor listed
//! fails the test, so a new block is walked by default.
//!
//! It benches several corpora and takes a while on two cores, so it is `#[ignore]`d and run by
//! `just readme-walk` (`.ci/run` skips it by name to keep CI short).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Blocks not walked, by the start of their first line, with the reason.
const NOT_WALKED: &[(&str, &str)] = &[
    (
        "export OPENAI_BASE_URL=http://127.0.0.1:8000/v1",
        "needs an OpenAI-compatible LLM server (vLLM) with a Llama-3.1-8B model",
    ),
    (
        "scripts/local-llm.sh start",
        "builds and starts a llama.cpp server (tests/llm_real.rs runs that path)",
    ),
    (
        "ragrouter leaderboard --db offline.sqlite",
        "names the reader's own router program and stores (`just leaderboard` builds the board)",
    ),
    (
        "export RAGROUTER_DB=postgres://",
        "needs a PostgreSQL host (tests/postgres.rs runs that path)",
    ),
];

/// A README ```sh block: the line it starts on and its text.
struct Block {
    line: usize,
    text: String,
}

fn sh_blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut cur: Option<Block> = None;
    for (i, l) in readme.lines().enumerate() {
        match &mut cur {
            None if l.trim_end() == "```sh" => {
                cur = Some(Block {
                    line: i + 2,
                    text: String::new(),
                })
            }
            Some(_) if l.trim_end() == "```" => out.push(cur.take().unwrap()),
            Some(b) => {
                b.text.push_str(l);
                b.text.push('\n');
            }
            None => {}
        }
    }
    out
}

fn not_walked(b: &Block) -> Option<&'static str> {
    NOT_WALKED
        .iter()
        .find(|(start, _)| b.text.trim_start().starts_with(start))
        .map(|(_, why)| *why)
}

/// `cargo run --release -- ARGS` and `ragrouter ARGS` run this build's binary; `cargo test` (the
/// README's test command) is said and not walked; any other cargo command is an error.
const PRELUDE: &str = r#"set -euo pipefail
cargo() {
  if [ "$#" -ge 3 ] && [ "$1 $2 $3" = "run --release --" ]; then
    shift 3; "$RAGROUTER_BIN" "$@"
  elif [ "${1:-}" = test ]; then
    echo "readme-walk: not walked: the test command itself (cargo test $*)"
  else
    echo "readme-walk: unexpected cargo command: cargo $*" >&2; return 1
  fi
}
ragrouter() { "$RAGROUTER_BIN" "$@"; }
"#;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn link(from: &Path, to: &Path) {
    std::os::unix::fs::symlink(from, to).unwrap();
}

#[test]
fn not_walked_entries_name_real_blocks() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let blocks = sh_blocks(&readme);
    assert!(blocks.len() >= 8, "{} sh blocks", blocks.len());
    for (start, _) in NOT_WALKED {
        assert!(
            blocks
                .iter()
                .any(|b| b.text.trim_start().starts_with(start)),
            "NOT_WALKED names no README block starting {start:?}"
        );
    }
    // The Quick start is walked, and so is the imported-outcomes block.
    assert!(not_walked(&blocks[0]).is_none());
    assert!(blocks
        .iter()
        .any(|b| b.text.contains("import adaptive-rag") && not_walked(b).is_none()));
}

#[test]
#[ignore = "benches several corpora (tens of minutes on two cores): run by `just readme-walk`"]
fn readme_walks_top_to_bottom() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    // The README's relative paths: ../shared/... beside the working folder, examples/ and
    // scripts/ inside it; everything else (.ragrouter/, sets/, *.sqlite, target/) is fresh.
    let work = tmp.path().join("work");
    std::fs::create_dir(&work).unwrap();
    link(
        &repo().join("../shared").canonicalize().unwrap(),
        &tmp.path().join("shared"),
    );
    for d in ["examples", "scripts"] {
        link(&repo().join(d), &work.join(d));
    }
    let mut script = String::from(PRELUDE);
    let mut walked = Vec::new();
    for b in sh_blocks(&readme) {
        match not_walked(&b) {
            Some(why) => println!("README line {}: not walked: {why}", b.line),
            None => {
                script.push_str(&format!("echo '== README line {}'\n{}", b.line, b.text));
                walked.push(b.line);
            }
        }
    }
    let log = tmp.path().join("walk.log");
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env("RAGROUTER_BIN", env!("CARGO_BIN_EXE_ragrouter"))
        .env("RAGROUTER_LOG", "warn")
        .env_remove("RAGROUTER_DB")
        .env_remove("RAGROUTER_DATA_DIR")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_API_KEY")
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stdout = std::fs::read_to_string(&log).unwrap();
    let tail: String = {
        let lines: Vec<&str> = stdout.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    assert!(
        out.status.success(),
        "the walk stopped ({}); blocks walked from README lines {walked:?}\n--- stdout tail\n{tail}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    for line in &walked {
        assert!(
            stdout.contains(&format!("== README line {line}")),
            "block at line {line} did not run\n{tail}"
        );
    }
    println!("walked README blocks at lines {walked:?}\n{tail}");
}
