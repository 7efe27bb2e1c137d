//! The names of the files in a database directory. Names are built from numbers
//! only; a file number is never reused, so a name always means one file.
//!
//! ```text
//! 000012.sst       table file 12
//! 000013.log       write-ahead log 13
//! MANIFEST-000005  version edits; CURRENT names the live one
//! CURRENT          "MANIFEST-000005\n"
//! LOCK             flock'd while a process has the DB open
//! LOG, LOG.old.N   the info log (current, and older ones by time)
//! 000014.dbtmp     a temporary file (CURRENT being replaced)
//! 000015.log.corrupt  a WAL that recovery found damaged, kept as evidence
//! 000016.blob      a blob file (key-value separation)
//! OPTIONS-000017   the options the database was opened with
//! ```

use std::path::{Path, PathBuf};

use crate::crash_point::crash_point;
use crate::error::{Error, Result};
use crate::fs::Fs;

/// What a file in a database directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileType {
    /// A write-ahead log.
    Log(u64),
    /// A table file.
    Table(u64),
    /// A MANIFEST.
    Manifest(u64),
    /// The CURRENT pointer.
    Current,
    /// The LOCK file.
    Lock,
    /// The info log or an old one.
    InfoLog,
    /// A temporary file.
    Temp(u64),
    /// A WAL that recovery found damaged and set aside, never replayed again.
    CorruptLog(u64),
    /// A blob file.
    Blob(u64),
    /// An OPTIONS file.
    Options(u64),
}

impl FileType {
    /// Whether the file holds or describes data: a directory with any such
    /// file but no CURRENT is a damaged database, never an empty one.
    pub fn holds_data(self) -> bool {
        !matches!(
            self,
            FileType::Current | FileType::Lock | FileType::InfoLog | FileType::Temp(_)
        )
    }
}

/// `dir/000012.sst`.
pub fn table_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.sst"))
}

/// `dir/000016.blob`.
pub fn blob_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.blob"))
}

/// `dir/000013.log`.
pub fn log_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log"))
}

/// `dir/MANIFEST-000005`.
pub fn manifest_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("MANIFEST-{number:06}"))
}

/// `dir/CURRENT`.
pub fn current_file_name(dir: &Path) -> PathBuf {
    dir.join("CURRENT")
}

/// `dir/LOCK`.
pub fn lock_file_name(dir: &Path) -> PathBuf {
    dir.join("LOCK")
}

/// `dir/LOG`.
pub fn info_log_file_name(dir: &Path) -> PathBuf {
    dir.join("LOG")
}

/// `dir/000015.log.corrupt`.
pub fn corrupt_log_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.log.corrupt"))
}

/// `dir/OPTIONS-000017`.
pub fn options_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("OPTIONS-{number:06}"))
}

/// `dir/000014.dbtmp`.
pub fn temp_file_name(dir: &Path, number: u64) -> PathBuf {
    dir.join(format!("{number:06}.dbtmp"))
}

