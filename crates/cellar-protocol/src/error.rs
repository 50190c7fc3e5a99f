//! What can be wrong with bytes received over HBase's protocol.

use thiserror::Error;

/// A malformed preamble, frame, message or cell block. Each one closes (or fails the
/// call on) the connection that sent it, never more.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ProtocolError {
    #[error("bad connection preamble: {0}")]
    Preamble(String),
    #[error("frame of {len} bytes is over the limit of {max}")]
    FrameTooLarge { len: usize, max: usize },
    #[error("truncated {what}: need {need} bytes, have {have}")]
    Truncated {
        what: &'static str,
        need: usize,
        have: usize,
    },
    #[error("cannot decode {what}: {source}")]
    Decode {
        what: &'static str,
        #[source]
        source: prost::DecodeError,
    },
    #[error("bad cell block: {0}")]
    CellBlock(String),
    #[error("missing field {0}")]
    Missing(&'static str),
    #[error("invalid {what}: {detail}")]
    Invalid { what: &'static str, detail: String },
}

impl ProtocolError {
    pub(crate) fn invalid(what: &'static str, detail: impl Into<String>) -> ProtocolError {
        ProtocolError::Invalid {
            what,
            detail: detail.into(),
        }
    }
}

impl From<ProtocolError> for cellar_api::Error {
    fn from(e: ProtocolError) -> Self {
        cellar_api::Error::new(cellar_api::ErrorKind::InvalidRequest, e.to_string())
    }
}

pub type Result<T, E = ProtocolError> = std::result::Result<T, E>;
