//! A router implemented by another program, spoken to over JSON lines on stdin/stdout (the
//! protocol is in `docs/router-protocol.md`).
//!
//! The program is started without a shell (`std::process::Command` on an argv list), once per
//! fitted router, and lives until the router is dropped. Every request waits at most the
//! configured timeout, writing included (requests go through a writer thread, so a program that
//! never reads cannot block the harness on a full pipe); on a timeout, a malformed reply or an
//! early exit the child is killed and reaped, and the error carries the tail of its stderr.
//! On Unix the program leads its own process group and the whole group is killed, so what it
//! started (a shell's children, a worker pool) does not live on as orphans. The program
//! inherits the environment less the keys [`is_withheld`] names, and its stderr is masked
//! (`store::redact`) before it is shown.
//! In an evaluation the folds share the program's health: the first fit runs alone, and after a
//! failure the program is not started again in the other folds. A program that answers `fit` as
//! version 2 decides stage by stage (`staged`).

use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bench_core::{BenchError, Result, Router, RoutingRow, RoutingSchema, RoutingSet};
use serde_json::{json, Value};

use crate::entry::{Family, RouterContext};
use crate::eval::Candidate;

pub(crate) mod staged;

/// The protocol version sent in every `fit` request.
pub const PROTOCOL_VERSION: u32 = 1;

/// Default time one request may take.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Keep at most this much of the child's stderr for error messages.
const STDERR_KEEP: usize = 4096;

/// How to start an external router.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalSpec {
    /// The router's name in tables and the store.
    pub name: String,
    /// Program and arguments (no shell: no globbing, no quoting, no pipes).
    pub argv: Vec<String>,
    /// How long one request may take before the router is stopped.
    pub timeout: Duration,
}

impl ExternalSpec {
    /// Parses `NAME=PROGRAM ARG...` (arguments split on whitespace) or `external:PROGRAM ARG...`
    /// (named after the program's file stem).
    pub fn parse(s: &str) -> Result<ExternalSpec> {
        let bad = |m: &str| {
            BenchError::Invalid(format!(
                "external router {s:?}: {m}; expected NAME=PROGRAM [ARGS...] or external:PROGRAM [ARGS...]"
            ))
        };
        let (name, rest) = if let Some(rest) = s.strip_prefix("external:") {
            (None, rest)
        } else if let Some((n, rest)) = s.split_once('=') {
            (Some(n.trim().to_string()), rest)
        } else {
            return Err(bad("no name"));
        };
        let argv: Vec<String> = rest.split_whitespace().map(str::to_string).collect();
        let Some(program) = argv.first() else {
            return Err(bad("no program"));
        };
        let name = match name {
            Some(n) => n,
            None => std::path::Path::new(program)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .ok_or_else(|| bad("cannot name the router after its program"))?,
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            return Err(bad(
                "the name must be non-empty ASCII letters, digits, '-', '_' or '.'",
            ));
        }
        Ok(ExternalSpec {
            name,
            argv,
            timeout: DEFAULT_TIMEOUT,
        })
    }

    /// An evaluation candidate that starts this program per fold. Its folds share one
    /// [`Health`]: the first fit runs alone, and once the program has failed it is not started
    /// again for the rest of the evaluation.
    pub fn candidate(&self) -> Candidate {
        let spec = self.clone();
        let health = Arc::new(Health::default());
        Candidate {
            name: self.name.clone(),
            family: Family::External,
            needs_llm: false,
            sees_outcomes: false,
            lanes: Vec::new(),
            sweep: Vec::new(),
            make: Arc::new(move |ctx: &RouterContext, _| {
                let mut r = ExternalRouter::new(spec.clone(), ctx.seed);
                r.health = Some(Arc::clone(&health));
                Ok(Box::new(r) as Box<dyn Router>)
            }),
        }
    }
}

/// How the program has fared so far in one evaluation, shared by its folds.
#[derive(Debug, Default)]
pub struct Health {
    state: Mutex<HealthState>,
}

