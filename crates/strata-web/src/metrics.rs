//! `/metrics`: Prometheus' text format. Tickers are counters
//! (`rocksdb_block_cache_miss_total`), histograms summaries with their
//! quantiles, sum and count (`rocksdb_db_get_micros`), and the main
//! properties gauges, per family.

use std::fmt::Write as _;

use strata::{Db, Histogram, Ticker};

/// A RocksDB name as a Prometheus metric name.
fn metric_name(rocksdb_name: &str) -> String {
    let mut name = String::from("rocksdb_");
    name.extend(
        rocksdb_name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }),
    );
    name
}

/// Properties exported as gauges, by RocksDB's name.
const GAUGES: &[&str] = &[
    "estimate-num-keys",
    "total-sst-files-size",
    "cur-size-all-mem-tables",
    "num-immutable-mem-table",
    "num-running-compactions",
    "estimate-pending-compaction-bytes",
    "actual-delayed-write-rate",
    "is-write-stopped",
    "num-snapshots",
    "num-blob-files",
    "total-blob-file-size",
    "live-blob-file-garbage-size",
    "background-errors",
];

pub(crate) fn render(db: &Db) -> String {
    let mut out = String::new();
    if let Some(stats) = db.statistics() {
        for t in Ticker::ALL {
            let name = metric_name(t.name());
            let _ = writeln!(
                out,
                "# TYPE {name}_total counter\n{name}_total {}",
                stats.ticker(t)
            );
        }
        for h in Histogram::ALL {
            let name = metric_name(h.name());
            let d = stats.histogram(h);
            let _ = writeln!(out, "# TYPE {name} summary");
            for (q, v) in [
                ("0.5", d.p50),
                ("0.95", d.p95),
                ("0.99", d.p99),
                ("1", d.max as f64),
            ] {
                let _ = writeln!(out, "{name}{{quantile=\"{q}\"}} {v}");
            }
            let _ = writeln!(out, "{name}_sum {}\n{name}_count {}", d.sum, d.count);
        }
    }
    let families = db.column_families();
    for property in GAUGES {
        let name = metric_name(property);
        let _ = writeln!(out, "# TYPE {name} gauge");
        for cf in &families {
            if let Some(v) = db.property_cf(cf, &format!("rocksdb.{property}")) {
                let _ = writeln!(out, "{name}{{cf=\"{}\"}} {v}", label(cf.name()));
            }
        }
    }
    let levels = strata::CompactionOptions::default().num_levels;
    let _ = writeln!(out, "# TYPE rocksdb_num_files_at_level gauge");
    for cf in &families {
        for level in 0..levels {
            if let Some(v) = db.property_cf(cf, &format!("rocksdb.num-files-at-level{level}")) {
                let _ = writeln!(
                    out,
                    "rocksdb_num_files_at_level{{cf=\"{}\",level=\"{level}\"}} {v}",
                    label(cf.name())
                );
            }
        }
    }
    out
}

/// A label value escaped as Prometheus' text format requires.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
