//! What one functional operation did, as the timing model prices it: the
//! NVM blocks it read and wrote, at their real addresses and by region,
//! and the cryptographic work it did, counted where it was done. The
//! functional model decides every hit, miss, write and hash; the timing
//! model only prices this record, by the same rules for every scheme.

use crate::engine::controller::MemoryController;
use crate::engine::crypto::CryptoWork;
use crate::engine::layout::Region;

#[derive(Clone, Debug, Default)]
pub struct WorkRecord {
    /// Counter blocks read from NVM (a metadata-cache miss).
    pub counter_reads: Vec<u64>,
    /// Tree nodes read to verify a fetched line.
    pub tree_reads: Vec<u64>,
    /// MAC lines read.
    pub mac_reads: Vec<u64>,
    /// Data blocks read other than the operation's own (the old
    /// ciphertexts of a page re-encrypted on a minor-counter overflow).
    pub data_reads: Vec<u64>,
    /// Blocks written to the WPQ, in order (data, metadata, evictions).
    pub writes: Vec<u64>,
    /// Pads (AES), data MACs and tree hashes the operation computed.
    pub crypto: CryptoWork,
    /// Of the tree hashes, those that verified fetched lines (checked
    /// speculatively beside their use, SecPB V-A).
    pub verify_hashes: u64,
}

/// Marks the start of an operation on the controller.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    crypto: CryptoWork,
    verify_hashes: u64,
}

impl WorkRecord {
    /// Start recording: reads are logged from here on. Writes queued
    /// since the last record (none, as every operation takes its own)
    /// stay in the log and are priced with this operation.
    pub fn start(mc: &mut MemoryController) -> Mark {
        mc.st.nvm.read_log.clear();
        Mark { crypto: mc.st.crypto.work, verify_hashes: mc.st.verify_hashes }
    }

    /// What the controller did since `mark`, into `self` (a buffer kept
    /// across operations, so recording allocates nothing once warm). Reads
    /// of the operation's own data block (`own`) are left out: the caller
    /// issues that access itself.
    pub fn fill(&mut self, mc: &mut MemoryController, mark: Mark, own: u64) {
        let r = self;
        r.counter_reads.clear();
        r.tree_reads.clear();
        r.mac_reads.clear();
        r.data_reads.clear();
        r.writes.clear();
        std::mem::swap(&mut r.writes, &mut mc.st.nvm.write_log);
        r.crypto = mc.st.crypto.work.since(&mark.crypto);
        r.verify_hashes = mc.st.verify_hashes - mark.verify_hashes;
        for a in mc.st.nvm.read_log.drain(..) {
            match mc.st.layout.region(a) {
                Some(Region::Counter { .. }) => r.counter_reads.push(a),
                // A scheme's recovery-area line (STAR's bitmap line read on
                // a miss) is a metadata read of the controller, as a node's.
                Some(Region::Tree { .. }) | Some(Region::Recovery { .. }) => r.tree_reads.push(a),
                Some(Region::MacLine { .. }) => r.mac_reads.push(a),
                Some(Region::Data { .. }) if a != own => r.data_reads.push(a),
                Some(Region::Data { .. }) | None => {}
            }
        }
    }

    /// Tree hashes of updates (eager BMT updates up to the root, SIT
    /// write-backs): the tree hashes that were not verifications.
    pub fn update_hashes(&self) -> u64 {
        self.crypto.tree_hashes - self.verify_hashes
    }
}
