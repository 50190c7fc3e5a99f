//! The ordered set under a MemStore segment: a concurrent skip list that only ever
//! grows while it lives (a segment never removes a cell; it is dropped whole after its
//! flush), so readers walk it without locks, epochs or reference counts, and a writer
//! inserting several keys of one edit keeps a splice — the nodes around its last
//! insert at every level — so a key next to the previous one is placed with a couple of
//! comparisons instead of a descent from the top (the idea of LevelDB's and RocksDB's
//! memtable lists).
//!
//! Keys that fall into groups (a MemStore cell into its row, [`Grouped`]) may be
//! inserted with [`SkipList::insert_grouped`], which keeps each group's first node in a
//! hash index: [`SkipList::group_head`] finds it without a descent.
//!
//! A key inserted right before another of its run ([`Grouped::same_run`]: a MemStore
//! column's newer version before its older ones) keeps a pointer further along that
//! run, so a walk past a hot column's thousands of versions jumps instead of stepping
//! or searching from the top ([`Entry::skip`]). Only such keys carry the pointer.
//!
//! Inserting a key equal to one already present replaces it as a map would: the old
//! node is marked shadowed and skipped by every walk, and the new one goes in front of
//! it. A reader walking meanwhile may see neither; the MemStore only replaces a cell
//! with one of the same sequence id, which no read point covers until its edit is
//! complete.

#![allow(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

use std::alloc::{self, Layout};
use std::cell::Cell as LocalCell;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::marker::PhantomData;
use std::mem;
use std::ops::Bound;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Levels at most: with one node in four reaching the next level, 16 levels order
/// billions of keys with short walks.
const MAX_HEIGHT: usize = 16;

/// A node: its key, then `height` next pointers allocated right after it, and with
/// `has_skip` one more: a later node of the same run.
#[repr(C)]
struct Node<K> {
    key: K,
    shadowed: AtomicBool,
    height: u8,
    has_skip: bool,
    tower: [AtomicPtr<Node<K>>; 0],
}

type Link<K> = Option<NonNull<Node<K>>>;

impl<K> Node<K> {
    fn layout(height: usize) -> Option<Layout> {
        let size = mem::offset_of!(Node<K>, tower)
            .checked_add(height.checked_mul(mem::size_of::<AtomicPtr<Node<K>>>())?)?;
        Layout::from_size_align(size, mem::align_of::<Node<K>>()).ok()
    }

    /// Allocates a node with every next pointer null, and `skip` after them when
    /// given.
    fn alloc(key: K, height: usize, skip: Link<K>) -> NonNull<Node<K>> {
        let slots = height + usize::from(skip.is_some());
        let Some(layout) = Node::<K>::layout(slots) else {
            alloc::handle_alloc_error(Layout::new::<Node<K>>());
        };
        // SAFETY: the layout has a non-zero size (it holds at least the key's fields
        // and the height byte). The fields are written before the pointer is used, and
        // the tower's `slots` slots lie inside the allocation (see `layout`).
        unsafe {
            let Some(node) = NonNull::new(alloc::alloc(layout).cast::<Node<K>>()) else {
                alloc::handle_alloc_error(layout);
            };
            let p = node.as_ptr();
            ptr::addr_of_mut!((*p).key).write(key);
            ptr::addr_of_mut!((*p).shadowed).write(AtomicBool::new(false));
            // `height` ≤ MAX_HEIGHT, which fits a byte.
            ptr::addr_of_mut!((*p).height).write(height as u8);
            ptr::addr_of_mut!((*p).has_skip).write(skip.is_some());
            let tower = ptr::addr_of_mut!((*p).tower).cast::<AtomicPtr<Node<K>>>();
            for level in 0..height {
                tower.add(level).write(AtomicPtr::new(ptr::null_mut()));
            }
            if let Some(s) = skip {
                tower.add(height).write(AtomicPtr::new(s.as_ptr()));
            }
            node
        }
    }

    /// The key of a node of a live list.
    ///
    /// # Safety
    /// `node` must point to a node of a list that outlives `'a`.
    unsafe fn key<'a>(node: NonNull<Node<K>>) -> &'a K {
        &(*node.as_ptr()).key
    }

