//! HBase's Thrift gateways on a [`Connection`]: the Thrift1 `Hbase` service (happybase
//! and most non-JVM clients) and, with `thrift2`, the Thrift2 `THBaseService`, served
//! by `cellar server --thrift` beside the RPC port or by `cellar thrift --connect` as a
//! process of its own, as HBase's ThriftServer. The wire (buffered or framed, binary or
//! compact) is `cellar-thrift`'s; here each method maps onto the client API.

mod hbase1;
mod hbase1_data;
mod hbase2;
mod hbase2_admin;
mod hbase2_types;
mod scanners;

use std::sync::Arc;
use std::time::Duration;

use cellar_api::{ErrorKind, Result};
use cellar_thrift::{ApplicationErrorKind, Gateway, Reply, ServerConfig, Struct, Value};

use crate::client::Connection;

pub use scanners::Scanners;

/// HBase's Thrift port.
pub const DEFAULT_PORT: u16 = 9090;

/// Where and how the gateway serves.
#[derive(Debug, Clone)]
pub struct ThriftOptions {
    pub bind: String,
    pub port: u16,
    /// Serve Thrift2's `THBaseService` instead of Thrift1's `Hbase`.
    pub thrift2: bool,
    pub server: ServerConfig,
    /// Idle scanners are closed after this long (`hbase.client.scanner.timeout.period`).
    pub scanner_timeout: Duration,
    /// Answered by `getClusterId`.
    pub cluster_id: String,
}

impl ThriftOptions {
    /// Options from a configuration's `hbase.regionserver.thrift.*` keys.
    pub fn from_config(
        cfg: &cellar_region::Config,
        bind: &str,
        port: u16,
        thrift2: bool,
    ) -> ThriftOptions {
        ThriftOptions {
            bind: bind.to_string(),
            port,
            thrift2,
            server: ServerConfig {
                max_frame: usize::try_from(cfg.thrift_max_frame_mb.saturating_mul(1024 * 1024))
                    .unwrap_or(usize::MAX),
                max_workers: cfg.thrift_max_workers,
                read_timeout: Some(Duration::from_millis(cfg.thrift_read_timeout_ms)),
            },
            scanner_timeout: Duration::from_millis(cfg.scanner_timeout_ms),
            cluster_id: String::new(),
        }
    }
}

/// Starts the gateway for `conn`.
pub fn start(conn: Arc<dyn Connection>, opts: &ThriftOptions) -> Result<Gateway> {
    let scanners = Arc::new(Scanners::new(opts.scanner_timeout));
    expire_in_background(&scanners);
    let service: Arc<dyn cellar_thrift::Service> = if opts.thrift2 {
        Arc::new(hbase2::ThriftTwo::new(conn, scanners))
    } else {
        Arc::new(hbase1::ThriftOne::new(
            conn,
            scanners,
            opts.cluster_id.clone(),
        ))
    };
    let bind = format!("{}:{}", opts.bind, opts.port);
    let gw = Gateway::start(&bind, service, opts.server.clone()).map_err(|e| {
        cellar_api::Error::new(ErrorKind::Io, format!("cannot serve Thrift on {bind}: {e}"))
    })?;
    tracing::info!(
        addr = %gw.addr(),
        service = if opts.thrift2 { "thrift2" } else { "thrift" },
        "thrift gateway listening"
    );
    Ok(gw)
}

/// Closes idle scanners once a second while the gateway's service lives (calls also
/// expire them as they come).
fn expire_in_background(scanners: &Arc<Scanners>) {
    let weak = Arc::downgrade(scanners);
    // The gateway is a network service with real time, not engine code.
    #[allow(clippy::disallowed_methods)]
    let spawned = std::thread::Builder::new()
        .name("cellar-thrift-leases".into())
        .spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            match weak.upgrade() {
                Some(s) => {
                    let n = s.expire();
                    if n > 0 {
                        tracing::debug!(scanners = n, "closed thrift scanners whose lease expired");
                    }
                }
                None => break,
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the thrift scanner reaper: {e}");
    }
}

