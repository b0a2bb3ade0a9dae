//! Every metadata line written through: STAR's strict persistence and the
//! WT baseline of Secon (STAR V-A). Each write persists its data, counter
//! block, MAC line and every changed tree node up to the root.
//!
//! ```text
//!  store --flush--> MC: counter, MAC, tree path --> WPQ (all of it, each write)
//! ```

use super::{MetadataPolicy, Scheme, SchemeWork};
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
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteThrough), false, false)
    }
}
