//! `bench`'s probe step on the demo corpus: every question gets its zero-token signals (0 cost
//! offline, milliseconds recorded), a rerun computes nothing again, a deleted probe comes back
//! alone, a bad `--probes` exits 2, and `route eval --features q+p` reads the signals.

mod common;

use common::*;

use std::path::Path;

const SIGNALS: &str = "SELECT query_id || '|' || name || '|' || value || '|' || present || '|' ||
    probe || '|' || paradigms || '|' || cost || '|' || cost_ms FROM signals ORDER BY query_id, name";

/// The 16 zero-token signals of one question.
const PER_QUESTION: i64 = 5 + 2 + 3 + 6;

fn bench(db: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec!["bench", "demo", "--cache-dir"];
    let cache = shared_cache();
    args.push(cache.to_str().unwrap());
    args.extend_from_slice(extra);
    run_on(db, &args)
}

fn exec(db: &Path, sql: &str) {
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

fn values(db: &Path, name: &str) -> Vec<f64> {
    try_fetch(
        db,
        &format!(
            "SELECT value FROM signals WHERE name = '{name}' AND present = 1 ORDER BY query_id"
        ),
    )
    .unwrap()
}

#[test]
fn probes_are_recorded_once_and_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let first = bench(&db, &[]);
    check_ok(&first);
    let err = text(&first.stderr);
    assert!(
        err.contains("probes (dense, bm25, entities, ppr):"),
        "{err}"
    );
    let questions = query_db(&db, "SELECT COUNT(DISTINCT query_id) FROM results")[0];
    assert_eq!(questions, 20);
    assert_eq!(
        query_db(&db, "SELECT COUNT(*) FROM signals"),
        [questions * PER_QUESTION]
    );
    // Offline a probe gives no reader any context: cost 0; its time is recorded.
    assert_eq!(
        query_db(
            &db,
            "SELECT COUNT(*) FROM signals WHERE cost != 0 OR cost_ms < 0 OR paradigms != ''"
        ),
        [0]
    );
    assert!(query_db(&db, "SELECT COUNT(*) FROM signals WHERE cost_ms > 0")[0] > 0);
    // Relations every question's values must satisfy.
    let (top1, mean5, mean10) = (
        values(&db, "dense.top1"),
        values(&db, "dense.mean5"),
        values(&db, "dense.mean10"),
    );
    assert_eq!(top1.len(), 20);
    for i in 0..20 {
        assert!(top1[i] >= mean5[i] - 1e-9 && mean5[i] >= mean10[i] - 1e-9);
    }
    assert!(values(&db, "bm25.overlap10")
        .iter()
        .all(|v| (0.0..=1.0).contains(v)));
    assert!(values(&db, "bm25.top1").iter().any(|&v| v > 0.0));
    // A hit rate is present exactly where a mention was found, and equals linked / mentions.
    assert_eq!(
        query_db(
            &db,
            "SELECT COUNT(*) FROM signals m JOIN signals h ON h.query_id = m.query_id
             AND h.name = 'entity.hit_rate' JOIN signals l ON l.query_id = m.query_id
             AND l.name = 'entity.linked' WHERE m.name = 'entity.mentions'
             AND NOT ((m.value = 0 AND h.present = 0)
                 OR (m.value > 0 AND h.present = 1 AND abs(h.value - l.value / m.value) < 1e-12))"
        ),
        [0]
    );

    // The same command again: nothing probed, every row (its milliseconds included) unchanged.
    let before = query_strings(&db, SIGNALS);
    let again = bench(&db, &[]);
    check_ok(&again);
    assert!(
        !text(&again.stderr).contains("probes ("),
        "{}",
        text(&again.stderr)
    );
    assert_eq!(query_strings(&db, SIGNALS), before);

    // One question's BM25 probe lost: only it is computed again.
    let q = query_strings(&db, "SELECT MIN(query_id) FROM signals")[0].clone();
    exec(
        &db,
        &format!("DELETE FROM signals WHERE query_id = '{q}' AND probe = 'bm25'"),
    );
    let third = bench(&db, &[]);
    check_ok(&third);
    assert!(
        text(&third.stderr)
            .contains("probes (dense, bm25, entities, ppr): 2 signals for 1 questions"),
        "{}",
        text(&third.stderr)
    );
    let after = query_strings(&db, SIGNALS);
    assert_eq!(after.len(), before.len());
    let unchanged = |rows: &[String]| -> Vec<String> {
        rows.iter()
            .filter(|r| !r.starts_with(&format!("{q}|bm25.")))
            .cloned()
            .collect()
    };
    assert_eq!(unchanged(&after), unchanged(&before));
    // The recomputed values are the same numbers (only the milliseconds may differ).
    let value_of = |rows: &[String]| -> Vec<String> {
        rows.iter()
            .filter(|r| r.starts_with(&format!("{q}|bm25.")))
            .map(|r| r.split('|').take(6).collect::<Vec<_>>().join("|"))
            .collect()
    };
    assert_eq!(value_of(&after), value_of(&before));

    // The router features read them.
    let eval = run_on(
        &db,
        &[
            "route",
            "eval",
            "--features",
            "q+p",
            "--routers",
            "util-lr",
            "--folds",
            "2",
        ],
    );
    check_ok(&eval);
    assert!(
        text(&eval.stdout).contains("dense.top1"),
        "{}",
        text(&eval.stdout)
    );
}

#[test]
fn an_unknown_probe_is_refused_before_any_work() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let out = bench(&db, &["--probes", "dense,telepathy"]);
    check_fails(&out, 2, &["--probes \"telepathy\"", "unknown probe"]);
    assert!(!db.exists());
    // `none` turns the step off.
    check_ok(&bench(&db, &["--probes", "none", "--paradigms", "naive"]));
    assert_eq!(query_db(&db, "SELECT COUNT(*) FROM signals"), [0]);
}
