//! Output in the shape HBase 2.5+'s shell prints (`formatter.rb`, `table.rb#to_string`):
//! two-column tables (`COLUMN  CELL`, `ROW  COLUMN+CELL`) whose columns are always
//! separated by a space, unpadded when the output is not a terminal and wrapped to the
//! terminal's width (a quarter for the first column) when it is; timestamps as local ISO
//! date-times (`2024-05-01T12:30:05.123`, Java's `LocalDateTime`), or epoch milliseconds
//! with `hbase.shell.timestamp.format.epoch`; delete markers as `type=<kind>` without a
//! value; `N row(s)` and `Took N seconds`.

use cellar_types::{to_string_binary, Cell};
use chrono::{Offset, TimeZone};

/// How a shell prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// The terminal's width; 0 when the output is not a terminal.
    pub width: usize,
    /// Timestamps as epoch milliseconds.
    pub epoch: bool,
}

impl Style {
    /// The style of a script (output not a terminal).
    pub fn script(epoch: bool) -> Style {
        Style { width: 0, epoch }
    }

    fn widths(&self) -> (usize, usize) {
        if self.width == 0 {
            (0, 0)
        } else {
            let left = self.width / 4;
            (left, self.width.saturating_sub(left + 2).max(1))
        }
    }

    fn two_columns(&self, left: &str, right: &str, inset: bool) -> String {
        let (w1, w2) = self.widths();
        let a = split(w1, left);
        let b = split(w2, right);
        let mut out = String::new();
        for i in 0..a.len().max(b.len()) {
            if inset {
                out.push(' ');
            }
            let first = a.get(i).map_or("", String::as_str);
            out.push_str(first);
            // The first column is padded to its width (the last one is not: trailing
            // padding would only hide a value's own trailing spaces).
            for _ in first.chars().count()..w1 {
                out.push(' ');
            }
            if !inset {
                out.push(' ');
            }
            out.push(' ');
            out.push_str(b.get(i).map_or("", String::as_str));
            out.push('\n');
        }
        out
    }

    /// The header line of a table.
    pub fn header(&self, left: &str, right: &str) -> String {
        self.two_columns(left, right, false)
    }

    /// One row of a table.
    pub fn row_line(&self, left: &str, right: &str) -> String {
        self.two_columns(left, right, true)
    }

    /// `timestamp=…, value=…`, or `timestamp=…, type=<kind>` for a delete marker.
    pub fn cell_text(&self, c: &Cell) -> String {
        let ts = self.timestamp(c.timestamp());
        if c.cell_type().is_delete() {
            format!("timestamp={ts}, type={}", c.cell_type().name())
        } else {
            format!("timestamp={ts}, value={}", to_string_binary(c.value()))
        }
    }

    /// A cell timestamp as the shell prints it.
    pub fn timestamp(&self, millis: i64) -> String {
        if self.epoch {
            millis.to_string()
        } else {
            local_date_time(millis)
        }
    }
}

/// Cuts `s` into pieces of `width` characters (all of it when `width` is 0).
fn split(width: usize, s: &str) -> Vec<String> {
    if width == 0 || s.is_empty() {
        return vec![s.to_string()];
    }
    let chars: Vec<char> = s.chars().collect();
    chars.chunks(width).map(|c| c.iter().collect()).collect()
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

/// The offset of the local time zone at `millis` (seconds east of UTC).
fn local_offset_secs(millis: i64) -> i64 {
    // chrono covers about ±262,000 years; beyond, the offset of the nearest end.
    let clamped = millis.clamp(-8_000_000_000_000_000, 8_000_000_000_000_000);
    match chrono::DateTime::from_timestamp_millis(clamped) {
        Some(utc) => chrono::Local
            .offset_from_utc_datetime(&utc.naive_utc())
            .fix()
            .local_minus_utc() as i64,
        None => 0,
    }
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `millis` as Java's `LocalDateTime.ofInstant(…, systemDefault()).toString()`:
/// `uuuu-MM-dd'T'HH:mm`, then `:ss` when seconds or millis are set, then `.SSS` when
/// millis are; years beyond 9999 carry a `+`.
pub fn local_date_time(millis: i64) -> String {
    let local = millis as i128 + local_offset_secs(millis) as i128 * 1000;
    let days = local.div_euclid(86_400_000) as i64;
    let ms_of_day = local.rem_euclid(86_400_000) as i64;
    let (y, m, d) = civil_from_days(days);
    let (h, min) = (ms_of_day / 3_600_000, ms_of_day / 60_000 % 60);
    let (s, ms) = (ms_of_day / 1000 % 60, ms_of_day % 1000);
    let year = if y > 9999 {
        format!("+{y}")
    } else if y < 0 {
        format!("-{:04}", -y)
    } else {
        format!("{y:04}")
    };
    let mut out = format!("{year}-{m:02}-{d:02}T{h:02}:{min:02}");
    if s > 0 || ms > 0 {
        out.push_str(&format!(":{s:02}"));
    }
    if ms > 0 {
        out.push_str(&format!(".{ms:03}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_local_date_time_form() {
        // The local zone is the test process's; compare at an offset of zero.
        let off = |ms: i64| ms - local_offset_secs(ms) * 1000;
        assert_eq!(local_date_time(off(0)), "1970-01-01T00:00");
        assert_eq!(local_date_time(off(1_000)), "1970-01-01T00:00:01");
        assert_eq!(
            local_date_time(off(1_714_566_605_123)),
            "2024-05-01T12:30:05.123"
        );
        assert_eq!(local_date_time(off(1_714_566_600_000)), "2024-05-01T12:30");
        assert_eq!(
            local_date_time(off(1_714_566_600_010)),
            "2024-05-01T12:30:00.010"
        );
        assert_eq!(local_date_time(off(-1)), "1969-12-31T23:59:59.999");
        assert_eq!(local_date_time(off(951_782_400_000)), "2000-02-29T00:00");
        assert_eq!(
            local_date_time(off(i64::MAX)),
            "+292278994-08-17T07:12:55.807"
        );
        assert_eq!(
            local_date_time(off(-62_135_596_800_000)),
            "0001-01-01T00:00"
        );
        assert_eq!(
            local_date_time(off(-62_167_219_200_000)),
            "0000-01-01T00:00"
        );
        assert_eq!(
            local_date_time(off(-62_198_755_200_000)),
            "-0001-01-01T00:00"
        );
    }

    #[test]
    fn columns_are_always_separated() {
        let s = Style::script(true);
        assert_eq!(s.header("ROW", "COLUMN+CELL"), "ROW  COLUMN+CELL\n");
        let long = "r".repeat(50);
        assert_eq!(
            s.row_line(&long, "column=f:q"),
            format!(" {long} column=f:q\n")
        );
        let t = Style {
            width: 40,
            epoch: true,
        };
        // A quarter of the width for the first column, wrapped; one space between.
        assert_eq!(
            t.row_line("abcdefghijklmno", "v"),
            " abcdefghij v\n klmno      \n"
        );
    }
}
