use std::path::PathBuf;

use super::*;
use crate::checksum::ChecksumType;
use crate::compression::CompressionType;
use crate::fs::sim::{CrashMode, Fault, OpKind};
use crate::fs::SimFs;
use crate::merge::{MergeError, StringAppendOperator, UInt64AddOperator};
use crate::options::{
    CompactionStyle, FifoOptions, IndexType, TableOptions, UniversalOptions, WalRecoveryMode,
};

const DIR: &str = "/db";

fn sim() -> (SimFs, PathBuf) {
    let fs = SimFs::new(11);
    let dir = PathBuf::from(DIR);
    fs.create_dir_all(&dir).unwrap();
    (fs, dir)
}

fn load_sim(fs: &SimFs, load: &LoadOptions) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
    load_latest_options_with_fs(Arc::new(fs.clone()), Path::new(DIR), load)
}

/// Writes `text` as `/db/OPTIONS-000001` and loads it.
fn load_text(text: &str, load: &LoadOptions) -> Result<(DbOptions, Vec<(String, CfOptions)>)> {
    let (fs, dir) = sim();
    let mut file = fs.create(&options_file_name(&dir, 1)).unwrap();
    file.append(text.as_bytes()).unwrap();
    drop(file);
    load_sim(&fs, load)
}

fn strict() -> LoadOptions {
    LoadOptions {
        compaction_filters: vec![Arc::new(KeepAll)],
        ..LoadOptions::default()
    }
}

/// A compaction filter the loads above know by name.
#[derive(Debug)]
struct KeepAll;

impl crate::compaction_filter::CompactionFilter for KeepAll {
    fn name(&self) -> &str {
        "KeepAll"
    }

    fn filter(
        &self,
        _: &crate::compaction_filter::FilterContext,
        _: &[u8],
        _: &[u8],
    ) -> crate::compaction_filter::Decision {
        crate::compaction_filter::Decision::Keep
    }
}

fn lenient() -> LoadOptions {
    LoadOptions {
        ignore_unknown_options: true,
        ..LoadOptions::default()
    }
}

/// Options different from the defaults in every field the file carries.
fn unusual_cf(style: CompactionStyle) -> CfOptions {
    CfOptions {
        write_buffer_size: 8 << 20,
        max_write_buffer_number: 5,
        comparator: Arc::new(crate::comparator::ReverseBytewiseComparator),
        table: TableOptions {
            block_size: 16 << 10,
            block_restart_interval: 8,
            bloom_bits_per_key: 7.5,
            whole_key_filtering: false,
            prefix_extractor: Some(crate::options::PrefixExtractor::Capped(5)),
            compression: CompressionType::Zstd { level: 6 },
            checksum: ChecksumType::Crc32c,
            cache_index_and_filter_blocks: true,
            cache_index_and_filter_blocks_with_high_priority: false,
            pin_l0_filter_and_index_blocks_in_cache: true,
            pin_top_level_index_and_filter: false,
            index_type: IndexType::TwoLevelIndexSearch,
            partition_filters: true,
            metadata_block_size: 8192,
        },
        compaction: CompactionOptions {
            compaction_style: style,
            num_levels: 5,
            level0_file_num_compaction_trigger: 3,
            level0_slowdown_writes_trigger: 11,
            level0_stop_writes_trigger: 17,
            max_bytes_for_level_base: 100 << 20,
            max_bytes_for_level_multiplier: 8.5,
            level_compaction_dynamic_level_bytes: false,
            target_file_size_base: 16 << 20,
            target_file_size_multiplier: 2,
            max_compaction_bytes: 999 << 20,
            max_background_jobs: 6,
            max_subcompactions: 3,
            compression_per_level: vec![
                CompressionType::None,
                CompressionType::Lz4,
                CompressionType::Zstd { level: 6 },
            ],
            bottommost_compression: Some(CompressionType::Zstd { level: 19 }),
            soft_pending_compaction_bytes_limit: 1 << 30,
            hard_pending_compaction_bytes_limit: 2 << 30,
            delayed_write_rate: 1 << 20,
            disable_auto_compactions: true,
            compaction_options_universal: UniversalOptions {
                size_ratio: 3,
                min_merge_width: 4,
                max_merge_width: 9,
                max_size_amplification_percent: 150,
            },
            compaction_options_fifo: FifoOptions {
                max_table_files_size: 5 << 30,
            },
            ttl: 3600,
        },
        merge_operator: Some(Arc::new(StringAppendOperator::new(b"#:|\\".to_vec()))),
        compaction_filter: Some(Arc::new(KeepAll)),
        memtable_prefix_bloom_size_ratio: 0.125,
        memtable_whole_key_filtering: true,
        blob: crate::options::BlobOptions {
            enable_blob_files: true,
            min_blob_size: 2048,
            blob_file_size: 64 << 20,
            blob_compression_type: CompressionType::Lz4,
            blob_file_starting_level: 2,
            enable_blob_garbage_collection: true,
            blob_garbage_collection_age_cutoff: 0.5,
            blob_garbage_collection_force_threshold: 0.75,
            blob_compaction_readahead_size: 2 << 20,
            // A cache object has no text form: not in the file.
            blob_cache: None,
            prepopulate_blob_cache: crate::options::PrepopulateBlobCache::FlushOnly,
        },
    }
}

