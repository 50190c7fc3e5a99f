//! `/metrics`: the server's counters, gauges and latency histograms in the Prometheus
//! text format (version 0.0.4), named after HBase's own metrics (`readRequestCount`,
//! `memStoreSize`, `storeFileCount`, `Get`, `Put`, `Multi`, `appendCount`,
//! `SyncTime`, `queueSize`, `numOpenConnections`, ...) under `hbase_regionserver_`,
//! `hbase_wal_` and `hbase_ipc_`, with per-table and per-region labels.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use cellar_io::{Histogram, HistogramSnapshot};

use super::context::Context;

/// Latency histograms of the calls clients make most.
#[derive(Default)]
pub struct Latencies {
    pub get: Histogram,
    pub mutate: Histogram,
    pub scan_next: Histogram,
    pub multi: Histogram,
}

impl Latencies {
    /// The histogram a ClientService method is timed in.
    pub fn for_method(&self, method: &str) -> Option<&Histogram> {
        match method {
            "Get" => Some(&self.get),
            "Mutate" => Some(&self.mutate),
            "Scan" => Some(&self.scan_next),
            "Multi" => Some(&self.multi),
            _ => None,
        }
    }
}

fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

struct Out(String);

impl Out {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.0, "# HELP {name} {help}");
        let _ = writeln!(self.0, "# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], v: f64) {
        self.0.push_str(name);
        if !labels.is_empty() {
            self.0.push('{');
            for (i, (k, val)) in labels.iter().enumerate() {
                if i > 0 {
                    self.0.push(',');
                }
                let _ = write!(self.0, "{k}=\"{}\"", escape(val));
            }
            self.0.push('}');
        }
        let _ = writeln!(self.0, " {v}");
    }

    fn histogram(&mut self, name: &str, help: &str, h: &HistogramSnapshot) {
        self.family(name, "histogram", help);
        for (le, n) in &h.cumulative {
            let le = if le.is_infinite() {
                "+Inf".to_string()
            } else {
                le.to_string()
            };
            self.sample(&format!("{name}_bucket"), &[("le", &le)], *n as f64);
        }
        self.sample(&format!("{name}_sum"), &[], h.sum_secs);
        self.sample(&format!("{name}_count"), &[], h.count as f64);
    }
}

fn split_name(table: &str) -> (&str, &str) {
    table
        .split_once(':')
        .unwrap_or((cellar_api::DEFAULT_NAMESPACE, table))
}

/// One region's figures.
struct RegionFigures {
    table: String,
    region: String,
    read: u64,
    write: u64,
    memstore: u64,
    store_files: u64,
    store_file_size: u64,
    flushes: u64,
    compactions: u64,
    major: u64,
    blocked: u64,
}

fn regions(ctx: &Context) -> Vec<RegionFigures> {
    let mut out = Vec::new();
    for e in ctx.db.master().catalog_entries() {
        if e.server.is_none() {
            continue;
        }
        let Some(r) = ctx.db.master().region_named(&e.info.encoded) else {
            continue;
        };
        let m = &r.metrics;
        out.push(RegionFigures {
            table: e.info.table.clone(),
            region: e.info.encoded.clone(),
            read: m.read_requests.get(),
            write: m.write_requests.load(Ordering::Relaxed),
            memstore: r.memstore_size(),
            store_files: r.store_file_count() as u64,
            store_file_size: r.store_files_size(),
            flushes: m.flushes.load(Ordering::Relaxed),
            compactions: m.compactions.load(Ordering::Relaxed),
            major: m.major_compactions.load(Ordering::Relaxed),
            blocked: m.blocked_requests.load(Ordering::Relaxed),
        });
    }
    out
}

