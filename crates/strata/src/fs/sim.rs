//! Simulated fs (placeholder)
/// Simulated file system.
#[derive(Debug, Default)]
pub struct SimFs;
