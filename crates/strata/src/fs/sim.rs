//! [`SimFs`]: an in-memory file system for crash and fault tests.
//!
//! It models the two things a crash can lose: file bytes that were not synced, and
//! directory entries (creations, renames, removals) whose directory was not synced.
//!
//! - An *inode* holds a file's bytes and `synced_len`, how many of them are durable.
//!   Bytes beyond `synced_len` are "in the OS": every handle sees them, a crash may
//!   lose them.
//! - The *current* namespace maps paths to inodes as the running process sees it;
//!   the *durable* namespace is what survives a crash that loses directory entries.
//!   `sync_dir(dir)` copies the current entries of `dir` into the durable namespace.
//! - `create` always makes a new inode: truncating a file by re-creating it is not
//!   durable until the directory is synced, as with a real `rename` over it.
//! - Directories themselves are durable as soon as they are made.
//!
//! [`SimFs::crash`] applies a [`CrashMode`], and every random choice comes from a
//! `SmallRng` seeded by [`SimFs::new`], so a failing test reproduces from its seed
//! (printed by `Debug`). [`SimFs::inject`] makes chosen operations fail.
//!
//! By default writes have no user-space buffer: `append` goes straight to "the
//! OS", so a missing `flush` is invisible to SimFs (a missing `sync` is not).
//! [`SimFs::buffer_appends`] gives each writable file a buffer, as `StdFs`
//! has: appends wait in it until `flush`, `sync` or the handle's drop, and any
//! crash loses it, so a missing `flush` is seen too.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::io;
use std::ops::Range;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::{FileLock, Fs, RandomAccessFile, ReadFileOptions, WritableFile};
use crate::error::{Error, Result};

/// What a crash does to file bytes that were not synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DataLoss {
    /// Nothing is lost: a process kill, where the OS keeps every written byte.
    KeepAll,
    /// Every file is cut back to its synced length.
    DropUnsynced,
    /// Every file keeps its synced bytes plus a random prefix of the unsynced ones.
    KeepRandomPrefix,
    /// Like `DropUnsynced`, except that a file whose last append was unsynced but
    /// followed synced bytes keeps a random strict prefix of that append: a torn
    /// final write.
    TearLastWrite,
}

/// How [`SimFs::crash`] damages the file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CrashMode {
    /// What happens to unsynced file bytes.
    pub data: DataLoss,
    /// When true, directory entries not made durable by `sync_dir` are lost: the
    /// current namespace reverts to the durable one. When false, it is kept.
    pub lose_unsynced_dir_entries: bool,
}

impl CrashMode {
    /// A process kill: the OS keeps every byte and every directory entry.
    pub const PROCESS_KILL: CrashMode = CrashMode {
        data: DataLoss::KeepAll,
        lose_unsynced_dir_entries: false,
    };
    /// A power loss: only what was synced (files and directories) survives.
    pub const POWER_LOSS: CrashMode = CrashMode {
        data: DataLoss::DropUnsynced,
        lose_unsynced_dir_entries: true,
    };
}

/// The operations that are counted and can be made to fail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// `Fs::create`.
    Create,
    /// `Fs::open`.
    Open,
    /// `RandomAccessFile::read_at`.
    Read,
    /// `WritableFile::append`.
    Append,
    /// `WritableFile::flush`.
    Flush,
    /// `WritableFile::sync`.
    Sync,
    /// `Fs::rename`.
    Rename,
    /// `Fs::remove`.
    Remove,
    /// `Fs::sync_dir`.
    SyncDir,
    /// `Fs::list`.
    List,
    /// `Fs::lock`.
    Lock,
}

impl OpKind {
    /// Every kind, in declaration order.
    pub const ALL: [OpKind; 11] = [
        OpKind::Create,
        OpKind::Open,
        OpKind::Read,
        OpKind::Append,
        OpKind::Flush,
        OpKind::Sync,
        OpKind::Rename,
        OpKind::Remove,
        OpKind::SyncDir,
        OpKind::List,
        OpKind::Lock,
    ];

    /// The operation's name in error messages.
    fn name(self) -> &'static str {
        match self {
            OpKind::Create => "create",
            OpKind::Open => "open",
            OpKind::Read => "read",
            OpKind::Append => "append",
            OpKind::Flush => "flush",
            OpKind::Sync => "fsync",
            OpKind::Rename => "rename",
            OpKind::Remove => "remove",
            OpKind::SyncDir => "sync directory",
            OpKind::List => "list",
            OpKind::Lock => "lock",
        }
    }
}

