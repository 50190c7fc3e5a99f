//! Cellar's server as a benchmark target: a `cellar server` started in this process on
//! a loopback port, driven through the network client (HBase's RPC protocol, cell
//! blocks as HBase's Java client sends them) — what the server costs over embedded.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cellar::client::{Connection, RemoteConnection, Table};
use cellar::server::{Server, ServerOptions};
use cellar::Database;
use cellar_region::{FamilyDescriptor, Get, Put, Scan, TableDescriptor};
use cellar_wal::Durability;

use crate::target::{cellar_options, dir_size, Record, Target};

pub struct ServerTarget {
    server: Mutex<Option<Server>>,
    conn: RemoteConnection,
    table: Box<dyn Table>,
    dir: PathBuf,
    durability: Durability,
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl ServerTarget {
    pub fn open(dir: &Path, fsync: bool, cache_bytes: usize) -> Result<ServerTarget, String> {
        let db = Database::open_with(dir, cellar_options(dir, cache_bytes)?).map_err(err)?;
        let opts = ServerOptions {
            port: 0,
            info_port: None,
            ..ServerOptions::default()
        };
        let server = Server::start(db, &opts).map_err(err)?;
        let conn = RemoteConnection::connect(&server.addr().to_string()).map_err(err)?;
        let durability = if fsync {
            Durability::FsyncWal
        } else {
            Durability::SyncWal
        };
        let admin = conn.admin();
        if !admin.table_exists("usertable").map_err(err)? {
            let mut t = TableDescriptor::new("usertable").with_family(FamilyDescriptor::new("f"));
            t.durability = durability;
            admin.create_table(t, Vec::new()).map_err(err)?;
        }
        let table = conn.table("usertable").map_err(err)?;
        Ok(ServerTarget {
            server: Mutex::new(Some(server)),
            conn,
            table,
            dir: dir.to_path_buf(),
            durability,
        })
    }
}

impl Target for ServerTarget {
    fn name(&self) -> String {
        format!("server ({})", self.durability.name())
    }

    fn insert(&self, key: &str, record: &Record) -> Result<(), String> {
        let mut p = Put::new(key);
        for (f, v) in record {
            p = p.add_column("f", f.as_str(), v.clone());
        }
        self.table.put(p).map_err(err)
    }

    fn read(&self, key: &str) -> Result<bool, String> {
        Ok(!self.table.get(&Get::new(key)).map_err(err)?.is_empty())
    }

    fn update(&self, key: &str, field: &str, value: &[u8]) -> Result<(), String> {
        self.table
            .put(Put::new(key).add_column("f", field, value.to_vec()))
            .map_err(err)
    }

    fn scan(&self, start: &str, count: usize) -> Result<usize, String> {
        let s = Scan::new()
            .start_row(start)
            .limit(count as u64)
            .caching(count as u32);
        let mut n = 0;
        for r in self.table.scan(&s).map_err(err)? {
            r.map_err(err)?;
            n += 1;
        }
        Ok(n)
    }

    fn settle(&self) -> Result<(), String> {
        let admin = self.conn.admin();
        admin.flush("usertable").map_err(err)?;
        admin.compact("usertable", false).map_err(err)
    }

    fn disk_bytes(&self) -> u64 {
        dir_size(&self.dir)
    }
}

impl Drop for ServerTarget {
    fn drop(&mut self) {
        if let Some(s) = self.server.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = s.shutdown();
        }
    }
}
