//! `--report_json=PATH`: every benchmark's results as one JSON document, for
//! scripts that compare runs. Written by hand: the values are numbers and
//! benchmark names, which need no escaping beyond quotes and backslashes.

use std::fmt::Write as _;
use std::path::Path;

use crate::report::{Resources, Stats};

/// One benchmark's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub name: String,
    pub operations: u64,
    pub micros_per_op: f64,
    pub ops_per_sec: u64,
    pub seconds: f64,
    pub mb_per_sec: Option<f64>,
    pub reads: u64,
    pub found: u64,
    pub resources: Option<Resources>,
    /// Table bytes written per byte ingested, for benchmarks that wrote.
    pub write_amp: Option<f64>,
    /// P50, P75, P99, P99.9, P99.99 in microseconds, with `--histogram=1`.
    pub percentiles: Option<[f64; 5]>,
}

impl Record {
    pub fn new(name: &str, stats: &Stats) -> Record {
        let s = stats.summary();
        Record {
            name: name.to_string(),
            operations: stats.done,
            micros_per_op: s.micros_per_op,
            ops_per_sec: s.ops_per_sec,
            seconds: s.seconds,
            mb_per_sec: s.mb_per_sec,
            reads: stats.reads,
            found: stats.found,
            resources: None,
            write_amp: None,
            percentiles: stats.hist.as_ref().map(|h| {
                [0.5, 0.75, 0.99, 0.999, 0.9999].map(|q| h.value_at_quantile(q) as f64 / 1000.0)
            }),
        }
    }

    fn to_json(&self) -> String {
        let mut out = String::from("{");
        let mut field = |key: &str, value: String| {
            if out.len() > 1 {
                out.push_str(", ");
            }
            let _ = write!(out, "\"{key}\": {value}");
        };
        let num = |x: f64| {
            if x.is_finite() {
                format!("{x:.6}")
            } else {
                "null".into()
            }
        };
        field("name", quoted(&self.name));
        field("operations", self.operations.to_string());
        field("micros_per_op", num(self.micros_per_op));
        field("ops_per_sec", self.ops_per_sec.to_string());
        field("seconds", num(self.seconds));
        field("mb_per_sec", self.mb_per_sec.map_or("null".into(), num));
        field("reads", self.reads.to_string());
        field("found", self.found.to_string());
        if let Some(r) = &self.resources {
            field("cpu_micros_per_op", num(r.cpu_micros_per_op()));
            field("peak_rss_mb", num(r.peak_rss_mb));
            field("db_size_bytes", r.db_bytes.to_string());
        }
        field("write_amp", self.write_amp.map_or("null".into(), num));
        if let Some(p) = &self.percentiles {
            let names = ["p50", "p75", "p99", "p99_9", "p99_99"];
            let body: Vec<String> = names
                .iter()
                .zip(p)
                .map(|(n, v)| format!("\"{n}\": {}", num(*v)))
                .collect();
            field("latency_micros", format!("{{{}}}", body.join(", ")));
        }
        out.push('}');
        out
    }
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// Writes `records` to `path` as `{"engine": NAME, "engine_description": ...,
/// "strata_bench_version": ..., "results": [...]}`.
pub fn write(
    path: &Path,
    engine: &str,
    description: &str,
    records: &[Record],
) -> Result<(), String> {
    let body: Vec<String> = records
        .iter()
        .map(|r| format!("    {}", r.to_json()))
        .collect();
    let doc = format!(
        "{{\n  \"engine\": {},\n  \"engine_description\": {},\n  \"strata_bench_version\": {},\n  \"results\": [\n{}\n  ]\n}}\n",
        quoted(engine),
        quoted(description),
        quoted(env!("CARGO_PKG_VERSION")),
        body.join(",\n")
    );
    std::fs::write(path, doc).map_err(|e| format!("--report_json: writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_serialize_as_json_with_nulls_for_missing_values() {
        let mut stats = Stats::new(true).unwrap();
        for _ in 0..10 {
            stats.finished_op(Some(std::time::Instant::now())).unwrap();
        }
        let mut r = Record::new("read\"x", &stats);
        r.write_amp = Some(2.5);
        let json = r.to_json();
        assert!(
            json.starts_with("{\"name\": \"read\\\"x\", \"operations\": 10"),
            "{json}"
        );
        assert!(json.contains("\"mb_per_sec\": null"), "{json}");
        assert!(json.contains("\"write_amp\": 2.500000"), "{json}");
        assert!(json.contains("\"latency_micros\": {\"p50\": "), "{json}");
        assert_eq!(json.matches('{').count(), json.matches('}').count());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.json");
        write(&path, "fjall", "fjall 3.1", &[r]).unwrap();
        let doc = std::fs::read_to_string(&path).unwrap();
        assert!(doc.contains("\"engine\": \"fjall\""), "{doc}");
        assert!(doc.contains("\"results\": [\n    {\"name\""), "{doc}");
    }
}
