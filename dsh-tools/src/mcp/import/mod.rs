//! Importing a server's tools into a registry: connecting (`connect`), the filter in front of
//! rmcp's decoder (`filter`), keeping the registry in step with the server's list (`sync`), and
//! the options and limits of an import (`options`), the questions a server asks during a
//! call, put to our person (`asks`), a call the server answered with a task, awaited
//! (`task`), and the client spans and metrics of the calls it sends (`trace`).

mod asks;
pub(super) mod connect;
pub(super) mod filter;
pub(super) mod options;
pub(super) mod sync;
mod task;
mod trace;
