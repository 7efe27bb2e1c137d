//! Any bytes given as an OPTIONS file: loading ends in options or an error
//! naming what is wrong (never a panic, a hang or a huge allocation), and
//! options it accepts write out a file that loads back to the same text.
#![no_main]

use std::path::Path;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use strata::fs::{Fs, SimFs};
use strata::options::{load_options_file, options_file_text, LoadOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&flags, text)) = data.split_first() else {
        return;
    };
    let fs = SimFs::new(0);
    let dir = Path::new("/db");
    let path = dir.join("OPTIONS-000005");
    let write = || -> strata::Result<()> {
        fs.create_dir_all(dir)?;
        let mut file = fs.create(&path)?;
        file.append(text)?;
        file.sync()
    };
    if write().is_err() {
        return;
    }
    let load = LoadOptions {
        ignore_unknown_options: flags & 1 == 1,
        ..LoadOptions::default()
    };
    let Ok((db, families)) = load_options_file(Arc::new(fs.clone()), &path, &load) else {
        return;
    };
    let named: Vec<(&str, &strata::CfOptions)> =
        families.iter().map(|(n, o)| (n.as_str(), o)).collect();
    // A name the layout cannot carry may be refused; what is written must
    // read back as written.
    let Ok(first) = options_file_text(&db, &named) else {
        return;
    };
    let again = dir.join("OPTIONS-000006");
    let rewrite = || -> strata::Result<()> {
        let mut file = fs.create(&again)?;
        file.append(first.as_bytes())?;
        file.sync()
    };
    if rewrite().is_err() {
        return;
    }
    let (db2, families2) = load_options_file(Arc::new(fs.clone()), &again, &load)
        .expect("a file Strata wrote must load");
    let named2: Vec<(&str, &strata::CfOptions)> =
        families2.iter().map(|(n, o)| (n.as_str(), o)).collect();
    let second = options_file_text(&db2, &named2).expect("and write again");
    assert_eq!(first, second, "options must round-trip through the file");
});
