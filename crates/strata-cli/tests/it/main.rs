//! End-to-end tests of the `strata` binary.
// Test code may panic on failure: that is how a test reports it.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod sst;
