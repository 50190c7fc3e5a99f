"""Prints one row as google-cloud-bigtable reads it: `read_row.py HOST:PORT INSTANCE
TABLE ROW`, each cell as `family:qualifier@micros=value`."""

import os
import sys

os.environ["BIGTABLE_EMULATOR_HOST"] = sys.argv[1]

from google.cloud import bigtable  # noqa: E402

table = bigtable.Client(project="proj", admin=True).instance(sys.argv[2]).table(sys.argv[3])
row = table.read_row(sys.argv[4].encode())
if row is None:
    print("no row")
else:
    for fam in sorted(row.cells):
        for q in sorted(row.cells[fam]):
            for c in row.cells[fam][q]:
                micros = int(round(c.timestamp.timestamp() * 1_000_000))
                print("%s:%s@%d=%s" % (fam, q.decode(), micros, c.value.decode()))
