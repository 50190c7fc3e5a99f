#![allow(clippy::unwrap_used)]
//! The roles on their own and together: a region server hosting a region by encoded
//! name without any master; a master assigning a table's regions to its server; and
//! the client traits (`Connection`, `Table`, `Admin`) over the in-process connection,
//! whose cached locations go stale across a split and are found again.

use std::path::Path;
use std::sync::Arc;

use cellar::client::Connection;
use cellar::master::MasterParts;
use cellar::region_server::ServerParts;
use cellar::{Database, DbError, Master, RegionServer};
use cellar_api::{
    CheckAndMutate, Condition, ErrorKind, FamilyDescriptor, Get, Put, RegionInfo, RowMutations,
    Scan, ServerName, TableDescriptor,
};
use cellar_hfile::BlockCache;
use cellar_io::{ManualClock, MemoryFs};
use cellar_region::Config;
use cellar_wal::{Wal, WalOptions};

fn server(fs: &MemoryFs, root: &Path) -> Arc<RegionServer> {
    let fs: Arc<dyn cellar_io::FileSystem> = Arc::new(fs.clone());
    let (wal, _) = Wal::open(
        fs.clone(),
        &root.join("wal").join("local"),
        WalOptions::default(),
        &mut |_| Ok(()),
    )
    .unwrap();
    Arc::new(RegionServer::new(ServerParts {
        name: ServerName::new("rs1", 16020, 1),
        root: root.to_path_buf(),
        fs,
        clock: Arc::new(ManualClock::new(1_700_000_000_000)),
        config: Arc::new(Config::default()),
        wal: Arc::new(wal),
        cache: Arc::new(BlockCache::new(1 << 20)),
        maintenance: None,
    }))
}

fn desc() -> TableDescriptor {
    TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"))
}

#[test]
fn a_region_server_hosts_regions_by_encoded_name_alone() {
    let fs = MemoryFs::new();
    let root = Path::new("/rs");
    let rs = server(&fs, root);
    let info = RegionInfo {
        table: "t".into(),
        start: Vec::new(),
        end: b"m".to_vec(),
        id: 1,
        encoded: "0123456789abcdef0123456789abcdef".into(),
        offline: false,
    };
    rs.open_region(&desc(), &info).unwrap();
    let r = rs.region(&info.encoded).unwrap();
    r.put(Put::new("a").add_column("f", "q", "1")).unwrap();
    // Rows outside the region's range are refused by the region itself.
    let e = cellar_api::Error::from(r.put(Put::new("z").add_column("f", "q", "1")).unwrap_err());
    assert_eq!(e.kind(), ErrorKind::WrongRegion);
    let load = rs.region_load(&info.encoded).unwrap();
    assert_eq!((load.store_files, load.write_requests), (0, 1));
    assert!(load.memstore_size > 0);
    rs.flush_region(&info.encoded).unwrap();
    let load = rs.region_load(&info.encoded).unwrap();
    assert_eq!((load.store_files, load.memstore_size), (1, 0));
    assert!(load.store_files_size > 0 && load.largest_store_size == load.store_files_size);
    rs.close_region(&info.encoded).unwrap();
    let e = cellar_api::Error::from(rs.region(&info.encoded).err().unwrap());
    assert_eq!(e.kind(), ErrorKind::NotServingRegion);
    assert!(e.message().contains("rs1,16020,1"), "{e}");
    // Reopened, it serves what was flushed.
    rs.open_region(&desc(), &info).unwrap();
    let got = rs
        .region(&info.encoded)
        .unwrap()
        .get(&Get::new("a"))
        .unwrap();
    assert_eq!(got.value(b"f", b"q"), Some(&b"1"[..]));
    assert_eq!(rs.online_regions().len(), 1);
}

#[test]
fn a_master_assigns_regions_to_its_server() {
    let fs = MemoryFs::new();
    let root = Path::new("/db");
    let rs = server(&fs, root);
    let master = Master::open(
        MasterParts {
            root: root.to_path_buf(),
            fs: Arc::new(fs.clone()),
            clock: Arc::new(ManualClock::new(1_700_000_000_000)),
            config: Arc::new(Config::default()),
            servers: vec![rs.clone()],
        },
        Vec::new(),
    )
    .unwrap();
    master
        .create_table(desc(), vec![b"g".to_vec(), b"p".to_vec()])
        .unwrap();
    let loc = master.locate("t", b"k").unwrap();
    assert_eq!(loc.info.start, b"g".to_vec());
    assert_eq!(loc.info.end, b"p".to_vec());
    assert!(rs.is_online(&loc.info.encoded));
    assert_eq!(rs.online_regions().len(), 3);
    master.disable_table("t").unwrap();
    assert_eq!(rs.online_regions().len(), 0);
    assert!(matches!(
        master.locate("t", b"k"),
        Err(DbError::TableNotEnabled(_))
    ));
}