/// A fault to inject with [`SimFs::inject`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The `n`-th operation of kind `op` from now on (1-based; 0 never fires) fails
    /// with EIO. One-shot. A failed operation has no effect, except as real
    /// disks fail: a failed append may have written a random prefix of its
    /// data, and a failed fsync drops the file's unsynced bytes (a power loss
    /// then finds zeroes there, even if a later fsync succeeded).
    ErrorOnNth {
        /// The kind of operation to fail.
        op: OpKind,
        /// Which future operation of that kind fails, counting from 1.
        n: u64,
    },
    /// Every operation of kind `op` from the `n`-th one from now on fails with
    /// EIO and has no effect, until [`SimFs::clear_faults`]: a disk that broke.
    ErrorFromNth {
        /// The kind of operation to fail.
        op: OpKind,
        /// The first future operation of that kind to fail, counting from 1.
        n: u64,
    },
    /// Appends that would bring the bytes of all live files (named in the current
    /// namespace or held open) above `bytes` fail with `Error::NoSpace` and write
    /// nothing. Replaces any earlier quota.
    SpaceQuota {
        /// The capacity of the simulated disk.
        bytes: u64,
    },
}

type InodeId = u64;

#[derive(Debug, Default)]
struct Inode {
    data: Vec<u8>,
    /// Bytes `..synced_len` are durable. Invariant: `synced_len <= data.len()`.
    synced_len: usize,
    /// Where the last append landed, while it is still the file's tail.
    last_append: Option<Range<usize>>,
    /// Unsynced bytes a failed fsync dropped: zeroes after a power loss.
    lost: Vec<Range<usize>>,
}

impl Inode {
    /// How many bytes survive a crash under `data_loss`.
    fn surviving_len(&self, data_loss: DataLoss, rng: &mut SmallRng) -> usize {
        let len = self.data.len();
        let synced = self.synced_len.min(len);
        match data_loss {
            DataLoss::KeepAll => len,
            DataLoss::DropUnsynced => synced,
            DataLoss::KeepRandomPrefix => rng.gen_range(synced..=len),
            DataLoss::TearLastWrite => match &self.last_append {
                Some(last) if last.start <= synced && synced < last.end && last.end == len => {
                    rng.gen_range(synced..last.end)
                }
                _ => synced,
            },
        }
    }
}

/// Everything behind the one lock of a [`SimFs`].
struct State {
    rng: SmallRng,
    next_inode: InodeId,
    /// Invariant: holds exactly the inodes referenced by `current`, `durable` or
    /// `open_handles` (see `forget_if_unreferenced`).
    inodes: BTreeMap<InodeId, Inode>,
    current: BTreeMap<PathBuf, InodeId>,
    durable: BTreeMap<PathBuf, InodeId>,
    /// Directories other than the root and the empty (relative) path, which always
    /// exist. All are durable.
    dirs: BTreeSet<PathBuf>,
    locks: BTreeSet<PathBuf>,
    /// Number of live handles per inode, so an unlinked file stays readable.
    open_handles: BTreeMap<InodeId, usize>,
    /// Bumped by every crash; a handle from an older generation is dead.
    generation: u64,
    op_counts: [u64; OpKind::ALL.len()],
    /// One-shot errors: (kind, value of that kind's op count at which to fail).
    /// Injected errors: kind, the op count they fire at, and whether they
    /// keep firing from there on.
    pending_errors: Vec<(OpKind, u64, bool)>,
    quota_bytes: Option<u64>,
    /// How long each file sync sleeps before it takes effect.
    sync_latency: Duration,
    /// Where file syncs wait while a test holds them ([`SimFs::hold_syncs`]).
    sync_gate: Arc<SyncGate>,
    /// Set by `halt`: the simulated process is dead and every operation fails
    /// until `crash` reboots the machine.
    halted: bool,
    /// Files created from now on keep appends in a buffer of their own until
    /// flushed ([`SimFs::buffer_appends`]).
    buffer_appends: bool,
}

/// Lexically normalizes a path: drops `.` and resolves `..`, so `/db/x`,
/// `/db/./x` and `/db/sub/../x` name the same file.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The directory holding `path` (the empty path for a relative single name).
fn parent_dir(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new(""))
}

fn os_error(op: &'static str, path: &Path, code: i32) -> Error {
    Error::io(op, path, io::Error::from_raw_os_error(code))
}

