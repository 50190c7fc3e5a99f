//! Errors raised when building or parsing cells.

/// An invalid cell or a malformed serialized key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
// Not `#[non_exhaustive]`: `cellar-api` (which depends on this crate) maps every variant
// onto the client's error kind with an exhaustive match, so a new variant must be mapped.
pub enum TypesError {
    #[error("row length {len} exceeds the maximum of 32767 bytes")]
    RowTooLong { len: usize },
    #[error("family length {len} exceeds the maximum of 127 bytes")]
    FamilyTooLong { len: usize },
    #[error("tags length {len} exceeds the maximum of 32767 bytes")]
    TagsTooLong { len: usize },
    #[error("unknown cell type code {code}")]
    UnknownType { code: u8 },
    #[error("malformed key: {reason}")]
    MalformedKey { reason: &'static str },
    #[error("malformed KeyValue: {reason}")]
    MalformedKeyValue { reason: &'static str },
    #[error("invalid escape sequence in {input:?}")]
    BadEscape { input: String },
}

pub type Result<T> = std::result::Result<T, TypesError>;
