//! How results print: one string per operation, formatted the same way by the
//! model and by the database runs, so comparing strings compares results.

use super::ops::describe_value;

pub const OK: &str = "ok";
/// The operation names a snapshot or iterator that is not live (only after
/// the minimizer removed the operation that made it).
pub const ABSENT: &str = "absent id";
/// `next`/`prev` on an iterator that is not positioned: not called.
pub const NOT_STEPPED: &str = "unpositioned, not stepped";

pub fn key(k: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(k))
}

pub fn entry(k: &[u8], v: &[u8]) -> String {
    format!("{}={}", key(k), describe_value(v))
}

pub fn get(result: Result<Option<&[u8]>, String>) -> String {
    match result {
        Ok(Some(v)) => describe_value(v),
        Ok(None) => "not found".into(),
        Err(e) => format!("error: {e}"),
    }
}

/// Where an iterator stands: on a key and value, past the end, or failed.
pub type Position<'a> = Result<Option<(&'a [u8], &'a [u8])>, String>;

pub fn position(result: Position<'_>) -> String {
    match result {
        Ok(Some((k, v))) => entry(k, v),
        Ok(None) => "invalid".into(),
        Err(e) => format!("error: {e}"),
    }
}

pub fn list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}