/// Why a call failed, before it is cast in the method's declared exceptions.
#[derive(Debug)]
pub(crate) enum Fault {
    /// HBase's IOError / TIOError: the message and whether a retry may help.
    Io(String, bool),
    /// A failure of the store, worded by the service.
    Api(cellar_api::Error),
    /// IllegalArgument: the request itself is wrong.
    Illegal(String),
    /// AlreadyExists (Thrift1's createTable).
    Exists(String),
    /// A TApplicationException, as HBase's handlers throw a bare TException.
    App(ApplicationErrorKind, String),
}

impl From<cellar_api::Error> for Fault {
    fn from(e: cellar_api::Error) -> Fault {
        match e.kind() {
            ErrorKind::InvalidRequest => Fault::Illegal(e.message().to_string()),
            ErrorKind::TableExists => Fault::Exists(java_message(&e)),
            _ => Fault::Api(e),
        }
    }
}

/// `class: message` as a Java exception prints, without the short class name the
/// message may already start with.
fn java_message(e: &cellar_api::Error) -> String {
    let class = e.exception_class();
    let short = class.rsplit('.').next().unwrap_or(class);
    let m = e.message();
    let m = m
        .strip_prefix(short)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or(m);
    format!("{class}: {m}")
}

/// A failure as HBase's thrift2 handler words it: the Java exception's message, which
/// names its class when the exception came from a server, and not when HBase's client
/// raised it itself (an unknown table, a disabled one).
fn thrift2_message(e: &cellar_api::Error) -> String {
    match (e.kind(), e.table()) {
        (ErrorKind::TableNotFound, Some(t)) => t.to_string(),
        (ErrorKind::TableNotEnabled, Some(t)) => format!("{t} is disabled."),
        _ => java_message(e),
    }
}

/// The failures of a batch of mutations, as HBase's client reports a `Table.put(List)`
/// or `Table.delete(List)` that failed: one RetriesExhaustedWithDetailsException
/// counting the failed actions and naming their causes.
pub(crate) fn batch_fault(
    results: Vec<Result<cellar_api::RowResult>>,
) -> std::result::Result<(), Fault> {
    let failed: Vec<cellar_api::Error> = results.into_iter().filter_map(|r| r.err()).collect();
    let Some(first) = failed.first() else {
        return Ok(());
    };
    let n = failed.len();
    Err(Fault::Io(
        format!(
            "org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException: Failed {n} action{}: {}",
            if n == 1 { "" } else { "s" },
            java_message(first)
        ),
        !first.kind().do_not_retry(),
    ))
}

pub(crate) type Outcome = std::result::Result<Option<Value>, Fault>;

/// Which exceptions a method declares, by their field ids in its result struct.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Throws {
    /// IllegalArgument / TIllegalArgument at field 2.
    pub illegal: bool,
    /// AlreadyExists at field 3.
    pub exists: bool,
}

/// [`finish`] for Thrift2: exception messages without their class.
pub(crate) fn finish2(outcome: Outcome, throws: Throws) -> Reply {
    let outcome = outcome.map_err(|f| match f {
        Fault::Api(e) => Fault::Io(thrift2_message(&e), !e.kind().do_not_retry()),
        Fault::Exists(m) => Fault::Io(m, false),
        other => other,
    });
    finish(outcome, throws)
}

pub(crate) const IO_ONLY: Throws = Throws {
    illegal: false,
    exists: false,
};
pub(crate) const IO_IA: Throws = Throws {
    illegal: true,
    exists: false,
};

fn io_struct(message: String, can_retry: bool) -> Struct {
    Struct::new()
        .with(1, Value::string(message))
        .with(2, Value::Bool(can_retry))
}