fn unusual_db() -> DbOptions {
    let mut db = DbOptions {
        create_if_missing: true,
        error_if_exists: true,
        create_missing_column_families: true,
        use_mmap_reads: true,
        use_direct_reads: true,
        use_direct_io_for_flush_and_compaction: true,
        wal_recovery_mode: WalRecoveryMode::AbsoluteConsistency,
        paranoid_checks: false,
        manual_wal_flush: true,
        keep_log_file_num: 7,
        max_open_files: 500,
        ..DbOptions::default()
    };
    db.set_cf_options(unusual_cf(CompactionStyle::Level));
    db
}

/// Compares every field the file carries; the destructuring without `..`
/// stops the build when a field is added and not considered here.
fn assert_same_cf(got: &CfOptions, want: &CfOptions) {
    let CfOptions {
        write_buffer_size,
        max_write_buffer_number,
        comparator,
        table,
        compaction,
        merge_operator,
        compaction_filter,
        memtable_prefix_bloom_size_ratio,
        memtable_whole_key_filtering,
        blob,
    } = want;
    assert_eq!(got.blob.to_string(), blob.to_string());
    assert_eq!(got.write_buffer_size, *write_buffer_size);
    assert_eq!(
        got.memtable_prefix_bloom_size_ratio,
        *memtable_prefix_bloom_size_ratio
    );
    assert_eq!(
        got.memtable_whole_key_filtering,
        *memtable_whole_key_filtering
    );
    assert_eq!(got.max_write_buffer_number, *max_write_buffer_number);
    assert_eq!(got.comparator.name(), comparator.name());
    assert_eq!(&got.table, table);
    assert_eq!(&got.compaction, compaction);
    let describe = |op: &Option<Arc<dyn MergeOperator>>| {
        op.as_ref().map(|op| (op.name().to_owned(), op.options()))
    };
    assert_eq!(describe(&got.merge_operator), describe(merge_operator));
    // Written by name, found again among `LoadOptions::compaction_filters`.
    let name = |f: &Option<Arc<dyn crate::compaction_filter::CompactionFilter>>| {
        f.as_ref().map(|f| f.name().to_owned())
    };
    assert_eq!(name(&got.compaction_filter), name(compaction_filter));
}

fn assert_same_db(got: &DbOptions, want: &DbOptions) {
    let DbOptions {
        create_if_missing,
        error_if_exists,
        create_missing_column_families,
        write_buffer_size: _,
        max_write_buffer_number: _,
        comparator: _,
        table: _,
        compaction: _,
        merge_operator: _,
        compaction_filter: _,
        memtable_prefix_bloom_size_ratio: _,
        memtable_whole_key_filtering: _,
        blob: _,
        use_mmap_reads,
        use_direct_reads,
        use_direct_io_for_flush_and_compaction,
        wal_recovery_mode,
        paranoid_checks,
        manual_wal_flush,
        // No text form: not in the file (see the module comment).
        fs: _,
        rate_limiter: _,
        block_cache: _,
        statistics: _,
        listeners: _,
        services: _,
        // Strata's own search switch: RocksDB would refuse it in the file.
        file_index_prefix_cache: _,
        keep_log_file_num,
        max_open_files,
    } = want;
    assert_eq!(got.create_if_missing, *create_if_missing);
    assert_eq!(got.error_if_exists, *error_if_exists);
    assert_eq!(
        got.create_missing_column_families,
        *create_missing_column_families
    );
    assert_eq!(got.use_mmap_reads, *use_mmap_reads);
    assert_eq!(got.use_direct_reads, *use_direct_reads);
    assert_eq!(
        got.use_direct_io_for_flush_and_compaction,
        *use_direct_io_for_flush_and_compaction
    );
    assert_eq!(got.wal_recovery_mode, *wal_recovery_mode);
    assert_eq!(got.paranoid_checks, *paranoid_checks);
    assert_eq!(got.manual_wal_flush, *manual_wal_flush);
    assert_eq!(got.keep_log_file_num, *keep_log_file_num);
    assert_eq!(got.max_open_files, *max_open_files);
    assert_same_cf(&got.cf_options(), &want.cf_options());
}

