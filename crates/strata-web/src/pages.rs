//! The HTML pages. Each is built from the database's public view of itself
//! (properties, live file metadata, the files in its directory), escaped.

use std::fmt::Write as _;

use strata::fs::{Fs, ReadFileOptions, StdFs};
use strata::table::TableReader;
use strata::{Db, LiveFileMetaData};

use crate::html::{bytes, escape, key, pre};
use crate::samples::{History, Sample};

/// Tables whose properties `/tables` opens, at most (the rest are listed).
const MAX_TABLES_OPENED: usize = 200;
/// LOG lines `/log` shows.
const LOG_LINES: usize = 200;
const LEVEL_COLORS: [&str; 7] = [
    "#4e79a7", "#59a14f", "#9c755f", "#f28e2b", "#76b7b2", "#edc948", "#b07aa1",
];

/// A page's title and body (HTML); the frame around it is the router's.
pub(crate) struct Page {
    pub title: &'static str,
    pub body: String,
}

fn page(title: &'static str, body: String) -> Page {
    Page { title, body }
}

/// `/`: each family's LSM as a picture, and a summary per level.
pub(crate) fn lsm(db: &Db) -> Page {
    let files = db.live_files_metadata();
    let levels = strata::CompactionOptions::default().num_levels;
    let mut body = String::new();
    for cf in db.column_families() {
        let mine: Vec<&LiveFileMetaData> = files
            .iter()
            .filter(|f| f.column_family_name == cf.name())
            .collect();
        let _ = write!(body, "<h2>column family {}</h2>", escape(cf.name()));
        body.push_str(&lsm_svg(cf.name(), &mine, levels));
        body.push_str("<table class=\"levels\"><tr><th>level</th><th>files</th><th>bytes</th><th>being compacted</th></tr>");
        for level in 0..levels {
            let at: Vec<_> = mine.iter().filter(|f| f.level == level).collect();
            let size: u64 = at.iter().map(|f| f.size).sum();
            let busy = at.iter().filter(|f| f.being_compacted).count();
            let _ = write!(
                body,
                "<tr><td>L{level}</td><td>{}</td><td>{}</td><td>{busy}</td></tr>",
                at.len(),
                bytes(size)
            );
        }
        body.push_str("</table>");
    }
    page("LSM", body)
}

