//! One WAL edit and its framing: `len:u32 lenCrc:u32 payloadCrc:u32 payload[len]`,
//! big-endian, with CRC32Cs of the four length bytes and of the payload (a trusted length
//! tells a torn tail from corruption). The payload is
//! `regionLen:u16 region seqId:u64 writeTime:i64 cellCount:u32` followed by each cell
//! as a KeyValue with its tags length (§1.1), its sequence id being the edit's.

use cellar_types::Cell;

use crate::error::{Result, WalError};

/// Bytes at the start of every segment.
pub(crate) const SEGMENT_MAGIC: &[u8; 8] = b"CLWAL01\n";
/// Length and CRC in front of each payload.
pub(crate) const FRAME_HEADER: usize = 12;
/// Largest payload accepted on replay (a sanity bound, far above the cell limits).
pub(crate) const MAX_PAYLOAD: u32 = 1 << 30;

/// All cells of one atomic mutation of one region, with the sequence id they share.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WalEdit {
    pub region: String,
    pub seq_id: u64,
    pub write_time: i64,
    pub cells: Vec<Cell>,
}

impl WalEdit {
    /// Bytes of the framed record [`WalEdit::encode`] appends.
    pub(crate) fn encoded_len(&self) -> usize {
        FRAME_HEADER
            + 2
            + self.region.len()
            + 8
            + 8
            + 4
            + self
                .cells
                .iter()
                .map(|c| c.serialized_size(true))
                .sum::<usize>()
    }

    /// Appends the framed record to `out`.
    pub(crate) fn encode(&self, out: &mut Vec<u8>) -> Result<()> {
        let region = self.region.as_bytes();
        if region.len() > u16::MAX as usize {
            return Err(WalError::InvalidEdit(format!(
                "region name of {} bytes",
                region.len()
            )));
        }
        let start = out.len();
        out.extend_from_slice(&[0; FRAME_HEADER]);
        out.extend_from_slice(&(region.len() as u16).to_be_bytes());
        out.extend_from_slice(region);
        out.extend_from_slice(&self.seq_id.to_be_bytes());
        out.extend_from_slice(&self.write_time.to_be_bytes());
        out.extend_from_slice(&(self.cells.len() as u32).to_be_bytes());
        for cell in &self.cells {
            cell.write_key_value(out, true);
        }
        let len = out.len() - start - FRAME_HEADER;
        if len > MAX_PAYLOAD as usize {
            out.truncate(start);
            return Err(WalError::InvalidEdit(format!("edit of {len} bytes")));
        }
        let len_bytes = (len as u32).to_be_bytes();
        let len_crc = crc32c::crc32c(&len_bytes);
        let payload_crc = crc32c::crc32c(&out[start + FRAME_HEADER..]);
        out[start..start + 4].copy_from_slice(&len_bytes);
        out[start + 4..start + 8].copy_from_slice(&len_crc.to_be_bytes());
        out[start + 8..start + 12].copy_from_slice(&payload_crc.to_be_bytes());
        Ok(())
    }

    /// Parses a payload whose CRC has been checked.
    pub(crate) fn decode(payload: &[u8]) -> std::result::Result<WalEdit, String> {
        let mut p = Parser { buf: payload };
        let region_len = u16::from_be_bytes(p.take_array()?) as usize;
        let region = String::from_utf8(p.take(region_len)?.to_vec())
            .map_err(|_| "region name is not UTF-8".to_string())?;
        let seq_id = u64::from_be_bytes(p.take_array()?);
        let write_time = i64::from_be_bytes(p.take_array()?);
        let count = u32::from_be_bytes(p.take_array()?) as usize;
        let mut cells = Vec::with_capacity(count.min(1 << 16));
        for _ in 0..count {
            let (cell, used) = Cell::read_key_value(p.buf, true).map_err(|e| e.to_string())?;
            p.buf = &p.buf[used..];
            cells.push(cell.with_seq_id(seq_id));
        }
        if !p.buf.is_empty() {
            return Err(format!("{} trailing bytes after the cells", p.buf.len()));
        }
        Ok(WalEdit {
            region,
            seq_id,
            write_time,
            cells,
        })
    }
}

struct Parser<'a> {
    buf: &'a [u8],
}

