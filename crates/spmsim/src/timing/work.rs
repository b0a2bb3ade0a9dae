//! What one functional operation did, as the timing model prices it: the
//! NVM blocks it read and wrote, at their real addresses and by region,
//! and the root-register updates it made. The functional model decides
//! every hit, miss and write; the timing model only prices this record,
//! by the same rules for every scheme.

use crate::controller::MemoryController;
use crate::layout::Region;

#[derive(Clone, Debug, Default)]
pub struct WorkRecord {
    /// Counter blocks read from NVM (a metadata-cache miss).
    pub counter_reads: Vec<u64>,
    /// Tree nodes read to verify a fetched counter block.
    pub tree_reads: Vec<u64>,
    /// MAC lines read.
    pub mac_reads: Vec<u64>,
    /// Blocks written to the WPQ, in order (data, metadata, evictions).
    pub writes: Vec<u64>,
    /// Root-register updates: each is one leaf-to-root tree update.
    pub root_updates: u64,
}

/// Marks the start of an operation on the controller.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    root_updates: u64,
}

impl WorkRecord {
    /// Start recording: reads are logged from here on. Writes queued
    /// since the last record (none, as every operation takes its own)
    /// stay in the log and are priced with this operation.
    pub fn start(mc: &mut MemoryController) -> Mark {
        mc.st.nvm.read_log.clear();
        Mark { root_updates: mc.st.root_updates }
    }

    /// What the controller did since `mark`, into `self` (a buffer kept
    /// across operations, so recording allocates nothing once warm). Data
    /// reads are left out: the caller issues the data access itself.
    pub fn fill(&mut self, mc: &mut MemoryController, mark: Mark) {
        let r = self;
        r.counter_reads.clear();
        r.tree_reads.clear();
        r.mac_reads.clear();
        r.writes.clear();
        std::mem::swap(&mut r.writes, &mut mc.st.nvm.write_log);
        r.root_updates = mc.st.root_updates - mark.root_updates;
        for a in mc.st.nvm.read_log.drain(..) {
            match mc.st.layout.region(a) {
                Some(Region::Counter { .. }) => r.counter_reads.push(a),
                Some(Region::Tree { .. }) => r.tree_reads.push(a),
                Some(Region::MacLine { .. }) => r.mac_reads.push(a),
                Some(Region::Data { .. }) | None => {}
            }
        }
    }
}