/// One family's levels as rows, each table a box from its smallest to its
/// largest key (placed by rank among all the tables' boundary keys) whose
/// height follows the square root of its size (so small tables stay
/// visible beside large ones); L0's tables, which overlap, each get a band
/// of the row, newest on top; tables being compacted outlined in red.
fn lsm_svg(name: &str, files: &[&LiveFileMetaData], levels: usize) -> String {
    const WIDTH: f64 = 1000.0;
    const LEFT: f64 = 50.0;
    const ROW: f64 = 44.0;
    let mut bounds: Vec<&[u8]> = files
        .iter()
        .flat_map(|f| [f.smallest_key.as_slice(), f.largest_key.as_slice()])
        .collect();
    bounds.sort_unstable();
    bounds.dedup();
    let span = (bounds.len().max(2) - 1) as f64;
    let x =
        |k: &[u8]| LEFT + bounds.partition_point(|b| *b < k) as f64 / span * (WIDTH - LEFT - 10.0);
    let biggest = files.iter().map(|f| f.size).max().unwrap_or(1).max(1) as f64;
    let height = ROW * levels as f64 + 10.0;
    let mut svg = format!(
        "<svg class=\"lsm\" id=\"lsm-{}\" width=\"{WIDTH}\" height=\"{height}\" \
         xmlns=\"http://www.w3.org/2000/svg\" font-size=\"12\">",
        escape(name)
    );
    for level in 0..levels {
        let top = ROW * level as f64 + 5.0;
        let _ = write!(
            svg,
            "<text x=\"5\" y=\"{}\">L{level}</text><line x1=\"{LEFT}\" y1=\"{}\" x2=\"{WIDTH}\" y2=\"{}\" stroke=\"#ddd\"/>",
            top + ROW / 2.0,
            top + ROW - 2.0,
            top + ROW - 2.0
        );
    }
    let l0: Vec<u64> = files
        .iter()
        .filter(|f| f.level == 0)
        .map(|f| f.file_number)
        .collect();
    for f in files {
        let (top, room) = match l0.iter().position(|&n| n == f.file_number) {
            // Band `i` of `l0.len()`, its bottom edge where the box sits.
            Some(i) => {
                let band = (ROW - 4.0) / l0.len() as f64;
                (
                    ROW * f.level as f64 + 5.0 - (ROW - 4.0) + band * (i + 1) as f64,
                    band,
                )
            }
            None => (ROW * f.level as f64 + 5.0, ROW - 8.0),
        };
        let h = ((f.size as f64 / biggest).sqrt() * room).clamp(2.0, room.max(2.0));
        let (x0, x1) = (x(&f.smallest_key), x(&f.largest_key));
        let (class, stroke) = match f.being_compacted {
            true => ("table compacting", "stroke=\"red\" stroke-width=\"2\""),
            false => ("table", "stroke=\"#333\" stroke-width=\"0.5\""),
        };
        let _ = write!(
            svg,
            "<rect class=\"{class}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\" {stroke}>\
             <title>#{} L{} {} keys [{} .. {}] seq [{}, {}]</title></rect>",
            top + ROW - 2.0 - h,
            (x1 - x0).max(3.0),
            LEVEL_COLORS[f.level % LEVEL_COLORS.len()],
            f.file_number,
            f.level,
            bytes(f.size),
            key(&f.smallest_key),
            key(&f.largest_key),
            f.smallest_seqno,
            f.largest_seqno
        );
    }
    svg.push_str("</svg>");
    svg
}

/// `/tables`: every live table, with its properties.
pub(crate) fn tables(db: &Db) -> Page {
    let files = db.live_files_metadata();
    let mut body = format!("<p>{} live tables.</p><table id=\"tables\"><tr><th>family</th><th>file</th><th>level</th><th>size</th><th>seqnos</th><th>smallest</th><th>largest</th><th>properties</th></tr>", files.len());
    for (i, f) in files.iter().enumerate() {
        let properties = if i < MAX_TABLES_OPENED {
            match StdFs
                .open(&f.file_path, ReadFileOptions::default())
                .and_then(|file| TableReader::open(file, &f.file_path))
            {
                Ok(table) => format!(
                    "<details><summary>show</summary>{}</details>",
                    pre(&table
                        .properties()
                        .to_lines(|k| k.escape_ascii().to_string()))
                ),
                Err(e) => escape(&e.to_string()),
            }
        } else {
            "(not opened: too many tables)".to_owned()
        };
        let _ = write!(
            body,
            "<tr><td>{}</td><td>{:06}.sst{}</td><td>{}</td><td>{}</td><td>{}..{}</td><td>{}</td><td>{}</td><td>{properties}</td></tr>",
            escape(&f.column_family_name),
            f.file_number,
            if f.being_compacted { " (compacting)" } else { "" },
            f.level,
            bytes(f.size),
            f.smallest_seqno,
            f.largest_seqno,
            key(&f.smallest_key),
            key(&f.largest_key)
        );
    }
    body.push_str("</table>");
    page("tables", body)
}

/// `/stats`: every family's compaction stats.
pub(crate) fn stats(db: &Db) -> Page {
    let mut body = String::new();
    for cf in db.column_families() {
        let report = db.property_cf(&cf, "rocksdb.stats").unwrap_or_default();
        let _ = write!(
            body,
            "<h2>column family {}</h2>{}",
            escape(cf.name()),
            pre(&report)
        );
    }
    page("compaction stats", body)
}

