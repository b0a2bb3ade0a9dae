//! STAR's WB baseline (STAR V-A): a battery-backed write-back metadata
//! cache. Its rules are all data.

use super::params::{write_back, SchemeParams, SchemeWork};
use super::{Registered, Role};
use serde::{Deserialize, Serialize};

/// A write-back metadata cache the battery flushes at a power failure:
/// STAR's WB baseline, its tree updates and write-backs priced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct BatteryWriteBack {}

impl SchemeParams for BatteryWriteBack {
    fn name(&self) -> &'static str {
        "battery-write-back"
    }
    fn work(&self) -> SchemeWork {
        write_back(true)
    }
}

impl Registered for BatteryWriteBack {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
}
