//! Equality and order of the short byte strings keys are made of (rows, families,
//! qualifiers: mostly under 64 bytes), compared in place eight bytes at a time. A
//! library `memcmp` is a call through the dynamic linker's table with a set-up made
//! for long inputs; the read path compares a few such names for every cell it passes.
//! Longer strings go to the library.

use std::cmp::Ordering;

/// Above this many bytes the library's vectorised comparison wins.
const SHORT: usize = 64;

#[inline(always)]
fn word(s: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_be_bytes(w)
}

#[inline(always)]
fn half(s: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&s[at..at + 4]);
    u32::from_be_bytes(w)
}

/// `a == b`.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > SHORT {
        return a == b;
    }
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if word(a, i) != word(b, i) {
                return false;
            }
            i += 8;
        }
        // The last eight bytes, overlapping what was compared.
        return word(a, n - 8) == word(b, n - 8);
    }
    if n >= 4 {
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    a.iter().zip(b).all(|(x, y)| x == y)
}

/// `a.cmp(b)`: unsigned lexicographic, a shorter prefix first.
#[inline]
pub fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    if n > SHORT {
        return a.cmp(b);
    }
    // Windows that overlap bytes already found equal order the strings as the
    // bytes after them do, so a tail is one more word (or half word), not a loop.
    let first_difference = if n >= 8 {
        let mut i = 0;
        loop {
            let (x, y) = (word(a, i), word(b, i));
            if x != y {
                break x.cmp(&y);
            }
            i += 8;
            if i >= n {
                break Ordering::Equal;
            }
            if i + 8 > n {
                i = n - 8;
            }
        }
    } else if n >= 4 {
        half(a, 0)
            .cmp(&half(b, 0))
            .then_with(|| half(a, n - 4).cmp(&half(b, n - 4)))
    } else {
        let mut i = 0;
        loop {
            if i == n {
                break Ordering::Equal;
            }
            if a[i] != b[i] {
                break a[i].cmp(&b[i]);
            }
            i += 1;
        }
    };
    first_difference.then_with(|| a.len().cmp(&b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn near(max: usize) -> impl Strategy<Value = (Vec<u8>, Vec<u8>)> {
        // Pairs that share long prefixes, so every chunk position gets to differ.
        (
            prop::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(0xff)], 0..max),
            0usize..max,
            prop_oneof![Just(b'a'), Just(b'b'), Just(0u8), Just(0xff)],
            prop_oneof![Just(0usize), Just(1), 0..max],
        )
            .prop_map(|(a, at, byte, cut)| {
                let mut b = a.clone();
                if at < b.len() {
                    b[at] = byte;
                } else {
                    b.push(byte);
                }
                b.truncate(b.len().saturating_sub(cut % 2 * cut));
                (a, b)
            })
    }

    proptest! {
        #[test]
        fn agree_with_the_slice_operators((a, b) in near(150)) {
            prop_assert_eq!(same_bytes(&a, &b), a == b);
            prop_assert_eq!(same_bytes(&b, &a), a == b);
            prop_assert_eq!(compare_bytes(&a, &b), a.cmp(&b));
            prop_assert_eq!(compare_bytes(&b, &a), b.cmp(&a));
            prop_assert!(same_bytes(&a, &a.clone()));
            prop_assert_eq!(compare_bytes(&a, &a.clone()), Ordering::Equal);
        }
    }

    #[test]
    fn every_pair_of_short_lengths_and_difference() {
        // Tails of 1 to 7 bytes after whole words, half words and single bytes, in
        // both directions, against the slice order.
        for la in 0..=19usize {
            for lb in 0..=19usize {
                let a: Vec<u8> = (0..la).map(|i| b'a' + (i % 7) as u8).collect();
                let base: Vec<u8> = (0..lb).map(|i| b'a' + (i % 7) as u8).collect();
                for at in 0..lb {
                    for delta in [1u8, 0x80] {
                        for up in [true, false] {
                            let mut b = base.clone();
                            b[at] = if up {
                                b[at].wrapping_add(delta)
                            } else {
                                b[at].wrapping_sub(delta)
                            };
                            assert_eq!(compare_bytes(&a, &b), a.cmp(&b), "{la} {lb} {at}");
                            assert_eq!(compare_bytes(&b, &a), b.cmp(&a), "{la} {lb} {at}");
                        }
                    }
                }
                assert_eq!(compare_bytes(&a, &base), a.cmp(&base), "{la} {lb}");
            }
        }
    }

    #[test]
    fn every_length_up_to_the_library_cut() {
        for n in 0..=SHORT + 2 {
            let a: Vec<u8> = (0..n as u8).collect();
            for at in 0..n {
                let mut b = a.clone();
                b[at] ^= 0x80;
                assert!(!same_bytes(&a, &b), "{n} {at}");
                assert_eq!(compare_bytes(&a, &b), a.cmp(&b), "{n} {at}");
            }
            assert!(same_bytes(&a, &a.clone()));
            assert_eq!(
                compare_bytes(&a, &a[..n.saturating_sub(1)]),
                a.cmp(&a[..n.saturating_sub(1)].to_vec())
            );
        }
    }
}
