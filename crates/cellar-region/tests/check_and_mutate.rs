#![allow(clippy::unwrap_used)]
//! checkAndMutate with a filter condition, as HBase 2.4's `CheckAndMutate.ifMatches
//! (Filter)` (ported from HBase's TestCheckAndMutate: testCheckAndMutateWithFilter,
//! ...WithFilterAndTimeRange, ...WithFilterForOldApi), and the one-request form.

mod common;

use cellar_region::{
    CheckAndMutate, Comparator, CompareOp, Condition, Config, Delete, FamilyDescriptor, FilterSpec,
    Get, ListOp, Mutation, Put, RowMutations, TableDescriptor,
};
use common::Harness;

const ROW: &[u8] = b"12345";

fn scvf(q: &str, v: &str) -> FilterSpec {
    FilterSpec::SingleColumnValue {
        family: b"cf".to_vec(),
        qualifier: q.as_bytes().to_vec(),
        op: CompareOp::Equal,
        comparator: Comparator::Binary(v.as_bytes().to_vec()),
        filter_if_missing: false,
        latest_version_only: true,
        exclude: false,
    }
}

fn both(a: FilterSpec, b: FilterSpec) -> Condition {
    Condition::filter(FilterSpec::List(ListOp::MustPassAll, vec![a, b]))
}

fn harness() -> Harness {
    Harness::new(
        TableDescriptor::new("t").with_family(FamilyDescriptor::new("cf")),
        Config::default(),
    )
}

fn value(h: &Harness, q: &str) -> Option<Vec<u8>> {
    h.region
        .get(&Get::new(ROW).add_column("cf", q))
        .unwrap()
        .value(b"cf", q.as_bytes())
        .map(|v| v.to_vec())
}

#[test]
fn filter_conditions_decide_puts_deletes_and_row_mutations() {
    let h = harness();
    h.region
        .put(
            Put::new(ROW)
                .add_column("cf", "A", "a")
                .add_column("cf", "B", "b")
                .add_column("cf", "C", "c"),
        )
        .unwrap();

    // Put with success.
    let cam = CheckAndMutate::new(ROW, both(scvf("A", "a"), scvf("B", "b")))
        .then(Put::new(ROW).add_column("cf", "D", "d"));
    assert!(h.region.check_and_mutate_request(&cam).unwrap().success);
    assert_eq!(value(&h, "D").as_deref(), Some(&b"d"[..]));

    // Put with failure.
    let cam = CheckAndMutate::new(ROW, both(scvf("A", "a"), scvf("B", "c")))
        .then(Put::new(ROW).add_column("cf", "E", "e"));
    assert!(!h.region.check_and_mutate_request(&cam).unwrap().success);
    assert_eq!(value(&h, "E"), None);

    // Delete with success.
    let cam = CheckAndMutate::new(ROW, both(scvf("A", "a"), scvf("B", "b")))
        .then(Delete::new(ROW).add_columns("cf", "D"));
    assert!(h.region.check_and_mutate_request(&cam).unwrap().success);
    assert_eq!(value(&h, "D"), None);

    // RowMutations with success.
    let rm = RowMutations::new(ROW)
        .with(Put::new(ROW).add_column("cf", "E", "e"))
        .with(Delete::new(ROW).add_columns("cf", "A"));
    let cam = CheckAndMutate {
        row: ROW.to_vec(),
        condition: both(scvf("A", "a"), scvf("B", "b")),
        mutations: rm.mutations,
    };
    assert!(h.region.check_and_mutate_request(&cam).unwrap().success);
    assert_eq!(value(&h, "E").as_deref(), Some(&b"e"[..]));
    assert_eq!(value(&h, "A"), None);
}

#[test]
fn a_filter_condition_sees_only_its_time_range() {
    let h = harness();
    h.region
        .put(Put::new(ROW).add_column_at("cf", "A", 100, "a"))
        .unwrap();
    let cam = CheckAndMutate::new(ROW, Condition::filter(scvf("A", "a")).time_range(0, 101))
        .then(Put::new(ROW).add_column("cf", "B", "b"));
    assert!(h.region.check_and_mutate_request(&cam).unwrap().success);
    assert_eq!(value(&h, "B").as_deref(), Some(&b"b"[..]));
    let cam = CheckAndMutate::new(ROW, Condition::filter(scvf("A", "a")).time_range(0, 100))
        .then(Put::new(ROW).add_column("cf", "C", "c"));
    assert!(!h.region.check_and_mutate_request(&cam).unwrap().success);
    assert_eq!(value(&h, "C"), None);
}

#[test]
fn a_filter_that_leaves_no_cell_fails_and_the_old_form_agrees() {
    let h = harness();
    // No row at all: a filter condition cannot hold.
    let cam = CheckAndMutate::new(ROW, Condition::filter(FilterSpec::FirstKeyOnly))
        .then(Put::new(ROW).add_column("cf", "A", "a"));
    assert!(!h.region.check_and_mutate_request(&cam).unwrap().success);
    h.region
        .put(Put::new(ROW).add_column("cf", "A", "a"))
        .unwrap();
    assert!(h.region.check_and_mutate_request(&cam).unwrap().success);
    // The three-argument form takes the same conditions.
    let (ok, _) = h
        .region
        .check_and_mutate(
            ROW,
            &Condition::filter(scvf("A", "x")),
            &[Mutation::Put(Put::new(ROW).add_column("cf", "Z", "z"))],
        )
        .unwrap();
    assert!(!ok);
    // A put made under a condition is stamped no earlier than the first cell the
    // filtered Get returned (HBase's cellTs).
    h.region
        .put(Put::new(ROW).add_column_at("cf", "F", i64::MAX - 10, "f"))
        .unwrap();
    let only_f = FilterSpec::Qualifier(CompareOp::Equal, Comparator::Binary(b"F".to_vec()));
    let cam = CheckAndMutate::new(ROW, Condition::filter(only_f))
        .then(Put::new(ROW).add_column("cf", "G", "g"));
    assert!(h.region.check_and_mutate_request(&cam).unwrap().success);
    let g = h.region.get(&Get::new(ROW).add_column("cf", "G")).unwrap();
    assert!(g.cells[0].timestamp() >= i64::MAX - 10);
}
