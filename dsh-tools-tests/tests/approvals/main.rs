//! Approvals that reach the person (issue 33): answers remembered and edited, deferred
//! approvals resumed exactly once (in memory and in Redis), and approvals inside Code Mode
//! programs. One test binary; each file is one part.

#[path = "../common/stack.rs"]
mod stack;

mod deferred;
#[cfg(feature = "code")]
mod programs;
#[cfg(feature = "mcp")]
mod redis;
mod remembered;
