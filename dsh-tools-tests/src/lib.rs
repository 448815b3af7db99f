//! Integration, conformance and property tests for `dsh-tools` (see `tests/`).
