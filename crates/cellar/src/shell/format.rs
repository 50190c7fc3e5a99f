//! Output in the shape HBase's shell prints: two-column tables (`COLUMN  CELL`,
//! `ROW  COLUMN+CELL`), `N row(s)` and the `Took N seconds` line.

use cellar_types::{to_string_binary, Cell};

/// Width of the first column, as HBase's formatter pads it.
const LEFT: usize = 32;

pub fn header(left: &str, right: &str) -> String {
    format!("{left:<LEFT$}{right}\n")
}

pub fn row_line(left: &str, right: &str) -> String {
    format!(" {left:<w$}{right}\n", w = LEFT - 1)
}

/// `timestamp=..., value=...` (with the type for delete markers in raw reads).
pub fn cell_text(c: &Cell) -> String {
    let ty = if c.cell_type().is_delete() {
        format!(", type={}", c.cell_type().name())
    } else {
        String::new()
    };
    format!(
        "timestamp={}{}, value={}",
        c.timestamp(),
        ty,
        to_string_binary(c.value())
    )
}

pub fn column_name(c: &Cell) -> String {
    format!(
        "{}:{}",
        to_string_binary(c.family()),
        to_string_binary(c.qualifier())
    )
}

pub fn rows(n: u64) -> String {
    format!("{n} row(s)\n")
}

pub fn took(secs: f64) -> String {
    format!("Took {secs:.4} seconds\n")
}
