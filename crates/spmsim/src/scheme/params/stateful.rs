//! The parameters of the schemes with a runtime of their own: Secon
//! (Secon 3), STAR (STAR III) and its Anubis baseline, Triad-NVM (III-B,
//! III-C) and its no-persistence baseline, and the multiset-hash paper's
//! scheme with its baselines Osiris, ASSURE and CacheTree (Kubo et al.).

use super::work::{Completion, HashRegisters, MetadataPolicy, SchemeWork, WritePolicy};
use super::{in_range, one, yes, Need, ParamError, SchemeParams, TreeType, TREE_WRITTEN_BACK, WRITE_THROUGH};
use serde::{Deserialize, Serialize};

/// Entries of Secon's pending BMT update queue and units of its counter
/// track bitmap (Secon 3.2: 16).
pub const SECON_TRACK_UNITS: u32 = 16;

/// The most units the 10 spare bits of a first-level CMAC can name (0
/// names none).
pub const SECON_MAX_TRACK_UNITS: u32 = (1 << crate::engine::crypto::SPARE_BITS) - 1;

/// What Secon's recovery does with the counters its bitmap marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SeconRecovery {
    /// Check NVM against the root with the marked counters rolled back,
    /// then re-apply the increments (nothing is lost).
    #[default]
    RollForward,
    /// Secon 3.2 as written: the marked counters stay rolled back.
    RollBack,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Secon {
    /// Entries of the pending queue and units of the bitmap (16).
    #[serde(default = "sixteen")]
    pub track_units: u32,
    /// The counter track bitmap is kept in the ADR domain (the default).
    /// false is the control `secon-no-bitmap`: power failure loses it, and
    /// recovery cannot tell which counters to roll back.
    #[serde(default = "yes")]
    pub bitmap: bool,
    #[serde(default)]
    pub recovery: SeconRecovery,
    /// Counter-log colocation (Secon 3.4.1, the default): a write to a log
    /// region carries its minor counter in its data MAC's spare bits and
    /// leaves its counter block in the counter cache (written on eviction
    /// or a minor overflow); recovery reads the newer minors back from the
    /// log. false is the ablation `secon-no-coloc`.
    #[serde(default = "yes")]
    pub colocate_counters: bool,
}

fn sixteen() -> u32 {
    SECON_TRACK_UNITS
}

impl Default for Secon {
    fn default() -> Self {
        Secon { track_units: SECON_TRACK_UNITS, bitmap: true, recovery: SeconRecovery::RollForward, colocate_counters: true }
    }
}

impl SchemeParams for Secon {
    fn name(&self) -> &'static str {
        "secon"
    }
    /// Counters and MAC lines written through with the data; the
    /// first-level nodes are written by the runtime's hooks (with the
    /// tuple, and again after their background update); the levels above
    /// are written back and rebuilt at recovery (Secon 3.2: "It is
    /// sufficient to only persist the first-level CMACs").
    /// Secon 3.2: the tuple (ciphertext, counter, first-level CMACs) is
    /// "persisted ... before the BMT root is updated", which "is performed
    /// in the background": complete with the tuple; the timing model runs
    /// the root update on the deferred path (`deferred_root_updates`).
    fn work(&self) -> SchemeWork {
        SchemeWork {
            deferred_root_updates: self.track_units,
            ..SchemeWork::at_memory_controller(TREE_WRITTEN_BACK, false, true).completing(Completion::Tuple)
        }
    }
    fn validate(&self) -> Result<(), ParamError> {
        // The 10 spare bits of a first-level CMAC name the unit (0: none).
        in_range("scheme.track_units", self.track_units as u64, 1, SECON_MAX_TRACK_UNITS as u64)
    }
    fn needs(&self) -> Vec<Need> {
        vec![Need::Tree {
            tree: TreeType::Bmt,
            no_onchip_levels: false,
            why: "keeps its counter track in the spare bits of first-level BMT CMACs",
        }]
    }
}

