//! A PostgreSQL store under hostile use (the 2026-12-07 hostile test): a server stopped with
//! `pg_ctl stop -m immediate` while `bench` writes ends the worker with a message that names the
//! server that went away (H18). The test starts a server of its own (`scripts/pg-test.sh`),
//! since it stops it.

mod common;

use common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A throwaway server of `scripts/pg-test.sh`, deleted when dropped.
struct Server {
    state: PathBuf,
    url: String,
}

impl Server {
    fn start(state: &Path) -> Server {
        let out = script(state, "start");
        check_ok(&out);
        let url = text(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("RAGROUTER_TEST_PG="))
            .expect("the script prints the URL")
            .to_owned();
        Server {
            state: state.to_path_buf(),
            url,
        }
    }

    /// `pg_ctl stop -m immediate`: the server ends at once, without a clean shutdown.
    fn stop_immediate(&self) {
        let bindir = std::fs::read_to_string(self.state.join("bindir")).unwrap();
        let pg_ctl = format!("{}/pg_ctl", bindir.trim());
        let data = self.state.join("data");
        let args = ["-D", s(&data), "-m", "immediate", "-w", "stop"];
        let root = text(&Command::new("id").arg("-u").output().unwrap().stdout).trim() == "0";
        let status = if root {
            Command::new("runuser")
                .args(["-u", "postgres", "--", &pg_ctl])
                .args(args)
                .status()
        } else {
            Command::new(&pg_ctl).args(args).status()
        };
        assert!(status.unwrap().success(), "pg_ctl stop -m immediate failed");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = script(&self.state, "stop");
    }
}

fn script(state: &Path, verb: &str) -> std::process::Output {
    Command::new(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pg-test.sh"))
        .arg(verb)
        .env("PG_TEST_STATE", state)
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs a PostgreSQL server (RAGROUTER_TEST_PG; scripts/pg-test.sh start, .ci/run starts one)"]
fn h18_an_immediate_stop_mid_run_names_the_server_that_went_away() {
    test_pg(); // the same gate as every PostgreSQL test; the server stopped here is its own
    let state = tempfile::tempdir().unwrap();
    // The server runs as `postgres` when the tests run as root: it must reach its folder.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(state.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = Server::start(&state.path().join("pg"));
    let db = fresh_pg(&server.url, "h18");
    let cache = shared_cache();
    let child = bin()
        .args(["bench", "demo", "--db", &db, "--cache-dir", s(&cache)])
        .env("RAGROUTER_FAULT_DELAY_MS", "200")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Stop the server once the run has written tuples.
    let deadline = Instant::now() + Duration::from_secs(300);
    let tables = "SELECT count(*) FROM information_schema.tables WHERE table_name = 'results'";
    while pg_fetch::<i64>(&db, tables)[0] == 0
        || pg_fetch::<i64>(&db, "SELECT count(*) FROM results")[0] < 3
    {
        assert!(Instant::now() < deadline, "bench wrote no tuples");
        std::thread::sleep(Duration::from_millis(200));
    }
    server.stop_immediate();
    let out = child.wait_with_output().unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("pool timed out"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("went away"), "{err}");
    let server_addr = server
        .url
        .split('@')
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap();
    assert!(err.contains(server_addr), "{err}");
}