    /// The next pointer at `level` of a node of a live list.
    ///
    /// # Safety
    /// `node` must point to a node of a list that outlives `'a`, with a height above
    /// `level`. The pointer is computed from the allocation's own pointer, so it may
    /// reach past the `Node` header into the tower.
    unsafe fn slot<'a>(node: NonNull<Node<K>>, level: usize) -> &'a AtomicPtr<Node<K>> {
        let tower = ptr::addr_of!((*node.as_ptr()).tower).cast::<AtomicPtr<Node<K>>>();
        &*tower.add(level)
    }

    /// # Safety
    /// As for [`Node::key`].
    unsafe fn is_shadowed(node: NonNull<Node<K>>) -> bool {
        (*node.as_ptr()).shadowed.load(Ordering::Acquire)
    }

    /// Pointer slots allocated after the node (its height, and its skip).
    ///
    /// # Safety
    /// As for [`Node::key`].
    unsafe fn slots(node: NonNull<Node<K>>) -> usize {
        let n = &*node.as_ptr();
        usize::from(n.height) + usize::from(n.has_skip)
    }

    /// The later node of its run this node points to, if it has one. Written before
    /// the node was linked, never changed after.
    ///
    /// # Safety
    /// As for [`Node::key`].
    unsafe fn skip(node: NonNull<Node<K>>) -> Link<K> {
        let n = &*node.as_ptr();
        if !n.has_skip {
            return None;
        }
        NonNull::new(Node::slot(node, usize::from(n.height)).load(Ordering::Acquire))
    }
}

/// Keys that belong to a group of adjacent keys (a MemStore cell to its row).
pub trait Grouped {
    fn group(&self) -> &[u8];

    /// Whether two keys lie in one run of adjacent keys inside a group (a MemStore
    /// cell's column: its versions and markers).
    fn same_run(&self, other: &Self) -> bool;

    /// Orders two keys of one group (the caller knows their groups are equal): the
    /// key order without comparing the groups again.
    fn cmp_in_group(&self, other: &Self) -> std::cmp::Ordering
    where
        Self: Ord,
    {
        self.cmp(other)
    }
}

/// Shards of the group index: writers of different groups seldom share a lock.
const HEAD_SHARDS: usize = 16;

/// A group's first node.
struct Head<K>(NonNull<Node<K>>);

impl<K> Clone for Head<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Head<K> {}

// SAFETY: a head points to a node of the list that holds the index; it is only
// dereferenced through that list, under the same rules as the list's own links.
unsafe impl<K: Send + Sync> Send for Head<K> {}
// SAFETY: see above.
unsafe impl<K: Send + Sync> Sync for Head<K> {}

/// Rows are hashed with foldhash (seeded at random per list): the index is looked up
/// on every Get, where SipHash's rounds showed (twice: shard, then map).
type RowHasher = foldhash::fast::RandomState;

type HeadShard<K> = RwLock<HashMap<Box<[u8]>, Head<K>, RowHasher>>;

/// Each group's first node, by group (empty unless keys go in with `insert_grouped`).
struct Heads<K> {
    hasher: RowHasher,
    shards: [HeadShard<K>; HEAD_SHARDS],
}

impl<K> Heads<K> {
    fn shard(&self, group: &[u8]) -> &HeadShard<K> {
        // Bits the maps' own hashes (another seed) do not share with the shard's.
        let h = (self.hasher.hash_one(group) >> 32) as usize;
        &self.shards[h % HEAD_SHARDS]
    }
}

fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(|e| e.into_inner())
}

/// An insert-only concurrent ordered set (see the module documentation).
pub struct SkipList<K> {
    head: [AtomicPtr<Node<K>>; MAX_HEIGHT],
    /// This list's number, unique in the process: a [`Position`] names its list by it.
    id: u64,
    /// Levels in use (the tallest node's height; at least 1).
    height: AtomicUsize,
    heads: Heads<K>,
    _owns: PhantomData<Box<Node<K>>>,
}

// SAFETY: the list owns its keys (dropped with it) and hands out only shared
// references to them, so it may move to and be shared with other threads exactly when
// its keys may. Nodes are published with release stores and read with acquire loads;
// none is freed before the list itself is dropped, which takes `&mut self`.
unsafe impl<K: Send + Sync> Send for SkipList<K> {}
// SAFETY: see above.
unsafe impl<K: Send + Sync> Sync for SkipList<K> {}