#[test]
fn every_option_roundtrips_through_the_file() {
    let (fs, dir) = sim();
    let db = unusual_db();
    let mut universal = unusual_cf(CompactionStyle::Universal);
    universal.merge_operator = Some(Arc::new(UInt64AddOperator));
    universal.table.compression = CompressionType::Snappy;
    universal.compaction.compression_per_level.clear();
    let mut fifo = unusual_cf(CompactionStyle::Fifo);
    fifo.merge_operator = None;
    fifo.compaction.bottommost_compression = None;
    let families = [
        ("default", &db.cf_options()),
        ("universal \"#:\n", &universal),
        ("fifo", &fifo),
    ];
    write_options_file(&fs, &dir, 12, &db, &families).unwrap();
    let (loaded, got) = load_sim(&fs, &strict()).unwrap();
    assert_same_db(&loaded, &db);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["default", "universal \"#:\n", "fifo"]);
    for ((_, got), (_, want)) in got.iter().zip(families) {
        assert_same_cf(got, want);
    }
    // Every option in the catalogue differs from its default here, so a
    // getter or setter that forgot its field would have shown above.
    let defaults = DbOptions::default();
    for def in DB_OPTIONS {
        assert_ne!((def.get)(&db), (def.get)(&defaults), "{}", def.name);
    }
    let default_cf = CfOptions::default();
    for def in CF_OPTIONS {
        let differs = families
            .iter()
            .any(|(_, cf)| (def.get)(cf) != (def.get)(&default_cf));
        let constant = ["table_factory", "compaction_filter_factory"].contains(&def.name);
        assert!(differs != constant, "{}", def.name);
    }
    for def in TABLE_OPTIONS {
        let cf = db.cf_options();
        assert_ne!(
            (def.get)(&cf.table),
            (def.get)(&default_cf.table),
            "{}",
            def.name
        );
    }
}

#[test]
fn defaults_roundtrip_and_the_default_family_is_added_when_not_listed() {
    let (fs, dir) = sim();
    let db = DbOptions::default();
    write_options_file(&fs, &dir, 3, &db, &[]).unwrap();
    let (loaded, families) = load_sim(&fs, &strict()).unwrap();
    assert_same_db(&loaded, &db);
    assert_eq!(families.len(), 1);
    assert_same_cf(&families[0].1, &db.cf_options());
    let text = options_file_text(&db, &[]).unwrap();
    assert!(
        text.starts_with("# This is a RocksDB option file."),
        "{text}"
    );
    assert!(text.contains("[CFOptions \"default\"]\n"), "{text}");
    assert!(text.contains("  merge_operator=nullptr\n"), "{text}");
    assert!(
        text.contains("  comparator=leveldb.BytewiseComparator\n"),
        "{text}"
    );
    assert!(
        text.contains("  compression=kSnappyCompression\n"),
        "{text}"
    );
    assert!(text.contains("  checksum=kXXH3\n"), "{text}");
    assert!(
        text.contains("  filter_policy=bloomfilter:10:false\n"),
        "{text}"
    );
    assert!(!text.contains("compression_opts"), "{text}");
}

