//! Shared input handling for the dsh-tools fuzz targets.
//!
//! Every target reads its input as JSON text. Nesting depth is unbounded (serde_json's
//! recursion limit is disabled and `serde_stacker` grows the parser's stack on the heap), so the
//! library's iterative walks see the deep values they claim to handle. Parsed values are freed
//! with [`dsh_tools::json::drop_deep`]: `serde_json::Value`'s own `Drop` recurses once per level.

use dsh_tools::json::drop_deep;
use serde::Deserialize;
use serde_json::Value;

/// A parsed value that is freed without recursion, even when a check panics past it.
pub struct Deep(Option<Value>);

impl Deep {
    /// Wraps a value so that it is freed with `drop_deep`.
    pub fn new(value: Value) -> Self {
        Self(Some(value))
    }
}

impl std::ops::Deref for Deep {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.0.as_ref().expect("value present until drop")
    }
}

impl Drop for Deep {
    fn drop(&mut self) {
        if let Some(v) = self.0.take() {
            drop_deep(v);
        }
    }
}

/// Parses `data` as one JSON document of any depth; `None` for anything that is not JSON.
pub fn parse_json(data: &[u8]) -> Option<Deep> {
    let mut de = serde_json::Deserializer::from_slice(data);
    de.disable_recursion_limit();
    let value = Value::deserialize(serde_stacker::Deserializer::new(&mut de)).ok()?;
    let value = Deep::new(value);
    de.end().ok()?;
    Some(value)
}

/// Whether an invariant check that goes beyond the documented contract is switched on
/// (`DSH_FUZZ_EXTRA=1`). Off by default so the default runs only stop on contract violations.
pub fn extra_checks() -> bool {
    use std::sync::OnceLock;
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("DSH_FUZZ_EXTRA").is_some_and(|v| v == "1"))
}
