//! Strata itself behind [`Engine`]: the default engine of every run.

use std::path::Path;
use std::sync::Arc;

use strata::cache::Cache;
use strata::{
    ColumnFamily, Db, DbIterator, DbOptions, ReadOptions, Statistics, WriteBatch, WriteOptions,
};

use super::{Cursor, Engine, OpResult, SstFill};
use crate::flags::Flags;
use crate::report::WriteCounters;

/// One open Strata database and the options every operation uses.
pub struct StrataEngine {
    db: Db,
    /// The families keys are spread over (`--num_column_families`), the
    /// default one first.
    families: Vec<ColumnFamily>,
    write_options: WriteOptions,
    read_options: ReadOptions,
    /// The families' options, which SST files for ingestion are written with.
    cf_options: strata::CfOptions,
}

/// What every database of a run shares: statistics and the block cache.
pub struct StrataEnv {
    statistics: Option<Arc<Statistics>>,
    block_cache: Option<Arc<dyn Cache>>,
}

impl StrataEngine {
    /// The family of `key`: db_bench's key number (its first 8 bytes, big
    /// endian) modulo the number of families.
    fn family(&self, key: &[u8]) -> &ColumnFamily {
        let n = self.families.len();
        if n == 1 {
            return &self.families[0];
        }
        let mut number = [0u8; 8];
        let head = key.len().min(8);
        number[8 - head..].copy_from_slice(&key[..head]);
        &self.families[(u64::from_be_bytes(number) % n as u64) as usize]
    }
}

/// db_bench's `--options_file`: the file's DB options and default family
/// options, with the benchmark's `--use_existing_db` and `--statistics`
/// (db_bench keeps those few flags and ignores the other option flags).
fn options_from_file(flags: &Flags, path: &Path, env: &StrataEnv) -> Result<DbOptions, String> {
    let load = strata::LoadOptions {
        ignore_unknown_options: flags.ignore_unknown_options,
        ..strata::LoadOptions::default()
    };
    let (mut options, families) =
        strata::options::load_options_file(Arc::new(strata::StdFs), path, &load)
            .map_err(|e| format!("--options_file={}: {e}", path.display()))?;
    if let Some((_, default)) = families
        .into_iter()
        .find(|(name, _)| name == strata::DEFAULT_COLUMN_FAMILY_NAME)
    {
        options.set_cf_options(default);
    }
    options.create_if_missing = !flags.use_existing_db;
    options.statistics = env.statistics.clone();
    if options.block_cache.is_none() {
        options.block_cache = env.block_cache.clone();
    }
    Ok(options)
}

impl Engine for StrataEngine {
    fn write_sst(&self, path: &Path, fill: &mut SstFill<'_>) -> OpResult {
        let mut writer = strata::SstFileWriter::create(path, &self.cf_options)?;
        fill(&mut |key, value| Ok(writer.put(key, value)?))?;
        writer.finish()?;
        Ok(())
    }

    #[cfg(feature = "web")]
    fn web_view(&self, addr: &str) -> Result<Box<dyn std::any::Any>, String> {
        let view = strata_web::WebView::start(&self.db, addr)?;
        eprintln!("web view of the database at http://{}/", view.addr());
        Ok(Box::new(view))
    }

    fn perf_begin(level: u32) {
        use strata::perf_context::{reset_perf_context, set_perf_level, PerfLevel};
        set_perf_level(PerfLevel::from_number(level).unwrap_or(PerfLevel::Disable));
        reset_perf_context();
    }

    fn perf_report() -> Option<String> {
        use strata::perf_context::{perf_context, set_perf_level, PerfLevel};
        set_perf_level(PerfLevel::Disable);
        Some(perf_context().to_string())
    }

    fn ingest(&self, paths: &[std::path::PathBuf]) -> OpResult {
        let options = strata::IngestExternalFileOptions {
            verify_checksums_before_ingest: false,
            ..Default::default()
        };
        Ok(self.db.ingest_external_file(paths, &options)?)
    }

    type Env = StrataEnv;
    type Batch = WriteBatch;
    type Cursor<'a> = DbIterator;

    fn describe() -> String {
        format!("strata {} (in process)", env!("CARGO_PKG_VERSION"))
    }

