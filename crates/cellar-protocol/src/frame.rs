//! Connection set-up and call framing of HBase's RPC (HBase 2.x `RpcServer`):
//!
//! - the client opens with six bytes: `HBas`, the RPC version (0) and the auth method
//!   (0x50, SIMPLE);
//! - then a 4-byte big-endian length and a `ConnectionHeader` (not length-delimited);
//! - then calls: a 4-byte big-endian total length, a varint-delimited `RequestHeader`,
//!   the varint-delimited request message when `request_param` is set, and the cell
//!   block when `cell_block_meta` says one follows;
//! - responses mirror calls, with a `ResponseHeader` whose `exception`, when present,
//!   replaces the response message.

use bytes::{Buf, Bytes};
use prost::Message;

use crate::error::{ProtocolError, Result};
use crate::pb;

/// The first four bytes of every connection.
pub const MAGIC: &[u8; 4] = b"HBas";
/// The only RPC version HBase 2.x speaks.
pub const RPC_VERSION: u8 = 0;
/// SIMPLE authentication: the user named in the connection header is believed.
pub const AUTH_SIMPLE: u8 = 0x50;
/// The preamble an HBase 2.6 client sends to ask only for the cluster id (the
/// connection registry), before any real connection.
pub const REGISTRY_PREAMBLE: &[u8; 6] = b"Regist";
/// The preamble an HBase 2.6 client sends to ask for the server's security principal.
pub const SECURITY_PREAMBLE: &[u8; 6] = b"Securi";
/// Length of the preamble.
pub const PREAMBLE_LEN: usize = 6;
/// HBase's `hbase.ipc.max.request.size` default (256 MiB).
pub const DEFAULT_MAX_REQUEST_SIZE: usize = 256 * 1024 * 1024;

/// The preamble a client sends.
pub fn preamble() -> [u8; PREAMBLE_LEN] {
    [
        MAGIC[0],
        MAGIC[1],
        MAGIC[2],
        MAGIC[3],
        RPC_VERSION,
        AUTH_SIMPLE,
    ]
}

/// Checks a received preamble: magic, version, and an auth method this server accepts.
pub fn check_preamble(b: &[u8; PREAMBLE_LEN]) -> Result<()> {
    if &b[..4] != MAGIC {
        return Err(ProtocolError::Preamble(format!(
            "expected magic HBas, got {:02x?}",
            &b[..4]
        )));
    }
    if b[4] != RPC_VERSION {
        return Err(ProtocolError::Preamble(format!(
            "unsupported RPC version {}",
            b[4]
        )));
    }
    if b[5] != AUTH_SIMPLE {
        return Err(ProtocolError::Preamble(format!(
            "unsupported authentication method 0x{:02x}: only SIMPLE (0x50)",
            b[5]
        )));
    }
    Ok(())
}

/// Frames that are ready together, joined for one write: `first`, then whatever
/// `next` yields at once, up to about 1 MiB.
pub fn coalesce(first: Vec<u8>, mut next: impl FnMut() -> Option<Vec<u8>>) -> Vec<u8> {
    let mut out = first;
    while out.len() < (1 << 20) {
        match next() {
            Some(f) => out.extend_from_slice(&f),
            None => break,
        }
    }
    out
}

/// The length prefix of a frame, checked against `max`.
pub fn frame_len(prefix: [u8; 4], max: usize) -> Result<usize> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len > max {
        return Err(ProtocolError::FrameTooLarge { len, max });
    }
    Ok(len)
}

