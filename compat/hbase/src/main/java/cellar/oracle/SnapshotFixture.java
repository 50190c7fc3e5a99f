package cellar.oracle;

import java.io.File;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ClientSideRegionScanner;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.snapshot.ExportSnapshot;
import org.apache.hadoop.hbase.snapshot.RestoreSnapshotHelper;
import org.apache.hadoop.hbase.snapshot.SnapshotDescriptionUtils;
import org.apache.hadoop.hbase.snapshot.SnapshotManifest;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.CommonFSUtils;
import org.apache.hadoop.util.ToolRunner;

import org.apache.hadoop.hbase.shaded.protobuf.generated.SnapshotProtos.SnapshotDescription;
import org.apache.hadoop.hbase.shaded.protobuf.generated.SnapshotProtos.SnapshotRegionManifest;

/**
 * An exported snapshot of a split table, from a running HBase: makes the table (pre-split in
 * three, two families, compactions off so that a split leaves reference files), writes and
 * flushes cells of every kind, splits one region, writes more, snapshots, and exports the
 * snapshot with HBase's ExportSnapshot. Then lists what HBase reads from the export.
 *
 * <pre>
 *   make QUORUM ROOT OUT the table in the HBase at QUORUM (root directory ROOT), its
 *                        snapshot exported to OUT
 *   list OUT NAME        the manifest of snapshot NAME under OUT, and each region's cells
 *                        as HBase's client-side region scanner reads them (raw, all versions)
 * </pre>
 */
public final class SnapshotFixture {
  static final TableName TABLE = TableName.valueOf("split_t");
  static final String SNAPSHOT = "split_t_snapshot";
  static final byte[] F = Bytes.toBytes("f");
  static final byte[] G = Bytes.toBytes("g");