    fn env(flags: &Flags) -> Result<StrataEnv, String> {
        Ok(StrataEnv {
            statistics: flags.statistics.then(|| Arc::new(Statistics::new())),
            block_cache: flags.block_cache().map_err(|e| e.to_string())?,
        })
    }

    fn open(flags: &Flags, dir: &Path, env: &StrataEnv) -> Result<Self, String> {
        let merge_operator = match &flags.merge_operator {
            Some(name) => Some(strata::merge_operator_from_name(name).map_err(|e| e.to_string())?),
            None => None,
        };
        let options = match &flags.options_file {
            Some(path) => options_from_file(flags, path, env)?,
            None => DbOptions {
                statistics: env.statistics.clone(),
                block_cache: env.block_cache.clone(),
                merge_operator,
                blob: flags
                    .blob
                    .options(env.block_cache.as_ref())
                    .map_err(|e| e.to_string())?,
                ..flags.db_options()
            },
        };
        let names: Vec<String> = (1..flags.num_column_families)
            .map(|i| format!("column_family_name_{i:06}"))
            .collect();
        let options = DbOptions {
            create_missing_column_families: true,
            ..options
        };
        let cf_options = options.cf_options();
        let db = Db::open_cf(
            dir,
            options,
            names.iter().map(|n| (n.clone(), cf_options.clone())),
        )
        .map_err(|e| format!("opening {}: {e}", dir.display()))?;
        let mut families = vec![db.default_cf()];
        for name in &names {
            families.push(
                db.cf_handle(name)
                    .ok_or_else(|| format!("column family {name} is missing"))?,
            );
        }
        Ok(StrataEngine {
            db,
            families,
            write_options: WriteOptions {
                sync: flags.sync,
                disable_wal: flags.disable_wal,
                no_slowdown: false,
            },
            read_options: flags.read_options(),
            cf_options,
        })
    }

    /// db_bench's `DestroyDB`, through the engine's own [`Db::destroy`]: it
    /// takes the database's LOCK first, so a database another process has
    /// open is refused (`LockHeld`) with nothing deleted, instead of having
    /// its files pulled from under it. Only the engine's files go, so a
    /// mistyped `--db` cannot wipe unrelated ones. A missing directory is fine.
    fn destroy(flags: &Flags, dir: &Path, _env: &StrataEnv) -> Result<(), String> {
        Db::destroy(dir, &flags.db_options()).map_err(|e| {
            format!(
                "destroying {} (as --use_existing_db=0 asks): {e}",
                dir.display()
            )
        })
    }

    fn close(self) -> Result<(), String> {
        self.db.close().map_err(|e| e.to_string())
    }

    fn statistics(env: &StrataEnv) -> Option<String> {
        env.statistics.as_ref().map(|s| s.report())
    }

    fn new_batch(&self) -> WriteBatch {
        WriteBatch::new()
    }

    fn batch_put(&self, batch: &mut WriteBatch, key: &[u8], value: &[u8]) -> OpResult {
        Ok(batch.put_cf(self.family(key), key, value)?)
    }

    fn batch_delete(&self, batch: &mut WriteBatch, key: &[u8]) -> OpResult {
        Ok(batch.delete_cf(self.family(key), key)?)
    }

    fn batch_delete_range(&self, batch: &mut WriteBatch, begin: &[u8], end: &[u8]) -> OpResult {
        // The begin key picks the family, as db_bench picks one per tombstone.
        Ok(batch.delete_range_cf(self.family(begin), begin, end)?)
    }

    fn write(&self, batch: WriteBatch) -> OpResult {
        Ok(self.db.write(&self.write_options, batch)?)
    }

