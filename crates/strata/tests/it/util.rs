//! Helpers shared by the integration tests.

use std::path::Path;
use std::sync::Arc;

use strata::fs::SimFs;
use strata::{Db, DbOptions};

/// Options for a small database on a simulated file system: tiny memtables so
/// tests exercise flushes and many L0 files.
pub fn sim_options(fs: &SimFs) -> DbOptions {
    DbOptions {
        create_if_missing: true,
        write_buffer_size: 64 << 10,
        max_write_buffer_number: 3,
        fs: Arc::new(fs.clone()),
        ..DbOptions::default()
    }
}

/// Opens `/db` on `fs`.
pub fn open_sim(fs: &SimFs) -> Db {
    Db::open(Path::new("/db"), sim_options(fs)).expect("open")
}
