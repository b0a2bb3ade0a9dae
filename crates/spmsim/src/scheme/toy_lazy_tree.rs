//! A toy scheme for the test suite with no state of its own: a persist
//! buffer in front of a written-back tree that nothing recovers, which the
//! crash oracle must catch. Its rules are all data.

use super::params::{SchemeParams, SchemeWork, Steps, TREE_WRITTEN_BACK};
use super::{Registered, Role};
use serde::{Deserialize, Serialize};

/// A battery-backed persist buffer that does all its work late, counters
/// and MACs written through, tree nodes written back, and no recovery: a
/// crash loses the dirty tree nodes, which the oracle must find.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ToyLazyTree {}

impl SchemeParams for ToyLazyTree {
    fn name(&self) -> &'static str {
        "toy-lazy-tree"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork::at_persist_buffer(true, Steps::NONE, TREE_WRITTEN_BACK, false)
    }
}

impl Registered for ToyLazyTree {
    fn role(&self) -> Role {
        // A test scheme: no paper composes it.
        Role::Alone
    }
}
