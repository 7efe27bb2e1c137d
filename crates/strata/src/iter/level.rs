//! One cursor over a sorted level (L1 and below): its files do not overlap, so
//! the level reads as one sorted run. Only the table under the cursor is open,
//! and a seek opens one table instead of one per file, which keeps the merging
//! iterator's heap at one child per level rather than one per file.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key::user_key;
use crate::options::{PrefixExtractor, ReadOptions};
use crate::table::iter::TableIterator;
use crate::table_cache::TableCache;
use crate::version::file_index::FileIndex;
use crate::version::{FileMetaData, Version};

/// Iterates the files of one sorted level in key order, in both directions.
#[derive(Debug)]
pub struct LevelIterator {
    /// Keeps the files live: they are opened lazily, and a file no live
    /// version names may be deleted.
    version: Arc<Version>,
    cache: Arc<TableCache>,
    /// The level the files are in (1 or deeper).
    level: usize,
    /// Sorted by smallest key; no two overlap.
    files: Vec<Arc<FileMetaData>>,
    /// Search index of `files`, as the version searches its levels.
    index: FileIndex,
    read_options: ReadOptions,
    /// Index into `files` of the open table, and its cursor.
    current: Option<(usize, TableIterator)>,
    error: Option<Error>,
}

impl LevelIterator {
    /// `files` must be files of `version` from `level` (or a contiguous run
    /// of them), in order.
    pub fn new(
        version: Arc<Version>,
        cache: Arc<TableCache>,
        level: usize,
        files: Vec<Arc<FileMetaData>>,
        read_options: &ReadOptions,
    ) -> Self {
        let index = FileIndex::build(&files, version.file_search(), version.order());
        LevelIterator {
            version,
            cache,
            level,
            files,
            index,
            read_options: read_options.clone(),
            current: None,
            error: None,
        }
    }

    /// Opens file `i` (closing the current one); false when there is no such
    /// file or it cannot be opened (the error is kept).
    fn open(&mut self, i: usize) -> bool {
        if self.current.as_ref().is_some_and(|(open, _)| *open == i) {
            return true;
        }
        self.current = None;
        let Some(file) = self.files.get(i) else {
            return false;
        };
        match self.cache.get(file, self.level, self.version.order()) {
            Ok(table) => {
                self.current = Some((i, table.iter(&self.read_options)));
                true
            }
            Err(e) => {
                self.error.get_or_insert(e);
                false
            }
        }
    }

    fn table(&mut self) -> Option<&mut TableIterator> {
        self.current.as_mut().map(|(_, it)| it)
    }

    /// The current table's error, kept once the cursor moves on.
    fn keep_table_error(&mut self) {
        if let Some(Err(e)) = self.current.as_ref().map(|(_, it)| it.status()) {
            self.error.get_or_insert(e);
        }
    }

    /// From file `i` on, the first entry of the first non-empty file.
    fn forward_from(&mut self, mut i: usize) {
        while self.error.is_none() && self.open(i) {
            if let Some(it) = self.table() {
                it.seek_to_first();
                if it.valid() {
                    return;
                }
            }
            self.keep_table_error();
            i += 1;
        }
        self.current = None;
    }

    /// From file `i` down, the last entry of the first non-empty file.
    fn backward_from(&mut self, i: Option<usize>) {
        let mut next = i;
        while let Some(i) = next {
            if self.error.is_some() || !self.open(i) {
                break;
            }
            if let Some(it) = self.table() {
                it.seek_to_last();
                if it.valid() {
                    return;
                }
            }
            self.keep_table_error();
            next = i.checked_sub(1);
        }
        self.current = None;
    }
}

impl InternalIterator for LevelIterator {
    fn valid(&self) -> bool {
        self.error.is_none() && self.current.as_ref().is_some_and(|(_, it)| it.valid())
    }

    fn seek_to_first(&mut self) {
        self.forward_from(0);
    }

    fn seek_to_last(&mut self) {
        self.backward_from(self.files.len().checked_sub(1));
    }

    fn seek(&mut self, target: &[u8]) {
        // The first file whose largest key is >= target holds the answer, or
        // the answer is the first entry after it.
        let i = self.index.seek_file(&self.files, target);
        if !self.open(i) {
            self.current = None;
            return;
        }
        if let Some(it) = self.table() {
            it.seek(target);
            if it.valid() {
                return;
            }
        }
        self.keep_table_error();
        self.forward_from(i + 1);
    }

    fn seek_in_prefix(&mut self, target: &[u8], extractor: &PrefixExtractor, prefix: &[u8]) {
        let mut i = self.index.seek_file(&self.files, target);
        // Files after the first may hold keys of the prefix too; the run
        // ends at the first file that starts past it: the keys above
        // `prefix` either have it or come after every key that has it.
        while self.error.is_none() {
            let Some(file) = self.files.get(i) else {
                break;
            };
            let first = user_key(&file.smallest);
            let past_prefix = first > prefix && extractor.prefix(first) != Some(prefix);
            if past_prefix || !self.open(i) {
                break;
            }
            if let Some(it) = self.table() {
                it.seek_in_prefix(target, extractor, prefix);
                if it.valid() {
                    return;
                }
            }
            self.keep_table_error();
            i += 1;
        }
        self.current = None;
    }

    fn seek_for_prev(&mut self, target: &[u8]) {
        // The last file whose smallest key is <= target.
        let after = self.files.partition_point(|f| {
            self.version.order().compare_internal(&f.smallest, target) != Ordering::Greater
        });
        let Some(i) = after.checked_sub(1) else {
            self.current = None;
            return;
        };
        if !self.open(i) {
            self.current = None;
            return;
        }
        if let Some(it) = self.table() {
            it.seek_for_prev(target);
            if it.valid() {
                return;
            }
        }
        self.keep_table_error();
        self.backward_from(i.checked_sub(1));
    }

    fn next(&mut self) {
        let Some((i, it)) = self.current.as_mut() else {
            return;
        };
        it.next();
        if it.valid() {
            return;
        }
        let i = *i;
        self.keep_table_error();
        self.forward_from(i + 1);
    }

    fn prev(&mut self) {
        let Some((i, it)) = self.current.as_mut() else {
            return;
        };
        it.prev();
        if it.valid() {
            return;
        }
        let i = *i;
        self.keep_table_error();
        self.backward_from(i.checked_sub(1));
    }

    fn key(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(_, it)| it.key())
    }

    fn value(&self) -> &[u8] {
        self.current.as_ref().map_or(&[], |(_, it)| it.value())
    }

    fn status(&self) -> Result<()> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        self.current.as_ref().map_or(Ok(()), |(_, it)| it.status())
    }
}
