//! WAL (being written)
