package cellar.oracle;

import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.ArrayBackedTag;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.KeyValueUtil;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.Tag;
import org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hadoop.hbase.io.hfile.HFileContext;
import org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter;
import org.apache.hadoop.hbase.io.hfile.HFileScanner;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.regionserver.StoreFileWriter;
import org.apache.hadoop.hbase.util.BloomFilter;
import org.apache.hadoop.hbase.util.BloomFilterFactory;
import org.apache.hadoop.hbase.util.BloomFilterUtil;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * HBase's own store-file code as the reference for Cellar's: writes fixtures with HBase's
 * writer (StoreFileWriter: every data block encoding, compression and bloom type, tags with
 * and without tag compression, every cell type, small blocks so that indexes have several
 * levels and blooms several chunks), prints files with HBase's HFilePrettyPrinter, and reads
 * any store file (Cellar's included) with HBase's reader, checking its bloom filters.
 *
 * <pre>
 *   write DIR            the fixture matrix into DIR, and DIR/cells.txt (what each holds)
 *   print FILE...        HFilePrettyPrinter -p of each file, each after a line "== FILE"
 *   read FILE...         each file's cells through HBase's reader, then its bloom check
 * </pre>
 */
public final class StoreFiles {
  static final byte[] FAMILY = Bytes.toBytes("f");
  /** The fixtures' settings: small blocks, index blocks and bloom chunks. */
  static final int BLOCK_SIZE = 1024;
  static final int INDEX_BLOCK_SIZE = 256;
  static final int BLOOM_BLOCK_SIZE = 128;
  static final int PREFIX_LENGTH = 8;
  static final long CREATE_TIME = 1_700_000_000_000L;

  static final DataBlockEncoding[] ENCODINGS = { DataBlockEncoding.NONE, DataBlockEncoding.PREFIX,
    DataBlockEncoding.DIFF, DataBlockEncoding.FAST_DIFF, DataBlockEncoding.ROW_INDEX_V1 };
  static final Compression.Algorithm[] COMPRESSIONS = { Compression.Algorithm.NONE,
    Compression.Algorithm.GZ, Compression.Algorithm.SNAPPY, Compression.Algorithm.LZ4,
    Compression.Algorithm.ZSTD };
  static final BloomType[] BLOOMS =
    { BloomType.NONE, BloomType.ROW, BloomType.ROWCOL, BloomType.ROWPREFIX_FIXED_LENGTH };

  private StoreFiles() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: StoreFiles write DIR | print FILE... | read FILE...");
      System.exit(2);
    }
    Configuration conf = conf();
    List<String> files = new ArrayList<>();
    for (int i = 1; i < args.length; i++) {
      files.add(args[i]);
    }
    switch (args[0]) {
      case "write":
        write(conf, new File(args[1]));
        break;
      case "print":
        for (String f : files) {
          System.out.println("== " + f);
          System.out.print(prettyPrint(conf, f));
        }
        break;
      case "read":
        int bad = 0;
        for (String f : files) {
          System.out.println("== " + f);
          bad += read(conf, new Path(new File(f).getAbsolutePath()), System.out);
        }
        System.exit(bad == 0 ? 0 : 1);
        break;
      default:
        System.err.println("unknown command " + args[0]);
        System.exit(2);
    }
  }

  static Configuration conf() {
    Configuration conf = HBaseConfiguration.create();
    // HBase's own zstd codec (zstd-jni); the other codecs are HBase's defaults.
    conf.set("hbase.io.compress.zstd.codec", "org.apache.hadoop.hbase.io.compress.zstd.ZstdCodec");
    conf.setInt("hfile.index.block.max.size", INDEX_BLOCK_SIZE);
    conf.setInt("io.storefile.bloom.block.size", BLOOM_BLOCK_SIZE);
    conf.setInt(BloomFilterUtil.PREFIX_LENGTH_KEY, PREFIX_LENGTH);
    conf.setBoolean("hbase.regionserver.checksum.verify", true);
    // Each algorithm keeps a configuration of its own, read at class load.
    Compression.Algorithm.ZSTD.reload(conf);
    return conf;
  }

  /** A tag as HBase serializes it (2-byte length, type, value). */
  static Tag tag(int type, byte[] value) {
    return new ArrayBackedTag((byte) type, value);
  }

  /** The cells every fixture holds, in HBase's order. */
  static List<Cell> cells() {
    List<Cell> out = new ArrayList<>();
    byte[][] labels = { Bytes.toBytes("secret"), Bytes.toBytes("public"), Bytes.toBytes("ops") };
    for (int i = 0; i < 160; i++) {
      byte[] row = Bytes.toBytes(String.format("row-%05d", i));
      int cols = 1 + i % 4;
      for (int c = 0; c < cols; c++) {
        byte[] q = Bytes.toBytes("q" + c);
        for (int v = 0; v < 1 + (i + c) % 3; v++) {
          long ts = 1000 + i - 100L * v;
          byte[] value;
          if ((i + c) % 9 == 0) {
            value = new byte[0];
          } else if ((i + c) % 5 == 0) {
            value = new byte[] { 0, (byte) 0xff, (byte) i, 10, 13, 127, (byte) 128 };
          } else {
            value = Bytes.toBytes("value-" + i + "-" + c + "-" + v);
          }
          List<Tag> tags = new ArrayList<>();
          if (i % 3 == 0) {
            tags.add(tag(8, Bytes.toBytes(86_400_000L))); // a TTL tag
          }
          if ((i + c) % 4 == 0) {
            tags.add(tag(2, labels[(i + c + v) % labels.length]));
          }
          if (i % 10 == 7) {
            tags.add(tag(77, Bytes.toBytes("custom-" + (i % 3))));
          }
          KeyValue kv = new KeyValue(row, 0, row.length, FAMILY, 0, FAMILY.length, q, 0, q.length,
            ts, KeyValue.Type.Put, value, 0, value.length, tags);
          kv.setSequenceId(i % 5 == 0 ? 0 : 100 + i);
          out.add(kv);
        }
      }
      if (i % 7 == 0) {
        out.add(marker(row, null, 950 + i, KeyValue.Type.DeleteFamily, i));
      }
      if (i % 11 == 0) {
        out.add(marker(row, Bytes.toBytes("q0"), 1000 + i, KeyValue.Type.DeleteColumn, i));
      }
      if (i % 13 == 0) {
        out.add(marker(row, Bytes.toBytes("q1"), 900 + i, KeyValue.Type.Delete, i));
      }
      if (i % 17 == 0) {
        out.add(marker(row, null, 900 + i, KeyValue.Type.DeleteFamilyVersion, i));
      }
    }
    // A wide row, a row of binary bytes, and extreme timestamps.
    byte[] wide = Bytes.toBytes("row-00050-wide");
    for (int c = 0; c < 300; c++) {
      out.add(new KeyValue(wide, FAMILY, Bytes.toBytes(String.format("col%04d", c)), 5000 + c,
        Bytes.toBytes("w" + c)));
    }
    byte[] binary = { 0, 1, (byte) 0xfe, (byte) 0xff };
    out.add(new KeyValue(binary, FAMILY, new byte[] { (byte) 0x80 }, 0L, new byte[] { 0 }));
    out.add(new KeyValue(binary, FAMILY, Bytes.toBytes("max"), Long.MAX_VALUE - 1,
      Bytes.toBytes("almost latest")));
    out.sort(CellComparator.getInstance());
    return out;
  }

  static KeyValue marker(byte[] row, byte[] q, long ts, KeyValue.Type type, int i) {
    byte[] qual = q == null ? new byte[0] : q;
    KeyValue kv = new KeyValue(row, FAMILY, qual, ts, type);
    kv.setSequenceId(200 + i);
    return kv;
  }

  static String name(DataBlockEncoding e, Compression.Algorithm c, BloomType b) {
    return (e + "-" + c.getName() + "-" + b).toLowerCase().replace('_', '-') + ".hfile";
  }

  static void write(Configuration conf, File dir) throws Exception {
    dir.mkdirs();
    FileSystem fs = FileSystem.getLocal(conf);
    List<Cell> cells = cells();
    String reference = null;
    for (DataBlockEncoding e : ENCODINGS) {
      for (Compression.Algorithm c : COMPRESSIONS) {
        for (int bi = 0; bi < BLOOMS.length; bi++) {
          BloomType b = BLOOMS[bi];
          // Tag compression on for half the files (it applies to PREFIX, DIFF, FAST_DIFF).
          boolean compressTags = bi % 2 == 1;
          HFileContext ctx = new HFileContextBuilder().withBlockSize(BLOCK_SIZE)
            .withCompression(c).withDataBlockEncoding(e).withIncludesTags(true)
            .withCompressTags(compressTags).withIncludesMvcc(true).withCreateTime(CREATE_TIME)
            .withColumnFamily(FAMILY).withTableName(Bytes.toBytes("fixtures"))
            .withCellComparator(CellComparator.getInstance()).build();
          Path path = new Path(new File(dir, name(e, c, b)).getAbsolutePath());
          fs.delete(path, false);
          StoreFileWriter w = new StoreFileWriter.Builder(conf, new CacheConfig(conf), fs)
            .withFilePath(path).withBloomType(b).withFileContext(ctx).build();
          long maxSeq = 0;
          for (Cell cell : cells) {
            w.append(cell);
            maxSeq = Math.max(maxSeq, cell.getSequenceId());
          }
          w.appendMetadata(maxSeq, false);
          w.close();
          // Every file must read back as the same cells.
          String printed = prettyPrint(conf, path.toString());
          if (reference == null) {
            reference = printed;
          } else if (!reference.equals(printed)) {
            throw new IllegalStateException(path + " prints differently from the first file");
          }
          ByteArrayOutputStream checked = new ByteArrayOutputStream();
          int bad = read(conf, path, new PrintStream(checked, true, "UTF-8"));
          if (bad != 0) {
            throw new IllegalStateException(path + " failed its own check: " + checked);
          }
        }
      }
    }
    Files.write(new File(dir, "cells.txt").toPath(), reference.getBytes(StandardCharsets.UTF_8));
  }

  /** HBase's HFilePrettyPrinter -p, captured. */
  static String prettyPrint(Configuration conf, String file) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    HFilePrettyPrinter p = new HFilePrettyPrinter(conf);
    p.setPrintStreams(new PrintStream(out, true, "UTF-8"), new PrintStream(err, true, "UTF-8"));
    int rc = p.run(new String[] { "-p", "-f", new File(file).getAbsolutePath() });
    if (rc != 0) {
      throw new IOException("HFilePrettyPrinter failed on " + file + ": " + err);
    }
    return out.toString("UTF-8");
  }

  /** Prints the cells as HBase reads them, then checks the blooms; the failures. */
  static int read(Configuration conf, Path path, PrintStream out) throws IOException {
    FileSystem fs = FileSystem.getLocal(conf);
    int bad = 0;
    try (HFile.Reader reader = HFile.createReader(fs, path, new CacheConfig(conf), true, conf)) {
      HFileScanner s = reader.getScanner(conf, false, false);
      Set<String> rows = new LinkedHashSet<>();
      List<Cell> all = new ArrayList<>();
      long n = 0;
      if (s.seekTo()) {
        do {
          Cell c = s.getCell();
          StringBuilder line = new StringBuilder("K: ").append(c).append(" V: ")
            .append(Bytes.toStringBinary(c.getValueArray(), c.getValueOffset(), c.getValueLength()));
          int i = 0;
          for (Tag t : PrivateCellUtil.getTags(c)) {
            line.append(String.format(" T[%d]: %s", i++, t));
          }
          out.println(line);
          all.add(KeyValueUtil.copyToNewKeyValue(c));
          n++;
        } while (s.next());
      }
      if (n != reader.getEntries()) {
        out.println("ENTRIES MISMATCH: read " + n + ", trailer " + reader.getEntries());
        bad++;
      }
      byte[] type = reader.getHFileInfo().get(Bytes.toBytes("BLOOM_FILTER_TYPE"));
      BloomType bt = type == null ? BloomType.NONE : BloomType.valueOf(Bytes.toString(type));
      DataInput meta = reader.getGeneralBloomFilterMetadata();
      if (bt != BloomType.NONE && meta != null) {
        BloomFilter bloom = BloomFilterFactory.createFromMeta(meta, reader);
        int checked = 0;
        int missing = 0;
        Set<String> seen = new LinkedHashSet<>();
        for (Cell c : all) {
          byte[] row = CellUtil.cloneRow(c);
          boolean present;
          String key;
          switch (bt) {
            case ROW:
              key = Bytes.toStringBinary(row);
              present = bloom.contains(row, 0, row.length, null);
              break;
            case ROWPREFIX_FIXED_LENGTH:
              byte[] prefix = Bytes.copy(row, 0, Math.min(PREFIX_LENGTH, row.length));
              key = Bytes.toStringBinary(prefix);
              present = bloom.contains(prefix, 0, prefix.length, null);
              break;
            default:
              key = Bytes.toStringBinary(row) + "/" + Bytes.toStringBinary(CellUtil.cloneQualifier(c));
              present = bloom.contains(PrivateCellUtil.createFirstOnRowCol(c), null, BloomType.ROWCOL);
          }
          if (seen.add(key)) {
            checked++;
            if (!present) {
              missing++;
              out.println("BLOOM MISSING " + key);
            }
          }
        }
        out.println("bloom " + bt + ": " + checked + " keys, " + missing + " missing");
        bad += missing;
      } else {
        out.println("bloom NONE");
      }
      DataInput delMeta = reader.getDeleteBloomFilterMetadata();
      if (delMeta != null) {
        BloomFilter del = BloomFilterFactory.createFromMeta(delMeta, reader);
        int missing = 0;
        int checked = 0;
        for (Cell c : all) {
          if (PrivateCellUtil.isDeleteFamily(c) || PrivateCellUtil.isDeleteFamilyVersion(c)) {
            byte[] row = CellUtil.cloneRow(c);
            if (rows.add(Bytes.toStringBinary(row))) {
              checked++;
              if (!del.contains(row, 0, row.length, null)) {
                missing++;
                out.println("DELETE BLOOM MISSING " + Bytes.toStringBinary(row));
              }
            }
          }
        }
        out.println("delete family bloom: " + checked + " rows, " + missing + " missing");
        bad += missing;
      }
    }
    return bad;
  }
}