/// Bitmap lines in ADR (STAR IV-E: 16).
pub const STAR_BITMAP_LINES: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Star {
    /// Bitmap lines in the ADR domain (STAR Table II sweeps 2..32).
    #[serde(default = "sixteen_lines")]
    pub bitmap_lines: u32,
    /// Counter-MAC synergization (III-B). false is the control
    /// `star-no-synergy`: no LSBs are carried, stale nodes cannot be rebuilt.
    #[serde(default = "yes")]
    pub synergy: bool,
    /// The bitmap lines are in the battery-backed ADR domain. false is the
    /// control `star-no-bitmap-persist`: power failure loses the ADR lines.
    #[serde(default = "yes")]
    pub bitmap_persist: bool,
    /// Recovery checks the cache-tree root (III-E). false is the ablation
    /// `star-no-cache-tree`: replays during recovery go unseen.
    #[serde(default = "yes")]
    pub cache_tree: bool,
}

fn sixteen_lines() -> u32 {
    STAR_BITMAP_LINES
}

impl Default for Star {
    fn default() -> Self {
        Star { bitmap_lines: STAR_BITMAP_LINES, synergy: true, bitmap_persist: true, cache_tree: true }
    }
}

impl SchemeParams for Star {
    fn name(&self) -> &'static str {
        "star"
    }
    /// A write-back metadata cache (III-A) on the lazy SIT: a write
    /// persists with its data and MAC; a dirty node is MACed when written
    /// back, in the background. What makes it recoverable is the runtime's.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), false, false).completing(Completion::Tuple)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // STAR IV-E sweeps 2..32; the ADR domain holds tens of entries.
        in_range("scheme.bitmap_lines", self.bitmap_lines as u64, 2, 1024)
    }
    fn needs(&self) -> Vec<Need> {
        vec![
            Need::Tree { tree: TreeType::Sit, no_onchip_levels: false, why: "carries parent counters' LSBs in SIT MACs (STAR III-B)" },
            Need::MacInDataLine { why: "keeps counter LSBs in data MACs written with their data (STAR II-D)" },
        ]
    }
}

/// Anubis for the SGX integrity tree (Zubair and Awad, ISCA 2019; STAR's
/// baseline): every metadata-cache change shadowed in NVM.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnubisSit {}

impl SchemeParams for AnubisSit {
    fn name(&self) -> &'static str {
        "anubis-sit"
    }
    /// As STAR's WB, plus a shadow-table write per cache update (a line of
    /// the tuple).
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), false, false).completing(Completion::Tuple)
    }
    fn needs(&self) -> Vec<Need> {
        vec![
            Need::Tree { tree: TreeType::Sit, no_onchip_levels: false, why: "is Anubis for the SGX integrity tree" },
            Need::UnifiedMetadataCache { why: "shadows one unified metadata cache" },
            Need::MacInDataLine { why: "runs on STAR's machine, MACs in the data line" },
        ]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Triad {
    /// N of TriadNVM-N: the highest tree level written with each write of
    /// persistent data (1, the default: the counter block's parent).
    #[serde(default = "first_level")]
    pub persist_level: u64,
    /// The lowest tree level written with it: 1. The control
    /// `triad-1-unpersisted` sets 2, so level 1 is not written with the
    /// counter and recovery, which reads level 1, cannot match the root.
    #[serde(default = "first_level", skip_serializing_if = "is_first_level")]
    pub first_persisted_level: u64,
}

fn first_level() -> u64 {
    1
}

fn is_first_level(l: &u64) -> bool {
    *l == 1
}

impl Triad {
    /// N, as a tree level (validated to at most 32).
    pub fn level(&self) -> u32 {
        self.persist_level.min(u32::MAX as u64) as u32
    }
}

const TRIAD_TREE: Need = Need::Tree { tree: TreeType::Bmt, no_onchip_levels: false, why: "works on a Bonsai Merkle tree (Triad-NVM II-A)" };

impl SchemeParams for Triad {
    fn name(&self) -> &'static str {
        "triad"
    }
    /// The policy of persistent data; the runtime applies it by region.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy { tree_through_levels: self.level(), ..TREE_WRITTEN_BACK }, false, false)
            .completing(Completion::Staged)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // Levels count from 1, the counter block's parent (Triad-NVM III-C).
        in_range("scheme.persist_level", self.persist_level, 1, 32)?;
        in_range("scheme.first_persisted_level", self.first_persisted_level, 1, 32)
    }
    fn needs(&self) -> Vec<Need> {
        vec![TRIAD_TREE, Need::RootsCoverOneKind]
    }
}

