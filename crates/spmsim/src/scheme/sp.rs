//! SP, SecPB's strict-persistency baseline as PLP builds it: the metadata
//! rules SecPB's persist buffers sit in front of. Its rules are all data;
//! `plp` is its earlier `type`.

use super::params::{Completion, SchemeParams, SchemeWork, TREE_WRITTEN_BACK};
use super::{Registered, Role};
use serde::{Deserialize, Serialize};

/// SP, SecPB's strict-persistency baseline, as PLP builds it: each store's
/// tuple persists at the MC before the next store; BMT nodes are written
/// back and rebuilt from the persisted counters after a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Sp {}

impl SchemeParams for Sp {
    fn name(&self) -> &'static str {
        "sp"
    }
    /// SecPB VI-A: SP's "(data, counter, MAC, root) persists before the
    /// next store": complete once the root is updated.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(TREE_WRITTEN_BACK, false, true).completing(Completion::Root)
    }
}

impl Registered for Sp {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
}