/// The connection header with its 4-byte length, as a client writes it after the
/// preamble.
pub fn encode_connection_header(h: &pb::ConnectionHeader) -> Vec<u8> {
    let body = h.encode_to_vec();
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// Parses a connection header body (the bytes after its length).
pub fn decode_connection_header(body: &[u8]) -> Result<pb::ConnectionHeader> {
    pb::ConnectionHeader::decode(body).map_err(|source| ProtocolError::Decode {
        what: "ConnectionHeader",
        source,
    })
}

/// Splits one varint-delimited message off the front of `buf`.
fn take_delimited(buf: &mut Bytes, what: &'static str) -> Result<Bytes> {
    let len = prost::encoding::decode_varint(buf)
        .map_err(|source| ProtocolError::Decode { what, source })? as usize;
    if len > buf.remaining() {
        return Err(ProtocolError::Truncated {
            what,
            need: len,
            have: buf.remaining(),
        });
    }
    Ok(buf.split_to(len))
}

fn take_cell_block(buf: &mut Bytes, meta: Option<&pb::CellBlockMeta>) -> Result<Bytes> {
    let len = meta.and_then(|m| m.length).unwrap_or(0) as usize;
    if len > buf.remaining() {
        return Err(ProtocolError::Truncated {
            what: "cell block",
            need: len,
            have: buf.remaining(),
        });
    }
    Ok(buf.split_to(len))
}

/// A call whose header parsed but whose parameter or cell block did not: the server
/// answers that call with an error and keeps the connection (as HBase does).
#[derive(Debug)]
pub struct BadCall {
    pub header: pb::RequestHeader,
    pub error: ProtocolError,
}

/// Why a call frame could not be taken apart.
#[derive(Debug)]
pub enum FrameError {
    /// The header is bad: the connection cannot be trusted any more.
    Header(ProtocolError),
    /// The header is fine but its parameter or cell block is not: only the call fails.
    Call(Box<BadCall>),
}

/// One call as the server receives it.
#[derive(Debug, Clone)]
pub struct Request {
    pub header: pb::RequestHeader,
    /// The encoded request message (empty when the header says none follows).
    pub param: Bytes,
    pub cell_block: Bytes,
}

impl Request {
    /// Parses a call frame (the bytes after its 4-byte length).
    pub fn decode(frame: Bytes) -> Result<Request> {
        Request::decode_call(frame).map_err(|e| match e {
            FrameError::Header(e) => e,
            FrameError::Call(bad) => bad.error,
        })
    }

    /// Parses a call frame, telling a bad header (the connection is unusable) from a
    /// bad parameter or cell block (only the call is).
    pub fn decode_call(mut frame: Bytes) -> std::result::Result<Request, FrameError> {
        let hb = take_delimited(&mut frame, "RequestHeader").map_err(FrameError::Header)?;
        let header = pb::RequestHeader::decode(hb).map_err(|source| {
            FrameError::Header(ProtocolError::Decode {
                what: "RequestHeader",
                source,
            })
        })?;
        let rest = (|| {
            let param = if header.request_param.unwrap_or(false) {
                take_delimited(&mut frame, "request parameter")?
            } else {
                Bytes::new()
            };
            let cell_block = take_cell_block(&mut frame, header.cell_block_meta.as_ref())?;
            Ok::<_, ProtocolError>((param, cell_block))
        })();
        match rest {
            Ok((param, cell_block)) => Ok(Request {
                header,
                param,
                cell_block,
            }),
            Err(error) => Err(FrameError::Call(Box::new(BadCall { header, error }))),
        }
    }

    /// Decodes the request message as `M`.
    pub fn param<M: Message + Default>(&self, what: &'static str) -> Result<M> {
        M::decode(self.param.clone()).map_err(|source| ProtocolError::Decode { what, source })
    }

    /// The whole frame, length prefix included, as a client writes it.
    pub fn encode(call_id: u32, method: &str, param: &impl Message, cell_block: &[u8]) -> Vec<u8> {
        let header = pb::RequestHeader {
            call_id: Some(call_id),
            method_name: Some(method.to_string()),
            request_param: Some(true),
            cell_block_meta: (!cell_block.is_empty()).then_some(pb::CellBlockMeta {
                length: Some(cell_block.len() as u32),
            }),
            ..Default::default()
        };
        frame(&header, Some(param), cell_block)
    }
}

fn frame(header: &impl Message, param: Option<&dyn EncodeDelimited>, cell_block: &[u8]) -> Vec<u8> {
    // Sized before writing, so the frame is written once, in place: a scan's cell
    // block of a hundred rows is copied into it once, with no buffer growing under it.
    let header_len = header.encoded_len();
    let body_len = prost::length_delimiter_len(header_len)
        + header_len
        + param.map_or(0, |p| p.delimited_len())
        + cell_block.len();
    let mut out = Vec::with_capacity(4 + body_len);
    out.extend_from_slice(&(body_len as u32).to_be_bytes());
    // Writing to a Vec cannot fail for lack of space.
    let _ = header.encode_length_delimited(&mut out);
    if let Some(p) = param {
        p.encode_delimited_into(&mut out);
    }
    out.extend_from_slice(cell_block);
    debug_assert_eq!(out.len(), 4 + body_len);
    out
}

/// Object-safe length-delimited encoding, so a response message of any type can be
/// framed.
pub trait EncodeDelimited: Send {
    fn encode_delimited_into(&self, out: &mut Vec<u8>);
    /// Bytes `encode_delimited_into` appends.
    fn delimited_len(&self) -> usize;
}

impl<M: Message> EncodeDelimited for M {
    fn encode_delimited_into(&self, out: &mut Vec<u8>) {
        let _ = self.encode_length_delimited(out);
    }

    fn delimited_len(&self) -> usize {
        let len = self.encoded_len();
        prost::length_delimiter_len(len) + len
    }
}

/// One response as the client receives it.
#[derive(Debug, Clone)]
pub struct Response {
    pub header: pb::ResponseHeader,
    pub param: Bytes,
    pub cell_block: Bytes,
}

impl Response {
    /// Parses a response frame (the bytes after its 4-byte length).
    pub fn decode(mut frame: Bytes) -> Result<Response> {
        let hb = take_delimited(&mut frame, "ResponseHeader")?;
        let header = pb::ResponseHeader::decode(hb).map_err(|source| ProtocolError::Decode {
            what: "ResponseHeader",
            source,
        })?;
        let param = if header.exception.is_none() && frame.has_remaining() {
            take_delimited(&mut frame, "response message")?
        } else {
            Bytes::new()
        };
        let cell_block = take_cell_block(&mut frame, header.cell_block_meta.as_ref())?;
        Ok(Response {
            header,
            param,
            cell_block,
        })
    }

    /// Decodes the response message as `M`.
    pub fn param<M: Message + Default>(&self, what: &'static str) -> Result<M> {
        M::decode(self.param.clone()).map_err(|source| ProtocolError::Decode { what, source })
    }

    /// A successful response frame, length prefix included.
    pub fn encode_ok(call_id: u32, param: &dyn EncodeDelimited, cell_block: &[u8]) -> Vec<u8> {
        let header = pb::ResponseHeader {
            call_id: Some(call_id),
            exception: None,
            cell_block_meta: (!cell_block.is_empty()).then_some(pb::CellBlockMeta {
                length: Some(cell_block.len() as u32),
            }),
        };
        frame(&header, Some(param), cell_block)
    }

    /// A failed call's response frame, length prefix included.
    pub fn encode_error(call_id: u32, exception: pb::ExceptionResponse) -> Vec<u8> {
        let header = pb::ResponseHeader {
            call_id: Some(call_id),
            exception: Some(exception),
            cell_block_meta: None,
        };
        frame(&header, None, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preamble_checks() {
        assert!(check_preamble(&preamble()).is_ok());
        assert!(check_preamble(b"HBaX\x00\x50").is_err());
        assert!(check_preamble(b"HBas\x01\x50").is_err());
        assert!(check_preamble(b"HBas\x00\x51").is_err());
    }

    #[test]
    fn request_round_trip_with_cell_block() {
        let get = pb::GetRequest {
            region: pb::RegionSpecifier {
                r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
                value: Bytes::from_static(b"t,,1.abc."),
            },
            get: pb::Get {
                row: Bytes::from_static(b"r"),
                ..Default::default()
            },
        };
        let bytes = Request::encode(7, "Get", &get, b"CELLS");
        let len = frame_len(bytes[..4].try_into().unwrap(), 1 << 20).unwrap();
        assert_eq!(len, bytes.len() - 4);
        let req = Request::decode(Bytes::from(bytes[4..].to_vec())).unwrap();
        assert_eq!(req.header.call_id, Some(7));
        assert_eq!(req.header.method_name.as_deref(), Some("Get"));
        assert_eq!(req.param::<pb::GetRequest>("GetRequest").unwrap(), get);
        assert_eq!(&req.cell_block[..], b"CELLS");
    }

    #[test]
    fn truncated_and_oversized_frames_are_errors() {
        let get = pb::GetResponse::default();
        let bytes = Response::encode_ok(1, &get, b"xyz");
        for cut in 0..bytes.len() - 4 {
            let r = Response::decode(Bytes::from(bytes[4..4 + cut].to_vec()));
            // A prefix either fails to parse or parses to something shorter: never
            // a panic.
            if let Ok(r) = r {
                assert!(r.cell_block.len() < 3);
            }
        }
        assert!(matches!(
            frame_len((2000u32).to_be_bytes(), 1000),
            Err(ProtocolError::FrameTooLarge { .. })
        ));
    }

    /// A response is written in one piece: its length prefix counts exactly the header,
    /// the message and a cell block of any size, each read back whole.
    #[test]
    fn a_response_with_a_large_cell_block_round_trips() {
        let scan = pb::ScanResponse {
            scanner_id: Some(7),
            more_results: Some(true),
            cells_per_result: vec![10; 100],
            ..Default::default()
        };
        let block: Vec<u8> = (0..110_000u32).map(|i| (i % 251) as u8).collect();
        let bytes = Response::encode_ok(9, &scan, &block);
        let len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        assert_eq!(len, bytes.len() - 4);
        let r = Response::decode(Bytes::from(bytes[4..].to_vec())).unwrap();
        assert_eq!(r.header.call_id, Some(9));
        assert_eq!(
            r.header.cell_block_meta.and_then(|m| m.length),
            Some(block.len() as u32)
        );
        assert_eq!(&r.cell_block[..], &block[..]);
        let back = pb::ScanResponse::decode(r.param).unwrap();
        assert_eq!(back, scan);
    }

    #[test]
    fn exception_response_has_no_message() {
        let bytes = Response::encode_error(
            3,
            pb::ExceptionResponse {
                exception_class_name: Some("java.io.IOException".into()),
                stack_trace: Some("boom".into()),
                do_not_retry: Some(true),
                ..Default::default()
            },
        );
        let r = Response::decode(Bytes::from(bytes[4..].to_vec())).unwrap();
        let e = r.header.exception.unwrap();
        assert_eq!(
            e.exception_class_name.as_deref(),
            Some("java.io.IOException")
        );
        assert!(r.param.is_empty());
    }
}
