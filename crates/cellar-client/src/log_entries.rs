//! The region servers' slow and large response logs, as HBase's Admin reads them
//! (`getLogEntries`): AdminService GetLogEntries on every live server, the request and
//! the answer wrapped in LogRequest / LogEntry.

use cellar_api::{Error, ErrorKind, Result};
use cellar_protocol::convert::server_name_from_pb;
use cellar_protocol::pb;
use prost::Message;

use crate::admin::Admin;

const REQUEST_CLASS: &str =
    "org.apache.hadoop.hbase.shaded.protobuf.generated.AdminProtos$SlowLogResponseRequest";

/// One logged call, as a server reported it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// The server that logged it (`host:port`).
    pub server: String,
    pub start_time: i64,
    pub processing_ms: i32,
    pub response_size: i64,
    pub method: String,
    pub call_details: String,
    pub param: String,
    pub region: String,
    /// `SLOW_LOG`, `LARGE_LOG` or `ALL`.
    pub kind: String,
}

/// What a server reports of its hot rows and unread versions.
pub type Hotspots = pb::CellarHotspots;

impl Admin {
    /// Asks every live server's GetLogEntries with `req` and decodes each answer as `T`
    /// (`what` names it in errors); answers paired with the server (`host:port`).
    async fn every_server_log<T: Message + Default>(
        &self,
        req: &pb::LogRequest,
        what: &str,
    ) -> Result<Vec<(String, T)>> {
        let status: pb::GetClusterStatusResponse = self
            .conn()
            .master("GetClusterStatus", &pb::GetClusterStatusRequest::default())
            .await?;
        let mut out = Vec::new();
        for s in &status.cluster_status.live_servers {
            let server = server_name_from_pb(&s.server).address();
            let entry: pb::LogEntry = self
                .conn()
                .admin_call(&server, "GetLogEntries", req)
                .await?;
            let answer = T::decode(entry.log_message.as_ref()).map_err(|e| {
                Error::new(ErrorKind::Corrupt, format!("{server}: a bad {what}: {e}"))
            })?;
            out.push((server, answer));
        }
        Ok(out)
    }

    /// Every live server's hot rows and families keeping versions no read asks for
    /// (Cellar's `cellar.Hotspots` log over GetLogEntries), of `table` alone when given.
    pub async fn hotspots(&self, table: Option<&str>) -> Result<Hotspots> {
        let req = pb::LogRequest {
            log_class_name: "cellar.Hotspots".into(),
            log_message: pb::CellarHotspotsRequest {
                table_name: table.map(str::to_string),
            }
            .encode_to_vec()
            .into(),
        };
        let mut all = Hotspots::default();
        for (_, h) in self
            .every_server_log::<Hotspots>(&req, "CellarHotspots")
            .await?
        {
            all.hot_rows.extend(h.hot_rows);
            all.versions.extend(h.versions);
        }
        Ok(all)
    }

    /// The large (`large`) or slow calls every live server logged, at most `limit` of
    /// each server's, of `table` alone when given.
    pub async fn log_entries(
        &self,
        large: bool,
        limit: u32,
        table: Option<&str>,
    ) -> Result<Vec<LogRecord>> {
        use pb::slow_log_response_request::LogType;
        let inner = pb::SlowLogResponseRequest {
            table_name: table.map(str::to_string),
            limit: Some(limit),
            log_type: Some(if large {
                LogType::LargeLog
            } else {
                LogType::SlowLog
            } as i32),
            ..Default::default()
        };
        let req = pb::LogRequest {
            log_class_name: REQUEST_CLASS.into(),
            log_message: inner.encode_to_vec().into(),
        };
        let mut out = Vec::new();
        let answers = self
            .every_server_log::<pb::SlowLogResponses>(&req, "SlowLogResponses")
            .await?;
        for (server, responses) in answers {
            for p in responses.slow_log_payloads {
                use pb::slow_log_payload::Type;
                out.push(LogRecord {
                    server: server.clone(),
                    start_time: p.start_time,
                    processing_ms: p.processing_time,
                    response_size: p.response_size,
                    method: p.method_name,
                    call_details: p.call_details,
                    param: p.param.unwrap_or_default(),
                    region: p.region_name.unwrap_or_default(),
                    kind: match Type::try_from(p.r#type) {
                        Ok(Type::LargeLog) => "LARGE_LOG",
                        Ok(Type::All) => "ALL",
                        _ => "SLOW_LOG",
                    }
                    .into(),
                });
            }
        }
        out.sort_by_key(|r| std::cmp::Reverse(r.start_time));
        Ok(out)
    }
}
