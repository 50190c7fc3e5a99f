"""One google-cloud-bigtable session, printed: run against Google's Bigtable emulator and
against Cellar's Bigtable gateway, the transcripts must be the same
(crates/cellar/tests/bigtable_reference.rs). Server-assigned timestamps print as NOW;
failures as their gRPC status class. `session.py HOST:PORT [write|read]`: `write` makes
the tables and data and prints everything; `read` prints only the reads (after a
restart)."""

import datetime
import sys
import time

import os

os.environ["BIGTABLE_EMULATOR_HOST"] = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "write"

from google.api_core import exceptions  # noqa: E402
from google.cloud import bigtable  # noqa: E402
from google.cloud.bigtable import column_family as cf  # noqa: E402
from google.cloud.bigtable import row_filters as rf  # noqa: E402
from google.cloud.bigtable.row_set import RowRange, RowSet  # noqa: E402

client = bigtable.Client(project="proj", admin=True)
instance = client.instance("inst-a")
table = instance.table("people")


def ts(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc)


def show_ts(t):
    micros = int(t.timestamp() * 1_000_000)
    return "NOW" if micros > 1_800_000_000_000_000 or micros > 1_750_000_000_000_000 else micros


def show_row(r):
    if r is None:
        return None
    out = []
    for fam in sorted(r.cells):
        for q in sorted(r.cells[fam]):
            cells = [(c.value, show_ts(c.timestamp), tuple(c.labels)) for c in r.cells[fam][q]]
            # Cells the server stamped (read-modify-write) are one cell when the writes
            # fell in one millisecond, which replaces, and several otherwise: only the
            # newest (the server's first) is the same on every run.
            now = [c for c in cells if c[1] == "NOW"]
            cells = [c for c in cells if c[1] != "NOW"] + now[:1]
            # Equal cells from an interleave come in an unspecified mutual order.
            out.append((fam, q, sorted(cells, key=lambda c: (-1 if c[1] == "NOW" else 0, c), reverse=False)))
    return (r.row_key, out)


def show(label, value):
    print(label, value)


def attempt(label, f, kind=True):
    try:
        show(label, f())
    except exceptions.GoogleAPICallError as e:
        # The emulator answers some refusals with UNKNOWN (a bare Go error); kind=False
        # compares only that the call failed.
        show(label, "error %s" % (type(e).__name__ if kind else ""))
    except ValueError as e:
        show(label, "client refused: %s" % e)


def read(label, **kw):
    attempt(label, lambda: [show_row(r) for r in table.read_rows(**kw)])


