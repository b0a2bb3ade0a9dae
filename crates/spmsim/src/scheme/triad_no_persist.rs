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

use super::triad::{check_regions, new_boot};
use super::{check_front, MetadataPolicy, Scheme, SchemeWork};
use crate::config::{SimConfig, WritePolicy};
use crate::engine::layout::Cover;
use crate::machine::{RecoveryReport, System};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TriadNoPersist {}

impl Scheme for TriadNoPersist {
    fn name(&self) -> &'static str {
        "triad-no-persist"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), false, false)
    }
    fn check(&self, cfg: &SimConfig) -> Result<(), String> {
        check_front(self, cfg)?;
        if !cfg.security.volatile_key {
            return Err("scheme `triad-no-persist` loses every counter at a crash, so all of memory must take a new key set at recovery; set security.volatile_key = true".into());
        }
        check_regions(self.name(), cfg)
    }
    fn lazy_counter_init(&self) -> bool {
        true
    }
    fn rekeys_all_memory(&self) -> bool {
        true
    }
    fn recover(&self, sys: &mut System, rep: &mut RecoveryReport) {
        let Some(t) = new_boot(sys) else { return };
        let st = &mut sys.mc.st;
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
