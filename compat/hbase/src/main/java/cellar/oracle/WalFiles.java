package cellar.oracle;

import java.io.EOFException;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.TreeMap;
import java.util.UUID;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.ArrayBackedTag;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionInfoBuilder;
import org.apache.hadoop.hbase.regionserver.wal.CompressionContext;
import org.apache.hadoop.hbase.regionserver.wal.ProtobufLogWriter;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.wal.WAL;
import org.apache.hadoop.hbase.wal.WALEdit;
import org.apache.hadoop.hbase.wal.WALFactory;
import org.apache.hadoop.hbase.wal.WALKeyImpl;
import org.apache.hadoop.hbase.wal.WALStreamReader;

/**
 * HBase's own WAL code as the reference for Cellar's reader of HBase WAL files: writes WAL
 * files with HBase's writer (ProtobufLogWriter, the region server's; WALCellCodec cells), plain
 * and with WAL compression (dictionaries, with and without tag compression, and with value
 * compression), and lists any WAL file's entries through HBase's reader.
 *
 * <pre>
 *   write DIR        the fixtures into DIR, and DIR/NAME.txt: each listed by HBase's reader
 *   list FILE        one WAL file's entries and cells as HBase's reader returns them
 * </pre>
 */
public final class WalFiles {
  static final long WRITE_TIME = 1_700_000_000_000L;

