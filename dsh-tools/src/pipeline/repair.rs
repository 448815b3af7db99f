//! The repair stage (issue 38, part 4): the registry's repairs tried on arguments that do not
//! validate, before pre-execute (hooks, approvals and guards judge the arguments that will
//! run), kept only when the repaired arguments validate against the tool's parameters, and
//! told to the model (and to observers, in the result's contexts) with what was repaired.

use super::Call;
use crate::call::{InvalidCall, Repair, RepairHook};
use crate::content::{ContentBlock, UserMessage};
use crate::schema::{CompiledSchema, Root};
use serde_json::{Map, Value};

impl crate::Registry {
    /// Tries the registry's repairs on `call`'s arguments when they do not validate: the
    /// built-in ones in the order switched on (each on the last one's result), then the host's
    /// hook on the arguments as sent. The first result that validates replaces the arguments,
    /// with a context telling the model what was repaired; otherwise the call goes on as sent.
    pub(super) fn repair_arguments(
        &self,
        call: &mut Call,
        repairs: &[Repair],
        hook: Option<&RepairHook>,
    ) {
        let Some(tool) = call.executable.clone() else {
            return;
        };
        let definition = tool.definition();
        let own;
        let compiled = match definition.args_validator() {
            Some(validator) => validator.compiled(),
            None => match CompiledSchema::compile(definition.parameters()) {
                Ok(compiled) => {
                    own = compiled;
                    &own
                }
                // Outside the subset: the body judges the arguments, as it always has.
                Err(_) => return,
            },
        };
        let Some(arguments) = call.exec.arguments() else {
            return;
        };
        let violations = compiled.validate_at(arguments, Root::Parameters);
        if violations.is_empty() {
            return;
        }
        let parameters = definition.parameters();
        let mut current = crate::json::clone_deep(arguments);
        let mut applied = Vec::new();
        for repair in repairs {
            let Some(next) = repair.apply(&current, parameters) else {
                continue;
            };
            crate::json::free(std::mem::replace(&mut current, next));
            applied.push(repair.name());
            if compiled.validate_at(&current, Root::Parameters).is_empty() {
                return commit(call, current, &applied);
            }
        }
        crate::json::free(current);
        let Some(hook) = hook else {
            return;
        };
        let Some(arguments) = call.exec.arguments() else {
            return;
        };
        let invalid = InvalidCall {
            tool: &call.exec.name,
            arguments,
            violations: &violations,
            parameters,
        };
        let repaired = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            hook(&invalid)
        })) {
            Ok(repaired) => repaired,
            Err(payload) => {
                tracing::warn!(tool = %call.exec.name, "the repair hook panicked: nothing repaired");
                crate::error::drop_panic_payload(payload);
                None
            }
        };
        let Some(repaired) = repaired else {
            return;
        };
        if crate::json::is_lossless(&repaired)
            && compiled.validate_at(&repaired, Root::Parameters).is_empty()
        {
            commit(call, repaired, &["on_invalid_call"]);
        } else {
            crate::json::free(repaired);
        }
    }
}

/// Runs `call` with `repaired` arguments, and tells the model (a context) what was repaired.
fn commit(call: &mut Call, repaired: Value, applied: &[&str]) {
    let name = call.exec.name.clone();
    let shown = crate::json::to_compact_string(&repaired);
    let shown: String = shown.chars().take(2000).collect();
    let context = UserMessage::new(
        format!("{}:repaired-arguments", call.exec.call_id),
        vec![ContentBlock::text(format!(
            "The arguments of this call of tool \"{name}\" did not validate and were repaired ({}): {shown}",
            applied.join(", ")
        ))],
        {
            let mut source = Map::new();
            source.insert("kind".to_owned(), "repair".into());
            source.insert("tool".to_owned(), name.as_str().into());
            source.insert(
                "repairs".to_owned(),
                Value::Array(applied.iter().map(|r| Value::from(*r)).collect()),
            );
            Value::Object(source)
        },
    );
    call.replace_arguments(repaired, context);
}
