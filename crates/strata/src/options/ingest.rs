//! Options of one [`Db::ingest_external_file`](crate::Db::ingest_external_file)
//! call, by RocksDB's names (`IngestExternalFileOptions`).

/// How files built by [`SstFileWriter`](crate::SstFileWriter) join the
/// database. The defaults are RocksDB's, except
/// `verify_checksums_before_ingest`: Strata reads every block of the files
/// before it links them, so a damaged or unsorted file is refused rather than
/// found by a later read. Turn it off for RocksDB's behaviour (only the
/// files' meta blocks and first and last keys are read).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IngestExternalFileOptions {
    /// Hard-link the files into the database and remove the originals once
    /// ingested, rather than copy them (a file system that cannot link here
    /// copies, and the LOG says so; so does a file that cannot be opened
    /// for appending). As with RocksDB's `move_files`, the file is given to
    /// the database: ingestion appends to it a tail recording its global
    /// seqno (see docs/format/table.md), which every other name of the file
    /// sees too, and a power loss or write error during the ingestion may
    /// leave it ending in part of that tail (the table as written is its
    /// first bytes, up to its size before the call). Default false.
    pub move_files: bool,
    /// Snapshots taken before the call do not see the files' data: with any
    /// snapshot alive, the files get a global sequence number even where
    /// nothing overlaps them.
    pub snapshot_consistency: bool,
    /// Allow giving the files a global sequence number above every write so
    /// far, which they need when they overlap data in the database (or
    /// snapshots, above). Without it such an ingestion fails.
    pub allow_global_seqno: bool,
    /// Flush a memtable that overlaps the files (writes wait meanwhile).
    /// Without it such an ingestion fails.
    pub allow_blocking_flush: bool,
    /// Read and check every block of every file, and that its keys are in
    /// strictly increasing order at sequence number 0, before ingesting.
    pub verify_checksums_before_ingest: bool,
}

impl Default for IngestExternalFileOptions {
    fn default() -> Self {
        IngestExternalFileOptions {
            move_files: false,
            snapshot_consistency: true,
            allow_global_seqno: true,
            allow_blocking_flush: true,
            verify_checksums_before_ingest: true,
        }
    }
}
