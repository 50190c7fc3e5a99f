#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // waits for a real process in real time
//! A real ZooKeeper for a test (Debian's `zookeeper` package, started from its jar on a
//! free port with a temporary data directory), stopped when dropped.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const JAR: &str = "/usr/share/java/zookeeper.jar";

pub struct ZooKeeper {
    child: Child,
    pub quorum: String,
    _dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

fn ruok(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"ruok").is_err() {
        return false;
    }
    let mut buf = [0u8; 4];
    s.read_exact(&mut buf).is_ok() && &buf == b"imok"
}

impl ZooKeeper {
    /// Whether the ZooKeeper jar is installed.
    pub fn available() -> bool {
        Path::new(JAR).exists()
    }

    pub fn start() -> ZooKeeper {
        let dir = tempfile::tempdir().expect("zk dir");
        let port = free_port();
        let cfg = dir.path().join("zoo.cfg");
        std::fs::write(
            &cfg,
            format!(
                "tickTime=500\ndataDir={}\nclientPort={port}\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\n",
                dir.path().join("data").display()
            ),
        )
        .expect("zoo.cfg");
        let child = Command::new("java")
            .args(["-Xmx128m", "-cp", &format!("/etc/zookeeper/conf:{JAR}")])
            .arg("org.apache.zookeeper.server.quorum.QuorumPeerMain")
            .arg(&cfg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start ZooKeeper");
        let zk = ZooKeeper {
            child,
            quorum: format!("127.0.0.1:{port}"),
            _dir: dir,
        };
        for _ in 0..200 {
            if ruok(port) {
                return zk;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("ZooKeeper did not start on port {port}");
    }
}

impl Drop for ZooKeeper {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