impl<K> Default for SkipList<K> {
    fn default() -> Self {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        SkipList {
            head: std::array::from_fn(|_| AtomicPtr::new(ptr::null_mut())),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            height: AtomicUsize::new(1),
            heads: Heads {
                hasher: RowHasher::default(),
                shards: std::array::from_fn(|_| {
                    RwLock::new(HashMap::with_hasher(RowHasher::default()))
                }),
            },
            _owns: PhantomData,
        }
    }
}

impl<K: std::fmt::Debug> std::fmt::Debug for SkipList<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SkipList")
            .field("height", &self.height.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

/// The nodes on either side of a writer's last insert at every level, so its next
/// insert nearby starts from there. Only valid for the list it was used with.
pub struct Splice<K> {
    /// Levels filled in; `prev[height]`/`next[height]` are the head and the end.
    height: usize,
    prev: [Link<K>; MAX_HEIGHT + 1],
    next: [Link<K>; MAX_HEIGHT + 1],
}

impl<K> Default for Splice<K> {
    fn default() -> Self {
        Splice {
            height: 0,
            prev: [None; MAX_HEIGHT + 1],
            next: [None; MAX_HEIGHT + 1],
        }
    }
}

/// A key of the list, with the way to the next one.
pub struct Entry<'a, K> {
    node: NonNull<Node<K>>,
    list: &'a SkipList<K>,
}

impl<K> Clone for Entry<'_, K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Entry<'_, K> {}

impl<'a, K> Entry<'a, K> {
    fn new(list: &'a SkipList<K>, node: NonNull<Node<K>>) -> Entry<'a, K> {
        Entry { node, list }
    }

    pub fn key(&self) -> &'a K {
        // SAFETY: an entry borrows its list for 'a.
        unsafe { Node::key(self.node) }
    }

    /// A later key of this key's run (see the module documentation), when this key
    /// was inserted right before another of its run: every key between the two is of
    /// the run too. The key there may have been replaced by an equal one since; it is
    /// a place to step on from, not a key to return.
    pub fn skip(&self) -> Option<Entry<'a, K>> {
        // SAFETY: an entry borrows its list for 'a; a skip points to a node of it.
        let skip = unsafe { Node::skip(self.node) };
        let list = self.list;
        skip.map(|n| Entry::new(list, n))
    }

    /// The next key in order.
    pub fn next(&self) -> Option<Entry<'a, K>> {
        // SAFETY: an entry borrows its list for 'a; every node has level 0.
        let next = unsafe { Node::slot(self.node, 0) }.load(Ordering::Acquire);
        let list = self.list;
        unshadowed(NonNull::new(next)).map(|n| Entry::new(list, n))
    }

    /// The entry without its borrow of the list, to keep beside an owner of the list.
    pub fn position(&self) -> Position<K> {
        Position {
            node: self.node,
            list: self.list.id,
        }
    }
}

/// Where an entry of a list is, kept without borrowing the list (a cursor holds one
/// beside the `Arc` that keeps the list alive, and steps on from it without a new
/// search). It is followed only through [`SkipList::entry`] of the list it came from.
pub struct Position<K> {
    node: NonNull<Node<K>>,
    list: u64,
}

impl<K> Clone for Position<K> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<K> Copy for Position<K> {}

impl<K> std::fmt::Debug for Position<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Position({:p} of list {})", self.node, self.list)
    }
}

// SAFETY: a position is an address and a number; nothing reads through it except
// `SkipList::entry`, which needs a borrow of the list it came from, so sending or
// sharing one shares nothing the list does not already allow.
unsafe impl<K: Send + Sync> Send for Position<K> {}
// SAFETY: see above.
unsafe impl<K: Send + Sync> Sync for Position<K> {}

/// The first node from `link` on that no newer equal key replaced.
fn unshadowed<K>(mut link: Link<K>) -> Link<K> {
    while let Some(n) = link {
        // SAFETY: `link` came from a live list the caller borrows.
        unsafe {
            if !Node::is_shadowed(n) {
                return Some(n);
            }
            link = NonNull::new(Node::slot(n, 0).load(Ordering::Acquire));
        }
    }
    None
}

/// A draw of a node's height: one node in four reaches each next level.
fn random_height() -> usize {
    thread_local! {
        static STATE: LocalCell<u64> = const { LocalCell::new(0) };
    }
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            // Seeded from the thread-local's address: threads draw different heights.
            x = (s as *const LocalCell<u64> as u64) | 1;
            x = x.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        s.set(x);
        let levels = (x.trailing_zeros() / 2) as usize + 1;
        levels.min(MAX_HEIGHT)
    })
}