/// The whole `/metrics` page.
/// Per table: the largest tracked row's bytes (families summed) and the rows at each
/// large-row level, from `cellar:large_rows`.
fn large_row_gauges(ctx: &Context, o: &mut Out) {
    let conn = ctx.db.connection().clone();
    let entries = crate::large_rows::read(&conn, None).unwrap_or_default();
    let config = ctx.db.config();
    let levels = config.large_row_levels;
    let rows = crate::large_rows::forecast(&entries, config.max_row_size, config.max_file_size);
    // table -> (largest bytes, rows at watch, rows at warn)
    let mut per: BTreeMap<&str, (u64, u64, u64)> = BTreeMap::new();
    for r in &rows {
        let e = per.entry(&r.table).or_default();
        e.0 = e.0.max(r.bytes);
        match levels.level(r.bytes, r.cells) {
            cellar_region::row_sizes::Level::Warn => e.2 += 1,
            cellar_region::row_sizes::Level::Watch => e.1 += 1,
            cellar_region::row_sizes::Level::Below => {}
        }
    }
    o.family(
        "cellar_hot_region_share",
        "gauge",
        "Share of its table's requests a hot region serves (only hot regions).",
    );
    let master = ctx.db.master();
    for t in master.list_tables() {
        let stats = master.list_regions(&t).unwrap_or_default();
        for h in crate::hotspots::hot_regions(&stats) {
            let (ns, q) = split_name(&t);
            o.sample(
                "cellar_hot_region_share",
                &[
                    ("namespace", ns),
                    ("table", q),
                    ("region", &h.region),
                    ("monotonic", if h.monotonic { "true" } else { "false" }),
                ],
                h.share,
            );
        }
    }
    o.family(
        "cellar_largerow_largest_bytes",
        "gauge",
        "Bytes of the table's largest tracked row (all families).",
    );
    for (t, v) in &per {
        let (ns, q) = split_name(t);
        o.sample(
            "cellar_largerow_largest_bytes",
            &[("namespace", ns), ("table", q)],
            v.0 as f64,
        );
    }
    o.family(
        "cellar_hot_row_lock_wait_seconds",
        "gauge",
        "Time writers waited for the lock of a hot row (the most contended rows only).",
    );
    for r in crate::hotspots::hot_rows(ctx.db.master()).iter().take(20) {
        let (ns, q) = split_name(&r.table);
        let row = cellar_types::to_string_binary(&r.row);
        o.sample(
            "cellar_hot_row_lock_wait_seconds",
            &[("namespace", ns), ("table", q), ("row", &row)],
            r.contention.wait_ms as f64 / 1000.0,
        );
    }
    o.family(
        "cellar_family_versions_unread_ratio",
        "gauge",
        "Versions a family keeps over the most its reads ask for (families at 10 or more).",
    );
    for w in crate::hotspots::version_waste(ctx.db.master()) {
        let (ns, q) = split_name(&w.table);
        let fam = cellar_types::to_string_binary(&w.family);
        o.sample(
            "cellar_family_versions_unread_ratio",
            &[("namespace", ns), ("table", q), ("family", &fam)],
            w.stored as f64 / w.asked.max(1) as f64,
        );
    }
    o.family(
        "cellar_tombstone_rows",
        "gauge",
        "Rows of the table with a build-up of delete markers (cellar.tombstone.warn.cells).",
    );
    let mut tomb: BTreeMap<&str, u64> = BTreeMap::new();
    let tombstones = crate::hotspots::tombstone_rows(&entries);
    for t in &tombstones {
        *tomb.entry(&t.table).or_default() += 1;
    }
    for (t, n) in &tomb {
        let (ns, q) = split_name(t);
        o.sample(
            "cellar_tombstone_rows",
            &[("namespace", ns), ("table", q)],
            *n as f64,
        );
    }
    o.family(
        "cellar_largerow_rows",
        "gauge",
        "Rows of the table at each large-row level (cellar.largerow.watch / .warn).",
    );
    for (t, v) in &per {
        let (ns, q) = split_name(t);
        for (level, n) in [("watch", v.1), ("warn", v.2)] {
            o.sample(
                "cellar_largerow_rows",
                &[("namespace", ns), ("table", q), ("level", level)],
                n as f64,
            );
        }
    }
}

