//! Secon's scalable write-through metadata cache (Secon 3.2, Fig. 5): the
//! memory tuple (ciphertext, counter, first-level CMAC) is persisted at
//! once, and the BMT root update above the first level runs in the
//! background. Two structures in the battery-backed ADR domain say which
//! counters NVM holds ahead of the root register: the pending BMT update
//! queue and the counter track bitmap (16 entries and 16 units of 64 bits,
//! 224 B); the 10 spare bits of a first-level CMAC hold its unit's id.
//!
//! ```text
//!  write: counter++ --> unit of its counter block: bit[minor] = 1; queue <- block
//!         level-1 CMAC = hash(counter block)[54 bits] | unit id << 54
//!         WPQ <- ciphertext (+ data MAC), counter block, level-1 node  (ACK-free)
//!  background (settle): spare bits cleared, unit and queue entry freed,
//!         level-1 node hashed up to the root register; the node written again
//!  recovery: scan level 1 for CMACs with spare bits -> unit -> marked
//!         minors - 1 -> rebuild the BMT -> compare with the root register
//! ```
//! When the background update runs is the persistency model's business
//! (`Scheme::settle` at the point where it waits for the MC's ACK); the
//! functional model runs it no earlier than that, or when the queue or the
//! bitmap is full, so every crash point sees as much pending as the
//! hardware could hold.
//!
//! Three rules the paper leaves open, chosen here and counted:
//! - An update settles a whole level-1 node: the root update hashes the
//!   node, so it vouches for every CMAC in it, and a CMAC it vouched for
//!   could no longer be rolled back.
//! - A second increment of a minor already marked waits for the first's
//!   update (one bit per minor holds one increment), and so does a minor
//!   overflow (the roll-back cannot undo a page re-encryption): both settle
//!   the node first, the overflow then updates the root on the critical path.
//! - A pending level-1 node leaving the BMT cache settles first (the
//!   hardware would keep it until its update is done).
//!
//! Recovery as the paper gives it (`SeconRecovery::RollBack`) leaves the
//! rolled-back blocks' ciphertexts under counters one behind: their data is
//! lost, and with it the other words of their line and any earlier log
//! entry in it. `SeconRecovery::RollForward` (spmsim's default) uses the
//! rolled-back counters only to check NVM against the root register, then
//! re-applies the marked increments through the tree, losing nothing.
//!
//! The runtime is split by what each part holds: the write path and the
//! background update (this file), the ADR structures (`track.rs`), the
//! recovery (`recovery.rs`) and the attacks on its input (`attacks.rs`).

mod attacks;
mod recovery;
mod track;

pub use track::{CounterTrack, TrackStats, TrackUnit};

use super::params::{in_range, yes, Completion, Need, ParamError, SchemeParams, SchemeWork, TreeType, TREE_WRITTEN_BACK};
use super::{FrontChoice, Registered, Role};
use crate::config::SimConfig;
use crate::engine::chip::ChipState;
use crate::engine::counter::{bmt_set_slot, bmt_slots};
use crate::engine::crypto::{MAC_BITS, MAC_MASK};
use crate::engine::hooks::{BatteryDuty, DrainWork, OwnState, RecoveryAttack, RecoveryReport, Scheme};
use crate::engine::layout::Layout;
use crate::engine::nvm::NvmImage;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::{BonsaiMerkleTree, IntegrityTree};
use serde::{Deserialize, Serialize};
use track::marked_minors;

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

/// Secon: pre-persisted write-through metadata, background root update
/// (Secon 3).
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

impl Registered for Secon {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(SeconRuntime::new(*self))
    }
    /// A level-1 BMT entry keeps a 54-bit hash: its 10 spare bits name the
    /// counter track unit of its counter block (Secon 3.2).
    fn shape(&self, _tree: &Layout, _cfg: &SimConfig) -> SchemeShape {
        SchemeShape { level1_entry_hash_bits: MAC_BITS, ..SchemeShape::default() }
    }
    /// Secon 3.4.1: a log write carries its minor counter in its data
    /// MAC's spare bits, made at the memory controller.
    fn refuses_front(&self, front: FrontChoice) -> Option<String> {
        front.early_mac().filter(|_| self.colocate_counters).map(|v| {
            format!(
                "Secon's log writes carry their minor counter in the data MAC's spare bits, set at the memory controller, but `{}` makes the MAC early in the persist buffer",
                v.name()
            )
        })
    }
}

/// Secon's non-volatile state: the ADR structures, and the undo-log
/// regions software declared (Secon 3.3's `set_log_region`), which the
/// memory controller tells log writes by (3.4.1).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SeconNv {
    pub track: CounterTrack,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub log_regions: Vec<(u64, u64)>,
}

