//! The attack on CURRENT between cycles (sim and kill modes): CURRENT is
//! deleted or damaged while the database is closed. The next open, with
//! `create_if_missing`, must refuse with `Corruption`; creating a new
//! database there would treat every table, WAL and MANIFEST as obsolete and
//! delete them. CURRENT is then restored from a copy, and the caller checks
//! that the database holds exactly what it held before.

use std::path::Path;

use rand::rngs::SmallRng;
use rand::Rng;
use strata::filename::{current_file_name, read_current_file};
use strata::fs::ReadFileOptions;
use strata::{Db, DbOptions, Error, Fs};

/// What happens to CURRENT.
#[derive(Debug, Clone, Copy)]
enum Damage {
    Deleted,
    Emptied,
    /// The line lost its newline: a write of CURRENT torn at its end.
    NoNewline,
    /// A byte of "MANIFEST" changed: the line names no MANIFEST.
    NotAManifest,
    /// Names a MANIFEST that does not exist.
    MissingManifest,
}

const DAMAGES: [Damage; 5] = [
    Damage::Deleted,
    Damage::Emptied,
    Damage::NoNewline,
    Damage::NotAManifest,
    Damage::MissingManifest,
];

/// Damages CURRENT in `dir` (the database is closed), checks that an open
/// is refused with `Corruption`, and restores CURRENT. Returns what was
/// done, or the violation (which includes what was done).
pub fn attack(
    fs: &dyn Fs,
    dir: &Path,
    options: &DbOptions,
    rng: &mut SmallRng,
) -> Result<String, String> {
    let path = current_file_name(dir);
    let saved = read_all(fs, &path).map_err(|e| format!("cannot read CURRENT: {e}"))?;
    let manifest =
        read_current_file(fs, dir).map_err(|e| format!("CURRENT is bad already: {e}"))?;
    let damage = DAMAGES[rng.gen_range(0..DAMAGES.len())];
    let replacement: Option<Vec<u8>> = match damage {
        Damage::Deleted => None,
        Damage::Emptied => Some(Vec::new()),
        Damage::NoNewline => Some(saved.strip_suffix(b"\n").unwrap_or(&saved).to_vec()),
        Damage::NotAManifest => {
            let mut bytes = saved.clone();
            if let Some(b) = bytes.get_mut(rng.gen_range(0..8)) {
                *b ^= 0x20;
            }
            Some(bytes)
        }
        Damage::MissingManifest => {
            Some(format!("MANIFEST-{:06}\n", manifest + 1_000_000).into_bytes())
        }
    };
    let what = format!("CURRENT (naming MANIFEST-{manifest:06}) {damage:?}");
    replace(fs, dir, replacement.as_deref()).map_err(|e| format!("{what}: cannot damage: {e}"))?;
    let options = DbOptions {
        create_if_missing: true,
        ..options.clone()
    };
    let refusal = match Db::open(dir, options) {
        Ok(db) => {
            drop(db);
            Err(format!(
                "{what}: Db::open with create_if_missing succeeded instead of refusing"
            ))
        }
        Err(Error::Corruption { .. }) => Ok(()),
        Err(e) => Err(format!(
            "{what}: Db::open refused, but not with Corruption: {e}"
        )),
    };
    // Restored even after a violation, so the report can say what was lost.
    replace(fs, dir, Some(&saved)).map_err(|e| format!("{what}: cannot restore CURRENT: {e}"))?;
    refusal.map(|()| what)
}

fn read_all(fs: &dyn Fs, path: &Path) -> strata::Result<Vec<u8>> {
    let file = fs.open(path, ReadFileOptions::default())?;
    let len = usize::try_from(file.len()).unwrap_or(usize::MAX);
    Ok(file.read_at(0, len)?.to_vec())
}

/// Makes CURRENT hold `bytes` (or removes it for `None`), durably.
fn replace(fs: &dyn Fs, dir: &Path, bytes: Option<&[u8]>) -> strata::Result<()> {
    let path = current_file_name(dir);
    if fs.exists(&path)? {
        fs.remove(&path)?;
    }
    if let Some(bytes) = bytes {
        let mut file = fs.create(&path)?;
        file.append(bytes)?;
        file.sync()?;
    }
    fs.sync_dir(dir)
}
