use proptest::prelude::*;

use super::*;

fn parse_str(text: &str) -> Result<Document> {
    parse(text.as_bytes(), Path::new("/db/OPTIONS-000007"))
}

/// The error's message, checked to be an InvalidArgument naming the file.
fn error_of(text: &str) -> String {
    match parse_str(text) {
        Err(e @ Error::InvalidArgument { .. }) => {
            let message = e.to_string();
            assert!(message.contains("/db/OPTIONS-000007"), "{message}");
            message
        }
        other => panic!("expected InvalidArgument, got {other:?}"),
    }
}

const MINIMAL: &str = "[DBOptions]\n[CFOptions \"default\"]\n";

#[test]
fn parses_rocksdbs_layout() {
    let text = "# This is a RocksDB option file.\n\
        \n\
        [Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n\n\
        [DBOptions]\n  max_open_files=-1\n  db_host_id=__hostname__  # trailing comment\n  empty=\n\n\
        [CFOptions \"default\"]\n  compression_opts={level=3;enabled=false;}\n  \n\
        [TableOptions/BlockBasedTable \"default\"]\n  filter_policy=bloomfilter:10:false\n\
        [CFOptions \"a\\#b\\:c\"]\n  x=a=b\n\
        [TableOptions/BlockBasedTable \"a\\#b\\:c\"]\r\n";
    let doc = parse_str(text).unwrap();
    let kinds: Vec<&SectionKind> = doc.sections.iter().map(|s| &s.kind).collect();
    assert_eq!(
        kinds,
        [
            &SectionKind::Version,
            &SectionKind::DbOptions,
            &SectionKind::CfOptions {
                family: "default".into()
            },
            &SectionKind::TableOptions {
                factory: "BlockBasedTable".into(),
                family: "default".into()
            },
            &SectionKind::CfOptions {
                family: "a#b:c".into()
            },
            &SectionKind::TableOptions {
                factory: "BlockBasedTable".into(),
                family: "a#b:c".into()
            },
        ]
    );
    let db = &doc.sections[1].entries;
    assert_eq!(db[0].name, "max_open_files");
    assert_eq!(db[0].value, "-1");
    assert_eq!(db[0].line, 8);
    assert_eq!(db[1].value, "__hostname__");
    assert_eq!(db[2].value, "");
    assert_eq!(doc.sections[2].entries[0].value, "{level=3;enabled=false;}");
    assert_eq!(doc.sections[3].entries[0].value, "bloomfilter:10:false");
    assert_eq!(doc.sections[4].entries[0].value, "a=b");
}

#[test]
fn escaped_hash_is_not_a_comment() {
    let doc = parse_str("[DBOptions]\n  s=a\\#b # c\n[CFOptions \"default\"]\n").unwrap();
    assert_eq!(doc.sections[0].entries[0].value, "a\\#b");
    assert_eq!(unescape(&doc.sections[0].entries[0].value), "a#b");
}

#[test]
fn escape_roundtrips_every_special_character() {
    for raw in ["", "plain", "\\", "#:\r\n", "a\\nb", "ünï:cödé#"] {
        assert_eq!(unescape(&escape(raw)), raw, "{raw:?}");
        assert!(!escape(raw).contains('\n'));
    }
    assert_eq!(unescape("trailing\\"), "trailing");
    assert_eq!(unescape("\\q"), "q");
}

#[test]
fn malformed_lines_are_named_with_their_line_number() {
    let cases = [
        (
            "[DBOptions]\n  no_equals_sign\n",
            "line 2",
            "expected name=value",
        ),
        ("[DBOptions]\n  =5\n", "line 2", "needs a name"),
        ("  a=1\n[DBOptions]\n", "line 1", "before any [section]"),
        ("[Nonsense]\n", "line 1", "unknown section"),
        ("[TableOptions/ \"default\"]\n", "line 1", "unknown section"),
        ("[CFOptions]\n", "line 1", "quoted column family name"),
        ("[DBOptions]\n[DBOptions]\n", "line 2", "second [DBOptions]"),
        ("[Version]\n[Version]\n", "line 2", "second [Version]"),
        ("[CFOptions \"x\"]\n", "line 1", "must come first"),
        (
            "[CFOptions \"default\"]\n[CFOptions \"default\"]\n",
            "line 2",
            "second [CFOptions]",
        ),
        (
            "[CFOptions \"default\"]\n[TableOptions/BlockBasedTable \"x\"]\n",
            "line 2",
            "before its column family",
        ),
        ("[CFOptions \"default\" junk]\n", "line 1", "text after"),
        ("[DBOptions]\n a=1\n a=2\n", "line 3", "first at line 2"),
        (
            "[Version]\n rocksdb_version=7.x\n",
            "line 2",
            "not a version",
        ),
        (
            "[Version]\n rocksdb_version=1.2.3.4\n",
            "line 2",
            "not a version",
        ),
        (
            "[Version]\n options_file_version=0.9\n",
            "line 2",
            "at least 1",
        ),
    ];
    for (text, line, why) in cases {
        let full = format!("{text}{MINIMAL}");
        let message = error_of(&full);
        assert!(message.contains(line), "{text:?}: {message}");
        assert!(message.contains(why), "{text:?}: {message}");
    }
    let message = match parse(b"[DBOptions]\n a=\xff\n", Path::new("/x")) {
        Err(e) => e.to_string(),
        Ok(doc) => panic!("parsed {doc:?}"),
    };
    assert!(
        message.contains("line 2") && message.contains("UTF-8"),
        "{message}"
    );
}

