//! [`McpServer::serve_io`](crate::mcp::McpServer::serve_io): newline-delimited JSON-RPC over byte
//! streams (standard input and output, a socket), with what rmcp's own line reader leaves out.
//!
//! - **Every dropped line is answered.** rmcp ignores a line that is not JSON and answers one it
//!   cannot decode with an id-less error, so the client's request waits for good. Here a line
//!   that is not JSON gets `-32700 Parse error` (id `null`); a request rmcp could not decode
//!   (arguments that are not an object, a malformed envelope, nesting past serde's 128 levels,
//!   a line over 16 MiB) gets `-32602` / `-32600` with its own id when the id can be read.
//! - **Backpressure.** At most [`MAX_IN_FLIGHT`] requests are read and not yet answered: a
//!   client that sends and never reads stops being read, instead of the server buffering every
//!   answer (3,000 unread 100 KB answers held 591 MB).
//!
//! Two small tasks sit between the streams and rmcp, one per direction; rmcp sees the same
//! lines it would have read.

use super::server::{McpServer, ServeError};
use super::tasks_2025;
use crate::mcp::wire::{
    MAX_DEPTH, MAX_LINE, error_line, nesting, read_line, request_id, top_level_id,
};
use rmcp::RoleServer;
use rmcp::service::ServiceExt;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Requests read and not yet answered, per connection, before the server stops reading.
pub const MAX_IN_FLIGHT: usize = 64;

/// Requests in flight: one permit each, released when the answer is written or the client
/// cancels the request.
struct InFlight {
    permits: Arc<Semaphore>,
    held: Mutex<HashMap<String, OwnedSemaphorePermit>>,
    /// An `initialize` was read and its answer not yet declared the tasks (see `tasks_2025`).
    initializing: AtomicBool,
}

impl InFlight {
    fn release(&self, id: &str) {
        self.held
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }
}

impl McpServer {
    /// Serves one client over standard input and output until it disconnects, as
    /// [`serve_io`](Self::serve_io) does. When both are pipes (how MCP clients start servers),
    /// they are read and written on tokio's reactor, not its blocking pool, so tools that
    /// block on that pool cannot starve the transport.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        let (reader, writer) = rmcp::transport::io::stdio_pipes();
        self.serve_io(reader, writer).await
    }

    /// Serves one client speaking newline-delimited JSON-RPC over a byte stream until it
    /// disconnects. Beyond rmcp's own transport: every line it would drop gets an answer (`-32700`
    /// for a line that is not JSON; `-32602` / `-32600` with the request's id for arguments that
    /// are not an object, a malformed envelope, nesting past 126 levels or a line over 16 MiB),
    /// and at most [`MAX_IN_FLIGHT`](crate::mcp::MAX_IN_FLIGHT) requests are read ahead of their
    /// answers, so a client that never reads cannot make the server buffer without bound.
    ///
    /// ```no_run
    /// # async fn run(server: dsh_tools::mcp::McpServer) -> Result<(), Box<dyn std::error::Error>> {
    /// let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    /// let (socket, _) = listener.accept().await?;
    /// let (reader, writer) = socket.into_split();
    /// server.serve_io(reader, writer).await?;
    /// # Ok(()) }
    /// ```
    pub async fn serve_io<R, W>(self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        serve(self, reader, writer).await
    }
}

pub(crate) async fn serve<R, W>(server: McpServer, reader: R, writer: W) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (to_rmcp, rmcp_in) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
    let (answers, answers_rx) = mpsc::channel::<String>(16);
    let flight = Arc::new(InFlight {
        permits: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        held: Mutex::new(HashMap::new()),
        initializing: AtomicBool::new(false),
    });
    let tasks = server.task_view().is_some();
    let input = tokio::spawn(read_input(
        reader,
        to_rmcp,
        answers,
        Arc::clone(&flight),
        tasks,
    ));
    let output = tokio::spawn(write_output(from_rmcp, answers_rx, writer, flight, tasks));
    let outcome = match server.for_session().serve((rmcp_in, rmcp_out)).await {
        Ok(running) => running
            .waiting()
            .await
            .map(|_| ())
            .map_err(ServeError::Session),
        Err(e) => Err(ServeError::Handshake(Box::new(e))),
    };
    input.abort();
    let _ = output.await;
    outcome
}