fn past_eof(path: &Path, offset: u64, len: usize, file_len: usize) -> Error {
    let err = io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!(
            "read of {len} bytes at offset {offset} goes past the end of the {file_len}-byte file"
        ),
    );
    Error::io("read", path, err)
}

impl State {
    /// Counts an operation and fails it if an injected error targets it.
    fn begin(&mut self, op: OpKind, path: &Path) -> Result<()> {
        if self.halted {
            return Err(os_error(op.name(), path, libc::EIO));
        }
        let count = &mut self.op_counts[op as usize];
        *count += 1;
        let now = *count;
        let fires = |&(kind, at, persistent): &(OpKind, u64, bool)| {
            kind == op && (at == now || (persistent && now >= at))
        };
        if let Some(i) = self.pending_errors.iter().position(fires) {
            if !self.pending_errors[i].2 {
                self.pending_errors.swap_remove(i);
            }
            return Err(os_error(op.name(), path, libc::EIO));
        }
        Ok(())
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.as_os_str().is_empty()
            || (path.has_root() && path.parent().is_none())
            || self.dirs.contains(path)
    }

    fn require_parent_dir(&self, op: &'static str, path: &Path) -> Result<()> {
        if self.is_dir(parent_dir(path)) {
            Ok(())
        } else {
            Err(os_error(op, path, libc::ENOENT))
        }
    }

    fn file(&self, op: &'static str, path: &Path) -> Result<InodeId> {
        match self.current.get(path) {
            Some(&id) => Ok(id),
            None if self.is_dir(path) => Err(os_error(op, path, libc::EISDIR)),
            None => Err(os_error(op, path, libc::ENOENT)),
        }
    }

    fn new_inode(&mut self) -> InodeId {
        let id = self.next_inode;
        self.next_inode += 1;
        self.inodes.insert(id, Inode::default());
        id
    }

    /// Drops an inode once no name (current or durable) and no handle refers to it.
    fn forget_if_unreferenced(&mut self, id: InodeId) {
        let referenced = self.open_handles.contains_key(&id)
            || self.current.values().any(|&i| i == id)
            || self.durable.values().any(|&i| i == id);
        if !referenced {
            self.inodes.remove(&id);
        }
    }

    fn add_handle(&mut self, id: InodeId) {
        *self.open_handles.entry(id).or_insert(0) += 1;
    }

    fn drop_handle(&mut self, id: InodeId, generation: u64) {
        // Handles from before a crash were already forgotten by it.
        if generation != self.generation {
            return;
        }
        if let Some(count) = self.open_handles.get_mut(&id) {
            *count -= 1;
            if *count == 0 {
                self.open_handles.remove(&id);
                self.forget_if_unreferenced(id);
            }
        }
    }

    fn check_alive(&self, op: OpKind, path: &Path, generation: u64) -> Result<()> {
        if generation == self.generation {
            return Ok(());
        }
        let err = io::Error::other("the handle was opened before a simulated crash and is dead");
        Err(Error::io(op.name(), path, err))
    }

    fn inode_mut(&mut self, op: OpKind, path: &Path, id: InodeId) -> Result<&mut Inode> {
        // A live handle keeps its inode, so this fails only if that invariant broke.
        self.inodes
            .get_mut(&id)
            .ok_or_else(|| os_error(op.name(), path, libc::EBADF))
    }

    /// Bytes of the files that occupy space: named now, or unlinked but still open.
    fn live_bytes(&self) -> u64 {
        let live: BTreeSet<InodeId> = self
            .current
            .values()
            .chain(self.open_handles.keys())
            .copied()
            .collect();
        live.iter()
            .filter_map(|id| self.inodes.get(id))
            .map(|inode| inode.data.len() as u64)
            .sum()
    }
}

/// An in-memory file system that can crash and fail on demand. Clones share state.
#[derive(Clone)]
pub struct SimFs {
    seed: u64,
    state: Arc<Mutex<State>>,
}

impl fmt::Debug for SimFs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The seed is what a failing test needs to print to be reproduced.
        let mut s = f.debug_struct("SimFs");
        s.field("seed", &self.seed);
        if let Some(state) = self.state.try_lock() {
            s.field("files", &state.current.len())
                .field("crashes", &state.generation);
        }
        s.finish_non_exhaustive()
    }
}

