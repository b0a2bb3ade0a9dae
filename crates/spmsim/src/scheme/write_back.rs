//! Write-back metadata caches: the battery-backed WB baseline of STAR, the
//! ideal WB of Secon (the same, its metadata work unpriced), and their
//! control under ADR only.
//!
//! ```text
//!  store --flush--> MC: metadata updated in the caches (dirty) --> data to WPQ
//!  power fails: BatteryWriteBack flushes every dirty line (battery);
//!               WriteBackNoBattery loses them, and recovery's BMT rebuild
//!               disagrees with the root register
//! ```

use super::{MetadataPolicy, Scheme, SchemeWork};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};

fn write_back(battery_flushes_metadata: bool) -> SchemeWork {
    SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), battery_flushes_metadata, !battery_flushes_metadata)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct BatteryWriteBack {}

impl Scheme for BatteryWriteBack {
    fn name(&self) -> &'static str {
        "battery-write-back"
    }
    fn work(&self) -> SchemeWork {
        write_back(true)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WriteBackNoBattery {}

impl Scheme for WriteBackNoBattery {
    fn name(&self) -> &'static str {
        "write-back-no-battery"
    }
    fn work(&self) -> SchemeWork {
        write_back(false)
    }
}

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

fn yes() -> bool {
    true
}

impl Scheme for IdealWriteBack {
    fn name(&self) -> &'static str {
        "ideal-write-back"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork { ideal_metadata: true, ..write_back(self.battery) }
    }
}
