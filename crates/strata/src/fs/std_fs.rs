//! Real files (placeholder until implemented).
/// The real file system.
#[derive(Debug, Default, Clone, Copy)]
pub struct StdFs;
