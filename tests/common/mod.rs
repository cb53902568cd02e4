//! Helpers shared by the binary's integration tests: process output, the shared vector cache,
//! read-only queries on a results database, and the mock LLMs' request kinds and replies.

#![allow(dead_code)] // each test binary uses its own subset

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use llm::mock::ChatRequestSeen;
use sqlx::Sqlite;

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A vector cache shared by the tests of a binary: content-addressed and written atomically,
/// so sharing it only saves re-embedding the same corpus.
pub fn shared_cache() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("vector-cache")
}

/// The scalars a query returns, read with the SQLite engine the store itself uses.
pub fn try_fetch<T>(db: &Path, sql: &str) -> Result<Vec<T>, sqlx::Error>
where
    T: for<'r> sqlx::Decode<'r, Sqlite> + sqlx::Type<Sqlite> + Send + Unpin,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::sqlite::SqliteConnectOptions;
        use sqlx::ConnectOptions;
        let mut conn = SqliteConnectOptions::new()
            .filename(db)
            .read_only(true)
            .connect()
            .await?;
        sqlx::query_scalar(sql).fetch_all(&mut conn).await
    })
}

pub fn try_query_db(db: &Path, sql: &str) -> Result<Vec<i64>, sqlx::Error> {
    try_fetch(db, sql)
}

pub fn query_db(db: &Path, sql: &str) -> Vec<i64> {
    try_fetch(db, sql).unwrap()
}

pub fn query_strings(db: &Path, sql: &str) -> Vec<String> {
    try_fetch(db, sql).unwrap()
}

/// Runs statements on a results database with the SQLite engine the store uses (a test that
/// makes a store as an older build, or a user, left it).
pub fn exec_db(db: &Path, sql: &str) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::sqlite::SqliteConnectOptions;
        use sqlx::{ConnectOptions, Executor};
        let mut conn = SqliteConnectOptions::new()
            .filename(db)
            .connect()
            .await
            .unwrap();
        conn.execute(sql).await.unwrap();
    });
}

/// The command failed with exit `code`, and its stderr names every needle.
pub fn check_fails(out: &Output, code: i32, needles: &[&str]) {
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    for n in needles {
        assert!(err.contains(n), "stderr lacks {n:?}:\n{err}");
    }
}

pub fn check_ok(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Capitalised words of a text, in order, deduplicated (what the mock LLMs take for entities).
pub fn capitalised(text: &str) -> Vec<String> {
    let mut seen = HashSet::new();
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() > 2 && w.chars().next().is_some_and(char::is_uppercase))
        .filter(|w| seen.insert(w.to_string()))
        .map(str::to_owned)
        .collect()
}

/// The text after the first `marker`, or all of it.
pub fn after<'a>(text: &'a str, marker: &str) -> &'a str {
    text.split_once(marker).map_or(text, |(_, t)| t)
}

/// The kinds of request the bench sends, told apart by their system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Generation,
    Direct,
    Evaluation,
    Judge,
    Triplets,
    Entities,
}

pub fn kind_of(r: &ChatRequestSeen) -> Kind {
    let system = r.messages.first().map_or("", |(_, c)| c.as_str());
    let user = r.last_content();
    if system.starts_with("You answer questions from the numbered passages") {
        Kind::Generation
    } else if system.starts_with("You answer questions from your own knowledge") {
        Kind::Direct
    } else if system.starts_with("You check whether an answer") {
        Kind::Evaluation
    } else if system.starts_with("You grade answers") {
        Kind::Judge
    } else if system.starts_with("You turn text into knowledge-graph triplets") {
        if user.starts_with("List the entities") {
            Kind::Entities
        } else {
            Kind::Triplets
        }
    } else {
        panic!("unrecognised request: {system:?}")
    }
}