#[test]
fn db_wide_compaction_fields_reach_every_family() {
    let (fs, dir) = sim();
    let db = unusual_db();
    let other = CfOptions::default();
    write_options_file(
        &fs,
        &dir,
        4,
        &db,
        &[("default", &db.cf_options()), ("b", &other)],
    )
    .unwrap();
    let (_, families) = load_sim(&fs, &strict()).unwrap();
    let b = &families[1].1.compaction;
    assert_eq!(b.max_background_jobs, 6);
    assert_eq!(b.max_subcompactions, 3);
    assert_eq!(b.delayed_write_rate, 1 << 20);
    assert_eq!(b.num_levels, CompactionOptions::default().num_levels);
}

#[test]
fn families_listed_twice_or_default_not_first_are_refused() {
    let db = DbOptions::default();
    let cf = CfOptions::default();
    for families in [
        vec![("a", &cf), ("a", &cf)],
        vec![("a", &cf), ("default", &cf)],
    ] {
        let err = options_file_text(&db, &families).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidArgument {
                    field: "families",
                    ..
                }
            ),
            "{err}"
        );
    }
}

#[test]
fn the_newest_two_files_are_kept() {
    let (fs, dir) = sim();
    let mut db = DbOptions::default();
    for (number, size) in [(3, 1 << 20), (5, 2 << 20), (9, 3 << 20), (10, 4 << 20)] {
        db.write_buffer_size = size;
        write_options_file(&fs, &dir, number, &db, &[]).unwrap();
    }
    let mut names = fs.list(&dir).unwrap();
    names.sort();
    assert_eq!(names, ["OPTIONS-000009", "OPTIONS-000010"]);
    assert_eq!(
        load_sim(&fs, &strict()).unwrap().0.write_buffer_size,
        4 << 20
    );
}

#[test]
fn a_crash_or_failure_leaves_the_previous_file_loadable() {
    let (fs, dir) = sim();
    let mut db = DbOptions::default();
    write_options_file(&fs, &dir, 2, &db, &[]).unwrap();
    db.write_buffer_size = 1 << 20;
    for op in [OpKind::Sync, OpKind::Rename] {
        fs.inject(Fault::ErrorOnNth { op, n: 1 });
        assert!(write_options_file(&fs, &dir, 7, &db, &[]).is_err());
        fs.clear_faults();
        fs.crash(CrashMode::POWER_LOSS);
        let (loaded, _) = load_sim(&fs, &strict()).unwrap();
        assert_eq!(loaded.write_buffer_size, 64 << 20);
    }
    write_options_file(&fs, &dir, 8, &db, &[]).unwrap();
    fs.crash(CrashMode::POWER_LOSS);
    assert_eq!(
        load_sim(&fs, &strict()).unwrap().0.write_buffer_size,
        1 << 20
    );
}

#[test]
fn no_options_file_is_not_found() {
    let (fs, _) = sim();
    let err = load_sim(&fs, &strict()).unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rocksdb-options")
}

#[test]
fn rocksdbs_file_lists_every_unknown_option_without_the_flag() {
    let err = load_latest_options(fixture_dir(), &strict()).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidArgument {
                field: "options_file",
                ..
            }
        ),
        "{err}"
    );
    let message = err.to_string();
    for unknown in [
        "[DBOptions] compaction_readahead_size (line 12)",
        "[DBOptions] db_host_id",
        "[CFOptions \"default\"] compression_opts.max_dict_buffer_bytes",
        "[CFOptions \"default\"] compaction_options_fifo.allow_compaction",
        "[CFOptions \"default\"] memtable_factory",
        "[TableOptions/BlockBasedTable \"default\"] data_block_index_type",
        "ignore_unknown_options",
    ] {
        assert!(
            message.contains(unknown),
            "{unknown} missing from {message}"
        );
    }
    for known in [
        "] write_buffer_size (",
        "] block_size (",
        "] max_open_files (",
        "] index_type (",
        "] partition_filters (",
        "] metadata_block_size (",
    ] {
        assert!(!message.contains(known), "{known} in {message}");
    }
}