impl<'a> Parser<'a> {
    fn take(&mut self, n: usize) -> std::result::Result<&'a [u8], String> {
        if self.buf.len() < n {
            return Err(format!("payload ends {} bytes early", n - self.buf.len()));
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn take_array<const N: usize>(&mut self) -> std::result::Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
}

/// What the bytes at a position hold.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Frame<'a> {
    /// A whole, checked record and the bytes it spans.
    Record(&'a [u8], usize),
    /// The buffer ends inside the frame (a torn tail when at the end of the log).
    Incomplete,
    /// The length field fails its checksum.
    BadHeader(String),
    /// The payload fails its checksum; the frame spans this many bytes.
    BadPayload(String, usize),
}

fn be_u32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_be_bytes(a)
}

/// Whether `buf` starts with a length field that passes its checksum (the start of a
/// record, whole or not).
pub(crate) fn length_checks_out(buf: &[u8]) -> bool {
    buf.len() >= 8 && crc32c::crc32c(&buf[0..4]) == be_u32(&buf[4..8])
}

/// Checks the frame at the start of `buf`.
pub(crate) fn read_frame(buf: &[u8]) -> Frame<'_> {
    if buf.len() < FRAME_HEADER {
        return Frame::Incomplete;
    }
    let len = be_u32(&buf[0..4]);
    let len_crc = crc32c::crc32c(&buf[0..4]);
    if len_crc != be_u32(&buf[4..8]) {
        return Frame::BadHeader("record length fails its checksum".into());
    }
    if len > MAX_PAYLOAD {
        return Frame::BadHeader(format!("record length {len} is impossible"));
    }
    let end = FRAME_HEADER + len as usize;
    if buf.len() < end {
        return Frame::Incomplete;
    }
    let payload = &buf[FRAME_HEADER..end];
    let stored = be_u32(&buf[8..12]);
    let crc = crc32c::crc32c(payload);
    if crc != stored {
        return Frame::BadPayload(
            format!("record checksum mismatch (stored {stored:#010x}, computed {crc:#010x})"),
            end,
        );
    }
    Frame::Record(payload, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cellar_types::CellType;

    fn edit() -> WalEdit {
        WalEdit {
            region: "t1,,1".into(),
            seq_id: 42,
            write_time: 1_700_000_000_000,
            cells: vec![
                Cell::put("r", "f", "q", 5, "v").unwrap().with_seq_id(42),
                Cell::new("r", "f", "", 6, CellType::DeleteFamily, "")
                    .unwrap()
                    .with_seq_id(42),
            ],
        }
    }

    #[test]
    fn round_trips() {
        let mut buf = Vec::new();
        edit().encode(&mut buf).unwrap();
        let Frame::Record(payload, used) = read_frame(&buf) else {
            panic!("not a record")
        };
        assert_eq!(used, buf.len());
        assert_eq!(WalEdit::decode(payload).unwrap(), edit());
    }

    #[test]
    fn encoded_len_is_the_framed_size() {
        let mut tagged = edit();
        tagged.cells.push(
            Cell::put("row2", "f", "qual", 7, "value")
                .unwrap()
                .with_tags([1, 0, 2, 9, 9])
                .unwrap()
                .with_seq_id(42),
        );
        for e in [edit(), tagged] {
            let mut buf = vec![7u8; 3];
            e.encode(&mut buf).unwrap();
            assert_eq!(buf.len() - 3, e.encoded_len());
        }
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let mut buf = Vec::new();
        edit().encode(&mut buf).unwrap();
        for i in 0..buf.len() {
            let mut bad = buf.clone();
            bad[i] ^= 0x20;
            match read_frame(&bad) {
                Frame::BadHeader(_) => assert!(i < 8, "flip at {i}"),
                Frame::BadPayload(_, end) => {
                    assert!(i >= 8, "flip at {i}");
                    assert_eq!(end, buf.len());
                }
                other => panic!("flip at {i} gave {other:?}"),
            }
        }
    }

    #[test]
    fn a_cut_frame_is_incomplete() {
        let mut buf = Vec::new();
        edit().encode(&mut buf).unwrap();
        for cut in 0..buf.len() {
            assert_eq!(read_frame(&buf[..cut]), Frame::Incomplete);
        }
    }
}
