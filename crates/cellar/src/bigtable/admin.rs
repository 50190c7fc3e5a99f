//! Bigtable's table admin (CreateTable with initial splits, GetTable, ListTables,
//! DeleteTable, ModifyColumnFamilies, DropRowRange, consistency tokens answered
//! "consistent": a write is visible once acknowledged) and the instance-admin calls
//! clients make, answered for one local instance a namespace.

use std::collections::HashMap;
use std::sync::Arc;

use cellar_api::{Delete, FamilyDescriptor, Mutation, Scan, TableDescriptor};
use cellar_bigtable::admin::{
    self as a, drop_row_range_request::Target, modify_column_families_request::modification::Mod,
    table, ColumnFamily,
};
use cellar_bigtable::stubs::bigtable_instance_admin_server::BigtableInstanceAdmin;
use cellar_bigtable::stubs::bigtable_table_admin_server::BigtableTableAdmin;
use tonic::{Request, Response, Status};

use super::{
    blocking, gc, namespace, parse_instance, status, table_status, Shared, TableName, NO_FAMILY,
};

pub struct TableAdmin {
    shared: Arc<Shared>,
}

impl TableAdmin {
    pub(crate) fn new(shared: Arc<Shared>) -> TableAdmin {
        TableAdmin { shared }
    }
}

/// A Cellar table as Bigtable describes it, in `view`.
fn table_of(name: &TableName, desc: &TableDescriptor, view: i32) -> a::Table {
    let name_only = view == table::View::NameOnly as i32;
    let column_families: HashMap<String, ColumnFamily> = if name_only {
        HashMap::new()
    } else {
        desc.families
            .iter()
            .filter(|f| f.name != NO_FAMILY.as_bytes())
            .map(|f| {
                (
                    String::from_utf8_lossy(&f.name).into_owned(),
                    ColumnFamily {
                        gc_rule: Some(gc::rule_of(f)),
                        value_type: None,
                    },
                )
            })
            .collect()
    };
    a::Table {
        name: name.full(),
        column_families,
        granularity: if name_only {
            0
        } else {
            table::TimestampGranularity::Millis as i32
        },
        ..Default::default()
    }
}

fn family(name: &str, cf: &ColumnFamily) -> Result<FamilyDescriptor, Status> {
    let legal = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if name.is_empty() || !legal {
        return Err(Status::invalid_argument(format!(
            "Invalid column family name {name:?}"
        )));
    }
    if cf.value_type.is_some() {
        return Err(Status::unimplemented(
            "aggregate column families (value_type) are not supported",
        ));
    }
    let mut f = FamilyDescriptor::new(name.as_bytes().to_vec());
    gc::apply(cf.gc_rule.as_ref(), &mut f)?;
    Ok(f)
}

#[tonic::async_trait]
impl BigtableTableAdmin for TableAdmin {
    async fn create_table(
        &self,
        req: Request<a::CreateTableRequest>,
    ) -> Result<Response<a::Table>, Status> {
        let req = req.into_inner();
        let (project, instance) = parse_instance(&req.parent)?;
        let name = TableName {
            project,
            instance,
            table: req.table_id.clone(),
        };
        if req.table_id.is_empty() {
            return Err(Status::invalid_argument("table_id must not be empty"));
        }
        let mut desc = TableDescriptor::new(name.cellar());
        let mut fams: Vec<(&String, &ColumnFamily)> = req
            .table
            .as_ref()
            .map(|t| t.column_families.iter().collect())
            .unwrap_or_default();
        fams.sort_by(|x, y| x.0.cmp(y.0));
        for (n, cf) in fams {
            desc.families.push(family(n, cf)?);
        }
        if desc.families.is_empty() {
            desc.families
                .push(FamilyDescriptor::new(NO_FAMILY.as_bytes().to_vec()));
        }
        let mut splits: Vec<Vec<u8>> = req.initial_splits.into_iter().map(|s| s.key).collect();
        splits.sort();
        splits.dedup();
        splits.retain(|k| !k.is_empty());
        let conn = self.shared.conn.clone();
        let ns = namespace(&name.instance);
        let out = desc.clone();
        let full = name.full();
        blocking(move || {
            let admin = conn.admin();
            if admin.table_exists(&desc.name).map_err(status)? {
                return Err(Status::already_exists(format!(
                    "table {:?} already exists",
                    full
                )));
            }
            if !admin.list_namespaces().map_err(status)?.contains(&ns) {
                match admin.create_namespace(&ns) {
                    Ok(()) => {}
                    Err(e) if e.kind() == cellar_api::ErrorKind::NamespaceExists => {}
                    Err(e) => return Err(status(e)),
                }
            }
            admin.create_table(desc, splits).map_err(status)
        })
        .await?;
        Ok(Response::new(table_of(
            &name,
            &out,
            table::View::SchemaView as i32,
        )))
    }

