//! The write-through baseline: STAR's strict persistence and Secon's WT
//! with every level written (STAR V-A). Its rules are all data.

use super::params::{Completion, SchemeParams, SchemeWork, WRITE_THROUGH};
use super::{Registered, Role};
use serde::{Deserialize, Serialize};

/// Every metadata line written through: STAR's strict persistence and the
/// WT baseline of Secon. Each write persists its data, counter block, MAC
/// line and every changed tree node up to the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WriteThrough {}

impl SchemeParams for WriteThrough {
    fn name(&self) -> &'static str {
        "write-through"
    }
    /// STAR V-A's strict persistence persists the whole branch with each
    /// write: complete once the root is updated and every line is queued.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, false, false).completing(Completion::Root)
    }
}

impl Registered for WriteThrough {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
}