#[derive(Debug, Default)]
enum HealthState {
    /// Not fitted yet: the first fit holds the lock, so the other folds wait for its outcome.
    #[default]
    Untried,
    Fitted,
    /// The first failure's message.
    Failed(String),
}

impl Health {
    fn fail(&self, message: &str) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(*s, HealthState::Failed(_)) {
            *s = HealthState::Failed(message.to_owned());
        }
    }
}

/// A running child process.
struct Child_ {
    child: Child,
    /// Request lines for the writer thread, which owns the child's stdin; dropping this closes it.
    stdin: mpsc::Sender<Vec<u8>>,
    lines: Receiver<std::io::Result<String>>,
    stderr: Arc<Mutex<String>>,
}

/// The router side of the protocol.
pub(crate) struct ExternalRouter {
    spec: ExternalSpec,
    seed: u64,
    proc_: Mutex<Option<Child_>>,
    /// Shared by the folds of one evaluation (`None` for a router used on its own).
    health: Option<Arc<Health>>,
}

impl fmt::Debug for ExternalRouter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExternalRouter")
            .field("name", &self.spec.name)
            .field("argv", &self.spec.argv)
            .finish()
    }
}

impl ExternalRouter {
    /// An unstarted router for `spec`; `seed` goes to the program in its `fit` request.
    pub(crate) fn new(spec: ExternalSpec, seed: u64) -> Self {
        ExternalRouter {
            spec,
            seed,
            proc_: Mutex::new(None),
            health: None,
        }
    }

    fn err(&self, m: impl fmt::Display) -> BenchError {
        BenchError::Other(format!(
            "external router {} ({}): {m}",
            self.spec.name,
            self.spec.argv.join(" ")
        ))
    }

    fn start(&self) -> Result<Child_> {
        let mut command = Command::new(&self.spec.argv[0]);
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        // The program gets the environment less the keys ragrouter holds for others.
        for (name, _) in std::env::vars_os() {
            if name.to_str().is_some_and(is_withheld) {
                command.env_remove(&name);
            }
        }
        let mut child = command
            .args(&self.spec.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.err(format!("cannot start: {e}")))?;
        let mut stdin_pipe = child.stdin.take().ok_or_else(|| self.err("no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| self.err("no stdout"))?;
        let mut stderr_pipe = child.stderr.take().ok_or_else(|| self.err("no stderr"))?;
        // The writer on its own thread: a request larger than the pipe's buffer blocks until the
        // program reads it, and a program that never reads must still meet the timeout.
        let (stdin, requests) = mpsc::channel::<Vec<u8>>();
        std::thread::spawn(move || {
            for line in requests {
                if stdin_pipe
                    .write_all(&line)
                    .and_then(|()| stdin_pipe.flush())
                    .is_err()
                {
                    break;
                }
            }
        });
        let (tx, lines) = mpsc::channel();
        // Readers on their own threads, so a request can time out while the child is silent.
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let stop = line.is_err();
                if tx.send(line).is_err() || stop {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr_pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut s = sink.lock().unwrap_or_else(|p| p.into_inner());
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
                if s.len() > 2 * STDERR_KEEP {
                    let cut = s.len() - STDERR_KEEP;
                    let cut = (cut..s.len()).find(|&i| s.is_char_boundary(i)).unwrap_or(0);
                    s.drain(..cut);
                }
            }
        });
        Ok(Child_ {
            child,
            stdin,
            lines,
            stderr,
        })
    }