if MODE == "write":
    for t in instance.list_tables():
        t.delete()
    table.create(
        column_families={
            "name": cf.MaxVersionsGCRule(3),
            "stats": cf.GCRuleUnion([cf.MaxVersionsGCRule(2), cf.MaxAgeGCRule(datetime.timedelta(days=36500))]),
            "tags": cf.GCRuleIntersection([cf.MaxVersionsGCRule(1), cf.MaxAgeGCRule(datetime.timedelta(hours=1))]),
            "free": None,
        },
        initial_split_keys=[b"m"],
    )
    attempt("create again", lambda: table.create())
    show("tables", sorted(t.table_id for t in instance.list_tables()))
    fams = table.list_column_families()
    show("families", sorted((k, str(v.gc_rule.to_pb() if v.gc_rule else None).replace("\n", " ")) for k, v in fams.items()))
    other = instance.table("scratch")
    other.create(column_families={"f": None})
    other.column_family("g", cf.MaxVersionsGCRule(5)).create()
    other.column_family("f", cf.MaxVersionsGCRule(1)).update()
    other.column_family("g").delete()
    show("scratch families", sorted((k, str(v.gc_rule.to_pb() if v.gc_rule else None).replace("\n", " ")) for k, v in other.list_column_families().items()))
    other.delete()
    show("tables after delete", sorted(t.table_id for t in instance.list_tables()))
    bare = instance.table("bare")
    bare.create()
    show("bare families", sorted(bare.list_column_families()))
    bare.column_family("f", cf.MaxVersionsGCRule(1)).create()
    show("bare families after", sorted(bare.list_column_families()))
    bare.delete()

    people = [
        (b"alice", b"Alice", b"31", b"x"),
        (b"bob", b"Bob", b"45", b"y"),
        (b"carol", b"Carol", b"27", b"x"),
        (b"dave", b"Dave", b"52", b"z"),
        (b"erin", b"Erin", b"38", b"y"),
        (b"zed", b"Zed", b"99", b"z"),
    ]
    for i, (key, name, age, tag) in enumerate(people):
        row = table.direct_row(key)
        row.set_cell("name", b"first", name, timestamp=ts(1_600_000_000 + i))
        row.set_cell("name", b"first", name.lower(), timestamp=ts(1_500_000_000 + i))
        row.set_cell("stats", b"age", age, timestamp=ts(1_600_000_000))
        row.set_cell("stats", b"score", b"%d" % (i * 10), timestamp=ts(1_600_000_000))
        row.set_cell("free", b"tag", tag, timestamp=ts(1_600_000_000))
        row.commit()
    big = table.direct_row(b"big")
    big.set_cell("free", b"blob", b"0123456789" * 300_000, timestamp=ts(1_600_000_000))
    big.commit()
    server = table.direct_row(b"server-time")
    server.set_cell("free", b"now", b"n")
    server.commit()
    attempt("bad timestamp", lambda: table.direct_row(b"x").set_cell("free", b"q", b"v", timestamp=datetime.datetime.fromtimestamp(1.0005, datetime.timezone.utc)) or None)

    rows = [table.direct_row(b"mr1"), table.direct_row(b"mr2"), table.direct_row(b"mr3")]
    rows[0].set_cell("free", b"q", b"1", timestamp=ts(1_600_000_000))
    rows[1].set_cell("nofamily", b"q", b"2", timestamp=ts(1_600_000_000))
    rows[2].set_cell("free", b"q", b"3", timestamp=ts(1_600_000_000))
    # No retries: the emulator answers an unknown family with UNKNOWN, which the client
    # would retry until its deadline.
    from google.cloud.bigtable.table import DEFAULT_RETRY

    statuses = table.mutate_rows(rows, retry=DEFAULT_RETRY.with_deadline(0.0))
    show("mutate_rows", [(i, s.code == 0) for i, s in enumerate(statuses)])

    rmw = table.append_row(b"counter")
    rmw.increment_cell_value("stats", b"n", 5)
    rmw.append_cell_value("free", b"log", b"a")
    res = rmw.commit()
    show("rmw", sorted((f, q, [v for v, _ in cells]) for f, d in res.items() for q, cells in d.items()))
    # The second read-modify-write falls in a later server millisecond on every run, so
    # it adds a version instead of replacing the first (in one millisecond it would
    # replace it): filters that count cells then see the same row on both servers.
    time.sleep(0.005)
    rmw = table.append_row(b"counter")
    rmw.increment_cell_value("stats", b"n", -2)
    rmw.increment_cell_value("stats", b"n", 10)
    rmw.append_cell_value("free", b"log", b"bc")
    res = rmw.commit()
    show("rmw again", sorted((f, q, [v for v, _ in cells]) for f, d in res.items() for q, cells in d.items()))
    bad = table.append_row(b"alice")
    bad.increment_cell_value("name", b"first", 1)
    attempt("rmw on text", lambda: bad.commit() and None, kind=False)

    cond = table.conditional_row(b"bob", filter_=rf.ValueRegexFilter(b"4."))
    cond.set_cell("free", b"checked", b"yes", timestamp=ts(1_600_000_000), state=True)
    cond.set_cell("free", b"checked", b"no", timestamp=ts(1_600_000_000), state=False)
    show("cam bob", cond.commit())
    cond = table.conditional_row(b"carol", filter_=rf.ValueRegexFilter(b"4."))
    cond.set_cell("free", b"checked", b"yes", timestamp=ts(1_600_000_000), state=True)
    cond.set_cell("free", b"checked", b"no", timestamp=ts(1_600_000_000), state=False)
    show("cam carol", cond.commit())
    cond = table.conditional_row(b"nobody", filter_=None)
    cond.set_cell("free", b"checked", b"absent", timestamp=ts(1_600_000_000), state=False)
    show("cam nobody", cond.commit())

    d = table.direct_row(b"dave")
    d.delete_cell("name", b"first", time_range=None)
    d.commit()
    d = table.direct_row(b"erin")
    d.delete_cells("name", [b"first"], time_range=__import__("google.cloud.bigtable.row_filters", fromlist=["TimestampRange"]).TimestampRange(start=ts(1_500_000_000), end=ts(1_550_000_000)))
    d.commit()
    d = table.direct_row(b"zed")
    d.delete_cells("stats", table.direct_row(b"zed").ALL_COLUMNS)
    d.commit()
    d = table.direct_row(b"mr3")
    d.delete()
    d.commit()

    samples = list(table.sample_row_keys())
    show("samples end with the empty key", samples[-1].row_key == b"")
    show("sample offsets grow", all(a.offset_bytes <= b.offset_bytes for a, b in zip(samples, samples[1:])))

