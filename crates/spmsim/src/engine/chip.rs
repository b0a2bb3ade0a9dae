//! The trusted chip state: keys and on-chip non-volatile registers. It is
//! saved apart from the NVM image and never placed in it (threat model:
//! SecPB II-A, the chip is the trusted computing base).

use crate::config::SimConfig;
use crate::engine::crypto::KeySet;
use crate::engine::roots::RootRegisters;
use crate::scheme::CounterTrack;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipState {
    pub seed: u64,
    pub keys: KeySet,
    /// Root registers: top-level node index -> hash (BMT) or counter (SIT).
    /// The only copy: the tree reads and writes them here (through the
    /// memory controller's store), and a chip file saves them as they are.
    pub roots: RootRegisters,
    /// The last power-off was a power failure, not an orderly shutdown: an
    /// on-chip flag (hardware knows which path it took), so that whoever
    /// powers the machine on knows the scheme's recovery must run first.
    /// Chip states saved before the flag existed read as clean.
    #[serde(default)]
    pub crashed: bool,
    /// Secon's pending BMT update queue and counter track bitmap (Secon
    /// 3.2): in the battery-backed ADR domain, so saved with the chip.
    #[serde(default, skip_serializing_if = "CounterTrack::is_empty")]
    pub counter_track: CounterTrack,
    /// The undo-log regions `[start, end)` in bytes, as software declared
    /// them (Secon 3.3's `set_log_region`): the memory controller knows a
    /// log write by its address (Secon 3.4.1).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_regions: Vec<(u64, u64)>,
    /// STAR's bitmap lines in ADR and the top layer of its index (an
    /// on-chip NV register), STAR III-C, III-D.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitmap: Option<crate::scheme::bitmap_lines::BitmapLines>,
    /// The root of the scheme's small on-chip Merkle tree: STAR's
    /// cache-tree (III-E), Anubis's shadow-table tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_root: Option<u64>,
    /// Recoveries so far: the volatile key set of the non-persistent
    /// regions is the one of this boot (Triad-NVM III-B1), so a recovery
    /// moves it on and no one-time pad of an earlier boot comes back.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub boots: u64,
    /// The multiset-hash scheme's Read Hash and Write Hash (Kubo et al.
    /// 4.2), on-chip non-volatile registers over the metadata cache's
    /// (address, line) pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mset: Option<MsetRegisters>,
    /// ASSURE's hot tree (Rakshit and Mohanram, DAC 2017; one hot tree of
    /// its dynamic multi-root trees): a BMT node detached from its parent,
    /// its hash in an on-chip non-volatile register of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot_tree: Option<HotTree>,
}

/// A detached subtree's root: the node (level, index) and the hash its
/// register holds. Updates under it stop at it; its parent's entry for it
/// is left as it was when it was detached.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HotTree {
    pub level: u32,
    pub index: u64,
    pub hash: u64,
}

impl HotTree {
    pub fn is(&self, level: u32, index: u64) -> bool {
        (self.level, self.index) == (level, index)
    }
}

/// Read Hash: every line that entered the metadata cache or a new value a
/// cached line took; Write Hash: every line that left it or an old value a
/// cached line gave up. Their difference is the cache's contents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MsetRegisters {
    pub read: crate::engine::crypto::MsetHash,
    pub write: crate::engine::crypto::MsetHash,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ChipState {
    pub fn new(cfg: &SimConfig, seed: u64) -> Self {
        ChipState {
            seed,
            keys: KeySet::derive(seed, cfg.security.aes_key_bits),
            roots: RootRegisters::default(),
            crashed: false,
            counter_track: CounterTrack::default(),
            log_regions: Vec::new(),
            bitmap: None,
            recovery_root: None,
            boots: 0,
            mset: None,
            hot_tree: None,
        }
    }

    /// Whether data block `block` lies in a declared log region.
    pub fn in_log_region(&self, block: u64) -> bool {
        let a = block * 64;
        self.log_regions.iter().any(|&(s, e)| a >= s && a < e)
    }
}
