//! Throughput over time: `--report_interval_seconds=N` samples the operations
//! of the running benchmark every N seconds into `--report_file` (CSV, as
//! db_bench's `secs_elapsed,interval_qps` with the benchmark's name first),
//! and `--plot=PATH.svg` draws every benchmark's samples as one line each,
//! so stalls show as dips.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One benchmark's samples: seconds since its start, operations per second
/// over the interval ending then.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Samples `ops` every `interval` until `done`; the last, partial interval
/// counts too.
pub fn sample(ops: &AtomicU64, done: &AtomicBool, interval: Duration) -> Vec<(f64, f64)> {
    let start = Instant::now();
    let (mut last_ops, mut last_at) = (0u64, start);
    let mut points = Vec::new();
    let step = Duration::from_millis(10).min(interval);
    let mut next = start + interval;
    loop {
        let finished = done.load(Ordering::Acquire);
        let now = Instant::now();
        if now >= next || finished {
            let total = ops.load(Ordering::Relaxed);
            let secs = now.duration_since(last_at).as_secs_f64();
            if secs > 0.0 && (total > last_ops || !finished) {
                let qps = (total - last_ops) as f64 / secs;
                points.push((now.duration_since(start).as_secs_f64(), qps));
            }
            (last_ops, last_at) = (total, now);
            next += interval;
        }
        if finished {
            return points;
        }
        std::thread::sleep(step);
    }
}

/// Appends `series` to the CSV at `path`, writing the header first if the
/// file is new.
pub fn append_csv(path: &Path, series: &Series) -> Result<(), String> {
    use std::io::Write as _;
    let fresh = !path.exists();
    let mut text = String::new();
    if fresh {
        text.push_str("benchmark,secs_elapsed,interval_qps\n");
    }
    for (secs, qps) in &series.points {
        let _ = writeln!(text, "{},{secs:.3},{qps:.0}", series.name);
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|e| format!("--report_file {}: {e}", path.display()))
}

const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
];

/// A round step for about five ticks up to `max`: 1, 2 or 5 times a power
/// of ten.
fn tick_step(max: f64) -> f64 {
    let rough = (max / 5.0).max(1e-9);
    let power = 10f64.powf(rough.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * power)
        .find(|&step| step >= rough)
        .unwrap_or(10.0 * power)
}

/// A tick label: thousands as "k", millions as "M", at most three decimals
/// (so float steps print as 0.3, not 0.30000000000000004).
fn tick_label(v: f64) -> String {
    let (scaled, unit) = if v >= 1e6 {
        (v / 1e6, "M")
    } else if v >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let digits = format!("{scaled:.3}");
    let digits = digits.trim_end_matches('0').trim_end_matches('.');
    format!("{digits}{unit}")
}

