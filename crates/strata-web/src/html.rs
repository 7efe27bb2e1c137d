//! The page frame and the escaping every page's text goes through.

use std::fmt::Write as _;

/// `text` safe inside HTML text and attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A key shown readably: printable ASCII as it is, other bytes as `\xNN`.
pub(crate) fn key(bytes: &[u8]) -> String {
    escape(&bytes.escape_ascii().to_string())
}

/// A whole page: the title, the navigation, `note` (what kind of view this
/// is, for a read-only one), then `body` (already HTML).
pub(crate) fn page(db_path: &str, note: Option<&str>, title: &str, body: &str) -> String {
    let note = note.map_or(String::new(), |n| {
        format!("<p id=\"view-note\"><i>{}</i></p>", escape(n))
    });
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{title} - strata</title>\
         <meta http-equiv=\"refresh\" content=\"5\">\
         <style>body{{font-family:sans-serif;margin:1em 2em}}nav a{{margin-right:1em}}\
         table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:2px 6px;font-size:13px}}\
         pre{{background:#f6f6f6;padding:8px;overflow:auto}}</style></head><body>\
         <nav><b>strata</b> {db} | <a href=\"/\">LSM</a><a href=\"/tables\">tables</a>\
         <a href=\"/stats\">stats</a><a href=\"/plots\">plots</a><a href=\"/options\">options</a>\
         <a href=\"/log\">LOG</a><a href=\"/metrics\">metrics</a></nav>{note}<h1 id=\"title\">{title}</h1>\n{body}\
         </body></html>\n",
        db = escape(db_path),
    );
    out
}

/// Text shown as it is, in a `<pre>`.
pub(crate) fn pre(text: &str) -> String {
    format!("<pre>{}</pre>", escape(text))
}

/// A byte count with a unit.
pub(crate) fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
