//! eADR and secure eADR (SecPB II-C): the whole data cache hierarchy is in
//! the persistence domain; on power loss the battery drains every dirty
//! line, through the security engine for secure eADR, whose metadata
//! caches are then flushed too.
//!
//! ```text
//!  store -> L1D (persistent) ... eviction -> MC -> NVM
//!  power fails: dirty lines -> [security engine] -> NVM; metadata caches flush
//! ```

use super::{Front, FrontDrain, MetadataPolicy, Scheme, SchemeWork, Steps};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Eadr {
    /// Secure eADR (s_eADR); false is the insecure eADR of Table V.
    pub secure: bool,
}

impl Scheme for Eadr {
    fn name(&self) -> &'static str {
        if self.secure {
            "s-eadr"
        } else {
            "eadr"
        }
    }
    fn work(&self) -> SchemeWork {
        SchemeWork {
            front: Front::CacheHierarchy,
            secure: self.secure,
            early: Steps::NONE,
            allocate_extra_accesses: 0,
            metadata: MetadataPolicy::uniform(WritePolicy::WriteBack),
            front_drain: if self.secure { FrontDrain::Secured } else { FrontDrain::Unsecured },
            battery_flushes_metadata: self.secure,
            recovery_rebuilds_tree: false,
            ideal_metadata: false,
            deferred_root_updates: 0,
        }
    }
}
