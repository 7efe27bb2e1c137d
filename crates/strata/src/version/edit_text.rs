//! [`VersionEdit`] as text, one line per field, for `strata manifest_dump`.

use std::fmt::{self, Write as _};

use super::VersionEdit;
use crate::key::{ParsedInternalKey, ValueType};

/// One line per field, for `strata manifest_dump`:
///
/// ```text
/// comparator: strata.bytewise
/// log_number: 12
/// next_file_number: 15
/// last_sequence: 1000
/// delete file L1 #7
/// add file L0 #13 size=4096 seq=[1,500] keys=['a'@500 .. 'z'@1]
/// ```
impl fmt::Display for VersionEdit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut lines = Vec::new();
        if let Some(name) = &self.comparator {
            lines.push(format!("comparator: {name}"));
        }
        if let Some(name) = &self.merge_operator {
            lines.push(format!("merge_operator: {name}"));
        }
        if let Some(description) = &self.merge_operator_description {
            lines.push(format!("merge_operator_description: {description}"));
        }
        let scalars = [
            ("log_number", self.log_number),
            ("next_file_number", self.next_file_number),
            ("last_sequence", self.last_sequence),
        ];
        for (name, value) in scalars {
            if let Some(v) = value {
                lines.push(format!("{name}: {v}"));
            }
        }
        for (level, number) in &self.deleted_files {
            lines.push(format!("delete file L{level} #{number}"));
        }
        for (level, m) in &self.new_files {
            let mut line = format!(
                "add file L{level} #{} size={} seq=[{},{}] keys=[{} .. {}]",
                m.number,
                m.file_size,
                m.smallest_seqno,
                m.largest_seqno,
                display_internal_key(&m.smallest),
                display_internal_key(&m.largest),
            );
            if !m.blob_files.is_empty() {
                let numbers: Vec<String> = m.blob_files.iter().map(|n| format!("#{n}")).collect();
                let _ = write!(line, " blob_files=[{}]", numbers.join(","));
            }
            if let Some(seq) = m.global_seqno {
                let _ = write!(line, " global_seqno={seq}");
            }
            lines.push(line);
        }
        lines.extend(self.blob_file_additions.iter().map(|a| a.to_string()));
        lines.extend(self.blob_file_garbage.iter().map(|g| g.to_string()));
        if let Some(n) = self.min_log_number_to_keep {
            lines.push(format!("min_log_number_to_keep: {n}"));
        }
        if let Some(bits) = self.wal_features {
            lines.push(format!("wal_features: {bits:#x}"));
        }
        if self.column_family != 0 {
            lines.push(format!("column_family: {}", self.column_family));
        }
        if let Some(name) = &self.column_family_add {
            lines.push(format!("add column family {name:?}"));
        }
        if self.column_family_drop {
            lines.push("drop column family".to_owned());
        }
        if let Some(max) = self.max_column_family {
            lines.push(format!("max_column_family: {max}"));
        }
        if lines.is_empty() {
            return f.write_str("(empty edit)");
        }
        f.write_str(&lines.join("\n"))
    }
}

/// Renders an internal key as `'user'@seq` (printable ASCII) or `0x75736572@seq`,
/// with `:del` for deletions and `:type=N` for other type bytes. A key too short
/// to be an internal key is shown whole in hex with `(bad)`.
pub(super) fn display_internal_key(ikey: &[u8]) -> String {
    let Some(parsed) = ParsedInternalKey::parse(ikey) else {
        return format!("{}(bad)", hex(ikey));
    };
    let user = parsed.user_key;
    let printable = user
        .iter()
        .all(|&b| (0x20..=0x7e).contains(&b) && b != b'\'' && b != b'\\');
    let mut out = if printable {
        format!("'{}'", String::from_utf8_lossy(user))
    } else {
        hex(user)
    };
    let _ = write!(out, "@{}", parsed.seq);
    match parsed.value_type() {
        Some(ValueType::Put) => {}
        Some(ValueType::Delete) => out.push_str(":del"),
        Some(ValueType::Merge) => out.push_str(":merge"),
        Some(ValueType::RangeDeletion) => out.push_str(":rangedel"),
        Some(ValueType::BlobIndex) => out.push_str(":blob"),
        None => {
            let _ = write!(out, ":type={}", parsed.type_code);
        }
    }
    out
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 + 2 * bytes.len());
    out.push_str("0x");
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}