impl<K: Ord> SkipList<K> {
    pub fn new() -> SkipList<K> {
        SkipList::default()
    }

    pub fn is_empty(&self) -> bool {
        self.head[0].load(Ordering::Acquire).is_null()
    }

    /// The next pointer of `at` (the head when `None`) at `level`.
    fn next_of(&self, at: Link<K>, level: usize) -> Link<K> {
        let slot = match at {
            None => &self.head[level],
            // SAFETY: `at` is a node of this list reached at `level` or above.
            Some(n) => unsafe { Node::slot(n, level) },
        };
        NonNull::new(slot.load(Ordering::Acquire))
    }

    /// The last node whose key `before` accepts (`before` accepts a prefix of the
    /// order; `None` for the head), and the node after it at level 0 as the walk read
    /// it. The two are returned together: reading the node after again could find a
    /// key another writer has inserted since, one that `before` accepts.
    fn find(&self, mut before: impl FnMut(&K) -> bool) -> (Link<K>, Link<K>) {
        let mut at: Link<K> = None;
        // The node found not before at the level above: met again below, it needs no
        // second comparison.
        let mut stop: Link<K> = None;
        let mut after: Link<K> = None;
        let mut level = self.height.load(Ordering::Acquire);
        while level > 0 {
            level -= 1;
            after = None;
            while let Some(n) = self.next_of(at, level) {
                // SAFETY: `n` is a node of this list, which `self` borrows.
                if Some(n) == stop || !before(unsafe { Node::key(n) }) {
                    stop = Some(n);
                    after = Some(n);
                    break;
                }
                at = Some(n);
            }
        }
        (at, after)
    }