show("one row", show_row(table.read_row(b"alice")))
show("missing row", show_row(table.read_row(b"nobody-here")))
read("all")
read("limit", limit=2)
read("range", row_set=RowSet() if False else None, start_key=b"b", end_key=b"d")
rs = RowSet()
rs.add_row_key(b"zed")
rs.add_row_key(b"alice")
rs.add_row_range(RowRange(start_key=b"c", end_key=b"e", end_inclusive=True))
rs.add_row_range(RowRange(start_key=b"ca", end_key=b"d"))
read("row set", row_set=rs)
read("big", start_key=b"big", end_key=b"big\x00")
F = {
    "row key regex": rf.RowKeyRegexFilter(b"[a-c].*"),
    "family regex": rf.FamilyNameRegexFilter("na.*"),
    "qualifier regex": rf.ColumnQualifierRegexFilter(b"s.*"),
    "value regex": rf.ValueRegexFilter(b"[A-Z].*"),
    "value regex bytes": rf.ValueRegexFilter(b"\\C\\C"),
    "timestamp range": rf.TimestampRangeFilter(rf.TimestampRange(start=ts(1_550_000_000), end=ts(1_600_000_002))),
    "column range": rf.ColumnRangeFilter("stats", start_column=b"age", end_column=b"score", inclusive_end=False),
    "value range": rf.ValueRangeFilter(start_value=b"2", end_value=b"5"),
    "cells per column": rf.CellsColumnLimitFilter(1),
    "cells per row": rf.RowFilterChain([rf.FamilyNameRegexFilter("name"), rf.CellsRowLimitFilter(1)]),
    "cells row offset": rf.RowFilterChain([rf.FamilyNameRegexFilter("stats"), rf.CellsRowOffsetFilter(1)]),
    "strip value": rf.RowFilterChain([rf.FamilyNameRegexFilter("stats"), rf.StripValueTransformerFilter(True)]),
    "label": rf.RowFilterChain([rf.FamilyNameRegexFilter("free"), rf.ApplyLabelFilter("tagged")]),
    "chain": rf.RowFilterChain([rf.FamilyNameRegexFilter("name"), rf.CellsColumnLimitFilter(1), rf.ValueRegexFilter(b"[AB].*")]),
    "interleave": rf.RowFilterUnion([
        rf.RowFilterChain([rf.ColumnQualifierRegexFilter(b"age"), rf.ApplyLabelFilter("one")]),
        rf.RowFilterChain([rf.FamilyNameRegexFilter("stats"), rf.ApplyLabelFilter("two")]),
    ]),
    "condition": rf.ConditionalRowFilter(
        base_filter=rf.RowFilterChain([rf.ColumnQualifierRegexFilter(b"tag"), rf.ValueRegexFilter(b"x")]),
        true_filter=rf.FamilyNameRegexFilter("name"),
        false_filter=rf.FamilyNameRegexFilter("free"),
    ),
    "condition no false": rf.ConditionalRowFilter(
        base_filter=rf.ValueRegexFilter(b"Zed"),
        true_filter=rf.CellsColumnLimitFilter(1),
    ),
    "pass all": rf.PassAllFilter(True),
    "block all": rf.BlockAllFilter(True),
    "bad regex": rf.ValueRegexFilter(b"("),
}
for label, f in F.items():
    read("filter " + label, filter_=f)
read("reversed", end_key=b"e", start_key=b"b", filter_=rf.CellsColumnLimitFilter(1)) if False else None
