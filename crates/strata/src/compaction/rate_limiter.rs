//! A rate limiter for background writes (RocksDB's `GenericRateLimiter`): a
//! token bucket refilled every 100 ms with `rate_bytes_per_sec / 10` bytes,
//! shared by flushes and compactions (and by several databases, if they share
//! the `Arc`). Flushes ask at high priority: while one waits, compaction
//! requests take no tokens, so a flush is never starved behind compaction and
//! writes never stall longer than the budget forces.
//!
//! Tables are written through [`RateLimitedFs`], which charges every append
//! before it is issued. WAL writes are never limited: they are on the user's
//! write path.

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::error::{Error, Result};
use crate::fs::{Fs, WritableFile};

const REFILL_PERIOD: Duration = Duration::from_millis(100);

/// Who is asking: flushes go first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoPriority {
    High,
    Low,
}

#[derive(Debug)]
struct Bucket {
    available: u64,
    next_refill: Instant,
    high_waiting: usize,
}

/// Limits the bytes per second written through it.
///
/// ```
/// use std::sync::Arc;
/// use strata::{Db, DbOptions, RateLimiter};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert!(RateLimiter::new(5).is_err(), "below 10 bytes per second");
/// let limiter = Arc::new(RateLimiter::new(64 << 20)?);
/// assert_eq!(limiter.rate_bytes_per_sec(), 64 << 20);
/// // Flushes and compactions of this database write at most 64 MiB/s.
/// let dir = tempfile::tempdir()?;
/// let rate_limiter = Some(limiter);
/// let options = DbOptions { create_if_missing: true, rate_limiter, ..Default::default() };
/// let db = Db::open(dir.path(), options)?;
/// db.put("k", "v")?;
/// db.flush()?;
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct RateLimiter {
    rate_bytes_per_sec: u64,
    refill_bytes: u64,
    bucket: Mutex<Bucket>,
    refilled: Condvar,
}

impl RateLimiter {
    /// A limiter allowing `rate_bytes_per_sec` (at least 10 bytes per second).
    pub fn new(rate_bytes_per_sec: u64) -> Result<RateLimiter> {
        if rate_bytes_per_sec < 10 {
            return Err(Error::invalid_argument(
                "rate_bytes_per_sec",
                format!("{rate_bytes_per_sec} is below 10 bytes per second"),
            ));
        }
        let refill_bytes = rate_bytes_per_sec / 10;
        Ok(RateLimiter {
            rate_bytes_per_sec,
            refill_bytes,
            bucket: Mutex::new(Bucket {
                available: refill_bytes,
                next_refill: Instant::now() + REFILL_PERIOD,
                high_waiting: 0,
            }),
            refilled: Condvar::new(),
        })
    }

    /// The configured rate.
    pub fn rate_bytes_per_sec(&self) -> u64 {
        self.rate_bytes_per_sec
    }

    /// Blocks until `bytes` may be written. Requests larger than one refill
    /// are served in refill-sized pieces, so they cannot block the bucket
    /// forever.
    pub fn request(&self, bytes: usize, priority: IoPriority) {
        let mut remaining = bytes as u64;
        while remaining > 0 {
            let chunk = remaining.min(self.refill_bytes);
            self.take(chunk, priority);
            remaining -= chunk;
        }
    }

    fn take(&self, chunk: u64, priority: IoPriority) {
        let mut bucket = self.bucket.lock();
        let high = priority == IoPriority::High;
        if high {
            bucket.high_waiting += 1;
        }
        loop {
            let now = Instant::now();
            if now >= bucket.next_refill {
                // Tokens do not accumulate past one refill: an idle limiter
                // allows a burst of one period, not of the whole idle time.
                bucket.available = self.refill_bytes;
                bucket.next_refill = now + REFILL_PERIOD;
                self.refilled.notify_all();
            }
            let yields_to_flush = !high && bucket.high_waiting > 0;
            if !yields_to_flush && bucket.available >= chunk {
                bucket.available -= chunk;
                break;
            }
            let deadline = bucket.next_refill;
            self.refilled.wait_until(&mut bucket, deadline);
        }
        if high {
            bucket.high_waiting -= 1;
            // Low-priority waiters may go now.
            self.refilled.notify_all();
        }
    }
}

