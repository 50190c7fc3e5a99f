package cellar.compat;

import com.google.api.gax.rpc.ApiException;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminClient;
import com.google.cloud.bigtable.admin.v2.BigtableTableAdminSettings;
import com.google.cloud.bigtable.admin.v2.models.ColumnFamily;
import com.google.cloud.bigtable.admin.v2.models.CreateTableRequest;
import com.google.cloud.bigtable.admin.v2.models.GCRules;
import com.google.cloud.bigtable.admin.v2.models.ModifyColumnFamiliesRequest;
import com.google.cloud.bigtable.admin.v2.models.Table;
import com.google.cloud.bigtable.data.v2.BigtableDataClient;
import com.google.cloud.bigtable.data.v2.BigtableDataSettings;
import com.google.cloud.bigtable.data.v2.models.BulkMutation;
import com.google.cloud.bigtable.data.v2.models.ConditionalRowMutation;
import com.google.cloud.bigtable.data.v2.models.Filters;
import com.google.cloud.bigtable.data.v2.models.KeyOffset;
import com.google.cloud.bigtable.data.v2.models.Mutation;
import com.google.cloud.bigtable.data.v2.models.Query;
import com.google.cloud.bigtable.data.v2.models.ReadModifyWriteRow;
import com.google.cloud.bigtable.data.v2.models.Row;
import com.google.cloud.bigtable.data.v2.models.RowCell;
import com.google.cloud.bigtable.data.v2.models.RowMutation;
import com.google.cloud.bigtable.data.v2.models.TableId;
import com.google.protobuf.ByteString;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * One session with Google's Java client for Bigtable, printed: against Google's emulator
 * and against Cellar's gateway the transcripts must be the same. Server-assigned
 * timestamps print as NOW, failures as their status code. Usage: BigtableSession PORT.
 */
public final class BigtableSession {
  private static final Filters F = Filters.FILTERS;

  private static String ts(long micros) {
    return micros > 1_700_000_000_000_000L ? "NOW" : Long.toString(micros);
  }

