//! Integration tests of the engine through its public API.
// Test code may panic on failure: that is how a test reports it.
#![allow(clippy::expect_used, clippy::unwrap_used, clippy::panic)]

mod db_attacks;
mod db_bad_input;
mod db_basic;
mod db_blob;
mod db_cache;
mod db_checkpoint;
mod db_compaction;
mod db_compaction_filter;
mod db_comparator;
mod db_concurrency;
mod db_crash;
mod db_families;
mod db_faults;
mod db_filter_model;
mod db_fixtures;
mod db_ingest;
mod db_ingest_repair;
mod db_interactions;
mod db_listener;
mod db_merge;
mod db_metamorphic;
mod db_model;
mod db_partitioned;
mod db_prefix;
mod db_range_del;
mod db_read_tier;
mod db_repair;
mod db_repair_manifest;
mod db_services;
mod db_statistics;
mod db_wal_flush;
mod db_wal_switch;
mod db_write_control;
mod util;