impl SimFs {
    /// An empty file system whose crashes draw their randomness from `seed`.
    pub fn new(seed: u64) -> Self {
        let state = State {
            rng: SmallRng::seed_from_u64(seed),
            next_inode: 0,
            inodes: BTreeMap::new(),
            current: BTreeMap::new(),
            durable: BTreeMap::new(),
            dirs: BTreeSet::new(),
            locks: BTreeSet::new(),
            open_handles: BTreeMap::new(),
            generation: 0,
            op_counts: [0; OpKind::ALL.len()],
            pending_errors: Vec::new(),
            halted: false,
            quota_bytes: None,
            sync_latency: Duration::ZERO,
            sync_gate: Arc::default(),
            buffer_appends: false,
        };
        SimFs {
            seed,
            state: Arc::new(Mutex::new(state)),
        }
    }

    /// Gives the files created from now on a user-space buffer, as `StdFs`'s
    /// files have: an append waits there, unseen by readers and lost by any
    /// crash, until the file is flushed, synced or dropped. Off by default
    /// (appends land at once).
    pub fn buffer_appends(&self, on: bool) {
        self.state.lock().buffer_appends = on;
    }

    /// Makes every file sync take `latency` (outside the file system's lock), as
    /// a disk's fsync does: concurrent writers then queue behind it, which is
    /// what group commit tests need to see groups form.
    pub fn set_sync_latency(&self, latency: Duration) {
        self.state.lock().sync_latency = latency;
    }

    /// Makes every file sync from now on wait, before it takes effect and
    /// outside the file system's lock, until [`release_syncs`](Self::release_syncs).
    /// A test can then hold a writer inside its WAL sync and line others up
    /// behind it without relying on timing. Directory syncs are not held.
    pub fn hold_syncs(&self) {
        let gate = self.state.lock().sync_gate.clone();
        let mut gate = gate.state.lock();
        gate.held = true;
        gate.only = None;
    }

    /// As [`hold_syncs`](Self::hold_syncs), for the files whose name contains
    /// `name_part` only (`"MANIFEST"`, `".log"`); other syncs go on.
    pub fn hold_syncs_of(&self, name_part: &str) {
        let gate = self.state.lock().sync_gate.clone();
        let mut gate = gate.state.lock();
        gate.held = true;
        gate.only = Some(name_part.to_owned());
    }

    /// Lets the held file syncs, and every later one, proceed.
    pub fn release_syncs(&self) {
        let gate = self.state.lock().sync_gate.clone();
        gate.state.lock().held = false;
        gate.opened.notify_all();
    }

    /// How many file syncs are waiting because of [`hold_syncs`](Self::hold_syncs).
    pub fn held_syncs(&self) -> usize {
        let gate = self.state.lock().sync_gate.clone();
        let waiting = gate.state.lock().waiting;
        waiting
    }

    /// The seed given to [`SimFs::new`].
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Simulates a crash and reboot: applies `mode` to unsynced bytes and directory
    /// entries, releases every lock and kills every open handle (their later calls
    /// fail with an I/O error). Afterwards everything that survived is durable.
    pub fn crash(&self, mode: CrashMode) {
        let mut guard = self.state.lock();
        let state = &mut *guard;
        state.halted = false;
        state.generation += 1;
        state.locks.clear();
        state.open_handles.clear();
        if mode.lose_unsynced_dir_entries {
            state.current = state.durable.clone();
        } else {
            state.durable = state.current.clone();
        }
        let named: BTreeSet<InodeId> = state.current.values().copied().collect();
        state.inodes.retain(|id, _| named.contains(id));
        // BTreeMap order makes the sequence of random draws depend on the seed only.
        for inode in state.inodes.values_mut() {
            let keep = inode.surviving_len(mode.data, &mut state.rng);
            inode.data.truncate(keep);
            if mode.data != DataLoss::KeepAll {
                for lost in inode.lost.drain(..) {
                    let end = lost.end.min(keep);
                    if lost.start < end {
                        inode.data[lost.start..end].fill(0);
                    }
                }
            }
            inode.lost.clear();
            inode.synced_len = keep;
            inode.last_append = None;
        }
    }

    /// Stops the simulated process at this instant: every later operation fails
    /// with EIO until [`crash`](Self::crash) reboots. Lets a test freeze the file
    /// system mid-work, shut the engine's threads down, then crash.
    pub fn halt(&self) {
        self.state.lock().halted = true;
    }

