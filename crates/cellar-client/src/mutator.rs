//! A BufferedMutator (HBase's): mutations collected until `hbase.client.write.buffer`
//! bytes are waiting, then sent as one batch per flush. `flush` sends what is
//! buffered and reports the first failure; `close` flushes.

use cellar_api::{Error, Mutation, Result};

use crate::table::Table;

pub struct BufferedMutator {
    table: Table,
    buffer: Vec<Mutation>,
    bytes: usize,
    limit: usize,
}

fn size_of(m: &Mutation) -> usize {
    let cells: usize = match m {
        Mutation::Put(p) => p
            .cells
            .iter()
            .map(|(f, q, _, v)| f.len() + q.len() + v.len() + 24)
            .sum(),
        Mutation::Delete(d) => d
            .specs
            .iter()
            .map(|s| s.family.len() + s.qualifier.len() + 24)
            .sum(),
        Mutation::Increment(i) => i
            .columns
            .iter()
            .map(|(f, q, _)| f.len() + q.len() + 32)
            .sum(),
        Mutation::Append(a) => a
            .columns
            .iter()
            .map(|(f, q, v)| f.len() + q.len() + v.len() + 24)
            .sum(),
    };
    m.row().len() + cells + 16
}

impl BufferedMutator {
    pub fn new(table: Table) -> BufferedMutator {
        let limit = table.connection().config().write_buffer.max(1);
        BufferedMutator {
            table,
            buffer: Vec::new(),
            bytes: 0,
            limit,
        }
    }

    /// Bytes waiting to be sent.
    pub fn buffered_bytes(&self) -> usize {
        self.bytes
    }

    /// Buffers a mutation; sends the buffer when it is full.
    pub async fn mutate(&mut self, m: impl Into<Mutation>) -> Result<()> {
        let m = m.into();
        self.bytes += size_of(&m);
        self.buffer.push(m);
        if self.bytes >= self.limit {
            self.flush().await?;
        }
        Ok(())
    }

    /// Sends everything buffered; the first failure is returned (the others are
    /// logged), and nothing stays buffered.
    pub async fn flush(&mut self) -> Result<()> {
        let batch = std::mem::take(&mut self.buffer);
        self.bytes = 0;
        if batch.is_empty() {
            return Ok(());
        }
        let mut first: Option<Error> = None;
        for r in self.table.batch(&batch).await {
            if let Err(e) = r {
                match &first {
                    None => first = Some(e),
                    Some(_) => tracing::warn!("buffered mutation failed: {}", e.message()),
                }
            }
        }
        first.map_or(Ok(()), Err)
    }

    pub async fn close(mut self) -> Result<()> {
        self.flush().await
    }
}
