#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Starts a real `cellar server` process on a free port for a test, and stops it
//! gracefully (SIGTERM) or kills it (SIGKILL).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct ServerProcess {
    child: Child,
    pub addr: String,
    /// The status page and /metrics (`host:port`).
    pub info: Option<String>,
    pub dir: PathBuf,
    /// Lines the server logged after it started.
    pub log: mpsc::Receiver<String>,
    /// The Thrift gateway (`host:port`), when started with `--thrift` / `--thrift2`.
    pub thrift: Option<String>,
    /// The Bigtable gateway (`host:port`), when started with `--bigtable`.
    pub bigtable: Option<String>,
}

impl ServerProcess {
    /// Starts a server on `dir` with extra arguments, waiting until it listens.
    pub fn start_with(dir: &Path, extra: &[&str]) -> ServerProcess {
        // A long soak can run a copy of the binary while the tree is rebuilt.
        let binary = std::env::var_os("CELLAR_TEST_BINARY")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_cellar")));
        let mut child = Command::new(binary)
            .arg("server")
            .arg(dir)
            .args(["--port", "0", "--info-port", "0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start cellar server");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = mpsc::channel();
        let (addr_tx, addr_rx) = mpsc::channel();
        let (thrift_tx, thrift_rx) = mpsc::channel();
        let (bt_tx, bt_rx) = mpsc::channel();
        // A real process needs a real thread reading its log.
        let echo = std::env::var_os("CELLAR_TEST_SERVER_LOG").is_some();
        #[allow(clippy::disallowed_methods)]
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent {
                    if let Some(a) = line.strip_prefix("cellar server listening on ") {
                        let _ = addr_tx.send(a.trim().to_string());
                        sent = true;
                        continue;
                    }
                }
                if let Some(a) = line.strip_prefix("thrift gateway listening on ") {
                    let _ = thrift_tx.send(a.trim().to_string());
                    continue;
                }
                if let Some(a) = line.strip_prefix("bigtable gateway listening on ") {
                    let _ = bt_tx.send(a.trim().to_string());
                    continue;
                }
                if echo {
                    eprintln!("[cellar server] {line}");
                }
                let _ = tx.send(line);
            }
        });
        let line = match addr_rx.recv_timeout(Duration::from_secs(60)) {
            Ok(a) => a,
            Err(_) => {
                let _ = child.kill();
                let logs: Vec<String> = rx.try_iter().collect();
                panic!("server did not start: {logs:?}");
            }
        };
        let addr = line
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        let info = line
            .split("http://")
            .nth(1)
            .map(|s| s.trim_end_matches(&['/', ')'][..]).to_string());
        let thrift = extra
            .iter()
            .any(|a| *a == "--thrift" || *a == "--thrift2")
            .then(|| {
                thrift_rx
                    .recv_timeout(Duration::from_secs(30))
                    .expect("thrift gateway address")
            });
        let bigtable = extra.contains(&"--bigtable").then(|| {
            bt_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("bigtable gateway address")
        });
        ServerProcess {
            child,
            addr,
            info,
            dir: dir.to_path_buf(),
            log: rx,
            thrift,
            bigtable,
        }
    }

    pub fn start(dir: &Path) -> ServerProcess {
        ServerProcess::start_with(dir, &[])
    }

    /// SIGTERM, then the exit status code.
    pub fn stop(mut self) -> Option<i32> {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let status = self.child.wait().expect("wait for server");
        status.code()
    }

    /// SIGKILL: no chance to flush.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `cellar shell` with `args` (a database directory, or `--connect host:port`) on
/// `script`; its standard output.
pub fn run_shell(args: &[&str], script: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_cellar"))
        .arg("shell")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start cellar shell");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write the script");
    String::from_utf8(child.wait_with_output().expect("shell output").stdout).expect("utf-8")
}

/// A plain HTTP GET of `path` on `addr`: the whole response, head and body.
pub fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").expect("request");
    let mut out = String::new();
    s.read_to_string(&mut out).expect("response");
    out
}
