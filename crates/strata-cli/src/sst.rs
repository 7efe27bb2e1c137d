//! `strata sst build | dump | verify`: table files by hand, like RocksDB's sst_dump.

use std::io::{self, BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, Subcommand};
use strata::fs::{Fs, ReadFileOptions, StdFs};
use strata::iter::InternalIterator;
use strata::key::{ParsedInternalKey, ValueType};
use strata::table::TableReader;
use strata::{CfOptions, ChecksumType, CompressionType, ReadOptions, SstFileWriter, TableOptions};

use crate::hex;
use crate::kv_line::parse_line;

/// Errors of the `sst` commands: engine errors keep their own message.
type CliResult<T = ()> = Result<T, String>;

#[derive(Debug, Subcommand)]
pub enum SstCommand {
    /// Build a table from `key ==> value` lines on stdin (the format of `ldb load`).
    Build(BuildArgs),
    /// Print a table's properties and/or its entries as `key : value` lines.
    Dump(DumpArgs),
    /// Read every block and check every checksum; prints OK or the corruption.
    Verify(VerifyArgs),
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The table file to write.
    #[arg(long)]
    output: PathBuf,
    /// Data block codec: none, snappy, lz4 or zstd.
    #[arg(long, default_value = "snappy")]
    compression: String,
    /// Block checksum: crc32c or xxh3.
    #[arg(long, default_value = "xxh3")]
    checksum: String,
    /// Target data block size in bytes.
    #[arg(long = "block_size", default_value_t = 4096)]
    block_size: usize,
    /// Keys between restart points.
    #[arg(long = "block_restart_interval", default_value_t = 16)]
    block_restart_interval: usize,
    /// Bloom filter bits per key (0 = no filter).
    #[arg(long = "bloom_bits", default_value_t = 10.0)]
    bloom_bits: f64,
    /// Index layout, by RocksDB's name: kBinarySearch or kTwoLevelIndexSearch.
    #[arg(long = "index_type", default_value = "kBinarySearch")]
    index_type: String,
    /// With kTwoLevelIndexSearch, partition the bloom filter too.
    #[arg(long = "partition_filters")]
    partition_filters: bool,
    /// Target size of index and filter partitions in bytes.
    #[arg(long = "metadata_block_size", default_value_t = 4096)]
    metadata_block_size: usize,
    /// Sort the input (later lines win for equal keys) instead of requiring order.
    #[arg(long)]
    sort: bool,
    /// Keys and values in the input are `0x` + hex, as `dump --hex` prints them.
    #[arg(long)]
    hex: bool,
}

#[derive(Debug, Args)]
pub struct DumpArgs {
    /// The table file to read, or a directory: every `.sst` file in it, in
    /// name order, each after a `Process <path>` line (as sst_dump).
    #[arg(long)]
    file: PathBuf,
    /// `scan` (the default): the newest version of each key; `raw`: every
    /// entry as stored, `'key' seq:N, type:T => value`, then the range
    /// tombstones (type 15), as sst_dump's raw dump lists them.
    #[arg(long, default_value = "scan", value_parser = ["scan", "raw"])]
    command: String,
    /// Print the properties as `name: value` lines, then the range tombstones
    /// as `range deletion: [start, end) @ seq` lines.
    #[arg(long = "show_properties")]
    show_properties: bool,
    /// Print the entries as `key : value` lines (the default without other flags).
    #[arg(long)]
    scan: bool,
    /// First key to print (inclusive).
    #[arg(long)]
    from: Option<String>,
    /// Key to stop before (exclusive).
    #[arg(long)]
    to: Option<String>,
    /// Print keys and values as `0x` + upper-case hex; --from/--to are hex too.
    #[arg(long)]
    hex: bool,
    /// Print blob references (values kept in blob files) decoded, as
    /// `[blob ref] file_number: N offset: O size: S compression: C`,
    /// instead of as stored.
    #[arg(long = "decode_blob_index")]
    decode_blob_index: bool,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The table file to check, or a blob file (`NNNNNN.blob`), checked
    /// record by record.
    #[arg(long)]
    file: PathBuf,
}

/// Runs one `sst` command.
pub fn run(cmd: SstCommand) -> CliResult {
    match cmd {
        SstCommand::Build(a) => build(a),
        SstCommand::Dump(a) => dump(a),
        SstCommand::Verify(a) => verify(a),
    }
}

