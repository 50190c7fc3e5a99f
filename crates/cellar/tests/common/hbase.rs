#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // waits for a real process in real time
//! A real HBase 2.6 for a test: `HMaster start` in standalone mode (master, region
//! server and an embedded ZooKeeper in one JVM), from the class path Maven resolved
//! in `compat/hbase` (`mvn -f compat/hbase/pom.xml package`), on Java 17 with the
//! `--add-opens` flags HBase needs there, `hbase.rootdir` in a temporary directory,
//! every port chosen per run. Stopped (killed) when dropped; its log is printed when
//! it does not come up and copied to `target/test-artifacts/hbase-PID.log`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use cellar::client::{Connection, RemoteConnection};

/// What HBase 2.6 on Java 17 needs opened (HBase's own start script passes these).
const JAVA17_FLAGS: &[&str] = &[
    "--add-opens=java.base/java.lang=ALL-UNNAMED",
    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens=java.base/java.util=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "-Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true",
];

/// How long HBase may take to serve (it usually needs 10–20 s here).
const START_TIMEOUT: Duration = Duration::from_secs(120);

pub struct HBase {
    child: Child,
    /// The embedded ZooKeeper, `127.0.0.1:PORT`: how clients find this HBase.
    pub quorum: String,
    pub dir: tempfile::TempDir,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// HBase's server class path, when the Maven module has been resolved.
pub fn classpath() -> Option<String> {
    let cp = std::fs::read_to_string(root().join("compat/hbase/target/classpath.txt")).ok()?;
    let cp = cp.trim();
    (!cp.is_empty()).then(|| cp.to_string())
}

/// Whether the compatibility tests must run (`.ci/run` sets CELLAR_REQUIRE_COMPAT=1):
/// without it, a test whose HBase artifacts are missing is skipped.
pub fn required() -> bool {
    std::env::var("CELLAR_REQUIRE_COMPAT").is_ok_and(|v| v == "1")
}

/// The class path of the oracle's own programs (`compat/hbase/src/main/java`, on
/// HBase's code), or `None` (after saying so) when the module is not built.
pub fn oracle_classpath() -> Option<String> {
    let classes = root().join("compat/hbase/target/classes/cellar/oracle");
    match classpath() {
        Some(cp) if classes.is_dir() => Some(format!(
            "{}:{cp}",
            root().join("compat/hbase/target/classes").display()
        )),
        _ => {
            assert!(
                !required(),
                "compat/hbase is not built (mvn -f compat/hbase/pom.xml package) and CELLAR_REQUIRE_COMPAT=1"
            );
            eprintln!("skipped: compat/hbase is not built (mvn -f compat/hbase/pom.xml package)");
            None
        }
    }
}

/// Runs one of the oracle's programs (`cellar.oracle.NAME`) to completion: (exit
/// code, standard output, standard error).
pub fn run_oracle(cp: &str, name: &str, args: &[&str]) -> (i32, String, String) {
    run_class(cp, &format!("cellar.oracle.{name}"), args)
}

/// Runs the `main` of any class on the oracle's class path (HBase's own tools).
pub fn run_class(cp: &str, class: &str, args: &[&str]) -> (i32, String, String) {
    let out = Command::new("java")
        .arg("-Xmx512m")
        .args(JAVA17_FLAGS)
        .arg(format!(
            "-Dlog4j.configuration=file:{}",
            root().join("compat/hbase/log4j.properties").display()
        ))
        .arg("-cp")
        .arg(cp)
        .arg(class)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("start java");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn site(dir: &Path, zk: u16, master: u16, rs: u16) -> String {
    let props = [
        ("hbase.cluster.distributed", "false".to_string()),
        (
            "hbase.rootdir",
            format!("file://{}", dir.join("root").display()),
        ),
        ("hbase.tmp.dir", dir.join("tmp").display().to_string()),
        (
            "hbase.zookeeper.property.dataDir",
            dir.join("zk").display().to_string(),
        ),
        ("hbase.zookeeper.quorum", "127.0.0.1".to_string()),
        ("hbase.zookeeper.property.clientPort", zk.to_string()),
        ("hbase.master.port", master.to_string()),
        ("hbase.regionserver.port", rs.to_string()),
        ("hbase.master.info.port", "-1".to_string()),
        ("hbase.regionserver.info.port", "-1".to_string()),
        (
            "hbase.unsafe.stream.capability.enforce",
            "false".to_string(),
        ),
        // Compacted files leave the store at once, as Cellar's do: HBase counts them
        // (references among them) against splitting and merging until its discharger
        // runs, every two minutes by default.
        (
            "hbase.hfile.compaction.discharger.interval",
            "100".to_string(),
        ),
        // Region loads reach the master at once after regions open (list_regions).
        ("hbase.regionserver.msginterval", "100".to_string()),
        // Small, quick: one JVM for everything, few handler threads.
        ("hbase.regionserver.handler.count", "10".to_string()),
        (
            "hbase.master.wait.on.regionservers.mintostart",
            "1".to_string(),
        ),
        // A scanner HBase leaves open after its own failure (the PrefixFilter defect
        // the differential harness counts) holds a read point, keeping cells from
        // compactions, until its lease expires: short leases, checked often.
        ("hbase.client.scanner.timeout.period", "2000".to_string()),
        ("hbase.server.thread.wakefrequency", "500".to_string()),
        // Multi-row mutations are an endpoint HBase loads only when asked; Cellar
        // always serves them.
        (
            "hbase.coprocessor.region.classes",
            "org.apache.hadoop.hbase.coprocessor.MultiRowMutationEndpoint".to_string(),
        ),
    ];
    let mut s = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (k, v) in props {
        s.push_str(&format!(
            "  <property><name>{k}</name><value>{v}</value></property>\n"
        ));
    }
    s.push_str("</configuration>\n");
    s
}

impl HBase {
    /// Starts HBase and waits until its master has finished initializing.
    pub fn start() -> HBase {
        let cp = classpath()
            .expect("compat/hbase/target/classpath.txt (mvn -f compat/hbase/pom.xml package)");
        let dir = tempfile::tempdir().expect("hbase dir");
        let conf = dir.path().join("conf");
        std::fs::create_dir_all(&conf).unwrap();
        let (zk, master, rs) = (free_port(), free_port(), free_port());
        std::fs::write(
            conf.join("hbase-site.xml"),
            site(dir.path(), zk, master, rs),
        )
        .unwrap();
        // CELLAR_TEST_HBASE_LOG=INFO (or DEBUG): the region server's own log at that
        // level, to see when HBase flushes, compacts and splits.
        let mut log4j =
            std::fs::read_to_string(root().join("compat/hbase/log4j.properties")).unwrap();
        if let Ok(level) = std::env::var("CELLAR_TEST_HBASE_LOG") {
            log4j.push_str(&format!(
                "log4j.logger.org.apache.hadoop.hbase.regionserver={level}\n\
                 log4j.logger.org.apache.hadoop.hbase.master.assignment={level}\n"
            ));
        }
        std::fs::write(conf.join("log4j.properties"), log4j).unwrap();
        let log = std::fs::File::create(dir.path().join("hbase.log")).unwrap();
        let child = Command::new("java")
            .arg("-Xmx1g")
            .args(JAVA17_FLAGS)
            .arg("-cp")
            .arg(format!("{}:{cp}", conf.display()))
            .args(["org.apache.hadoop.hbase.master.HMaster", "start"])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start java");
        let mut hbase = HBase {
            child,
            quorum: format!("127.0.0.1:{zk}"),
            dir,
        };
        hbase.wait_ready();
        hbase
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(self.dir.path().join("hbase.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(60)..].join("\n")
    }

    fn wait_ready(&mut self) {
        let started = Instant::now();
        let mut last = String::new();
        while started.elapsed() < START_TIMEOUT {
            if let Ok(Some(status)) = self.child.try_wait() {
                panic!(
                    "HBase exited ({status}) before serving:\n{}",
                    self.log_tail()
                );
            }
            match RemoteConnection::connect_zookeeper(&self.quorum, "/hbase") {
                Ok(c) => {
                    let admin = c.admin();
                    // The master answers PleaseHoldException until it has initialized;
                    // a table list and the default namespace mean it serves.
                    match admin.list_namespaces().and_then(|_| admin.list_tables()) {
                        Ok(_) => return,
                        Err(e) => last = e.to_string(),
                    }
                }
                Err(e) => last = e.to_string(),
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!(
            "HBase did not serve within {START_TIMEOUT:?} (last: {last}):\n{}",
            self.log_tail()
        );
    }

    /// A client connection through its ZooKeeper, as HBase clients find it.
    pub fn connect(&self) -> RemoteConnection {
        RemoteConnection::connect_zookeeper(&self.quorum, "/hbase").expect("connect to HBase")
    }
}

impl Drop for HBase {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Its log outlives the run, for reading after a failure.
        let out = root().join("target/test-artifacts");
        if std::fs::create_dir_all(&out).is_ok() {
            let _ = std::fs::copy(
                self.dir.path().join("hbase.log"),
                out.join(format!("hbase-{}.log", std::process::id())),
            );
        }
    }
}

/// HBase's own Thrift gateway (`compat/hbase-thrift`), run against an [`HBase`].
pub struct ThriftGateway {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    log: PathBuf,
}

/// The class path of HBase's Thrift gateway, when the Maven module has been resolved.
pub fn thrift_classpath() -> Option<String> {
    let cp =
        std::fs::read_to_string(root().join("compat/hbase-thrift/target/classpath.txt")).ok()?;
    let cp = cp.trim();
    (!cp.is_empty()).then(|| cp.to_string())
}

impl HBase {
    /// Starts HBase's Thrift1 (`thrift2`: Thrift2) gateway on this HBase and waits until
    /// it listens.
    pub fn start_thrift(&self, thrift2: bool) -> ThriftGateway {
        let cp = thrift_classpath().expect(
            "compat/hbase-thrift/target/classpath.txt (mvn -f compat/hbase-thrift/pom.xml package)",
        );
        let (port, info) = (free_port(), free_port());
        let class = if thrift2 {
            "org.apache.hadoop.hbase.thrift2.ThriftServer"
        } else {
            "org.apache.hadoop.hbase.thrift.ThriftServer"
        };
        let log = self
            .dir
            .path()
            .join(format!("thrift{}.log", if thrift2 { 2 } else { 1 }));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new("java")
            .arg("-Xmx512m")
            .args(JAVA17_FLAGS)
            .arg("-cp")
            .arg(format!("{}:{cp}", self.dir.path().join("conf").display()))
            .arg(class)
            .args([
                "-b",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "--infoport",
                &info.to_string(),
                "start",
            ])
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start java");
        let mut gw = ThriftGateway {
            child,
            addr: format!("127.0.0.1:{port}"),
            log,
        };
        let started = Instant::now();
        while std::net::TcpStream::connect(&gw.addr).is_err() {
            if let Ok(Some(status)) = gw.child.try_wait() {
                panic!(
                    "HBase's Thrift gateway exited ({status}):\n{}",
                    std::fs::read_to_string(&gw.log).unwrap_or_default()
                );
            }
            assert!(
                started.elapsed() < START_TIMEOUT,
                "HBase's Thrift gateway did not listen:\n{}",
                std::fs::read_to_string(&gw.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
        gw
    }
}

impl Drop for ThriftGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
