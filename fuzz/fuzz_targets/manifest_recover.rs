//! Any bytes given as a MANIFEST: `VersionEdit::decode` of the whole input
//! round-trips whatever it accepts, and recovering a database directory whose
//! CURRENT names these bytes ends in a version set or an error (Corruption
//! or InvalidArgument): never a panic, a hang or a huge allocation.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use strata::fs::{Fs, SimFs};
use strata::version::{VersionEdit, VersionSet};
use strata::Comparator;

/// An application's order the MANIFEST may name (as may the built-ins),
/// so recovery sorts families in all three kinds of order.
#[derive(Debug)]
struct Backwards;

impl Comparator for Backwards {
    fn name(&self) -> &str {
        "fuzz.Backwards"
    }
    fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
        b.cmp(a)
    }
}

fuzz_target!(|data: &[u8]| {
    if let Ok(edit) = VersionEdit::decode(data) {
        let again = VersionEdit::decode(&edit.encode());
        assert_eq!(
            again.ok().as_ref(),
            Some(&edit),
            "an accepted edit must round-trip"
        );
    }
    let fs = SimFs::new(0);
    let dir = Path::new("/db");
    let write = || -> strata::Result<()> {
        fs.create_dir_all(dir)?;
        let mut manifest = fs.create(&dir.join("MANIFEST-000001"))?;
        manifest.append(data)?;
        manifest.sync()?;
        let mut current = fs.create(&dir.join("CURRENT"))?;
        current.append(b"MANIFEST-000001\n")?;
        current.sync()
    };
    if write().is_err() {
        return;
    }
    let known: [Arc<dyn Comparator>; 1] = [Arc::new(Backwards)];
    match VersionSet::recover(Arc::new(fs), dir, &known) {
        Ok(set) => {
            // Whatever was accepted is a consistent version of each family,
            // and the default family is always there.
            assert_eq!(set.families().next().map(|(id, _)| id), Some(0));
            let files: usize = set
                .families()
                .map(|(id, _)| set.current(id).all_files().count())
                .sum();
            assert!(files <= data.len());
        }
        Err(e) => assert!(
            e.is_corruption() || matches!(e, strata::Error::InvalidArgument { .. }),
            "unexpected error kind: {e}"
        ),
    }
});