fn read_input(args: &BuildArgs) -> CliResult<Vec<(Vec<u8>, Vec<u8>)>> {
    let stdin = io::stdin().lock();
    let mut entries: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
    for (i, line) in stdin.lines().enumerate() {
        let number = i + 1;
        let line = line.map_err(|e| format!("reading stdin at line {number}: {e}"))?;
        if line.is_empty() {
            continue;
        }
        let (key, value) = parse_line(line.as_bytes(), number, args.hex, args.hex)?;
        if !args.sort {
            if let Some((last, _)) = entries.last() {
                if key <= *last {
                    return Err(format!(
                        "line {number}: key {:?} is not greater than the previous key; \
                         input must be sorted and unique (or pass --sort)",
                        hex::show(&key, args.hex)
                    ));
                }
            }
        }
        entries.push((key, value));
    }
    if args.sort {
        // A stable sort keeps equal keys in input order; keep the last of each run.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut deduped: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(entries.len());
        for e in entries {
            match deduped.last_mut() {
                Some(last) if last.0 == e.0 => *last = e,
                _ => deduped.push(e),
            }
        }
        entries = deduped;
    }
    Ok(entries)
}

fn build(args: BuildArgs) -> CliResult {
    let options = TableOptions {
        block_size: args.block_size,
        block_restart_interval: args.block_restart_interval,
        bloom_bits_per_key: args.bloom_bits,
        compression: CompressionType::parse(&args.compression).map_err(|e| e.to_string())?,
        checksum: ChecksumType::parse(&args.checksum).map_err(|e| e.to_string())?,
        index_type: args
            .index_type
            .parse()
            .map_err(|e: strata::Error| e.to_string())?,
        partition_filters: args.partition_filters,
        metadata_block_size: args.metadata_block_size,
        ..TableOptions::default()
    };
    options.validate().map_err(|e| e.to_string())?;
    let entries = read_input(&args)?;
    // Written as SstFileWriter writes (every key once, at sequence number
    // 0), so the file can be ingested (`strata ingest_extern_sst`).
    let cf = CfOptions {
        table: options,
        ..CfOptions::default()
    };
    // As before SstFileWriter, an existing output is replaced.
    if args.output.exists() {
        std::fs::remove_file(&args.output)
            .map_err(|e| format!("cannot replace {}: {e}", args.output.display()))?;
    }
    let mut writer = SstFileWriter::create(&args.output, &cf).map_err(|e| e.to_string())?;
    for (key, value) in &entries {
        writer.put(key, value).map_err(|e| e.to_string())?;
    }
    let info = writer.finish().map_err(|e| e.to_string())?;
    eprintln!(
        "wrote {} entries, {} bytes to {}",
        info.num_entries,
        info.file_size,
        args.output.display()
    );
    Ok(())
}

