//! The status page's large rows: every row `cellar:large_rows` tracks (families summed),
//! in a table the reader sorts by any column, each with its size over time drawn as an
//! inline SVG chart, its growth a day and the days to 100 MiB,
//! `hbase.table.max.rowsize` and the region split size. Rows are anchored
//! (`#large-row-N`) so a region's alarm links to the rows that keep it from splitting.

use std::fmt::Write as _;

use cellar_types::to_string_binary;

use crate::large_rows::Forecast;

use super::status::{esc, size};

/// A row's anchor on the page.
pub fn anchor(i: usize) -> String {
    format!("large-row-{i}")
}

/// The row's size over time as a small SVG line chart (server-side, no script).
pub fn chart(history: &[(i64, u64)]) -> String {
    const W: f64 = 160.0;
    const H: f64 = 40.0;
    if history.len() < 2 {
        return String::from("<svg class=chart width=160 height=40></svg>");
    }
    let (t0, t1) = (history[0].0, history[history.len() - 1].0);
    let max = history.iter().map(|p| p.1).max().unwrap_or(1).max(1) as f64;
    let span = (t1 - t0).max(1) as f64;
    let points: Vec<String> = history
        .iter()
        .map(|(t, b)| {
            let x = (*t - t0) as f64 / span * (W - 4.0) + 2.0;
            let y = H - 2.0 - (*b as f64 / max) * (H - 4.0);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    format!(
        "<svg class=chart width=160 height=40 viewBox=\"0 0 160 40\" role=img><title>{} to {} over {:.1} days</title><polyline fill=none stroke=\"#36c\" stroke-width=1.5 points=\"{}\"/></svg>",
        size(history[0].1),
        size(history[history.len() - 1].1),
        span / 86_400_000.0,
        points.join(" ")
    )
}

/// Days to a limit, with the date it falls on, and the number to sort by.
fn days(from: i64, d: Option<f64>) -> (String, f64) {
    match d {
        None => ("–".into(), f64::INFINITY),
        Some(d) if d <= 0.0 => ("now".into(), 0.0),
        Some(d) => (
            format!("{d:.0} ({})", crate::large_rows::date_after(from, d)),
            d,
        ),
    }
}

/// Sorts the table by a column when its heading is clicked (numbers by `data-v`).
const SORT: &str = "<script>function lrSort(c){var t=document.getElementById('large-rows-table');var rows=Array.from(t.tBodies[0].rows);var d=t.dataset.col==c&&t.dataset.dir=='asc'?'desc':'asc';t.dataset.col=c;t.dataset.dir=d;rows.sort(function(a,b){var x=a.cells[c].dataset.v,y=b.cells[c].dataset.v;var r=(x!==undefined&&y!==undefined)?(parseFloat(x)-parseFloat(y)):a.cells[c].textContent.localeCompare(b.cells[c].textContent);return d=='asc'?r:-r;});rows.forEach(function(r){t.tBodies[0].appendChild(r);});}</script>";

/// The section.
pub fn section(rows: &[Forecast], h: &mut String) {
    h.push_str("<h2 id=\"large-rows\">Large rows</h2>");
    if rows.is_empty() {
        h.push_str(
            "<p>No row has reached the watch level (cellar.largerow.watch.bytes / .cells).</p>",
        );
        return;
    }
    h.push_str(SORT);
    h.push_str("<table id=\"large-rows-table\"><thead><tr>");
    for (i, name) in [
        "Table",
        "Row",
        "Families",
        "Bytes",
        "Cells",
        "Growth a day",
        "Days to 100 MiB",
        "Days to max row size",
        "Days to split size",
        "Region",
        "Size over time",
    ]
    .iter()
    .enumerate()
    {
        let _ = write!(h, "<th onclick=\"lrSort({i})\">{name}</th>");
    }
    h.push_str("</tr></thead><tbody>");
    for (i, f) in rows.iter().enumerate() {
        let families: Vec<String> = f.families.iter().map(|x| to_string_binary(x)).collect();
        let growth = f.growth_per_day.unwrap_or(0.0);
        let (d1, v1) = days(f.last, f.days_to_large);
        let (d2, v2) = days(f.last, f.days_to_max_row);
        let (d3, v3) = days(f.last, f.days_to_split);
        let _ = write!(
            h,
            "<tr id=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td class=n data-v=\"{}\">{}</td><td class=n data-v=\"{}\">{}</td><td class=n data-v=\"{growth}\">{}</td><td class=n data-v=\"{v1}\">{d1}</td><td class=n data-v=\"{v2}\">{d2}</td><td class=n data-v=\"{v3}\">{d3}</td><td>{}</td><td>{}</td></tr>",
            anchor(i),
            esc(&f.table),
            esc(&to_string_binary(&f.row)),
            esc(&families.join(", ")),
            f.bytes,
            size(f.bytes),
            f.cells,
            f.cells,
            f.growth_per_day
                .map_or("–".to_string(), |g| format!("{}/day", size(g.max(0.0) as u64))),
            esc(&f.region),
            chart(&f.history)
        );
    }
    h.push_str("</tbody></table>");
}

/// The rows whose reads skip a build-up of delete markers.
pub fn tombstones_section(rows: &[crate::hotspots::TombstoneRow], h: &mut String) {
    h.push_str("<h2 id=\"tombstones\">Delete-marker build-up</h2>");
    if rows.is_empty() {
        h.push_str("<p>None over cellar.tombstone.warn.cells.</p>");
        return;
    }
    h.push_str("<table><tr><th>Table</th><th>Row</th><th>Delete markers</th><th>Cells</th><th>Advice</th></tr>");
    for t in rows {
        let _ = write!(
            h,
            "<tr class=alarm><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
            esc(&t.table),
            esc(&to_string_binary(&t.row)),
            t.deletes,
            t.cells,
            esc(t.advice)
        );
    }
    h.push_str("</table>");
}

/// Rows many writers contend for.
pub fn hot_rows_section(rows: &[crate::hotspots::HotRow], h: &mut String) {
    h.push_str("<h2 id=\"hot-rows\">Hot rows</h2>");
    if rows.is_empty() {
        h.push_str("<p>None.</p>");
        return;
    }
    h.push_str("<table><tr><th>Table</th><th>Row</th><th>Lock waits</th><th>Waited</th><th>Timed out</th><th>RegionTooBusy</th><th>Advice</th></tr>");
    for r in rows {
        let c = r.contention;
        let _ = write!(
            h,
            "<tr class=alarm><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{} ms</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
            esc(&r.table),
            esc(&to_string_binary(&r.row)),
            c.waits,
            c.wait_ms,
            c.timeouts,
            c.busy,
            esc(r.advice)
        );
    }
    h.push_str("</table>");
}

/// Families keeping far more versions than their reads ask for.
pub fn versions_section(rows: &[crate::hotspots::VersionWaste], h: &mut String) {
    h.push_str("<h2 id=\"versions\">Versions kept and not read</h2>");
    if rows.is_empty() {
        h.push_str("<p>None.</p>");
        return;
    }
    h.push_str("<table><tr><th>Table</th><th>Family</th><th>VERSIONS</th><th>Most kept</th><th>Most read</th><th>Advice</th></tr>");
    for w in rows {
        let _ = write!(
            h,
            "<tr class=alarm><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td></tr>",
            esc(&w.table),
            esc(&to_string_binary(&w.family)),
            w.configured,
            w.stored,
            w.asked,
            esc(&w.advice)
        );
    }
    h.push_str("</table>");
}

/// The reads logged as too large or too slow (HBase's `responseTooLarge` /
/// `responseTooSlow`), newest first, with the request's shape and the fix.
pub fn responses_section(entries: &[cellar_region::large_log::LargeResponse], h: &mut String) {
    h.push_str("<h2 id=\"large-responses\">Large and slow responses</h2>");
    if entries.is_empty() {
        h.push_str("<p>None over hbase.ipc.warn.response.size / .time.</p>");
        return;
    }
    h.push_str("<table><tr><th>Kind</th><th>Read</th><th>Table</th><th>Row</th><th>Bytes</th><th>Cells</th><th>ms</th><th>Shape</th><th>Fix</th></tr>");
    for e in entries {
        let _ = write!(
            h,
            "<tr class=alarm><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&e.kind),
            e.op,
            esc(&e.table),
            esc(&to_string_binary(&e.row)),
            size(e.bytes),
            e.cells,
            e.millis,
            esc(&e.shape),
            esc(&e.advice)
        );
    }
    h.push_str("</table>");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chart_has_a_point_per_history_entry() {
        let svg = chart(&[(0, 100), (86_400_000, 200), (2 * 86_400_000, 400)]);
        assert!(svg.starts_with("<svg"));
        let points = svg.split("points=\"").nth(1).unwrap();
        assert_eq!(points.split('"').next().unwrap().split(' ').count(), 3);
        assert!(svg.contains("over 2.0 days"));
        assert!(chart(&[(0, 1)]).contains("<svg"));
    }
}