/// What to do with one line from the client.
enum Verdict {
    /// Pass it to rmcp; `request`: the raw id of a request to count in flight; `cancels`: the
    /// raw id of a request the client cancelled; `renamed`: the line to pass instead (a
    /// 2025-11-25 task request under the name rmcp hands the server, see `tasks_2025`).
    Pass {
        request: Option<String>,
        cancels: Option<String>,
        renamed: Option<Vec<u8>>,
        /// An `initialize` request (its answer may declare the 2025-11-25 tasks).
        initialize: bool,
    },
    /// Drop it and write this answer instead.
    Answer(String),
}

/// A request id as rmcp keys it (an integer or a string), whatever its JSON spelling.
fn id_key(id: &Value) -> Option<String> {
    match id {
        Value::String(_) => Some(id.to_string()),
        Value::Number(n) => n
            .as_i64()
            .map(|i| i.to_string())
            .or_else(|| n.as_u64().map(|u| u.to_string()))
            .or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
                    .map(|f| (f as i64).to_string())
            }),
        _ => None,
    }
}

/// `tasks`: whether the server serves tasks (2025-11-25 task requests are renamed).
fn check(text: &[u8], tasks: bool) -> Verdict {
    let pass = Verdict::Pass {
        request: None,
        cancels: None,
        renamed: None,
        initialize: false,
    };
    // rmcp accepts a line that starts with a UTF-8 byte-order mark.
    let text = text
        .strip_prefix(b"\xef\xbb\xbf".as_slice())
        .unwrap_or(text);
    if nesting(text) > MAX_DEPTH {
        let id = request_id(text);
        let message = format!("Invalid Request: the message nests deeper than {MAX_DEPTH} levels");
        return Verdict::Answer(error_line(id.as_deref(), -32600, &message));
    }
    let Ok(value) = serde_json::from_slice::<Value>(text) else {
        return Verdict::Answer(error_line(None, -32700, "Parse error"));
    };
    let Value::Object(message) = &value else {
        let why = "Invalid Request: a message is one JSON object (batches are not part of MCP)";
        return Verdict::Answer(error_line(None, -32600, why));
    };
    let method = message.get("method").and_then(Value::as_str);
    match (method, message.get("id")) {
        (Some(_), Some(id)) => {
            if !(id.is_string() || id.is_i64() || id.is_u64()) {
                let why = "Invalid Request: the id must be a string or an integer";
                return Verdict::Answer(error_line(None, -32600, why));
            }
            let id = id.to_string();
            // rmcp reads a `tools/call` it cannot decode as a custom request and answers
            // "method not found"; the fault is the params.
            if let Some(why) = params_fault(method.unwrap_or_default(), message.get("params")) {
                return Verdict::Answer(error_line(Some(&id), -32602, &why));
            }
            if tasks && let Some(refused) = super::tasks::listen_refusal(message, &id) {
                return Verdict::Answer(refused);
            }
            let decoded =
                serde_json::from_slice::<rmcp::service::RxJsonRpcMessage<RoleServer>>(text);
            match decoded {
                Ok(_) => Verdict::Pass {
                    request: Some(id),
                    cancels: None,
                    renamed: tasks.then(|| renamed(message)).flatten(),
                    initialize: method == Some("initialize"),
                },
                Err(e) if message.get("jsonrpc") != Some(&Value::from("2.0")) => {
                    let why = format!("Invalid Request: {e}");
                    Verdict::Answer(error_line(Some(&id), -32600, &why))
                }
                Err(e) => {
                    let why = format!("Invalid params: {e}");
                    Verdict::Answer(error_line(Some(&id), -32602, &why))
                }
            }
        }
        (Some("notifications/cancelled"), None) => Verdict::Pass {
            renamed: None,
            initialize: false,
            request: None,
            cancels: message
                .get("params")
                .and_then(|p| p.get("requestId"))
                .and_then(id_key),
        },
        _ => pass,
    }
}

