//! The status page on the info port: server-rendered HTML with no external assets —
//! the server and its connections, the tables, every region with its range, sizes and
//! request counts, the region alarms (over the split size and not splitting, with the
//! reason; writes blocked by the MemStore limit; links to the region's large rows), the
//! large rows with their forecasts and charts, and the largest rows the recent flushes
//! and compactions wrote.

use std::fmt::Write as _;
use std::sync::atomic::Ordering;

use cellar_region::row_sizes::RowSize;
use cellar_types::to_string_binary;

use super::context::Context;

pub(super) fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '&' => o.push_str("&amp;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

fn key(k: &[u8]) -> String {
    if k.is_empty() {
        "∞".into()
    } else {
        esc(&to_string_binary(k))
    }
}

pub(super) fn size(b: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}table{border-collapse:collapse;margin-bottom:1.5em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;font-size:.9em}th{background:#eee}td.n{text-align:right;font-variant-numeric:tabular-nums}.alarm{color:#a00}h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.5em}";

struct Region {
    table: String,
    name: String,
    start: Vec<u8>,
    end: Vec<u8>,
    store_files: usize,
    file_bytes: u64,
    memstore: u64,
    reads: u64,
    writes: u64,
    alarms: Vec<String>,
}

/// The page.
pub fn render(ctx: &Context) -> String {
    let master = ctx.db.master();
    let config = ctx.db.config();
    let conn = ctx.db.connection().clone();
    let entries = crate::large_rows::read(&conn, None).unwrap_or_default();
    let tombstones = crate::hotspots::tombstone_rows(&entries);
    let large_rows =
        crate::large_rows::forecast(&entries, config.max_row_size, config.max_file_size);
    let mut regions = Vec::new();
    let mut largest: Vec<(String, RowSize)> = Vec::new();
    let tables = master.list_tables();
    let mut table_rows = Vec::new();
    for t in &tables {
        let enabled = master.describe(t).map(|(_, e)| e).unwrap_or(false);
        let stats = if enabled {
            master.list_regions(t).unwrap_or_default()
        } else {
            Vec::new()
        };
        let (mut files, mut mem, mut reads, mut writes) = (0u64, 0u64, 0u64, 0u64);
        let hot = crate::hotspots::hot_regions(&stats);
        for s in &stats {
            files += s.store_files_size;
            mem += s.memstore_size;
            reads += s.read_requests;
            writes += s.write_requests;
            let mut alarms: Vec<String> = s.alarm.iter().cloned().collect();
            for h in hot.iter().filter(|h| h.region == s.info.encoded) {
                alarms.push(format!(
                    "hot region: {:.0}% of the table's requests, {:.0}% of its writes — {}",
                    h.share * 100.0,
                    h.write_share * 100.0,
                    h.advice
                ));
            }
            if let Some(r) = master.region_named(&s.info.encoded) {
                let limit = r
                    .flush_size()
                    .saturating_mul(config.memstore_block_multiplier);
                if r.memstore_size() >= limit {
                    alarms.push(format!(
                        "writes blocked: MemStore {} at the limit of {} (hbase.hregion.memstore.block.multiplier)",
                        size(r.memstore_size()),
                        size(limit)
                    ));
                }
                let blocked = r.metrics.blocked_requests.load(Ordering::Relaxed);
                if blocked > 0 && alarms.iter().all(|a| !a.starts_with("writes blocked")) {
                    alarms.push(format!(
                        "{blocked} writes were blocked by the MemStore limit"
                    ));
                }
                for st in r.stores() {
                    for row in st.largest_rows() {
                        largest.push((t.clone(), row));
                    }
                }
            }
            regions.push(Region {
                table: t.clone(),
                name: s.info.encoded.clone(),
                start: s.info.start.clone(),
                end: s.info.end.clone(),
                store_files: s.store_files,
                file_bytes: s.store_files_size,
                memstore: s.memstore_size,
                reads: s.read_requests,
                writes: s.write_requests,
                alarms,
            });
        }
        table_rows.push((t.clone(), enabled, stats.len(), files, mem, reads, writes));
    }
    largest.sort_by_key(|r| std::cmp::Reverse(r.1.bytes));
    largest.truncate(20);

    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>Cellar {}</title><style>{STYLE}</style></head><body>",
        esc(&ctx.server_name.to_string())
    );
    let _ = write!(
        h,
        "<h1>Cellar server {}</h1><p>Cluster id <code>{}</code> · {} tables · {} regions · {} open connections · {} open scanners · <a href=\"/metrics\">metrics</a></p>",
        esc(&ctx.server_name.to_string()),
        esc(&ctx.cluster_id),
        tables.len(),
        regions.len(),
        ctx.counters.connections_open.load(Ordering::Relaxed),
        ctx.scanners.count()
    );
    h.push_str("<h2 id=\"tables\">Tables</h2><table><tr><th>Table</th><th>State</th><th>Regions</th><th>Store files</th><th>MemStore</th><th>Read requests</th><th>Write requests</th></tr>");
    for (t, enabled, n, files, mem, reads, writes) in &table_rows {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td class=n>{n}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{reads}</td><td class=n>{writes}</td></tr>",
            esc(t),
            if *enabled { "ENABLED" } else { "DISABLED" },
            size(*files),
            size(*mem)
        );
    }
    h.push_str("</table>");

    let alarms: Vec<&Region> = regions.iter().filter(|r| !r.alarms.is_empty()).collect();
    h.push_str("<h2 id=\"alarms\">Region alarms</h2>");
    if alarms.is_empty() {
        h.push_str("<p>None.</p>");
    } else {
        h.push_str("<table><tr><th>Table</th><th>Region</th><th>Alarm</th></tr>");
        for r in alarms {
            // The tracked rows of the region: what keeps a region over its split size
            // from splitting is a row too wide to cut.
            let links: Vec<String> = large_rows
                .iter()
                .enumerate()
                .filter(|(_, f)| f.region == r.name)
                .map(|(i, f)| {
                    format!(
                        "<a href=\"#{}\">{} ({})</a>",
                        super::status_large_rows::anchor(i),
                        esc(&to_string_binary(&f.row)),
                        size(f.bytes)
                    )
                })
                .collect();
            for a in &r.alarms {
                let rows = if links.is_empty() {
                    String::new()
                } else {
                    format!("; large rows: {}", links.join(", "))
                };
                let _ = write!(
                    h,
                    "<tr class=alarm><td>{}</td><td>{}</td><td>{}{rows}</td></tr>",
                    esc(&r.table),
                    esc(&r.name),
                    esc(a)
                );
            }
        }
        h.push_str("</table>");
    }

    h.push_str("<h2 id=\"regions\">Regions</h2><table><tr><th>Table</th><th>Region</th><th>Start key</th><th>End key</th><th>Store files</th><th>Size</th><th>MemStore</th><th>Reads</th><th>Writes</th></tr>");
    for r in &regions {
        let _ = write!(
            h,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            esc(&r.table),
            esc(&r.name),
            key(&r.start),
            key(&r.end),
            r.store_files,
            size(r.file_bytes),
            size(r.memstore),
            r.reads,
            r.writes
        );
    }
    h.push_str("</table>");

    super::status_large_rows::section(&large_rows, &mut h);
    super::status_large_rows::tombstones_section(&tombstones, &mut h);
    super::status_large_rows::hot_rows_section(&crate::hotspots::hot_rows(master), &mut h);
    super::status_large_rows::versions_section(&crate::hotspots::version_waste(master), &mut h);
    let responses: Vec<_> = master
        .servers()
        .iter()
        .flat_map(|s| s.large_responses())
        .collect();
    super::status_large_rows::responses_section(&responses, &mut h);

    h.push_str("<h2 id=\"largest-rows\">Largest rows in recent flushes and compactions</h2>");
    if largest.is_empty() {
        h.push_str("<p>No flush or compaction yet.</p>");
    } else {
        h.push_str("<table><tr><th>Table</th><th>Row</th><th>Family</th><th>Bytes</th><th>Cells</th><th>Seen by</th></tr>");
        for (t, r) in &largest {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
                esc(t),
                esc(&to_string_binary(&r.row)),
                esc(&to_string_binary(&r.family)),
                size(r.bytes),
                r.cells,
                if r.whole { "major compaction" } else { "flush or minor compaction" }
            );
        }
        h.push_str("</table>");
    }
    h.push_str("</body></html>");
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_sizes() {
        assert_eq!(
            esc("<a href='x'>&</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&lt;/a&gt;"
        );
        assert_eq!(size(512), "512 B");
        assert_eq!(size(3 * 1024 * 1024), "3.0 MiB");
        assert_eq!(key(b""), "∞");
    }
}
