#![allow(clippy::unwrap_used)]
//! Tables of several regions: pre-splitting, the catalog across reopen, routing by row,
//! scans crossing regions both ways, PageFilter per region, and multi-row atomic
//! mutations inside one region.

use cellar::master::catalog::split_keys;
use cellar::{Database, DbError};
use cellar_region::{
    parse_filter, Delete, FamilyDescriptor, Get, Mutation, Put, Scan, TableDescriptor,
};

fn table() -> TableDescriptor {
    TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"))
}

fn rows(db: &Database, s: &Scan) -> Vec<String> {
    db.table("t")
        .unwrap()
        .scan(s)
        .unwrap()
        .map(|r| String::from_utf8(r.unwrap().row).unwrap())
        .collect()
}

#[test]
fn pre_split_tables_route_and_scan_across_regions() {
    let tmp = tempfile::tempdir().unwrap();
    let all: Vec<String> = ["a", "b", "ba", "c", "l", "m", "ma", "z"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    {
        let db = Database::open(tmp.path()).unwrap();
        db.create_table_split(table(), vec![b"m".to_vec(), b"b".to_vec()])
            .unwrap();
        let regions = db.list_regions("t").unwrap();
        let ranges: Vec<(Vec<u8>, Vec<u8>)> = regions
            .iter()
            .map(|r| (r.info.start.clone(), r.info.end.clone()))
            .collect();
        assert_eq!(
            ranges,
            vec![
                (b"".to_vec(), b"b".to_vec()),
                (b"b".to_vec(), b"m".to_vec()),
                (b"m".to_vec(), b"".to_vec())
            ]
        );
        assert!(regions[1].info.region_name().starts_with("t,b,"));
        let t = db.table("t").unwrap();
        for r in &all {
            t.put(Put::new(r.as_str()).add_column("f", "q", r.as_str()))
                .unwrap();
        }
        // Each row lives in the region whose range holds it.
        assert_eq!(t.region_for(b"ba").unwrap().start_key(), b"b");
        assert_eq!(t.region_for(b"a").unwrap().start_key(), b"");
        assert_eq!(t.region_for(b"m").unwrap().start_key(), b"m");
        let writes: Vec<u64> = db
            .list_regions("t")
            .unwrap()
            .iter()
            .map(|r| r.write_requests)
            .collect();
        assert_eq!(writes, vec![1, 4, 3]);
        db.flush("t").unwrap();
        db.close().unwrap();
    }
    let db = Database::open(tmp.path()).unwrap();
    assert_eq!(
        db.list_regions("t").unwrap().len(),
        3,
        "regions come back from the catalog"
    );
    assert_eq!(rows(&db, &Scan::new()), all);
    let mut rev = all.clone();
    rev.reverse();
    assert_eq!(rows(&db, &Scan::new().reversed(true)), rev);
    assert_eq!(
        rows(
            &db,
            &Scan::new()
                .with_start_row("ba", true)
                .with_stop_row("ma", true)
        ),
        vec!["ba", "c", "l", "m", "ma"]
    );
    assert_eq!(
        rows(
            &db,
            &Scan::new()
                .reversed(true)
                .with_start_row("ma", false)
                .with_stop_row("a", false)
        ),
        vec!["m", "l", "c", "ba", "b"]
    );
    assert_eq!(rows(&db, &Scan::new().limit(4)), vec!["a", "b", "ba", "c"]);
    assert_eq!(
        rows(&db, &Scan::new().reversed(true).limit(2)),
        vec!["z", "ma"]
    );
    // PageFilter counts per region: a 1-row page returns one row from each region.
    assert_eq!(
        rows(
            &db,
            &Scan::new().filter(parse_filter("PageFilter(1)").unwrap())
        ),
        vec!["a", "b", "m"]
    );
    let t = db.table("t").unwrap();
    assert_eq!(
        t.get(&Get::new("ma")).unwrap().value(b"f", b"q"),
        Some(&b"ma"[..])
    );
    // A region refuses rows outside its range.
    let err = t
        .region_for(b"a")
        .unwrap()
        .put(Put::new("x").add_column("f", "q", "v"))
        .unwrap_err();
    assert!(err.to_string().contains("WrongRegionException"), "{err}");
    // Drop forgets the regions in the catalog.
    db.disable_table("t").unwrap();
    db.drop_table("t").unwrap();
    db.create_table(table()).unwrap();
    assert_eq!(db.list_regions("t").unwrap().len(), 1);
}

#[test]
fn split_algorithms_make_the_regions() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    db.create_table_split(table(), split_keys("HexStringSplit", 4).unwrap())
        .unwrap();
    let starts: Vec<Vec<u8>> = db
        .list_regions("t")
        .unwrap()
        .into_iter()
        .map(|r| r.info.start)
        .collect();
    assert_eq!(
        starts,
        vec![
            b"".to_vec(),
            b"40000000".to_vec(),
            b"80000000".to_vec(),
            b"c0000000".to_vec()
        ]
    );
    assert!(db
        .create_table_split(
            TableDescriptor::new("u").with_family(FamilyDescriptor::new("f")),
            vec![b"a".to_vec(), b"a".to_vec()]
        )
        .is_err());
}

