//! The typed path's shared machinery: the schemas of an `(Args, Output)` pair, bridged and
//! compiled once per process, argument validation and decoding, and output encoding. Used by
//! [`ToolDefinition::typed`](crate::ToolDefinition::typed) and by `#[tool]` types alike.

use super::aliases;

pub(crate) use aliases::serde_names;

use crate::error::ToolError;
use crate::schema::bridge::{self, BridgeError};
use crate::schema::fast::ArgsValidator;
use crate::schema::fast::validator::Generated;
use crate::schema::{CompiledSchema, ToolArgsError};
use rustc_hash::FxHashMap;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::any::TypeId;
use std::sync::{Arc, Mutex, OnceLock};

/// The bridged and compiled schemas of one `(Args, Output)` pair.
pub(crate) struct TypedSchemas {
    pub(crate) parameters: Arc<Value>,
    pub(crate) output: Value,
    /// The compiled parameters, and the generated check where it matches them.
    pub(crate) args: Arc<ArgsValidator>,
}

/// `(Args, Output, allow_unknown, has a generated check)`.
type Cache = Mutex<FxHashMap<(TypeId, TypeId, bool, bool), Arc<TypedSchemas>>>;

/// The schemas of `A` and `O`, bridged and compiled once per process (a pure function of the
/// types, so the memo is not state).
pub(crate) fn schemas<A, O>(
    allow_unknown: bool,
    generated: &Option<Generated>,
    serde_names: fn() -> std::collections::BTreeSet<&'static str>,
) -> Result<Arc<TypedSchemas>, BridgeError>
where
    A: JsonSchema + 'static,
    O: JsonSchema + 'static,
{
    // Generic only where it must be: the rest is compiled once, not once per tool.
    schemas_erased(
        [TypeId::of::<A>(), TypeId::of::<O>()],
        allow_unknown,
        generated,
        Erased {
            parameters: bridge::schema_for_args::<A>,
            output: bridge::schema_for_serialize::<O>,
            serde_names,
        },
        [std::any::type_name::<A>(), std::any::type_name::<O>()],
    )
}

/// The per-type functions [`schemas_erased`] calls.
struct Erased {
    parameters: fn(bool) -> Result<Value, BridgeError>,
    output: fn() -> Result<Value, BridgeError>,
    serde_names: fn() -> std::collections::BTreeSet<&'static str>,
}

/// `#[serde(alias)]` names on the arguments (schemars leaves them out): the validator would
/// refuse each as undeclared, so the alias could never be used. With unknown arguments allowed
/// they pass and decode, so they are fine there.
fn refuse_aliases(
    parameters: &Value,
    serde_names: fn() -> std::collections::BTreeSet<&'static str>,
    args_name: &str,
) -> Result<(), BridgeError> {
    // A part of the schema that admits any value (`#[schemars(with = "Value")]` over a struct)
    // may hold names the schema cannot list: nothing is refused there.
    if aliases::admits_anything(parameters) {
        return Ok(());
    }
    let declared = aliases::schema_names(parameters);
    let dead: Vec<String> = serde_names()
        .into_iter()
        .filter(|name| !declared.contains(name))
        .map(|name| format!("`{name}`"))
        .collect();
    if dead.is_empty() {
        return Ok(());
    }
    Err(BridgeError::internal(format!(
        "`{args_name}` accepts names its schema does not declare: {} (a `#[serde(alias)]` on a \
         field or variant: schemars leaves aliases out of the schema, so the model never sees \
         them and the validator refuses them); remove the alias, or rename the field or variant \
         to the name the model should use",
        dead.join(", ")
    )))
}

fn schemas_erased(
    types: [TypeId; 2],
    allow_unknown: bool,
    generated: &Option<Generated>,
    erased: Erased,
    [args_name, output_name]: [&str; 2],
) -> Result<Arc<TypedSchemas>, BridgeError> {
    let key = (types[0], types[1], allow_unknown, generated.is_some());
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(found) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(Arc::clone(found));
    }
    let parameters = (erased.parameters)(allow_unknown)?;
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(BridgeError::internal(format!(
            "a tool's parameters must be an object, and `{args_name}` is not a struct with named \
             fields (for one argument, write the inline form: document the parameter with `///`)"
        )));
    }
    if !allow_unknown {
        refuse_aliases(&parameters, erased.serde_names, args_name)?;
    }
    let output = (erased.output)().map_err(|e| e.of_output(output_name))?;
    // The bridge guarantees a supported schema; compile cannot fail on its output.
    let compiled = CompiledSchema::compile(&parameters)
        .map_err(|e| BridgeError::internal(format!("bridged parameters do not compile: {e}")))?;
    let args = Arc::new(ArgsValidator::new(
        &parameters,
        Arc::new(compiled),
        *generated,
        allow_unknown,
        args_name,
    ));
    let schemas = Arc::new(TypedSchemas {
        parameters: Arc::new(parameters),
        output,
        args,
    });
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, Arc::clone(&schemas));
    Ok(schemas)
}

use crate::json::MAX_DECODE_DEPTH;

/// Validates `args` against `compiled` (every violation in one `INVALID_ARGS` error), then
/// decodes them.
pub(crate) fn validate_and_decode<A: DeserializeOwned>(
    validator: &ArgsValidator,
    args: &Value,
) -> Result<A, ToolError> {
    check_args(validator, args)?;
    // `check_args` refused deep arguments where `A` could recurse.
    crate::json::decode_unbounded(args).map_err(decode_error)
}

/// The validation half of [`validate_and_decode`], compiled once.
fn check_args(validator: &ArgsValidator, args: &Value) -> Result<(), ToolError> {
    if let Err(violations) = validator.validate(args) {
        return Err(ToolArgsError::new(violations).into());
    }
    let compiled = validator.compiled();
    // serde decodes (and the author's type drops) a `serde_json::Value` recursively: where the
    // schema admits any value, refuse what a serde_json parser would refuse too.
    if compiled.admits_any && crate::json::deeper_than(args, MAX_DECODE_DEPTH) {
        return Err(ToolError::coded(
            "ToolArgsError",
            crate::error::codes::INVALID_ARGS,
            format!("invalid arguments: the arguments nest deeper than {MAX_DECODE_DEPTH} levels"),
        ));
    }
    Ok(())
}

fn decode_error(e: serde_json::Error) -> ToolError {
    ToolError::new(format!(
        "validated arguments did not decode (a dsh-tools bug): {e}"
    ))
}

/// The output value as JSON.
pub(crate) fn encode<O: Serialize>(out: O) -> Result<Value, ToolError> {
    serde_json::to_value(out).map_err(|e| {
        ToolError::coded(
            "ToolOutputError",
            crate::error::codes::INVALID_TOOL_OUTPUT,
            format!("tool output is not JSON: {e}"),
        )
    })
}