/// Triad-NVM's baseline that persists no metadata: recovery scans all of
/// memory and starts every counter afresh under a new key set.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
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

/// Osiris (Ye et al., MICRO 2018): counters written back, with a
/// stop-loss; recovery finds each lost minor by MAC trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Osiris {
    /// N: a counter block is written through when a write takes a minor
    /// counter of it to a multiple of N (Osiris's stop-loss); 0: never.
    #[serde(default = "default_stop_loss")]
    pub stop_loss: u32,
}

fn default_stop_loss() -> u32 {
    4
}

impl Default for Osiris {
    fn default() -> Self {
        Osiris { stop_loss: default_stop_loss() }
    }
}

fn stop_loss_in_range(n: u32) -> Result<(), ParamError> {
    // 0: no stop-loss (the control); at most the 7-bit minor's range.
    in_range("scheme.stop_loss", n as u64, 0, crate::engine::counter::MINOR_MAX as u64)
}

impl SchemeParams for Osiris {
    fn name(&self) -> &'static str {
        "osiris"
    }
    /// Counters and tree nodes written back, MACs with their data; the
    /// tree is rebuilt at recovery from the recovered counters.
    fn work(&self) -> SchemeWork {
        let metadata = MetadataPolicy { mac: WritePolicy::WriteThrough, ..MetadataPolicy::uniform(WritePolicy::WriteBack) };
        // Complete with the data and its MAC (the ECC bits Osiris checks):
        // the counters and the tree are recovered, not persisted.
        SchemeWork::at_memory_controller(metadata, false, true).completing(Completion::Tuple)
    }
    fn validate(&self) -> Result<(), ParamError> {
        stop_loss_in_range(self.stop_loss)
    }
    fn needs(&self) -> Vec<Need> {
        vec![Need::Tree { tree: TreeType::Bmt, no_onchip_levels: false, why: "keeps split counters (Osiris's setting)" }]
    }
    /// Without a stop-loss a crash loses a counter only once a block is
    /// written more often than the trials search.
    fn gap_needs_trigger(&self) -> bool {
        self.stop_loss == 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mset {
    /// eADR (4.6): the battery writes the metadata cache back at a crash,
    /// and recovery needs no Osiris.
    #[serde(default)]
    pub eadr: bool,
    /// Osiris's stop-loss N (ADR only; see `Osiris`).
    #[serde(default = "default_stop_loss")]
    pub stop_loss: u32,
    /// Evictions are added to Write Hash (false: the control
    /// `mset-no-write-hash`).
    #[serde(default = "yes")]
    pub write_hash: bool,
    /// How each register's unit takes its increments: pipelined (the
    /// default), or one at a time, each holding the unit for the whole
    /// hash latency (Table 1's 160 cycles).
    #[serde(default)]
    pub register_unit: RegisterUnit,
    /// The pipelined hash unit's initiation interval, in cycles.
    #[serde(default = "default_mset_hash_interval")]
    pub hash_interval_cycles: u32,
    /// The accumulate's cycles: one addition into the register.
    #[serde(default = "one")]
    pub accumulate_cycles: u32,
}

/// How the multiset-hash registers' units take their increments. Table 1
/// gives 160 cycles "to compute or increment" a multiset hash and says
/// nothing of throughput. MSet-Add-Hash (Clarke et al., 4.2) hashes each
/// element on its own and adds the hashes modulo 2^m: hardware of its kind
/// pipelines the hash, and only the addition into the register, which
/// needs the sum before it, is serial.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RegisterUnit {
    /// A pipelined MD5 unit, a new element every `hash_interval_cycles`,
    /// then the element's hash added into the register in
    /// `accumulate_cycles`, one addition at a time.
    #[default]
    Pipelined,
    /// Each increment holds the register's unit for the whole hash
    /// latency, one after another.
    OneAtATime,
}

