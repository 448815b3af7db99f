//! Nothing here: the trybuild suite is `tests/ui.rs` (see the manifest for why it is a crate
//! of its own).
