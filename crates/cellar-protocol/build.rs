//! Compiles the `.proto` message definitions in `proto/` to Rust with prost, parsing
//! them with protox so no `protoc` is needed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = [
        "proto/hbase.proto",
        "proto/rpc.proto",
        "proto/cell.proto",
        "proto/filter.proto",
        "proto/client.proto",
        "proto/master.proto",
        "proto/admin.proto",
        "proto/snapshot.proto",
        "proto/slow_log.proto",
    ];
    for f in &files {
        println!("cargo:rerun-if-changed={f}");
    }
    let fds = protox::compile(files, ["proto"])?;
    let mut config = prost_build::Config::new();
    config.bytes(["."]);
    config.compile_fds(fds)?;
    Ok(())
}