fn open_table(path: &Path) -> CliResult<Arc<TableReader>> {
    let file = StdFs
        .open(path, ReadFileOptions::default())
        .map_err(|e| e.to_string())?;
    TableReader::open(file, path)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

fn dump(args: DumpArgs) -> CliResult {
    let out = io::stdout().lock();
    let mut out = BufWriter::new(out);
    if !args.file.is_dir() {
        dump_one(&args.file, &args, &mut out)?;
        return out.flush().map_err(|e| format!("writing stdout: {e}"));
    }
    let mut tables: Vec<PathBuf> = std::fs::read_dir(&args.file)
        .map_err(|e| format!("{}: {e}", args.file.display()))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    tables.sort();
    if tables.is_empty() {
        return Err(format!("{}: no .sst files", args.file.display()));
    }
    for path in &tables {
        writeln!(out, "Process {}", path.display()).map_err(|e| format!("writing stdout: {e}"))?;
        dump_one(path, &args, &mut out)?;
    }
    out.flush().map_err(|e| format!("writing stdout: {e}"))
}

fn dump_one(path: &Path, args: &DumpArgs, out: &mut impl Write) -> CliResult {
    let table = open_table(path)?;
    let write_err = |e: io::Error| format!("writing stdout: {e}");
    if args.show_properties {
        eprintln!("Table properties of {}:", path.display());
        let lines = table.properties().to_lines(|k| hex::show(k, args.hex));
        out.write_all(lines.as_bytes()).map_err(write_err)?;
        // The range-deletion block as stored: one line per fragment and
        // sequence number.
        for t in table.range_tombstones().tombstones() {
            writeln!(
                out,
                "range deletion: [{}, {}) @ {}",
                hex::show(t.start(), args.hex),
                hex::show(t.end(), args.hex),
                t.seq()
            )
            .map_err(write_err)?;
        }
    }
    if args.command == "raw" {
        return crate::table_dump::dump_raw(&table, args.hex, out).map_err(|e| match e {
            crate::cli_error::CliError::Failed(m) => m,
            crate::cli_error::CliError::StdoutClosed => "stdout closed".to_string(),
        });
    }
    if args.scan || !args.show_properties {
        let from = args
            .from
            .as_deref()
            .map(|k| hex::parse(k, args.hex, "--from"))
            .transpose()?;
        let to = args
            .to
            .as_deref()
            .map(|k| hex::parse(k, args.hex, "--to"))
            .transpose()?;
        let format = (args.hex, args.decode_blob_index);
        let deletions = scan(&table, from.as_deref(), to.as_deref(), format, out)?;
        if deletions > 0 {
            eprintln!("({deletions} keys deleted by tombstones in this table were not printed)");
        }
    }
    Ok(())
}

/// Prints the newest version of each user key in `[from, to)`; returns how many
/// keys were skipped because their newest version is a deletion.
fn scan(
    table: &Arc<TableReader>,
    from: Option<&[u8]>,
    to: Option<&[u8]>,
    (hex_output, decode_blob_index): (bool, bool),
    out: &mut impl Write,
) -> CliResult<u64> {
    let mut it = table.iter(&ReadOptions::default());
    match from {
        Some(k) => it.seek(&strata::key::seek_key(k, strata::key::MAX_SEQUENCE_NUMBER)),
        None => it.seek_to_first(),
    }
    let mut previous_user_key: Option<Vec<u8>> = None;
    let mut deletions = 0u64;
    while it.valid() {
        let parsed = ParsedInternalKey::parse(it.key())
            .ok_or_else(|| format!("Corruption: {}: malformed key", table.path().display()))?;
        if to.is_some_and(|t| parsed.user_key >= t) {
            break;
        }
        // Entries of one user key come newest first; only the newest is visible.
        if previous_user_key.as_deref() != Some(parsed.user_key) {
            previous_user_key = Some(parsed.user_key.to_vec());
            match parsed.value_type() {
                Some(ValueType::Put) => writeln!(
                    out,
                    "{} : {}",
                    hex::show(parsed.user_key, hex_output),
                    hex::show(it.value(), hex_output)
                )
                .map_err(|e| format!("writing stdout: {e}"))?,
                Some(ValueType::Delete) => deletions += 1,
                // Operands are shown as stored; the merge happens on reads.
                Some(ValueType::Merge) => writeln!(
                    out,
                    "{} : {} (merge operand)",
                    hex::show(parsed.user_key, hex_output),
                    hex::show(it.value(), hex_output)
                )
                .map_err(|e| format!("writing stdout: {e}"))?,
                Some(ValueType::BlobIndex) => writeln!(
                    out,
                    "{} : {}",
                    hex::show(parsed.user_key, hex_output),
                    show_blob_index(it.value(), hex_output, decode_blob_index)
                )
                .map_err(|e| format!("writing stdout: {e}"))?,
                Some(ValueType::RangeDeletion) => {
                    return Err(format!(
                        "Corruption: {}: range deletion in a data block",
                        table.path().display()
                    ))
                }
                None => {
                    return Err(format!(
                        "Corruption: {}: unknown value type {}",
                        table.path().display(),
                        parsed.type_code
                    ))
                }
            }
        }
        it.next();
    }
    it.status().map_err(|e| e.to_string())?;
    Ok(deletions)
}

/// `sst verify` of a blob file: its header, footer and every record's
/// checksums, and the footer's counts against the records.
fn verify_blob_file(path: &Path) -> CliResult {
    let file = StdFs
        .open(path, ReadFileOptions::default())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let reader = strata::blob::BlobFileReader::open(file, path).map_err(|e| e.to_string())?;
    reader.verify().map_err(|e| e.to_string())?;
    eprintln!(
        "{}: {} blob records checked",
        path.display(),
        reader.footer().record_count
    );
    println!("OK");
    Ok(())
}

/// A blob reference as `sst dump` and `idump` print it: decoded with
/// `decode`, as stored (with a note) otherwise; one that does not decode is
/// shown as stored with the reason.
pub fn show_blob_index(value: &[u8], hex_output: bool, decode: bool) -> String {
    match (decode, strata::blob::BlobRef::decode(value)) {
        (true, Ok(r)) => format!(
            "[blob ref] file_number: {} offset: {} size: {} compression: {}",
            r.file_number,
            r.offset,
            r.stored_len,
            r.compression.name()
        ),
        (true, Err(reason)) => format!("{} (bad blob reference: {reason})", hex::show(value, true)),
        (false, _) => format!("{} (blob reference)", hex::show(value, hex_output)),
    }
}

fn verify(args: VerifyArgs) -> CliResult {
    if args.file.extension().is_some_and(|e| e == "blob") {
        return verify_blob_file(&args.file);
    }
    let table = open_table(&args.file)?;
    let report = table.verify().map_err(|e| e.to_string())?;
    eprintln!(
        "{}: {} blocks, {} entries checked",
        args.file.display(),
        report.blocks,
        report.entries
    );
    println!("OK");
    Ok(())
}
