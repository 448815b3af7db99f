//! The typed constructor (spec §1.4, the runtime half of `#[tool]`): a definition whose
//! parameters and output are the bridged schemas of its argument and value types.

use super::output::OutputDecl;
use super::tool::ToolDefinition;
use crate::call::ToolRunContext;
use crate::error::ToolError;
use std::future::Future;
use std::sync::Arc;

impl ToolDefinition {
    /// A typed tool (spec §1.4, the runtime half of `#[tool]`): the parameters are the bridged
    /// schema of `A`, every call's arguments are validated against it before the body (every
    /// violation reported as one `INVALID_ARGS` failure with paths), then decoded into `A`; the
    /// body's `O` is serialized and checked against `O`'s bridged schema.
    ///
    /// ```
    /// use dsh_tools::{ToolDefinition, ToolError};
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct AddArgs {
    ///     /// first term
    ///     a: i64,
    ///     /// second term
    ///     b: i64,
    /// }
    ///
    /// let add = ToolDefinition::typed("add", "Add two numbers.", |args: AddArgs, _ctx| async move {
    ///     Ok::<_, ToolError>(args.a + args.b)
    /// })?;
    /// assert_eq!(add.parameters()["required"], serde_json::json!(["a", "b"]));
    /// # Ok::<(), dsh_tools::schema::bridge::BridgeError>(())
    /// ```
    pub fn typed<A, O, F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        body: F,
    ) -> Result<Self, crate::schema::bridge::BridgeError>
    where
        A: serde::de::DeserializeOwned + schemars::JsonSchema + Send + 'static,
        O: serde::Serialize + schemars::JsonSchema + 'static,
        F: Fn(A, ToolRunContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<O, ToolError>> + Send + 'static,
    {
        let schemas = crate::tool::typed::schemas::<A, O>(
            false,
            &None,
            crate::tool::typed::serde_names::<A>,
        )?;
        let compiled = Arc::clone(&schemas.args);
        let body = Arc::new(body);
        let mut definition = Self::from_parts(
            name.into(),
            description.into(),
            Arc::clone(&schemas.parameters),
            OutputDecl::json(schemas.output.clone()),
            move |args, ctx| {
                let compiled = Arc::clone(&compiled);
                let body = Arc::clone(&body);
                async move {
                    let decoded: A = crate::tool::typed::validate_and_decode(&compiled, &args)?;
                    drop(args);
                    crate::tool::typed::encode(body(decoded, ctx).await?)
                }
            },
        );
        definition.bridged = true;
        definition.args = Some(Arc::clone(&schemas.args));
        Ok(definition)
    }
}
