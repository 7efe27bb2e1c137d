use std::collections::HashMap;

use super::*;
use crate::key::{internal_key, ValueType};
use crate::version::{FileMetaData, VersionEdit};

const GIB_U: u64 = 1 << 30;

/// The compaction table parsed back the way a tool reading RocksDB's report
/// does: rows by name, cells by header column. `Size` is a number and a unit,
/// so it takes two fields; `Files` is `N/M`.
fn parse_table(report: &str) -> HashMap<String, HashMap<&'static str, String>> {
    let columns: Vec<&'static str> = HEADER.split_whitespace().collect();
    let mut lines = report.lines();
    assert_eq!(lines.next(), Some(""), "{report}");
    assert_eq!(
        lines.next(),
        Some("** Compaction Stats [default] **"),
        "{report}"
    );
    assert_eq!(lines.next(), Some(HEADER), "{report}");
    assert_eq!(lines.next().map(str::len), Some(192), "RocksDB's dashes");
    assert_eq!(HEADER.len(), 191, "RocksDB's header");
    let mut rows = HashMap::new();
    for line in lines.take_while(|l| !l.is_empty()) {
        let mut fields: Vec<String> = line.split_whitespace().map(String::from).collect();
        assert_eq!(fields.len(), columns.len() + 1, "{line}");
        let unit = fields.remove(3);
        fields[2] = format!("{} {unit}", fields[2]);
        let name = fields[0].clone();
        rows.insert(name, columns.iter().copied().zip(fields).collect());
    }
    rows
}

/// The number after `label` in `line`.
fn after(line: &str, label: &str) -> f64 {
    line.split(label)
        .nth(1)
        .and_then(|rest| rest.split([' ', ',']).find(|w| !w.is_empty()))
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no number after {label:?} in {line:?}"))
}

fn level_row(level: usize, files: usize, bytes: u64, stats: LevelStats) -> LevelRow {
    LevelRow {
        level,
        files,
        busy: 0,
        bytes,
        score: 0.0,
        stats,
    }
}

/// L0 got 2 GiB of flushes; 2 GiB of L0 plus 1 GiB of L1 became 2.8 GiB in
/// L1; 1 GiB of L1 plus 3 GiB of L2 became 3.6 GiB in L2 (and a trivial move
/// brought 0.5 GiB).
fn known_rows() -> Vec<LevelRow> {
    let flush = LevelStats {
        bytes_written: 2 * GIB_U,
        micros: 4_000_000,
        cpu_micros: 3_000_000,
        jobs: 8,
        ..LevelStats::default()
    };
    let l1 = LevelStats {
        bytes_read_start: 2 * GIB_U,
        bytes_read_output: GIB_U,
        bytes_written: 28 * GIB_U / 10,
        micros: 10_000_000,
        cpu_micros: 8_000_000,
        jobs: 4,
        keys_in: 30_000_000,
        keys_dropped: 2_500_000,
        ..LevelStats::default()
    };
    let l2 = LevelStats {
        bytes_read_start: GIB_U,
        bytes_read_output: 3 * GIB_U,
        bytes_written: 36 * GIB_U / 10,
        bytes_moved: GIB_U / 2,
        micros: 20_000_000,
        cpu_micros: 15_000_000,
        jobs: 3,
        keys_in: 40_000,
        keys_dropped: 123,
        // Of the 3.6 GiB written, 1 GiB went to blob files; 0.5 GiB of
        // values were read back from them.
        blob_bytes_written: GIB_U,
        blob_bytes_read: GIB_U / 2,
    };
    vec![
        level_row(0, 2, 128 << 20, flush),
        LevelRow {
            busy: 3,
            score: 0.8,
            ..level_row(1, 10, 640 << 20, l1)
        },
        level_row(2, 60, 6 * GIB_U, l2),
    ]
}

