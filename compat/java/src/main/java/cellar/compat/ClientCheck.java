package cellar.compat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.ColumnRangeFilter;
import org.apache.hadoop.hbase.protobuf.ProtobufUtil;
import org.apache.hadoop.hbase.protobuf.generated.ClientProtos;
import org.apache.hadoop.hbase.protobuf.generated.MultiRowMutationProtos;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Drives a Cellar server with HBase's own Java client and fails loudly on the first
 * behaviour that differs from HBase's. Usage: ClientCheck registry HOST:PORT, or
 * ClientCheck zookeeper QUORUM.
 */
public final class ClientCheck {
  private static final byte[] F = Bytes.toBytes("f");

  private static void check(boolean ok, String what) {
    if (!ok) {
      throw new AssertionError("check failed: " + what);
    }
  }

  private static String str(byte[] b) {
    return b == null ? "null" : Bytes.toStringBinary(b);
  }

  public static void main(String[] args) throws Exception {
    Configuration conf = HBaseConfiguration.create();
    if (args[0].equals("registry")) {
      conf.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
      conf.set("hbase.client.bootstrap.servers", args[1]);
    } else {
      conf.set("hbase.zookeeper.quorum", args[1]);
    }
    conf.setInt("hbase.client.retries.number", 6);
    conf.setInt("hbase.client.pause", 50);
    conf.setInt("hbase.rpc.timeout", 20000);
    conf.setInt("hbase.client.operation.timeout", 60000);
    String ns = args.length > 2 ? args[2] : "jc";
    try (Connection conn = ConnectionFactory.createConnection(conf); Admin admin = conn.getAdmin()) {
      System.out.println("ok connect");
      admin.createNamespace(NamespaceDescriptor.create(ns).build());
      check(Arrays.stream(admin.listNamespaceDescriptors()).anyMatch(d -> d.getName().equals(ns)), "namespace listed");
      TableName tn = TableName.valueOf(ns, "t");
      TableDescriptor desc = TableDescriptorBuilder.newBuilder(tn)
          .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(F).setMaxVersions(3).build())
          .build();
      admin.createTable(desc, new byte[][] {Bytes.toBytes("m")});
      check(admin.tableExists(tn), "table exists");
      check(admin.isTableEnabled(tn), "table enabled");
      TableDescriptor got = admin.getDescriptor(tn);
      check(got.getColumnFamily(F).getMaxVersions() == 3, "VERSIONS round-trips: " + got);
      check(Arrays.asList(admin.listTableNames()).contains(tn), "table listed");
      System.out.println("ok ddl");

      try (Table t = conn.getTable(tn)) {
        List<Put> puts = new ArrayList<>();
        for (String r : new String[] {"a", "b", "k", "m", "n", "z"}) {
          puts.add(new Put(Bytes.toBytes(r)).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("v-" + r)));
        }
        t.put(puts);
        Result r = t.get(new Get(Bytes.toBytes("k")));
        check("v-k".equals(Bytes.toString(r.getValue(F, Bytes.toBytes("q")))), "get k: " + r);
        check(t.exists(new Get(Bytes.toBytes("n"))), "exists n");
        check(!t.exists(new Get(Bytes.toBytes("nope"))), "not exists");
        System.out.println("ok put-get");

        int rows = 0;
        try (ResultScanner s = t.getScanner(new Scan())) {
          for (Result x : s) {
            rows++;
          }
        }
        check(rows == 6, "full scan rows " + rows);
        List<String> rev = new ArrayList<>();
        try (ResultScanner s = t.getScanner(new Scan().setReversed(true))) {
          for (Result x : s) {
            rev.add(Bytes.toString(x.getRow()));
          }
        }
        check(rev.equals(Arrays.asList("z", "n", "m", "k", "b", "a")), "reversed scan " + rev);
        try (ResultScanner s = t.getScanner(new Scan().setFilter(new PrefixFilter(Bytes.toBytes("n"))))) {
          Result x = s.next();
          check(x != null && Bytes.toString(x.getRow()).equals("n"), "prefix filter");
          check(s.next() == null, "prefix filter ends");
        }
        FilterList fl = new FilterList(FilterList.Operator.MUST_PASS_ONE,
            new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(Bytes.toBytes("v-a"))),
            new SingleColumnValueFilter(F, Bytes.toBytes("q"), CompareOperator.EQUAL, Bytes.toBytes("v-z")));
        List<String> hits = new ArrayList<>();
        try (ResultScanner s = t.getScanner(new Scan().setFilter(fl))) {
          for (Result x : s) {
            hits.add(Bytes.toString(x.getRow()));
          }
        }
        check(hits.equals(Arrays.asList("a", "z")), "filter list " + hits);
        List<String> limited = new ArrayList<>();
        try (ResultScanner s = t.getScanner(new Scan().setLimit(3).setCaching(1))) {
          for (Result x : s) {
            limited.add(Bytes.toString(x.getRow()));
          }
        }
        check(limited.equals(Arrays.asList("a", "b", "k")), "limit " + limited);
        System.out.println("ok scan");

