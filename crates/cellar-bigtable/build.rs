//! Generates the tonic server stubs of the Bigtable services Cellar serves, over the
//! message types of the googleapis crates (no .proto files needed).

use tonic_build::manual::{Builder, Method, Service};

const CODEC: &str = "tonic_prost::ProstCodec";

fn method(name: &str, route: &str, input: &str, output: &str, streaming: bool) -> Method {
    let m = Method::builder()
        .name(name)
        .route_name(route)
        .input_type(input)
        .output_type(output)
        .codec_path(CODEC);
    if streaming {
        m.server_streaming().build()
    } else {
        m.build()
    }
}

fn main() {
    let v2 = "googleapis_tonic_google_bigtable_v2::google::bigtable::v2";
    let data = [
        (
            "read_rows",
            "ReadRows",
            "ReadRowsRequest",
            "ReadRowsResponse",
            true,
        ),
        (
            "sample_row_keys",
            "SampleRowKeys",
            "SampleRowKeysRequest",
            "SampleRowKeysResponse",
            true,
        ),
        (
            "mutate_row",
            "MutateRow",
            "MutateRowRequest",
            "MutateRowResponse",
            false,
        ),
        (
            "mutate_rows",
            "MutateRows",
            "MutateRowsRequest",
            "MutateRowsResponse",
            true,
        ),
        (
            "check_and_mutate_row",
            "CheckAndMutateRow",
            "CheckAndMutateRowRequest",
            "CheckAndMutateRowResponse",
            false,
        ),
        (
            "ping_and_warm",
            "PingAndWarm",
            "PingAndWarmRequest",
            "PingAndWarmResponse",
            false,
        ),
        (
            "read_modify_write_row",
            "ReadModifyWriteRow",
            "ReadModifyWriteRowRequest",
            "ReadModifyWriteRowResponse",
            false,
        ),
    ];
    let mut bigtable = Service::builder()
        .name("Bigtable")
        .package("google.bigtable.v2");
    for (name, route, i, o, s) in data {
        bigtable = bigtable.method(method(
            name,
            route,
            &format!("{v2}::{i}"),
            &format!("{v2}::{o}"),
            s,
        ));
    }

    let admin = "googleapis_tonic_google_bigtable_admin_v2::google::bigtable::admin::v2";
    let empty = "crate::Empty";
    let tables = [
        ("create_table", "CreateTable", "CreateTableRequest", "Table"),
        ("get_table", "GetTable", "GetTableRequest", "Table"),
        (
            "list_tables",
            "ListTables",
            "ListTablesRequest",
            "ListTablesResponse",
        ),
        ("delete_table", "DeleteTable", "DeleteTableRequest", empty),
        (
            "modify_column_families",
            "ModifyColumnFamilies",
            "ModifyColumnFamiliesRequest",
            "Table",
        ),
        (
            "drop_row_range",
            "DropRowRange",
            "DropRowRangeRequest",
            empty,
        ),
        (
            "generate_consistency_token",
            "GenerateConsistencyToken",
            "GenerateConsistencyTokenRequest",
            "GenerateConsistencyTokenResponse",
        ),
        (
            "check_consistency",
            "CheckConsistency",
            "CheckConsistencyRequest",
            "CheckConsistencyResponse",
        ),
    ];
    let mut table_admin = Service::builder()
        .name("BigtableTableAdmin")
        .package("google.bigtable.admin.v2");
    for (name, route, i, o) in tables {
        let o = if o == empty {
            o.to_string()
        } else {
            format!("{admin}::{o}")
        };
        table_admin = table_admin.method(method(name, route, &format!("{admin}::{i}"), &o, false));
    }

    let instances = [
        (
            "get_instance",
            "GetInstance",
            "GetInstanceRequest",
            "Instance",
        ),
        (
            "list_instances",
            "ListInstances",
            "ListInstancesRequest",
            "ListInstancesResponse",
        ),
        ("get_cluster", "GetCluster", "GetClusterRequest", "Cluster"),
        (
            "list_clusters",
            "ListClusters",
            "ListClustersRequest",
            "ListClustersResponse",
        ),
        (
            "list_app_profiles",
            "ListAppProfiles",
            "ListAppProfilesRequest",
            "ListAppProfilesResponse",
        ),
    ];
    let mut instance_admin = Service::builder()
        .name("BigtableInstanceAdmin")
        .package("google.bigtable.admin.v2");
    for (name, route, i, o) in instances {
        instance_admin = instance_admin.method(method(
            name,
            route,
            &format!("{admin}::{i}"),
            &format!("{admin}::{o}"),
            false,
        ));
    }

    // Clients too: the gateway's tests read its streams through them.
    Builder::new()
        .build_client(true)
        .build_transport(true)
        .compile(&[
            bigtable.build(),
            table_admin.build(),
            instance_admin.build(),
        ]);
}
