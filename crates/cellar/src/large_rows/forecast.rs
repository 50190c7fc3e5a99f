//! Forecasts for tracked rows: a row's size is the sum over its families; its growth
//! per day is the sum of each family's, estimated from its history with the Theil–Sen
//! slope (the median of the slopes between every two points), which a compaction
//! shrinking the row now and then does not throw; and from them the days until the row
//! reaches 100 MiB, `hbase.table.max.rowsize` and the region split size.

use std::collections::BTreeMap;

use super::Entry;

const DAY_MS: f64 = 86_400_000.0;

/// One row (all its tracked families) and where it is heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Forecast {
    pub table: String,
    pub row: Vec<u8>,
    pub families: Vec<Vec<u8>>,
    pub region: String,
    pub bytes: u64,
    pub cells: u64,
    pub first: i64,
    pub last: i64,
    /// Bytes a day (None: not enough history yet).
    pub growth_per_day: Option<f64>,
    /// Days from the last sighting until each limit (None: not growing or unknown;
    /// 0: already there).
    pub days_to_large: Option<f64>,
    pub days_to_max_row: Option<f64>,
    pub days_to_split: Option<f64>,
    /// The history of the total, summed where the families' points meet.
    pub history: Vec<(i64, u64)>,
}

/// The calendar date (UTC, `YYYY-MM-DD`) `days` after `from` (ms).
pub fn date_after(from: i64, days: f64) -> String {
    use chrono::TimeZone;
    let at = from.saturating_add((days * DAY_MS) as i64);
    chrono::Utc
        .timestamp_millis_opt(at)
        .single()
        .map_or_else(|| "-".to_string(), |t| t.format("%Y-%m-%d").to_string())
}

/// The Theil–Sen slope of (time ms, bytes), in bytes a day.
pub fn growth_per_day(history: &[(i64, u64, u64)]) -> Option<f64> {
    let span = history.last()?.0 - history.first()?.0;
    if history.len() < 2 || span < 60_000 {
        return None;
    }
    let mut slopes = Vec::new();
    for (i, a) in history.iter().enumerate() {
        for b in &history[i + 1..] {
            if b.0 > a.0 {
                slopes.push((b.1 as f64 - a.1 as f64) / ((b.0 - a.0) as f64 / DAY_MS));
            }
        }
    }
    if slopes.is_empty() {
        return None;
    }
    slopes.sort_by(f64::total_cmp);
    let n = slopes.len();
    Some(if n % 2 == 1 {
        slopes[n / 2]
    } else {
        (slopes[n / 2 - 1] + slopes[n / 2]) / 2.0
    })
}

fn days_to(bytes: u64, growth: Option<f64>, limit: u64) -> Option<f64> {
    if bytes >= limit {
        return Some(0.0);
    }
    let g = growth.filter(|g| *g > 0.0)?;
    Some((limit - bytes) as f64 / g)
}