/// The pipelined unit's initiation interval, from the hash the paper uses
/// (4.2: "one MD5 operation" per element, [28]): an element is a 64 B line
/// and its address, two 64-byte MD5 blocks of 64 steps each, so 128 steps
/// in Table 1's 160 cycles, 1.25 cycles a step; a fully unrolled MD5 core,
/// a pipeline stage per step, takes a new element every stage: 2 cycles,
/// rounded up to whole cycles. The accumulate's 1 cycle is one 128-bit
/// addition (MSet-Add-Hash's sum modulo 2^128).
fn default_mset_hash_interval() -> u32 {
    2
}

impl Default for Mset {
    fn default() -> Self {
        Mset {
            eadr: false,
            stop_loss: default_stop_loss(),
            write_hash: true,
            register_unit: RegisterUnit::default(),
            hash_interval_cycles: default_mset_hash_interval(),
            accumulate_cycles: one(),
        }
    }
}

impl SchemeParams for Mset {
    fn name(&self) -> &'static str {
        "mset"
    }
    /// Everything written back (4.3); with eADR the battery flushes it.
    /// 4.3: a write updates its counter in the cache and leaves the tree
    /// alone (a cached line acts as a root): complete with its data and
    /// MAC; write-backs and register increments run in the background.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), self.eadr, false).completing(Completion::Tuple)
    }
    fn validate(&self) -> Result<(), ParamError> {
        stop_loss_in_range(self.stop_loss)?;
        in_range("scheme.hash_interval_cycles", self.hash_interval_cycles as u64, 1, 1 << 16)?;
        in_range("scheme.accumulate_cycles", self.accumulate_cycles as u64, 1, 1 << 16)
    }
    /// Read Hash and Write Hash (4.2), each with its own unit.
    fn hash_registers(&self) -> Option<HashRegisters> {
        Some(match self.register_unit {
            RegisterUnit::Pipelined => HashRegisters::Pipelined { interval: self.hash_interval_cycles, accumulate: self.accumulate_cycles },
            RegisterUnit::OneAtATime => HashRegisters::OneAtATime,
        })
    }
    fn needs(&self) -> Vec<Need> {
        vec![
            Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "updates a Bonsai Merkle tree lazily" },
            Need::UnifiedMetadataCache { why: "tracks one unified metadata cache" },
            Need::MacInDataLine { why: "keeps data MACs with the data (Osiris's trials read them)" },
        ]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Assure {
    /// Levels under the top level at which the hot tree's root sits.
    #[serde(default = "one")]
    pub below_top: u32,
    /// Writes between two choices of the hot tree.
    #[serde(default = "default_epoch")]
    pub epoch_writes: u32,
    /// The hot tree's register is non-volatile (false: the control
    /// `assure-volatile-hot-register`, whose register a power failure
    /// loses, leaving the detached subtree's parent entry stale).
    #[serde(default = "yes")]
    pub nv_hot_register: bool,
}

fn default_epoch() -> u32 {
    4096
}

impl Default for Assure {
    fn default() -> Self {
        Assure { below_top: one(), epoch_writes: default_epoch(), nv_hot_register: true }
    }
}

