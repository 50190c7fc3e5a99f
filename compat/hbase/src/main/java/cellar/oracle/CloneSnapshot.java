package cellar.oracle;

import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Clones a snapshot that was copied into a running HBase's root directory (as an
 * ExportSnapshot to that root leaves it) and prints the new table region by region:
 * "cells of [START, END)" then each cell, raw, every version.
 *
 * <pre>
 *   clone QUORUM SNAPSHOT TABLE
 * </pre>
 */
public final class CloneSnapshot {
  private CloneSnapshot() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4 || !args[0].equals("clone")) {
      System.err.println("usage: clone QUORUM SNAPSHOT TABLE");
      System.exit(2);
    }
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", args[1]);
    TableName tn = TableName.valueOf(args[3]);
    try (Connection conn = ConnectionFactory.createConnection(conf);
      Admin admin = conn.getAdmin();
      Table table = conn.getTable(tn)) {
      admin.cloneSnapshot(args[2], tn);
      List<RegionInfo> regions = new ArrayList<>(admin.getRegions(tn));
      regions.sort(RegionInfo.COMPARATOR);
      for (RegionInfo ri : regions) {
        System.out.println("cells of [" + Bytes.toStringBinary(ri.getStartKey()) + ", "
          + Bytes.toStringBinary(ri.getEndKey()) + ")");
        Scan scan = new Scan().withStartRow(ri.getStartKey()).withStopRow(ri.getEndKey())
          .setRaw(true).readAllVersions();
        try (ResultScanner s = table.getScanner(scan)) {
          for (Result r : s) {
            for (Cell c : r.rawCells()) {
              System.out.println("  " + Bytes.toStringBinary(CellUtil.cloneRow(c)) + "/"
                + Bytes.toStringBinary(CellUtil.cloneFamily(c)) + ":"
                + Bytes.toStringBinary(CellUtil.cloneQualifier(c)) + "/" + c.getTimestamp() + "/"
                + c.getType() + " value=" + Bytes.toStringBinary(CellUtil.cloneValue(c)));
            }
          }
        }
      }
    }
    System.out.println("ALL OK");
  }
}