/// `message` under the name rmcp hands the server a 2025-11-25 task request under, if it is
/// one (copied only then).
fn renamed(message: &serde_json::Map<String, Value>) -> Option<Vec<u8>> {
    let method = message.get("method").and_then(Value::as_str)?;
    let candidate = match method {
        "tools/call" => message
            .get("params")
            .is_some_and(|p| p.get("task").is_some()),
        "tools/list" | "tasks/get" | "tasks/cancel" => true,
        _ => false,
    };
    if !candidate {
        return None;
    }
    let mut message = message.clone();
    tasks_2025::rename(&mut message).then(|| serde_json::to_vec(&message).ok())?
}

/// What is wrong with the params of a `tools/*` request, if anything.
fn params_fault(method: &str, params: Option<&Value>) -> Option<String> {
    let params = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => return Some("Invalid params: params must be an object".to_owned()),
    };
    match method {
        "tools/call" => {
            let params = params?;
            if !params.get("name").is_some_and(Value::is_string) {
                return Some("Invalid params: tools/call needs a string `name`".to_owned());
            }
            match params.get("arguments") {
                None | Some(Value::Object(_) | Value::Null) => None,
                Some(_) => Some("Invalid params: tool arguments must be an object".to_owned()),
            }
        }
        "tools/list" => match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::String(_) | Value::Null) => None,
            Some(_) => Some("Invalid params: the cursor must be a string".to_owned()),
        },
        _ => None,
    }
}

