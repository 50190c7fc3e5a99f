package cellar.oracle;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.io.ImmutableBytesWritable;
import org.apache.hadoop.hbase.mapreduce.HashTable;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Reads a HashTable output directory with HBase's own reader (what SyncTable uses) and
 * prints its settings and every batch: "hash ROWHEX MD5HEX", then "ALL OK".
 *
 * <pre>
 *   read DIR
 * </pre>
 */
public final class HashRead {
  private HashRead() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2 || !args[0].equals("read")) {
      System.err.println("usage: read DIR");
      System.exit(2);
    }
    Configuration conf = HBaseConfiguration.create();
    HashTable.TableHash th = HashTable.TableHash.read(conf, new Path(args[1]));
    System.out.println("spec " + th);
    try (HashTable.TableHash.Reader r =
      th.newReader(conf, new ImmutableBytesWritable(new byte[0]))) {
      while (r.next()) {
        System.out.println("hash " + Bytes.toHex(r.getCurrentKey().copyBytes()) + " "
          + Bytes.toHex(r.getCurrentHash().copyBytes()));
      }
    }
    System.out.println("ALL OK");
  }
}