#[test]
fn rocksdbs_file_loads_with_the_flag_and_its_values_match() {
    let (db, families) = load_latest_options(fixture_dir(), &lenient()).unwrap();
    assert_eq!(families.len(), 1);
    assert_eq!(families[0].0, "default");
    assert!(db.create_if_missing);
    assert!(db.create_missing_column_families);
    assert_eq!(db.max_open_files, -1);
    assert_eq!(db.keep_log_file_num, 1000);
    assert_eq!(db.wal_recovery_mode, WalRecoveryMode::PointInTimeRecovery);
    assert_eq!(db.compaction.max_background_jobs, 2);
    assert_eq!(db.compaction.delayed_write_rate, 8 << 20);
    assert_eq!(db.write_buffer_size, 8 << 20);
    assert_eq!(db.max_write_buffer_number, 3);
    let c = &db.compaction;
    assert_eq!(c.compaction_style, CompactionStyle::Level);
    assert_eq!(c.num_levels, 6);
    assert_eq!(c.level0_file_num_compaction_trigger, 6);
    assert_eq!(c.max_bytes_for_level_base, 128 << 20);
    assert_eq!(c.max_bytes_for_level_multiplier, 10.0);
    assert!(!c.level_compaction_dynamic_level_bytes);
    assert_eq!(c.bottommost_compression, None);
    use CompressionType::{Lz4, None as Plain};
    assert_eq!(c.compression_per_level, [Plain, Plain, Lz4, Lz4, Lz4, Lz4]);
    assert_eq!(c.compaction_options_universal.max_merge_width, u32::MAX);
    let t = &db.table;
    assert_eq!(t.compression, Lz4);
    assert_eq!(t.block_size, 8192);
    assert_eq!(t.block_restart_interval, 16);
    assert_eq!(t.bloom_bits_per_key, 10.0);
    assert_eq!(t.checksum, ChecksumType::Crc32c);
    assert!(t.cache_index_and_filter_blocks);
    assert!(!t.pin_top_level_index_and_filter);
    assert_eq!(t.index_type, IndexType::BinarySearch);
    assert!(!t.partition_filters);
    assert_eq!(t.metadata_block_size, 4096);
    let op = db.merge_operator.as_ref().unwrap();
    assert_eq!(op.name(), "StringAppendOperator");
    assert_eq!(op.full_merge(b"k", Some(b"a"), &[b"b"]).unwrap(), b"a,b");
    // What RocksDB's defaults make of a leveled database is valid here too.
    db.validate().unwrap();
}

#[test]
fn bad_values_name_the_option_value_and_line_even_with_the_flag() {
    let file = |cf_line: &str| {
        format!("[DBOptions]\n  max_open_files=-1\n[CFOptions \"default\"]\n  ttl=0\n  {cf_line}\n")
    };
    let cases = [
        ("write_buffer_size=64MB", "write_buffer_size", "64MB"),
        (
            "compression=kZlibCompression",
            "compression",
            "kZlibCompression",
        ),
        (
            "comparator=rocksdb.NoSuchComparator",
            "comparator",
            "NoSuchComparator",
        ),
        ("table_factory=PlainTable", "table_factory", "PlainTable"),
        (
            "merge_operator=SumOperator",
            "merge_operator",
            "SumOperator",
        ),
        (
            "disable_auto_compactions=yes",
            "disable_auto_compactions",
            "yes",
        ),
        (
            "compaction_options_fifo=max_table_files_size",
            "compaction_options_fifo",
            "max_table",
        ),
    ];
    for (line, option, value) in cases {
        for load in [strict(), lenient()] {
            let err = load_text(&file(line), &load).unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(&err, Error::InvalidArgument { field, .. } if *field == option),
                "{message}"
            );
            assert!(
                message.contains("line 5") && message.contains(value),
                "{message}"
            );
            assert!(message.contains("/db/OPTIONS-000001"), "{message}");
        }
    }
    let plain = "[DBOptions]\n[CFOptions \"default\"]\n[TableOptions/PlainTable \"default\"]\n";
    let message = load_text(plain, &lenient()).unwrap_err().to_string();
    assert!(
        message.contains("PlainTable") && message.contains("line 3"),
        "{message}"
    );
    let malformed = "[DBOptions]\n  max_open_files\n[CFOptions \"default\"]\n";
    let message = load_text(malformed, &lenient()).unwrap_err().to_string();
    assert!(
        message.contains("line 2") && message.contains("max_open_files"),
        "{message}"
    );
}