async fn read_input<R>(
    reader: R,
    mut to_rmcp: tokio::io::DuplexStream,
    answers: mpsc::Sender<String>,
    flight: Arc<InFlight>,
    tasks: bool,
) where
    R: AsyncRead + Unpin,
{
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::new();
    while let Some(oversized) = read_line(&mut reader, &mut line, MAX_LINE).await {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let verdict = if oversized {
            let id = request_id(&line);
            let why = format!("Invalid Request: the message is longer than {MAX_LINE} bytes");
            Verdict::Answer(error_line(id.as_deref(), -32600, &why))
        } else {
            check(&line, tasks)
        };
        match verdict {
            Verdict::Answer(answer) => {
                if answers.send(answer).await.is_err() {
                    break;
                }
            }
            Verdict::Pass {
                request,
                cancels,
                renamed,
                initialize,
            } => {
                if initialize {
                    flight.initializing.store(true, Ordering::Release);
                }
                if let Some(id) = cancels {
                    flight.release(&id);
                }
                if let Some(id) = request {
                    // The id of a request still in flight: rmcp would answer only one of the
                    // two, so the other is refused here.
                    let busy = flight
                        .held
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .contains_key(&id);
                    if busy {
                        let why = "Invalid Request: a request with this id is still in flight";
                        if answers
                            .send(error_line(Some(&id), -32600, why))
                            .await
                            .is_err()
                        {
                            break;
                        }
                        continue;
                    }
                    // Waits while MAX_IN_FLIGHT answers are unwritten: the client is not
                    // reading, so neither do we. Closed when the output side stops.
                    let Ok(permit) = Arc::clone(&flight.permits).acquire_owned().await else {
                        break;
                    };
                    flight
                        .held
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(id, permit);
                }
                if let Some(renamed) = renamed {
                    line = renamed;
                }
                line.push(b'\n');
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
        }
        if line.capacity() > 1024 * 1024 {
            line.shrink_to(64 * 1024);
        }
    }
    let _ = to_rmcp.shutdown().await;
}

async fn write_output<W>(
    from_rmcp: tokio::io::DuplexStream,
    mut answers: mpsc::Receiver<String>,
    mut writer: W,
    flight: Arc<InFlight>,
    tasks: bool,
) where
    W: AsyncWrite + Unpin,
{
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let mut answering = true;
    loop {
        tokio::select! {
            // Cancel-safe: a partial line stays in `line` for the next turn.
            read = from_rmcp.read_until(b'\n', &mut line) => {
                if !matches!(read, Ok(n) if n > 0) {
                    // rmcp is done: our own answers still go out, until the input side ends.
                    while let Some(answer) = answers.recv().await {
                        if writer.write_all(answer.as_bytes()).await.is_err() {
                            break;
                        }
                    }
                    let _ = writer.flush().await;
                    break;
                }
                let answered = top_level_id(&line);
                // Below 2026-07-28 the tasks capability is declared (rmcp cannot say it).
                // One process serves one client: `tasks/list` lists its own.
                // Read only while an `initialize` waits for its answer, not every line.
                if tasks
                    && answered.is_some()
                    && flight.initializing.load(Ordering::Acquire)
                    && let Some(declared) = tasks_2025::declare_bytes(&line, true)
                {
                    line = declared;
                    flight.initializing.store(false, Ordering::Release);
                }
                let written = writer.write_all(&line).await.is_ok() && writer.flush().await.is_ok();
                if let Some(id) = answered {
                    flight.release(&id);
                }
                line.clear();
                if line.capacity() > 1024 * 1024 {
                    line.shrink_to(64 * 1024);
                }
                if !written {
                    break;
                }
            }
            answer = answers.recv(), if answering => {
                let Some(answer) = answer else {
                    answering = false;
                    continue;
                };
                if writer.write_all(answer.as_bytes()).await.is_err() || writer.flush().await.is_err() {
                    break;
                }
            }
        }
    }
    // The input side may be waiting for a permit: nothing will release one any more.
    flight.permits.close();
    let _ = writer.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str) -> Value {
        match check(text.as_bytes(), false) {
            Verdict::Answer(line) => serde_json::from_str(&line).unwrap(),
            Verdict::Pass { .. } => panic!("{text} was passed on"),
        }
    }

    #[test]
    fn lines_rmcp_would_drop_are_answered_with_their_id() {
        assert_eq!(answer("{not json")["error"]["code"], -32700);
        assert_eq!(answer("{not json")["id"], Value::Null);
        let args = answer(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add","arguments":[2,3]}}"#,
        );
        assert_eq!(args["id"], 7);
        assert_eq!(args["error"]["code"], -32602);
        let envelope = answer(r#"{"id":"x","method":"tools/list"}"#);
        assert_eq!(envelope["id"], "x");
        assert_eq!(envelope["error"]["code"], -32600);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}{}}}"#,
            "[".repeat(1000),
            "]".repeat(1000)
        );
        assert_eq!(answer(&deep)["id"], 3);
        assert_eq!(answer("[1,2]")["error"]["code"], -32600);
    }

    #[test]
    fn ids_are_keyed_as_rmcp_reads_them() {
        assert_eq!(id_key(&serde_json::json!(1.0)).as_deref(), Some("1"));
        assert_eq!(id_key(&serde_json::json!(7)).as_deref(), Some("7"));
        assert_eq!(
            id_key(&serde_json::json!("a\"b")).as_deref(),
            Some(r#""a\"b""#)
        );
        assert_eq!(id_key(&serde_json::json!(1.5)), None);
        // A cancellation spelled `1.0` releases request 1.
        let Verdict::Pass { cancels, .. } = check(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1.0}}"#,
            false,
        ) else {
            panic!("a cancellation passes");
        };
        assert_eq!(cancels.as_deref(), Some("1"));
        // A byte-order mark is not a parse error.
        let bom = b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
        assert!(matches!(
            check(bom, false),
            Verdict::Pass {
                request: Some(_),
                ..
            }
        ));
    }

    #[test]
    fn requests_and_cancellations_are_counted() {
        let Verdict::Pass { request, .. } =
            check(br#"{"jsonrpc":"2.0","id":"a\"b","method":"ping"}"#, false)
        else {
            panic!("a ping passes");
        };
        assert_eq!(request.as_deref(), Some(r#""a\"b""#));
        let Verdict::Pass {
            cancels, request, ..
        } = check(
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#,
            false,
        )
        else {
            panic!("a cancellation passes");
        };
        assert_eq!((request, cancels.as_deref()), (None, Some("4")));
    }

    #[test]
    fn task_requests_below_2026_are_renamed_only_when_tasks_are_served() {
        let call =
            br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t","task":{}}}"#;
        let Verdict::Pass { renamed, .. } = check(call, true) else {
            panic!("a call passes");
        };
        let renamed: Value = serde_json::from_slice(&renamed.expect("renamed")).unwrap();
        assert_eq!(renamed["method"], tasks_2025::CALL);
        assert_eq!(renamed["id"], 9);
        let Verdict::Pass { renamed, .. } = check(call, false) else {
            panic!("a call passes");
        };
        assert!(renamed.is_none());
        let plain = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"t"}}"#;
        let Verdict::Pass { renamed, .. } = check(plain, true) else {
            panic!("a call passes");
        };
        assert!(renamed.is_none());
    }
}
