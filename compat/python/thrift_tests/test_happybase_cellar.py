"""happybase against Cellar's Thrift gateway, beyond happybase's own suite: the compact
protocol, filter strings, batched scans of a 100,000-column row, counters under
concurrent clients, reversed scans, errors, and a connection pool.

The gateway is at CELLAR_THRIFT_HOST:CELLAR_THRIFT_PORT (127.0.0.1:9090 by default)."""

import os
import struct
import threading

import happybase
import pytest
from Hbase_thrift import AlreadyExists, IOError as ThriftIOError

HOST = os.environ.get("CELLAR_THRIFT_HOST", "127.0.0.1")
PORT = int(os.environ.get("CELLAR_THRIFT_PORT", "9090"))


def connect(**kw):
    return happybase.Connection(HOST, PORT, **kw)


@pytest.fixture(scope="module")
def table():
    c = connect()
    if b"extra" in c.tables():
        c.delete_table("extra", disable=True)
    c.create_table("extra", {"cf": dict(max_versions=3), "meta": dict()})
    t = c.table("extra")
    with t.batch() as b:
        for i in range(20):
            b.put(b"row%02d" % i, {b"cf:a": b"a%d" % i, b"cf:b": b"b%d" % (i % 3), b"meta:m": b"x"})
    yield t
    c.delete_table("extra", disable=True)
    c.close()


@pytest.mark.parametrize("transport", ["buffered", "framed"])
def test_compact_protocol(transport):
    c = connect(protocol="compact", transport=transport)
    name = "compact_" + transport
    if name.encode() in c.tables():
        c.delete_table(name, disable=True)
    c.create_table(name, {"cf": dict()})
    t = c.table(name)
    t.put(b"r", {b"cf:q": b"\x00\xffbinary"})
    assert t.row(b"r") == {b"cf:q": b"\x00\xffbinary"}
    assert [k for k, _ in t.scan()] == [b"r"]
    assert t.counter_inc(b"r", b"cf:n", 7) == 7
    c.delete_table(name, disable=True)
    c.close()


def test_filter_strings(table):
    rows = [k for k, _ in table.scan(filter="PrefixFilter('row1')")]
    assert rows == [b"row%02d" % i for i in range(10, 20)]
    rows = [k for k, _ in table.scan(filter="SingleColumnValueFilter('cf', 'b', =, 'binary:b1')")]
    assert rows == [b"row%02d" % i for i in range(20) if i % 3 == 1]
    only_keys = list(table.scan(row_prefix=b"row0", filter="KeyOnlyFilter()", columns=[b"cf:a"]))
    assert only_keys[0] == (b"row00", {b"cf:a": b""})
    both = [k for k, _ in table.scan(filter="PrefixFilter('row0') AND ValueFilter(=, 'substring:a5')")]
    assert both == [b"row05"]
    with pytest.raises(ThriftIOError) as e:
        list(table.scan(filter="PrefixFilter('row"))
    assert "does not parse" in str(e.value.message)


def test_batched_scans_of_a_wide_row():
    c = connect()
    if b"wide" in c.tables():
        c.delete_table("wide", disable=True)
    c.create_table("wide", {"cf": dict()})
    t = c.table("wide")
    n = 100_000
    with t.batch(batch_size=20_000) as b:
        for start in range(0, n, 10_000):
            b.put(b"w", {b"cf:%06d" % i: b"%d" % i for i in range(start, start + 10_000)})
    t.put(b"x", {b"cf:after": b"1"})
    row = t.row(b"w")
    assert len(row) == n and row[b"cf:099999"] == b"99999"
    # scan_batching: at most that many cells a result; the row comes in pieces.
    pieces = list(t.scan(scan_batching=1000, batch_size=7))
    wide = [d for k, d in pieces if k == b"w"]
    assert len(wide) == n // 1000
    assert all(len(d) == 1000 for d in wide)
    merged = {}
    for d in wide:
        merged.update(d)
    assert merged == row
    assert pieces[-1] == (b"x", {b"cf:after": b"1"})
    # batch_size alone pages whole rows.
    whole = list(t.scan(batch_size=1))
    assert [k for k, _ in whole] == [b"w", b"x"] and len(whole[0][1]) == n
    c.delete_table("wide", disable=True)
    c.close()


def test_counters_under_concurrent_clients(table):
    errors = []

    def work():
        try:
            c = connect()
            t = c.table("extra")
            for _ in range(250):
                t.counter_inc(b"counter", b"cf:n")
            c.close()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert table.counter_get(b"counter", b"cf:n") == 8 * 250
    raw = table.row(b"counter")[b"cf:n"]
    assert struct.unpack(">q", raw)[0] == 2000


def test_reversed_scans(table):
    rows = [k for k, _ in table.scan(reverse=True, row_start=b"row15", row_stop=b"row10")]
    assert rows == [b"row15", b"row14", b"row13", b"row12", b"row11"]
    rows = [k for k, _ in table.scan(reverse=True, limit=3)]
    assert rows == [b"row19", b"row18", b"row17"]
    sorted_cols = list(table.scan(row_prefix=b"row07", sorted_columns=True))
    assert list(sorted_cols[0][1].keys()) == [b"cf:a", b"cf:b", b"meta:m"]


def test_errors(table):
    c = connect()
    with pytest.raises(ThriftIOError) as e:
        c.table("no_such_table").row(b"r")
    assert "TableNotFoundException" in str(e.value.message)
    with pytest.raises(AlreadyExists):
        c.create_table("extra", {"cf": dict()})
    with pytest.raises(ThriftIOError) as e:
        c.delete_table("extra", disable=False)
    assert "TableNotDisabledException" in str(e.value.message)
    with pytest.raises(ThriftIOError):
        table.put(b"r", {b"nofamily:q": b"v"})
    # The connection is still usable after errors.
    assert table.row(b"row00")[b"cf:a"] == b"a0"
    c.close()


def test_connection_pool_of_ten(table):
    pool = happybase.ConnectionPool(size=10, host=HOST, port=PORT)
    seen = []
    errors = []

    def work(i):
        try:
            for j in range(20):
                with pool.connection() as c:
                    t = c.table("extra")
                    t.put(b"pool%03d" % i, {b"cf:j": b"%d" % j})
                    seen.append(t.row(b"pool%03d" % i)[b"cf:j"])
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(25)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    assert len(seen) == 25 * 20
    assert len(list(table.scan(row_prefix=b"pool"))) == 25
