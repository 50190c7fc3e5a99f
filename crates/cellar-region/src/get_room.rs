//! How much room a Get's result starts with. Rows of a table tend to be alike, so a
//! Get reserves as many cells as the region's last Get returned, up to
//! [`USUAL_MAX`]: more would make every Get of a narrow row pay for one wide row read
//! before it. A row wider than that is remembered by a fingerprint of its key with its
//! cell count, and a Get of that row reserves all of it: a whole-row Get of a row of
//! tens of thousands of cells no longer grows its result a doubling at a time (each
//! step a copy of everything so far into fresh memory the kernel zeroes, which cost
//! more than reading the row).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// The most cells a Get reserves for a row it knows nothing about.
pub(crate) const USUAL_MAX: usize = 256;

/// Bits of the wide-row record that hold its cell count (the rest hold the key's
/// fingerprint).
const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// See the module documentation.
#[derive(Debug, Default)]
pub(crate) struct GetRoom {
    /// Cells of the last row a Get returned.
    usual: AtomicUsize,
    /// The last row wider than [`USUAL_MAX`] a Get returned: its key's fingerprint
    /// above its cell count; 0 for none.
    wide: AtomicU64,
}

/// A fingerprint of a row key (FNV-1a over 8-byte words): equal keys, equal prints.
fn fingerprint(row: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut chunks = row.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    // Never the empty record's 0, whatever the count.
    (h << COUNT_BITS) | (1 << COUNT_BITS)
}

impl GetRoom {
    /// The cells to reserve for a Get of `row`.
    pub(crate) fn room(&self, row: &[u8]) -> usize {
        let wide = self.wide.load(Ordering::Relaxed);
        if wide != 0 && wide & !COUNT_MASK == fingerprint(row) & !COUNT_MASK {
            // An eighth more: a wide row tends to grow between reads, and a result one
            // cell short of its room would copy everything into twice the room.
            let cells = (wide & COUNT_MASK) as usize;
            return cells + cells / 8;
        }
        self.usual.load(Ordering::Relaxed).min(USUAL_MAX)
    }

    /// Learns that a Get of `row` returned `cells` cells. Each figure is written only
    /// when it changes: Gets of alike rows on several threads then share the line
    /// instead of taking it from each other.
    pub(crate) fn note(&self, row: &[u8], cells: usize) {
        if self.usual.load(Ordering::Relaxed) != cells {
            self.usual.store(cells, Ordering::Relaxed);
        }
        let wide = self.wide.load(Ordering::Relaxed);
        if cells > USUAL_MAX {
            let record = (fingerprint(row) & !COUNT_MASK) | (cells as u64).min(COUNT_MASK);
            if record != wide {
                self.wide.store(record, Ordering::Relaxed);
            }
        } else if wide != 0 && wide & !COUNT_MASK == fingerprint(row) & !COUNT_MASK {
            // The wide row has narrowed.
            self.wide.store(0, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::descriptor::{FamilyDescriptor, TableDescriptor};
    use cellar_api::{Get, Put};

    /// A Get of a row read wide before starts with room for all of it (and an eighth
    /// more), from the MemStore and from a store file alike; a narrow row's Get does
    /// not, and a wide row's first Get grows as any result does.
    #[test]
    fn a_wide_rows_get_is_answered_in_the_room_reserved_for_it() {
        let table = TableDescriptor::new("t").with_family(FamilyDescriptor::new("f"));
        let region = crate::test_region::open(table, crate::Config::default(), 1_000);
        let mut put = Put::new("wide");
        for i in 0..1_000 {
            put = put.add_column("f", format!("q{i:04}"), "v");
        }
        region.put(put).unwrap();
        region
            .put(Put::new("narrow").add_column("f", "q", "v"))
            .unwrap();
        for flushed in [false, true] {
            if flushed {
                region.flush().unwrap();
            }
            let first = region.get(&Get::new("wide")).unwrap();
            assert_eq!(first.cells.len(), 1_000);
            let again = region.get(&Get::new("wide")).unwrap();
            assert_eq!(again.cells.len(), 1_000);
            assert_eq!(again.cells.capacity(), 1_125, "flushed: {flushed}");
            let narrow = region.get(&Get::new("narrow")).unwrap();
            assert_eq!(narrow.cells.len(), 1);
            assert!(narrow.cells.capacity() <= USUAL_MAX, "flushed: {flushed}");
            assert_eq!(
                region.get(&Get::new("wide")).unwrap().cells.capacity(),
                1_125
            );
        }
    }

    #[test]
    fn a_wide_row_gets_its_own_room_and_others_the_usual() {
        let room = GetRoom::default();
        assert_eq!(room.room(b"a"), 0);
        room.note(b"a", 12);
        assert_eq!(room.room(b"any"), 12);
        room.note(b"wide-row", 40_000);
        assert_eq!(room.room(b"wide-row"), 45_000, "with an eighth to grow");
        // Another row gets the usual room, capped.
        assert_eq!(room.room(b"narrow"), USUAL_MAX);
        room.note(b"narrow", 3);
        assert_eq!(room.room(b"narrow"), 3);
        assert_eq!(room.room(b"wide-row"), 45_000, "still remembered");
        // The wide row narrowed: forgotten.
        room.note(b"wide-row", 10);
        assert_eq!(room.room(b"wide-row"), 10);
        // Counts past the record's bits are capped, not wrapped.
        room.note(b"huge", usize::MAX);
        let most = COUNT_MASK as usize;
        assert_eq!(room.room(b"huge"), most + most / 8);
    }

    #[test]
    fn fingerprints_tell_keys_apart_and_are_never_empty() {
        let keys: Vec<Vec<u8>> = (0..2_000u32)
            .map(|i| format!("user{i:08}").into_bytes())
            .chain([Vec::new(), vec![0u8; 9], vec![0u8; 8]])
            .collect();
        let prints: std::collections::HashSet<u64> =
            keys.iter().map(|k| fingerprint(k) & !COUNT_MASK).collect();
        assert_eq!(prints.len(), keys.len());
        assert!(keys.iter().all(|k| fingerprint(k) != 0));
    }
}