#[test]
fn the_client_traits_work_and_relocate_after_a_split() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    let conn: Box<dyn Connection> = Box::new(db.connection().clone());
    let admin = conn.admin();
    admin.create_table(desc(), Vec::new()).unwrap();
    assert!(admin.table_exists("t").unwrap());
    let t = conn.table("t").unwrap();
    for i in 0..100 {
        t.put(Put::new(format!("r{i:03}")).add_column("f", "q", format!("{i}")))
            .unwrap();
    }
    assert_eq!(db.connection().cached_locations("t"), 1);
    admin.split("t", Some(b"r050")).unwrap();
    // The cached location is of the split parent: the next call finds the daughter.
    let got = t.get(&Get::new("r075")).unwrap();
    assert_eq!(got.value(b"f", b"q"), Some(&b"75"[..]));
    let got = t.get(&Get::new("r025")).unwrap();
    assert_eq!(got.value(b"f", b"q"), Some(&b"25"[..]));
    assert_eq!(db.connection().cached_locations("t"), 2);
    let rows: Vec<_> = t.scan(&Scan::new()).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 100);
    // checkAndMutate and RowMutations through the trait.
    let cam = CheckAndMutate::new("r010", Condition::equals("f", "q", "10"))
        .then(Put::new("r010").add_column("f", "q", "ten"));
    assert!(t.check_and_mutate(&cam).unwrap().success);
    let rm = RowMutations::new("r011").with(Put::new("r011").add_column("f", "x", "1"));
    t.mutate_row(&rm).unwrap();
    assert_eq!(
        t.get(&Get::new("r011").add_column("f", "x"))
            .unwrap()
            .value(b"f", b"x"),
        Some(&b"1"[..])
    );
    // Admin: modify, disable, errors as a client sees them.
    let (mut d, enabled) = admin.describe("t").unwrap();
    assert!(enabled);
    d.families.push(FamilyDescriptor::new("g"));
    admin.modify_table(d).unwrap();
    t.put(Put::new("r001").add_column("g", "q", "v")).unwrap();
    admin.disable_table("t").unwrap();
    let e = t.get(&Get::new("r001")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::TableNotEnabled);
    assert_eq!(e.table(), Some("t"));
    let e = conn.table("nope").err().unwrap();
    assert_eq!(e.kind(), ErrorKind::TableNotFound);
    admin.enable_table("t").unwrap();
    assert_eq!(admin.list_regions("t").unwrap().len(), 2);
}

#[test]
fn the_shell_drives_any_connection() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    let client = cellar::shell::Client::new(Box::new(db.connection().clone()));
    let mut out = Vec::new();
    {
        let mut shell = cellar::shell::Shell::with_client(client, true, &mut out);
        shell
            .run_script(
                &b"create 't', 'f'\nput 't', 'r1', 'f:q', 'v1'\nget 't', 'r1'\ndisable 't'\nget 't', 'r1'\n"[..],
            )
            .unwrap();
        assert!(shell.had_error);
        assert!(shell.database().is_none());
    }
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("value=v1"), "{text}");
    assert!(text.contains("ERROR: Table t is disabled!"), "{text}");
    // The table is there for the database itself too.
    assert!(db.table_exists("t"));
}

#[test]
fn namespaces_hold_tables_and_must_be_empty_to_go() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let db = Database::open(tmp.path()).unwrap();
        let admin = db.connection().admin();
        let mut d = desc();
        d.name = "ns1:t".into();
        let e = admin.create_table(d.clone(), Vec::new()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::NamespaceNotFound);
        admin.create_namespace("ns1").unwrap();
        let mut sys = desc();
        sys.name = "cellar:meta".into();
        assert!(admin.create_table(sys, Vec::new()).is_err());
        assert_eq!(
            admin.create_namespace("ns1").unwrap_err().kind(),
            ErrorKind::NamespaceExists
        );
        admin.create_table(d, Vec::new()).unwrap();
        admin.create_table(desc(), Vec::new()).unwrap();
        let conn = db.connection();
        conn.table("ns1:t")
            .unwrap()
            .put(Put::new("r").add_column("f", "q", "in ns1"))
            .unwrap();
        conn.table("t")
            .unwrap()
            .put(Put::new("r").add_column("f", "q", "in default"))
            .unwrap();
        assert!(tmp.path().join("data/ns1/t").is_dir());
        assert_eq!(admin.list_namespace_tables("ns1").unwrap(), vec!["ns1:t"]);
        assert_eq!(
            admin.list_namespaces().unwrap(),
            vec!["cellar", "default", "ns1"]
        );
        let e = admin.delete_namespace("ns1").unwrap_err();
        assert!(e.message().contains("Only empty namespaces"), "{e}");
        assert!(admin.delete_namespace("default").is_err());
        db.close().unwrap();
    }
    // Both tables come back from their namespaces.
    let db = Database::open(tmp.path()).unwrap();
    let conn = db.connection();
    let get = |t: &str| {
        conn.table(t)
            .unwrap()
            .get(&Get::new("r"))
            .unwrap()
            .value(b"f", b"q")
            .map(|v| v.to_vec())
    };
    assert_eq!(get("ns1:t"), Some(b"in ns1".to_vec()));
    assert_eq!(get("default:t"), Some(b"in default".to_vec()));
    let admin = conn.admin();
    admin.disable_table("ns1:t").unwrap();
    admin.delete_table("ns1:t").unwrap();
    admin.delete_namespace("ns1").unwrap();
    assert_eq!(admin.list_namespaces().unwrap(), vec!["cellar", "default"]);
    assert!(!tmp.path().join("data/ns1").exists());
}

#[test]
fn the_shell_speaks_namespaces() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    let mut out = Vec::new();
    {
        let mut shell = cellar::shell::Shell::new(db, &mut out);
        shell
            .run_script(
                &b"create_namespace 'ns'\ncreate 'ns:t', 'f'\nput 'ns:t', 'r', 'f:q', 'v'\nlist_namespace\nlist_namespace_tables 'ns'\ndrop_namespace 'ns'\nlist_namespace_tables 'nope'\nlist\n"[..],
            )
            .unwrap();
    }
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.contains("NAMESPACE\ncellar\ndefault\nns\n3 row(s)"),
        "{text}"
    );
    assert!(text.contains("TABLE\nt\n1 row(s)"), "{text}");
    assert!(
        text.contains("ERROR: ConstraintException: Only empty namespaces can be removed. Namespace ns has 1 tables"),
        "{text}"
    );
    assert!(text.contains("ERROR: Unknown namespace nope!"), "{text}");
    assert!(text.contains("ns:t"), "{text}");
}