    /// Injects a fault; see [`Fault`].
    pub fn inject(&self, fault: Fault) {
        let mut state = self.state.lock();
        match fault {
            Fault::ErrorOnNth { op, n } | Fault::ErrorFromNth { op, n } => {
                let at = state.op_counts[op as usize].saturating_add(n);
                let persistent = matches!(fault, Fault::ErrorFromNth { .. });
                if n > 0 {
                    state.pending_errors.push((op, at, persistent));
                }
            }
            Fault::SpaceQuota { bytes } => state.quota_bytes = Some(bytes),
        }
    }

    /// Removes every pending fault and the space quota.
    pub fn clear_faults(&self) {
        let mut state = self.state.lock();
        state.pending_errors.clear();
        state.quota_bytes = None;
    }

    /// How many operations of kind `op` have been attempted (failed ones included).
    pub fn op_count(&self, op: OpKind) -> u64 {
        self.state.lock().op_counts[op as usize]
    }

    /// The current bytes of a file, or `None` if it does not exist.
    pub fn file_contents(&self, path: &Path) -> Option<Vec<u8>> {
        let state = self.state.lock();
        let id = state.current.get(&normalize(path))?;
        state.inodes.get(id).map(|inode| inode.data.clone())
    }

    /// Flips bits of one byte in place (`byte ^= xor`), for corruption tests. The
    /// change is durable at once, as if the disk itself went bad.
    pub fn corrupt_byte(&self, path: &Path, offset: u64, xor: u8) -> Result<()> {
        let path = normalize(path);
        let mut state = self.state.lock();
        let id = state.file("corrupt", &path)?;
        let inode = state.inode_mut(OpKind::Read, &path, id)?;
        let file_len = inode.data.len();
        let byte = usize::try_from(offset)
            .ok()
            .and_then(|i| inode.data.get_mut(i))
            .ok_or_else(|| past_eof(&path, offset, 1, file_len))?;
        *byte ^= xor;
        Ok(())
    }

    /// Truncates (or zero-extends) a file, e.g. to simulate a torn tail. The synced
    /// length shrinks with it; zeros added by extension are not synced.
    pub fn set_len(&self, path: &Path, len: u64) -> Result<()> {
        let path = normalize(path);
        let mut state = self.state.lock();
        let id = state.file("truncate", &path)?;
        let inode = state.inode_mut(OpKind::Append, &path, id)?;
        let len = usize::try_from(len).map_err(|_| os_error("truncate", &path, libc::EFBIG))?;
        inode.data.resize(len, 0);
        inode.synced_len = inode.synced_len.min(len);
        inode.last_append = None;
        Ok(())
    }

    /// Bytes of all live files (named now, or unlinked but still open).
    pub fn total_bytes(&self) -> u64 {
        self.state.lock().live_bytes()
    }

    /// A new handle appending to inode `id`, named `path`, now `len` bytes.
    fn writable(
        &self,
        state: &mut State,
        id: InodeId,
        path: PathBuf,
        len: u64,
    ) -> Box<dyn WritableFile> {
        state.add_handle(id);
        Box::new(SimWritableFile {
            handle: Handle {
                state: Arc::clone(&self.state),
                inode: id,
                generation: state.generation,
                path,
            },
            len,
            buffer: state.buffer_appends.then(Vec::new),
        })
    }
}

impl Fs for SimFs {
    fn create_dir_all(&self, dir: &Path) -> Result<()> {
        let dir = normalize(dir);
        let mut state = self.state.lock();
        let mut to_make = Vec::new();
        for ancestor in dir.ancestors() {
            if state.is_dir(ancestor) {
                break;
            }
            if state.current.contains_key(ancestor) {
                return Err(os_error("create directory", ancestor, libc::ENOTDIR));
            }
            to_make.push(ancestor.to_path_buf());
        }
        state.dirs.extend(to_make);
        Ok(())
    }

    fn create(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let path = normalize(path);
        let mut state = self.state.lock();
        state.begin(OpKind::Create, &path)?;
        state.require_parent_dir("create", &path)?;
        if state.is_dir(&path) {
            return Err(os_error("create", &path, libc::EISDIR));
        }
        let id = state.new_inode();
        if let Some(replaced) = state.current.insert(path.clone(), id) {
            state.forget_if_unreferenced(replaced);
        }
        Ok(self.writable(&mut state, id, path, 0))
    }

