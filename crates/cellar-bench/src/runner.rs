//! Runs YCSB's load and run phases against a target with client threads, timing every
//! operation into per-operation HdrHistograms.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use crate::target::{Record, Target};
use crate::ycsb::{field_value, key_name, KeyChooser, Op, Workload};

/// Sizes of a run.
#[derive(Debug, Clone)]
pub struct RunSpec {
    pub records: u64,
    pub operations: u64,
    pub threads: usize,
    pub fields: usize,
    pub field_len: usize,
    pub seed: u64,
}

/// Latencies (µs) of one operation type.
#[derive(Debug, Clone)]
pub struct OpStats {
    pub count: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
}

/// What a phase measured.
#[derive(Debug, Clone)]
pub struct PhaseResult {
    pub phase: String,
    pub target: String,
    pub ops: u64,
    pub seconds: f64,
    pub ops_per_sec: f64,
    pub per_op: BTreeMap<&'static str, OpStats>,
    pub errors: u64,
}

fn record(rng: &mut SmallRng, spec: &RunSpec) -> Record {
    (0..spec.fields)
        .map(|i| (format!("field{i}"), field_value(rng, spec.field_len)))
        .collect()
}

fn new_hist() -> Histogram<u64> {
    // 1 µs .. 100 s, 3 significant digits; creation cannot fail for these bounds.
    Histogram::new_with_bounds(1, 100_000_000, 3).expect("constant histogram bounds are valid")
}

fn summarize(hists: &BTreeMap<Op, Histogram<u64>>) -> BTreeMap<&'static str, OpStats> {
    hists
        .iter()
        .filter(|(_, h)| !h.is_empty())
        .map(|(op, h)| {
            (
                op.name(),
                OpStats {
                    count: h.len(),
                    mean_us: h.mean(),
                    p50_us: h.value_at_quantile(0.50),
                    p95_us: h.value_at_quantile(0.95),
                    p99_us: h.value_at_quantile(0.99),
                    p999_us: h.value_at_quantile(0.999),
                },
            )
        })
        .collect()
}

fn merge(into: &Mutex<BTreeMap<Op, Histogram<u64>>>, from: BTreeMap<Op, Histogram<u64>>) {
    let mut g = into.lock().unwrap_or_else(|e| e.into_inner());
    for (op, h) in from {
        let e = g.entry(op).or_insert_with(new_hist);
        let _ = e.add(&h);
    }
}

/// Inserts records `0..spec.records` (hashed keys, so in random order).
pub fn load(target: &Arc<dyn Target>, spec: &RunSpec) -> PhaseResult {
    let next = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let hists = Arc::new(Mutex::new(BTreeMap::new()));
    let start = Instant::now();
    let handles: Vec<_> = (0..spec.threads)
        .map(|t| {
            let (target, next, errors, hists, spec) = (
                target.clone(),
                next.clone(),
                errors.clone(),
                hists.clone(),
                spec.clone(),
            );
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(spec.seed ^ ((t as u64 + 1) * 0x9E37_79B9));
                let mut local: BTreeMap<Op, Histogram<u64>> = BTreeMap::new();
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= spec.records {
                        break;
                    }
                    let rec = record(&mut rng, &spec);
                    let t0 = Instant::now();
                    if target.insert(&key_name(n), &rec).is_err() {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    let us = t0.elapsed().as_micros().max(1) as u64;
                    let _ = local.entry(Op::Insert).or_insert_with(new_hist).record(us);
                }
                merge(&hists, local);
            })
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
    let seconds = start.elapsed().as_secs_f64();
    let per_op = summarize(&hists.lock().unwrap_or_else(|e| e.into_inner()));
    PhaseResult {
        phase: "load".into(),
        target: target.name(),
        ops: spec.records,
        seconds,
        ops_per_sec: spec.records as f64 / seconds.max(1e-9),
        per_op,
        errors: errors.load(Ordering::Relaxed),
    }
}

/// Runs `spec.operations` operations of workload `w` after a load of `spec.records`.
pub fn run(target: &Arc<dyn Target>, w: &Workload, spec: &RunSpec) -> PhaseResult {
    let next_op = Arc::new(AtomicU64::new(0));
    // Inserted records are numbered on from the load; `last` is the highest acknowledged.
    let insert_seq = Arc::new(AtomicU64::new(spec.records));
    let last = Arc::new(AtomicU64::new(spec.records.saturating_sub(1)));
    let errors = Arc::new(AtomicU64::new(0));
    let hists = Arc::new(Mutex::new(BTreeMap::new()));
    let start = Instant::now();
    let handles: Vec<_> = (0..spec.threads)
        .map(|t| {
            let (target, w, spec) = (target.clone(), w.clone(), spec.clone());
            let (next_op, insert_seq, last, errors, hists) = (
                next_op.clone(),
                insert_seq.clone(),
                last.clone(),
                errors.clone(),
                hists.clone(),
            );
            std::thread::spawn(move || {
                let mut rng =
                    SmallRng::seed_from_u64(spec.seed ^ 0xA5A5 ^ ((t as u64 + 1) * 0x2545_F491));
                let mut chooser = KeyChooser::new(&w, spec.records, spec.operations);
                let mut local: BTreeMap<Op, Histogram<u64>> = BTreeMap::new();
                while next_op.fetch_add(1, Ordering::Relaxed) < spec.operations {
                    let op = w.next_op(&mut rng);
                    let t0 = Instant::now();
                    let ok = match op {
                        Op::Read => {
                            let k = chooser.next(&mut rng, last.load(Ordering::Relaxed));
                            target.read(&key_name(k)).is_ok()
                        }
                        Op::Update => {
                            let k = chooser.next(&mut rng, last.load(Ordering::Relaxed));
                            let f = format!("field{}", rng.random_range(0..spec.fields));
                            let v = field_value(&mut rng, spec.field_len);
                            target.update(&key_name(k), &f, &v).is_ok()
                        }
                        Op::Insert => {
                            let n = insert_seq.fetch_add(1, Ordering::Relaxed);
                            let rec = record(&mut rng, &spec);
                            let ok = target.insert(&key_name(n), &rec).is_ok();
                            last.fetch_max(n, Ordering::Relaxed);
                            ok
                        }
                        Op::Scan => {
                            let k = chooser.next(&mut rng, last.load(Ordering::Relaxed));
                            let len = rng.random_range(1..=w.max_scan_length) as usize;
                            target.scan(&key_name(k), len).is_ok()
                        }
                        Op::ReadModifyWrite => {
                            let k = key_name(chooser.next(&mut rng, last.load(Ordering::Relaxed)));
                            let f = format!("field{}", rng.random_range(0..spec.fields));
                            let v = field_value(&mut rng, spec.field_len);
                            target.read(&k).is_ok() && target.update(&k, &f, &v).is_ok()
                        }
                    };
                    if !ok {
                        errors.fetch_add(1, Ordering::Relaxed);
                    }
                    let us = t0.elapsed().as_micros().max(1) as u64;
                    let _ = local.entry(op).or_insert_with(new_hist).record(us);
                }
                merge(&hists, local);
            })
        })
        .collect();
    for h in handles {
        let _ = h.join();
    }
    let seconds = start.elapsed().as_secs_f64();
    let per_op = summarize(&hists.lock().unwrap_or_else(|e| e.into_inner()));
    PhaseResult {
        phase: format!("workload {}", w.name),
        target: target.name(),
        ops: spec.operations,
        seconds,
        ops_per_sec: spec.operations as f64 / seconds.max(1e-9),
        per_op,
        errors: errors.load(Ordering::Relaxed),
    }
}
