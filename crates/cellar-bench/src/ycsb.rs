//! YCSB's core workload generators, as YCSB defines them (`CoreWorkload`): hashed key
//! names, the scrambled zipfian and skewed-latest request distributions, uniform scan
//! lengths, and the operation mixes of workloads A–F.

use rand::Rng;

/// YCSB's `Utils.FNVhash64`: FNV-1a over the eight bytes of the value, low byte first,
/// then `Math.abs`.
pub fn fnv_hash64(mut val: u64) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for _ in 0..8 {
        let octet = val & 0xff;
        val >>= 8;
        h ^= octet;
        h = h.wrapping_mul(1_099_511_628_211);
    }
    (h as i64).unsigned_abs()
}

/// `user<hash>`: YCSB's key name with `insertorder=hashed`.
pub fn key_name(n: u64) -> String {
    format!("user{}", fnv_hash64(n))
}

const THETA: f64 = 0.99;
/// zeta(10^10, 0.99), precomputed by YCSB for the scrambled generator.
const ZETAN_SCRAMBLED: f64 = 26.469_028_201_783_02;
const ITEM_COUNT_SCRAMBLED: u64 = 10_000_000_000;

fn zeta(from: u64, to: u64, theta: f64, start: f64) -> f64 {
    let mut sum = start;
    for i in from..to {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// Gray et al.'s zipfian generator over `[0, items)`, as YCSB's `ZipfianGenerator`
/// (item count may grow; zeta is extended incrementally).
#[derive(Debug, Clone)]
pub struct Zipfian {
    items: u64,
    zetan: f64,
    alpha: f64,
    eta: f64,
    zeta2: f64,
}

impl Zipfian {
    pub fn new(items: u64) -> Zipfian {
        let zetan = zeta(0, items, THETA, 0.0);
        Zipfian::with_zeta(items, zetan)
    }

    fn with_zeta(items: u64, zetan: f64) -> Zipfian {
        let zeta2 = 1.0 + 0.5f64.powf(THETA);
        let mut z = Zipfian {
            items,
            zetan,
            alpha: 1.0 / (1.0 - THETA),
            eta: 0.0,
            zeta2,
        };
        z.eta = z.compute_eta();
        z
    }

    fn compute_eta(&self) -> f64 {
        (1.0 - (2.0 / self.items as f64).powf(1.0 - THETA)) / (1.0 - self.zeta2 / self.zetan)
    }

    /// A value in `[0, items)` for `items` ≥ the current count.
    pub fn next_for(&mut self, rng: &mut impl Rng, items: u64) -> u64 {
        if items > self.items {
            self.zetan = zeta(self.items, items, THETA, self.zetan);
            self.items = items;
            self.eta = self.compute_eta();
        }
        let u: f64 = rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(THETA) {
            return 1;
        }
        let v = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.items - 1)
    }
}

/// YCSB's `ScrambledZipfianGenerator` over `[0, count)`: zipfian over 10^10 items with the
/// precomputed zeta, FNV-hashed, modulo the count — hot keys scattered.
#[derive(Debug, Clone)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    count: u64,
}

impl ScrambledZipfian {
    pub fn new(count: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            gen: Zipfian::with_zeta(ITEM_COUNT_SCRAMBLED, ZETAN_SCRAMBLED),
            count: count.max(1),
        }
    }

    pub fn next(&mut self, rng: &mut impl Rng) -> u64 {
        let v = self.gen.next_for(rng, ITEM_COUNT_SCRAMBLED);
        fnv_hash64(v) % self.count
    }
}

/// The operations of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// Request distribution of a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    Zipfian,
    Latest,
}

/// A YCSB core workload.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: char,
    pub mix: Vec<(Op, f64)>,
    pub distribution: Distribution,
    pub max_scan_length: u64,
}

impl Workload {
    /// Workloads A–F as YCSB's `workloads/` files define them.
    pub fn core(name: char) -> Option<Workload> {
        let (mix, distribution) = match name.to_ascii_uppercase() {
            'A' => (
                vec![(Op::Read, 0.5), (Op::Update, 0.5)],
                Distribution::Zipfian,
            ),
            'B' => (
                vec![(Op::Read, 0.95), (Op::Update, 0.05)],
                Distribution::Zipfian,
            ),
            'C' => (vec![(Op::Read, 1.0)], Distribution::Zipfian),
            'D' => (
                vec![(Op::Read, 0.95), (Op::Insert, 0.05)],
                Distribution::Latest,
            ),
            'E' => (
                vec![(Op::Scan, 0.95), (Op::Insert, 0.05)],
                Distribution::Zipfian,
            ),
            'F' => (
                vec![(Op::Read, 0.5), (Op::ReadModifyWrite, 0.5)],
                Distribution::Zipfian,
            ),
            _ => return None,
        };
        Some(Workload {
            name: name.to_ascii_uppercase(),
            mix,
            distribution,
            max_scan_length: 100,
        })
    }

