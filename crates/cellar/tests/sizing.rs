#![allow(clippy::unwrap_used)]
//! `cellar sizing` on the worked examples HBase users size by hand: a sensor's readings
//! (8-byte ids, 8-byte values: about 47 bytes a cell tall, 45 wide, 52 bucketed by
//! month) and an inbox (637-byte messages, the heaviest user 2,000 a day: 1.27 MB a
//! day, about 80 days to 100 MiB and 843 to 1 GiB in one wide row).

use cellar::sizing::{measured_bytes_per_cell, Bucket, Layout, Proposal};

fn sensor() -> Proposal {
    Proposal {
        entity_bytes: 8,
        family_bytes: 1,
        value_bytes: 8,
        ts_bytes: 8,
        column_bytes: 1,
        separator_bytes: 1,
        entities: 1000,
        cells_per_day: 1440.0,
        heaviest_per_day: 1440.0,
        retention_days: None,
        region_size: 10 << 30,
    }
}

fn inbox() -> Proposal {
    Proposal {
        entity_bytes: 10,
        value_bytes: 586,
        ts_bytes: 20,
        entities: 100_000,
        cells_per_day: 20.0,
        heaviest_per_day: 2000.0,
        ..sensor()
    }
}

#[test]
fn the_sensor_example_sizes_each_layout() {
    let p = sensor();
    let tall = p.sizing(Layout::Tall);
    let wide = p.sizing(Layout::Wide);
    let month = p.sizing(Layout::Bucketed(Bucket::Month));
    assert_eq!(
        (tall.cell_bytes, wide.cell_bytes, month.cell_bytes),
        (47, 45, 52)
    );
    // Tall rows never grow; a month's row is capped; a wide row grows for ever.
    assert_eq!(tall.days_to_large, None);
    assert_eq!(month.days_to_large, None);
    assert!(month.heaviest_row_cap.unwrap() < 3e6);
    assert!(wide.days_to_large.is_some());
    assert_eq!(month.heaviest_row_cells, 1440.0 * 31.0);
    assert_eq!(wide.rows, 1000.0);
    // Measured: NONE is the raw size plus the tags length and sequence id a v3 file
    // stores; the diff encodings shrink the repeated keys.
    let m = measured_bytes_per_cell(&p, Layout::Wide);
    let get = |n: &str| m.iter().find(|(name, _)| *name == n).unwrap().1;
    assert!((get("NONE") - 48.0).abs() < 0.5, "{m:?}");
    assert!(get("FAST_DIFF") < 25.0, "{m:?}");
    assert!(get("PREFIX") < get("NONE"));
    // The coarsest bucket ten times below 100 MiB: a year's row (~24 MB) is not.
    assert_eq!(p.recommended_bucket().unwrap().0, Bucket::Month);
}

#[test]
fn the_inbox_example_comes_out_of_the_numbers() {
    let p = inbox();
    let wide = p.sizing(Layout::Wide);
    assert_eq!(wide.cell_bytes, 637);
    assert!((wide.heaviest_row_bytes_per_day - 1.274e6).abs() < 1e3);
    let large = wide.days_to_large.unwrap();
    assert!((75.0..=85.0).contains(&large), "{large}");
    assert_eq!(wide.days_to_gib.unwrap().round(), 843.0);
    assert_eq!(wide.days_to_region.unwrap().round(), 8428.0);
    // Kept 90 days (a TTL), the row stops short of 1 GiB.
    let kept = Proposal {
        retention_days: Some(90.0),
        ..inbox()
    };
    let w = kept.sizing(Layout::Wide);
    assert!(w.days_to_large.is_some() && w.days_to_gib.is_none());
    assert_eq!(p.recommended_bucket().unwrap().0, Bucket::Day);
    // A heavier entity still: no bucket keeps ten times below 100 MiB.
    let hot = Proposal {
        heaviest_per_day: 1e6,
        ..inbox()
    };
    assert_eq!(hot.recommended_bucket(), None);
}

#[test]
fn the_command_prints_the_figures() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args([
            "sizing",
            "--entity-bytes",
            "10",
            "--value-bytes",
            "586",
            "--ts-bytes",
            "20",
            "--heaviest-per-day",
            "2000",
            "--layout",
            "wide",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for needle in [
        "wide: row key 10 B, qualifier 20 B: 637 B a cell",
        "heaviest row grows 1.27 MB a day",
        "1 GiB in 843 days",
        "the region size (10 GiB) in 8428 days",
        "measured bytes a cell: NONE",
        "recommended: bucket:day",
    ] {
        assert!(text.contains(needle), "{needle:?} in\n{text}");
    }
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_cellar"))
        .args(["sizing", "--entity-bytes", "8", "--value-bytes", "8"])
        .args(["--layout", "bucket:week"])
        .output()
        .unwrap();
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown bucket 'week'"));
}