fn parse_number(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Classifies a file name; `None` for files that are not the engine's.
pub fn parse_file_name(name: &str) -> Option<FileType> {
    match name {
        "CURRENT" => return Some(FileType::Current),
        "LOCK" => return Some(FileType::Lock),
        "LOG" => return Some(FileType::InfoLog),
        _ => {}
    }
    if let Some(rest) = name.strip_prefix("LOG.old.") {
        return parse_number(rest).map(|_| FileType::InfoLog);
    }
    if let Some(rest) = name.strip_prefix("MANIFEST-") {
        return parse_number(rest).map(FileType::Manifest);
    }
    if let Some(rest) = name.strip_prefix("OPTIONS-") {
        return parse_number(rest).map(FileType::Options);
    }
    let (stem, ext) = name.split_once('.')?;
    let number = parse_number(stem)?;
    match ext {
        "sst" => Some(FileType::Table(number)),
        "log" => Some(FileType::Log(number)),
        "dbtmp" => Some(FileType::Temp(number)),
        "log.corrupt" => Some(FileType::CorruptLog(number)),
        "blob" => Some(FileType::Blob(number)),
        _ => None,
    }
}

/// Points CURRENT at MANIFEST-`manifest_number`, atomically and durably: the new
/// contents go to a temp file that is synced, renamed over CURRENT, and the
/// directory is synced. A crash leaves either the old or the new CURRENT.
pub fn set_current_file(fs: &dyn Fs, dir: &Path, manifest_number: u64) -> Result<()> {
    let contents = format!("MANIFEST-{manifest_number:06}\n");
    let temp = temp_file_name(dir, manifest_number);
    let mut file = fs.create(&temp)?;
    file.append(contents.as_bytes())?;
    file.sync()?;
    drop(file);
    crash_point!("current.temp_synced");
    fs.rename(&temp, &current_file_name(dir))?;
    crash_point!("current.renamed");
    fs.sync_dir(dir)
}

/// Reads CURRENT and returns the MANIFEST number it names.
pub fn read_current_file(fs: &dyn Fs, dir: &Path) -> Result<u64> {
    let path = current_file_name(dir);
    let file = fs.open(&path, crate::fs::ReadFileOptions::default())?;
    let len = usize::try_from(file.len()).unwrap_or(usize::MAX).min(256);
    let bytes = file.read_at(0, len)?;
    let text = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|t| t.strip_suffix('\n'))
        .ok_or_else(|| Error::corruption(&path, 0, "CURRENT is not one line of text"))?;
    match parse_file_name(text) {
        Some(FileType::Manifest(n)) => Ok(n),
        _ => Err(Error::corruption(
            &path,
            0,
            format!("CURRENT names {text:?}, not a MANIFEST"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_roundtrip() {
        let dir = Path::new("/db");
        for (path, t) in [
            (table_file_name(dir, 12), FileType::Table(12)),
            (log_file_name(dir, 1234567), FileType::Log(1234567)),
            (manifest_file_name(dir, 5), FileType::Manifest(5)),
            (temp_file_name(dir, 7), FileType::Temp(7)),
            (corrupt_log_file_name(dir, 8), FileType::CorruptLog(8)),
            (options_file_name(dir, 17), FileType::Options(17)),
            (current_file_name(dir), FileType::Current),
            (lock_file_name(dir), FileType::Lock),
            (info_log_file_name(dir), FileType::InfoLog),
        ] {
            let name = path.file_name().unwrap().to_str().unwrap();
            assert_eq!(parse_file_name(name), Some(t), "{name}");
        }
        assert_eq!(table_file_name(dir, 12), Path::new("/db/000012.sst"));
        assert_eq!(
            parse_file_name("LOG.old.1700000000"),
            Some(FileType::InfoLog)
        );
        assert_eq!(parse_file_name("000009.blob"), Some(FileType::Blob(9)));
        assert_eq!(
            parse_file_name("OPTIONS-000010"),
            Some(FileType::Options(10))
        );
        for junk in [
            "",
            "x.sst",
            "12.txt",
            "MANIFEST-",
            "MANIFEST-x",
            "-1.log",
            "1.2.sst",
            "+1.log",
            "1.log.bad",
            "OPTIONS-",
        ] {
            assert_eq!(parse_file_name(junk), None, "{junk}");
        }
    }

    #[test]
    fn current_file_roundtrip_and_damage() {
        let fs = crate::fs::SimFs::new(1);
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        set_current_file(&fs, dir, 42).unwrap();
        assert_eq!(read_current_file(&fs, dir).unwrap(), 42);
        assert!(!fs.exists(&temp_file_name(dir, 42)).unwrap());
        let mut f = fs.create(&current_file_name(dir)).unwrap();
        f.append(b"000001.sst\n").unwrap();
        drop(f);
        assert!(read_current_file(&fs, dir).unwrap_err().is_corruption());
    }
}
