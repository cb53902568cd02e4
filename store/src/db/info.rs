//! `ragrouter db info`: whether a file is a results database of ours, its schema version and
//! what it holds, read without writing a byte or creating a file beside it.

use std::path::Path;

use sqlx::Connection;

use super::open::{self, printable, side_file, Found, APPLICATION_ID};
use super::schema::SCHEMA_VERSION;
use crate::error::{Result, StoreError};

/// Whether a file is ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ownership {
    /// No file, an empty file, or an SQLite file holding nothing: `bench` would set it up.
    New,
    /// A results database; `marked` when it carries the application id (a file written before
    /// the marker gets it on its next write).
    Ours {
        /// Whether the file carries the application id (a file written before it does not).
        marked: bool,
    },
    /// Refused by every command, with the reason.
    NotOurs(String),
}

/// What `db info` prints.
#[derive(Debug, Clone)]
pub struct DbInfo {
    /// The path described.
    pub path: String,
    /// Whether the file is a results database of ours.
    pub ownership: Ownership,
    /// False when there is no file or it is empty.
    pub exists: bool,
    /// Whether the file is in WAL mode.
    pub wal: bool,
    /// `PRAGMA application_id`.
    pub application_id: i64,
    /// `PRAGMA user_version`: the migrations that ran.
    pub schema_version: i64,
    /// Every table (SQLite's own left out) with its number of rows.
    pub tables: Vec<(String, i64)>,
    /// Views, triggers and indexes (SQLite's automatic indexes left out), as "view v".
    pub others: Vec<String>,
    /// Of ours: (runs, finished runs).
    pub runs: Option<(i64, i64)>,
    /// The length of a `-wal` beside a WAL-mode file without its `-shm`: its writes are not
    /// counted (reading them would create the `-shm`).
    pub unmerged_wal: Option<u64>,
}

/// Describes the file at `path` without changing it. A directory, a FIFO, a file that is
/// not SQLite or is truncated or corrupt is bad input.
pub(crate) async fn describe(path: &Path) -> Result<DbInfo> {
    let shown = path.display().to_string();
    let mut info = DbInfo {
        path: shown.clone(),
        ownership: Ownership::New,
        exists: false,
        wal: false,
        application_id: 0,
        schema_version: 0,
        tables: Vec::new(),
        others: Vec::new(),
        runs: None,
        unmerged_wal: None,
    };
    let Some(v) = open::view(path, open::LOOK_WAIT, false).await? else {
        return Ok(info);
    };
    if v.header.wal && !side_file(path, "-shm").exists() {
        info.unmerged_wal = std::fs::metadata(side_file(path, "-wal"))
            .ok()
            .map(|m| m.len())
            .filter(|&n| n > 0);
    }
    info.exists = true;
    info.wal = v.header.wal;
    info.application_id = v.application_id;
    info.schema_version = v.version;
    let found = open::classify(
        &shown,
        v.application_id,
        v.version,
        &v.objects,
        open::expected().await?,
    );
    info.ownership = match found {
        Ok(Found::New) => Ownership::New,
        Ok(Found::Ours(_)) => Ownership::Ours {
            marked: v.application_id == i64::from(APPLICATION_ID),
        },
        Err(StoreError::Incompatible(why)) => Ownership::NotOurs(why),
        Err(e) => return Err(e),
    };
    let mut conn = open::read_only(path, &shown, v.header, open::LOOK_WAIT).await?;
    let counted = async {
        for (kind, name) in &v.objects {
            if name.starts_with("sqlite_") {
                continue;
            }
            if kind == "table" {
                let quoted = name.replace('"', "\"\"");
                let n: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM \"{quoted}\""))
                    .fetch_one(&mut conn)
                    .await
                    .map_err(open::read_err(&shown))?;
                info.tables.push((name.clone(), n));
            } else {
                info.others.push(format!("{kind} {}", printable(name)));
            }
        }
        if matches!(info.ownership, Ownership::Ours { .. }) {
            let finished: i64 =
                sqlx::query_scalar("SELECT count(*) FROM runs WHERE finished_at IS NOT NULL")
                    .fetch_one(&mut conn)
                    .await
                    .map_err(open::read_err(&shown))?;
            let all = info
                .tables
                .iter()
                .find(|(t, _)| t == "runs")
                .map_or(0, |t| t.1);
            info.runs = Some((all, finished));
        }
        Ok::<_, StoreError>(())
    }
    .await;
    let _ = conn.close().await;
    counted?;
    Ok(info)
}

impl std::fmt::Display for DbInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "file: {}", self.path)?;
        if !self.exists {
            return writeln!(
                f,
                "ragrouter results database: not yet (no file, or an empty one: `ragrouter bench` creates the schema here)"
            );
        }
        match &self.ownership {
            Ownership::New => writeln!(
                f,
                "ragrouter results database: not yet (an empty SQLite database: `ragrouter bench` creates the schema here)"
            )?,
            Ownership::Ours { marked: true } => writeln!(
                f,
                "ragrouter results database: yes (application id {APPLICATION_ID:#010x})"
            )?,
            Ownership::Ours { marked: false } => writeln!(
                f,
                "ragrouter results database: yes, recognised by its exact schema (written before the \
                 application id; it is marked on its next write)"
            )?,
            Ownership::NotOurs(why) => writeln!(f, "ragrouter results database: no: {why}")?,
        }
        writeln!(
            f,
            "schema version: {} (this build writes {SCHEMA_VERSION})",
            self.schema_version
        )?;
        writeln!(
            f,
            "application id: {} ({:#010x})",
            self.application_id, self.application_id
        )?;
        writeln!(
            f,
            "journal: {}",
            if self.wal {
                "write-ahead log (WAL)"
            } else {
                "rollback journal"
            }
        )?;
        if let Some((runs, finished)) = self.runs {
            let rows = |t: &str| self.tables.iter().find(|(n, _)| n == t).map_or(0, |t| t.1);
            writeln!(
                f,
                "runs: {runs} ({finished} finished), tuples: {}, corpora: {}, questions: {}, router evaluations: {}",
                rows("results"),
                rows("corpora"),
                rows("queries"),
                rows("route_evals")
            )?;
        }
        if let Some(n) = self.unmerged_wal {
            writeln!(
                f,
                "note: the counts leave out {}-wal ({n} bytes): writes not yet merged into the \
                 file, which cannot be read without its -shm beside it (db info creates no file); \
                 a command that writes to this store merges them",
                self.path
            )?;
        }
        writeln!(f, "tables (rows):")?;
        if self.tables.is_empty() {
            writeln!(f, "  none")?;
        }
        for (t, n) in &self.tables {
            writeln!(f, "  {:<22} {n}", printable(t))?;
        }
        if !self.others.is_empty() {
            writeln!(f, "other objects: {}", self.others.join(", "))?;
        }
        Ok(())
    }
}
