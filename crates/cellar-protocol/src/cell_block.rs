//! Cell blocks in HBase's `KeyValueCodec` format: each cell as a 4-byte big-endian
//! length followed by its KeyValue serialization (key length, value length, key,
//! value; `KeyValueCodecWithTags` adds the 2-byte tags length and the tags). Results
//! and mutations carry only counts in protobuf when their cells travel here.

use bytes::Bytes;
use cellar_types::Cell;

use crate::codec;
use crate::error::{ProtocolError, Result};

/// The cell-block codec a connection negotiated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    KeyValue,
    KeyValueWithTags,
}

impl Codec {
    /// The codec named in a connection header; `None` for no name (cells inline in
    /// protobuf), an error for a codec this server does not speak.
    pub fn from_class(name: Option<&str>) -> Result<Option<Codec>> {
        match name {
            None | Some("") => Ok(None),
            Some(codec::KEY_VALUE) => Ok(Some(Codec::KeyValue)),
            Some(codec::KEY_VALUE_WITH_TAGS) => Ok(Some(Codec::KeyValueWithTags)),
            Some(other) => Err(ProtocolError::invalid(
                "cell block codec",
                format!("unsupported codec class {other}"),
            )),
        }
    }

    pub fn class(self) -> &'static str {
        match self {
            Codec::KeyValue => codec::KEY_VALUE,
            Codec::KeyValueWithTags => codec::KEY_VALUE_WITH_TAGS,
        }
    }

    fn with_tags(self) -> bool {
        self == Codec::KeyValueWithTags
    }

    /// Bytes `cell` takes in a block (its length prefix included).
    pub fn block_size(self, cell: &Cell) -> usize {
        4 + cell.serialized_size(self.with_tags())
    }

    /// Appends `cell` to a block.
    pub fn write(self, cell: &Cell, out: &mut Vec<u8>) {
        let len = cell.serialized_size(self.with_tags()) as u32;
        out.extend_from_slice(&len.to_be_bytes());
        cell.write_key_value(out, self.with_tags());
    }

    /// Reads every cell of a block.
    pub fn read_all(self, block: &Bytes) -> Result<Vec<Cell>> {
        let mut cells = Vec::new();
        let mut reader = BlockReader::new(self, block.clone());
        while let Some(cell) = reader.next_cell()? {
            cells.push(cell);
        }
        Ok(cells)
    }
}

/// Reads cells off a block one at a time, as protobuf messages ask for them by count.
pub struct BlockReader {
    codec: Codec,
    block: Bytes,
    pos: usize,
}

impl BlockReader {
    pub fn new(codec: Codec, block: Bytes) -> BlockReader {
        BlockReader {
            codec,
            block,
            pos: 0,
        }
    }

    /// The next cell, or `None` at the end of the block.
    pub fn next_cell(&mut self) -> Result<Option<Cell>> {
        let rest = &self.block[self.pos..];
        if rest.is_empty() {
            return Ok(None);
        }
        let Some(prefix) = rest.get(..4) else {
            return Err(ProtocolError::CellBlock(format!(
                "{} trailing bytes where a cell length belongs",
                rest.len()
            )));
        };
        let len = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
        if len > rest.len() - 4 {
            return Err(ProtocolError::CellBlock(format!(
                "cell of {len} bytes with {} left in the block",
                rest.len() - 4
            )));
        }
        let (cell, used) =
            Cell::read_key_value_shared(&self.block, self.pos + 4, self.codec.with_tags())
                .map_err(|e| ProtocolError::CellBlock(e.to_string()))?;
        if used != len {
            return Err(ProtocolError::CellBlock(format!(
                "cell length {len} but its KeyValue spans {used}"
            )));
        }
        self.pos += 4 + len;
        Ok(Some(cell))
    }

    /// `n` cells, failing if the block has fewer.
    pub fn take(&mut self, n: usize) -> Result<Vec<Cell>> {
        let mut out = Vec::with_capacity(n.min(4096));
        for _ in 0..n {
            match self.next_cell()? {
                Some(c) => out.push(c),
                None => {
                    return Err(ProtocolError::CellBlock(format!(
                        "expected {n} cells, the block has {}",
                        out.len()
                    )))
                }
            }
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_types::CellType;

    fn cells() -> Vec<Cell> {
        vec![
            Cell::new("r1", "f", "a", 5, CellType::Put, "v1").unwrap(),
            Cell::new("r1", "f", "b", 4, CellType::DeleteColumn, "").unwrap(),
            Cell::new("r2", "g", "", 3, CellType::Put, vec![0u8; 300]).unwrap(),
        ]
    }

    #[test]
    fn round_trips_both_codecs() {
        for codec in [Codec::KeyValue, Codec::KeyValueWithTags] {
            let mut block = Vec::new();
            for c in cells() {
                codec.write(&c, &mut block);
            }
            let back = codec.read_all(&Bytes::from(block)).unwrap();
            assert_eq!(back, cells());
        }
    }

    #[test]
    fn truncated_or_garbled_blocks_are_errors() {
        let mut block = Vec::new();
        for c in cells() {
            Codec::KeyValue.write(&c, &mut block);
        }
        for cut in 1..block.len() {
            let r = Codec::KeyValue.read_all(&Bytes::from(block[..cut].to_vec()));
            // Every strict prefix that does not end on a cell boundary fails.
            if let Ok(got) = r {
                assert!(got.len() < 3);
            }
        }
        let mut bad = block.clone();
        bad[3] = 0xff; // first cell length now too big
        assert!(Codec::KeyValue.read_all(&Bytes::from(bad)).is_err());
        let mut reader = BlockReader::new(Codec::KeyValue, Bytes::from(block));
        assert!(reader.take(4).is_err());
    }

    #[test]
    fn codec_names() {
        assert_eq!(Codec::from_class(None).unwrap(), None);
        assert_eq!(
            Codec::from_class(Some(codec::KEY_VALUE)).unwrap(),
            Some(Codec::KeyValue)
        );
        assert!(Codec::from_class(Some("org.example.Other")).is_err());
    }
}
