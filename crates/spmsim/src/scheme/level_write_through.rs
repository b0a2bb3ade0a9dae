//! Secon's WT (Secon 4.1, 4.3): metadata written through up to a level of
//! the tree, the rest rebuilt at recovery. Its rules are all data.

use super::params::{in_range, one, yes, Completion, MetadataPolicy, ParamError, SchemeParams, SchemeWork, TREE_WRITTEN_BACK};
use super::{Registered, Role};
use serde::{Deserialize, Serialize};

/// Metadata written through up to a level of the tree: Secon's WT
/// (Secon 4.1, 4.3: each write persists "ciphertext, counter, and the
/// first-level BMT blocks" after the root update). Nodes above the level
/// are written back and, under ADR only, lost at a crash; recovery
/// rebuilds the tree from the counters and compares it with the root.
/// Secon names no data MAC of its own: its presets keep one in the data
/// line's ECC bits (`security.mac_placement = "data-line"`, wt.toml), so
/// a write persists the three lines of Secon's tuple; with MAC lines it
/// would persist a fourth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelWriteThrough {
    /// Tree levels written with each write (1: the level above the
    /// counter blocks, Secon's WT; the default).
    #[serde(default = "one")]
    pub tree_levels: u32,
    /// Recovery rebuilds the levels above `tree_levels` (the default).
    /// false is the control `wt-no-rebuild`: the stale upper levels stay,
    /// and the oracle must find the data they no longer vouch for.
    #[serde(default = "yes")]
    pub rebuild: bool,
}

impl Default for LevelWriteThrough {
    fn default() -> Self {
        LevelWriteThrough { tree_levels: one(), rebuild: yes() }
    }
}

impl SchemeParams for LevelWriteThrough {
    fn name(&self) -> &'static str {
        "level-write-through"
    }
    /// Secon 2.3 on WT: "Each write in a transaction is stalled until the
    /// BMT root of the log entry is updated".
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy { tree_through_levels: self.tree_levels, ..TREE_WRITTEN_BACK }, false, self.rebuild)
            .completing(Completion::Root)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // Level 1 is the lowest tree level; the tree has at most 32.
        in_range("scheme.tree_levels", self.tree_levels as u64, 1, 32)
    }
}

impl Registered for LevelWriteThrough {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
}
