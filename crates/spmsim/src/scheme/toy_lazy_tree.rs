//! A toy scheme for the test suite: a battery-backed persist buffer that
//! does all its work late, counters and MACs written through, tree nodes
//! written back, and no battery for the metadata caches nor a rebuild at
//! recovery. Stale tree nodes then meet the root register after a crash,
//! so the crash oracle must report violations; it shows what adding a
//! scheme costs (docs/architecture.md).

use super::{Front, FrontDrain, MetadataPolicy, Scheme, SchemeWork, Steps};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ToyLazyTree {}

impl Scheme for ToyLazyTree {
    fn name(&self) -> &'static str {
        "toy-lazy-tree"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork {
            front: Front::PersistBuffer,
            secure: true,
            early: Steps::NONE,
            allocate_extra_accesses: 0,
            metadata: MetadataPolicy::uniform(WritePolicy::WriteThrough).with_tree(WritePolicy::WriteBack),
            front_drain: FrontDrain::Secured,
            battery_flushes_metadata: false,
            recovery_rebuilds_tree: false,
            ideal_metadata: false,
            deferred_root_updates: 0,
        }
    }
}