#[test]
fn the_table_parses_back_and_w_amp_is_rocksdbs() {
    let opened_at = Instant::now();
    let input = CompactionInput {
        name: "default".to_owned(),
        rows: known_rows(),
        flushed: 2 * GIB_U,
        stalls: [5, 2, 1, 1, 0, 3, 4, 6],
        opened_at,
        at: opened_at + Duration::from_secs(100),
        blob_files: (4, 3 * GIB_U, GIB_U),
    };
    let (report, mark) = render_compaction(&input, &CompactionMark::zero(opened_at));
    let rows = parse_table(&report);
    let cell = |row: &str, column: &str| rows[row][column].as_str();
    assert_eq!(cell("L1", "Files"), "10/3");
    assert_eq!(cell("L1", "Size"), "640.00 MB");
    assert_eq!(cell("L1", "Score"), "0.8");
    assert_eq!(cell("L2", "Size"), "6.00 GB");
    // Per level: written into the level over read from the level above.
    assert_eq!(cell("L0", "W-Amp"), "1.0", "flushed over flushed");
    assert_eq!(cell("L1", "W-Amp"), "1.4", "2.8 over 2");
    assert_eq!(cell("L2", "W-Amp"), "3.6", "3.6 over 1");
    // Sum: everything written (2 + 2.8 + 3.6) over everything flushed (2).
    assert_eq!(cell("Sum", "W-Amp"), "4.2");
    assert_eq!(cell("Sum", "Files"), "72/3");
    // Table bytes only: 1 GiB of L2's went to blob files.
    assert_eq!(cell("Sum", "Write(GB)"), "7.4");
    assert_eq!(cell("Sum", "Wblob(GB)"), "1.0");
    assert_eq!(cell("Sum", "Read(GB)"), "7.0");
    assert_eq!(cell("Sum", "Rn(GB)"), "3.0");
    assert_eq!(cell("Sum", "Rnp1(GB)"), "4.0");
    assert_eq!(cell("L1", "Wnew(GB)"), "1.8", "written minus Rnp1");
    assert_eq!(cell("L2", "Moved(GB)"), "0.5");
    assert_eq!(cell("L1", "Comp(sec)"), "10.00");
    assert_eq!(cell("L1", "CompMergeCPU(sec)"), "8.00");
    assert_eq!(cell("L1", "Comp(cnt)"), "4");
    assert_eq!(cell("L1", "Avg(sec)"), "2.500");
    assert_eq!(cell("L1", "KeyIn"), "30M");
    assert_eq!(cell("L1", "KeyDrop"), "2500K");
    assert_eq!(cell("L2", "KeyDrop"), "123");
    assert_eq!(cell("Sum", "Comp(cnt)"), "15");
    // 3 GiB read in 10 s: 307.2 MB/s; 2.8 GiB written: 286.7 MB/s.
    assert_eq!(cell("L1", "Rd(MB/s)"), "307.2");
    assert_eq!(cell("L1", "Wr(MB/s)"), "286.7");
    // The first report's interval is everything since open.
    assert_eq!(cell("Int", "Write(GB)"), "7.4");
    assert_eq!(cell("Int", "W-Amp"), "4.2");
    assert_eq!(cell("Int", "Files"), "0/0");

    let line = |prefix: &str| {
        report
            .lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in\n{report}"))
            .to_string()
    };
    assert!(report.contains(" Int "), "{report}");
    assert!(
        report.contains(
            "\n\nBlob file count: 4, total size: 3.0 GB, garbage size: 1.0 GB, space amp: 1.5\n"
        ),
        "{report}"
    );
    // Write(GB) is table bytes; blob bytes are in Wblob(GB), and W-Amp
    // counts both (3.6 over the 1 GiB read from L1).
    assert_eq!(cell("L2", "Write(GB)"), "2.6");
    assert_eq!(cell("L2", "Wblob(GB)"), "1.0");
    assert_eq!(cell("L2", "Rblob(GB)"), "0.5");
    assert_eq!(cell("L2", "W-Amp"), "3.6");
    assert_eq!(
        line("Uptime(secs)"),
        "Uptime(secs): 100.0 total, 100.0 interval"
    );
    assert_eq!(
        line("Flush(GB)"),
        "Flush(GB): cumulative 2.000, interval 2.000"
    );
    let cumulative = line("Cumulative compaction:");
    assert_eq!(after(&cumulative, "compaction:"), 8.40);
    assert_eq!(after(&cumulative, "write,"), 86.02, "8.4 GiB over 100 s");
    assert_eq!(after(&cumulative, "GB read,"), 71.68);
    assert_eq!(after(&cumulative, "MB/s read,"), 34.0);
    assert_eq!(
        line("Stalls(count):"),
        "Stalls(count): 5 level0_slowdown, 2 level0_slowdown_with_compaction, 1 level0_numfiles, \
         1 level0_numfiles_with_compaction, 0 stop for pending_compaction_bytes, \
         3 slowdown for pending_compaction_bytes, 4 memtable_compaction, 6 memtable_slowdown, \
         interval 19 total count"
    );

    // Ten seconds later, only more flushing: the interval row has just it.
    let mut later = CompactionInput {
        flushed: 3 * GIB_U,
        at: input.at + Duration::from_secs(10),
        ..input
    };
    later.rows[0].stats.bytes_written += GIB_U;
    later.rows[0].stats.jobs += 4;
    let (report, _) = render_compaction(&later, &mark);
    let rows = parse_table(&report);
    assert_eq!(rows["Int"]["Write(GB)"], "1.0");
    assert_eq!(rows["Int"]["Comp(cnt)"], "4");
    assert_eq!(rows["Int"]["W-Amp"], "1.0");
    assert_eq!(rows["Sum"]["W-Amp"], "3.1", "9.4 over 3");
    assert!(report.contains("Uptime(secs): 110.0 total, 10.0 interval"));
    assert!(report.contains("Flush(GB): cumulative 3.000, interval 1.000"));
    assert!(report.contains("Interval compaction: 1.00 GB write, 102.40 MB/s write, 0.00 GB read"));
    assert!(report.contains("interval 0 total count"));
}

