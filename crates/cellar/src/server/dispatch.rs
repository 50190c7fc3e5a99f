//! One call, from its decoded frame to its response frame: which service and method
//! it names, the handler that answers it, and how a failure becomes HBase's exception
//! response (class name, message as stack-trace text, `do_not_retry`).

use cellar_api::{Error, ErrorKind};
use cellar_protocol::cell_block::{BlockReader, Codec};
use cellar_protocol::convert::error_to_exception;
use cellar_protocol::frame::{EncodeDelimited, Request, Response};
use cellar_protocol::service;
use prost::Message;

use super::context::Context;
use super::{admin_service, client_service, master_service, meta_service, scan};

/// A handler's answer: the response message and the cell block that follows it.
pub struct Reply {
    pub msg: Box<dyn EncodeDelimited>,
    pub cells: Vec<u8>,
}

impl Reply {
    pub fn new(msg: impl Message + 'static) -> Reply {
        Reply {
            msg: Box::new(msg),
            cells: Vec::new(),
        }
    }

    pub fn with_cells(msg: impl Message + 'static, cells: Vec<u8>) -> Reply {
        Reply {
            msg: Box::new(msg),
            cells,
        }
    }
}

/// A failed call: the error, and the Java class to report when it is not the kind's
/// own (OutOfOrderScannerNextException, CallQueueTooBigException, ...).
#[derive(Debug)]
pub struct CallError {
    pub error: Error,
    pub class: Option<&'static str>,
    pub do_not_retry: Option<bool>,
}

impl CallError {
    pub fn with_class(error: Error, class: &'static str, do_not_retry: bool) -> CallError {
        CallError {
            error,
            class: Some(class),
            do_not_retry: Some(do_not_retry),
        }
    }
}

impl<E: Into<Error>> From<E> for CallError {
    fn from(e: E) -> Self {
        CallError {
            error: e.into(),
            class: None,
            do_not_retry: None,
        }
    }
}

pub type CallResult = Result<Reply, CallError>;

/// The connection a call came on.
pub struct ConnInfo {
    pub id: u64,
    pub service: String,
    pub codec: Option<Codec>,
}

/// What a handler gets.
pub struct Call<'a> {
    pub ctx: &'a Context,
    pub conn: &'a ConnInfo,
    pub req: &'a Request,
}

impl Call<'_> {
    pub fn param<M: Message + Default>(&self, what: &'static str) -> Result<M, CallError> {
        Ok(self.req.param(what)?)
    }

    /// A reader over the request's cell block.
    pub fn cells(&self) -> Result<Option<BlockReader>, CallError> {
        if self.req.cell_block.is_empty() {
            return Ok(None);
        }
        let codec = self.conn.codec.ok_or_else(|| {
            Error::invalid("a cell block was sent on a connection that negotiated no codec")
        })?;
        Ok(Some(BlockReader::new(codec, self.req.cell_block.clone())))
    }

    pub fn master(&self) -> &crate::master::Master {
        self.ctx.db.master()
    }
}

/// HBase's `hbase.ipc.warn.response.time` and `.size` defaults: calls slower or larger
/// than this are logged.
const SLOW_CALL: std::time::Duration = std::time::Duration::from_secs(10);
const LARGE_RESPONSE: usize = 100 * 1024 * 1024;

/// The region (and row) a client call names, for logs.
fn region_of(req: &Request) -> String {
    let name = |spec: &cellar_protocol::pb::RegionSpecifier| {
        String::from_utf8_lossy(&spec.value).into_owned()
    };
    match req.header.method_name.as_deref() {
        Some("Get") => req
            .param::<cellar_protocol::pb::GetRequest>("GetRequest")
            .map(|g| {
                format!(
                    "{} row={}",
                    name(&g.region),
                    cellar_types::to_string_binary(&g.get.row)
                )
            })
            .unwrap_or_default(),
        Some("Mutate") => req
            .param::<cellar_protocol::pb::MutateRequest>("MutateRequest")
            .map(|m| {
                let row = m.mutation.row.as_deref().unwrap_or_default();
                format!(
                    "{} row={}",
                    name(&m.region),
                    cellar_types::to_string_binary(row)
                )
            })
            .unwrap_or_default(),
        Some("Scan") => req
            .param::<cellar_protocol::pb::ScanRequest>("ScanRequest")
            .ok()
            .and_then(|s| s.region.map(|r| name(&r)))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

pub const UNKNOWN_SERVICE: &str = "org.apache.hadoop.hbase.ipc.UnknownServiceException";
const UNSUPPORTED: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";

/// Answers a call; returns the response frame.
pub fn answer(ctx: &Context, conn: &ConnInfo, req: &Request) -> Vec<u8> {
    let call_id = req.header.call_id.unwrap_or(0);
    let method = req.header.method_name.clone().unwrap_or_default();
    let call = Call { ctx, conn, req };
    let short = conn.service.rsplit('.').next().unwrap_or(&conn.service);
    let clock = ctx.db.region_server().clock();
    let started = clock.monotonic();
    let result = match short {
        service::CLIENT => match method.as_str() {
            "Scan" => scan::scan(&call),
            _ => client_service::call(&call, &method),
        },
        service::MASTER => master_service::call(&call, &method),
        service::ADMIN => admin_service::call(&call, &method),
        service::CLIENT_META => meta_service::call(&call, &method),
        _ => Err(CallError::with_class(
            Error::new(
                ErrorKind::Unsupported,
                format!("Unknown service {}", conn.service),
            ),
            UNKNOWN_SERVICE,
            true,
        )),
    };
    let took = clock.monotonic().saturating_sub(started);
    if short == service::CLIENT {
        if let Some(h) = ctx.latency.for_method(&method) {
            h.record(took);
        }
    }
    if took >= SLOW_CALL {
        tracing::warn!(service = short, %method, took_ms = took.as_millis() as u64, region = %region_of(req), "slow call");
    }
    match result {
        Ok(reply) => {
            if reply.cells.len() >= LARGE_RESPONSE {
                tracing::warn!(service = short, %method, bytes = reply.cells.len(), region = %region_of(req), "large response");
            }
            Response::encode_ok(call_id, reply.msg.as_ref(), &reply.cells)
        }
        Err(e) => {
            if e.error.kind() == ErrorKind::Io || e.error.kind() == ErrorKind::Corrupt {
                tracing::warn!(service = %conn.service, %method, "call failed: {}", e.error.message());
            }
            Response::encode_error(
                call_id,
                error_to_exception(&e.error, e.class, e.do_not_retry),
            )
        }
    }
}

/// The error for a method a service does not have.
pub fn unknown_method(service: &str, method: &str) -> CallError {
    CallError::with_class(
        Error::new(
            ErrorKind::Unsupported,
            format!("Unknown method {method} called on service {service}"),
        ),
        UNSUPPORTED,
        true,
    )
}

/// An exception frame for a call that never reached a handler.
pub fn reject(call_id: u32, error: Error, class: &'static str, do_not_retry: bool) -> Vec<u8> {
    Response::encode_error(
        call_id,
        error_to_exception(&error, Some(class), Some(do_not_retry)),
    )
}