/// The plausible reply of each kind.
pub fn content_for(kind: Kind, user: &str) -> String {
    match kind {
        Kind::Generation => format!(
            "mock answer from {} passages",
            user.matches("\n\n[").count() + 1
        ),
        Kind::Direct => "mock answer without passages".into(),
        Kind::Evaluation => {
            // Without passages the answer is not sufficient: ask for one retrieval round.
            if user.starts_with("Passages:\nQuestion:") {
                let q = after(user, "Question: ").lines().next().unwrap_or("");
                serde_json::json!({"sufficient": false, "reason": "no evidence yet", "sub_question": format!("Who is named in: {q}")}).to_string()
            } else {
                r#"{"sufficient": true, "reason": "the passages answer it", "sub_question": null}"#
                    .into()
            }
        }
        Kind::Judge => {
            let response = after(user, "\nResponse: ");
            if response.starts_with("mock answer") {
                r#"{"label": "Correct"}"#.into()
            } else {
                r#"{"label": "Incorrect"}"#.into()
            }
        }
        Kind::Triplets => {
            let words = capitalised(after(user, "\nText:\n"));
            let triplets: Vec<[&str; 3]> = words
                .windows(2)
                .take(6)
                .map(|w| [w[0].as_str(), "related to", w[1].as_str()])
                .collect();
            serde_json::to_string(&triplets).unwrap()
        }
        Kind::Entities => {
            serde_json::to_string(&capitalised(after(user, "\nQuestion:\n"))).unwrap()
        }
    }
}

/// The test PostgreSQL server (`RAGROUTER_TEST_PG`, a URL whose role may create databases).
/// The tests that call this are `#[ignore]`d (so `cargo test` counts them as ignored where no
/// server runs); run with `--include-ignored`, as `.ci/run` does after starting one, a missing
/// server fails them.
pub fn test_pg() -> String {
    match std::env::var("RAGROUTER_TEST_PG") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!(
            "this test needs a PostgreSQL server: set RAGROUTER_TEST_PG (scripts/pg-test.sh start prints it)"
        ),
    }
}

/// A new, empty database `name` on the test server (dropped first if a run before left one);
/// returns its URL.
pub fn fresh_pg(admin: &str, name: &str) -> String {
    pg_block_on(admin, |mut conn| async move {
        use sqlx::Executor;
        conn.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str())
            .await?;
        conn.execute(format!("CREATE DATABASE {name}").as_str())
            .await?;
        Ok(())
    })
    .unwrap();
    let (base, _) = admin.rsplit_once('/').expect("a URL with a database");
    format!("{base}/{name}")
}

/// The scalars a query returns on a PostgreSQL database.
pub fn pg_fetch<T>(url: &str, sql: &str) -> Vec<T>
where
    T: for<'r> sqlx::Decode<'r, sqlx::Postgres>
        + sqlx::Type<sqlx::Postgres>
        + Send
        + Unpin
        + 'static,
{
    let sql = sql.to_owned();
    pg_block_on(url, |mut conn| async move {
        sqlx::query_scalar(&sql).fetch_all(&mut conn).await
    })
    .unwrap()
}

fn pg_block_on<T, F, Fut>(url: &str, f: F) -> Result<T, sqlx::Error>
where
    F: FnOnce(sqlx::PgConnection) -> Fut,
    Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use sqlx::Connection;
        let conn = sqlx::PgConnection::connect(url).await?;
        f(conn).await
    })
}

/// Runs one statement on a PostgreSQL database.
pub fn pg_exec(url: &str, sql: &str) {
    let sql = sql.to_owned();
    pg_block_on(url, |mut conn| async move {
        use sqlx::Executor;
        conn.execute(sql.as_str()).await.map(|_| ())
    })
    .unwrap()
}

/// The binary with the environment that could steer it cleared (data folder, database, LLM
/// endpoint, injected delays), logging at warn, run from the repository root.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ragrouter"));
    c.env_remove("RAGROUTER_DATA_DIR")
        .env_remove("RAGROUTER_DB")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("RAGROUTER_FAULT_DELAY_MS")
        .env("RAGROUTER_LOG", "warn")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// `bin()` with `args`, waited for.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

/// A path as the `&str` an argument list takes.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `bin()` with `args` on the database `db`; `route` commands share the tests' vector cache.
pub fn run_on(db: &Path, args: &[&str]) -> Output {
    let mut c = bin();
    c.args(args);
    if args[0] == "route" {
        c.arg("--cache-dir").arg(shared_cache());
    }
    c.arg("--db").arg(db).output().unwrap()
}

/// LLM calls sent, over every role, from `bench`'s `llm calls: answer N cached, M sent; ...`
/// line on stderr (printed, so a failing test shows it).
pub fn llm_calls_sent(stderr: &str) -> u64 {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("llm calls:"))
        .unwrap_or_else(|| panic!("no `llm calls` line: {stderr}"));
    eprintln!("{line}");
    line.split(';')
        .map(|part| {
            let n = part
                .trim()
                .trim_end_matches(" sent")
                .rsplit(' ')
                .next()
                .unwrap();
            n.parse::<u64>().unwrap_or_else(|e| panic!("{e}: {line}"))
        })
        .sum()
}