#[test]
fn db_stats_read_like_rocksdbs() {
    let opened_at = Instant::now();
    let earlier = DbMark {
        at: opened_at + Duration::from_secs(10),
        writes: 100_000,
        keys: 100_000,
        groups: 50_000,
        ingest: 10 << 20,
        wal_writes: 100_000,
        wal_syncs: 0,
        wal_bytes: 11 << 20,
        stall_micros: 0,
    };
    let now = DbMark {
        at: opened_at + Duration::from_secs(20),
        writes: 200_000,
        keys: 400_000,
        groups: 150_000,
        ingest: 2 * GIB_U,
        wal_writes: 180_000,
        wal_syncs: 1000,
        wal_bytes: 2 * GIB_U + (100 << 20),
        stall_micros: 2_000_000,
    };
    let report = render_db(&now, &earlier, opened_at);
    let expected = "
** DB Stats **
Uptime(secs): 20.0 total, 10.0 interval
Cumulative writes: 200K writes, 400K keys, 150K commit groups, 1.3 writes per commit group, ingest: 2.00 GB, 102.40 MB/s
Cumulative WAL: 180K writes, 1000 syncs, 180.00 writes per sync, written: 2.10 GB, 107.40 MB/s
Cumulative stall: 00:00:2.000 H:M:S, 10.0 percent
Interval writes: 100K writes, 300K keys, 100K commit groups, 1.0 writes per commit group, ingest: 2038.00 MB, 203.80 MB/s
Interval WAL: 80K writes, 1000 syncs, 80.00 writes per sync, written: 2.09 GB, 213.70 MB/s
Interval stall: 00:00:2.000 H:M:S, 20.0 percent
";
    assert_eq!(report, expected);
}

