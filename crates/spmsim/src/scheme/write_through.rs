//! Every metadata line written through: STAR's strict persistence and the
//! WT baseline of Secon (STAR V-A). Each write persists its data, counter
//! block, MAC line and every changed tree node up to the root.
//!
//! ```text
//!  store --flush--> MC: counter, MAC, tree path --> WPQ (all of it, each write)
//! ```

use super::{Front, FrontDrain, MetadataPolicy, Scheme, SchemeWork, Steps};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WriteThrough {}

impl Scheme for WriteThrough {
    fn name(&self) -> &'static str {
        "write-through"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork {
            front: Front::MemoryController,
            secure: true,
            early: Steps::NONE,
            allocate_extra_accesses: 0,
            metadata: MetadataPolicy::uniform(WritePolicy::WriteThrough),
            front_drain: FrontDrain::Secured,
            battery_flushes_metadata: false,
            recovery_rebuilds_tree: false,
        }
    }
}
