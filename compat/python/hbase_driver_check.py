"""Drives a Cellar server with hbase-driver (PyPI), a pure-Python native HBase client,
through ZooKeeper. Exits non-zero on the first behaviour that differs from HBase's.

Usage: python hbase_driver_check.py ZK_QUORUM [NAMESPACE]
"""

import sys
import time

from hbasedriver.client.client import Client
from hbasedriver.common.table_name import TableName
from hbasedriver.hbase_constants import HConstants
from hbasedriver.operations.batch import BatchGet, BatchPut
from hbasedriver.operations.column_family_builder import ColumnFamilyDescriptorBuilder
from hbasedriver.operations.delete import Delete
from hbasedriver.operations.get import Get
from hbasedriver.operations.increment import Increment
from hbasedriver.operations.put import Put
from hbasedriver.operations.scan import Scan


def check(ok, what):
    if not ok:
        raise AssertionError("check failed: " + what)


def rows_of(table, scan):
    with table.scan(scan) as scanner:
        return [r.rowkey for r in scanner]


def main():
    quorum = sys.argv[1]
    ns = (sys.argv[2] if len(sys.argv) > 2 else "pd").encode()
    with Client({HConstants.ZOOKEEPER_QUORUM: quorum}) as client:
        with client.get_admin() as admin:
            admin.create_namespace(ns)
            check(ns.decode() in [str(n) if isinstance(n, str) else n.decode() for n in admin.list_namespaces()], "namespace listed")
            tn = TableName.value_of(ns, b"t")
            admin.create_table(tn, [ColumnFamilyDescriptorBuilder(b"f").build()])
            check(admin.table_exists(tn), "table exists")
            check(admin.is_table_enabled(tn), "enabled")
            print("ok ddl")

            with client.get_table(ns, b"t") as t:
                for r in [b"a", b"b", b"k", b"mm", b"n", b"z"]:
                    t.put(Put(r).add_column(b"f", b"q", b"v-" + r))
                row = t.get(Get(b"k"))
                check(row is not None and row.get(b"f", b"q") == b"v-k", "get k")
                check(t.exists(Get(b"n")), "exists")
                check(t.get(Get(b"nope")) is None, "missing row")
                print("ok put-get")

                check(rows_of(t, Scan()) == [b"a", b"b", b"k", b"mm", b"n", b"z"], "full scan")
                check(rows_of(t, Scan(start_row=b"b").with_end_row(b"n", inclusive=False)) == [b"b", b"k", b"mm"], "range scan")
                print("ok scan")

                t.delete(Delete(b"b"))
                check(t.get(Get(b"b")) is None, "deleted")
                print("ok delete")

                bp = BatchPut()
                bp.add_put(Put(b"p1").add_column(b"f", b"q", b"1"))
                bp.add_put(Put(b"p2").add_column(b"f", b"q", b"2"))
                t.batch_put(bp)
                bg = BatchGet([b"p1", b"p2"])
                got = t.batch_get(bg)
                check(got[b"p1"] is not None and got[b"p2"].get(b"f", b"q") == b"2", "batch get")
                print("ok batch")

                check(t.increment(Increment(b"c").add_column(b"f", b"n", 5)) == 5, "increment 5")
                check(t.increment(Increment(b"c").add_column(b"f", b"n", 2)) == 7, "increment 7")
                print("ok increment")

                # check_and_put is not exercised: its request is always over 128 bytes
                # (see the note on filters below).

            # A pre-split table. hbase-driver's own region lookup (a reversed meta scan
            # from "table,row,") takes the region before a split key for the split key
            # itself, and its scanner looks for the next region at last_row + 0x00,
            # which is the same region: so rows equal to split keys and scans that
            # cross a region boundary are avoided here (against HBase as against
            # Cellar, which orders meta rows with HBase's meta comparator).
            sn = TableName.value_of(ns, b"split")
            admin.create_table(sn, [ColumnFamilyDescriptorBuilder(b"f").build()], split_keys=[b"g", b"p"])
            with client.get_table(ns, b"split") as t:
                for r in [b"a", b"h", b"q", b"x"]:
                    t.put(Put(r).add_column(b"f", b"q", r))
                for r in [b"a", b"h", b"q", b"x"]:
                    got = t.get(Get(r))
                    check(got is not None and got.get(b"f", b"q") == r, "get across regions " + r.decode())
                check(rows_of(t, Scan(start_row=b"q")) == [b"q", b"x"], "scan of the last region")
                check(rows_of(t, Scan(start_row=b"h").with_end_row(b"p", inclusive=False)) == [b"h"], "scan of a middle region")
            print("ok regions")
            admin.disable_table(sn)
            admin.delete_table(sn)

            # Server-side filters are not exercised: hbase-driver writes a request's
            # length varint as UTF-8 text, so any request of 128 bytes or more (every
            # scan with a filter, every checkAndPut) is garbled on the wire; HBase, like
            # Cellar, answers such a call with DoNotRetryIOException ("unable to read
            # call parameter") and keeps the connection. HBase's Java client covers
            # filters (compat/java).

            admin.disable_table(tn)
            check(admin.is_table_disabled(tn), "disabled")
            admin.enable_table(tn)
            admin.disable_table(tn)
            admin.delete_table(tn)
            check(not admin.table_exists(tn), "deleted table")
            admin.delete_namespace(ns)
            print("ok cleanup")
    print("ALL OK")


if __name__ == "__main__":
    main()
