//! Repair between `sim` cycles: the quiet database (just reopened and
//! checked) is closed, and either repaired as it is or stripped of CURRENT
//! and every MANIFEST first; the repaired database must hold exactly the
//! expected state, before and after a power loss.

use std::path::Path;

use rand::Rng;
use strata::{repair_db, CfOptions, Db, Fs};

use crate::families::{NAMES, SCRATCH};
use crate::sim::{SimRun, DB_PATH};

/// Repairs the closed database; `None` once a violation is reported.
pub fn cycle(run: &mut SimRun, db: Db, cycle: u64) -> Option<Db> {
    drop(db);
    let dir = Path::new(DB_PATH);
    let strip = run.rng.gen_bool(0.5);
    let what = if strip {
        if let Err(e) = strip_manifest(&run.fs, dir) {
            run.fail(cycle, &format!("removing the MANIFEST: {e}"), &[]);
            return None;
        }
        "repair without CURRENT and MANIFEST"
    } else {
        "repair of a whole database"
    };
    let mut families: Vec<(String, CfOptions)> = (1..NAMES.len())
        .map(|i| (NAMES[i].to_string(), run.opts.cf_options(i)))
        .collect();
    families.push((SCRATCH.to_string(), crate::families::scratch_options()));
    run.out.ops += 1;
    let report = match repair_db(dir, &run.opts.db, families) {
        Ok(report) => report,
        Err(e) => {
            run.fail(cycle, &format!("{what} failed: {e}"), &[]);
            return None;
        }
    };
    let what = format!("{what} ({report:?})");
    for power_loss in [false, true] {
        if power_loss {
            run.fs.crash(strata::fs::sim::CrashMode::POWER_LOSS);
        }
        let db = match run.open() {
            Ok(db) => db,
            Err(e) => {
                run.fail(cycle, &format!("{what}: reopen failed: {e}"), &[]);
                return None;
            }
        };
        if let Err(e) = crate::expected::verify_unchanged(&db, &run.w, &run.expected) {
            let after = if power_loss {
                ", then a power loss"
            } else {
                ""
            };
            run.fail(cycle, &format!("{what}{after}: {e}"), &[]);
            return None;
        }
        if power_loss {
            run.out.repairs += 1;
            return Some(db);
        }
        run.fs.halt();
        drop(db);
    }
    None
}

/// Removes CURRENT and every MANIFEST, as a lost directory block would.
fn strip_manifest(fs: &dyn Fs, dir: &Path) -> strata::Result<()> {
    for name in fs.list(dir)? {
        if name == "CURRENT" || name.starts_with("MANIFEST-") {
            fs.remove(&dir.join(name))?;
        }
    }
    fs.sync_dir(dir)
}
