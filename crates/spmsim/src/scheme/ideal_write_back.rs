//! Secon's ideal WB (Secon 4.1): the battery-backed write-back cache with
//! no metadata work priced. Its rules are all data.

use super::params::{write_back, yes, SchemeParams, SchemeWork};
use super::{Registered, Role};
use serde::{Deserialize, Serialize};

/// Secon's ideal WB (Secon 4.1): a battery-backed write-back metadata cache
/// "without the overheads of BMT updates and extra metadata writes". The
/// functional model is `BatteryWriteBack`'s; the timing model prices only
/// the data writes (`SchemeWork::ideal_metadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdealWriteBack {
    /// The battery flushes the dirty metadata on power loss (the default).
    /// false is the control `wb-nobattery`: the dirty counters and tree
    /// nodes die, and recovery's rebuild disagrees with the root register.
    #[serde(default = "yes")]
    pub battery: bool,
}

impl Default for IdealWriteBack {
    fn default() -> Self {
        IdealWriteBack { battery: true }
    }
}

impl SchemeParams for IdealWriteBack {
    fn name(&self) -> &'static str {
        "ideal-write-back"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork { ideal_metadata: true, ..write_back(self.battery) }
    }
}

impl Registered for IdealWriteBack {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
}
