//! Errors on the wire: an `ExceptionResponse` (a failed call) or a `NameBytesPair`
//! (one failed action of a Multi) carries the Java exception class, the message as its
//! "stack trace" text, and `do_not_retry`. A client maps the class back to a kind.

use cellar_api::{Error, ErrorKind};

use super::b;
use crate::pb;

/// Every kind, to map class names back.
const KINDS: &[ErrorKind] = &[
    ErrorKind::NotServingRegion,
    ErrorKind::WrongRegion,
    ErrorKind::RegionTooBusy,
    ErrorKind::LockTimeout,
    ErrorKind::RowTooBig,
    ErrorKind::TableNotFound,
    ErrorKind::TableExists,
    ErrorKind::TableNotEnabled,
    ErrorKind::TableNotDisabled,
    ErrorKind::NamespaceNotFound,
    ErrorKind::NamespaceExists,
    ErrorKind::NoSuchColumnFamily,
    ErrorKind::UnknownScanner,
    ErrorKind::SnapshotExists,
    ErrorKind::SnapshotNotFound,
    ErrorKind::FailedSanityCheck,
    ErrorKind::InvalidRequest,
    ErrorKind::Corrupt,
    ErrorKind::Io,
    ErrorKind::ServerAborted,
    ErrorKind::ServerStopped,
];

/// The kind of a Java exception class an HBase server sent: a kind's own class, or
/// one of the other classes HBase sends for the same failure.
pub fn kind_of_class(class: &str) -> ErrorKind {
    if let Some(k) = KINDS.iter().find(|k| k.exception_class() == class) {
        return *k;
    }
    let short = class.rsplit('.').next().unwrap_or(class);
    match short {
        "RegionMovedException" | "RegionOpeningException" => ErrorKind::NotServingRegion,
        "OutOfOrderScannerNextException" | "ScannerResetException" => ErrorKind::UnknownScanner,
        "CallQueueTooBigException" | "MultiActionResultTooLarge" | "RetryImmediatelyException" => {
            ErrorKind::RegionTooBusy
        }
        "ServerNotRunningYetException" | "PleaseHoldException" => ErrorKind::ServerStopped,
        "UnsupportedOperationException"
        | "UnknownProtocolException"
        | "UnknownServiceException" => ErrorKind::Unsupported,
        "RequestTooBigException" | "FatalConnectionException" | "IncompatibleFilterException" => {
            ErrorKind::InvalidRequest
        }
        _ if class.contains("DoNotRetry") => ErrorKind::InvalidRequest,
        _ => ErrorKind::Io,
    }
}

/// The message of the "stack trace" text a server sends: its first line, which is the
/// exception's `toString()` (`class: message`), without the class.
fn message_of(text: &str, class: &str) -> String {
    let first = text.lines().next().unwrap_or_default();
    first
        .strip_prefix(class)
        .and_then(|rest| rest.strip_prefix(": "))
        .unwrap_or(first)
        .to_string()
}

/// The text HBase sends for an exception, as Java's `printStackTrace` writes it: the
/// exception's `toString()` (`class: message`), then its frames (ours: one).
fn stack_trace(class: &str, message: &str) -> String {
    format!("{class}: {message}\n\tat cellar server")
}

pub fn error_to_exception(
    e: &Error,
    class: Option<&str>,
    do_not_retry: Option<bool>,
) -> pb::ExceptionResponse {
    let class = class.unwrap_or(e.exception_class());
    pb::ExceptionResponse {
        exception_class_name: Some(class.to_string()),
        stack_trace: Some(stack_trace(class, e.message())),
        hostname: None,
        port: None,
        do_not_retry: Some(do_not_retry.unwrap_or(e.kind().do_not_retry())),
        server_overloaded: None,
    }
}

/// The error an exception response carries (its message is the server's, the first
/// line of the stack-trace text), and the exception class.
pub fn error_from_exception(x: &pb::ExceptionResponse) -> (Error, String) {
    let class = x
        .exception_class_name
        .clone()
        .unwrap_or_else(|| "java.io.IOException".into());
    let kind = kind_of_class(&class);
    let msg = message_of(x.stack_trace.as_deref().unwrap_or_default(), &class);
    let msg = if msg.is_empty() { class.clone() } else { msg };
    (Error::new(kind, msg), class)
}

pub fn error_to_pair(e: &Error) -> pb::NameBytesPair {
    pb::NameBytesPair {
        name: e.exception_class().to_string(),
        value: Some(b(stack_trace(e.exception_class(), e.message()).as_bytes())),
    }
}

pub fn error_from_pair(p: &pb::NameBytesPair) -> Error {
    let kind = kind_of_class(&p.name);
    let msg = String::from_utf8_lossy(p.value.as_deref().unwrap_or_default()).into_owned();
    let msg = message_of(&msg, &p.name);
    Error::new(kind, if msg.is_empty() { p.name.clone() } else { msg })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_trip_to_kinds() {
        for &k in KINDS {
            let e = Error::new(k, "why");
            let (back, class) = error_from_exception(&error_to_exception(&e, None, None));
            assert_eq!(back.kind(), k, "{class}");
            assert_eq!(back.message(), "why");
            assert_eq!(error_from_pair(&error_to_pair(&e)).message(), "why");
            assert_eq!(error_from_pair(&error_to_pair(&e)).kind(), k);
        }
        let x = pb::ExceptionResponse {
            exception_class_name: Some(
                "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException".into(),
            ),
            ..Default::default()
        };
        assert_eq!(error_from_exception(&x).0.kind(), ErrorKind::UnknownScanner);
    }
}