    async fn get_table(
        &self,
        req: Request<a::GetTableRequest>,
    ) -> Result<Response<a::Table>, Status> {
        let req = req.into_inner();
        let name = TableName::parse(&req.name)?;
        let conn = self.shared.conn.clone();
        let t = name.cellar();
        let n = name.clone();
        let (desc, _) =
            blocking(move || conn.admin().describe(&t).map_err(table_status(&n))).await?;
        let view = if req.view == 0 {
            table::View::SchemaView as i32
        } else {
            req.view
        };
        Ok(Response::new(table_of(&name, &desc, view)))
    }

    async fn list_tables(
        &self,
        req: Request<a::ListTablesRequest>,
    ) -> Result<Response<a::ListTablesResponse>, Status> {
        let req = req.into_inner();
        let (project, instance) = parse_instance(&req.parent)?;
        let ns = namespace(&instance);
        let conn = self.shared.conn.clone();
        let view = if req.view == 0 {
            table::View::NameOnly as i32
        } else {
            req.view
        };
        let tables = blocking(move || {
            let admin = conn.admin();
            let names = match admin.list_namespace_tables(&ns) {
                Ok(n) => n,
                Err(e) if e.kind() == cellar_api::ErrorKind::NamespaceNotFound => Vec::new(),
                Err(e) => return Err(status(e)),
            };
            let mut out = Vec::new();
            for full in names {
                let table = full
                    .split_once(':')
                    .map_or(full.as_str(), |(_, t)| t)
                    .to_string();
                let name = TableName {
                    project: project.clone(),
                    instance: instance.clone(),
                    table,
                };
                let desc = if view == table::View::NameOnly as i32 {
                    TableDescriptor::new(full.clone())
                } else {
                    admin.describe(&full).map_err(status)?.0
                };
                out.push(table_of(&name, &desc, view));
            }
            out.sort_by(|x, y| x.name.cmp(&y.name));
            Ok(out)
        })
        .await?;
        Ok(Response::new(a::ListTablesResponse {
            tables,
            next_page_token: String::new(),
        }))
    }

    async fn delete_table(
        &self,
        req: Request<a::DeleteTableRequest>,
    ) -> Result<Response<()>, Status> {
        let name = TableName::parse(&req.into_inner().name)?;
        let conn = self.shared.conn.clone();
        let t = name.cellar();
        let n = name.clone();
        blocking(move || {
            let admin = conn.admin();
            let st = table_status(&n);
            if admin.is_table_enabled(&t).map_err(&st)? {
                admin.disable_table(&t).map_err(&st)?;
            }
            admin.delete_table(&t).map_err(&st)
        })
        .await?;
        Ok(Response::new(()))
    }

