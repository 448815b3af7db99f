//! The `--server`s of `code run` and `code sdk`: what each names (a command line or a
//! streamable-HTTP URL, optionally `NAME=`), the bearer token for HTTP, and importing their
//! tools into one registry with collisions refused.
#![cfg_attr(not(all(feature = "typescript", feature = "mcp")), allow(dead_code))]

use crate::io::{InputError, printable};

/// The options every command that starts servers takes.
#[derive(clap::Args)]
pub(crate) struct ServerArgs {
    /// An MCP server: its command line, split as a shell would, or the URL of a streamable
    /// HTTP endpoint (`http://host:port/mcp`); repeatable. `NAME=CMD` names
    /// the server: its tools become `NAME_tool` (NAME: a letter, then letters, digits or
    /// `_`). A tool name two servers expose is an error unless they are named.
    #[arg(long = "server", value_name = "[NAME=]CMD")]
    pub(crate) servers: Vec<String>,
    /// Let the servers' read-only tools (`readOnlyHint`) run concurrently under
    /// `Promise.all`. Without it every imported call runs alone, in order: a server's
    /// annotations are its claims.
    #[arg(long)]
    pub(crate) trust_hints: bool,
    /// The environment variable holding the bearer token sent to every HTTP `--server`
    /// (a token never goes on the command line, where other users can read it).
    #[arg(long, value_name = "VAR")]
    pub(crate) bearer_env: Option<String>,
}

/// One `--server`, read: its name and where it is.
pub(crate) struct Server {
    name: Option<String>,
    target: Target,
}

impl Server {
    /// How messages name it: `NAME=CMD` or `CMD`, escaped for a terminal.
    fn shown(&self) -> String {
        let shown = match &self.target {
            Target::Stdio(words) => printable(&words.join(" ")),
            Target::Http(url) => printable(url),
        };
        match &self.name {
            Some(name) => format!("{name}={shown}"),
            None => shown,
        }
    }
}

/// Reads every `--server` and the token: names unique, command lines split, the token present
/// only when some server is a URL. Nothing is started.
pub(crate) fn parse(args: &ServerArgs) -> Result<(Vec<Server>, Option<String>), InputError> {
    let token = match &args.bearer_env {
        None => None,
        Some(var) => Some(bearer_token(var)?),
    };
    let mut servers: Vec<Server> = Vec::new();
    for server in &args.servers {
        let (name, line) = server_name(server);
        if let Some(name) = name
            && servers.iter().any(|s| s.name.as_deref() == Some(name))
        {
            return Err(InputError(format!(
                "--server {name}=…: two servers are named {name}"
            )));
        }
        let name = name.map(str::to_owned);
        let url = line.trim();
        if url.starts_with("http://") || url.starts_with("https://") {
            servers.push(Server {
                name,
                target: Target::Http(url.to_owned()),
            });
            continue;
        }
        let words = shlex::split(line)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| {
                InputError(format!(
                    "--server {}: not a command line",
                    printable(server)
                ))
            })?;
        servers.push(Server {
            name,
            target: Target::Stdio(words),
        });
    }
    if token.is_some() && !servers.iter().any(|s| matches!(s.target, Target::Http(_))) {
        return Err(InputError(
            "--bearer-env: no --server is an HTTP URL to send the token to".into(),
        ));
    }
    Ok((servers, token))
}

/// A multi-threaded runtime for the servers' connections.
#[cfg(all(feature = "typescript", feature = "mcp"))]
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, InputError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| InputError(format!("cannot start the async runtime: {e}")))
}

/// One server's connection and what it registered (kept alive for the run).
#[cfg(all(feature = "typescript", feature = "mcp"))]
pub(crate) type Imported = (dsh_tools::mcp::McpImport, dsh_tools::mcp::ImportedTools);