#[test]
fn required_sections_are_named() {
    assert!(error_of("[CFOptions \"default\"]\n").contains("no [DBOptions]"));
    assert!(error_of("[DBOptions]\n").contains("[CFOptions \"default\"]"));
    assert!(parse_str(MINIMAL).is_ok());
}

#[test]
fn long_lines_are_quoted_shortened() {
    let long = "x".repeat(10_000);
    let message = error_of(&format!("[DBOptions]\n{long}\n"));
    assert!(message.len() < 400, "{}", message.len());
    assert!(message.ends_with("..."), "{message}");
}

fn name() -> impl Strategy<Value = String> {
    "[a-zA-Z_][a-zA-Z0-9_.]{0,20}"
}

fn document() -> impl Strategy<Value = Document> {
    let entries = || proptest::collection::btree_map(name(), any::<String>(), 0..6);
    let families = proptest::collection::btree_set(any::<String>(), 0..3);
    (entries(), entries(), entries(), families).prop_map(|(db, cf, table, families)| {
        let fill = |mut section: Section, entries: &std::collections::BTreeMap<String, String>| {
            for (name, value) in entries {
                section.push(name, escape(value));
            }
            section
        };
        let mut doc = Document::default();
        doc.sections
            .push(fill(Section::new(SectionKind::DbOptions), &db));
        let names = std::iter::once("default".to_owned())
            .chain(families.into_iter().filter(|f| f != "default"));
        for family in names {
            doc.sections.push(fill(
                Section::new(SectionKind::CfOptions {
                    family: family.clone(),
                }),
                &cf,
            ));
            doc.sections.push(fill(
                Section::new(SectionKind::TableOptions {
                    factory: "BlockBasedTable".into(),
                    family,
                }),
                &table,
            ));
        }
        doc
    })
}

/// A valid file to mutate.
fn sample() -> Vec<u8> {
    let text = "[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n\
        [DBOptions]\n  max_open_files=-1\n  s=a\\#b\n\
        [CFOptions \"default\"]\n  compression=kLZ4Compression\n\
        [TableOptions/BlockBasedTable \"default\"]\n  block_size=4096\n";
    text.as_bytes().to_vec()
}

proptest! {
    #[test]
    fn rendered_documents_parse_back(doc in document()) {
        let text = render(&doc);
        let parsed = parse_str(&text).unwrap();
        prop_assert_eq!(parsed.sections.len(), doc.sections.len());
        for (got, want) in parsed.sections.iter().zip(&doc.sections) {
            prop_assert_eq!(&got.kind, &want.kind);
            let got: Vec<(String, String)> =
                got.entries.iter().map(|e| (e.name.clone(), unescape(&e.value))).collect();
            let want: Vec<(String, String)> =
                want.entries.iter().map(|e| (e.name.clone(), unescape(&e.value))).collect();
            // Values are trimmed on reading; escaping does not protect edge spaces.
            let trim = |v: Vec<(String, String)>| -> Vec<(String, String)> {
                v.into_iter().map(|(n, x)| (n, x.trim_matches(is_space).to_owned())).collect()
            };
            prop_assert_eq!(trim(got), trim(want));
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let _ = parse(&bytes, Path::new("x"));
    }

    #[test]
    fn mutated_files_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8)
    ) {
        let mut bytes = sample();
        for (at, byte, how) in edits {
            let i = at.index(bytes.len().max(1));
            match how {
                0 if i < bytes.len() => bytes[i] = byte,
                1 => bytes.insert(i.min(bytes.len()), byte),
                _ if i < bytes.len() => { bytes.remove(i); }
                _ => {}
            }
        }
        let _ = parse(&bytes, Path::new("x"));
    }
}
