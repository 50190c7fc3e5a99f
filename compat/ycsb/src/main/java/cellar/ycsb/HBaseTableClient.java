package cellar.ycsb;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * A YCSB binding on HBase's Java client: a record is a row, a field a column of one
 * family (property {@code columnfamily}, default {@code f}). Every {@code -p} property
 * starting with {@code hbase.} goes into the client's configuration, so the same binding
 * reaches an HBase through ZooKeeper ({@code hbase.zookeeper.quorum}) or a Cellar
 * server through the RPC registry ({@code hbase.client.registry.impl},
 * {@code hbase.client.bootstrap.servers}). Writes are single Puts with the table's
 * durability (SYNC_WAL unless {@code durability} says otherwise); one connection is
 * shared by the client threads, as HBase applications share one.
 */
public class HBaseTableClient extends DB {
  private static final Object LOCK = new Object();
  private static Connection shared;
  private static int users;

  private byte[] family;
  private Durability durability = Durability.USE_DEFAULT;
  private Table table;
  private String tableName;

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    family = Bytes.toBytes(p.getProperty("columnfamily", "f"));
    String d = p.getProperty("durability");
    if (d != null) {
      durability = Durability.valueOf(d);
    }
    synchronized (LOCK) {
      if (shared == null) {
        Configuration conf = HBaseConfiguration.create();
        for (String name : p.stringPropertyNames()) {
          if (name.startsWith("hbase.")) {
            conf.set(name, p.getProperty(name));
          }
        }
        try {
          shared = ConnectionFactory.createConnection(conf);
        } catch (IOException e) {
          throw new DBException(e);
        }
      }
      users++;
    }
  }

  @Override
  public void cleanup() throws DBException {
    try {
      if (table != null) {
        table.close();
      }
      synchronized (LOCK) {
        users--;
        if (users == 0 && shared != null) {
          shared.close();
          shared = null;
        }
      }
    } catch (IOException e) {
      throw new DBException(e);
    }
  }

  private Table table(String name) throws IOException {
    if (table == null || !name.equals(tableName)) {
      if (table != null) {
        table.close();
      }
      table = shared.getTable(TableName.valueOf(name));
      tableName = name;
    }
    return table;
  }

  private void collect(Result r, Map<String, ByteIterator> out) {
    for (Cell c : r.rawCells()) {
      out.put(Bytes.toString(CellUtil.cloneQualifier(c)),
          new ByteArrayByteIterator(CellUtil.cloneValue(c)));
    }
  }

  @Override
  public Status read(String t, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      Get g = new Get(Bytes.toBytes(key));
      if (fields == null) {
        g.addFamily(family);
      } else {
        for (String f : fields) {
          g.addColumn(family, Bytes.toBytes(f));
        }
      }
      Result r = table(t).get(g);
      if (r.isEmpty()) {
        return Status.NOT_FOUND;
      }
      collect(r, result);
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String t, String start, int count, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    Scan s = new Scan().withStartRow(Bytes.toBytes(start)).setLimit(count).setCaching(count);
    if (fields == null) {
      s.addFamily(family);
    } else {
      for (String f : fields) {
        s.addColumn(family, Bytes.toBytes(f));
      }
    }
    try (ResultScanner rs = table(t).getScanner(s)) {
      for (Result r : rs) {
        HashMap<String, ByteIterator> row = new HashMap<>();
        collect(r, row);
        result.add(row);
        if (result.size() >= count) {
          break;
        }
      }
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String t, String key, Map<String, ByteIterator> values) {
    Put p = new Put(Bytes.toBytes(key));
    p.setDurability(durability);
    for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
      p.addColumn(family, Bytes.toBytes(e.getKey()), e.getValue().toArray());
    }
    try {
      table(t).put(p);
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String t, String key, Map<String, ByteIterator> values) {
    return update(t, key, values);
  }

  @Override
  public Status delete(String t, String key) {
    Delete d = new Delete(Bytes.toBytes(key));
    d.setDurability(durability);
    try {
      table(t).delete(d);
      return Status.OK;
    } catch (IOException e) {
      return Status.ERROR;
    }
  }
}