    async fn modify_column_families(
        &self,
        req: Request<a::ModifyColumnFamiliesRequest>,
    ) -> Result<Response<a::Table>, Status> {
        let req = req.into_inner();
        let name = TableName::parse(&req.name)?;
        let conn = self.shared.conn.clone();
        let t = name.cellar();
        let n = name.clone();
        let desc = blocking(move || {
            let admin = conn.admin();
            let (mut desc, _) = admin.describe(&t).map_err(table_status(&n))?;
            for m in &req.modifications {
                let pos = desc.families.iter().position(|f| f.name == m.id.as_bytes());
                match (&m.r#mod, pos) {
                    (Some(Mod::Create(cf)), None) => desc.families.push(family(&m.id, cf)?),
                    (Some(Mod::Create(_)), Some(_)) => {
                        return Err(Status::already_exists(format!(
                            "Column family {} already exists",
                            m.id
                        )))
                    }
                    (Some(Mod::Update(cf)), Some(i)) => {
                        let mut f = desc.families[i].clone();
                        gc::apply(cf.gc_rule.as_ref(), &mut f)?;
                        desc.families[i] = f;
                    }
                    (Some(Mod::Drop(true)), Some(i)) => {
                        desc.families.remove(i);
                    }
                    (Some(Mod::Update(_)) | Some(Mod::Drop(true)), None) => {
                        return Err(Status::not_found(format!(
                            "Column family {} does not exist",
                            m.id
                        )))
                    }
                    _ => {
                        return Err(Status::invalid_argument(format!(
                            "Modification of {} names no change",
                            m.id
                        )))
                    }
                }
            }
            let real = desc.families.iter().any(|f| f.name != NO_FAMILY.as_bytes());
            if real {
                desc.families.retain(|f| f.name != NO_FAMILY.as_bytes());
            } else if desc.families.is_empty() {
                desc.families
                    .push(FamilyDescriptor::new(NO_FAMILY.as_bytes().to_vec()));
            }
            admin.modify_table(desc.clone()).map_err(status)?;
            Ok(desc)
        })
        .await?;
        Ok(Response::new(table_of(
            &name,
            &desc,
            table::View::SchemaView as i32,
        )))
    }

    async fn drop_row_range(
        &self,
        req: Request<a::DropRowRangeRequest>,
    ) -> Result<Response<()>, Status> {
        let req = req.into_inner();
        let name = TableName::parse(&req.name)?;
        let conn = self.shared.conn.clone();
        let t = name.cellar();
        let n = name.clone();
        blocking(move || match req.target {
            Some(Target::DeleteAllDataFromTable(true)) => {
                conn.admin().truncate_table(&t).map_err(table_status(&n))
            }
            Some(Target::RowKeyPrefix(prefix)) if !prefix.is_empty() => {
                let table = conn.table(&t).map_err(table_status(&n))?;
                let scan = Scan::new().with_row_prefix(prefix).raw(false);
                let mut batch = Vec::new();
                for r in table.scan(&scan).map_err(status)? {
                    let r = r.map_err(status)?;
                    if batch
                        .last()
                        .is_some_and(|m: &Mutation| m.row() == r.row.as_slice())
                    {
                        continue;
                    }
                    batch.push(Mutation::Delete(Delete::new(r.row)));
                    if batch.len() >= 1000 {
                        for res in table.batch(&batch) {
                            res.map_err(status)?;
                        }
                        batch.clear();
                    }
                }
                for res in table.batch(&batch) {
                    res.map_err(status)?;
                }
                Ok(())
            }
            _ => Err(Status::invalid_argument(
                "DropRowRange needs a row_key_prefix or delete_all_data_from_table",
            )),
        })
        .await?;
        Ok(Response::new(()))
    }

    async fn generate_consistency_token(
        &self,
        req: Request<a::GenerateConsistencyTokenRequest>,
    ) -> Result<Response<a::GenerateConsistencyTokenResponse>, Status> {
        TableName::parse(&req.into_inner().name)?;
        Ok(Response::new(a::GenerateConsistencyTokenResponse {
            consistency_token: "cellar-consistent".into(),
        }))
    }

    async fn check_consistency(
        &self,
        req: Request<a::CheckConsistencyRequest>,
    ) -> Result<Response<a::CheckConsistencyResponse>, Status> {
        TableName::parse(&req.into_inner().name)?;
        Ok(Response::new(a::CheckConsistencyResponse {
            consistent: true,
        }))
    }
}

