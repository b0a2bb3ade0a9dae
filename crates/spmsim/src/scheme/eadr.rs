//! eADR and secure eADR (SecPB II-C): the data caches in the persistence
//! domain. Their rules are all data.

use super::params::{Completion, Front, FrontDrain, MetadataPolicy, SchemeParams, SchemeWork, Steps, WritePolicy};
use super::{BatteryWriteBack, Composed, FrontChoice, MetadataChoice, Registered, Role, SchemeKind};
use serde::{Deserialize, Serialize};

/// eADR and secure eADR (SecPB II-C): the data caches are in the
/// persistence domain; the battery drains every dirty line, through the
/// security engine for secure eADR, whose metadata caches flush too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Eadr {
    /// Secure eADR (s_eADR); false is the insecure eADR of Table V.
    pub secure: bool,
}

impl SchemeParams for Eadr {
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
            completion: Completion::Root,
        }
    }
}

impl Registered for Eadr {
    fn role(&self) -> Role {
        // SecPB II-C: secure eADR flushes write-back metadata caches.
        let metadata = if self.secure { MetadataChoice::rules(SchemeKind::BatteryWriteBack(BatteryWriteBack {})) } else { MetadataChoice::NONE };
        Role::Pair(Composed { front: FrontChoice::CacheHierarchy, metadata })
    }
}
