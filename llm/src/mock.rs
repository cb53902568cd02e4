//! A scripted OpenAI-compatible server on 127.0.0.1 for tests, with injectable faults.
//!
//! It serves `POST /v1/chat/completions` (answered by the script), `GET /v1/models` and, when
//! asked to, `POST /v1/embeddings` (hashed bag-of-words vectors, deterministic), speaks
//! just enough HTTP/1.1 (one request per connection, `Connection: close`) to produce faults a
//! real framework would refuse to: truncated bodies and dropped connections. It runs on its own
//! thread and runtime, so sync and async tests alike can use it, and stops when dropped.
//! Requests are bounded (64 KiB of headers, 32 MiB of body) and it listens on loopback only.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bench_core::Usage;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 32 * 1024 * 1024;

/// A chat request as the mock received it.
#[derive(Debug, Clone)]
pub struct ChatRequestSeen {
    /// 0-based arrival number among chat requests.
    pub index: usize,
    /// The `model` field of the request.
    pub model: String,
    /// (role, content) pairs.
    pub messages: Vec<(String, String)>,
    /// `response_format` was `json_object`.
    pub json_mode: bool,
    /// The `Authorization` header as sent (tests check the key went there and nowhere else).
    pub authorization: Option<String>,
    /// The whole request body.
    pub body: serde_json::Value,
}

impl ChatRequestSeen {
    /// The last message's content (usually the user's question).
    pub fn last_content(&self) -> &str {
        self.messages.last().map_or("", |(_, c)| c.as_str())
    }
}

/// What the mock does with one chat request.
#[derive(Debug, Clone)]
pub enum MockReply {
    /// A well-formed completion.
    Reply {
        /// The message content.
        content: String,
        /// The `usage` object, if the reply carries one.
        usage: Option<Usage>,
    },
    /// An error status with an OpenAI error body; `retry_after` becomes the `Retry-After` header.
    Status {
        /// The HTTP status code.
        code: u16,
        /// The `Retry-After` header's value, if sent.
        retry_after: Option<String>,
        /// The error body's message.
        message: String,
    },
    /// Waits, then does the inner reply.
    Delay(Duration, Box<MockReply>),
    /// A well-formed completion with `finish_reason: "length"`: the model ran out of
    /// `max_tokens` (what llama.cpp's JSON mode returns when the object does not fit).
    CutAtLimit(String),
    /// A completion whose body stops halfway through its announced `Content-Length`.
    TruncatedBody,
    /// 200 with an HTML body.
    NonJson,
    /// Closes the connection without answering.
    DropConnection,
}

impl MockReply {
    /// A reply without usage.
    pub fn text(content: impl Into<String>) -> Self {
        MockReply::Reply {
            content: content.into(),
            usage: None,
        }
    }

    /// A reply with usage.
    pub fn with_usage(content: impl Into<String>, prompt: u64, completion: u64) -> Self {
        MockReply::Reply {
            content: content.into(),
            usage: Some(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
            }),
        }
    }

    /// An error status without `Retry-After`.
    pub fn status(code: u16) -> Self {
        MockReply::Status {
            code,
            retry_after: None,
            message: format!("mock status {code}"),
        }
    }

    /// 429 with `Retry-After: secs`.
    pub fn rate_limited(secs: u64) -> Self {
        MockReply::Status {
            code: 429,
            retry_after: Some(secs.to_string()),
            message: "rate limited".into(),
        }
    }

    /// This reply, sent after `d`.
    pub fn delayed(self, d: Duration) -> Self {
        MockReply::Delay(d, Box::new(self))
    }
}

/// What `GET /v1/models` lists and how big a prompt the mock accepts.
#[derive(Debug, Clone)]
pub struct MockOptions {
    /// Model names `GET /v1/models` lists.
    pub models: Vec<String>,
    /// Reported as `context_length` on each model when set.
    pub context_length: Option<u64>,
    /// Prompts above this many cl100k tokens get a 400 "maximum context length" error.
    pub max_prompt_tokens: Option<u64>,
    /// Serve `POST /v1/embeddings` with vectors of this size (none: the route does not exist).
    pub embedding_dim: Option<usize>,
    /// Embedding requests from this 0-based arrival number on get vectors one longer.
    pub embedding_wrong_dim_from: Option<usize>,
    /// (arrival number, status): those embedding requests get that error status instead.
    pub embedding_faults: Vec<(usize, u16)>,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            models: vec!["mock-model".into()],
            context_length: None,
            max_prompt_tokens: None,
            embedding_dim: None,
            embedding_wrong_dim_from: None,
            embedding_faults: Vec::new(),
        }
    }
}

