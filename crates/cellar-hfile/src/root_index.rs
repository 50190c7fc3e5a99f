//! The root level of a file's block index as a reader keeps it: the entries, and each
//! entry's row prefix side by side (`cellar_types::row_prefix`), so that a seek narrows
//! to the entries of its row's prefix through a few cache lines of 8-byte words before
//! it parses and compares whole keys — a Get searches the root of every file it reads.

use cellar_types::{row_prefix, KeyRef};

use crate::error::Result;
use crate::index::{search, IndexEntry};

#[derive(Debug)]
pub struct RootIndex {
    entries: Vec<IndexEntry>,
    /// Each entry's row prefix; None when a key does not parse (the plain search then
    /// reports it where it meets it).
    prefixes: Option<Vec<u64>>,
}

impl RootIndex {
    pub fn new(entries: Vec<IndexEntry>) -> RootIndex {
        let prefixes = entries
            .iter()
            .map(|e| KeyRef::parse(&e.key).ok().map(|k| row_prefix(k.row)))
            .collect();
        RootIndex { entries, prefixes }
    }

    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// Index of the last entry whose key is ≤ `key`, or None when `key` sorts before
    /// all (as [`search`], which it narrows first: entries of a smaller row prefix
    /// sort before `key`, of a greater one after it).
    pub fn search(&self, key: &KeyRef<'_>, offset: u64) -> Result<Option<usize>> {
        let Some(prefixes) = &self.prefixes else {
            return search(&self.entries, key, offset);
        };
        let kp = row_prefix(key.row);
        let lo = prefixes.partition_point(|p| *p < kp);
        let hi = lo + prefixes[lo..].partition_point(|p| *p <= kp);
        // Entries before `lo` are all ≤ `key`; of those in lo..hi, the first `n`.
        let n = search(&self.entries[lo..hi], key, offset)?.map_or(0, |i| i + 1);
        Ok((lo + n).checked_sub(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn entry(row: &[u8], q: &[u8]) -> IndexEntry {
        IndexEntry {
            key: KeyRef::first_on_column(row, b"f", q).to_vec(),
            offset: 0,
            on_disk_size: 0,
        }
    }

    fn arb_row() -> impl Strategy<Value = Vec<u8>> {
        // Rows sharing long prefixes (and shorter than the prefix's eight bytes).
        prop::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(0u8)], 0..12)
    }

    proptest! {
        #[test]
        fn narrowed_search_is_the_plain_search(
            rows in prop::collection::vec((arb_row(), prop_oneof![Just(b"".to_vec()), Just(b"q".to_vec())]), 0..60),
            probes in prop::collection::vec((arb_row(), prop_oneof![Just(b"".to_vec()), Just(b"p".to_vec()), Just(b"r".to_vec())]), 1..30),
        ) {
            let mut entries: Vec<IndexEntry> = rows.iter().map(|(r, q)| entry(r, q)).collect();
            entries.sort_by(|a, b| {
                cellar_types::compare_keys(&KeyRef::parse(&a.key).unwrap(), &KeyRef::parse(&b.key).unwrap())
            });
            let root = RootIndex::new(entries.clone());
            prop_assert!(root.prefixes.is_some());
            for (r, q) in &probes {
                let key = KeyRef::first_on_column(r, b"f", q);
                prop_assert_eq!(
                    root.search(&key, 0).unwrap(),
                    search(&entries, &key, 0).unwrap()
                );
            }
        }
    }

    #[test]
    fn a_key_that_does_not_parse_is_reported() {
        let mut entries = vec![entry(b"a", b""), entry(b"c", b"")];
        entries[1].key = vec![0xff, 0xff, 1];
        let root = RootIndex::new(entries);
        assert!(root.prefixes.is_none());
        assert!(root
            .search(&KeyRef::first_on_column(b"d", b"f", b""), 0)
            .is_err());
    }
}
