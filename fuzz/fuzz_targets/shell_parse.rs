//! Parses arbitrary text as a shell line (HBase's Ruby subset: strings with escapes,
//! numbers, symbols, arrays, hashes, trailing `key => value` pairs): a command or an
//! error with a position inside the line, never a panic or a stack overflow.
#![no_main]

use cellar::shell::parse::parse_line;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match parse_line(&text) {
        Err(e) => assert!(e.pos <= text.chars().count()),
        Ok(None) => {}
        Ok(Some(cmd)) => {
            assert!(!cmd.name.is_empty());
            for v in &cmd.args {
                let _ = v.to_string();
                let _ = v.bytes();
                let _ = v.get("NAME");
            }
        }
    }
});