        Put wide = new Put(Bytes.toBytes("w"));
        for (int i = 0; i < 50; i++) {
          wide.addColumn(F, Bytes.toBytes(String.format("c%03d", i)), Bytes.toBytes(i));
        }
        t.put(wide);
        int cells = 0;
        int results = 0;
        try (ResultScanner s = t.getScanner(new Scan().withStartRow(Bytes.toBytes("w")).withStopRow(Bytes.toBytes("w"), true).setBatch(20))) {
          for (Result x : s) {
            results++;
            cells += x.size();
          }
        }
        check(results == 3 && cells == 50, "batch 20 of 50: " + results + " results " + cells + " cells");
        Result range = t.get(new Get(Bytes.toBytes("w")).setFilter(new ColumnRangeFilter(Bytes.toBytes("c010"), true, Bytes.toBytes("c015"), false)));
        check(range.size() == 5, "column range " + range.size());
        System.out.println("ok wide");

        t.delete(new Delete(Bytes.toBytes("b")));
        check(t.get(new Get(Bytes.toBytes("b"))).isEmpty(), "deleted b");
        t.put(new Put(Bytes.toBytes("v")).addColumn(F, Bytes.toBytes("q"), 10, Bytes.toBytes("old"))
            .addColumn(F, Bytes.toBytes("q"), 20, Bytes.toBytes("new")));
        Result versions = t.get(new Get(Bytes.toBytes("v")).readAllVersions());
        check(versions.size() == 2, "two versions " + versions);
        t.delete(new Delete(Bytes.toBytes("v")).addColumn(F, Bytes.toBytes("q"), 20));
        check("old".equals(Bytes.toString(t.get(new Get(Bytes.toBytes("v"))).getValue(F, Bytes.toBytes("q")))), "delete one version");
        System.out.println("ok delete");

        t.increment(new Increment(Bytes.toBytes("c")).addColumn(F, Bytes.toBytes("n"), 5));
        Result inc = t.increment(new Increment(Bytes.toBytes("c")).addColumn(F, Bytes.toBytes("n"), 2));
        check(Bytes.toLong(inc.getValue(F, Bytes.toBytes("n"))) == 7, "increment");
        check(t.incrementColumnValue(Bytes.toBytes("c"), F, Bytes.toBytes("n"), 1) == 8, "incrementColumnValue");
        System.out.println("ok increment");

