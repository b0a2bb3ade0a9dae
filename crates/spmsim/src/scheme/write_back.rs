//! Write-back metadata caches: the ideal battery-backed WB baseline of
//! Secon and STAR, and its control under ADR only.
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
