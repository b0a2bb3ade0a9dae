//! Metadata written through up to a level of the tree: Secon's WT
//! baseline (Secon 4.1, 4.3: each write persists "ciphertext, counter, and
//! the first-level BMT blocks" after the root update, which stays on the
//! critical path). Tree nodes above the level are written back and, under
//! ADR only, lost at a crash; recovery rebuilds the tree from the persisted
//! counters and compares it with the on-chip root.
//!
//! ```text
//!  store --flush--> MC: counter++, OTP, ct, MAC, root update (all levels hashed)
//!                   --> WPQ: data, counter block, MAC line, tree nodes of levels 1..=N
//!  recovery: rebuild the BMT from the counter blocks, compare with the root register
//! ```
//! Secon keeps the data MACs (its CMACs) in the first-level BMT blocks;
//! spmsim keeps them in MAC lines, so a write here persists one block more
//! than Secon's three (data, counter, level-1 node).

use super::{MetadataPolicy, Scheme, SchemeWork};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelWriteThrough {
    /// Tree levels written with each write (1: the level above the
    /// counter blocks, Secon's WT; the default).
    #[serde(default = "first_level")]
    pub tree_levels: u32,
    /// Recovery rebuilds the levels above `tree_levels` (the default).
    /// false is the control `wt-no-rebuild`: the stale upper levels stay,
    /// and the oracle must find the data they no longer vouch for.
    #[serde(default = "yes")]
    pub rebuild: bool,
}

fn yes() -> bool {
    true
}

fn first_level() -> u32 {
    1
}

impl Scheme for LevelWriteThrough {
    fn name(&self) -> &'static str {
        "level-write-through"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(
            MetadataPolicy {
                tree_through_levels: self.tree_levels,
                ..MetadataPolicy::uniform(WritePolicy::WriteThrough).with_tree(WritePolicy::WriteBack)
            },
            false,
            self.rebuild,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_preset;
    use crate::machine::System;
    use crate::workload::Event;

    /// Stores to 40 blocks over 5 pages; the tree writes each persisted,
    /// and whether a crash then recovers.
    fn run(preset: &str) -> (u64, u64, bool) {
        let cfg = load_preset(preset, &["memory.capacity_bytes=67108864".into()]).unwrap();
        let mut s = System::new(&cfg, 3);
        for i in 0..40u64 {
            s.apply(&Event::store((i % 5) * 4096 + (i / 5) * 64, 8, i + 1, false)).unwrap();
        }
        let w = s.mc.st.nvm.enqueued;
        s.power_fail();
        let ok = s.recover().ok() && (0..40u64).all(|i| s.mc.read((i % 5) * 64 + i / 5).unwrap()[..8] == (i + 1).to_le_bytes());
        (w.tree, w.counter, ok)
    }

    #[test]
    fn secons_wt_writes_the_first_tree_level_and_rebuilds_the_rest() {
        let (tree, counters, ok) = run("wt");
        // Each store writes its counter block and the one level-1 node above it.
        assert_eq!((tree, counters), (40, 40));
        assert!(ok, "the upper levels, lost at the crash, are rebuilt from the counters");
        // STAR's strict persistence writes every level of the path.
        let (all_levels, _, ok) = run("secure-wt");
        assert!(all_levels > 2 * tree && ok, "{all_levels}");
    }
}