/// A file system whose new files charge a rate limiter for every append; all
/// other operations pass through.
pub struct RateLimitedFs {
    inner: Arc<dyn Fs>,
    limiter: Arc<RateLimiter>,
    priority: IoPriority,
}

impl RateLimitedFs {
    pub fn new(inner: Arc<dyn Fs>, limiter: Arc<RateLimiter>, priority: IoPriority) -> Self {
        RateLimitedFs {
            inner,
            limiter,
            priority,
        }
    }
}

impl fmt::Debug for RateLimitedFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimitedFs")
            .field("rate_bytes_per_sec", &self.limiter.rate_bytes_per_sec)
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl Fs for RateLimitedFs {
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        self.inner.create_dir_all(dir)
    }
    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(RateLimitedFile {
            inner: self.inner.create(path)?,
            limiter: self.limiter.clone(),
            priority: self.priority,
        }))
    }
    fn create_direct(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        Ok(Box::new(RateLimitedFile {
            inner: self.inner.create_direct(path)?,
            limiter: self.limiter.clone(),
            priority: self.priority,
        }))
    }
    crate::fs::forward_to_inner!();
}

#[derive(Debug)]
struct RateLimitedFile {
    inner: Box<dyn WritableFile>,
    limiter: Arc<RateLimiter>,
    priority: IoPriority,
}

impl WritableFile for RateLimitedFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        self.limiter.request(data.len(), self.priority);
        self.inner.append(data)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&mut self) -> Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> u64 {
        self.inner.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_take_at_least_the_time_the_rate_allows() {
        // 200 KB at 1 MB/s: the first 100 KB are the initial burst, the rest
        // must wait for at least one refill period per 100 KB.
        let limiter = RateLimiter::new(1_000_000).unwrap();
        let start = Instant::now();
        for _ in 0..50 {
            limiter.request(4000, IoPriority::Low);
        }
        assert!(start.elapsed() >= REFILL_PERIOD, "{:?}", start.elapsed());
    }

    #[test]
    fn a_flush_is_served_while_compaction_saturates_the_limiter() {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let limiter = Arc::new(RateLimiter::new(1_000_000).unwrap());
        let stop = Arc::new(AtomicBool::new(false));
        let low_granted = Arc::new(AtomicU64::new(0));
        let compactions: Vec<_> = (0..2)
            .map(|_| {
                let (limiter, stop, granted) = (limiter.clone(), stop.clone(), low_granted.clone());
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        limiter.request(50_000, IoPriority::Low);
                        granted.fetch_add(50_000, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        std::thread::sleep(REFILL_PERIOD);
        let before = low_granted.load(Ordering::Relaxed);
        for _ in 0..3 {
            limiter.request(90_000, IoPriority::High);
        }
        let during = low_granted.load(Ordering::Relaxed) - before;
        stop.store(true, Ordering::Relaxed);
        for c in compactions {
            c.join().unwrap();
        }
        // Compaction only gets what the flush leaves: at most one request per
        // thread in flight when the flush arrived, plus leftovers of 10 KB a
        // period. Without priority it would take about two thirds of 370 KB.
        assert!(
            during <= 200_000,
            "compaction took {during} bytes during the flush"
        );
    }

    #[test]
    fn rates_below_ten_bytes_per_second_are_invalid() {
        assert!(RateLimiter::new(9).is_err());
        assert_eq!(RateLimiter::new(10).unwrap().rate_bytes_per_sec(), 10);
    }

    #[test]
    fn limited_files_write_through() {
        let fs: Arc<dyn Fs> = Arc::new(crate::fs::SimFs::new(1));
        fs.create_dir_all(Path::new("/d")).unwrap();
        let limited = RateLimitedFs::new(
            fs.clone(),
            Arc::new(RateLimiter::new(1 << 20).unwrap()),
            IoPriority::High,
        );
        let mut f = limited.create(Path::new("/d/x")).unwrap();
        f.append(b"hello").unwrap();
        f.sync().unwrap();
        assert_eq!(f.len(), 5);
        assert_eq!(fs.file_size(Path::new("/d/x")).unwrap(), 5);
    }
}
