//! Provider dialects: the same tools, correct for OpenAI (Chat Completions and Responses),
//! Anthropic, Gemini (JSON Schema or the OpenAPI subset) and DeepSeek, both ways.
//!
//! A [`Dialect`] is data plus a transform, chosen per request:
//! [`ProviderExport::provider_tools`] exports the tools an agent sees
//! as the exact wire objects of the provider's `tools` array, every change reported
//! ([`Change`]), and what cannot be expressed is an error naming the path and the fix
//! ([`ExportError`]), never a silently broken request. The returned [`ProviderTools`] then
//! turns the model's reply into calls ([`ProviderTools::parse_calls`]: names mapped back,
//! strict-mode nulls restored to "absent", malformed argument strings made `INVALID_ARGS`
//! failures) and results into the provider's messages ([`format_results`]).
//! Streamed replies are assembled call by call as they arrive ([`ProviderTools::call_stream`],
//! [`stream`]). No HTTP client is involved.
//!
//! ```
//! use dsh_tools::provider::{Dialect, Provider};
//! use dsh_tools::provider::ProviderExport;
//! use dsh_tools::{Registry, ToolDefinition, ToolError};
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct ReadArgs {
//!     /// File path
//!     path: String,
//!     /// First line, 1-based
//!     offset: Option<u32>,
//!     /// Most lines
//!     #[serde(default)]
//!     limit: u32,
//! }
//!
//! let registry = Registry::new();
//! let read = ToolDefinition::typed("read_file", "Read a file.", |a: ReadArgs, _| async move {
//!     Ok::<_, ToolError>(format!("{} from {:?}, {} lines", a.path, a.offset, a.limit))
//! })?;
//! registry.register(read)?;
//!
//! let tools = registry.provider_tools(None, Dialect::strict(Provider::OpenAiChat))?;
//! let entry = &tools.entries()[0];
//! assert_eq!(entry["function"]["strict"], json!(true));
//! assert_eq!(entry["function"]["parameters"]["required"], json!(["path", "offset", "limit"]));
//! assert_eq!(entry["function"]["parameters"]["additionalProperties"], json!(false));
//!
//! // The model answers with a strict-mode call. `limit` was optional and not nullable, so its
//! // `null` means "absent"; `offset` always admitted null, so its null stays (both are `None`).
//! let reply = json!({"choices": [{"message": {"tool_calls": [{"id": "call_1", "type": "function",
//!     "function": {"name": "read_file",
//!                  "arguments": "{\"path\":\"a.rs\",\"offset\":null,\"limit\":null}"}}]}}]});
//! let calls = tools.parse_calls(&reply)?;
//! assert_eq!(calls[0].arguments(), Some(&json!({"path": "a.rs", "offset": null})));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! | transform | where | kind |
//! |---|---|---|
//! | every property required, optional ones nullable (a `null` read back as absent), `additionalProperties: false` on every object | OpenAI and DeepSeek strict | closed |
//! | `additionalProperties: false` on every object | Anthropic strict | closed |
//! | `oneOf` → `anyOf` | strict modes, Gemini, DeepSeek | loosened (our validator checks the original) |
//! | `const` → one-value `enum` | strict modes, Gemini | rewritten |
//! | `T` or null → `nullable: true`; upper-case types; string enums only | `gemini-openapi` | rewritten |
//! | a keyword outside the grammar (`minLength` for Anthropic strict, `uniqueItems` for OpenAI strict, …) | per dialect | moved into the description, still enforced |
//! | `title` / `default` / `examples` outside the grammar | per dialect | dropped |
//! | a top-level union | Anthropic, strict modes | error: wrap it in an object property |
//! | a map (schema-valued `additionalProperties`) | strict modes, `gemini-openapi` | error: a list of `{key, value}` |
//! | objects nested over 10 levels, over 5,000 properties, over 1,000 enum values | OpenAI strict | error |
//! | a name outside the provider's rule | all | mapped (`.` → `_`, cut to length), reversibly |

mod calls;
mod dialect;
mod entry;
mod export;
mod names;
mod parameters;
mod restore;
mod results;
mod search;
pub mod stream;
mod transform;

pub use calls::{ParseError, ParsedCall};
pub use dialect::{Dialect, MAX_EXPORT_DEPTH, Provider, UnknownDialect};
pub use export::{ExportError, ExportedTool, ProviderExport, ProviderTools};
pub use parameters::{export_parameters, export_tool, lint, restore_arguments};
pub use results::format_results;
pub use search::ToolSearch;
pub use stream::{CallStream, StreamError, StreamUpdate, StreamedCall};
pub use transform::{Change, ChangeKind, Problem};