    pub fn insert_proportion(&self) -> f64 {
        self.mix
            .iter()
            .filter(|(o, _)| *o == Op::Insert)
            .map(|(_, p)| p)
            .sum()
    }

    /// Draws the next operation.
    pub fn next_op(&self, rng: &mut impl Rng) -> Op {
        let mut u: f64 = rng.random();
        for (op, p) in &self.mix {
            if u < *p {
                return *op;
            }
            u -= p;
        }
        self.mix.last().map_or(Op::Read, |(o, _)| *o)
    }
}

/// Chooses record numbers for a workload's requests.
#[derive(Debug, Clone)]
pub struct KeyChooser {
    dist: Distribution,
    scrambled: ScrambledZipfian,
    latest: Zipfian,
}

impl KeyChooser {
    /// For `records` loaded records and `ops` operations of `w`.
    pub fn new(w: &Workload, records: u64, ops: u64) -> KeyChooser {
        let expected_new = (ops as f64 * w.insert_proportion() * 2.0) as u64;
        KeyChooser {
            dist: w.distribution,
            scrambled: ScrambledZipfian::new(records + expected_new),
            latest: Zipfian::new(records.max(2)),
        }
    }

    /// A record number ≤ `last` (the highest inserted so far).
    pub fn next(&mut self, rng: &mut impl Rng, last: u64) -> u64 {
        match self.dist {
            Distribution::Zipfian => loop {
                let k = self.scrambled.next(rng);
                if k <= last {
                    return k;
                }
            },
            Distribution::Latest => {
                let items = last + 1;
                last - self.latest.next_for(rng, items).min(last)
            }
        }
    }
}

/// YCSB's random field value: `len` printable bytes (' ' to '~'). One random word
/// gives eight bytes, each scaled onto the 95 printable values (YCSB's own generator
/// takes one random int per six bytes): a draw per byte cost a third of a load's
/// instructions, spent in the client beside the store being measured.
pub fn field_value(rng: &mut impl Rng, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len);
    while out.len() < len {
        for b in rng
            .next_u64()
            .to_le_bytes()
            .into_iter()
            .take(len - out.len())
        {
            out.push(b' ' + ((u16::from(b) * 95) >> 8) as u8);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::SeedableRng;

    /// Values are as long as asked and printable, and use the whole printable range.
    #[test]
    fn field_values_are_printable() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut seen = [false; 256];
        for len in [0usize, 1, 7, 8, 9, 100, 1000] {
            let v = field_value(&mut rng, len);
            assert_eq!(v.len(), len);
            for b in v {
                assert!((b' '..=b'~').contains(&b), "{b}");
                seen[usize::from(b)] = true;
            }
        }
        assert!((b' '..=b'~').all(|b| seen[usize::from(b)]));
    }

    #[test]
    fn keys_are_hashed_like_ycsb() {
        // FNV-1a over little-endian bytes of 0: the offset basis mixed with eight zeros.
        assert_eq!(key_name(0), format!("user{}", fnv_hash64(0)));
        assert_ne!(key_name(1), key_name(2));
        assert!(key_name(12345).starts_with("user"));
    }

    #[test]
    fn zipfian_favours_small_values_and_scrambling_spreads_them() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut z = Zipfian::new(1000);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.next_for(&mut rng, 1000) as usize] += 1;
        }
        assert!(counts[0] > counts[10] && counts[10] > counts[500]);
        let mut s = ScrambledZipfian::new(1000);
        let mut hits = vec![0u32; 1000];
        for _ in 0..100_000 {
            hits[s.next(&mut rng) as usize] += 1;
        }
        let hottest = hits
            .iter()
            .enumerate()
            .max_by_key(|(_, c)| **c)
            .map(|(i, _)| i)
            .unwrap();
        assert_ne!(hottest, 0, "the hottest key is scattered");
        assert!(*hits.iter().max().unwrap() > 1000, "still skewed");
    }

    #[test]
    fn workloads_and_latest() {
        let d = Workload::core('d').unwrap();
        assert_eq!(d.distribution, Distribution::Latest);
        assert!((d.insert_proportion() - 0.05).abs() < 1e-9);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut k = KeyChooser::new(&d, 1000, 1000);
        let recent = (0..10_000).filter(|_| k.next(&mut rng, 999) > 900).count();
        assert!(recent > 5_000, "latest favours recent records: {recent}");
        assert!(Workload::core('G').is_none());
    }
}
