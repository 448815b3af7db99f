//! The future and result types every hook shares.

use crate::error::ToolError;
use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a middleware hook returns: its decision or result, or an error that fails the call.
pub type HookResult<T> = Result<T, ToolError>;
