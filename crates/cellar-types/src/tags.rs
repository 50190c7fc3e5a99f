//! A cell's tags one by one. Tags are stored back to back, each as a 2-byte length
//! (of what follows), a type byte and the value (HBase's `Tag`): the TTL and ACL of a
//! cell, visibility labels, and whatever else a writer attached.

/// The tags in `raw`, each as its type and value bytes (what the length covers);
/// `None` when a length runs past the end or a tag has no type byte.
pub fn tag_bodies(raw: &[u8]) -> Option<Vec<&[u8]>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < raw.len() {
        let len = usize::from(u16::from_be_bytes([*raw.get(pos)?, *raw.get(pos + 1)?]));
        if len == 0 {
            return None;
        }
        out.push(raw.get(pos + 2..pos + 2 + len)?);
        pos += 2 + len;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_split_and_malformed_ones_are_refused() {
        let raw = [0, 2, 8, b'x', 0, 1, 2];
        assert_eq!(tag_bodies(&raw), Some(vec![&[8, b'x'][..], &[2][..]]));
        assert_eq!(tag_bodies(&[]), Some(vec![]));
        assert_eq!(tag_bodies(&[0, 5, 1]), None);
        assert_eq!(tag_bodies(&[0]), None);
        assert_eq!(tag_bodies(&[0, 0]), None);
    }
}
