//! Parses arbitrary bytes as an HBase filter string; a parsed filter is built and run over
//! a few cells. Parsing returns a filter or an error with a position, never a panic (deep
//! nesting included).
#![no_main]

use cellar_filter::parse_filter_bytes;
use cellar_types::Cell;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match parse_filter_bytes(data) {
        Err(e) => assert!(e.pos <= data.len()),
        Ok(spec) => {
            // A spec the parser accepted always compiles.
            let Ok(mut f) = cellar_filter::build(&spec) else {
                panic!("parsed filter does not build: {spec}");
            };
            for row in [&b"a"[..], b"row1", b"zz"] {
                f.reset();
                if f.filter_all_remaining() || f.filter_row_key(row) {
                    continue;
                }
                for q in [&b""[..], b"a", b"q1"] {
                    if let Ok(c) = Cell::put(row, &b"f"[..], q, 5, &b"value"[..]) {
                        let _ = f.filter_cell(&c);
                        let _ = f.next_cell_hint(&c);
                        let _ = f.transform_cell(c);
                    }
                }
                let mut cells = Vec::new();
                f.filter_row_cells(&mut cells);
                let _ = f.filter_row();
            }
            let _ = spec.to_string();
        }
    }
});
