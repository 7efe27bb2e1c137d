//! The info LOG in the database directory: a human-readable account of what the
//! engine did (open, options, recovery, flushes, errors), one timestamped line
//! per event, as RocksDB's LOG. Logging never fails a database operation: if the
//! LOG cannot be written, the line is dropped.

use std::fmt;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use crate::error::Result;
use crate::filename::info_log_file_name;
use crate::fs::{Fs, WritableFile};

/// Appends timestamped lines to `LOG`.
#[derive(Debug)]
pub struct InfoLog {
    file: Mutex<Option<Box<dyn WritableFile>>>,
}

impl InfoLog {
    /// Starts a new `LOG`, keeping the previous one as `LOG.old.<micros>` and
    /// deleting the oldest old LOGs beyond `keep_log_file_num` files in all.
    pub fn open(fs: &dyn Fs, dir: &Path, keep_log_file_num: usize) -> Result<InfoLog> {
        let path = info_log_file_name(dir);
        if fs.exists(&path)? {
            let micros = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_micros())
                .unwrap_or(0);
            fs.rename(&path, &dir.join(format!("LOG.old.{micros}")))?;
        }
        let mut old: Vec<(u128, String)> = fs
            .list(dir)?
            .into_iter()
            .filter_map(|name| {
                let micros = name.strip_prefix("LOG.old.")?.parse().ok()?;
                Some((micros, name))
            })
            .collect();
        old.sort_unstable();
        // The new LOG counts as one of the files kept.
        let excess = (old.len() + 1).saturating_sub(keep_log_file_num.max(1));
        for (_, name) in old.into_iter().take(excess) {
            // An old LOG that cannot be removed is harmless.
            let _ = fs.remove(&dir.join(name));
        }
        Ok(InfoLog {
            file: Mutex::new(Some(fs.create(&path)?)),
        })
    }

    /// A LOG that writes nothing (read-only opens write no file).
    pub fn disabled() -> InfoLog {
        InfoLog {
            file: Mutex::new(None),
        }
    }

    /// Writes one line.
    pub fn log(&self, message: fmt::Arguments<'_>) {
        let line = format!("{} {message}\n", timestamp());
        let mut guard = self.file.lock();
        if let Some(file) = guard.as_mut() {
            if file
                .append(line.as_bytes())
                .and_then(|()| file.flush())
                .is_err()
            {
                // A LOG that cannot be written is dropped rather than retried.
                *guard = None;
            }
        }
    }
}

/// `2026/11/23-00:15:03.123456` in UTC, like RocksDB's LOG lines.
fn timestamp() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}/{month:02}/{day:02}-{:02}:{:02}:{:02}.{:06}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        since.subsec_micros()
    )
}

/// Days since 1970-01-01 to (year, month, day), Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Logs a formatted line: `info!(log, "flushed {} bytes", n)`.
macro_rules! info {
    ($log:expr, $($arg:tt)*) => {
        $log.log(format_args!($($arg)*))
    };
}
pub(crate) use info;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_723), (2024, 1, 1));
        assert_eq!(civil_from_days(20_415), (2025, 11, 23));
    }

    #[test]
    fn lines_reach_the_file_and_old_logs_are_kept() {
        let fs = crate::fs::SimFs::new(9);
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        let log = InfoLog::open(&fs, dir, 1000).unwrap();
        info!(log, "hello {}", 42);
        let text = String::from_utf8(fs.file_contents(&dir.join("LOG")).unwrap()).unwrap();
        assert!(text.ends_with(" hello 42\n"), "{text}");
        drop(log);
        let _again = InfoLog::open(&fs, dir, 1000).unwrap();
        assert!(fs
            .list(dir)
            .unwrap()
            .iter()
            .any(|n| n.starts_with("LOG.old.")));
    }

    #[test]
    fn only_keep_log_file_num_logs_remain() {
        let fs = crate::fs::SimFs::new(10);
        let dir = Path::new("/db");
        fs.create_dir_all(dir).unwrap();
        for i in 0..6 {
            let log = InfoLog::open(&fs, dir, 3).unwrap();
            info!(log, "open {i}");
            // Old LOG names carry microseconds; keep them distinct.
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let mut logs: Vec<_> = fs
            .list(dir)
            .unwrap()
            .into_iter()
            .filter(|n| n.starts_with("LOG"))
            .collect();
        logs.sort();
        assert_eq!(logs.len(), 3, "{logs:?}");
        // The newest survive: the current LOG says "open 5", the newest old
        // one "open 4".
        let text = |n: &str| String::from_utf8(fs.file_contents(&dir.join(n)).unwrap()).unwrap();
        assert!(text("LOG").contains("open 5"));
        assert!(text(&logs[2]).contains("open 4"), "{logs:?}");
        assert!(text(&logs[1]).contains("open 3"), "{logs:?}");
    }
}
