//! Runnable examples for `dsh-tools` (see `quickstart.rs`).
