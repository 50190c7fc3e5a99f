//! Feeds arbitrary bytes to the Thrift gateway's wire as one connection's stream: the
//! transport and protocol detection, framing and the reading of calls into dynamic
//! structs end in calls or an error, never a panic, and every call read can be answered.
//! (Replies carry the gateway's own field ids, never a peer's: the thrift crate's compact
//! writer overflows on some field-id sequences no reply of ours has.)
#![no_main]

use std::io::{Cursor, Read, Write};

use cellar_thrift::{Struct, Value, Wire, WireError};
use libfuzzer_sys::fuzz_target;

/// A connection whose input is the fuzzer's bytes and whose output is discarded.
struct Stream(Cursor<Vec<u8>>);

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let input = Stream(Cursor::new(data.to_vec()));
    let output = Stream(Cursor::new(Vec::new()));
    let Ok(mut wire) = Wire::detect(input, output, 64 * 1024) else {
        return;
    };
    for _ in 0..64 {
        match wire.read_call() {
            Ok(call) => {
                let fields = call.args.map(|a| a.fields.len()).unwrap_or(0);
                let reply = Struct::new().with(0, Value::I32(fields as i32));
                let _ = wire.reply(&call.name, call.seq, &reply);
            }
            Err(WireError::Closed) | Err(_) => return,
        }
    }
});