/// An SVG line chart of every series: seconds across, operations per second
/// up, both from 0 with round ticks and grid lines, one colour and legend
/// entry per series.
pub fn svg(series: &[Series]) -> String {
    let (w, h, margin) = (900.0, 420.0, 60.0);
    let data_max = |f: fn(&(f64, f64)) -> f64| {
        series
            .iter()
            .flat_map(|s| s.points.iter().map(f))
            .fold(1e-9, f64::max)
    };
    let (x_step, y_step) = (tick_step(data_max(|p| p.0)), tick_step(data_max(|p| p.1)));
    // The axes end on the first tick at or past the data.
    let max_x = (data_max(|p| p.0) / x_step).ceil().max(1.0) * x_step;
    let max_y = (data_max(|p| p.1) / y_step).ceil().max(1.0) * y_step;
    let x = |v: f64| margin + v / max_x * (w - 2.0 * margin);
    let y = |v: f64| h - margin - v / max_y * (h - 2.0 * margin);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" \
         font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{cx}\" y=\"{xl}\" text-anchor=\"middle\">seconds</text>\n\
         <text x=\"14\" y=\"{cy}\" transform=\"rotate(-90 14 {cy})\" text-anchor=\"middle\">ops/sec</text>\n",
        cx = w / 2.0,
        xl = h - 20.0,
        cy = h / 2.0,
    );
    let (left, right, top, bottom) = (margin, w - margin, margin, h - margin);
    let ticks = |step: f64, max: f64| {
        (0..)
            .map(move |i| i as f64 * step)
            .take_while(move |&v| v <= max * 1.000_001)
    };
    for v in ticks(x_step, max_x) {
        let px = x(v);
        let _ = writeln!(
            out,
            "<line x1=\"{px:.1}\" y1=\"{top}\" x2=\"{px:.1}\" y2=\"{bottom}\" stroke=\"#e0e0e0\"/>\n\
             <line x1=\"{px:.1}\" y1=\"{bottom}\" x2=\"{px:.1}\" y2=\"{:.1}\" stroke=\"black\"/>\n\
             <text x=\"{px:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 5.0,
            bottom + 18.0,
            tick_label(v)
        );
    }
    for v in ticks(y_step, max_y) {
        let py = y(v);
        let _ = writeln!(
            out,
            "<line x1=\"{left}\" y1=\"{py:.1}\" x2=\"{right}\" y2=\"{py:.1}\" stroke=\"#e0e0e0\"/>\n\
             <line x1=\"{:.1}\" y1=\"{py:.1}\" x2=\"{left}\" y2=\"{py:.1}\" stroke=\"black\"/>\n\
             <text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            left - 5.0,
            left - 7.0,
            py + 4.0,
            tick_label(v)
        );
    }
    let _ = writeln!(
        out,
        "<line x1=\"{left}\" y1=\"{bottom}\" x2=\"{right}\" y2=\"{bottom}\" stroke=\"black\"/>\n\
         <line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{bottom}\" stroke=\"black\"/>"
    );
    for (i, s) in series.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let points: Vec<String> = s
            .points
            .iter()
            .map(|&(px, py)| format!("{:.1},{:.1}", x(px), y(py)))
            .collect();
        let _ = writeln!(
            out,
            "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
            points.join(" ")
        );
        let ly = margin + 16.0 * i as f64;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{ly}\" fill=\"{color}\">{}</text>",
            w - margin - 150.0,
            s.name.replace('&', "&amp;").replace('<', "&lt;")
        );
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_count_the_operations_of_each_interval() {
        let ops = AtomicU64::new(0);
        let done = AtomicBool::new(false);
        let points = std::thread::scope(|s| {
            let sampler = s.spawn(|| sample(&ops, &done, Duration::from_millis(50)));
            for _ in 0..20 {
                ops.fetch_add(100, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
            done.store(true, Ordering::Release);
            sampler.join().unwrap()
        });
        assert!(points.len() >= 3, "{points:?}");
        // 100 ops per 10 ms: about 10,000 ops/sec in every full interval.
        let (_, qps) = points[1];
        assert!((4_000.0..16_000.0).contains(&qps), "{points:?}");
        assert!(points.windows(2).all(|p| p[0].0 < p[1].0));
    }

    #[test]
    fn the_svg_has_one_line_per_series() {
        let series = [
            Series {
                name: "fillrandom".into(),
                points: vec![(1.0, 10.0), (2.0, 20.0)],
            },
            Series {
                name: "readwhilewriting".into(),
                points: vec![(1.0, 5.0)],
            },
        ];
        let doc = svg(&series);
        assert!(doc.starts_with("<svg") && doc.trim_end().ends_with("</svg>"));
        assert_eq!(doc.matches("<polyline").count(), 2);
        assert!(doc.contains(">readwhilewriting</text>"));
        // Round ticks from 0 past the data: 0..20 by 5 up, 0..2 by 0.5 across.
        assert!(doc.contains(">20</text>") && doc.contains(">15</text>"));
        assert!(doc.contains(">0.5</text>") && doc.contains(">2</text>"));
    }

    #[test]
    fn ticks_are_round_and_labels_short() {
        assert_eq!(tick_step(20.0), 5.0);
        assert_eq!(tick_step(370_000.0), 100_000.0);
        assert_eq!(tick_step(8.0), 2.0);
        assert_eq!(tick_step(0.7), 0.2);
        assert_eq!(tick_label(300_000.0), "300k");
        assert_eq!(tick_label(1_500_000.0), "1.5M");
        assert_eq!(tick_label(40.0), "40");
        assert_eq!(tick_label(3.0 * 0.1), "0.3");
        assert_eq!(tick_label(0.0), "0");
    }
}