  private SnapshotFixture() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("make")) {
      make(args[1], new File(args[2]).getAbsoluteFile(), new File(args[3]).getAbsoluteFile());
    } else if (args.length == 3 && args[0].equals("list")) {
      list(new File(args[1]).getAbsoluteFile(), args[2], System.out);
    } else {
      System.err.println("usage: SnapshotFixture make QUORUM ROOTDIR OUT | list OUT NAME");
      System.exit(2);
    }
  }

  static void make(String quorum, File root, File out) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.zookeeper.quorum", quorum);
    try (Connection conn = ConnectionFactory.createConnection(conf);
      Admin admin = conn.getAdmin()) {
      TableDescriptor desc = TableDescriptorBuilder.newBuilder(TABLE)
        .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(5).build())
        .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(G).setMaxVersions(5).build())
        .setCompactionEnabled(false).build();
      admin.createTable(desc, new byte[][] { Bytes.toBytes("g"), Bytes.toBytes("p") });
      try (Table t = conn.getTable(TABLE)) {
        // Round 1: every row, both families; flushed.
        List<Put> puts = new ArrayList<>();
        int i = 0;
        for (char c = 'a'; c <= 'z'; c++) {
          for (int n = 0; n < 2; n++, i++) {
            byte[] row = Bytes.toBytes("" + c + n);
            puts.add(new Put(row).addColumn(F, Bytes.toBytes("q"), 1000 + i, Bytes.toBytes("v" + i))
              .addColumn(G, Bytes.toBytes("x"), 2000 + i, Bytes.toBytes("w" + i)));
          }
        }
        t.put(puts);
        admin.flush(TABLE);
        // Round 2: newer versions, a binary row and value, delete markers; flushed.
        puts.clear();
        i = 0;
        for (char c = 'a'; c <= 'z'; c += 3, i++) {
          puts.add(new Put(Bytes.toBytes(c + "0")).addColumn(F, Bytes.toBytes("q"), 3000 + i,
            Bytes.toBytes("newer" + i)));
        }
        puts.add(new Put(Bytes.toBytesBinary("k\\x00\\xFF")).addColumn(F, Bytes.toBytes(""), 3100,
          Bytes.toBytesBinary("\\x00\\x01")));
        t.put(puts);
        t.delete(new Delete(Bytes.toBytes("b0")).addColumns(F, Bytes.toBytes("q"), 5000));
        t.delete(new Delete(Bytes.toBytes("c1")).addFamily(G, 5001));
        t.delete(new Delete(Bytes.toBytes("m1")).addColumn(F, Bytes.toBytes("q"), 1000 + 25));
        t.delete(new Delete(Bytes.toBytes("n0")).addFamilyVersion(G, 2000 + 26));
        admin.flush(TABLE);
        // Split the middle region [g, p) at k: its daughters refer to its files.
        admin.split(TABLE, Bytes.toBytes("k"));
        for (int tries = 0; admin.getRegions(TABLE).size() < 4; tries++) {
          if (tries > 600) {
            throw new IllegalStateException("the split did not finish");
          }
          Thread.sleep(100);
        }
        // Round 3: in the MemStores until the snapshot flushes them.
        t.put(Arrays.asList(
          new Put(Bytes.toBytes("h5")).addColumn(F, Bytes.toBytes("q"), 6000, Bytes.toBytes("late")),
          new Put(Bytes.toBytes("m5")).addColumn(G, Bytes.toBytes("x"), 6001, Bytes.toBytes("late")),
          new Put(Bytes.toBytes("a5")).addColumn(F, Bytes.toBytes("q"), 6002, Bytes.toBytes("late"))));
      }
      admin.snapshot(SNAPSHOT, TABLE);
    }
    conf.set("hbase.rootdir", root.toURI().toString());
    int rc = ToolRunner.run(conf, new ExportSnapshot(),
      new String[] { "-snapshot", SNAPSHOT, "-copy-to", out.toURI().toString(), "-mappers", "1",
        "-no-checksum-verify" });
    if (rc != 0) {
      throw new IllegalStateException("ExportSnapshot failed: " + rc);
    }
    // Hadoop's checksum side files are not part of the snapshot.
    try (var walk = Files.walk(out.toPath())) {
      for (java.nio.file.Path p : (Iterable<java.nio.file.Path>) walk::iterator) {
        if (p.getFileName().toString().endsWith(".crc")) {
          Files.delete(p);
        }
      }
    }
  }

  static void list(File root, String name, PrintStream out) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    Path rootDir = new Path(root.toURI());
    CommonFSUtils.setRootDir(conf, rootDir);
    FileSystem fs = rootDir.getFileSystem(conf);
    Path snapshotDir = SnapshotDescriptionUtils.getCompletedSnapshotDir(name, rootDir);
    SnapshotDescription desc = SnapshotDescriptionUtils.readSnapshotInfo(fs, snapshotDir);
    SnapshotManifest manifest = SnapshotManifest.open(conf, fs, snapshotDir, desc);
    out.println("snapshot " + desc.getName() + " table=" + desc.getTable() + " type="
      + desc.getType() + " version=" + desc.getVersion() + " families="
      + manifest.getTableDescriptor().getColumnFamilyNames().size());
    List<SnapshotRegionManifest> regions = new ArrayList<>(manifest.getRegionManifests());
    regions.sort((a, b) -> Bytes.compareTo(a.getRegionInfo().getStartKey().toByteArray(),
      b.getRegionInfo().getStartKey().toByteArray()) != 0
        ? Bytes.compareTo(a.getRegionInfo().getStartKey().toByteArray(),
          b.getRegionInfo().getStartKey().toByteArray())
        : Long.compare(a.getRegionInfo().getRegionId(), b.getRegionInfo().getRegionId()));
    for (SnapshotRegionManifest rm : regions) {
      RegionInfo ri = org.apache.hadoop.hbase.shaded.protobuf.ProtobufUtil
        .toRegionInfo(rm.getRegionInfo());
      out.println("region [" + Bytes.toStringBinary(ri.getStartKey()) + ", "
        + Bytes.toStringBinary(ri.getEndKey()) + ") id=" + ri.getRegionId() + " split="
        + ri.isSplit() + " offline=" + ri.isOffline());
      List<String> files = new ArrayList<>();
      for (SnapshotRegionManifest.FamilyFiles ff : rm.getFamilyFilesList()) {
        for (SnapshotRegionManifest.StoreFile sf : ff.getStoreFilesList()) {
          files.add("  file " + ff.getFamilyName().toStringUtf8() + " "
            + (sf.hasReference()
              ? "reference " + sf.getReference().getRange() + " of "
                + sf.getName().substring(sf.getName().indexOf('.') + 1)
              : "hfile"));
        }
      }
      files.sort(null);
      files.forEach(out::println);
    }
    // The cells, region by region, as HBase's client-side scanner reads a snapshot.
    Path restoreDir = new Path(Files.createTempDirectory("restore").toUri());
    RestoreSnapshotHelper.RestoreMetaChanges meta =
      RestoreSnapshotHelper.copySnapshotForScanner(conf, fs, rootDir, restoreDir, name);
    List<RegionInfo> restored = new ArrayList<>(meta.getRegionsToAdd());
    restored.sort(RegionInfo.COMPARATOR);
    for (RegionInfo ri : restored) {
      if (ri.isOffline() && (ri.isSplit() || ri.isSplitParent())) {
        continue;
      }
      out.println("cells of [" + Bytes.toStringBinary(ri.getStartKey()) + ", "
        + Bytes.toStringBinary(ri.getEndKey()) + ")");
      Scan scan = new Scan().setRaw(true).readAllVersions();
      try (ClientSideRegionScanner s =
        new ClientSideRegionScanner(conf, fs, restoreDir, meta.getTableDescriptor(), ri, scan,
          null)) {
        org.apache.hadoop.hbase.client.Result r;
        while ((r = s.next()) != null) {
          for (Cell c : r.rawCells()) {
            out.println("  " + Bytes.toStringBinary(CellUtil.cloneRow(c)) + "/"
              + Bytes.toStringBinary(CellUtil.cloneFamily(c)) + ":"
              + Bytes.toStringBinary(CellUtil.cloneQualifier(c)) + "/" + c.getTimestamp() + "/"
              + c.getType() + " value=" + Bytes.toStringBinary(CellUtil.cloneValue(c)));
          }
        }
      }
    }
  }
}
