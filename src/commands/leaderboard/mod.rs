//! `ragrouter leaderboard`: every router (built-in, external, the baselines and the published
//! choices a matrix ships) on every outcome matrix of the stores, under one fixed protocol,
//! ranked by the share of the best-single -> Oracle gap it closes; written as a static page,
//! JSON, CSV, provenance and per-question predictions, and checked by `leaderboard verify`.

use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use bench_core::BenchError;

pub use args::LeaderboardArgs;
use args::{BuildArgs, LeaderboardCommand};
use evaluate::{Ctx, ViewResult};
use rank::{Evaluated, RouterInfo};

mod args;
mod evaluate;
mod matrices;
mod outputs;
mod rank;
mod verify;

pub fn run(args: &LeaderboardArgs) -> Result<()> {
    match &args.command {
        Some(LeaderboardCommand::Verify(v)) => verify::run(v),
        None => build(&args.build),
    }
}

/// Builds the board: checks every flag, evaluates each (matrix, view) of every store, ranks,
/// writes the outputs and fails when a cell failed.
fn build(a: &BuildArgs) -> Result<()> {
    let (out, timeout, reqs) = checked_flags(a)?;
    let started = Instant::now();
    let mut ctx = Ctx {
        model_dir: a.encoder.model_dir.clone(),
        cache_dir: a.cache_dir.clone(),
        external_timeout: timeout,
        refresh: a.refresh.clone(),
        encoder: Default::default(),
        ran: 0,
        cached: 0,
    };
    let evaluated = evaluate_all(a, &reqs, &mut ctx)?;
    let routers = router_infos(&reqs, &evaluated);
    let all_views: Vec<(String, ViewResult)> = evaluated
        .iter()
        .flat_map(|e| e.views.iter().map(|v| (e.matrix.id.clone(), v.clone())))
        .collect();
    let board = rank::board(now_rfc3339(), &routers, evaluated);
    let refs: Vec<(String, &ViewResult)> = all_views.iter().map(|(m, v)| (m.clone(), v)).collect();
    outputs::write(out, &board, &refs)?;
    print_summary(&board, out);
    eprintln!(
        "leaderboard: {} evaluation(s) run, {} cached; {:.1} s",
        ctx.ran,
        ctx.cached,
        started.elapsed().as_secs_f64()
    );
    fail_on_failed_cells(&board, out)
}

/// Every flag and the output folder, checked before any store is read: the output folder, the
/// external routers' timeout and the routers asked for (each `--refresh` name among them).
fn checked_flags(a: &BuildArgs) -> Result<(&Path, std::time::Duration, Vec<evaluate::Req>)> {
    let out = a
        .out
        .as_deref()
        .ok_or_else(|| BenchError::Invalid("--out is required".into()))?;
    crate::checks::check_folder("--out", out)?;
    reports::check_out_dir(out)?;
    crate::checks::check_folder("--cache-dir", &a.cache_dir)?;
    a.encoder.check()?;
    let timeout = crate::commands::route::external_timeout(a.external_timeout)?;
    let reqs = evaluate::requested(&a.routers, &a.external)?;
    for r in &a.refresh {
        if r != "all" && !reqs.iter().any(|q| &q.name == r) {
            return Err(BenchError::Invalid(format!(
                "--refresh {r:?}: no router of that name is on the board"
            ))
            .into());
        }
    }
    Ok((out, timeout, reqs))
}

/// Every view of every matrix of every store, evaluated in order (stores, matrices, views),
/// each view's time told as it ends.
fn evaluate_all(a: &BuildArgs, reqs: &[evaluate::Req], ctx: &mut Ctx) -> Result<Vec<Evaluated>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let stores = matrices::open_all(&a.dbs).await?;
        let mut evaluated = Vec::new();
        for (db, store) in a.dbs.iter().zip(&stores) {
            for plan in matrices::plan(store, &matrices::store_name(db)).await? {
                let mut views = Vec::new();
                for v in &plan.matrix.views {
                    let t = Instant::now();
                    views.push(evaluate::view(store, &plan, v, reqs, ctx).await?);
                    let secs = t.elapsed().as_secs_f64();
                    eprintln!("leaderboard: {} {v}: done in {secs:.1} s", plan.matrix.id);
                }
                evaluated.push(Evaluated {
                    matrix: plan.matrix,
                    references: plan.references,
                    views,
                });
            }
        }
        for s in stores {
            s.close().await;
        }
        anyhow::Ok(evaluated)
    })
}

/// Tells each failed cell; an error naming how many failed (the board is written all the same).
fn fail_on_failed_cells(board: &reports::leaderboard::Board, out: &Path) -> Result<()> {
    let failed: Vec<String> = board
        .cells
        .iter()
        .filter(|c| c.status == "failed")
        .map(|c| format!("{} on {} {}", c.router, c.matrix, c.view))
        .collect();
    for f in &failed {
        eprintln!("failed {f}");
    }
    match failed.len() {
        0 => Ok(()),
        n => Err(anyhow::anyhow!(
            "{n} cell(s) failed; the board was written to {}",
            out.display()
        )),
    }
}

/// The routers asked for, then those the data brought (published choices, cascades).
fn router_infos(reqs: &[evaluate::Req], evaluated: &[Evaluated]) -> Vec<RouterInfo> {
    let mut out: Vec<RouterInfo> = reqs
        .iter()
        .map(|r| RouterInfo {
            name: r.name.clone(),
            kind: r.kind.clone(),
            family: r.family.clone(),
            config: r.config.clone(),
        })
        .collect();
    for v in evaluated.iter().flat_map(|e| &e.views) {
        for (name, family) in &v.auto {
            if !out.iter().any(|r| &r.name == name) {
                let kind = if family == "published" {
                    "published"
                } else {
                    "built-in"
                };
                out.push(RouterInfo {
                    name: name.clone(),
                    kind: kind.into(),
                    family: family.clone(),
                    config: serde_json::json!({"name": name, "family": family, "from": "the matrix", "version": env!("CARGO_PKG_VERSION")}),
                });
            }
        }
    }
    out
}

/// The standings as a short table on stdout.
fn print_summary(board: &reports::leaderboard::Board, out: &Path) {
    println!(
        "{:>4}  {:<22} {:<10} {:>9} {:>6} {:>4} {:>6}",
        "rank", "router", "kind", "gap share", "ran", "wins", "losses"
    );
    for r in &board.routers {
        println!(
            "{:>4}  {:<22} {:<10} {:>9} {:>6} {:>4} {:>6}",
            r.rank.map_or("-".to_string(), |x| x.to_string()),
            r.name,
            r.kind,
            r.mean_gap_share
                .map_or("—".to_string(), |g| format!("{:.3}", g)),
            format!("{}/{}", r.ran, r.of),
            r.wins,
            r.losses
        );
    }
    for m in board.matrices.iter().filter(|m| m.skipped.is_some()) {
        println!(
            "skipped matrix {}: {}",
            m.id,
            m.skipped.as_deref().unwrap_or("")
        );
    }
    println!(
        "leaderboard written to {} (index.html, leaderboard.json)",
        out.display()
    );
}

/// Now as RFC 3339 in UTC, to the second.
fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_date_is_rfc3339_utc() {
        let d = super::now_rfc3339();
        assert_eq!(d.len(), 20, "{d}");
        assert!(
            d.starts_with("20") && d.ends_with('Z') && d.as_bytes()[10] == b'T',
            "{d}"
        );
    }
}