#[test]
fn index_types_strata_lacks_are_named() {
    let file = |index_type: &str| {
        format!(
            "[DBOptions]\n[CFOptions \"default\"]\n[TableOptions/BlockBasedTable \"default\"]\n  \
             index_type={index_type}\n  partition_filters=true\n  metadata_block_size=1024\n"
        )
    };
    let (_, families) = load_text(&file("kTwoLevelIndexSearch"), &strict()).unwrap();
    let table = &families[0].1.table;
    assert_eq!(table.index_type, IndexType::TwoLevelIndexSearch);
    assert!(table.partition_filters && table.partitioned_filter());
    assert_eq!(table.metadata_block_size, 1024);
    for unknown in ["kHashSearch", "kBinarySearchWithFirstKey", "binary"] {
        for load in [strict(), lenient()] {
            let err = load_text(&file(unknown), &load).unwrap_err();
            let message = err.to_string();
            assert!(
                matches!(&err, Error::InvalidArgument { field, .. } if *field == "index_type"),
                "{message}"
            );
            assert!(
                message.contains(unknown) && message.contains("line 4"),
                "{message}"
            );
        }
    }
}

#[test]
fn the_applications_merge_operators_are_found_by_name() {
    #[derive(Debug)]
    struct Concat;
    impl MergeOperator for Concat {
        fn name(&self) -> &str {
            "ConcatOperator"
        }
        fn full_merge(
            &self,
            _key: &[u8],
            existing: Option<&[u8]>,
            operands: &[&[u8]],
        ) -> Result<Vec<u8>, MergeError> {
            Ok(existing
                .into_iter()
                .chain(operands.iter().copied())
                .flatten()
                .copied()
                .collect())
        }
    }
    let text = "[DBOptions]\n[CFOptions \"default\"]\n  merge_operator=ConcatOperator\n";
    assert!(load_text(text, &strict()).is_err());
    let load = LoadOptions {
        merge_operators: vec![Arc::new(Concat)],
        ..LoadOptions::default()
    };
    let (db, _) = load_text(text, &load).unwrap();
    assert_eq!(db.merge_operator.unwrap().name(), "ConcatOperator");
}

#[test]
fn a_compaction_filter_is_written_by_name_and_must_be_given_to_load() {
    let (fs, dir) = sim();
    let db = DbOptions {
        compaction_filter: Some(Arc::new(KeepAll)),
        ..DbOptions::default()
    };
    write_options_file(&fs, &dir, 3, &db, &[]).unwrap();
    let (loaded, _) = load_sim(&fs, &strict()).unwrap();
    assert_eq!(
        loaded.compaction_filter.map(|f| f.name().to_owned()),
        Some("KeepAll".into())
    );
    // Without the filter's code the file cannot be honoured, whether or not
    // unknown options are skipped: skipped, compactions ran without the
    // filter and the next OPTIONS file said `compaction_filter=nullptr`.
    for load in [LoadOptions::default(), lenient()] {
        let err = load_sim(&fs, &load).unwrap_err();
        let message = err.to_string();
        assert!(
            matches!(&err, Error::InvalidArgument { field, .. } if *field == "compaction_filter"),
            "{message}"
        );
        assert!(
            message.contains("KeepAll") && message.contains("line "),
            "{message}"
        );
    }
}

/// An application's comparator is found by name among
/// `LoadOptions::comparators`; without it the name is refused, strict or
/// lenient, since data sorted by an unknown order cannot be read.
#[test]
fn own_comparators_are_found_by_name_and_unknown_ones_refused() {
    #[derive(Debug)]
    struct Backwards;
    impl crate::comparator::Comparator for Backwards {
        fn name(&self) -> &str {
            "app.Backwards"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
            b.cmp(a)
        }
    }
    let text =
        "[DBOptions]\n  max_open_files=-1\n[CFOptions \"default\"]\n  comparator=app.Backwards\n";
    let load = LoadOptions {
        comparators: vec![Arc::new(Backwards)],
        ..strict()
    };
    let (db, families) = load_text(text, &load).unwrap();
    assert_eq!(db.comparator.name(), "app.Backwards");
    assert_eq!(families[0].1.comparator.name(), "app.Backwards");
    for load in [strict(), lenient()] {
        let err = load_text(text, &load).unwrap_err().to_string();
        assert!(
            err.contains("app.Backwards") && err.contains("line 4"),
            "{err}"
        );
    }
}
