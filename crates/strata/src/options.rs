//! Options (placeholder)
/// Table options.
#[derive(Debug, Default, Clone)]
pub struct TableOptions;
/// Read options.
#[derive(Debug, Default, Clone)]
pub struct ReadOptions;