  private static String row(Row r) {
    if (r == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder(r.getKey().toStringUtf8()).append(" {");
    for (RowCell c : r.getCells()) {
      String v = c.getValue().size() > 40
          ? c.getValue().size() + " bytes"
          : c.getValue().toStringUtf8().replaceAll("[^ -~]", "?");
      b.append(' ').append(c.getFamily()).append(':').append(c.getQualifier().toStringUtf8())
          .append('@').append(ts(c.getTimestamp())).append('=').append(v)
          .append(c.getLabels().isEmpty() ? "" : c.getLabels().toString());
    }
    return b.append(" }").toString();
  }

  private static void show(String label, Object value) {
    System.out.println(label + " " + value);
  }

  interface Call {
    Object run() throws Exception;
  }

  private static void attempt(String label, Call c) {
    try {
      show(label, c.run());
    } catch (ApiException e) {
      show(label, "error " + e.getStatusCode().getCode());
    } catch (Exception e) {
      show(label, "error " + e.getClass().getSimpleName());
    }
  }

  private static List<String> read(BigtableDataClient data, Query q) {
    List<String> out = new ArrayList<>();
    for (Row r : data.readRows(q)) {
      out.add(row(r));
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    int port = Integer.parseInt(args[0]);
    String project = "proj";
    String instance = "java-inst";
    BigtableTableAdminSettings adminSettings =
        BigtableTableAdminSettings.newBuilderForEmulator(port)
            .setProjectId(project).setInstanceId(instance).build();
    BigtableDataSettings dataSettings =
        BigtableDataSettings.newBuilderForEmulator(port)
            .setProjectId(project).setInstanceId(instance).build();
    try (BigtableTableAdminClient admin = BigtableTableAdminClient.create(adminSettings);
        BigtableDataClient data = BigtableDataClient.create(dataSettings)) {
      for (String t : admin.listTables()) {
        admin.deleteTable(t);
      }
      Table t = admin.createTable(CreateTableRequest.of("events")
          .addFamily("e", GCRules.GCRULES.maxVersions(2))
          .addFamily("m", GCRules.GCRULES.union()
              .rule(GCRules.GCRULES.maxAge(3650, TimeUnit.DAYS))
              .rule(GCRules.GCRULES.maxVersions(1)))
          .addSplit(ByteString.copyFromUtf8("k")));
      show("created", t.getId());
      attempt("create again", () -> admin.createTable(CreateTableRequest.of("events")));
      show("tables", admin.listTables());
      TreeMap<String, String> fams = new TreeMap<>();
      for (ColumnFamily f : admin.getTable("events").getColumnFamilies()) {
        fams.put(f.getId(), f.getGCRule().toProto().toString().replace('\n', ' '));
      }
      show("families", fams);
      // A rule that keeps more: rules that keep less may hide cells at once (Cellar) or at
      // the next collection (the emulator), both as Bigtable allows.
      admin.modifyFamilies(ModifyColumnFamiliesRequest.of("events")
          .addFamily("x", GCRules.GCRULES.maxVersions(3))
          .updateFamily("e", GCRules.GCRULES.maxVersions(3))
          .dropFamily("x"));
      TreeMap<String, String> after = new TreeMap<>();
      for (ColumnFamily f : admin.getTable("events").getColumnFamilies()) {
        after.put(f.getId(), f.getGCRule().toProto().toString().replace('\n', ' '));
      }
      show("families after modify", after);

      TableId events = TableId.of("events");
      for (int i = 0; i < 6; i++) {
        data.mutateRow(RowMutation.create(events, "ev" + i)
            .setCell("e", "type", 1_600_000_000_000_000L + i * 1000L, i % 2 == 0 ? "click" : "view")
            .setCell("e", "type", 1_500_000_000_000_000L, "old")
            .setCell("m", "n", 1_600_000_000_000_000L, Integer.toString(i * 7)));
      }
      data.mutateRow(RowMutation.create(events, "kx").setCell("m", "now", "server time"));
      BulkMutation bulk = BulkMutation.create(events)
          .add("b1", Mutation.create().setCell("e", "type", 1_600_000_000_000_000L, "bulk"))
          .add("b2", Mutation.create().setCell("e", "type", 1_600_000_000_000_000L, "bulk2"));
      data.bulkMutateRows(bulk);
      attempt("bad timestamp", () -> {
        data.mutateRow(RowMutation.create(events, "bad").setCell("e", "t", 1_500L, "v"));
        return "accepted";
      });

      show("one row", row(data.readRow(events, "ev1")));
      show("missing", row(data.readRow(events, "nope")));
      show("all", read(data, Query.create(events)));
      show("range", read(data, Query.create(events).range("ev2", "ev4")));
      show("keys", read(data, Query.create(events).rowKey("ev5").rowKey("b1")));
      show("limit", read(data, Query.create(events).limit(3)));
      show("latest", read(data, Query.create(events).filter(F.limit().cellsPerColumn(1))));
      show("chain", read(data, Query.create(events).filter(F.chain()
          .filter(F.family().exactMatch("e")).filter(F.value().regex("cl.*")))));
      show("interleave", read(data, Query.create(events).prefix("ev").filter(F.interleave()
          .filter(F.chain().filter(F.family().exactMatch("m")).filter(F.label("metric")))
          .filter(F.chain().filter(F.timestamp().range().startClosed(1_600_000_003_000_000L))
              .filter(F.label("late"))))));
      show("condition", read(data, Query.create(events).prefix("ev").filter(F.condition(
          F.value().exactMatch("view")).then(F.family().exactMatch("m"))
          .otherwise(F.qualifier().exactMatch("type")))));
      show("value range", read(data, Query.create(events).filter(F.value().range()
          .startClosed("14").endOpen("30"))));
      show("qualifier range", read(data, Query.create(events).filter(F.qualifier()
          .rangeWithinFamily("e").startClosed("t").endClosed("type"))));
      show("strip", read(data, Query.create(events).prefix("b").filter(F.value().strip())));
      show("offset", read(data, Query.create(events).prefix("ev")
          .filter(F.chain().filter(F.family().exactMatch("e")).filter(F.offset().cellsPerRow(1)))));
      show("row regex", read(data, Query.create(events).filter(F.key().regex("ev[135]"))));
      show("block", read(data, Query.create(events).filter(F.block())));

      show("cam", data.checkAndMutateRow(ConditionalRowMutation.create(events, "ev0")
          .condition(F.value().exactMatch("click"))
          .then(Mutation.create().setCell("m", "seen", 1_600_000_000_000_000L, "yes"))
          .otherwise(Mutation.create().setCell("m", "seen", 1_600_000_000_000_000L, "no"))));
      show("cam else", data.checkAndMutateRow(ConditionalRowMutation.create(events, "ev1")
          .condition(F.value().exactMatch("click"))
          .then(Mutation.create().setCell("m", "seen", 1_600_000_000_000_000L, "yes"))
          .otherwise(Mutation.create().setCell("m", "seen", 1_600_000_000_000_000L, "no"))));
      show("after cam", read(data, Query.create(events).range("ev0", "ev2")
          .filter(F.qualifier().exactMatch("seen"))));
      show("rmw", row(data.readModifyWriteRow(ReadModifyWriteRow.create(events, "counter")
          .increment("m", "hits", 3).append("m", "log", "a"))));
      show("rmw again", row(data.readModifyWriteRow(ReadModifyWriteRow.create(events, "counter")
          .increment("m", "hits", 4).append("m", "log", "b"))));
      List<KeyOffset> samples = data.sampleRowKeys(events);
      show("samples end empty", samples.get(samples.size() - 1).getKey().isEmpty());
      data.mutateRow(RowMutation.create(events, "ev5").deleteRow());
      data.mutateRow(RowMutation.create(events, "ev4").deleteFamily("m"));
      data.mutateRow(RowMutation.create(events, "ev3").deleteCells("e", "type"));
      show("after deletes", read(data, Query.create(events).range("ev3", "ev6")));
      admin.dropRowRange("events", "b");
      show("after drop", read(data, Query.create(events).prefix("b")));
      admin.deleteTable("events");
      show("tables at end", admin.listTables());
    }
  }
}