impl SchemeParams for Assure {
    fn name(&self) -> &'static str {
        "assure"
    }
    /// The write-through baseline's rule (Kubo et al. 5.1): complete once
    /// the update reaches the root, or the hot tree's register.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, false, false).completing(Completion::Root)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // Below the top, within the tree's height; an epoch of at least one write.
        in_range("scheme.below_top", self.below_top as u64, 0, 32)?;
        in_range("scheme.epoch_writes", self.epoch_writes as u64, 1, 1 << 30)
    }
    fn needs(&self) -> Vec<Need> {
        vec![Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "detaches a subtree of a Bonsai Merkle tree" }]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheTree {
    /// The tree level the HNode cache holds (1: the counter blocks'
    /// parents, the last level of nodes).
    #[serde(default = "one")]
    pub hnode_level: u32,
    /// HNodes the cache holds.
    #[serde(default = "default_hnodes")]
    pub hnodes: u32,
    /// Its ways per set.
    #[serde(default = "default_ways")]
    pub hnode_ways: u32,
    /// Recovery recomputes the lost HNodes (false: the control
    /// `cachetree-no-recovery`, which leaves NVM's stale copies in place).
    #[serde(default = "yes")]
    pub recovery: bool,
}

fn default_hnodes() -> u32 {
    64
}

fn default_ways() -> u32 {
    8
}

impl Default for CacheTree {
    fn default() -> Self {
        CacheTree { hnode_level: one(), hnodes: default_hnodes(), hnode_ways: default_ways(), recovery: true }
    }
}

impl SchemeParams for CacheTree {
    fn name(&self) -> &'static str {
        "cachetree"
    }
    /// Written through up to its HNode, which takes the change on chip:
    /// complete once the update reaches it (Kubo et al. 3.2).
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, false, false).completing(Completion::Root)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // A node level (1: the counters' parents) of the tree's height; a
        // small cache ("its complexity limits the HNode cache's capacity").
        in_range("scheme.hnode_level", self.hnode_level as u64, 1, 31)?;
        in_range("scheme.hnodes", self.hnodes as u64, 1, 1 << 16)?;
        in_range("scheme.hnode_ways", self.hnode_ways as u64, 1, crate::config::limits::MAX_WAYS as u64)?;
        if !self.hnodes.is_multiple_of(self.hnode_ways) {
            return Err(ParamError {
                key: "scheme.hnodes",
                message: format!("must be a multiple of scheme.hnode_ways ({}), got {}", self.hnode_ways, self.hnodes),
            });
        }
        Ok(())
    }
    fn needs(&self) -> Vec<Need> {
        vec![
            Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "caches nodes of a Bonsai Merkle tree" },
            Need::MacInDataLine { why: "models no MAC cache (its MACTree)" },
            Need::NodeLevel { key: "scheme.hnode_level", level: self.hnode_level },
        ]
    }
}

/// The write-through-to-cached reading of the multiset-hash paper's
/// unstated baseline (5.1; configs/reference/mset.toml's readings): every
/// change is written through, but a write changes its counter block and
/// the tree only up to the first line of its path the metadata cache held
/// before it, which takes the change as a root (4.3's "conventional"
/// optimisation; the counter block itself when it was cached). A line
/// whose parent lacks its change is hashed into its path, up to the next
/// line cached before, when it leaves the cache; a battery finishes those
/// changes at a power failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteThroughToCached {
    /// The battery flushes the metadata cache at a power failure (false:
    /// the control `mset-baseline-cached-no-battery`, which loses the
    /// changes that cached lines hold for their parents).
    #[serde(default = "yes")]
    pub battery: bool,
}

impl Default for WriteThroughToCached {
    fn default() -> Self {
        WriteThroughToCached { battery: true }
    }
}

impl SchemeParams for WriteThroughToCached {
    fn name(&self) -> &'static str {
        "write-through-to-cached"
    }
    /// Written through up to the first line cached before the write, which
    /// takes the change on chip: complete once the update reaches it, as
    /// CacheTree's (Kubo et al. 3.2).
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, self.battery, false).completing(Completion::Root)
    }
    fn needs(&self) -> Vec<Need> {
        vec![Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "stops a Bonsai Merkle tree's updates at cached nodes" }]
    }
}
