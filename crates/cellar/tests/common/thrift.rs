#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]
//! A Thrift client for tests, on the `thrift` crate's protocols and Cellar's dynamic
//! values: any method of any service, buffered or framed, binary or compact.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use cellar_thrift::{Struct, Value};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TInputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol,
};

pub struct Client {
    pub stream: TcpStream,
    pub framed: bool,
    pub compact: bool,
    seq: i32,
}

/// What a call answered.
#[derive(Debug)]
pub enum Answer {
    /// The result struct (field 0 success, or an exception field).
    Result(Struct),
    /// A TApplicationException: its type and message.
    Application(i32, String),
}

impl Answer {
    pub fn result(self) -> Struct {
        match self {
            Answer::Result(s) => s,
            Answer::Application(t, m) => panic!("application exception {t}: {m}"),
        }
    }

    /// The success value, panicking on an exception.
    pub fn ok(self) -> Option<Value> {
        let s = self.result();
        if let Some((id, v)) = s.fields.iter().find(|(id, _)| *id != 0) {
            panic!("exception field {id}: {v:?}");
        }
        s.get(0).cloned()
    }

    /// The message of the exception in field `id`.
    pub fn exception(self, id: i16) -> String {
        let s = self.result();
        match s.strukt(id) {
            Some(e) => e.text(1).unwrap_or_default(),
            None => panic!("no exception in field {id}: {s:?}"),
        }
    }
}

impl Client {
    pub fn connect(addr: &str, framed: bool, compact: bool) -> Client {
        let stream = TcpStream::connect(addr).expect("connect to the thrift gateway");
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        Client {
            stream,
            framed,
            compact,
            seq: 0,
        }
    }

    fn encode(&self, f: impl FnOnce(&mut dyn TOutputProtocol)) -> Vec<u8> {
        let mut buf = Vec::new();
        if self.compact {
            f(&mut TCompactOutputProtocol::new(&mut buf));
        } else {
            f(&mut TBinaryOutputProtocol::new(&mut buf, true));
        }
        buf
    }

    /// Sends raw bytes (framed when the client is).
    pub fn send_raw(&mut self, body: &[u8]) -> std::io::Result<()> {
        if self.framed {
            self.stream.write_all(&(body.len() as u32).to_be_bytes())?;
        }
        self.stream.write_all(body)
    }

    pub fn call(&mut self, method: &str, args: Struct) -> Answer {
        self.try_call(method, args).expect("thrift call")
    }

    pub fn try_call(&mut self, method: &str, args: Struct) -> thrift::Result<Answer> {
        self.seq += 1;
        let seq = self.seq;
        let body = self.encode(|p| {
            p.write_message_begin(&TMessageIdentifier::new(method, TMessageType::Call, seq))
                .unwrap();
            args.write(p).unwrap();
            p.write_message_end().unwrap();
        });
        self.send_raw(&body)?;
        let mut frame = Vec::new();
        let reader: Box<dyn Read> = if self.framed {
            let mut len = [0u8; 4];
            self.stream.read_exact(&mut len)?;
            frame.resize(u32::from_be_bytes(len) as usize, 0);
            self.stream.read_exact(&mut frame)?;
            Box::new(&frame[..])
        } else {
            Box::new(self.stream.try_clone()?)
        };
        let mut p: Box<dyn TInputProtocol> = if self.compact {
            Box::new(TCompactInputProtocol::new(reader))
        } else {
            Box::new(TBinaryInputProtocol::new(reader, true))
        };
        let id = p.read_message_begin()?;
        assert_eq!(id.sequence_number, seq, "reply to another call");
        assert_eq!(id.name, method);
        let s = Struct::read(p.as_mut())?;
        p.read_message_end()?;
        Ok(match id.message_type {
            TMessageType::Exception => {
                Answer::Application(s.i32(2).unwrap_or(0), s.text(1).unwrap_or_default())
            }
            _ => Answer::Result(s),
        })
    }
}

/// Shorthands for building arguments.
pub fn b(s: &str) -> Value {
    Value::binary(s.as_bytes().to_vec())
}

pub fn args() -> Struct {
    Struct::new()
}

/// A Thrift2 TTableName in the default namespace.
pub fn tname(q: &str) -> Value {
    Value::Struct(Struct::new().with(1, b("default")).with(2, b(q)))
}

/// A Thrift2 TColumnValue.
pub fn col_value(f: &str, q: &str, v: &str, ts: Option<i64>) -> Struct {
    Struct::new()
        .with(1, b(f))
        .with(2, b(q))
        .with(3, b(v))
        .with_opt(4, ts.map(Value::I64))
}

/// A Thrift2 TPut.
pub fn tput(row: &str, cells: Vec<Struct>) -> Value {
    Value::Struct(Struct::new().with(1, b(row)).with(2, Value::structs(cells)))
}

/// `cellar thrift --connect SERVER` as a process of its own, on a free port; killed
/// when dropped.
pub struct GatewayProcess {
    child: std::process::Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl GatewayProcess {
    #[allow(clippy::disallowed_methods)] // a real process, waited for in real time
    pub fn start(server: &str, thrift2: bool) -> GatewayProcess {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"));
        cmd.args(["thrift", "--connect", server, "--port", &port.to_string()]);
        if thrift2 {
            cmd.arg("--thrift2");
        }
        let child = cmd
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start cellar thrift");
        let gw = GatewayProcess {
            child,
            addr: format!("127.0.0.1:{port}"),
        };
        let started = std::time::Instant::now();
        while TcpStream::connect(&gw.addr).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "cellar thrift did not listen"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        gw
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