/// Forecasts of the rows `entries` hold (families summed), largest first, against
/// `max_row_size` (`hbase.table.max.rowsize`) and `split_size` (the region size that
/// splits).
pub fn forecast(entries: &[Entry], max_row_size: u64, split_size: u64) -> Vec<Forecast> {
    let mut rows: BTreeMap<(String, Vec<u8>), Vec<&Entry>> = BTreeMap::new();
    for e in entries {
        rows.entry((e.table.clone(), e.row.clone()))
            .or_default()
            .push(e);
    }
    let mut out: Vec<Forecast> = rows
        .into_iter()
        .map(|((table, row), fams)| {
            let bytes = fams.iter().map(|e| e.bytes).sum();
            let cells = fams.iter().map(|e| e.cells).sum();
            let growths: Vec<Option<f64>> =
                fams.iter().map(|e| growth_per_day(&e.history)).collect();
            let growth = growths
                .iter()
                .any(Option::is_some)
                .then(|| growths.iter().flatten().sum());
            // The total at each time any family was seen: each family's latest point
            // at or before it.
            let mut times: Vec<i64> = fams
                .iter()
                .flat_map(|e| e.history.iter().map(|p| p.0))
                .collect();
            times.sort_unstable();
            times.dedup();
            let history = times
                .iter()
                .map(|&t| {
                    let total = fams
                        .iter()
                        .filter_map(|e| e.history.iter().rev().find(|p| p.0 <= t).map(|p| p.1))
                        .sum();
                    (t, total)
                })
                .collect();
            let latest = fams.iter().max_by_key(|e| e.last).copied();
            Forecast {
                table,
                row,
                families: fams.iter().map(|e| e.family.clone()).collect(),
                region: latest.map(|e| e.region.clone()).unwrap_or_default(),
                bytes,
                cells,
                first: fams.iter().map(|e| e.first).min().unwrap_or(0),
                last: latest.map_or(0, |e| e.last),
                growth_per_day: growth,
                days_to_large: days_to(bytes, growth, crate::sizing::LARGE_ROW),
                days_to_max_row: days_to(bytes, growth, max_row_size),
                days_to_split: days_to(bytes, growth, split_size),
                history,
            }
        })
        .collect();
    out.sort_by(|a, b| b.bytes.cmp(&a.bytes).then_with(|| a.row.cmp(&b.row)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(family: &str, history: Vec<(i64, u64, u64)>) -> Entry {
        let (last, bytes, cells) = *history.last().unwrap();
        Entry {
            table: "inbox".into(),
            row: b"heavy".to_vec(),
            family: family.as_bytes().to_vec(),
            region: "r1".into(),
            bytes,
            cells,
            deletes: 0,
            tombstones: false,
            first: history[0].0,
            last,
            level: "watch".into(),
            history,
        }
    }

    /// The inbox's heavy user: 1.274 MB a day (2,000 messages of 637 bytes), seen daily
    /// from 20 MB, with a compaction taking 2 MB of old versions away on two days.
    #[test]
    fn the_inbox_row_forecast_comes_out_of_its_history() {
        let mut h = Vec::new();
        for day in 0..30i64 {
            let mut b = 20_000_000 + 1_274_000 * day as u64;
            if day == 10 || day == 20 {
                b -= 2_000_000;
            }
            h.push((day * 86_400_000, b, b / 637));
        }
        let f = forecast(&[entry("m", h)], 1 << 30, 10 << 30);
        let g = f[0].growth_per_day.unwrap();
        assert!((g - 1_274_000.0).abs() < 1.0, "{g}");
        // From 56.9 MB at day 29: 100 MiB in ~38 days, 1 GiB in ~798.
        let bytes = f[0].bytes as f64;
        assert!((f[0].days_to_large.unwrap() - (104_857_600.0 - bytes) / g).abs() < 1e-6);
        assert_eq!(
            f[0].days_to_max_row.unwrap().round(),
            (((1u64 << 30) as f64 - bytes) / g).round()
        );
        // From nothing, as the seeds count: about 80 and 843 days.
        assert_eq!((104_857_600.0 / g).round(), 82.0);
        assert_eq!(((1u64 << 30) as f64 / g).round(), 843.0);
    }

    #[test]
    fn projected_dates() {
        // 2026-11-20 00:00 UTC and 82.3 days on.
        assert_eq!(date_after(1_795_132_800_000, 82.3), "2027-02-10");
        assert_eq!(date_after(1_795_132_800_000, 0.0), "2026-11-20");
    }

    #[test]
    fn families_add_up_and_flat_rows_have_no_date() {
        let day = 86_400_000;
        let a = entry("a", vec![(0, 1000, 1), (day, 2000, 2)]);
        let b = entry("b", vec![(0, 500, 1), (day, 500, 1)]);
        let f = forecast(&[a, b], 1 << 30, 10 << 30);
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].bytes, f[0].cells), (2500, 3));
        assert_eq!(f[0].growth_per_day, Some(1000.0));
        assert_eq!(f[0].history, vec![(0, 1500), (day, 2500)]);
        let flat = entry("a", vec![(0, 1000, 1), (day, 1000, 1)]);
        assert_eq!(forecast(&[flat], 1 << 30, 10 << 30)[0].days_to_large, None);
        let big = entry("a", vec![(0, 200 << 20, 1)]);
        let f = forecast(&[big], 1 << 30, 10 << 30);
        assert_eq!((f[0].days_to_large, f[0].growth_per_day), (Some(0.0), None));
    }
}