#[test]
fn multi_row_mutations_are_atomic_inside_one_region() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    db.create_table_split(table(), vec![b"tenant0043".to_vec()])
        .unwrap();
    let t = db.table("t").unwrap();
    t.put(Put::new("tenant0042|order|0001").add_column("f", "status", "open"))
        .unwrap();
    let ok = [
        Mutation::Put(Put::new("tenant0042|order|0002").add_column("f", "status", "open")),
        Mutation::Delete(Delete::new("tenant0042|order|0001")),
        Mutation::Put(Put::new("tenant0042|index").add_column("f", "last", "0002")),
    ];
    t.mutate_rows(&ok).unwrap();
    assert!(t
        .get(&Get::new("tenant0042|order|0001"))
        .unwrap()
        .is_empty());
    assert_eq!(
        t.get(&Get::new("tenant0042|index"))
            .unwrap()
            .value(b"f", b"last"),
        Some(&b"0002"[..])
    );
    // Rows spanning two regions: refused, naming the first row outside, nothing applied.
    let bad = [
        Mutation::Put(Put::new("tenant0042|order|0003").add_column("f", "status", "open")),
        Mutation::Put(Put::new("tenant0043|order|0001").add_column("f", "status", "open")),
    ];
    let err = t.mutate_rows(&bad).unwrap_err();
    assert!(
        err.to_string()
            .contains("Requested row out of range 'tenant0043|order|0001'"),
        "{err}"
    );
    assert!(t
        .get(&Get::new("tenant0042|order|0003"))
        .unwrap()
        .is_empty());
    assert!(t
        .get(&Get::new("tenant0043|order|0001"))
        .unwrap()
        .is_empty());
    assert!(matches!(err, DbError::Region(_)));
}

#[test]
fn the_wide_row_alarm_flags_a_region_that_cannot_split() {
    let tmp = tempfile::tempdir().unwrap();
    let db = Database::open(tmp.path()).unwrap();
    let mut wide = TableDescriptor::new("wide").with_family(FamilyDescriptor::new("f"));
    wide.set_attribute("MAX_FILESIZE", "65536").unwrap();
    wide.set_attribute(
        "SPLIT_POLICY",
        "org.apache.hadoop.hbase.regionserver.ConstantSizeRegionSplitPolicy",
    )
    .unwrap();
    db.create_table(wide.clone()).unwrap();
    let mut tall = wide.clone();
    tall.name = "tall".into();
    db.create_table(tall).unwrap();
    let (w, t) = (db.table("wide").unwrap(), db.table("tall").unwrap());
    for i in 0..3000 {
        w.put(Put::new("device42").add_column("f", format!("t{i:06}"), vec![b'x'; 40]))
            .unwrap();
        t.put(Put::new(format!("device{i:06}")).add_column("f", "v", vec![b'x'; 40]))
            .unwrap();
    }
    db.flush("wide").unwrap();
    db.flush("tall").unwrap();
    let ws = &db.list_regions("wide").unwrap()[0];
    assert!(ws.largest_store_size > ws.split_threshold, "{ws:?}");
    assert_eq!(ws.split_point, None);
    let alarm = ws.alarm.as_ref().expect("the wide row is flagged");
    assert!(
        alarm.contains("cannot split") && alarm.contains("device42"),
        "{alarm}"
    );
    let ts = &db.list_regions("tall").unwrap()[0];
    let point = ts
        .split_point
        .clone()
        .expect("a tall table has a split row");
    assert!(
        point.starts_with(b"device00") && point.len() == 12,
        "{point:?}"
    );
    assert!(ts.alarm.as_ref().unwrap().contains("would split at"));
    // A disabled policy is named as the reason.
    db.alter_table("tall", |d| {
        d.set_attribute("SPLIT_POLICY", "DisabledRegionSplitPolicy")
    })
    .unwrap();
    let ts = &db.list_regions("tall").unwrap()[0];
    assert!(ts
        .alarm
        .as_ref()
        .unwrap()
        .contains("DisabledRegionSplitPolicy"));
    // A key-prefix policy needs its prefix length.
    let mut kp = TableDescriptor::new("kp").with_family(FamilyDescriptor::new("f"));
    kp.set_attribute("SPLIT_POLICY", "KeyPrefixRegionSplitPolicy")
        .unwrap();
    assert!(db.create_table(kp.clone()).is_err());
    kp.configuration.insert(
        "KeyPrefixRegionSplitPolicy.prefix_length".into(),
        "8".into(),
    );
    db.create_table(kp).unwrap();
}