    /// Sends one request and waits for its reply line; on any failure the child is killed.
    fn request(&self, p: &mut Option<Child_>, msg: &Value) -> Result<Value> {
        let c = p
            .as_mut()
            .ok_or_else(|| self.err("not started (fit first)"))?;
        let outcome = (|| -> std::result::Result<Value, String> {
            let mut line = msg.to_string();
            line.push('\n');
            c.stdin
                .send(line.into_bytes())
                .map_err(|_| "writing the request: the program closed its input".to_string())?;
            let reply = match c.lines.recv_timeout(self.spec.timeout) {
                Ok(Ok(l)) => l,
                Ok(Err(e)) => return Err(format!("reading the reply: {e}")),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "no reply within {:.1} s (timeout)",
                        self.spec.timeout.as_secs_f64()
                    ))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("exited before replying".to_string())
                }
            };
            // Strict, as every input: a key given twice is an error, not the last one winning.
            let v: Value = bench_core::strict_json::from_str(&reply).map_err(|e| {
                format!(
                    "reply is not JSON ({e}): {:?}",
                    reply.chars().take(200).collect::<String>()
                )
            })?;
            if let Some(e) = v.get("error") {
                return Err(format!(
                    "reported an error: {}",
                    e.as_str().map_or_else(|| e.to_string(), str::to_string)
                ));
            }
            Ok(v)
        })();
        outcome.map_err(|m| {
            let mut c = p.take().expect("checked above");
            kill_group(&mut c.child);
            let status = c.child.wait().ok();
            // Give the stderr reader a moment to drain what the child wrote before dying.
            std::thread::sleep(Duration::from_millis(50));
            let stderr = c
                .stderr
                .lock()
                .map(|s| s.trim().to_string())
                .unwrap_or_default();
            let mut msg = m;
            if let Some(s) = status.filter(|s| !s.success()) {
                msg.push_str(&format!(" [{s}]"));
            }
            if !stderr.is_empty() {
                let tail: String = stderr
                    .chars()
                    .rev()
                    .take(STDERR_KEEP)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                // The program's own words may hold a password or a database URL.
                msg.push_str(&format!("; stderr:\n{}", store::redact(&tail)));
            }
            self.err(msg)
        })
    }
}

impl Drop for ExternalRouter {
    fn drop(&mut self) {
        if let Some(mut c) = self.proc_.get_mut().ok().and_then(Option::take) {
            // Closing stdin is the polite end; kill in case the program ignores it.
            drop(c.stdin);
            let deadline = std::time::Instant::now() + Duration::from_millis(500);
            loop {
                match c.child.try_wait() {
                    Ok(Some(_)) => {
                        // What the program started and left behind goes with it.
                        kill_group(&mut c.child);
                        break;
                    }
                    Ok(None) if std::time::Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(10))
                    }
                    _ => {
                        kill_group(&mut c.child);
                        let _ = c.child.wait();
                        break;
                    }
                }
            }
        }
    }
}

/// Whether the environment variable `name` is withheld from external routers: the LLM key
/// (`OPENAI_API_KEY`, the default `api_key_env`) and any other `*_API_KEY`, PostgreSQL's
/// `PGPASSWORD`, and `RAGROUTER_DB`, whose URL may carry a password. A router needs none of
/// them: it sees features and answers scores.
pub fn is_withheld(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.ends_with("API_KEY") || upper == "PGPASSWORD" || upper == "RAGROUTER_DB"
}