    fn put(&self, key: &[u8], value: &[u8]) -> OpResult {
        if self.families.len() == 1 {
            return Ok(self.db.put_opt(&self.write_options, key, value)?);
        }
        let mut batch = WriteBatch::new();
        batch.put_cf(self.family(key), key, value)?;
        Ok(self.db.write(&self.write_options, batch)?)
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> OpResult {
        let mut batch = WriteBatch::new();
        batch.merge_cf(self.family(key), key, operand)?;
        Ok(self.db.write(&self.write_options, batch)?)
    }

    fn get(&self, key: &[u8]) -> OpResult<Option<usize>> {
        let value = self
            .db
            .get_cf_opt(self.family(key), &self.read_options, key)?;
        Ok(value.map(|v| v.len()))
    }

    fn multi_get(&self, keys: &[Vec<u8>]) -> OpResult<Vec<Option<usize>>> {
        let found = if self.families.len() > 1 {
            let requests: Vec<_> = keys.iter().map(|k| (self.family(k), k)).collect();
            self.db.multi_get_cfs(&self.read_options, &requests)
        } else {
            self.db.multi_get(&self.read_options, keys)
        };
        found
            .into_iter()
            .map(|got| Ok(got?.map(|v| v.len())))
            .collect()
    }

    fn cursor(&self) -> DbIterator {
        self.db.iter_opt(&self.read_options)
    }

    fn flush(&self) -> OpResult {
        for cf in &self.families {
            self.db.flush_cf(cf)?;
        }
        Ok(())
    }

    fn compact_all(&self) -> OpResult {
        for cf in &self.families {
            self.db.compact_range_cf(cf, None, None)?;
        }
        Ok(())
    }

    fn wait_for_compaction(&self) -> OpResult {
        Ok(self.db.wait_for_compaction()?)
    }

    fn report(&self, property: &str) -> Option<String> {
        self.db.property(property)
    }

    fn write_counters(&self) -> Option<WriteCounters> {
        let number = |name: &str| {
            self.db
                .property(name)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0)
        };
        Some(WriteCounters {
            ingest: number("strata.bytes-written"),
            wal: number("strata.wal-bytes-written"),
            tables: number("strata.flush-bytes-written")
                + number("strata.compaction-bytes-written"),
        })
    }
}

impl Cursor for DbIterator {
    fn seek(&mut self, key: &[u8]) {
        DbIterator::seek(self, key);
    }
    fn seek_for_prev(&mut self, key: &[u8]) {
        DbIterator::seek_for_prev(self, key);
    }
    fn seek_to_first(&mut self) {
        DbIterator::seek_to_first(self);
    }
    fn seek_to_last(&mut self) {
        DbIterator::seek_to_last(self);
    }
    fn valid(&self) -> bool {
        DbIterator::valid(self)
    }
    fn key(&self) -> &[u8] {
        DbIterator::key(self).unwrap_or_default()
    }
    fn value(&self) -> &[u8] {
        DbIterator::value(self).unwrap_or_default()
    }
    fn next(&mut self) {
        DbIterator::next(self);
    }
    fn prev(&mut self) {
        DbIterator::prev(self);
    }
    fn status(&self) -> OpResult {
        Ok(DbIterator::status(self)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destroy_removes_only_engine_files() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "CURRENT",
            "MANIFEST-000001",
            "000007.sst",
            "000008.log",
            "LOG",
        ] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), b"keep").unwrap();
        let flags = Flags::default();
        let env = StrataEngine::env(&flags).unwrap();
        StrataEngine::destroy(&flags, dir.path(), &env).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["notes.txt"]);
        StrataEngine::destroy(&flags, &dir.path().join("missing"), &env).unwrap();
    }

    #[test]
    fn options_file_replaces_the_option_flags() {
        let dir = tempfile::tempdir().unwrap();
        let written = DbOptions {
            create_if_missing: true,
            write_buffer_size: 3 << 20,
            merge_operator: Some(strata::merge_operator_from_name("uint64add").unwrap()),
            ..DbOptions::default()
        };
        Db::open(dir.path().join("a"), written)
            .unwrap()
            .close()
            .unwrap();
        let file = std::fs::read_dir(dir.path().join("a"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().contains("OPTIONS-"))
            .max()
            .unwrap();
        let flags = Flags {
            write_buffer_size: 64 << 20,
            options_file: Some(file),
            ..Flags::default()
        };
        let env = StrataEngine::env(&flags).unwrap();
        let options =
            options_from_file(&flags, flags.options_file.as_deref().unwrap(), &env).unwrap();
        assert_eq!(options.write_buffer_size, 3 << 20);
        assert!(options.merge_operator.is_some());
        assert!(options.create_if_missing);
        // A file with options Strata lacks is refused, naming them, unless
        // asked to skip them.
        let rocks = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../strata/tests/fixtures/rocksdb-options/OPTIONS-000007");
        let err = options_from_file(&flags, &rocks, &env).unwrap_err();
        assert!(err.contains("compaction_readahead_size"), "{err}");
        let lenient = Flags {
            ignore_unknown_options: true,
            ..flags
        };
        options_from_file(&lenient, &rocks, &env).unwrap();
    }
}
