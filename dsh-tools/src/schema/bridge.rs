//! The schemars bridge: the schemars 1.x schema of a Rust type, turned into the subset.
