package cellar.oracle;

import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.tool.BulkLoadHFiles;

/**
 * HBase's own bulk load tool (BulkLoadHFilesTool, what {@code completebulkload} runs)
 * pointed at a server through the RPC registry: it groups the HFiles of DIR by region,
 * splits those that span regions, and has each region load its group.
 *
 * <pre>
 *   load HOST:PORT DIR TABLE   prints "loaded N files" and "ALL OK"
 * </pre>
 */
public final class BulkLoad {
  private BulkLoad() {
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 4 || !args[0].equals("load")) {
      System.err.println("usage: load HOST:PORT DIR TABLE");
      System.exit(2);
    }
    Configuration conf = HBaseConfiguration.create();
    conf.set("hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.set("hbase.client.bootstrap.servers", args[1]);
    conf.setInt("hbase.client.retries.number", 3);
    Map<BulkLoadHFiles.LoadQueueItem, java.nio.ByteBuffer> loaded =
      BulkLoadHFiles.create(conf).bulkLoad(TableName.valueOf(args[3]), new Path(args[2]));
    System.out.println("loaded " + loaded.size() + " files");
    System.out.println("ALL OK");
  }
}
