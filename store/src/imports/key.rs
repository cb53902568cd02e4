//! An import's identity: its stored settings without any path, the run key over its content,
//! and schema version 16's data step, which gives imports stored before it that key and drops
//! the folders of the paths their tuples' traces kept.

use bench_core::config::hash_parts;
use serde_json::Value;
use sqlx::{AnyConnection, Row};

/// Keys under which imports before schema version 16 stored the paths their files were read
/// from (`import adarague`: `dir`, `queries`; `adaptive-rag`: `queries`, `labels`; `outcomes`:
/// `file`). A path is no part of an import: the same data read by a link, through `..`, by an
/// absolute path or from a copy is the same import.
const PATH_KEYS: [&str; 4] = ["dir", "queries", "labels", "file"];

/// The settings as stored (`runs.config_json`) and their hash (also over the cost unit):
/// `config` without any path.
pub(crate) fn settings(config: &Value, cost_unit: &str) -> (String, String) {
    let mut config = config.clone();
    if let Some(o) = config.as_object_mut() {
        for k in PATH_KEYS {
            o.remove(k);
        }
    }
    let json = config.to_string();
    let hash = hash_parts([json.as_bytes(), cost_unit.as_bytes()]);
    (json, hash)
}

/// The run key of one corpus of an import: its content hash (records, source, split), the
/// mode, the split and the settings' hash.
pub(crate) fn run_key(
    corpus: &str,
    content_hash: &str,
    mode: &str,
    split: Option<&str>,
    config_hash: &str,
) -> String {
    hash_parts([
        b"import/2".as_slice(),
        corpus.as_bytes(),
        content_hash.as_bytes(),
        mode.as_bytes(),
        split.unwrap_or("").as_bytes(),
        config_hash.as_bytes(),
    ])
}

/// Schema version 16's data step, in the migration's transaction: every imported run gets the
/// settings (paths dropped), settings hash and run key a new import of the same data computes,
/// so importing it again adds nothing; its tuples' settings hash follows. Returns the runs
/// rewritten. A run whose settings are not JSON is left as it is.
pub(crate) async fn rekey_imports(conn: &mut AnyConnection) -> Result<u64, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT id, corpus, corpus_hash, mode, split, config_json, cost_unit FROM runs
         WHERE reader = 'imported' ORDER BY id",
    )
    .fetch_all(&mut *conn)
    .await?;
    let mut done = 0;
    for r in rows {
        let id: i64 = r.try_get(0)?;
        let (corpus, content_hash, mode): (String, String, String) =
            (r.try_get(1)?, r.try_get(2)?, r.try_get(3)?);
        let split: Option<String> = r.try_get(4)?;
        let config: String = r.try_get(5)?;
        let cost_unit: Option<String> = r.try_get(6)?;
        let Ok(config) = serde_json::from_str::<Value>(&config) else {
            continue;
        };
        let (json, hash) = settings(&config, cost_unit.as_deref().unwrap_or(""));
        let key = run_key(&corpus, &content_hash, &mode, split.as_deref(), &hash);
        sqlx::query(
            "UPDATE runs SET run_key = $1, config_json = $2, config_hash = $3 WHERE id = $4",
        )
        .bind(&key)
        .bind(&json)
        .bind(&hash)
        .bind(id)
        .execute(&mut *conn)
        .await?;
        sqlx::query("UPDATE results SET config_hash = $1 WHERE run_id = $2")
            .bind(&hash)
            .bind(id)
            .execute(&mut *conn)
            .await?;
        drop_trace_paths(conn, id).await?;
        done += 1;
    }
    Ok(done)
}

/// Imports before version 16 kept where a tuple came from as the path typed
/// (`/home/u/imp/good.jsonl:3`, `../q.jsonl record 7`) in its trace; this keeps the file's name.
async fn drop_trace_paths(conn: &mut AnyConnection, run: i64) -> Result<(), sqlx::Error> {
    let rows = sqlx::query(
        "SELECT query_id, paradigm, trace_json FROM results WHERE run_id = $1 ORDER BY query_id, paradigm",
    )
    .bind(run)
    .fetch_all(&mut *conn)
    .await?;
    for r in rows {
        let (query, paradigm): (String, String) = (r.try_get(0)?, r.try_get(1)?);
        let Some(trace) = r.try_get::<Option<String>, _>(2)? else {
            continue;
        };
        let Ok(mut trace) = serde_json::from_str::<Value>(&trace) else {
            continue;
        };
        let Some(origin) = trace.pointer_mut("/imported/origin") else {
            continue;
        };
        let Some(name) = origin.as_str().and_then(origin_without_folders) else {
            continue;
        };
        *origin = Value::from(name);
        sqlx::query(
            "UPDATE results SET trace_json = $1 WHERE run_id = $2 AND query_id = $3 AND paradigm = $4",
        )
        .bind(trace.to_string())
        .bind(run)
        .bind(&query)
        .bind(&paradigm)
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
}

/// `origin` with its file's folders dropped, when it is an old `PATH record N` or `PATH:LINE`
/// origin holding a folder; `None` when there is nothing to change.
fn origin_without_folders(origin: &str) -> Option<String> {
    let at = match origin.rfind(" record ") {
        Some(i) => i,
        None => {
            let i = origin.rfind(':')?;
            let line = &origin[i + 1..];
            if line.is_empty() || !line.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            i
        }
    };
    let (path, tail) = origin.split_at(at);
    let name = std::path::Path::new(path).file_name()?.to_string_lossy();
    (name != path).then(|| format!("{name}{tail}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_drop_paths_and_keep_the_rest() {
        let new = serde_json::json!({"format": "outcomes-jsonl", "mapping": {"arms": {}}});
        let mut old = new.clone();
        old["file"] = Value::from("/home/u/imp/good.jsonl");
        assert_eq!(settings(&old, "steps"), settings(&new, "steps"));
        assert!(!settings(&old, "steps").0.contains("good.jsonl"));
        assert_ne!(settings(&new, "steps").1, settings(&new, "tokens").1);
        let o = origin_without_folders;
        assert_eq!(
            o("/home/u/imp/good.jsonl:3").as_deref(),
            Some("good.jsonl:3")
        );
        assert_eq!(
            o("../q.jsonl record 7").as_deref(),
            Some("q.jsonl record 7")
        );
        assert_eq!(o("good.jsonl:3"), None);
        assert_eq!(o("Adaptive_Rag/predictions/t squad 12"), None);
        let k = |split| run_key("nq", "h", "imported:s", split, "c");
        assert_ne!(k(None), k(Some("test")));
        assert_eq!(k(Some("")), k(None));
    }
}