/// Kills the program and, on Unix, every process of the group it leads.
fn kill_group(child: &mut Child) {
    #[cfg(unix)]
    if let Ok(pid) = libc::pid_t::try_from(child.id()) {
        // SAFETY: kill(2) takes plain integers and touches no memory of ours; a negative pid
        // addresses the process group the child leads (started with `process_group(0)`).
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
    let _ = child.kill();
}

fn schema_json(schema: &RoutingSchema) -> Value {
    json!({
        "classes": schema.classes,
        "feature_names": schema.feature_names,
        "blocks": schema.blocks,
    })
}

impl ExternalRouter {
    /// Starts the program if it is not running and sends it the training rows.
    fn fit_now(&mut self, train: &RoutingSet) -> Result<()> {
        self.send_fit(json!({
            "type": "fit",
            "version": PROTOCOL_VERSION,
            "seed": self.seed,
            "schema": schema_json(&train.schema),
            "rows": train.rows,
        }))
        .map(drop)
    }

    /// Starts the program if it is not running, sends `msg` (a `fit`) and returns the reply,
    /// which must hold `"ok": true`.
    fn send_fit(&mut self, msg: Value) -> Result<Value> {
        let mut p = self.proc_.lock().unwrap_or_else(|e| e.into_inner());
        if p.is_none() {
            *p = Some(self.start()?);
        }
        let reply = self.request(&mut p, &msg)?;
        if reply.get("ok") != Some(&Value::Bool(true)) {
            return Err(self.err(format!("fit reply lacks \"ok\": true: {reply}")));
        }
        Ok(reply)
    }
}

impl Router for ExternalRouter {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn fit(&mut self, train: &RoutingSet) -> Result<()> {
        let Some(health) = self.health.clone() else {
            return self.fit_now(train);
        };
        let mut state = health.state.lock().unwrap_or_else(|e| e.into_inner());
        match &*state {
            HealthState::Failed(first) => Err(self.err(format!(
                "not started again: it failed earlier in this evaluation ({first})"
            ))),
            HealthState::Fitted => {
                drop(state);
                self.fit_now(train)
            }
            // The lock is held through the first fit: the other folds start no program until
            // this one has shown it works.
            HealthState::Untried => {
                let r = self.fit_now(train);
                *state = match &r {
                    Ok(()) => HealthState::Fitted,
                    Err(e) => HealthState::Failed(e.to_string()),
                };
                r
            }
        }
    }

    fn scores(&self, schema: &RoutingSchema, row: &RoutingRow) -> Result<Vec<f64>> {
        let mut v = self.scores_batch(schema, std::slice::from_ref(row))?;
        v.pop().ok_or_else(|| self.err("no scores"))
    }

    fn scores_batch(&self, schema: &RoutingSchema, rows: &[RoutingRow]) -> Result<Vec<Vec<f64>>> {
        let mut p = self.proc_.lock().unwrap_or_else(|e| e.into_inner());
        let reply = self
            .request(&mut p, &json!({"type": "predict", "rows": rows}))
            .inspect_err(|e| {
                if let Some(h) = &self.health {
                    h.fail(&e.to_string());
                }
            })?;
        let scores = reply
            .get("scores")
            .and_then(Value::as_array)
            .ok_or_else(|| self.err(format!("predict reply lacks \"scores\": {reply}")))?;
        if scores.len() != rows.len() {
            return Err(self.err(format!(
                "{} score lists for {} rows",
                scores.len(),
                rows.len()
            )));
        }
        let k = schema.n_classes();
        scores
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let s = s.as_array().filter(|a| a.len() == k).ok_or_else(|| {
                    self.err(format!("scores of row {i}: expected a list of {k} numbers"))
                })?;
                s.iter()
                    .map(|x| {
                        x.as_f64().ok_or_else(|| {
                            self.err(format!("scores of row {i}: {x} is not a number"))
                        })
                    })
                    .collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_specs() {
        let s = ExternalSpec::parse("centroid=python3 examples/external_router.py --k 3").unwrap();
        assert_eq!(s.name, "centroid");
        assert_eq!(
            s.argv,
            ["python3", "examples/external_router.py", "--k", "3"]
        );
        let s = ExternalSpec::parse("external:bin/my-router.sh").unwrap();
        assert_eq!(s.name, "my-router");
        assert!(ExternalSpec::parse("nothing").is_err());
        assert!(ExternalSpec::parse("x=").is_err());
        assert!(ExternalSpec::parse("a b=prog").is_err());
    }

    #[test]
    fn keys_are_withheld_and_other_variables_kept() {
        for name in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "my_api_key",
            "PGPASSWORD",
            "RAGROUTER_DB",
        ] {
            assert!(is_withheld(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "OPENAI_BASE_URL",
            "API_KEYS_FILE",
            "PYTHONPATH",
        ] {
            assert!(!is_withheld(name), "{name}");
        }
    }
}