    /// Reads see the inode's bytes at the time of each read; `options` change
    /// nothing here.
    fn open(&self, path: &Path, _options: ReadFileOptions) -> Result<Arc<dyn RandomAccessFile>> {
        let path = normalize(path);
        let mut state = self.state.lock();
        state.begin(OpKind::Open, &path)?;
        let id = state.file("open", &path)?;
        let len_at_open = state.inode_mut(OpKind::Open, &path, id)?.data.len() as u64;
        state.add_handle(id);
        Ok(Arc::new(SimRandomAccessFile {
            handle: Handle {
                state: Arc::clone(&self.state),
                inode: id,
                generation: state.generation,
                path,
            },
            len_at_open,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let (from, to) = (normalize(from), normalize(to));
        let mut state = self.state.lock();
        state.begin(OpKind::Rename, &from)?;
        let id = state.file("rename", &from)?;
        state.require_parent_dir("rename", &to)?;
        if state.is_dir(&to) {
            return Err(os_error("rename", &to, libc::EISDIR));
        }
        state.current.remove(&from);
        if let Some(replaced) = state.current.insert(to, id) {
            state.forget_if_unreferenced(replaced);
        }
        Ok(())
    }

    fn remove(&self, path: &Path) -> Result<()> {
        let path = normalize(path);
        let mut state = self.state.lock();
        state.begin(OpKind::Remove, &path)?;
        let id = state.file("remove", &path)?;
        state.current.remove(&path);
        state.forget_if_unreferenced(id);
        Ok(())
    }

    fn list(&self, dir: &Path) -> Result<Vec<String>> {
        let dir = normalize(dir);
        let mut state = self.state.lock();
        state.begin(OpKind::List, &dir)?;
        if !state.is_dir(&dir) {
            return Err(os_error("list", &dir, libc::ENOENT));
        }
        let files = state.current.keys();
        let names = files
            .chain(state.dirs.iter())
            .filter(|p| parent_dir(p) == dir)
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect();
        Ok(names)
    }

    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        let path = normalize(path);
        let mut state = self.state.lock();
        state.begin(OpKind::Lock, &path)?;
        state.require_parent_dir("lock", &path)?;
        if state.locks.contains(&path) {
            return Err(Error::LockHeld { path });
        }
        // Like the real one, taking a lock creates the lock file.
        if !state.current.contains_key(&path) {
            if state.is_dir(&path) {
                return Err(os_error("lock", &path, libc::EISDIR));
            }
            let id = state.new_inode();
            state.current.insert(path.clone(), id);
        }
        state.locks.insert(path.clone());
        Ok(Box::new(SimFileLock {
            state: Arc::clone(&self.state),
            generation: state.generation,
            path,
        }))
    }

    fn sync_dir(&self, dir: &Path) -> Result<()> {
        let dir = normalize(dir);
        let mut guard = self.state.lock();
        let state = &mut *guard;
        state.begin(OpKind::SyncDir, &dir)?;
        if !state.is_dir(&dir) {
            return Err(os_error("sync directory", &dir, libc::ENOENT));
        }
        let mut unlinked = Vec::new();
        state.durable.retain(|path, id| {
            let in_dir = parent_dir(path) == dir;
            if in_dir {
                unlinked.push(*id);
            }
            !in_dir
        });
        for (path, &id) in &state.current {
            if parent_dir(path) == dir {
                state.durable.insert(path.clone(), id);
            }
        }
        for id in unlinked {
            state.forget_if_unreferenced(id);
        }
        Ok(())
    }

    fn file_size(&self, path: &Path) -> Result<u64> {
        let path = normalize(path);
        let mut state = self.state.lock();
        let id = state.file("stat", &path)?;
        Ok(state.inode_mut(OpKind::Open, &path, id)?.data.len() as u64)
    }

    fn exists(&self, path: &Path) -> Result<bool> {
        let path = normalize(path);
        let state = self.state.lock();
        Ok(state.current.contains_key(&path) || state.is_dir(&path))
    }

    /// Counted as an open. The appends land on the file's inode as any
    /// append does: unsynced, a crash may drop or tear them.
    fn reopen_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        let path = normalize(path);
        let mut state = self.state.lock();
        state.begin(OpKind::Open, &path)?;
        let id = state.file("reopen for appending", &path)?;
        let len = state.inode_mut(OpKind::Open, &path, id)?.data.len() as u64;
        Ok(self.writable(&mut state, id, path, len))
    }
}

mod handles;
mod sync_gate;
use handles::{Handle, SimFileLock, SimRandomAccessFile, SimWritableFile};
use sync_gate::SyncGate;

#[cfg(test)]
mod tests;