pub fn render(ctx: &Context) -> String {
    let mut o = Out(String::new());
    let regions = regions(ctx);
    type Pick = fn(&RegionFigures) -> u64;
    let per_region: [(&str, &str, &str, Pick); 10] = [
        (
            "readRequestCount",
            "counter",
            "Read requests served by the region.",
            |r| r.read,
        ),
        (
            "writeRequestCount",
            "counter",
            "Write requests served by the region.",
            |r| r.write,
        ),
        (
            "memStoreSize",
            "gauge",
            "Bytes in the region's MemStores.",
            |r| r.memstore,
        ),
        (
            "storeFileSize",
            "gauge",
            "Bytes of the region's store files.",
            |r| r.store_file_size,
        ),
        (
            "storeFileCount",
            "gauge",
            "Store files of the region.",
            |r| r.store_files,
        ),
        ("flushesCount", "counter", "Flushes of the region.", |r| {
            r.flushes
        }),
        (
            "compactionsCompletedCount",
            "counter",
            "Compactions completed.",
            |r| r.compactions,
        ),
        (
            "majorCompactionsCompletedCount",
            "counter",
            "Major compactions completed.",
            |r| r.major,
        ),
        (
            "blockedRequestsCount",
            "counter",
            "Writes blocked by the MemStore limit.",
            |r| r.blocked,
        ),
        (
            "regionCount",
            "gauge",
            "Online regions (1 per region).",
            |_| 1,
        ),
    ];
    for (name, kind, help, pick) in per_region {
        let full = format!("hbase_regionserver_region_{name}");
        o.family(&full, kind, help);
        for r in &regions {
            let (ns, t) = split_name(&r.table);
            o.sample(
                &full,
                &[("namespace", ns), ("table", t), ("region", &r.region)],
                pick(r) as f64,
            );
        }
    }
    let mut tables: BTreeMap<&str, [u64; 5]> = BTreeMap::new();
    for r in &regions {
        let e = tables.entry(&r.table).or_default();
        e[0] += r.read;
        e[1] += r.write;
        e[2] += r.memstore;
        e[3] += r.store_file_size;
        e[4] += r.store_files;
    }
    let per_table = [
        (
            "readRequestCount",
            "counter",
            "Read requests served by the table's regions.",
        ),
        (
            "writeRequestCount",
            "counter",
            "Write requests served by the table's regions.",
        ),
        ("memStoreSize", "gauge", "Bytes in the table's MemStores."),
        (
            "storeFileSize",
            "gauge",
            "Bytes of the table's store files.",
        ),
        ("storeFileCount", "gauge", "Store files of the table."),
    ];
    for (i, (name, kind, help)) in per_table.iter().enumerate() {
        let full = format!("hbase_regionserver_table_{name}");
        o.family(&full, kind, help);
        for (t, v) in &tables {
            let (ns, q) = split_name(t);
            o.sample(&full, &[("namespace", ns), ("table", q)], v[i] as f64);
        }
    }
    large_row_gauges(ctx, &mut o);
    let log = ctx.db.region_server().large_log();
    for (name, help, v) in [
        (
            "hbase_regionserver_responseTooLarge",
            "Reads whose result was over hbase.ipc.warn.response.size.",
            &log.too_large,
        ),
        (
            "hbase_regionserver_responseTooSlow",
            "Reads that took over hbase.ipc.warn.response.time.",
            &log.too_slow,
        ),
        (
            "cellar_row_too_big_total",
            "Reads refused with RowTooBigException (hbase.table.max.rowsize).",
            &log.row_too_big,
        ),
    ] {
        o.family(name, "counter", help);
        o.sample(name, &[], v.load(Ordering::Relaxed) as f64);
    }
    let procs = ctx.db.master().procedure_counts();
    let wal = ctx.db.wal().stats();
    let cache = ctx.db.block_cache_stats();
    let c = &ctx.counters;
    let load = |a: &std::sync::atomic::AtomicU64| a.load(Ordering::Relaxed) as f64;
    let loadu = |a: &std::sync::atomic::AtomicUsize| a.load(Ordering::Relaxed) as f64;
    let scalars: [(&str, &str, &str, f64); 16] = [
        (
            "hbase_regionserver_splitSuccessCount",
            "counter",
            "Region splits completed.",
            load(&procs.splits),
        ),
        (
            "hbase_regionserver_mergeSuccessCount",
            "counter",
            "Region merges completed.",
            load(&procs.merges),
        ),
        (
            "hbase_wal_appendCount",
            "counter",
            "Edits appended to the write-ahead log.",
            wal.appends as f64,
        ),
        (
            "hbase_wal_syncCount",
            "counter",
            "Writes of the log to the operating system.",
            wal.writes as f64,
        ),
        (
            "hbase_wal_fsyncCount",
            "counter",
            "fsyncs of the log.",
            wal.fsyncs as f64,
        ),
        (
            "hbase_ipc_queueSize",
            "gauge",
            "Calls in flight.",
            loadu(&c.calls_in_flight),
        ),
        (
            "hbase_ipc_numOpenConnections",
            "gauge",
            "Open client connections.",
            loadu(&c.connections_open),
        ),
        (
            "hbase_ipc_numCallsTotal",
            "counter",
            "Calls received.",
            load(&c.calls_total),
        ),
        (
            "hbase_ipc_exceptions_callQueueTooBig",
            "counter",
            "Calls refused with CallQueueTooBigException.",
            load(&c.calls_rejected),
        ),
        (
            "hbase_ipc_badFrames",
            "counter",
            "Frames that could not be read.",
            load(&c.bad_frames),
        ),
        (
            "hbase_ipc_numConnectionsTotal",
            "counter",
            "Connections accepted.",
            load(&c.connections_total),
        ),
        (
            "hbase_regionserver_blockCacheHitCount",
            "counter",
            "Block reads answered by the block cache.",
            cache.hits as f64,
        ),
        (
            "hbase_regionserver_blockCacheMissCount",
            "counter",
            "Block reads the block cache could not answer (read from the file).",
            cache.misses as f64,
        ),
        (
            "hbase_regionserver_blockCacheCount",
            "gauge",
            "Blocks in the block cache.",
            cache.blocks as f64,
        ),
        (
            "hbase_regionserver_blockCacheSize",
            "gauge",
            "Bytes the block cache holds.",
            cache.used_bytes as f64,
        ),
        (
            "hbase_regionserver_openScanners",
            "gauge",
            "Scanners open on the server.",
            ctx.scanners.count() as f64,
        ),
    ];
    for (name, kind, help, v) in scalars {
        o.family(name, kind, help);
        o.sample(name, &[], v);
    }
    let histograms = [
        (
            "hbase_regionserver_Get_seconds",
            "Get call latency.",
            ctx.latency.get.snapshot(),
        ),
        (
            "hbase_regionserver_Put_seconds",
            "Mutate call latency (Put, Delete, Increment, Append, checkAndMutate).",
            ctx.latency.mutate.snapshot(),
        ),
        (
            "hbase_regionserver_ScanNext_seconds",
            "Scan call latency.",
            ctx.latency.scan_next.snapshot(),
        ),
        (
            "hbase_regionserver_Multi_seconds",
            "Multi call latency.",
            ctx.latency.multi.snapshot(),
        ),
        (
            "hbase_wal_SyncTime_seconds",
            "Log sync latency.",
            ctx.db.wal().sync_latency(),
        ),
    ];
    for (name, help, h) in &histograms {
        o.histogram(name, help, h);
    }
    o.0
}
