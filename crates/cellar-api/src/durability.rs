//! Durability levels, as HBase's `Durability` enum and table attribute `DURABILITY`.

use std::fmt;
use std::str::FromStr;

/// How far an edit must travel before its mutation is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Durability {
    /// Use the table's setting (SYNC_WAL when the table says USE_DEFAULT too).
    #[default]
    UseDefault,
    /// No WAL edit: lost on a crash until flushed.
    SkipWal,
    /// Appended to the WAL and acknowledged at once; written out in the background.
    AsyncWal,
    /// Written to the operating system before the acknowledgement: survives a killed
    /// process, not a power loss.
    SyncWal,
    /// Fsynced before the acknowledgement: survives a power loss.
    FsyncWal,
}

impl Durability {
    /// HBase's name for the level.
    pub fn name(self) -> &'static str {
        match self {
            Durability::UseDefault => "USE_DEFAULT",
            Durability::SkipWal => "SKIP_WAL",
            Durability::AsyncWal => "ASYNC_WAL",
            Durability::SyncWal => "SYNC_WAL",
            Durability::FsyncWal => "FSYNC_WAL",
        }
    }

    /// This level, or `fallback` when this one is USE_DEFAULT.
    pub fn or(self, fallback: Durability) -> Durability {
        if self == Durability::UseDefault {
            fallback
        } else {
            self
        }
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Durability {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        Ok(match s.to_ascii_uppercase().as_str() {
            "USE_DEFAULT" => Durability::UseDefault,
            "SKIP_WAL" => Durability::SkipWal,
            "ASYNC_WAL" => Durability::AsyncWal,
            "SYNC_WAL" => Durability::SyncWal,
            "FSYNC_WAL" => Durability::FsyncWal,
            _ => return Err(format!("unknown durability '{s}'")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in [
            Durability::UseDefault,
            Durability::SkipWal,
            Durability::AsyncWal,
            Durability::SyncWal,
            Durability::FsyncWal,
        ] {
            assert_eq!(d.name().parse::<Durability>(), Ok(d));
        }
        assert!("SOMETIMES".parse::<Durability>().is_err());
        assert_eq!(
            Durability::UseDefault.or(Durability::FsyncWal),
            Durability::FsyncWal
        );
        assert_eq!(
            Durability::SkipWal.or(Durability::FsyncWal),
            Durability::SkipWal
        );
    }
}
