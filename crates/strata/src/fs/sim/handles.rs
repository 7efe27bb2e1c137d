//! The handles [`SimFs`](super::SimFs) gives out: files written and read
//! through the shared state, and the lock, each dying with a crash.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use rand::Rng;

use super::{past_eof, Inode, InodeId, OpKind, State};
use crate::error::{Error, Result};
use crate::fs::{FileLock, RandomAccessFile, WritableFile};

/// What every file handle needs: the shared state, its inode, and the generation
/// it was opened in (it dies when a crash bumps the generation).
pub(super) struct Handle {
    pub(super) state: Arc<Mutex<State>>,
    pub(super) inode: InodeId,
    pub(super) generation: u64,
    pub(super) path: PathBuf,
}

impl Drop for Handle {
    fn drop(&mut self) {
        self.state.lock().drop_handle(self.inode, self.generation);
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("path", &self.path)
            .field("inode", &self.inode)
            .field("generation", &self.generation)
            .finish_non_exhaustive()
    }
}

/// Appends go straight to the inode, or, with
/// [`SimFs::buffer_appends`](super::SimFs::buffer_appends), through a buffer
/// of the handle's own.
#[derive(Debug)]
pub(super) struct SimWritableFile {
    pub(super) handle: Handle,
    /// The file's length as this handle sees it: its bytes at open (none
    /// for a created file, a new inode) plus every append through it,
    /// buffered ones included.
    pub(super) len: u64,
    /// Appended bytes not yet handed to the inode; `None` when appends
    /// land at once.
    pub(super) buffer: Option<Vec<u8>>,
}

impl SimWritableFile {
    /// Counts the op, fires injected faults, and checks the handle survived crashes.
    fn begin<'a>(&self, state: &'a mut State, op: OpKind) -> Result<&'a mut Inode> {
        let h = &self.handle;
        state.begin(op, &h.path)?;
        state.check_alive(op, &h.path, h.generation)?;
        state.inode_mut(op, &h.path, h.inode)
    }
}

/// An injected append error may strike mid-write: a random prefix of `data`
/// lands (never when halted or on a dead handle). Returns its length.
fn torn_append(h: &Handle, state: &mut State, data: &[u8]) -> usize {
    if state.halted
        || state
            .check_alive(OpKind::Append, &h.path, h.generation)
            .is_err()
    {
        return 0;
    }
    let n = state.rng.gen_range(0..=data.len());
    match state.inode_mut(OpKind::Append, &h.path, h.inode) {
        Ok(inode) => {
            let start = inode.data.len();
            inode.data.extend_from_slice(&data[..n]);
            inode.last_append = Some(start..inode.data.len());
            n
        }
        Err(_) => 0,
    }
}

impl SimWritableFile {
    /// Hands the buffered bytes to the inode as one append.
    fn drain(&mut self) -> Result<()> {
        match self.buffer.as_mut().map(std::mem::take) {
            Some(pending) if !pending.is_empty() => {
                // `len` already counts them: undo that, and let the append
                // count what lands.
                self.len -= pending.len() as u64;
                self.land(&pending)
            }
            _ => Ok(()),
        }
    }

    /// Appends `data` to the inode (counted as one append op).
    fn land(&mut self, data: &[u8]) -> Result<()> {
        let mut state = self.handle.state.lock();
        if let Err(e) = self.begin(&mut state, OpKind::Append) {
            let landed = torn_append(&self.handle, &mut state, data);
            drop(state);
            self.len += landed as u64;
            return Err(e);
        }
        if let Some(quota) = state.quota_bytes {
            if state.live_bytes().saturating_add(data.len() as u64) > quota {
                return Err(Error::NoSpace {
                    path: self.handle.path.clone(),
                });
            }
        }
        let inode = state.inode_mut(OpKind::Append, &self.handle.path, self.handle.inode)?;
        if !data.is_empty() {
            let start = inode.data.len();
            inode.data.extend_from_slice(data);
            inode.last_append = Some(start..inode.data.len());
        }
        self.len += data.len() as u64;
        Ok(())
    }
}

impl Drop for SimWritableFile {
    fn drop(&mut self) {
        // As `StdFs` does; after a crash or halt the handle is dead and the
        // bytes are lost.
        let _ = self.drain();
    }
}

impl WritableFile for SimWritableFile {
    fn append(&mut self, data: &[u8]) -> Result<()> {
        match &mut self.buffer {
            Some(buffer) => {
                buffer.extend_from_slice(data);
                self.len += data.len() as u64;
                Ok(())
            }
            None => self.land(data),
        }
    }

    fn flush(&mut self) -> Result<()> {
        self.drain()?;
        let mut state = self.handle.state.lock();
        self.begin(&mut state, OpKind::Flush).map(|_| ())
    }

    fn sync(&mut self) -> Result<()> {
        self.drain()?;
        let (latency, gate) = {
            let state = self.handle.state.lock();
            (state.sync_latency, state.sync_gate.clone())
        };
        gate.pass(&self.handle.path);
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        let mut state = self.handle.state.lock();
        let injected = !state.halted;
        match self.begin(&mut state, OpKind::Sync) {
            Ok(inode) => {
                inode.synced_len = inode.data.len();
                Ok(())
            }
            Err(e) => {
                // As Linux does after a writeback error, the unsynced pages
                // are dropped as if clean: a power loss loses them even when
                // a later fsync succeeds.
                let h = &self.handle;
                let alive = state
                    .check_alive(OpKind::Sync, &h.path, h.generation)
                    .is_ok();
                if injected && alive {
                    if let Ok(inode) = state.inode_mut(OpKind::Sync, &h.path, h.inode) {
                        let unsynced = inode.synced_len..inode.data.len();
                        if !unsynced.is_empty() {
                            inode.lost.push(unsynced);
                        }
                    }
                }
                Err(e)
            }
        }
    }

    fn len(&self) -> u64 {
        self.len
    }
}

/// Reads the inode's current bytes; `len()` is the size at open.
#[derive(Debug)]
pub(super) struct SimRandomAccessFile {
    pub(super) handle: Handle,
    pub(super) len_at_open: u64,
}

impl RandomAccessFile for SimRandomAccessFile {
    fn read_at(&self, offset: u64, len: usize) -> Result<Bytes> {
        let h = &self.handle;
        let mut state = h.state.lock();
        state.begin(OpKind::Read, &h.path)?;
        state.check_alive(OpKind::Read, &h.path, h.generation)?;
        let inode = state.inode_mut(OpKind::Read, &h.path, h.inode)?;
        let file_len = inode.data.len();
        let range = usize::try_from(offset)
            .ok()
            .and_then(|start| Some(start..start.checked_add(len)?));
        match range.and_then(|r| inode.data.get(r)) {
            Some(bytes) => Ok(Bytes::copy_from_slice(bytes)),
            None => Err(past_eof(&h.path, offset, len, file_len)),
        }
    }

    fn len(&self) -> u64 {
        self.len_at_open
    }
}

/// Holds a path in the lock set until dropped or a crash clears the set.
pub(super) struct SimFileLock {
    pub(super) state: Arc<Mutex<State>>,
    pub(super) generation: u64,
    pub(super) path: PathBuf,
}

impl FileLock for SimFileLock {}

impl Drop for SimFileLock {
    fn drop(&mut self) {
        let mut state = self.state.lock();
        // After a crash the path may be locked by a new holder: leave that alone.
        if state.generation == self.generation {
            state.locks.remove(&self.path);
        }
    }
}

impl fmt::Debug for SimFileLock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SimFileLock")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}