    /// The first key at or after `from` (an excluded bound starts after it).
    pub fn seek(&self, from: Bound<&K>) -> Option<Entry<'_, K>> {
        let after = match from {
            Bound::Unbounded => self.next_of(None, 0),
            Bound::Included(k) => self.find(|x| x < k).1,
            Bound::Excluded(k) => self.find(|x| x <= k).1,
        };
        unshadowed(after).map(|n| Entry::new(self, n))
    }

    /// The first key that `before` does not accept (`before` must accept a prefix of
    /// the order: every key before one it accepts). A search by a bound that is not
    /// itself a key, such as a cell key of another representation.
    pub fn seek_where(&self, before: impl FnMut(&K) -> bool) -> Option<Entry<'_, K>> {
        unshadowed(self.find(before).1).map(|n| Entry::new(self, n))
    }

    /// The entry at `pos`, when `pos` was taken from an entry of this list (`None`
    /// for another list's position).
    pub fn entry(&self, pos: Position<K>) -> Option<Entry<'_, K>> {
        // Ids are unique for the life of the process, so a match means `pos.node` is a
        // node of this list, alive as long as the borrow of `self`.
        (pos.list == self.id).then(|| Entry::new(self, pos.node))
    }

    /// The first key.
    pub fn first(&self) -> Option<Entry<'_, K>> {
        self.seek(Bound::Unbounded)
    }

    /// The last key before `to` (an included bound may be it).
    pub fn last_before(&self, to: Bound<&K>) -> Option<Entry<'_, K>> {
        let found = match to {
            Bound::Unbounded => self.find(|_| true),
            Bound::Included(k) => self.find(|x| x <= k),
            Bound::Excluded(k) => self.find(|x| x < k),
        }
        .0?;
        // SAFETY: `found` is a node of this list, which `self` borrows.
        if unsafe { !Node::is_shadowed(found) } {
            return Some(Entry::new(self, found));
        }
        // A replaced key: its replacement is the first node of its equal run.
        // SAFETY: as above.
        let key = unsafe { Node::key(found) };
        unshadowed(self.find(|x| x < key).1).map(|n| Entry::new(self, n))
    }

    /// Whether `key` falls after `prev` and at or before `next`; with `equal` set when
    /// it equals `next`.
    fn brackets(key: &K, prev: Link<K>, next: Link<K>, equal: &mut bool) -> bool {
        if let Some(p) = prev {
            // SAFETY: links of a splice are nodes of the list the caller borrows.
            if unsafe { Node::key(p) } >= key {
                return false;
            }
        }
        match next {
            None => {
                *equal = false;
                true
            }
            // SAFETY: as above.
            Some(n) => match key.cmp(unsafe { Node::key(n) }) {
                std::cmp::Ordering::Greater => false,
                o => {
                    *equal = o == std::cmp::Ordering::Equal;
                    true
                }
            },
        }
    }

    /// From `prev` (before `key`) along `level`: the last node before `key` and the
    /// one after it; `equal` set when that one's key is `key`.
    fn splice_at(
        &self,
        key: &K,
        mut prev: Link<K>,
        level: usize,
        equal: &mut bool,
    ) -> (Link<K>, Link<K>) {
        loop {
            let next = self.next_of(prev, level);
            match next {
                // SAFETY: `n` is a node of this list, which `self` borrows.
                Some(n) => match key.cmp(unsafe { Node::key(n) }) {
                    std::cmp::Ordering::Greater => prev = Some(n),
                    o => {
                        *equal = o == std::cmp::Ordering::Equal;
                        return (prev, next);
                    }
                },
                None => {
                    *equal = false;
                    return (prev, None);
                }
            }
        }
    }

    /// Inserts `key` (replacing an equal key), starting from where `splice` last left
    /// this list (the MemStore inserts with [`SkipList::insert_grouped`]).
    #[cfg(test)]
    pub fn insert(&self, key: K, splice: &mut Splice<K>) {
        self.insert_node(key, splice, |_, _| false);
    }

    /// [`SkipList::insert`], returning the new node; a key that `same_run` puts in one
    /// run with the key after it keeps a skip further along that run.
    fn insert_node(
        &self,
        key: K,
        splice: &mut Splice<K>,
        same_run: impl Fn(&K, &K) -> bool,
    ) -> NonNull<Node<K>> {
        let height = random_height();
        // Every writer reads the height; only a taller node writes it (the line stays
        // shared between writers' cores otherwise).
        let mut levels = self.height.load(Ordering::Acquire);
        if height > levels {
            levels = self.height.fetch_max(height, Ordering::AcqRel).max(height);
        }
        let mut equal = false;
        // The lowest level whose splice still brackets the key: those above do too
        // (a higher level's neighbours lie further out).
        let mut from = if splice.height < levels {
            splice.height = levels;
            splice.prev[levels] = None;
            splice.next[levels] = None;
            levels
        } else {
            let mut l = 0;
            while l < splice.height
                && !Self::brackets(&key, splice.prev[l], splice.next[l], &mut equal)
            {
                l += 1;
            }
            l
        };
        while from > 0 {
            from -= 1;
            let (p, n) = self.splice_at(&key, splice.prev[from + 1], from, &mut equal);
            splice.prev[from] = p;
            splice.next[from] = n;
        }
        // The node after this key at level 0 goes after it whatever another writer
        // links meanwhile (nodes are never removed), so a skip to it or further along
        // its run points forward.
        let skip = splice.next[0].filter(|n| {
            // SAFETY: links of a splice are nodes of this list, which `self` borrows.
            same_run(&key, unsafe { Node::key(*n) })
        });
        // SAFETY: as above.
        let skip = skip.map(|n| unsafe { Node::skip(n) }.unwrap_or(n));
        let node = Node::alloc(key, height, skip);
        // SAFETY: `node` is ours until linked; linked nodes live as long as the list.
        let key = unsafe { Node::key(node) };
        for level in 0..height {
            loop {
                if level == 0 && equal {
                    if let Some(old) = splice.next[0] {
                        // SAFETY: `old` is a node of this list, which `self` borrows.
                        unsafe { (*old.as_ptr()).shadowed.store(true, Ordering::Release) };
                    }
                }
                let next = splice.next[level].map_or(ptr::null_mut(), NonNull::as_ptr);
                // SAFETY: `node` has `height` levels; `prev` is a node of this list
                // (or the head) reached at `level`.
                unsafe { Node::slot(node, level) }.store(next, Ordering::Relaxed);
                let prev_slot = match splice.prev[level] {
                    None => &self.head[level],
                    // SAFETY: as above.
                    Some(p) => unsafe { Node::slot(p, level) },
                };
                if prev_slot
                    .compare_exchange(next, node.as_ptr(), Ordering::Release, Ordering::Relaxed)
                    .is_ok()
                {
                    break;
                }
                // Another writer linked a node in between: look again from `prev`.
                let (p, n) = self.splice_at(key, splice.prev[level], level, &mut equal);
                splice.prev[level] = p;
                splice.next[level] = n;
            }
            splice.prev[level] = Some(node);
        }
        node
    }

    /// Inserts `keys` as [`SkipList::insert`] does, then records for each group they
    /// touch the first of its nodes, if it goes before the group's recorded head (one
    /// index update per run of a group's keys, not per key). A key inserted goes into
    /// the index only after it is linked, so a reader meanwhile may start after it:
    /// the MemStore's keys become readable only once their edit completes, after this.
    /// Returns how many groups it added to the index, and the bytes of their names.
    pub fn insert_grouped(
        &self,
        keys: impl Iterator<Item = K>,
        splice: &mut Splice<K>,
    ) -> (usize, usize)
    where
        K: Grouped,
    {
        let mut added = (0, 0);
        let mut add = |bytes: Option<usize>| {
            if let Some(b) = bytes {
                added.0 += 1;
                added.1 += b;
            }
        };
        let mut run: Option<NonNull<Node<K>>> = None;
        for key in keys {
            let node = self.insert_node(key, splice, K::same_run);
            run = match run {
                // SAFETY: both are nodes of this list, which `self` borrows.
                Some(first) => unsafe {
                    let (a, b) = (Node::key(first), Node::key(node));
                    if a.group() != b.group() {
                        add(self.offer_head(first));
                        Some(node)
                    } else if b.cmp_in_group(a) != std::cmp::Ordering::Greater {
                        // An equal key replaced the first: the newer node leads.
                        Some(node)
                    } else {
                        Some(first)
                    }
                },
                None => Some(node),
            };
        }
        if let Some(first) = run {
            add(self.offer_head(first));
        }
        added
    }

    /// Records `node` as its group's head unless the recorded one goes before it;
    /// the bytes of the group's name when it is new to the index.
    fn offer_head(&self, node: NonNull<Node<K>>) -> Option<usize>
    where
        K: Grouped,
    {
        // SAFETY: `node` is a node of this list, which `self` borrows; so are the
        // recorded heads.
        let key = unsafe { Node::key(node) };
        let shard = self.heads.shard(key.group());
        // SAFETY: as above.
        let goes_before = |h: Head<K>| unsafe { Node::key(h.0) } < key;
        if read(shard)
            .get(key.group())
            .is_some_and(|h| goes_before(*h))
        {
            return None;
        }
        let mut map = write(shard);
        match map.get_mut(key.group()) {
            Some(h) if goes_before(*h) => None,
            Some(h) => {
                *h = Head(node);
                None
            }
            None => {
                map.insert(key.group().into(), Head(node));
                Some(key.group().len())
            }
        }
    }

    /// The first key of `group` (from the index kept by `insert_grouped`), or `None`
    /// when no key of it went in that way.
    pub fn group_head(&self, group: &[u8]) -> Option<Entry<'_, K>>
    where
        K: Grouped,
    {
        let head = read(self.heads.shard(group)).get(group).copied()?;
        unshadowed(Some(head.0)).map(|n| Entry::new(self, n))
    }

    /// Every key in order.
    pub fn iter(&self) -> Iter<'_, K> {
        Iter { at: self.first() }
    }
}

/// A walk over a list's keys in order.
pub struct Iter<'a, K> {
    at: Option<Entry<'a, K>>,
}

impl<'a, K> Iterator for Iter<'a, K> {
    type Item = &'a K;

    fn next(&mut self) -> Option<&'a K> {
        let at = self.at?;
        self.at = at.next();
        Some(at.key())
    }
}

impl<K> Drop for SkipList<K> {
    fn drop(&mut self) {
        let mut link = NonNull::new(*self.head[0].get_mut());
        while let Some(n) = link {
            // SAFETY: every node is linked at level 0 exactly once, and nothing else
            // can reach the list while it is dropped (`&mut self`); each node is freed
            // with the layout it was allocated with.
            unsafe {
                link = NonNull::new(Node::slot(n, 0).load(Ordering::Relaxed));
                let slots = Node::slots(n);
                ptr::drop_in_place(ptr::addr_of_mut!((*n.as_ptr()).key));
                if let Some(layout) = Node::<K>::layout(slots) {
                    alloc::dealloc(n.as_ptr().cast::<u8>(), layout);
                }
            }
        }
    }
}

#[cfg(test)]
#[path = "skiplist_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "skiplist_group_tests.rs"]
mod group_tests;
