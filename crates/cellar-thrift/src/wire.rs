//! One connection's wire: which transport (buffered or framed) and which protocol
//! (binary or compact) the client speaks, told apart from its first bytes as HBase
//! clients never announce them; then calls read one at a time and replies written in
//! the same framing and protocol.
//!
//! The first bytes decide: `0x80` opens a strict binary message, `0x82` a compact
//! one; anything else is a frame length when the fifth byte opens a message, and
//! otherwise the name length of an old non-strict binary message.

use std::io::{self, BufReader, Cursor, Read, Write};

use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TInputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol,
};
use thrift::{ApplicationError, ApplicationErrorKind, TConfiguration};

use crate::value::{describe, Struct};

/// How a client frames its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Buffered,
    Framed,
}

/// How a client encodes its messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Binary,
    Compact,
}

/// Why a connection ends.
#[derive(Debug)]
pub enum WireError {
    /// The peer closed the connection between messages.
    Closed,
    /// A frame longer than the configured maximum.
    FrameTooLarge {
        len: u64,
        max: usize,
    },
    /// Bytes that are not a Thrift message.
    Malformed(String),
    Io(io::Error),
}

impl std::fmt::Display for WireError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WireError::Closed => write!(f, "connection closed"),
            WireError::FrameTooLarge { len, max } => {
                write!(f, "frame of {len} bytes is over the maximum of {max}")
            }
            WireError::Malformed(m) => write!(f, "malformed message: {m}"),
            WireError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for WireError {
    fn from(e: io::Error) -> WireError {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            WireError::Closed
        } else {
            WireError::Io(e)
        }
    }
}

/// One call as read off the wire.
pub struct Call {
    pub name: String,
    pub kind: TMessageType,
    pub seq: i32,
    /// The arguments, or why they could not be read.
    pub args: Result<Struct, String>,
}

/// A reader that first gives back bytes already taken off the stream.
struct Replay<R> {
    head: Cursor<Vec<u8>>,
    inner: R,
}

impl<R: Read> Read for Replay<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.head.read(buf)?;
        if n > 0 {
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

/// Reads exactly `buf.len()` bytes; `Closed` when the stream ends before the first.
fn read_start<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<(), WireError> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Err(WireError::Closed),
            Ok(0) => return Err(WireError::Malformed("message cut short".into())),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(WireError::Io(e)),
        }
    }
    Ok(())
}

fn is_message_start(b: u8) -> bool {
    b == 0x80 || b == 0x82
}

fn protocol_of(first: u8) -> Protocol {
    if first == 0x82 {
        Protocol::Compact
    } else {
        Protocol::Binary
    }
}

/// A connection's wire, once the transport and protocol are known.
pub struct Wire<S: Read + Write> {
    transport: Transport,
    protocol: Protocol,
    reader: Replay<BufReader<S>>,
    writer: S,
    max_frame: usize,
    config: TConfiguration,
}

impl<S: Read + Write> Wire<S> {
    /// Reads the connection's first bytes to tell its transport and protocol.
    /// `writer` is the same stream (a clone of the socket).
    pub fn detect(stream: S, writer: S, max_frame: usize) -> Result<Wire<S>, WireError> {
        let mut reader = BufReader::with_capacity(64 * 1024, stream);
        let mut first = [0u8; 1];
        read_start(&mut reader, &mut first)?;
        let (transport, protocol, head) = if is_message_start(first[0]) {
            (Transport::Buffered, protocol_of(first[0]), first.to_vec())
        } else {
            let mut rest = [0u8; 4];
            read_start(&mut reader, &mut rest)
                .map_err(|_| WireError::Malformed("connection ended within 5 bytes".into()))?;
            let head = [first[0], rest[0], rest[1], rest[2], rest[3]].to_vec();
            if is_message_start(rest[3]) {
                (Transport::Framed, protocol_of(rest[3]), head)
            } else {
                // An old client's non-strict binary message: a name length, then the name.
                (Transport::Buffered, Protocol::Binary, head)
            }
        };
        let config = TConfiguration::builder()
            .max_frame_size(Some(max_frame))
            .max_message_size(Some(
                max_frame.max(TConfiguration::DEFAULT_MAX_MESSAGE_SIZE),
            ))
            .max_string_size(Some(max_frame.max(TConfiguration::DEFAULT_STRING_LIMIT)))
            .build()
            .unwrap_or_default();
        Ok(Wire {
            transport,
            protocol,
            reader: Replay {
                head: Cursor::new(head),
                inner: reader,
            },
            writer,
            max_frame,
            config,
        })
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }

    pub fn protocol(&self) -> Protocol {
        self.protocol
    }

