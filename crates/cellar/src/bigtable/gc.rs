//! Bigtable's garbage-collection rules as a family's settings. A family with no rule
//! keeps every version; `max_num_versions` is VERSIONS; `max_age` is TTL (whole seconds,
//! rounded up); a union of the two (a cell goes when either would take it) is both; an
//! intersection (only when both would) is TTL with MIN_VERSIONS. The rule as given is
//! kept in the family's configuration, so a table reads back exactly what was set;
//! families made through the HBase API read back the rule their settings amount to.
//! Deeper nestings have no HBase equivalent and are refused.

use cellar_api::{FamilyDescriptor, FOREVER};
use cellar_bigtable::admin::gc_rule::{Intersection, Rule, Union};
use cellar_bigtable::admin::GcRule;
use prost::Message;
use tonic::Status;

/// Where the rule as given is kept.
const KEY: &str = "cellar.bigtable.gc_rule";

/// Versions a family without a rule keeps.
pub(crate) const ALL_VERSIONS: u32 = i32::MAX as u32;

#[derive(Default)]
struct Parts {
    versions: Option<u32>,
    ttl: Option<i32>,
}

fn leaf(rule: &GcRule, parts: &mut Parts) -> Result<bool, Status> {
    match &rule.rule {
        Some(Rule::MaxNumVersions(n)) => {
            let n = u32::try_from(*n)
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| Status::invalid_argument("max_num_versions must be positive"))?;
            parts.versions = Some(parts.versions.map_or(n, |v| v.min(n)));
            Ok(true)
        }
        Some(Rule::MaxAge(d)) => {
            if d.seconds < 0 || d.nanos < 0 || (d.seconds == 0 && d.nanos == 0) {
                return Err(Status::invalid_argument("max_age must be positive"));
            }
            let secs = d.seconds.saturating_add(i64::from(d.nanos > 0));
            let secs = i32::try_from(secs).unwrap_or(i32::MAX);
            parts.ttl = Some(parts.ttl.map_or(secs, |t| t.min(secs)));
            Ok(true)
        }
        _ => Ok(false),
    }
}

fn unsupported(rule: &GcRule) -> Status {
    Status::unimplemented(format!(
        "GC rule {rule:?} has no equivalent here: use max_num_versions, max_age, or one union or intersection of them"
    ))
}

/// Sets `f`'s VERSIONS, MIN_VERSIONS and TTL from `rule`, and keeps the rule.
pub(crate) fn apply(rule: Option<&GcRule>, f: &mut FamilyDescriptor) -> Result<(), Status> {
    f.versions = ALL_VERSIONS;
    f.min_versions = 0;
    f.ttl = FOREVER;
    f.configuration.remove(KEY);
    let Some(rule) = rule.filter(|r| r.rule.is_some()) else {
        return Ok(());
    };
    let mut parts = Parts::default();
    match &rule.rule {
        Some(Rule::Union(Union { rules })) => {
            for r in rules {
                if !leaf(r, &mut parts)? {
                    return Err(unsupported(rule));
                }
            }
            if let Some(v) = parts.versions {
                f.versions = v;
            }
            if let Some(t) = parts.ttl {
                f.ttl = t;
            }
        }
        Some(Rule::Intersection(Intersection { rules })) => {
            for r in rules {
                if !leaf(r, &mut parts)? {
                    return Err(unsupported(rule));
                }
            }
            match (parts.versions, parts.ttl) {
                (Some(v), Some(t)) => {
                    f.min_versions = v;
                    f.ttl = t;
                }
                // An intersection of one kind of rule is that rule.
                (Some(v), None) => f.versions = v,
                (None, Some(t)) => f.ttl = t,
                (None, None) => {}
            }
        }
        _ => {
            if !leaf(rule, &mut parts)? {
                return Err(unsupported(rule));
            }
            if let Some(v) = parts.versions {
                f.versions = v;
            }
            if let Some(t) = parts.ttl {
                f.ttl = t;
            }
        }
    }
    f.configuration
        .insert(KEY.to_string(), cellar_types::to_hex(&rule.encode_to_vec()));
    Ok(())
}

/// The rule `f` has: the one it was given, or what its settings amount to.
pub(crate) fn rule_of(f: &FamilyDescriptor) -> GcRule {
    if let Some(r) = f
        .configuration
        .get(KEY)
        .and_then(|h| cellar_types::from_hex(h))
        .and_then(|b| GcRule::decode(b.as_slice()).ok())
    {
        return r;
    }
    let versions = (f.versions < ALL_VERSIONS).then(|| GcRule {
        rule: Some(Rule::MaxNumVersions(
            i32::try_from(f.versions).unwrap_or(i32::MAX),
        )),
    });
    let min = (f.min_versions > 0).then(|| GcRule {
        rule: Some(Rule::MaxNumVersions(
            i32::try_from(f.min_versions).unwrap_or(i32::MAX),
        )),
    });
    let age = (f.ttl != FOREVER).then(|| GcRule {
        rule: Some(Rule::MaxAge(prost_types::Duration {
            seconds: i64::from(f.ttl),
            nanos: 0,
        })),
    });
    match (versions, age, min) {
        (None, None, _) => GcRule::default(),
        (v, Some(a), Some(m)) if v.is_none() => GcRule {
            rule: Some(Rule::Intersection(Intersection { rules: vec![a, m] })),
        },
        (Some(v), None, _) => v,
        (None, Some(a), _) => a,
        (Some(v), Some(a), _) => GcRule {
            rule: Some(Rule::Union(Union { rules: vec![a, v] })),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn versions(n: i32) -> GcRule {
        GcRule {
            rule: Some(Rule::MaxNumVersions(n)),
        }
    }

    fn age(s: i64) -> GcRule {
        GcRule {
            rule: Some(Rule::MaxAge(prost_types::Duration {
                seconds: s,
                nanos: 0,
            })),
        }
    }

    #[test]
    fn rules_map_to_family_settings_and_back() {
        let mut f = FamilyDescriptor::new("cf");
        apply(None, &mut f).unwrap();
        assert_eq!(
            (f.versions, f.ttl, f.min_versions),
            (ALL_VERSIONS, FOREVER, 0)
        );
        assert_eq!(rule_of(&f), GcRule::default());
        apply(Some(&versions(2)), &mut f).unwrap();
        assert_eq!(f.versions, 2);
        assert_eq!(rule_of(&f), versions(2));
        let union = GcRule {
            rule: Some(Rule::Union(Union {
                rules: vec![versions(3), age(86400)],
            })),
        };
        apply(Some(&union), &mut f).unwrap();
        assert_eq!((f.versions, f.ttl, f.min_versions), (3, 86400, 0));
        assert_eq!(rule_of(&f), union, "the rule reads back as given");
        let inter = GcRule {
            rule: Some(Rule::Intersection(Intersection {
                rules: vec![age(60), versions(2)],
            })),
        };
        apply(Some(&inter), &mut f).unwrap();
        assert_eq!((f.versions, f.ttl, f.min_versions), (ALL_VERSIONS, 60, 2));
        // A family made through the HBase API: its settings as a rule.
        let mut h = FamilyDescriptor::new("h");
        h.versions = 5;
        h.ttl = 100;
        assert!(matches!(rule_of(&h).rule, Some(Rule::Union(_))));
        let nested = GcRule {
            rule: Some(Rule::Union(Union {
                rules: vec![inter.clone(), versions(1)],
            })),
        };
        assert_eq!(
            apply(Some(&nested), &mut f).unwrap_err().code(),
            tonic::Code::Unimplemented
        );
        assert!(apply(Some(&versions(0)), &mut f).is_err());
    }
}