/// `/plots`: the sampled history as four line charts.
pub(crate) fn plots(history: &History, read_only: bool) -> Page {
    let points: Vec<Sample> = history.points.iter().copied().collect();
    let every = match read_only {
        // A read-only view learns something new only when it reopens.
        true => "one each time the view reopens, at most one a second",
        false => "one a second",
    };
    let mut body = format!(
        "<p>{} samples, {every} (the page reloads every 5 s).</p>",
        points.len()
    );
    let charts: [(&str, &str, Series); 4] = [
        ("writes", "keys written per second", |s| {
            Some(s.writes_per_sec)
        }),
        (
            "wamp",
            "write amplification (table bytes per byte written)",
            |s| s.write_amp,
        ),
        ("stalls", "write stalls (1 stopped, 0.5 delayed)", |s| {
            s.stall
        }),
        ("cache", "block cache hit rate (with statistics)", |s| {
            s.cache_hit_rate
        }),
    ];
    for (id, title, value) in charts {
        let _ = write!(body, "<h2>{title}</h2>{}", line_chart(id, &points, value));
    }
    page("plots", body)
}

/// What a chart draws of each sample (`None`: nothing that second).
type Series = fn(&Sample) -> Option<f64>;

fn line_chart(id: &str, points: &[Sample], value: Series) -> String {
    const W: f64 = 900.0;
    const H: f64 = 160.0;
    let values: Vec<(f64, f64)> = points
        .iter()
        .filter_map(|s| value(s).map(|v| (s.at, v)))
        .collect();
    let max = values.iter().map(|p| p.1).fold(0.0_f64, f64::max).max(1e-9);
    let (t0, t1) = match (values.first(), values.last()) {
        (Some(a), Some(b)) => (a.0, b.0.max(a.0 + 1.0)),
        _ => (0.0, 1.0),
    };
    let path: Vec<String> = values
        .iter()
        .map(|(t, v)| {
            format!(
                "{:.1},{:.1}",
                50.0 + (t - t0) / (t1 - t0) * (W - 60.0),
                H - 20.0 - v / max * (H - 30.0)
            )
        })
        .collect();
    format!(
        "<svg class=\"plot\" id=\"plot-{id}\" width=\"{W}\" height=\"{H}\" xmlns=\"http://www.w3.org/2000/svg\" font-size=\"11\">\
         <rect x=\"50\" y=\"10\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#ccc\"/>\
         <text x=\"2\" y=\"18\">{}</text><text x=\"2\" y=\"{}\">0</text>\
         <text x=\"50\" y=\"{H}\">{t0:.0} s</text><text x=\"{}\" y=\"{H}\">{t1:.0} s</text>\
         <polyline fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\" points=\"{}\"/></svg>",
        W - 60.0,
        H - 30.0,
        short(max),
        H - 20.0,
        W - 60.0,
        path.join(" ")
    )
}

fn short(v: f64) -> String {
    match v {
        v if v >= 1e6 => format!("{:.1}M", v / 1e6),
        v if v >= 1e3 => format!("{:.1}K", v / 1e3),
        v => format!("{v:.2}"),
    }
}

/// `/options`: the newest OPTIONS file, as written.
pub(crate) fn options(db: &Db) -> Page {
    let newest = std::fs::read_dir(db.path())
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let number: u64 = name.strip_prefix("OPTIONS-")?.parse().ok()?;
            Some((number, e.path()))
        })
        .max();
    let body = match newest {
        Some((_, path)) => match std::fs::read_to_string(&path) {
            Ok(text) => format!(
                "<p>{}</p>{}",
                escape(&path.display().to_string()),
                pre(&text)
            ),
            Err(e) => escape(&format!("{}: {e}", path.display())),
        },
        None => "<p>No OPTIONS file.</p>".to_owned(),
    };
    page("options", body)
}

/// `/log`: the LOG's last lines.
pub(crate) fn log(db: &Db) -> Page {
    let path = db.path().join("LOG");
    let body = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            let tail = lines[lines.len().saturating_sub(LOG_LINES)..].join("\n");
            format!(
                "<p>The last {} of {} lines.</p>{}",
                LOG_LINES.min(lines.len()),
                lines.len(),
                pre(&tail)
            )
        }
        Err(e) => escape(&format!("{}: {e}", path.display())),
    };
    page("LOG", body)
}