    fn input<'a, R: Read + 'a>(&self, r: R) -> Box<dyn TInputProtocol + 'a> {
        match self.protocol {
            Protocol::Binary => Box::new(TBinaryInputProtocol::with_config(
                r,
                false,
                self.config.clone(),
            )),
            Protocol::Compact => {
                Box::new(TCompactInputProtocol::with_config(r, self.config.clone()))
            }
        }
    }

    /// Reads the next call. A message whose header reads but whose arguments do not
    /// comes back with `args: Err`, so the caller can answer it before closing.
    pub fn read_call(&mut self) -> Result<Call, WireError> {
        match self.transport {
            Transport::Framed => {
                let mut len = [0u8; 4];
                read_start(&mut self.reader, &mut len)?;
                let n = i32::from_be_bytes(len);
                let n = usize::try_from(n)
                    .map_err(|_| WireError::Malformed(format!("negative frame length {n}")))?;
                if n > self.max_frame {
                    return Err(WireError::FrameTooLarge {
                        len: n as u64,
                        max: self.max_frame,
                    });
                }
                let mut frame = vec![0u8; n];
                self.reader
                    .read_exact(&mut frame)
                    .map_err(|e| WireError::Malformed(format!("frame cut short: {e}")))?;
                let mut p = self.input(&frame[..]);
                read_message(p.as_mut())
            }
            Transport::Buffered => {
                // Detect the end of the stream before a message starts.
                let mut one = [0u8; 1];
                read_start(&mut self.reader, &mut one)?;
                let chained = Cursor::new(one).chain(&mut self.reader);
                let protocol = self.protocol;
                let config = self.config.clone();
                let mut p: Box<dyn TInputProtocol> = match protocol {
                    Protocol::Binary => {
                        Box::new(TBinaryInputProtocol::with_config(chained, false, config))
                    }
                    Protocol::Compact => {
                        Box::new(TCompactInputProtocol::with_config(chained, config))
                    }
                };
                read_message(p.as_mut())
            }
        }
    }

    fn send(&mut self, body: Vec<u8>) -> Result<(), WireError> {
        if self.transport == Transport::Framed {
            let n = u32::try_from(body.len()).map_err(|_| {
                WireError::Malformed(format!("reply of {} bytes is too large", body.len()))
            })?;
            self.writer.write_all(&n.to_be_bytes())?;
        }
        self.writer.write_all(&body)?;
        self.writer.flush()?;
        Ok(())
    }

    fn encode(
        &self,
        f: impl FnOnce(&mut dyn TOutputProtocol) -> thrift::Result<()>,
    ) -> Result<Vec<u8>, WireError> {
        let mut buf = Vec::new();
        let r = match self.protocol {
            Protocol::Binary => f(&mut TBinaryOutputProtocol::new(&mut buf, true)),
            Protocol::Compact => f(&mut TCompactOutputProtocol::new(&mut buf)),
        };
        r.map_err(|e| WireError::Malformed(format!("cannot encode the reply: {}", describe(&e))))?;
        Ok(buf)
    }

    /// Answers call `name`/`seq` with its result struct.
    pub fn reply(&mut self, name: &str, seq: i32, result: &Struct) -> Result<(), WireError> {
        let body = self.encode(|p| {
            p.write_message_begin(&TMessageIdentifier::new(name, TMessageType::Reply, seq))?;
            result.write(p)?;
            p.write_message_end()?;
            p.flush()
        })?;
        self.send(body)
    }

    /// Answers call `name`/`seq` with a TApplicationException.
    pub fn reply_exception(
        &mut self,
        name: &str,
        seq: i32,
        kind: ApplicationErrorKind,
        message: &str,
    ) -> Result<(), WireError> {
        let body = self.encode(|p| {
            p.write_message_begin(&TMessageIdentifier::new(name, TMessageType::Exception, seq))?;
            thrift::Error::write_application_error_to_out_protocol(
                &ApplicationError::new(kind, message),
                p,
            )?;
            p.write_message_end()?;
            p.flush()
        })?;
        self.send(body)
    }
}

fn read_message(p: &mut dyn TInputProtocol) -> Result<Call, WireError> {
    let id = p.read_message_begin().map_err(|e| match e {
        thrift::Error::Transport(t) if t.kind == thrift::TransportErrorKind::EndOfFile => {
            WireError::Malformed("message cut short".into())
        }
        e => WireError::Malformed(describe(&e)),
    })?;
    let args = Struct::read(p)
        .and_then(|s| p.read_message_end().map(|_| s))
        .map_err(|e| describe(&e));
    Ok(Call {
        name: id.name,
        kind: id.message_type,
        seq: id.sequence_number,
        args,
    })
}