/// Connects to every server and imports its tools into `registry`, in order: a tool name
/// another server registered already is an error naming both; skipped tools and (with
/// `sdk_report`) what the SDK leaves out of each tool are told on standard error. Returns the
/// connections and how many things the SDK left out.
#[cfg(all(feature = "typescript", feature = "mcp"))]
pub(crate) async fn import_all(
    registry: &dsh_tools::Registry,
    servers: &[Server],
    token: Option<&str>,
    trust_hints: bool,
    sdk_report: bool,
) -> Result<(Vec<Imported>, usize), InputError> {
    use dsh_tools::mcp::ImportOptions;
    let mut connections = Vec::new();
    let mut dropped = 0;
    // Which server registered each name, to name both when another exposes it too.
    let mut owners: std::collections::HashMap<String, String> = Default::default();
    for server in servers {
        let shown = server.shown();
        let import = connect(&server.target, token)
            .await
            .map_err(|e| InputError(format!("--server {shown}: {e}")))?;
        let mut options = ImportOptions::default().trust_hints(trust_hints);
        if let Some(name) = &server.name {
            options = options.prefix(format!("{name}_"));
        }
        let tools = import
            .import_into(registry, options)
            .await
            .map_err(|e| InputError(format!("--server {shown}: {e}")))?;
        let collisions = tools.collisions();
        if let Some(taken) = collisions.first() {
            let tool = printable(taken);
            let more = match collisions.len() - 1 {
                0 => String::new(),
                n => format!(" (and {n} more)"),
            };
            let first = owners.get(taken.as_str()).map_or_else(
                || "a name the registry reserves".to_owned(),
                |owner| format!("--server {owner}"),
            );
            return Err(InputError(format!(
                "tool {tool}{more} is exposed by both {first} and --server {shown}; name \
                 the servers to keep both (--server a=CMD makes its tools a_{tool})"
            )));
        }
        for local in tools.names() {
            owners.insert(local, shown.clone());
        }
        for (name, why) in tools.skipped() {
            crate::io::warn(&format!(
                "--server {shown}: tool {} skipped: {}",
                printable(&name),
                printable(&why)
            ));
        }
        if sdk_report {
            for (name, what) in tools.sdk_dropped() {
                dropped += 1;
                warn_dropped(&name, &what);
            }
        }
        connections.push((import, tools));
    }
    Ok((connections, dropped))
}

/// One line on standard error for something the SDK leaves out of a tool's schema.
pub(crate) fn warn_dropped(tool: &str, what: &dsh_tools::code::Dropped) {
    crate::io::warn(&format!(
        "tool {}: {} {}: {}",
        printable(tool),
        what.schema,
        printable(&what.path),
        printable(&what.message)
    ));
}

/// Where a `--server` is.
pub(crate) enum Target {
    /// A command line, started and spoken to over stdio.
    Stdio(Vec<String>),
    /// A streamable HTTP endpoint.
    Http(String),
}

#[cfg(all(feature = "typescript", feature = "mcp"))]
async fn connect(
    target: &Target,
    token: Option<&str>,
) -> Result<dsh_tools::mcp::McpImport, String> {
    use dsh_tools::mcp::McpImport;
    match target {
        Target::Stdio(words) => {
            let mut command = tokio::process::Command::new(&words[0]);
            command.args(&words[1..]).kill_on_drop(true);
            McpImport::connect_stdio(command)
                .await
                .map_err(|e| e.to_string())
        }
        #[cfg(feature = "mcp-http")]
        Target::Http(url) => match token {
            Some(token) => McpImport::with_limits(Default::default())
                .connect_http_bearer(url, token)
                .await
                .map_err(|e| e.to_string()),
            None => McpImport::connect_http(url)
                .await
                .map_err(|e| e.to_string()),
        },
        #[cfg(not(feature = "mcp-http"))]
        Target::Http(_) => {
            let _ = token;
            Err("an HTTP server needs the CLI built with --features mcp-http".to_owned())
        }
    }
}

/// The token in `var`: set, not empty, one line.
fn bearer_token(var: &str) -> Result<String, InputError> {
    let shown = crate::io::printable(var);
    match std::env::var(var) {
        Err(std::env::VarError::NotPresent) => Err(InputError(format!(
            "--bearer-env {shown}: the variable is not set"
        ))),
        Err(std::env::VarError::NotUnicode(_)) => Err(InputError(format!(
            "--bearer-env {shown}: the variable is not text"
        ))),
        Ok(token) if token.trim().is_empty() => Err(InputError(format!(
            "--bearer-env {shown}: the variable is empty"
        ))),
        Ok(token) if token.trim().contains(char::is_control) => Err(InputError(format!(
            "--bearer-env {shown}: the token holds control characters"
        ))),
        Ok(token) => Ok(token.trim().to_owned()),
    }
}

/// `NAME=CMD`'s name and command; `None` and the whole text when it does not start with a name
/// (a letter, then letters, digits or `_`) and `=`.
fn server_name(server: &str) -> (Option<&str>, &str) {
    let Some((name, line)) = server.split_once('=') else {
        return (None, server);
    };
    let named = name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !line.trim().is_empty();
    if named {
        (Some(name), line)
    } else {
        (None, server)
    }
}