type Script = dyn Fn(&ChatRequestSeen) -> MockReply + Send + Sync;

struct State {
    script: Box<Script>,
    options: MockOptions,
    chat_requests: AtomicUsize,
    model_requests: AtomicUsize,
    embedding_requests: AtomicUsize,
    embedding_inputs: AtomicUsize,
    embedding_tokens: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    authorizations: Mutex<Vec<Option<String>>>,
    arrivals: Mutex<Vec<Instant>>,
}

/// The running server; dropping it stops it.
pub struct MockServer {
    addr: SocketAddr,
    state: Arc<State>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockServer {
    /// Starts a server listing `mock-model` whose chat replies come from `script`.
    pub fn start(script: impl Fn(&ChatRequestSeen) -> MockReply + Send + Sync + 'static) -> Self {
        Self::start_with(MockOptions::default(), script)
    }

    /// Starts a server with `options` (models, context limits, embeddings) whose chat replies
    /// come from `script`.
    pub fn start_with(
        options: MockOptions,
        script: impl Fn(&ChatRequestSeen) -> MockReply + Send + Sync + 'static,
    ) -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binding 127.0.0.1:0");
        listener
            .set_nonblocking(true)
            .expect("non-blocking listener");
        let addr = listener.local_addr().expect("local address");
        let state = Arc::new(State {
            script: Box::new(script),
            options,
            chat_requests: AtomicUsize::new(0),
            model_requests: AtomicUsize::new(0),
            embedding_requests: AtomicUsize::new(0),
            embedding_inputs: AtomicUsize::new(0),
            embedding_tokens: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            authorizations: Mutex::new(Vec::new()),
            arrivals: Mutex::new(Vec::new()),
        });
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let st = state.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("mock runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                // Dropping the set at shutdown aborts connections still being served.
                let mut conns = tokio::task::JoinSet::new();
                loop {
                    tokio::select! {
                        _ = &mut rx => break,
                        acc = listener.accept() => {
                            if let Ok((stream, _)) = acc {
                                conns.spawn(serve(stream, st.clone()));
                            }
                        }
                        Some(_) = conns.join_next(), if !conns.is_empty() => {}
                    }
                }
            });
        });
        MockServer {
            addr,
            state,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Chat requests received (every attempt counts).
    pub fn chat_requests(&self) -> usize {
        self.state.chat_requests.load(Ordering::SeqCst)
    }

    /// `GET /v1/models` requests received.
    pub fn model_requests(&self) -> usize {
        self.state.model_requests.load(Ordering::SeqCst)
    }

    /// Embedding requests received (every attempt counts, faults included).
    pub fn embedding_requests(&self) -> usize {
        self.state.embedding_requests.load(Ordering::SeqCst)
    }

    /// Texts embedded by successful embedding replies.
    pub fn embedding_inputs(&self) -> usize {
        self.state.embedding_inputs.load(Ordering::SeqCst)
    }

    /// `usage.prompt_tokens` summed over successful embedding replies.
    pub fn embedding_tokens(&self) -> u64 {
        self.state.embedding_tokens.load(Ordering::SeqCst) as u64
    }

    /// Most chat requests being handled at the same time.
    pub fn max_concurrent(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }

    /// The `Authorization` header of every request, in arrival order.
    pub fn authorizations(&self) -> Vec<Option<String>> {
        self.state.authorizations.lock().unwrap().clone()
    }

    /// When each chat request arrived.
    pub fn arrivals(&self) -> Vec<Instant> {
        self.state.arrivals.lock().unwrap().clone()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Counts a chat request in flight until dropped.
struct InFlight<'a>(&'a State);

impl<'a> InFlight<'a> {
    fn enter(s: &'a State) -> Self {
        let now = s.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        s.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(s)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

struct Request {
    method: String,
    path: String,
    authorization: Option<String>,
    body: Vec<u8>,
}

async fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut buf = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let mut chunk = [0u8; 4096];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let (method, path) = (first.next()?.to_owned(), first.next()?.to_owned());
    let mut length = 0usize;
    let mut authorization = None;
    for line in lines {
        if let Some((name, value)) = line.split_once(':') {
            let value = value.trim();
            match name.trim().to_ascii_lowercase().as_str() {
                "content-length" => length = value.parse().ok()?,
                "authorization" => authorization = Some(value.to_owned()),
                _ => {}
            }
        }
    }
    if length > MAX_BODY {
        return None;
    }
    let mut body = buf[head_end..].to_vec();
    while body.len() < length {
        let mut chunk = vec![0u8; (length - body.len()).min(64 * 1024)];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Some(Request {
        method,
        path,
        authorization,
        body,
    })
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

fn head(code: u16, content_type: &str, len: usize, extra: &str) -> String {
    format!(
        "HTTP/1.1 {code} {}\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\nConnection: close\r\n{extra}\r\n",
        reason(code)
    )
}

async fn respond(stream: &mut TcpStream, code: u16, body: &str, extra: &str) {
    let mut out = head(code, "application/json", body.len(), extra).into_bytes();
    out.extend_from_slice(body.as_bytes());
    let _ = stream.write_all(&out).await;
    let _ = stream.shutdown().await;
}

fn error_body(message: &str) -> String {
    serde_json::json!({"error": {"message": message, "type": "mock_error", "param": null, "code": null}})
        .to_string()
}

fn completion_body(index: usize, model: &str, content: &str, usage: Option<Usage>) -> String {
    finished_body(index, model, content, usage, "stop")
}

fn finished_body(
    index: usize,
    model: &str,
    content: &str,
    usage: Option<Usage>,
    finish_reason: &str,
) -> String {
    let mut v = serde_json::json!({
        "id": format!("mock-{index}"),
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish_reason}],
    });
    if let Some(u) = usage {
        v["usage"] = serde_json::json!({
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.prompt_tokens + u.completion_tokens,
        });
    }
    v.to_string()
}

/// Answers one connection: records its authorization and routes by method and path.
async fn serve(mut stream: TcpStream, state: Arc<State>) {
    let Some(req) = read_request(&mut stream).await else {
        return;
    };
    state
        .authorizations
        .lock()
        .unwrap()
        .push(req.authorization.clone());
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/v1/models") => serve_models(&mut stream, &state).await,
        ("POST", "/v1/chat/completions") => serve_chat(&mut stream, &state, &req).await,
        ("POST", "/v1/embeddings") if state.options.embedding_dim.is_some() => {
            serve_embeddings(&mut stream, &state, &req).await
        }
        _ => respond(&mut stream, 404, &error_body("no such route"), "").await,
    }
}

/// `GET /v1/models`: the configured models (with the context length when one is set).
async fn serve_models(stream: &mut TcpStream, state: &State) {
    state.model_requests.fetch_add(1, Ordering::SeqCst);
    let data: Vec<serde_json::Value> = state
        .options
        .models
        .iter()
        .map(|m| {
            let mut v =
                serde_json::json!({"id": m, "object": "model", "created": 0, "owned_by": "mock"});
            if let Some(n) = state.options.context_length {
                v["context_length"] = n.into();
            }
            v
        })
        .collect();
    let body = serde_json::json!({"object": "list", "data": data}).to_string();
    respond(stream, 200, &body, "").await;
}

/// `POST /v1/chat/completions`: refuses an unknown model or a prompt over the limit, then sends
/// what the script says for this request.
async fn serve_chat(stream: &mut TcpStream, state: &State, req: &Request) {
    let index = state.chat_requests.fetch_add(1, Ordering::SeqCst);
    state.arrivals.lock().unwrap().push(Instant::now());
    let _guard = InFlight::enter(state);
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(&req.body) else {
        respond(stream, 400, &error_body("body is not JSON"), "").await;
        return;
    };
    let messages: Vec<(String, String)> = body["messages"]
        .as_array()
        .map(|ms| {
            ms.iter()
                .map(|m| {
                    (
                        m["role"].as_str().unwrap_or_default().to_owned(),
                        m["content"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let seen = ChatRequestSeen {
        index,
        model: body["model"].as_str().unwrap_or_default().to_owned(),
        json_mode: body["response_format"]["type"] == "json_object",
        authorization: req.authorization.clone(),
        messages,
        body,
    };
    if !state.options.models.contains(&seen.model) {
        let msg = format!("The model `{}` does not exist", seen.model);
        respond(stream, 404, &error_body(&msg), "").await;
        return;
    }
    if let Some(max) = state.options.max_prompt_tokens {
        let n: u64 = seen
            .messages
            .iter()
            .map(|(_, c)| bench_core::tokens::count(c))
            .sum();
        if n > max {
            let msg =
                format!("This model's maximum context length is {max} tokens, your prompt has {n}");
            respond(stream, 400, &error_body(&msg), "").await;
            return;
        }
    }
    let reply = (state.script)(&seen);
    send_reply(stream, reply, index, &seen.model).await;
}

/// Sends the scripted reply (after its delays) or fault.
async fn send_reply(stream: &mut TcpStream, mut reply: MockReply, index: usize, model: &str) {
    loop {
        match reply {
            MockReply::Delay(d, inner) => {
                tokio::time::sleep(d).await;
                reply = *inner;
            }
            MockReply::Reply { content, usage } => {
                let body = completion_body(index, model, &content, usage);
                respond(stream, 200, &body, "").await;
                return;
            }
            MockReply::Status {
                code,
                retry_after,
                message,
            } => {
                let extra = retry_after
                    .map(|s| format!("Retry-After: {s}\r\n"))
                    .unwrap_or_default();
                respond(stream, code, &error_body(&message), &extra).await;
                return;
            }
            MockReply::CutAtLimit(content) => {
                let body = finished_body(index, model, &content, None, "length");
                respond(stream, 200, &body, "").await;
                return;
            }
            MockReply::TruncatedBody => {
                let body = completion_body(index, model, "cut short", None);
                let mut out = head(200, "application/json", body.len(), "").into_bytes();
                out.extend_from_slice(&body.as_bytes()[..body.len() / 2]);
                let _ = stream.write_all(&out).await;
                let _ = stream.shutdown().await;
                return;
            }
            MockReply::NonJson => {
                let body = "<html><body>502 Bad Gateway</body></html>";
                let mut out = head(200, "text/html", body.len(), "").into_bytes();
                out.extend_from_slice(body.as_bytes());
                let _ = stream.write_all(&out).await;
                let _ = stream.shutdown().await;
                return;
            }
            MockReply::DropConnection => return,
        }
    }
}

/// `POST /v1/embeddings`: bag-of-words vectors, with the configured faults (a status at a given
/// request, one dimension too many from a given request).
async fn serve_embeddings(stream: &mut TcpStream, state: &State, req: &Request) {
    let index = state.embedding_requests.fetch_add(1, Ordering::SeqCst);
    if let Some(&(_, code)) = state.options.embedding_faults.iter().find(|f| f.0 == index) {
        let msg = format!("mock embedding status {code}");
        respond(stream, code, &error_body(&msg), "").await;
        return;
    }
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(&req.body) else {
        respond(stream, 400, &error_body("body is not JSON"), "").await;
        return;
    };
    let model = body["model"].as_str().unwrap_or_default();
    if !state.options.models.iter().any(|m| m == model) {
        let msg = format!("The model `{model}` does not exist");
        respond(stream, 404, &error_body(&msg), "").await;
        return;
    }
    let inputs: Vec<String> = match &body["input"] {
        serde_json::Value::String(s) => vec![s.clone()],
        serde_json::Value::Array(a) => a
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect(),
        _ => vec![],
    };
    let mut dim = state.options.embedding_dim.unwrap_or(1).max(1);
    if state
        .options
        .embedding_wrong_dim_from
        .is_some_and(|n| index >= n)
    {
        dim += 1;
    }
    let data: Vec<serde_json::Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            serde_json::json!({"object": "embedding", "index": i, "embedding": bag_of_words(t, dim)})
        })
        .collect();
    let tokens: u64 = inputs.iter().map(|t| bench_core::tokens::count(t)).sum();
    state
        .embedding_inputs
        .fetch_add(inputs.len(), Ordering::SeqCst);
    state
        .embedding_tokens
        .fetch_add(tokens as usize, Ordering::SeqCst);
    let out = serde_json::json!({
        "object": "list",
        "model": model,
        "data": data,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    });
    respond(stream, 200, &out.to_string(), "").await;
}

/// A deterministic, unnormalised vector of `text`: each lowercased alphanumeric word adds +-1 to
/// one slot picked by its FNV-1a hash, so texts sharing words are similar and retrieval over these
/// vectors behaves like keyword matching. A text without words gets the first axis.
pub fn bag_of_words(text: &str, dim: usize) -> Vec<f32> {
    let dim = dim.max(1);
    let mut v = vec![0f32; dim];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        let sign = if h >> 63 == 0 { 1.0 } else { -1.0 };
        v[(h % dim as u64) as usize] += sign;
    }
    if v.iter().all(|x| *x == 0.0) {
        v[0] = 1.0;
    }
    v
}
