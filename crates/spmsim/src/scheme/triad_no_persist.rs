//! Triad-NVM's no-persistence baseline (V-B, Fig. 10): no security
//! metadata is persisted, so a crash loses counters in both regions and
//! recovery must start all of memory afresh: a new key set for everything,
//! every data block scanned to initialise its MAC, every counter block and
//! tree node rebuilt ("not persisting security metadata at all will require
//! creating Merkle Tree and initializing MAC values in data blocks which
//! requires iterating over all memory blocks"). Persistent data is lost:
//! this is a recovery-time baseline, and its crash check fails by design.
//!
//! ```text
//!  write: data to the WPQ; counter, MAC, tree nodes written back when evicted
//!  recovery: new key set for all memory; scan every data block (read, MAC);
//!            zero every counter block and level-1 node; rebuild the levels above
//! ```
//! spmsim's zero level-1 entries make every counter block read as unwritten
//! after the reset, so the MAC a scanned block gets is implicit: the scan's
//! reads and MACs are counted, block by block of memory, and nothing is
//! written for them.

use super::params::{Completion, MetadataPolicy, Need, SchemeParams, SchemeWork, WritePolicy};
use super::{Registered, Role};
use super::triad::{new_boot, TRIAD_TREE};
use crate::config::SimConfig;
use crate::engine::hooks::{RecoveryReport, Scheme};
use crate::engine::layout::{Cover, Layout};
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::MetaStore;
use serde::{Deserialize, Serialize};

/// Triad-NVM's baseline that persists no metadata: recovery scans all of
/// memory and starts every counter afresh under a new key set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriadNoPersist {}

impl SchemeParams for TriadNoPersist {
    fn name(&self) -> &'static str {
        "triad-no-persist"
    }
    /// The same write path as TriadNVM-N (Fig. 7), with only the data and
    /// its MAC copied to the WPQ.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), false, false).completing(Completion::Staged)
    }
    fn needs(&self) -> Vec<Need> {
        vec![
            Need::VolatileKey { why: "loses every counter at a crash, so all of memory must take a new key set at recovery" },
            TRIAD_TREE,
            Need::RootsCoverOneKind,
        ]
    }
}

impl Registered for TriadNoPersist {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(TriadNoPersistRuntime::new(cfg))
    }
    /// Every counter starts afresh under a new key set for all of memory:
    /// zero level-1 entries mark every counter block unwritten (V-B).
    fn shape(&self, _tree: &Layout, _cfg: &SimConfig) -> SchemeShape {
        SchemeShape { zero_level1_entry_marks_unwritten: true, volatile_key_covers_all_memory: true, ..SchemeShape::default() }
    }
}

/// The baseline's runtime: whether the configuration keeps a volatile key
/// set (its configuration must: every counter is lost).
#[derive(Clone, Copy, Debug)]
pub struct TriadNoPersistRuntime {
    volatile_key: bool,
}

impl TriadNoPersistRuntime {
    pub fn new(cfg: &SimConfig) -> Self {
        TriadNoPersistRuntime { volatile_key: cfg.security.volatile_key }
    }
}

impl Scheme for TriadNoPersistRuntime {
    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        let Some(t) = new_boot(r, st, self.volatile_key) else { return };
        let layout = st.layout.clone();
        // The scan: every data block read and given a MAC, every counter
        // block zeroed.
        st.nvm.reads.data += layout.data_blocks;
        st.crypto.work.macs += layout.data_blocks;
        st.nvm.writes.mac += layout.mac_lines;
        st.nvm.writes.counter += layout.level_nodes[0];
        let nodes = t.reset_region(st, Cover::Persistent) + t.reset_region(st, Cover::Volatile);
        rep.tree_rebuilt = true;
        rep.rebuild = Some(crate::engine::tree::RebuildOutcome { nodes_rebuilt: nodes, mismatched_roots: Vec::new() });
    }
}