        CheckAndMutateResult cam = t.checkAndMutate(CheckAndMutate.newBuilder(Bytes.toBytes("k"))
            .ifEquals(F, Bytes.toBytes("q"), Bytes.toBytes("v-k"))
            .build(new Put(Bytes.toBytes("k")).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("v-k2"))));
        check(cam.isSuccess(), "checkAndMutate equal");
        cam = t.checkAndMutate(CheckAndMutate.newBuilder(Bytes.toBytes("k"))
            .ifEquals(F, Bytes.toBytes("q"), Bytes.toBytes("v-k"))
            .build(new Put(Bytes.toBytes("k")).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("v-k3"))));
        check(!cam.isSuccess(), "checkAndMutate stale");
        check(t.checkAndMutate(Bytes.toBytes("new"), F).qualifier(Bytes.toBytes("q")).ifNotExists()
            .thenPut(new Put(Bytes.toBytes("new")).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("x"))), "ifNotExists");
        RowMutations rm = new RowMutations(Bytes.toBytes("k"));
        rm.add(new Put(Bytes.toBytes("k")).addColumn(F, Bytes.toBytes("r"), Bytes.toBytes("1")));
        rm.add(new Delete(Bytes.toBytes("k")).addColumns(F, Bytes.toBytes("q")));
        t.mutateRow(rm);
        Result k = t.get(new Get(Bytes.toBytes("k")));
        check(k.size() == 1 && k.getValue(F, Bytes.toBytes("r")) != null, "row mutations " + k);
        cam = t.checkAndMutate(CheckAndMutate.newBuilder(Bytes.toBytes("k"))
            .ifMatches(new SingleColumnValueFilter(F, Bytes.toBytes("r"), CompareOperator.EQUAL, Bytes.toBytes("1")))
            .build(new Put(Bytes.toBytes("k")).addColumn(F, Bytes.toBytes("s"), Bytes.toBytes("2"))));
        check(cam.isSuccess(), "checkAndMutate with a filter");
        System.out.println("ok check-and-mutate");

        List<Row> batch = new ArrayList<>();
        batch.add(new Put(Bytes.toBytes("p1")).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("1")));
        batch.add(new Get(Bytes.toBytes("a")));
        batch.add(new Put(Bytes.toBytes("p2")).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("2")));
        Object[] out = new Object[batch.size()];
        t.batch(batch, out);
        check(out[1] instanceof Result && "v-a".equals(Bytes.toString(((Result) out[1]).getValue(F, Bytes.toBytes("q")))), "batch get");
        System.out.println("ok batch");

        // MultiRowMutationService.MutateRows through the coprocessor channel: two rows
        // of one region, atomically.
        MultiRowMutationProtos.MultiRowMutationService.BlockingInterface mrm =
            MultiRowMutationProtos.MultiRowMutationService.newBlockingStub(t.coprocessorService(Bytes.toBytes("mr1")));
        MultiRowMutationProtos.MutateRowsRequest.Builder mr = MultiRowMutationProtos.MutateRowsRequest.newBuilder();
        mr.addMutationRequest(ProtobufUtil.toMutation(ClientProtos.MutationProto.MutationType.PUT,
            new Put(Bytes.toBytes("mr1")).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("1"))));
        mr.addMutationRequest(ProtobufUtil.toMutation(ClientProtos.MutationProto.MutationType.PUT,
            new Put(Bytes.toBytes("mr2")).addColumn(F, Bytes.toBytes("q"), Bytes.toBytes("2"))));
        mrm.mutateRows(null, mr.build());
        check("2".equals(Bytes.toString(t.get(new Get(Bytes.toBytes("mr2"))).getValue(F, Bytes.toBytes("q")))), "MutateRows");
        System.out.println("ok multi-row-mutation");
      }

      try (RegionLocator loc = conn.getRegionLocator(tn)) {
        List<HRegionLocation> regions = loc.getAllRegionLocations();
        check(regions.size() == 2, "two regions " + regions);
      }
      admin.split(tn, Bytes.toBytes("t"));
      for (int i = 0; i < 100 && admin.getRegions(tn).size() < 3; i++) {
        Thread.sleep(100);
      }
      check(admin.getRegions(tn).size() == 3, "split into three regions: " + admin.getRegions(tn));
      try (Table t = conn.getTable(tn); ResultScanner s = t.getScanner(new Scan())) {
        int n = 0;
        for (Result x : s) {
          n++;
        }
        check(n > 6, "scan across the split: " + n);
      }
      System.out.println("ok split");

      // Snapshots: take, list, clone (RestoreSnapshot into a new table), delete.
      String snap = "check_snap_" + ns;
      admin.snapshot(snap, tn);
      check(admin.listSnapshots().stream().anyMatch(d -> d.getName().equals(snap)
        && d.getTableName().equals(tn)), "snapshot listed");
      TableName cloned = TableName.valueOf(ns, "cloned");
      admin.cloneSnapshot(snap, cloned);
      try (Table a = conn.getTable(tn); Table b = conn.getTable(cloned);
        ResultScanner sa = a.getScanner(new Scan()); ResultScanner sb = b.getScanner(new Scan())) {
        int na = 0;
        int nb = 0;
        for (Result x : sa) {
          na++;
        }
        for (Result x : sb) {
          nb++;
        }
        check(na == nb && nb > 6, "clone holds the table's rows: " + na + " / " + nb);
      }
      admin.deleteSnapshot(snap);
      check(admin.listSnapshots().stream().noneMatch(d -> d.getName().equals(snap)), "snapshot deleted");
      admin.disableTable(cloned);
      admin.deleteTable(cloned);
      System.out.println("ok snapshots");

      admin.disableTable(tn);
      check(admin.isTableDisabled(tn), "disabled");
      admin.enableTable(tn);
      try (Table t = conn.getTable(tn)) {
        check(!t.get(new Get(Bytes.toBytes("a"))).isEmpty(), "read after enable");
      }
      admin.disableTable(tn);
      admin.deleteTable(tn);
      check(!admin.tableExists(tn), "deleted");
      try (Table t = conn.getTable(TableName.valueOf("nosuch"))) {
        t.get(new Get(Bytes.toBytes("a")));
        check(false, "get on a missing table fails");
      } catch (TableNotFoundException e) {
        // as HBase
      }
      admin.deleteNamespace(ns);
      System.out.println("ok cleanup");
    }
    System.out.println("ALL OK");
  }
}
