//! Registration in ZooKeeper, when `hbase.zookeeper.quorum` is set: the znodes HBase
//! clients read to find a cluster — `<parent>/hbaseid` (cluster id),
//! `<parent>/master` (ephemeral: this server as the active master),
//! `<parent>/meta-region-server` (this server holds `hbase:meta`) and an ephemeral
//! `<parent>/rs/<host,port,startcode>` — each in HBase's encoding. Without a quorum
//! no ZooKeeper is used at all.

use cellar_api::{Error, ErrorKind, ServerName};
use cellar_protocol::convert::server_name_to_pb;
use cellar_protocol::pb;
use cellar_protocol::znode;
use zookeeper_client as zk;

/// A live registration; dropping the session removes the ephemeral znodes.
pub struct Registration {
    client: zk::Client,
    ephemeral: Vec<String>,
}

fn zk_err(what: &str, e: zk::Error) -> Error {
    Error::new(ErrorKind::Io, format!("ZooKeeper {what}: {e}"))
}

async fn ensure(client: &zk::Client, path: &str) -> Result<(), Error> {
    let opts = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    match client.create(path, &[], &opts).await {
        Ok(_) | Err(zk::Error::NodeExists) => Ok(()),
        Err(e) => Err(zk_err(&format!("create {path}"), e)),
    }
}

/// Writes `data` at `path`, replacing what a previous server left there.
async fn put(
    client: &zk::Client,
    path: &str,
    data: &[u8],
    mode: zk::CreateMode,
) -> Result<(), Error> {
    let opts = mode.with_acls(zk::Acls::anyone_all());
    match client.create(path, data, &opts).await {
        Ok(_) => Ok(()),
        Err(zk::Error::NodeExists) => {
            // A stale node (an earlier server's session not yet expired, or a
            // persistent node): replace it so it names this server.
            match client.delete(path, None).await {
                Ok(()) | Err(zk::Error::NoNode) => {}
                Err(e) => return Err(zk_err(&format!("delete {path}"), e)),
            }
            client
                .create(path, data, &opts)
                .await
                .map(|_| ())
                .map_err(|e| zk_err(&format!("create {path}"), e))
        }
        Err(e) => Err(zk_err(&format!("create {path}"), e)),
    }
}

pub async fn register(
    quorum: &str,
    parent: &str,
    server: &ServerName,
    info_port: u16,
    cluster_id: &str,
) -> Result<Registration, Error> {
    let client = zk::Client::connector()
        .with_session_timeout(std::time::Duration::from_secs(30))
        .connect(quorum)
        .await
        .map_err(|e| zk_err(&format!("connect to {quorum}"), e))?;
    let parent = parent.trim_end_matches('/');
    let mut path = String::new();
    for part in parent.split('/').filter(|p| !p.is_empty()) {
        path.push('/');
        path.push_str(part);
        ensure(&client, &path).await?;
    }
    let sn = server_name_to_pb(server);
    let id = format!("cellar-{}", server.start_code).into_bytes();
    let cid = pb::ClusterId {
        cluster_id: cluster_id.to_string(),
    };
    put(
        &client,
        &format!("{parent}/{}", znode::CLUSTER_ID),
        &znode::encode(&id, &cid),
        zk::CreateMode::Persistent,
    )
    .await?;
    put(
        &client,
        &format!("{parent}/{}", znode::META_REGION_SERVER),
        &znode::encode(&id, &znode::meta_region_server(&sn)),
        zk::CreateMode::Persistent,
    )
    .await?;
    let master = format!("{parent}/{}", znode::MASTER);
    put(
        &client,
        &master,
        &znode::encode(&id, &znode::master(&sn, info_port)),
        zk::CreateMode::Ephemeral,
    )
    .await?;
    ensure(&client, &format!("{parent}/{}", znode::REGION_SERVERS)).await?;
    let rs = format!(
        "{parent}/{}/{},{},{}",
        znode::REGION_SERVERS,
        server.host,
        server.port,
        server.start_code
    );
    put(&client, &rs, &[], zk::CreateMode::Ephemeral).await?;
    tracing::info!(%quorum, %parent, "registered in ZooKeeper");
    Ok(Registration {
        client,
        ephemeral: vec![master, rs],
    })
}

impl Registration {
    /// Removes this server's ephemeral znodes (at shutdown, before the session ends).
    pub async fn withdraw(self) {
        for p in &self.ephemeral {
            let _ = self.client.delete(p, None).await;
        }
    }
}
