//! Server names, as HBase's `ServerName`: host, port and start code, printed
//! `host,port,startcode`.

use std::fmt;

use crate::error::{Error, Result};

/// One server process: where it listens and when it started (ms), which tells a
/// restarted server from its predecessor on the same address.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ServerName {
    pub host: String,
    pub port: u16,
    pub start_code: i64,
}

impl ServerName {
    pub fn new(host: impl Into<String>, port: u16, start_code: i64) -> ServerName {
        ServerName {
            host: host.into(),
            port,
            start_code,
        }
    }

    /// Parses `host,port,startcode`.
    pub fn parse(s: &str) -> Result<ServerName> {
        let bad = || Error::invalid(format!("'{s}' is not a server name (host,port,startcode)"));
        let mut parts = s.split(',');
        let (Some(host), Some(port), Some(code), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(bad());
        };
        if host.is_empty() {
            return Err(bad());
        }
        Ok(ServerName {
            host: host.to_string(),
            port: port.parse().map_err(|_| bad())?,
            start_code: code.parse().map_err(|_| bad())?,
        })
    }

    /// `host:port`.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Display for ServerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{},{}", self.host, self.port, self.start_code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let s = ServerName::new("localhost", 16020, 1700000000000);
        assert_eq!(s.to_string(), "localhost,16020,1700000000000");
        assert_eq!(ServerName::parse(&s.to_string()).unwrap(), s);
        assert_eq!(s.address(), "localhost:16020");
        for bad in ["", "h", "h,1", "h,x,1", ",1,1", "h,1,1,1"] {
            assert!(ServerName::parse(bad).is_err(), "{bad}");
        }
    }
}