impl SeconNv {
    /// Whether data block `block` lies in a declared log region.
    pub fn in_log_region(&self, block: u64) -> bool {
        let a = block * 64;
        self.log_regions.iter().any(|&(s, e)| a >= s && a < e)
    }
}

/// Secon's state in `st`'s chip (made empty on first use).
fn nv(st: &mut MetaStore) -> &mut SeconNv {
    st.chip.scheme.get_mut::<SeconNv>()
}

fn track(st: &mut MetaStore) -> &mut CounterTrack {
    &mut nv(st).track
}

/// Secon's state in `st`'s chip, if any was made.
fn nv_ref(st: &MetaStore) -> Option<&SeconNv> {
    st.chip.scheme.get::<SeconNv>()
}

/// Secon's runtime: its parameters; its state is in the ADR domain, so in
/// the chip state.
#[derive(Clone, Copy, Debug)]
pub struct SeconRuntime {
    p: Secon,
}

/// The BMT under a Secon scheme (its configuration refuses any other tree).
fn bmt(tree: &IntegrityTree) -> &BonsaiMerkleTree {
    tree.as_bmt().expect("Secon's configuration requires a BMT")
}

impl SeconRuntime {
    pub fn new(p: Secon) -> Self {
        SeconRuntime { p }
    }

    /// Whether counter block `index`'s page lies wholly in a log region, so
    /// every write under it carries its minor (Secon 3.4.1).
    fn colocated(&self, st: &MetaStore, index: u64) -> bool {
        let per = st.layout.blocks_per_counter_block();
        self.p.colocate_counters && nv_ref(st).is_some_and(|n| n.in_log_region(index * per) && n.in_log_region(index * per + per - 1))
    }

    /// Run the background root update of every pending counter block under
    /// level-1 node `node`: spare bits cleared, units and queue entries
    /// freed, the node hashed up to the root, then written to NVM.
    fn settle_node(&self, r: &Rules, st: &mut MetaStore, node: u64) -> Result<bool, CheckFailure> {
        let arity = st.layout.arity;
        let blocks: Vec<u64> = track(st).queue.iter().copied().filter(|&c| c / arity == node).collect();
        if blocks.is_empty() {
            return Ok(false);
        }
        let addr = st.layout.meta_addr(1, node);
        let line = st.update(r, addr, |p| {
            for &c in &blocks {
                let slot = (c % arity) as usize;
                bmt_set_slot(p, slot, bmt_slots(p)[slot] & MAC_MASK);
            }
        })?;
        for &c in &blocks {
            track(st).free(c);
        }
        bmt(&r.tree).node_updated(r, st, 1, node, line)?;
        // Secon 3.2: "the unused bits in CMAC1 are set to 0 in the BMT
        // cache, and CMAC1 is written to PM".
        st.write_line_through(addr);
        Ok(true)
    }

    /// Settle the oldest pending node; false when nothing is pending.
    fn settle_oldest(&self, r: &Rules, st: &mut MetaStore) -> Result<bool, CheckFailure> {
        match track(st).queue.first() {
            Some(&c) => self.settle_node(r, st, c / st.layout.arity),
            None => Ok(false),
        }
    }
}

