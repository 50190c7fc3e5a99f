//! Finds the region a call addresses. Clients name regions as HBase computes the name
//! (`table,start,id.md5.`, or just the MD5 "encoded" part), while Cellar keeps its own
//! encoded names for directories; this directory maps the wire form to the region,
//! rebuilding itself from the master when a name is not known (after a split, merge
//! or create). A name that is still unknown, or a region not online, is
//! NotServingRegionException, and the client looks the region up again.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use cellar_api::{Error, ErrorKind, RegionInfo};
use cellar_protocol::pb;
use cellar_protocol::pb::region_specifier::RegionSpecifierType;
use cellar_protocol::region_name::{self, META_ENCODED_NAME, META_REGION_NAME};
use cellar_region::Region;

use crate::master::Master;

/// The region a call addresses.
pub enum Target {
    /// `hbase:meta,,1`, served from the catalog.
    Meta,
    Region(Arc<Region>, Arc<RegionInfo>),
}

#[derive(Default)]
pub struct RegionDirectory {
    /// Wire encoded name → the region's info (with Cellar's encoded name).
    by_wire: RwLock<HashMap<String, Arc<RegionInfo>>>,
}

fn not_serving(what: &str) -> Error {
    Error::new(
        ErrorKind::NotServingRegion,
        format!("Region {what} is not online on this server"),
    )
}

impl RegionDirectory {
    fn rebuild(&self, master: &Master) {
        let mut map = HashMap::new();
        for e in master.catalog_entries() {
            let wire = region_name::encoded_name(&e.info.table, &e.info.start, e.info.id);
            map.insert(wire, Arc::new(e.info));
        }
        *self.by_wire.write().unwrap_or_else(|e| e.into_inner()) = map;
    }

    fn lookup(&self, wire: &str) -> Option<Arc<RegionInfo>> {
        self.by_wire
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(wire)
            .cloned()
    }

    /// The region named by a specifier. A full name's encoded part is read from its
    /// tail (every call carries one); only a name without it is parsed and hashed.
    pub fn resolve(&self, master: &Master, spec: &pb::RegionSpecifier) -> Result<Target, Error> {
        let value = &spec.value[..];
        let wire: Cow<'_, str> = match RegionSpecifierType::try_from(spec.r#type) {
            Ok(RegionSpecifierType::RegionName) => {
                if value == META_REGION_NAME || value.starts_with(b"hbase:meta,") {
                    return Ok(Target::Meta);
                }
                match region_name::encoded_part(value) {
                    Some(encoded) => Cow::Borrowed(encoded),
                    None => {
                        let p = region_name::parse(value)
                            .map_err(|e| Error::new(ErrorKind::NotServingRegion, e.to_string()))?;
                        Cow::Owned(region_name::encoded_name(&p.table, &p.start, p.id))
                    }
                }
            }
            Ok(RegionSpecifierType::EncodedRegionName) => {
                let s = String::from_utf8_lossy(value);
                if s == META_ENCODED_NAME {
                    return Ok(Target::Meta);
                }
                s
            }
            Err(_) => {
                return Err(Error::invalid(format!(
                    "unknown region specifier type {}",
                    spec.r#type
                )))
            }
        };
        let info = match self.lookup(&wire) {
            Some(i) => i,
            None => {
                self.rebuild(master);
                // A Cellar encoded name is accepted too (the status page and tools use it).
                self.lookup(&wire)
                    .or_else(|| {
                        master
                            .catalog_entries()
                            .into_iter()
                            .find(|e| e.info.encoded == wire)
                            .map(|e| Arc::new(e.info))
                    })
                    .ok_or_else(|| not_serving(&String::from_utf8_lossy(value)))?
            }
        };
        let region = master
            .region_named(&info.encoded)
            .ok_or_else(|| not_serving(&String::from_utf8_lossy(value)))?;
        Ok(Target::Region(region, info))
    }
}
