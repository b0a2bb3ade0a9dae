//! The control of the write-back baselines: a write-back metadata cache
//! under ADR only. Its rules are all data.

use super::params::{write_back, SchemeParams, SchemeWork};
use super::{Registered, Role};
use serde::{Deserialize, Serialize};

/// Control: a write-back metadata cache under ADR only; the dirty lines
/// die at a crash and recovery's BMT rebuild disagrees with the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WriteBackNoBattery {}

impl SchemeParams for WriteBackNoBattery {
    fn name(&self) -> &'static str {
        "write-back-no-battery"
    }
    fn work(&self) -> SchemeWork {
        write_back(false)
    }
}

impl Registered for WriteBackNoBattery {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
}
