//! HBase's LRU dictionary (`LRUDictionary`): the shared state of its dictionary
//! compression, used for tags in encoded data blocks (`hfile.TAGS_COMPRESSED`) and for
//! rows, families, qualifiers and tags in compressed WAL files. Writer and reader keep
//! identical dictionaries by making the same calls in the same order: an entry is
//! written once in full and then by its index, and every use moves it to the front;
//! when full, the least recently used entry's index is reused.

use std::collections::HashMap;

/// The status byte of an entry written in full (`Dictionary.NOT_IN_DICTIONARY`).
pub const NOT_IN_DICTIONARY: u8 = 0xFF;

const NIL: usize = usize::MAX;

/// A fixed-capacity dictionary with least-recently-used replacement.
#[derive(Debug, Clone)]
pub struct LruDictionary {
    capacity: usize,
    entries: Vec<Vec<u8>>,
    index: HashMap<Vec<u8>, u16>,
    prev: Vec<usize>,
    next: Vec<usize>,
    head: usize,
    tail: usize,
}

impl LruDictionary {
    /// A dictionary of at most `capacity` entries (HBase uses `Byte.MAX_VALUE` for
    /// tags in data blocks and `Short.MAX_VALUE` in WAL files).
    pub fn new(capacity: u16) -> LruDictionary {
        LruDictionary {
            capacity: usize::from(capacity),
            entries: Vec::new(),
            index: HashMap::new(),
            prev: Vec::new(),
            next: Vec::new(),
            head: NIL,
            tail: NIL,
        }
    }

    /// Empties the dictionary (at each data block, or a WAL file's start).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.index.clear();
        self.prev.clear();
        self.next.clear();
        self.head = NIL;
        self.tail = NIL;
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry at `idx`, made the most recent; `None` when there is no such entry.
    pub fn get(&mut self, idx: u16) -> Option<&[u8]> {
        let i = usize::from(idx);
        if i >= self.entries.len() {
            return None;
        }
        self.move_to_head(i);
        Some(&self.entries[i])
    }

    /// The writer's lookup: the index of `data` when present (made the most recent);
    /// otherwise `data` is added and `None` returned, as `findEntry` does.
    pub fn find(&mut self, data: &[u8]) -> Option<u16> {
        match self.index.get(data).copied() {
            Some(idx) => {
                self.move_to_head(usize::from(idx));
                Some(idx)
            }
            None => {
                self.add(data);
                None
            }
        }
    }

    /// Adds `data` as the most recent entry, reusing the least recent one's index when
    /// full; empty data is not added (`None`).
    pub fn add(&mut self, data: &[u8]) -> Option<u16> {
        if data.is_empty() || self.capacity == 0 {
            return None;
        }
        let i = if self.entries.len() < self.capacity {
            self.entries.push(data.to_vec());
            self.prev.push(NIL);
            self.next.push(NIL);
            let i = self.entries.len() - 1;
            self.link_head(i);
            i
        } else {
            let i = self.tail;
            let old = std::mem::replace(&mut self.entries[i], data.to_vec());
            self.index.remove(&old);
            self.move_to_head(i);
            i
        };
        // Indexes fit: the capacity is a u16.
        let idx = i as u16;
        self.index.insert(data.to_vec(), idx);
        Some(idx)
    }

    fn unlink(&mut self, i: usize) {
        let (p, n) = (self.prev[i], self.next[i]);
        if p != NIL {
            self.next[p] = n;
        } else {
            self.head = n;
        }
        if n != NIL {
            self.prev[n] = p;
        } else {
            self.tail = p;
        }
        self.prev[i] = NIL;
        self.next[i] = NIL;
    }

    fn link_head(&mut self, i: usize) {
        self.prev[i] = NIL;
        self.next[i] = self.head;
        if self.head != NIL {
            self.prev[self.head] = i;
        }
        self.head = i;
        if self.tail == NIL {
            self.tail = i;
        }
    }

    fn move_to_head(&mut self, i: usize) {
        if self.head == i {
            return;
        }
        self.unlink(i);
        self.link_head(i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_found_by_content_and_index() {
        let mut d = LruDictionary::new(4);
        assert_eq!(d.find(b"a"), None);
        assert_eq!(d.find(b"b"), None);
        assert_eq!(d.find(b"a"), Some(0));
        assert_eq!(d.get(1), Some(&b"b"[..]));
        assert_eq!(d.get(2), None);
        assert_eq!(d.add(b""), None);
        assert_eq!(d.len(), 2);
    }

    #[test]
    fn a_full_dictionary_reuses_the_least_recent_index() {
        let mut d = LruDictionary::new(3);
        for e in [b"x", b"y", b"z"] {
            d.find(e);
        }
        // x is used again, so y is now the least recent.
        assert_eq!(d.find(b"x"), Some(0));
        assert_eq!(d.find(b"w"), None);
        assert_eq!(d.get(1), Some(&b"w"[..]));
        assert_eq!(d.find(b"y"), None, "y was replaced");
        // y took the least recent slot then: z's.
        assert_eq!(d.get(2), Some(&b"y"[..]));
        d.clear();
        assert!(d.is_empty());
        assert_eq!(d.get(0), None);
    }

    #[test]
    fn writer_and_reader_stay_in_step() {
        // The writer finds, the reader adds what was written in full and gets what
        // was written by index: both must end identical through many evictions.
        let mut w = LruDictionary::new(5);
        let mut r = LruDictionary::new(5);
        let mut seed = 7u32;
        for _ in 0..2000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let word = format!("t{}", (seed >> 16) % 9).into_bytes();
            match w.find(&word) {
                None => {
                    r.add(&word);
                }
                Some(idx) => assert_eq!(r.get(idx), Some(word.as_slice())),
            }
        }
    }
}