  private WalFiles() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: WalFiles write DIR | list FILE");
      System.exit(2);
    }
    Configuration conf = HBaseConfiguration.create();
    FileSystem fs = FileSystem.getLocal(conf).getRawFileSystem();
    if (args[0].equals("write")) {
      File dir = new File(args[1]);
      dir.mkdirs();
      write(fs, conf, dir, "plain", false, false, false);
      write(fs, conf, dir, "compressed", true, true, false);
      write(fs, conf, dir, "compressed-plain-tags", true, false, false);
      write(fs, conf, dir, "compressed-values", true, true, true);
    } else if (args[0].equals("list")) {
      list(fs, conf, new Path(new File(args[1]).getAbsolutePath()), System.out);
    } else {
      System.err.println("unknown command " + args[0]);
      System.exit(2);
    }
  }

  static void write(FileSystem fs, Configuration base, File dir, String name, boolean compress,
    boolean tagCompression, boolean valueCompression) throws Exception {
    Configuration conf = new Configuration(base);
    conf.setBoolean(HConstants.ENABLE_WAL_COMPRESSION, compress);
    conf.setBoolean(CompressionContext.ENABLE_WAL_TAGS_COMPRESSION, tagCompression);
    conf.setBoolean(CompressionContext.ENABLE_WAL_VALUE_COMPRESSION, valueCompression);
    File file = new File(dir, name + ".wal");
    file.delete();
    Path path = new Path(file.getAbsolutePath());
    ProtobufLogWriter writer = new ProtobufLogWriter();
    writer.init(fs, path, conf, true, -1, null);
    for (WAL.Entry e : entries()) {
      writer.append(e);
    }
    writer.sync(false);
    writer.close();
    try (PrintStream out = new PrintStream(new File(dir, name + ".txt"), "UTF-8")) {
      list(fs, conf, path, out);
    }
  }

  static Tag tag(int type, String value) {
    return new ArrayBackedTag((byte) type, Bytes.toBytes(value));
  }

  static KeyValue kv(String row, String family, String qualifier, long ts, KeyValue.Type type,
    byte[] value, Tag... tags) {
    return new KeyValue(Bytes.toBytesBinary(row), Bytes.toBytes(family),
      Bytes.toBytesBinary(qualifier), ts, type, value, Arrays.asList(tags));
  }

  static byte[] v(String s) {
    return Bytes.toBytesBinary(s);
  }

  static WAL.Entry entry(RegionInfo region, long seq, long time, List<UUID> clusters, long nonceGroup,
    long nonce, Cell... cells) {
    // A replication scope on the entries with a nonce, to have every field of a key.
    TreeMap<byte[], Integer> scopes = null;
    if (nonce != 0) {
      scopes = new TreeMap<>(Bytes.BYTES_COMPARATOR);
      scopes.put(Bytes.toBytes("f"), 1);
    }
    WALKeyImpl key = new WALKeyImpl(region.getEncodedNameAsBytes(), region.getTable(), seq, time,
      clusters, nonceGroup, nonce, null, scopes);
    WALEdit edit = new WALEdit();
    for (Cell c : cells) {
      edit.add(c);
    }
    return new WAL.Entry(key, edit);
  }

  /**
   * Two tables (one in a namespace), three regions; every cell type; tags on some cells; rows,
   * families and qualifiers that repeat (so compressed files refer back to their dictionaries);
   * binary rows and values, an empty qualifier, an empty value, a 70 000-byte value; nonces and
   * cluster ids on some entries.
   */
  static List<WAL.Entry> entries() {
    TableName t = TableName.valueOf("t");
    TableName events = TableName.valueOf("ns1", "events");
    RegionInfo t1 = RegionInfoBuilder.newBuilder(t).setEndKey(v("m")).setRegionId(1).build();
    RegionInfo t2 = RegionInfoBuilder.newBuilder(t).setStartKey(v("m")).setRegionId(1).build();
    RegionInfo ev = RegionInfoBuilder.newBuilder(events).setRegionId(2).build();
    List<UUID> none = Collections.emptyList();
    List<UUID> two = Arrays.asList(new UUID(1, 2), new UUID(0x0123456789abcdefL, -1L));
    byte[] big = new byte[70_000];
    for (int i = 0; i < big.length; i++) {
      big[i] = (byte) (i * 31 + 7);
    }
    List<WAL.Entry> out = new ArrayList<>();
    long seq = 1;
    out.add(entry(t1, seq++, WRITE_TIME, none, 0, 0,
      kv("a", "f", "q1", 1000, KeyValue.Type.Put, v("v1")),
      kv("a", "f", "q2", 1000, KeyValue.Type.Put, v("v2")),
      kv("a", "g", "q1", 1000, KeyValue.Type.Put, v("v3"))));
    out.add(entry(t2, seq++, WRITE_TIME + 1, none, 11, 22,
      kv("m\\x00\\xFF", "f", "", 1001, KeyValue.Type.Put, v("\\x00\\x01\\xFE")),
      kv("n", "f", "q1", 1001, KeyValue.Type.Put, new byte[0])));
    out.add(entry(t1, seq++, WRITE_TIME + 2, none, 0, 0,
      kv("a", "f", "q1", 1002, KeyValue.Type.Delete, new byte[0]),
      kv("b", "f", "q2", 1002, KeyValue.Type.DeleteColumn, new byte[0]),
      kv("c", "g", "", 1002, KeyValue.Type.DeleteFamily, new byte[0]),
      kv("c", "f", "", 1002, KeyValue.Type.DeleteFamilyVersion, new byte[0])));
    out.add(entry(ev, seq++, WRITE_TIME + 3, two, 0, 0,
      kv("dev-1#0001", "e", "temp", 1003, KeyValue.Type.Put, v("21.5"), tag(8, "ttl-ms"),
        tag(1, "acl")),
      kv("dev-1#0002", "e", "temp", 1003, KeyValue.Type.Put, v("21.7"), tag(8, "ttl-ms")),
      kv("dev-1#0003", "e", "temp", 1003, KeyValue.Type.Put, v("21.9"), tag(8, "ttl-ms"),
        tag(1, "acl"))));
    out.add(entry(t2, seq++, WRITE_TIME + 4, none, 0, 0,
      kv("z", "f", "big", 1004, KeyValue.Type.Put, big)));
    // Many rows and qualifiers: more than the 127 entries of the family and qualifier
    // dictionaries, so indexes are reused once the least recent entries are evicted.
    for (int batch = 0; batch < 3; batch++) {
      List<Cell> cells = new ArrayList<>();
      for (int i = 0; i < 60; i++) {
        String row = String.format("r%03d", batch * 60 + i);
        cells.add(kv(row, "f", "c" + (batch * 60 + i), 2000 + batch, KeyValue.Type.Put,
          Bytes.toBytes("x" + i)));
        cells.add(kv(row, "g", "q1", 2000 + batch, KeyValue.Type.Put, Bytes.toBytes("y" + i),
          tag(2, "batch" + batch)));
      }
      out.add(entry(batch % 2 == 0 ? t1 : t2, seq++, WRITE_TIME + 10 + batch, none, 0, 0,
        cells.toArray(new Cell[0])));
    }
    out.add(entry(t1, seq++, WRITE_TIME + 20, none, 0, 0,
      kv("a", "f", "q1", 1005, KeyValue.Type.Put, v("again")),
      kv("r000", "f", "c0", 1005, KeyValue.Type.Put, v("again"))));
    return out;
  }

  /**
   * Every entry through HBase's reader, one line per entry and one per cell; where the reader
   * meets the end of the file inside an entry (a writer that died), a last line says where
   * that entry starts, as HBase's WAL splitter treats it: the end of the edits.
   */
  static void list(FileSystem fs, Configuration conf, Path path, PrintStream out)
    throws Exception {
    try (WALStreamReader reader = WALFactory.createStreamReader(fs, path, conf)) {
      WAL.Entry e;
      while (true) {
        long start = reader.getPosition();
        try {
          e = reader.next();
        } catch (EOFException eof) {
          out.println("torn tail at offset " + start + ": its last entry is incomplete");
          break;
        }
        if (e == null) {
          break;
        }
        WALKeyImpl k = e.getKey();
        StringBuilder clusters = new StringBuilder();
        for (UUID u : k.getClusterIds()) {
          clusters.append(clusters.length() == 0 ? "" : ",").append(u);
        }
        out.println("entry table=" + k.getTableName() + " region="
          + Bytes.toStringBinary(k.getEncodedRegionName()) + " sequence=" + k.getSequenceId()
          + " time=" + k.getWriteTime() + " nonce=" + k.getNonceGroup() + "/" + k.getNonce()
          + " clusters=[" + clusters + "] cells=" + e.getEdit().getCells().size());
        for (Cell c : e.getEdit().getCells()) {
          StringBuilder tags = new StringBuilder();
          for (Tag t : PrivateCellUtil.getTags(c)) {
            tags.append(tags.length() == 0 ? "" : ",").append(t.getType()).append(':')
              .append(Bytes.toStringBinary(Tag.cloneValue(t)));
          }
          byte[] value = Arrays.copyOfRange(c.getValueArray(), c.getValueOffset(),
            c.getValueOffset() + c.getValueLength());
          String shown = value.length > 64
            ? "(" + value.length + " bytes, sum " + Arrays.hashCode(value) + ")"
            : Bytes.toStringBinary(value);
          out.println("  " + Bytes.toStringBinary(c.getRowArray(), c.getRowOffset(),
            c.getRowLength()) + "/"
            + Bytes.toStringBinary(c.getFamilyArray(), c.getFamilyOffset(), c.getFamilyLength())
            + ":" + Bytes.toStringBinary(c.getQualifierArray(), c.getQualifierOffset(),
              c.getQualifierLength())
            + "/" + c.getTimestamp() + "/" + c.getType() + " value=" + shown + " tags=[" + tags
            + "]");
        }
      }
    }
  }

  static String utf8(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }
}