/// The reply for `outcome` as a method declaring `throws` gives it: a fault the
/// method cannot declare becomes an IOError naming what it is.
pub(crate) fn finish(outcome: Outcome, throws: Throws) -> Reply {
    let s = match outcome {
        Ok(Some(v)) => Struct::new().with(0, v),
        Ok(None) => Struct::new(),
        Err(Fault::Io(m, retry)) => Struct::new().with(1, Value::Struct(io_struct(m, retry))),
        Err(Fault::Api(e)) => Struct::new().with(
            1,
            Value::Struct(io_struct(java_message(&e), !e.kind().do_not_retry())),
        ),
        Err(Fault::Illegal(m)) if throws.illegal => {
            Struct::new().with(2, Value::Struct(Struct::new().with(1, Value::string(m))))
        }
        Err(Fault::Illegal(m)) => Struct::new().with(
            1,
            Value::Struct(io_struct(
                format!("java.lang.IllegalArgumentException: {m}"),
                false,
            )),
        ),
        Err(Fault::Exists(m)) if throws.exists => {
            Struct::new().with(3, Value::Struct(Struct::new().with(1, Value::string(m))))
        }
        Err(Fault::Exists(m)) => Struct::new().with(1, Value::Struct(io_struct(m, false))),
        Err(Fault::App(kind, m)) => return Reply::Application(kind, m),
    };
    Reply::Result(s)
}

/// A binary argument as a table name.
pub(crate) fn table_name(b: Option<&[u8]>) -> std::result::Result<String, Fault> {
    match b {
        Some(b) if !b.is_empty() => Ok(String::from_utf8_lossy(b).into_owned()),
        _ => Err(Fault::Illegal("a table name is required".into())),
    }
}

/// HBase's `CellUtil.parseColumn`: `family` alone, or `family:qualifier` (a trailing
/// colon is the empty qualifier).
pub(crate) fn parse_column(c: &[u8]) -> (Vec<u8>, Option<Vec<u8>>) {
    match c.iter().position(|&b| b == b':') {
        None => (c.to_vec(), None),
        Some(i) => (c[..i].to_vec(), Some(c[i + 1..].to_vec())),
    }
}

/// `family:qualifier`.
pub(crate) fn make_column(family: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut c = Vec::with_capacity(family.len() + 1 + qualifier.len());
    c.extend_from_slice(family);
    c.push(b':');
    c.extend_from_slice(qualifier);
    c
}

/// Parses a filter string (HBase's filter language) or names what is wrong with it.
pub(crate) fn parse_filter(text: &[u8]) -> std::result::Result<cellar_api::FilterSpec, Fault> {
    cellar_region::parse_filter_bytes(text)
        .map_err(|e| Fault::Illegal(format!("filter string does not parse: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_parse_as_hbase_does() {
        assert_eq!(parse_column(b"cf"), (b"cf".to_vec(), None));
        assert_eq!(parse_column(b"cf:"), (b"cf".to_vec(), Some(vec![])));
        assert_eq!(
            parse_column(b"cf:a:b"),
            (b"cf".to_vec(), Some(b"a:b".to_vec()))
        );
        assert_eq!(make_column(b"cf", b"q"), b"cf:q".to_vec());
    }

    #[test]
    fn faults_fit_the_declared_exceptions() {
        let Reply::Result(s) = finish(Err(Fault::Illegal("bad".into())), IO_ONLY) else {
            panic!("not a result")
        };
        let io = s.strukt(1).unwrap();
        assert!(io
            .text(1)
            .unwrap()
            .contains("IllegalArgumentException: bad"));
        let Reply::Result(s) = finish(Err(Fault::Illegal("bad".into())), IO_IA) else {
            panic!("not a result")
        };
        assert_eq!(s.strukt(2).unwrap().text(1).as_deref(), Some("bad"));
        let Reply::Result(s) = finish(Ok(Some(Value::I64(3))), IO_ONLY) else {
            panic!("not a result")
        };
        assert_eq!(s.i64(0), Some(3));
    }
}