impl Scheme for SeconRuntime {
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<SeconNv>()
    }

    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        let (_, node, slot) = st.layout.parent_of(0, index).expect("a counter block has a parent");
        let old = st.peek_line(addr).unwrap_or_else(|| r.tree.default_block(0));
        let cap = self.p.track_units as usize;
        let marks = match marked_minors(&old, &bytes) {
            Some(m) if m != 0 => m,
            _ => {
                // A page re-encryption cannot be rolled back by one: the
                // node settles and the root is updated now.
                if self.settle_node(r, st, node)? {
                    track(st).stats.settled_on_overflow += 1;
                }
                return bmt(&r.tree).counter_updated(r, st, index, bytes);
            }
        };
        let t = track(st);
        if t.unit_of(index).and_then(|u| t.units[u]).is_some_and(|u| u.minors & marks != 0) && self.settle_node(r, st, node)? {
            track(st).stats.settled_same_minor += 1;
        }
        let unit = loop {
            let t = track(st);
            if let Some(u) = t.unit_of(index).or_else(|| t.allocate(index, cap)) {
                break u;
            }
            // Secon 3.2: a full queue or bitmap stalls the write until the
            // oldest background update is done.
            if !self.settle_oldest(r, st)? {
                unreachable!("a full counter track has a pending entry");
            }
            track(st).stats.settled_when_full += 1;
        };
        {
            let t = track(st);
            if let Some(u) = &mut t.units[unit] {
                u.minors |= marks;
            }
            t.stats.deferred_writes += 1;
        }
        st.install(r, addr, bytes, true);
        if self.colocated(st, index) {
            // The log line carries the minor; the counter block waits in
            // the counter cache.
            track(st).stats.colocated_counters += 1;
        } else {
            st.metadata_dirtied(r, addr)?;
        }
        let entry = bmt(&r.tree).entry_for(0, st.crypto.bmt_hash(&bytes)) | ((unit as u64 + 1) << MAC_BITS);
        let l1 = st.layout.meta_addr(1, node);
        let line = st.update(r, l1, |p| bmt_set_slot(p, slot, entry))?;
        // The first-level CMAC persists with the tuple; the line stays
        // dirty in the BMT cache until its background update.
        st.nvm.write(&st.layout, l1, line);
        Ok(())
    }

    fn settle(&self, r: &Rules, st: &mut MetaStore, counter_index: Option<u64>) -> Result<(), CheckFailure> {
        let arity = st.layout.arity;
        match counter_index {
            Some(c) => {
                if track(st).unit_of(c).is_some() && self.settle_node(r, st, c / arity)? {
                    track(st).stats.settled_on_ack += 1;
                }
            }
            None => {
                while self.settle_oldest(r, st)? {
                    track(st).stats.settled_on_ack += 1;
                }
            }
        }
        Ok(())
    }

    fn on_metadata_evict(&self, r: &Rules, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        if let Some((1, node)) = st.layout.meta_pos(addr) {
            let arity = st.layout.arity;
            if track(st).queue.iter().any(|&c| c / arity == node) {
                // Back in, settled there, and written clean.
                st.install(r, addr, bytes, true);
                self.settle_node(r, st, node)?;
                track(st).stats.settled_on_eviction += 1;
                return Ok(());
            }
        }
        r.write_back(st, addr, bytes)
    }

    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip {
            name: "counter-track-tamper",
            why: "the pending BMT update queue and the counter track bitmap are in the battery-backed ADR domain of the memory controller (Secon 3.1, Fig. 4)",
        }]
    }

    /// Software's undo log, declared at its first store to it: a log write
    /// is then known by its address (3.4.1), when counters are colocated.
    fn on_log_store(&self, st: &mut MetaStore, (start, end): (u64, u64)) {
        if !self.p.colocate_counters || nv_ref(st).is_some_and(|n| n.in_log_region(start / 64)) {
            return;
        }
        nv(st).log_regions.push((start, end));
    }

    fn data_mac_spare(&self, st: &MetaStore, block: u64, (_, minor): (u64, u64)) -> u16 {
        let (page, _) = st.layout.counter_of(block);
        if self.colocated(st, page) {
            minor as u16
        } else {
            0
        }
    }

    fn recovery_attack_names(&self) -> &'static [&'static str] {
        attacks::NAMES
    }

    fn recovery_state_pending(&self, st: &MetaStore, _volatile_data: bool) -> bool {
        nv_ref(st).is_some_and(|n| !n.track.is_empty())
    }

    fn recovery_attacks(&self, r: &Rules, st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        self.attacks(r, st, earlier)
    }

    /// 3.2: the pending BMT update queue and the counter track bitmap sit
    /// in the ADR domain: at a power failure ADR writes them to NVM, one
    /// 8 B entry (address and minor) per unit and the bitmap, in lines.
    fn battery_duties(&self, _cfg: &SimConfig) -> Vec<BatteryDuty> {
        let lines = (self.p.track_units as u64 * 8).div_ceil(64) + 1;
        vec![BatteryDuty { what: "pending BMT update queue and counter track bitmap", lines_moved: lines, hashes: 0 }]
    }

    fn on_power_fail(&self, _r: &Rules, st: &mut MetaStore, _work: &mut DrainWork) {
        if !self.p.bitmap {
            // The control: the bitmap is not in the battery domain.
            track(st).units.clear();
        }
    }

    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        if !r.secure {
            return;
        }
        // The report's counts in their order (a zero one is left out).
        rep.add_count("counters_rolled_back", 0);
        rep.add_count("counter_track_mismatches", 0);
        self.recover_counters(r, st, rep);
        // Marks and units that disagree: tampering, or a bitmap lost.
        rep.scheme_rejected |= rep.count("counter_track_mismatches") > 0;
    }
}

#[cfg(test)]
mod tests;