/// The instance-admin calls clients and `cbt` make, for local instances.
pub struct InstanceAdmin {
    shared: Arc<Shared>,
}

impl InstanceAdmin {
    pub(crate) fn new(shared: Arc<Shared>) -> InstanceAdmin {
        InstanceAdmin { shared }
    }
}

fn instance(project: &str, id: &str) -> a::Instance {
    a::Instance {
        name: format!("projects/{project}/instances/{id}"),
        display_name: id.to_string(),
        state: a::instance::State::Ready as i32,
        r#type: a::instance::Type::Development as i32,
        ..Default::default()
    }
}

fn cluster(instance_name: &str, id: &str) -> a::Cluster {
    a::Cluster {
        name: format!("{instance_name}/clusters/{id}-local"),
        location: "local".into(),
        state: a::cluster::State::Ready as i32,
        serve_nodes: 1,
        default_storage_type: a::StorageType::Ssd as i32,
        // Older clients (cbt among them) read the key name without checking for one.
        encryption_config: Some(a::cluster::EncryptionConfig::default()),
        ..Default::default()
    }
}

#[tonic::async_trait]
impl BigtableInstanceAdmin for InstanceAdmin {
    async fn get_instance(
        &self,
        req: Request<a::GetInstanceRequest>,
    ) -> Result<Response<a::Instance>, Status> {
        let (p, i) = parse_instance(&req.into_inner().name)?;
        Ok(Response::new(instance(&p, &i)))
    }

    async fn list_instances(
        &self,
        req: Request<a::ListInstancesRequest>,
    ) -> Result<Response<a::ListInstancesResponse>, Status> {
        let parent = req.into_inner().parent;
        let project = parent
            .strip_prefix("projects/")
            .filter(|p| !p.is_empty() && !p.contains('/'))
            .ok_or_else(|| Status::invalid_argument(format!("Invalid project name {parent:?}")))?
            .to_string();
        let conn = self.shared.conn.clone();
        let mut names = blocking(move || conn.admin().list_namespaces().map_err(status)).await?;
        names.retain(|n| n != "hbase" && n != "cellar");
        names.sort();
        Ok(Response::new(a::ListInstancesResponse {
            instances: names
                .iter()
                .map(|n| instance(&project, &n.replace('_', "-")))
                .collect(),
            ..Default::default()
        }))
    }

    async fn get_cluster(
        &self,
        req: Request<a::GetClusterRequest>,
    ) -> Result<Response<a::Cluster>, Status> {
        let name = req.into_inner().name;
        let (inst, id) = name
            .rsplit_once("/clusters/")
            .ok_or_else(|| Status::invalid_argument(format!("Invalid cluster name {name:?}")))?;
        let (_, i) = parse_instance(inst)?;
        let mut c = cluster(inst, &i);
        c.name = format!("{inst}/clusters/{id}");
        Ok(Response::new(c))
    }

    async fn list_clusters(
        &self,
        req: Request<a::ListClustersRequest>,
    ) -> Result<Response<a::ListClustersResponse>, Status> {
        let parent = req.into_inner().parent;
        let (_, i) = parse_instance(&parent)?;
        Ok(Response::new(a::ListClustersResponse {
            clusters: vec![cluster(&parent, &i)],
            ..Default::default()
        }))
    }

    async fn list_app_profiles(
        &self,
        req: Request<a::ListAppProfilesRequest>,
    ) -> Result<Response<a::ListAppProfilesResponse>, Status> {
        let parent = req.into_inner().parent;
        parse_instance(&parent)?;
        Ok(Response::new(a::ListAppProfilesResponse {
            app_profiles: vec![a::AppProfile {
                name: format!("{parent}/appProfiles/default"),
                description: "the local default profile".into(),
                ..Default::default()
            }],
            ..Default::default()
        }))
    }
}
