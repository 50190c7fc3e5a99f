//! Byte-level codecs used across the format: a bounds-checked reader, Hadoop's
//! `WritableUtils` VLong, the 7-bit "compressed int" of block encoders, and protobuf varints.

use crate::error::{HFileError, Result};

/// A cursor over a byte slice whose every read is bounds-checked. `base` is the file
/// offset of the slice, for error messages.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8], base: u64) -> Reader<'a> {
        Reader { buf, pos: 0, base }
    }

    /// A corruption at the current position, in the reader's words.
    pub(crate) fn corrupt(&self, reason: &str) -> HFileError {
        HFileError::corrupt(self.base + self.pos as u64, reason)
    }

    fn err(&self, what: &str) -> HFileError {
        HFileError::corrupt(
            self.base + self.pos as u64,
            format!("{what} runs past the end of its block"),
        )
    }

    pub(crate) fn pos(&self) -> usize {
        self.pos
    }
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.pos >= self.buf.len()
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.err("a field"));
        }
        let out = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    pub(crate) fn u8(&mut self) -> Result<u8> {
        Ok(self.bytes(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Result<u16> {
        let b = self.bytes(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    pub(crate) fn i32(&mut self) -> Result<i32> {
        let b = self.bytes(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(crate) fn i64(&mut self) -> Result<i64> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }
    /// A non-negative i32 used as a length or count.
    pub(crate) fn len32(&mut self) -> Result<usize> {
        let v = self.i32()?;
        usize::try_from(v).map_err(|_| {
            HFileError::corrupt(self.base + self.pos as u64, format!("negative length {v}"))
        })
    }

    /// Hadoop `WritableUtils.readVLong`.
    pub(crate) fn vlong(&mut self) -> Result<i64> {
        let first = self.u8()? as i8;
        if first >= -112 {
            return Ok(first as i64);
        }
        let negative = first < -120;
        let len = if negative {
            -119 - first as i32
        } else {
            -111 - first as i32
        } as usize;
        let mut v: i64 = 0;
        for &b in self.bytes(len - 1)? {
            v = (v << 8) | b as i64;
        }
        Ok(if negative { !v } else { v })
    }

    /// Hadoop VInt: a VLong that must fit an i32.
    pub(crate) fn vint(&mut self) -> Result<i32> {
        let v = self.vlong()?;
        i32::try_from(v).map_err(|_| {
            HFileError::corrupt(self.base + self.pos as u64, "variable-length int overflows")
        })
    }

    /// 7-bit little-endian-group "compressed int" (`ByteBufferUtils.readCompressedInt`).
    pub(crate) fn cint(&mut self) -> Result<usize> {
        let mut v: u64 = 0;
        for shift in (0..35).step_by(7) {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return usize::try_from(v).map_err(|_| self.err("compressed int"));
            }
        }
        Err(HFileError::corrupt(
            self.base + self.pos as u64,
            "compressed int longer than 5 bytes",
        ))
    }

    /// Protobuf base-128 varint.
    pub(crate) fn pb_varint(&mut self) -> Result<u64> {
        let mut v: u64 = 0;
        for shift in (0..70).step_by(7) {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(HFileError::corrupt(
            self.base + self.pos as u64,
            "protobuf varint longer than 10 bytes",
        ))
    }

    /// `Bytes.readByteArray`: a VInt length, then the bytes.
    pub(crate) fn byte_array(&mut self) -> Result<&'a [u8]> {
        let len = self.vint()?;
        let len = usize::try_from(len).map_err(|_| self.err("byte array"))?;
        self.bytes(len)
    }
}

/// Hadoop `WritableUtils.writeVLong`.
pub(crate) fn put_vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as u8);
        return;
    }
    let (x, base) = if v < 0 { (!v, -120i32) } else { (v, -112i32) };
    // Bytes of the magnitude, big-endian, after its leading zero bytes.
    let n = (64 - x.leading_zeros() as usize).div_ceil(8);
    let mut buf = [0u8; 9];
    buf[0] = (base - n as i32) as u8;
    buf[1..=n].copy_from_slice(&x.to_be_bytes()[8 - n..]);
    out.extend_from_slice(&buf[..=n]);
}

/// Size in bytes of a Hadoop VLong.
pub(crate) fn vlong_size(v: i64) -> usize {
    if (-112..=127).contains(&v) {
        return 1;
    }
    let x = if v < 0 { !v } else { v };
    let bits = 64 - x.leading_zeros() as usize;
    1 + bits.div_ceil(8)
}

/// `ByteBufferUtils.writeCompressedInt` / `putCompressedInt`: the same 7-bit groups as a
/// protobuf varint.
pub(crate) fn put_cint(out: &mut Vec<u8>, v: usize) {
    put_pb_varint(out, v as u64);
}

/// Protobuf varint.
pub(crate) fn put_pb_varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// `Bytes.writeByteArray`: VInt length then bytes.
pub(crate) fn put_byte_array(out: &mut Vec<u8>, bytes: &[u8]) {
    put_vlong(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vlong_round_trips_and_matches_hadoop_sizes() {
        let samples = [
            0i64,
            1,
            -1,
            127,
            128,
            -112,
            -113,
            255,
            256,
            65535,
            -65536,
            i32::MAX as i64,
            i64::MAX,
            i64::MIN,
        ];
        for v in samples {
            let mut out = Vec::new();
            put_vlong(&mut out, v);
            assert_eq!(out.len(), vlong_size(v), "size of {v}");
            let mut r = Reader::new(&out, 0);
            assert_eq!(r.vlong().unwrap(), v);
            assert!(r.is_empty());
        }
        // Known encodings from Hadoop's WritableUtils.
        let mut out = Vec::new();
        put_vlong(&mut out, 128);
        assert_eq!(out, vec![0x8f, 0x80]);
        out.clear();
        put_vlong(&mut out, -113);
        assert_eq!(out, vec![0x87, 0x70]);
    }

    /// `WritableUtils.writeVLong` as Hadoop writes it, a byte at a time.
    fn hadoop_vlong(v: i64) -> Vec<u8> {
        if (-112..=127).contains(&v) {
            return vec![v as u8];
        }
        let (mut x, mut len) = (v, -112i32);
        if x < 0 {
            x = !x;
            len = -120;
        }
        let mut tmp = x;
        while tmp != 0 {
            tmp >>= 8;
            len -= 1;
        }
        let mut out = vec![len as u8];
        let n = if len < -120 {
            -(len + 120)
        } else {
            -(len + 112)
        };
        for idx in (0..n).rev() {
            out.push((x >> (idx * 8)) as u8);
        }
        out
    }

    #[test]
    fn vlong_bytes_equal_hadoops_at_every_length() {
        let mut values = vec![i64::MIN, i64::MAX, -113, -112, 127, 128];
        for shift in 0..64 {
            let p = 1i64 << shift;
            for v in [p, p.wrapping_sub(1), p.wrapping_neg(), !p] {
                values.push(v);
            }
        }
        for v in values {
            let mut out = vec![0xAA];
            put_vlong(&mut out, v);
            assert_eq!(out[1..], hadoop_vlong(v)[..], "{v}");
            let mut r = Reader::new(&out[1..], 0);
            assert_eq!(r.vlong().unwrap(), v);
            assert!(r.is_empty());
        }
        // A vlong cut short is an error, not a wrong value.
        let mut out = Vec::new();
        put_vlong(&mut out, 1 << 40);
        assert!(Reader::new(&out[..3], 0).vlong().is_err());
    }

    #[test]
    fn compressed_int_and_varint_round_trip() {
        for v in [0usize, 1, 127, 128, 300, 1 << 20, u32::MAX as usize] {
            let mut out = Vec::new();
            put_cint(&mut out, v);
            assert_eq!(Reader::new(&out, 0).cint().unwrap(), v);
            let mut out = Vec::new();
            put_pb_varint(&mut out, v as u64);
            assert_eq!(Reader::new(&out, 0).pb_varint().unwrap(), v as u64);
        }
        assert!(Reader::new(&[0x80, 0x80], 0).cint().is_err());
    }
}