fn file(number: u64, size: u64) -> FileMetaData {
    let key = format!("{number:08}").into_bytes();
    FileMetaData {
        number,
        file_size: size,
        smallest: internal_key(&key, number, ValueType::Put),
        largest: internal_key(&key, number, ValueType::Put),
        smallest_seqno: number,
        largest_seqno: number,
        blob_files: Vec::new(),
        global_seqno: None,
    }
}

#[test]
fn scores_follow_the_compaction_style() {
    let mut edit = VersionEdit::new();
    for n in 1..=3 {
        edit.add_file(0, file(n, 10 << 20));
    }
    edit.add_file(5, file(4, 100 << 20));
    edit.add_file(6, file(5, 1000 << 20));
    let version = Version::default().apply(&edit).unwrap();
    let busy: HashSet<u64> = [1].into();
    let universal = CompactionOptions {
        compaction_style: CompactionStyle::Universal,
        ..CompactionOptions::default()
    };
    // Four sorted runs are idle (two L0 files, L5, L6) of a trigger of four.
    let s = level_scores(&version, &universal, &busy);
    assert_eq!(s, [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
    let mut fifo = CompactionOptions {
        compaction_style: CompactionStyle::Fifo,
        ..CompactionOptions::default()
    };
    fifo.compaction_options_fifo.max_table_files_size = 40 << 20;
    assert_eq!(level_scores(&version, &fifo, &busy)[0], 0.5);
    let leveled = level_scores(&version, &CompactionOptions::default(), &HashSet::new());
    assert_eq!(leveled[0], 0.75, "three L0 files of a trigger of four");
    assert!(leveled[5] > 0.0 && leveled[6] == 0.0, "{leveled:?}");
}

#[test]
fn human_numbers_read_like_rocksdbs() {
    assert_eq!(human_bytes(0), "0.00 KB");
    assert_eq!(human_bytes(20_426_752), "19.48 MB");
    assert_eq!(human_bytes(3 << 30), "3.00 GB");
    assert_eq!(human_bytes(5 << 40), "5.00 TB");
    assert_eq!(human_count(4_494_000), "4494K");
    assert_eq!(human_count(9999), "9999");
    assert_eq!(human_count(10_000_000), "10M");
    assert_eq!(human_count(12_000_000_000), "12G");
}

#[test]
fn a_row_reproduces_the_issues_example() {
    let s = LevelStats {
        bytes_read_start: 411_461_222, // 392.4 MiB
        bytes_read_output: 130 << 20,  // 130 MiB
        bytes_written: 351_797_248,    // 335.5 MiB
        bytes_moved: 0,
        micros: 3_910_000,
        cpu_micros: 2_950_000,
        jobs: 2,
        keys_in: 4_494_000,
        keys_dropped: 1_608_000,
        ..LevelStats::default()
    };
    let mut out = String::new();
    let shape = LevelRow {
        score: 0.8,
        ..level_row(1, 4, 205_160_000, s)
    };
    row(
        &mut out,
        "L1",
        &shape,
        ratio(s.bytes_written, s.bytes_read_start),
    );
    assert_eq!(
        out,
        "  L1      4/0   195.66 MB   0.8      0.5     0.4      0.1       0.3      0.2       0.0   0.9    133.6     85.8      3.91              2.95         2    1.955   4494K  1608K       0.0       0.0\n"
    );
}

#[test]
fn stall_time_uses_rocksdbs_clock_format() {
    assert_eq!(
        stall_time(Duration::ZERO, 10.0),
        "00:00:0.000 H:M:S, 0.0 percent"
    );
    assert_eq!(
        stall_time(Duration::from_millis(61_500), 615.0),
        "00:01:1.500 H:M:S, 10.0 percent"
    );
    assert_eq!(
        stall_time(Duration::from_secs(3723), 7446.0),
        "01:02:3.000 H:M:S, 50.0 percent"
    );
}
