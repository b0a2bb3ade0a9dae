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
//!         WPQ <- ciphertext, MAC line, counter block, level-1 node      (ACK-free)
//!  background (settle): spare bits cleared, unit and queue entry freed,
//!         level-1 node hashed up to the root register; the node written again
//!  recovery: scan level 1 for CMACs with spare bits -> unit -> marked
//!         minors - 1 -> rebuild the BMT -> compare with the root register
//! ```
//! When the background update runs is the persistency model's business
//! ([`Scheme::settle`] at the point where it waits for the MC's ACK); the
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
//! Recovery as the paper gives it ([`SeconRecovery::RollBack`]) leaves the
//! rolled-back blocks' ciphertexts under counters one behind: their data is
//! lost, and with it the other words of their line and any earlier log
//! entry in it. [`SeconRecovery::RollForward`] (spmsim's default) uses the
//! rolled-back counters only to check NVM against the root register, then
//! re-applies the marked increments through the tree, losing nothing.

use super::{MetadataPolicy, OwnState, RecoveryAttack, Scheme, SchemeWork};
use crate::config::{SimConfig, WritePolicy};
use crate::engine::counter::{bmt_set_slot, bmt_slots, SplitCounterBlock};
use crate::engine::crypto::{MAC_BITS, MAC_MASK};
use crate::engine::nvm::NvmImage;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::{BonsaiMerkleTree, IntegrityTree};
use crate::machine::{DrainWork, RecoveryReport, System};
use serde::{Deserialize, Serialize};

/// Entries of the pending BMT update queue and units of the counter track
/// bitmap (Secon 3.2: "both set to be 16").
pub const SECON_TRACK_UNITS: u32 = 16;

/// The largest unit count the 10 spare CMAC bits can name (id 0 = none).
pub const SECON_MAX_TRACK_UNITS: u32 = (1 << (64 - MAC_BITS)) - 1;

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
fn yes() -> bool {
    true
}

impl Default for Secon {
    fn default() -> Self {
        Secon { track_units: SECON_TRACK_UNITS, bitmap: true, recovery: SeconRecovery::RollForward, colocate_counters: true }
    }
}

/// One unit of the counter track bitmap: a counter block and its minors
/// persisted ahead of the root register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackUnit {
    pub counter_block: u64,
    pub minors: u64,
}

/// What the counter track did (functional counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackStats {
    /// Writes whose root update was deferred.
    pub deferred_writes: u64,
    /// Level-1 nodes whose background update ran because the persistency
    /// model waited for an ACK.
    pub settled_on_ack: u64,
    /// ... because the queue or the bitmap was full (the write stalled).
    pub settled_when_full: u64,
    /// ... because a marked minor was incremented again.
    pub settled_same_minor: u64,
    /// ... because a minor overflowed (the root then updated at once).
    pub settled_on_overflow: u64,
    /// ... because the node left the BMT cache.
    pub settled_on_eviction: u64,
    /// Log writes whose counter block stayed in the counter cache, its
    /// minor carried by the log line (Secon 3.4.1).
    #[serde(default)]
    pub colocated_counters: u64,
}

/// Secon's ADR-resident state: the pending BMT update queue and the
/// counter track bitmap. Battery-backed, so it survives a power failure
/// with the chip (unless the control takes the bitmap away).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterTrack {
    /// Counter blocks whose level-1 CMAC waits for its root update,
    /// oldest first (the queue holds the CMACs' addresses: one per block).
    pub queue: Vec<u64>,
    /// Unit `i` has id `i + 1`, the value in its CMAC's spare bits.
    pub units: Vec<Option<TrackUnit>>,
    #[serde(default)]
    pub stats: TrackStats,
}

impl CounterTrack {
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    fn unit_of(&self, counter_block: u64) -> Option<usize> {
        self.units.iter().position(|u| u.is_some_and(|u| u.counter_block == counter_block))
    }

    /// A free unit for `counter_block` (sizing the bitmap to `cap` units).
    fn allocate(&mut self, counter_block: u64, cap: usize) -> Option<usize> {
        if self.queue.len() >= cap {
            return None;
        }
        if self.units.len() < cap {
            self.units.resize(cap, None);
        }
        let i = self.units.iter().position(|u| u.is_none())?;
        self.units[i] = Some(TrackUnit { counter_block, minors: 0 });
        self.queue.push(counter_block);
        Some(i)
    }

    fn free(&mut self, counter_block: u64) {
        if let Some(i) = self.unit_of(counter_block) {
            self.units[i] = None;
        }
        self.queue.retain(|&c| c != counter_block);
    }

    /// Bytes of ADR the structures take: 48-bit queue entries and 64-bit
    /// units (Secon 3.2: 224 B for 16 of each).
    pub fn adr_bytes(units: u32) -> u64 {
        units as u64 * (6 + 8)
    }
}

/// The BMT under a Secon scheme (`check` refuses any other tree).
fn bmt(tree: &IntegrityTree) -> &BonsaiMerkleTree {
    tree.as_bmt().expect("Secon's check requires a BMT")
}

/// The minors of `new` one ahead of `old`, as a mask; None when the major
/// moved (a page re-encryption) or a minor moved otherwise.
fn marked_minors(old: &[u8; 64], new: &[u8; 64]) -> Option<u64> {
    let (o, n) = (SplitCounterBlock::decode(old), SplitCounterBlock::decode(new));
    if o.major != n.major {
        return None;
    }
    let mut mask = 0u64;
    for i in 0..64 {
        if n.minors[i] == o.minors[i] {
            continue;
        }
        if n.minors[i] != o.minors[i] + 1 {
            return None;
        }
        mask |= 1 << i;
    }
    Some(mask)
}

impl Secon {
    /// Attacks on what recovery reads from the log (Secon 3.4.1): a log
    /// line's minor raised in its MAC's spare bits, and the whole log
    /// region (lines, MAC lines, counter blocks) replayed from `earlier`.
    fn log_attacks(&self, crashed: &System, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        let st = &crashed.mc.st;
        let layout = &st.layout;
        let img = &st.nvm.image;
        let mut out = Vec::new();
        if !self.colocate_counters || st.chip.log_regions.is_empty() {
            return out;
        }
        let in_log = |b: u64| b < layout.data_blocks && st.chip.in_log_region(b);
        let logged: Vec<u64> = img.sorted_addrs().into_iter().filter(|&b| in_log(b)).collect();
        if let Some(&b) = logged.last() {
            let (la, slot) = layout.mac_line_of(b);
            let mut line = *img.get(la).unwrap_or(&[0; 64]);
            let v = u64::from_le_bytes(line[slot * 8..slot * 8 + 8].try_into().unwrap());
            let mctr = (v >> MAC_BITS) & 0x7f;
            let raised = ((mctr + 3) & 0x7f).max(1);
            line[slot * 8..slot * 8 + 8].copy_from_slice(&((v & MAC_MASK) | raised << MAC_BITS).to_le_bytes());
            let mut i = img.clone();
            i.put(la, line);
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-tamper-log-mctr",
                target: format!("the minor carried by log line {:#x} set from {mctr} to {raised}", b * 64),
                image: i,
            });
        }
        // Every record of the log pages as the earlier image had them.
        let per = layout.blocks_per_counter_block();
        let of_log = |a: u64| a < layout.data_blocks && in_log(a);
        let pages: std::collections::BTreeSet<u64> = logged.iter().map(|b| b / per).collect();
        let mut i = img.clone();
        let mut changed = false;
        let mut replace = |i: &mut NvmImage, a: u64| {
            let old = earlier.get(a).copied();
            if old != i.get(a).copied() {
                changed = true;
                match old {
                    Some(b) => i.put(a, b),
                    None => i.retain(|x| x != a),
                }
            }
        };
        for a in img.sorted_addrs().into_iter().chain(earlier.sorted_addrs()) {
            if of_log(a) {
                replace(&mut i, a);
            }
        }
        for &p in &pages {
            replace(&mut i, layout.meta_addr(0, p));
            for j in (0..per).step_by(8) {
                replace(&mut i, layout.mac_line_of(p * per + j).0);
            }
        }
        if changed {
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-replay-log-region",
                target: format!("the log region's {} pages (lines, MAC lines, counter blocks) replayed from an earlier image", pages.len()),
                image: i,
            });
        }
        out
    }

    /// Whether counter block `index`'s page lies wholly in a log region, so
    /// every write under it carries its minor (Secon 3.4.1).
    fn colocated(&self, st: &MetaStore, index: u64) -> bool {
        let per = st.layout.blocks_per_counter_block();
        self.colocate_counters && st.chip.in_log_region(index * per) && st.chip.in_log_region(index * per + per - 1)
    }

    /// The log pages' counter blocks with the newer minors their log lines
    /// carry (Secon 3.4.1: "Recovery reads counters back from the log"):
    /// each page's counter block and MAC lines are read, counted.
    fn counters_from_log(&self, tree: &IntegrityTree, st: &mut MetaStore) -> Vec<(u64, [u8; 64])> {
        let mut out = Vec::new();
        if !self.colocate_counters {
            return out;
        }
        let per = st.layout.blocks_per_counter_block();
        let regions = st.chip.log_regions.clone();
        for (start, end) in regions {
            let first = (start / 64).div_ceil(per);
            let last = (end / 64) / per;
            if first >= last {
                continue;
            }
            // Every page's counter block and MAC lines are read; only a
            // page with a MAC line ever written can hold a newer minor.
            let (first_line, _) = st.layout.mac_line_of(first * per);
            let (end_line, _) = st.layout.mac_line_of(last * per - 1);
            st.nvm.reads.counter += last - first;
            st.nvm.reads.mac += end_line + 1 - first_line;
            let mut pages: Vec<u64> = Vec::new();
            for la in st.nvm.image.addrs_in(first_line, end_line + 1) {
                let page = (la - st.layout.mac_base) * crate::engine::layout::MACS_PER_LINE / per;
                if pages.last() != Some(&page) {
                    pages.push(page);
                }
            }
            for page in pages {
                let ca = st.layout.meta_addr(0, page);
                let stored = st.nvm.image.get(ca).copied().unwrap_or_else(|| tree.default_block(0));
                let mut ctr = SplitCounterBlock::decode(&stored);
                // The page's MAC lines, each read once; a line never
                // written holds no minor.
                let mut line: (u64, Option<[u8; 64]>) = (u64::MAX, None);
                for j in 0..per {
                    let (la, slot) = st.layout.mac_line_of(page * per + j);
                    if line.0 != la {
                        line = (la, st.nvm.image.get(la).copied());
                    }
                    let Some(bytes) = &line.1 else { continue };
                    let mctr = (u64::from_le_bytes(bytes[slot * 8..slot * 8 + 8].try_into().unwrap()) >> MAC_BITS) as u8 & 0x7f;
                    if mctr > ctr.minors[j as usize] {
                        ctr.minors[j as usize] = mctr;
                    }
                }
                let newer = ctr.encode();
                if newer != stored {
                    out.push((page, newer));
                }
            }
        }
        out
    }

    /// Run the background root update of every pending counter block under
    /// level-1 node `node`: spare bits cleared, units and queue entries
    /// freed, the node hashed up to the root, then written to NVM.
    fn settle_node(&self, tree: &IntegrityTree, st: &mut MetaStore, node: u64) -> Result<bool, CheckFailure> {
        let arity = st.layout.arity;
        let blocks: Vec<u64> = st.chip.counter_track.queue.iter().copied().filter(|&c| c / arity == node).collect();
        if blocks.is_empty() {
            return Ok(false);
        }
        let addr = st.layout.meta_addr(1, node);
        let line = st.update(tree, addr, |p| {
            for &c in &blocks {
                let slot = (c % arity) as usize;
                bmt_set_slot(p, slot, bmt_slots(p)[slot] & MAC_MASK);
            }
        })?;
        for &c in &blocks {
            st.chip.counter_track.free(c);
        }
        bmt(tree).node_updated(tree, st, 1, node, line)?;
        // Secon 3.2: "the unused bits in CMAC1 are set to 0 in the BMT
        // cache, and CMAC1 is written to PM".
        st.write_line_through(addr);
        Ok(true)
    }

    /// Settle the oldest pending node; false when nothing is pending.
    fn settle_oldest(&self, tree: &IntegrityTree, st: &mut MetaStore) -> Result<bool, CheckFailure> {
        match st.chip.counter_track.queue.first() {
            Some(&c) => self.settle_node(tree, st, c / st.layout.arity),
            None => Ok(false),
        }
    }
}

impl Scheme for Secon {
    fn name(&self) -> &'static str {
        "secon"
    }

    fn work(&self) -> SchemeWork {
        // Counters and MAC lines written through with the data; the
        // first-level nodes are written by the hooks below (with the tuple,
        // and again after their background update); the levels above are
        // written back and rebuilt at recovery (Secon 3.2: "It is
        // sufficient to only persist the first-level CMACs").
        SchemeWork {
            deferred_root_updates: self.track_units,
            ..SchemeWork::at_memory_controller(
                MetadataPolicy::uniform(WritePolicy::WriteThrough).with_tree(WritePolicy::WriteBack),
                false,
                true,
            )
        }
    }

    fn check(&self, cfg: &SimConfig) -> Result<(), String> {
        if !matches!(cfg.tree, crate::config::TreeConfig::Bmt { .. }) {
            return Err("scheme `secon` keeps its counter track in the spare bits of first-level BMT CMACs; set tree.type = \"bmt\"".into());
        }
        super::check_front(self, cfg)
    }

    fn first_level_entry_bits(&self) -> u32 {
        MAC_BITS
    }

    fn on_counter_update(&self, tree: &IntegrityTree, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        let (_, node, slot) = st.layout.parent_of(0, index).expect("a counter block has a parent");
        let old = st.peek_line(addr).unwrap_or_else(|| tree.default_block(0));
        let cap = self.track_units as usize;
        let marks = match marked_minors(&old, &bytes) {
            Some(m) if m != 0 => m,
            _ => {
                // A page re-encryption cannot be rolled back by one: the
                // node settles and the root is updated now.
                if self.settle_node(tree, st, node)? {
                    st.chip.counter_track.stats.settled_on_overflow += 1;
                }
                return bmt(tree).counter_updated(tree, st, index, bytes);
            }
        };
        let track = &st.chip.counter_track;
        if track.unit_of(index).and_then(|u| track.units[u]).is_some_and(|u| u.minors & marks != 0) && self.settle_node(tree, st, node)? {
            st.chip.counter_track.stats.settled_same_minor += 1;
        }
        let unit = loop {
            let track = &mut st.chip.counter_track;
            if let Some(u) = track.unit_of(index).or_else(|| track.allocate(index, cap)) {
                break u;
            }
            // Secon 3.2: a full queue or bitmap stalls the write until the
            // oldest background update is done.
            if !self.settle_oldest(tree, st)? {
                unreachable!("a full counter track has a pending entry");
            }
            st.chip.counter_track.stats.settled_when_full += 1;
        };
        {
            let track = &mut st.chip.counter_track;
            if let Some(u) = &mut track.units[unit] {
                u.minors |= marks;
            }
            track.stats.deferred_writes += 1;
        }
        st.install(addr, bytes, true);
        if self.colocated(st, index) {
            // The log line carries the minor; the counter block waits in
            // the counter cache.
            st.chip.counter_track.stats.colocated_counters += 1;
        } else {
            st.metadata_dirtied(tree, addr)?;
        }
        let entry = bmt(tree).entry_for(0, st.crypto.bmt_hash(&bytes)) | ((unit as u64 + 1) << MAC_BITS);
        let l1 = st.layout.meta_addr(1, node);
        let line = st.update(tree, l1, |p| bmt_set_slot(p, slot, entry))?;
        // The first-level CMAC persists with the tuple; the line stays
        // dirty in the BMT cache until its background update.
        st.nvm.write(&st.layout, l1, line);
        Ok(())
    }

    fn settle(&self, tree: &IntegrityTree, st: &mut MetaStore, counter_index: Option<u64>) -> Result<(), CheckFailure> {
        let arity = st.layout.arity;
        match counter_index {
            Some(c) => {
                if st.chip.counter_track.unit_of(c).is_some() && self.settle_node(tree, st, c / arity)? {
                    st.chip.counter_track.stats.settled_on_ack += 1;
                }
            }
            None => {
                while self.settle_oldest(tree, st)? {
                    st.chip.counter_track.stats.settled_on_ack += 1;
                }
            }
        }
        Ok(())
    }

    fn on_metadata_evict(&self, tree: &IntegrityTree, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        if let Some((1, node)) = st.layout.meta_pos(addr) {
            let arity = st.layout.arity;
            if st.chip.counter_track.queue.iter().any(|&c| c / arity == node) {
                // Back in, settled there, and written clean.
                st.install(addr, bytes, true);
                self.settle_node(tree, st, node)?;
                st.chip.counter_track.stats.settled_on_eviction += 1;
                return Ok(());
            }
        }
        tree.write_back(st, addr, bytes)
    }

    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip {
            name: "counter-track-tamper",
            why: "the pending BMT update queue and the counter track bitmap are in the battery-backed ADR domain of the memory controller (Secon 3.1, Fig. 4)",
        }]
    }

    fn uses_log_regions(&self) -> bool {
        self.colocate_counters
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
        &[
            "secon-mark-clean-cmac",
            "secon-clear-marked-cmac",
            "secon-tamper-marked-counter",
            "secon-replay-marked-counter",
            "secon-tamper-log-mctr",
            "secon-replay-log-region",
        ]
    }

    fn recovery_state_pending(&self, sys: &System) -> bool {
        !sys.mc.st.chip.counter_track.is_empty()
    }

    /// Tampering with what Secon's recovery trusts from NVM (Secon 3.2):
    /// the marks in first-level CMACs and the marked counter blocks.
    fn recovery_attacks(&self, crashed: &System, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        let st = &crashed.mc.st;
        let layout = &st.layout;
        let img = &st.nvm.image;
        let mut out = self.log_attacks(crashed, earlier);
        let entries: Vec<(u64, usize, u64)> = img
            .sorted_addrs()
            .into_iter()
            .filter(|&a| matches!(layout.meta_pos(a), Some((1, _))))
            .flat_map(|a| bmt_slots(img.get(a).expect("listed")).into_iter().enumerate().map(move |(s, e)| (a, s, e)))
            .collect();
        // A marked CMAC whose counter block NVM alone holds: a log page's
        // minors are also carried by its log lines (the log attacks above
        // aim at those), so a stale copy of its counter block is repaired
        // from them, not trusted.
        let outside_log = |a: u64, slot: usize| {
            let (_, node) = layout.meta_pos(a).expect("a tree node");
            !self.colocated(st, node * layout.arity + slot as u64)
        };
        let Some(&(ma, ms, me)) = entries.iter().find(|(a, s, e)| e >> MAC_BITS != 0 && outside_log(*a, *s)) else { return out };
        let (_, node) = layout.meta_pos(ma).expect("a tree node");
        let marked = node * layout.arity + ms as u64;
        let set = |a: u64, slot: usize, e: u64| {
            let mut i = img.clone();
            let mut line = *i.get(a).unwrap_or(&crashed.mc.tree.default_block(1));
            bmt_set_slot(&mut line, slot, e);
            i.put(a, line);
            i
        };
        // A clean CMAC beside the marked one, given its unit's id.
        if let Some(cs) = (0..layout.arity as usize).find(|&s| s != ms && bmt_slots(img.get(ma).unwrap())[s] >> MAC_BITS == 0) {
            let e = bmt_slots(img.get(ma).unwrap())[cs] | (me >> MAC_BITS) << MAC_BITS;
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-mark-clean-cmac",
                target: format!(
                    "spare bits of the clean CMAC of counter block {:#x} set to unit {}",
                    node * layout.arity + cs as u64,
                    me >> MAC_BITS
                ),
                image: set(ma, cs, e),
            });
        }
        out.push(RecoveryAttack {
            after_recovery: Vec::new(),
            focus: None,
            name: "secon-clear-marked-cmac",
            target: format!("spare bits of the marked CMAC of counter block {marked:#x} cleared"),
            image: set(ma, ms, me & MAC_MASK),
        });
        let ca = layout.meta_addr(0, marked);
        if let Some(cb) = img.get(ca) {
            let mut i = img.clone();
            let mut b = *cb;
            b[12] ^= 0x04;
            i.put(ca, b);
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-tamper-marked-counter",
                target: format!("a minor of marked counter block {ca:#x}"),
                image: i,
            });
            // The block as it was before its pending increments: what an
            // attacker replaying the last persisted copy would write.
            let unit = (me >> MAC_BITS) as usize - 1;
            if let Some(u) = st.chip.counter_track.units.get(unit).copied().flatten() {
                let mut c = SplitCounterBlock::decode(cb);
                for m in 0..64 {
                    if u.minors >> m & 1 == 1 {
                        c.minors[m] = c.minors[m].saturating_sub(1);
                    }
                }
                let mut i = img.clone();
                i.put(ca, c.encode());
                out.push(RecoveryAttack {
                    after_recovery: Vec::new(),
                    focus: None,
                    name: "secon-replay-marked-counter",
                    target: format!("marked counter block {ca:#x} replayed to its value before the pending increments"),
                    image: i,
                });
            }
        }
        out
    }

    /// 3.2: the pending BMT update queue and the counter track bitmap sit
    /// in the ADR domain: at a power failure ADR writes them to NVM, one
    /// 8 B entry (address and minor) per unit and the bitmap, in lines.
    fn battery_duties(&self, _cfg: &SimConfig) -> Vec<super::BatteryDuty> {
        let lines = (self.track_units as u64 * 8).div_ceil(64) + 1;
        vec![super::BatteryDuty { what: "pending BMT update queue and counter track bitmap", lines_moved: lines, hashes: 0 }]
    }

    fn on_power_fail(&self, sys: &mut System, work: &mut DrainWork) {
        super::drain_front_and_metadata(self, sys, work);
        if !self.bitmap {
            // The control: the bitmap is not in the battery domain.
            sys.mc.st.chip.counter_track.units.clear();
        }
    }

    fn recover(&self, sys: &mut System, rep: &mut RecoveryReport) {
        if !sys.mc.secure {
            return;
        }
        let tree = sys.mc.tree.clone();
        let st = &mut sys.mc.st;
        let track = std::mem::take(&mut st.chip.counter_track);
        let layout = st.layout.clone();
        // Secon 3.2: traverse every first-level block of the BMT (a node
        // never written reads as the default block, with no spare bits).
        st.nvm.reads.tree += layout.level_nodes[1];
        let from_log = self.counters_from_log(&tree, st);
        let counter_at = |st: &MetaStore, c: u64| {
            from_log.iter().find(|(p, _)| *p == c).map(|(_, b)| *b).or_else(|| st.nvm.image.get(layout.meta_addr(0, c)).copied())
        };
        let mut overlay: Vec<(u64, [u8; 64])> = Vec::new();
        let mut claimed = vec![false; track.units.len()];
        let (first, end) = layout.level_range(1);
        for a in st.nvm.image.addrs_in(first, end) {
            let node = a - first;
            let line = *st.nvm.image.get(a).expect("listed");
            for (slot, entry) in bmt_slots(&line).into_iter().enumerate() {
                let id = entry >> MAC_BITS;
                if id == 0 {
                    continue;
                }
                let c = node * layout.arity + slot as u64;
                let unit = track.units.get(id as usize - 1).copied().flatten().filter(|u| u.counter_block == c);
                let Some(u) = unit else {
                    // Spare bits no unit vouches for: tampered, or the
                    // bitmap was lost.
                    rep.counter_track_mismatches += 1;
                    continue;
                };
                claimed[id as usize - 1] = true;
                st.nvm.reads.counter += 1;
                let mut b = counter_at(st, c).unwrap_or_else(|| tree.default_block(0));
                let mut ctr = SplitCounterBlock::decode(&b);
                for i in 0..64 {
                    if u.minors >> i & 1 == 1 {
                        if ctr.minors[i] == 0 {
                            rep.counter_track_mismatches += 1;
                        }
                        ctr.minors[i] = ctr.minors[i].wrapping_sub(1) & 0x7f;
                    }
                }
                b = ctr.encode();
                overlay.push((c, b));
            }
        }
        // A unit whose CMAC shows no mark: its spare bits were cleared.
        rep.counter_track_mismatches += track.units.iter().zip(&claimed).filter(|(u, c)| u.is_some() && !**c).count() as u64;
        rep.counters_rolled_back = overlay.len() as u64;
        // The log's newer counters the roll-back did not replace.
        let rolled: Vec<u64> = overlay.iter().map(|(c, _)| *c).collect();
        let from_log_only: Vec<(u64, [u8; 64])> = from_log.iter().filter(|(p, _)| !rolled.contains(p)).copied().collect();
        overlay.extend(from_log_only.iter().copied());
        let Some(out) = bmt(&tree).rebuild_over(st, &overlay) else { return };
        let matched = out.mismatched_roots.is_empty();
        rep.tree_rebuilt = matched;
        rep.rebuild = Some(out);
        if !matched || rep.counter_track_mismatches > 0 {
            return;
        }
        // The counters the log vouched for are now checked: NVM gets them.
        for &(c, b) in &from_log_only {
            st.nvm.write(&layout, layout.meta_addr(0, c), b);
        }
        for &c in &rolled {
            let (_, b) = *overlay.iter().find(|(x, _)| *x == c).expect("rolled back");
            match self.recovery {
                SeconRecovery::RollBack => st.nvm.write(&layout, layout.meta_addr(0, c), b),
                SeconRecovery::RollForward => {
                    let forward = counter_at(st, c).unwrap_or_else(|| tree.default_block(0));
                    if bmt(&tree).counter_updated(&tree, st, c, forward).is_err() {
                        rep.counter_track_mismatches += 1;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;
    use crate::workload::{Event, Op};

    /// The preset with each store going straight to the memory controller
    /// (strict persistency): these tests watch each write's metadata; TEP's
    /// own ordering is checked by the crash oracle's tests.
    fn machine(preset: &str, sets: &[&str]) -> System {
        let mut o = vec!["memory.capacity_bytes=67108864".to_string(), "persistence.model=strict".to_string()];
        o.extend(sets.iter().map(|s| s.to_string()));
        System::new(&load_preset(preset, &o).unwrap(), 7)
    }

    /// Store `i + 1` into block `blocks[i]`, with no barrier after.
    fn store_all(s: &mut System, blocks: &[u64]) {
        for (i, &b) in blocks.iter().enumerate() {
            s.apply(&Event::store(b * 64, 8, i as u64 + 1, false)).unwrap();
        }
    }

    fn reads_back(s: &mut System, blocks: &[u64]) -> bool {
        blocks.iter().enumerate().all(|(i, &b)| s.mc.read(b).is_ok_and(|v| v[..8] == (i as u64 + 1).to_le_bytes()))
    }

    /// Blocks of `n` different pages, so of `n` counter blocks.
    fn pages(n: u64) -> Vec<u64> {
        (0..n).map(|p| p * 64 + 3).collect()
    }

    #[test]
    fn a_write_defers_its_root_update_until_the_barrier() {
        let mut s = machine("secon", &[]);
        let blocks = pages(3);
        store_all(&mut s, &blocks);
        let track = &s.mc.st.chip.counter_track;
        assert_eq!((track.queue.len(), track.stats.deferred_writes), (3, 3));
        assert!(s.mc.st.chip.roots.is_empty(), "no root update yet");
        // Each write queued its data, MAC line, counter block and level-1 node.
        let w = s.mc.st.nvm.enqueued;
        assert_eq!((w.data, w.mac, w.counter, w.tree), (3, 3, 3, 3));
        s.apply(&Event::marker(Op::Fence)).unwrap();
        let track = &s.mc.st.chip.counter_track;
        assert!(track.is_empty() && track.stats.settled_on_ack >= 1);
        assert!(!s.mc.st.chip.roots.is_empty(), "the barrier waited for the root update");
        // The settled level-1 node was written again, its spare bits clear.
        let l1 = s.mc.layout().meta_addr(1, 0);
        assert!(bmt_slots(&s.mc.st.nvm.peek(l1).unwrap()).iter().all(|e| e >> MAC_BITS == 0));
        assert!(reads_back(&mut s, &blocks));
    }

    #[test]
    fn a_full_queue_settles_its_oldest_entry() {
        // 40 pages under 5 level-1 nodes: the 17th counter block finds the
        // 16 units taken and waits for the oldest node's update.
        let mut s = machine("secon", &[]);
        store_all(&mut s, &pages(40));
        let t = &s.mc.st.chip.counter_track;
        assert!(t.stats.settled_when_full > 0 && t.queue.len() <= 16, "{:?}", t.stats);
        let mut s2 = machine("secon", &["scheme.track_units=64"]);
        store_all(&mut s2, &pages(40));
        assert_eq!(s2.mc.st.chip.counter_track.stats.settled_when_full, 0, "64 units hold 40 blocks");
    }

    #[test]
    fn a_second_increment_of_a_marked_minor_waits_for_the_first() {
        let mut s = machine("secon", &[]);
        store_all(&mut s, &[5, 5]);
        assert_eq!(s.mc.st.chip.counter_track.stats.settled_same_minor, 1);
        store_all(&mut s, &[6]);
        assert_eq!(s.mc.st.chip.counter_track.stats.settled_same_minor, 1, "another minor of the block is marked beside it");
    }

    #[test]
    fn recovery_rolls_forward_every_pending_write() {
        let mut s = machine("secon", &[]);
        let blocks = pages(12);
        store_all(&mut s, &blocks);
        s.power_fail();
        let rep = s.recover();
        assert!(rep.ok(), "{rep:?}");
        assert_eq!((rep.counters_rolled_back, rep.counter_track_mismatches), (12, 0));
        // The scan read every first-level node of the layout.
        assert!(rep.nvm_reads.tree >= s.mc.layout().level_nodes[1]);
        assert!(reads_back(&mut s, &blocks), "nothing pre-persisted is lost");
        // The counters persisted with the tuples, so the root register now
        // vouches for them: a second crash recovers with nothing pending.
        s.power_fail();
        let again = s.recover();
        assert!(again.ok() && again.counters_rolled_back == 0, "{again:?}");
        assert!(reads_back(&mut s, &blocks));
    }

    #[test]
    fn the_papers_roll_back_leaves_the_pending_lines_unreadable() {
        let mut s = machine("secon-paper-rollback", &[]);
        let blocks = pages(4);
        store_all(&mut s, &blocks[..2]);
        s.apply(&Event::marker(Op::Fence)).unwrap();
        let first = blocks[..2].to_vec();
        for (i, &b) in blocks[2..].iter().enumerate() {
            s.apply(&Event::store(b * 64, 8, i as u64 + 3, false)).unwrap();
        }
        s.power_fail();
        let rep = s.recover();
        assert!(rep.ok() && rep.counters_rolled_back == 2, "{rep:?}");
        assert!(reads_back(&mut s, &first), "writes ACKed before the crash are kept");
        // Their first writes: rolled back to "never written", over a
        // ciphertext and MAC that are there.
        for &b in &blocks[2..] {
            assert_eq!(s.mc.read(b), Err(CheckFailure::Unwritten { block: b }), "a rolled-back line is refused");
        }
        // A second write rolls back to the first's counter, under which the
        // second's ciphertext fails its MAC.
        let mut s = machine("secon-paper-rollback", &[]);
        store_all(&mut s, &[9]);
        s.apply(&Event::marker(Op::Fence)).unwrap();
        store_all(&mut s, &[9]);
        s.power_fail();
        assert!(s.recover().ok());
        assert_eq!(s.mc.read(9), Err(CheckFailure::Mac { block: 9 }));
    }

    #[test]
    fn without_the_bitmap_recovery_cannot_roll_back() {
        let mut s = machine("secon-no-bitmap", &[]);
        store_all(&mut s, &pages(3));
        s.power_fail();
        let rep = s.recover();
        assert!(!rep.ok());
        assert_eq!(rep.counter_track_mismatches, 3, "three marks, no unit for any");
        assert!(rep.rebuild.is_some_and(|r| !r.mismatched_roots.is_empty()));
    }

    /// After a crash with pending writes: flip the spare bits of one
    /// first-level entry in NVM and recover.
    fn tampered(slot_of: impl Fn(&System) -> (u64, usize), f: impl Fn(u64) -> u64) -> RecoveryReport {
        let mut s = machine("secon", &[]);
        store_all(&mut s, &[3]);
        s.power_fail();
        let (addr, slot) = slot_of(&s);
        let mut line = s.mc.st.nvm.peek(addr).unwrap_or_else(|| s.mc.tree.default_block(1));
        let e = f(bmt_slots(&line)[slot]);
        bmt_set_slot(&mut line, slot, e);
        s.mc.st.nvm.image.put(addr, line);
        s.recover()
    }

    #[test]
    fn tampering_with_the_spare_bits_is_detected_at_recovery() {
        let l1 = |s: &System| (s.mc.layout().meta_addr(1, 0), 0usize);
        // The untampered image recovers.
        assert!(tampered(l1, |e| e).ok());
        // Marks cleared on the marked CMAC: the unit has no mark.
        let rep = tampered(l1, |e| e & MAC_MASK);
        assert!(!rep.ok() && rep.counter_track_mismatches == 1, "{rep:?}");
        // A mark set on a clean CMAC (counter block 1, never written).
        let rep = tampered(|s| (s.mc.layout().meta_addr(1, 0), 1), |e| e | 1 << MAC_BITS);
        assert!(!rep.ok() && rep.counter_track_mismatches == 1, "{rep:?}");
        // A mark naming another unit than the block's.
        let rep = tampered(l1, |e| (e & MAC_MASK) | 2 << MAC_BITS);
        assert!(!rep.ok() && rep.counter_track_mismatches >= 1, "{rep:?}");
    }

    #[test]
    fn a_pending_first_level_node_leaving_the_cache_settles_first() {
        // A 1-set, 2-way BMT cache: each new node evicts an older one.
        let mut s = machine("secon", &["metadata_cache.organization.tree.capacity_bytes=128", "metadata_cache.organization.tree.ways=2"]);
        let blocks: Vec<u64> = (0..6).map(|n| n * 8 * 64 * 64 + 1).collect();
        store_all(&mut s, &blocks);
        assert!(s.mc.st.chip.counter_track.stats.settled_on_eviction > 0, "{:?}", s.mc.st.chip.counter_track.stats);
        assert!(reads_back(&mut s, &blocks));
        s.power_fail();
        assert!(s.recover().ok());
        assert!(reads_back(&mut s, &blocks));
    }

    /// A machine with the first 4 KiB pages 0..4 declared the log region.
    fn logged(preset: &str, sets: &[&str]) -> System {
        let mut s = machine(preset, sets);
        s.mc.set_log_regions(&[(0, 4 * 4096)]);
        s
    }

    #[test]
    fn a_log_write_carries_its_minor_and_leaves_its_counter_block_cached() {
        // Blocks 0..6 of page 0 (log) and one block of page 9 (data).
        let blocks = [0u64, 1, 2, 3, 4, 5, 9 * 64];
        let mut s = logged("secon", &[]);
        store_all(&mut s, &blocks);
        s.apply(&Event::marker(Op::Fence)).unwrap();
        let w = s.mc.st.nvm.enqueued;
        assert_eq!(w.counter, 1, "only the data page's counter block is written");
        assert_eq!(s.mc.st.chip.counter_track.stats.colocated_counters, 6);
        // Block 3's MAC slot holds its minor (1) in its spare bits.
        let (la, slot) = s.mc.layout().mac_line_of(3);
        let line = s.mc.st.peek_line(la).unwrap();
        assert_eq!(u64::from_le_bytes(line[slot * 8..slot * 8 + 8].try_into().unwrap()) >> MAC_BITS, 1);
        // Without colocation every write persists its counter block.
        let mut n = logged("secon", &["scheme.colocate_counters=false"]);
        store_all(&mut n, &blocks);
        assert_eq!(n.mc.st.nvm.enqueued.counter, 7);
        // A crash loses the cached counter block; recovery reads the minors
        // back from the log and everything decrypts, pending or settled.
        for fenced in [true, false] {
            let mut s = logged("secon", &[]);
            store_all(&mut s, &blocks);
            if fenced {
                s.apply(&Event::marker(Op::Fence)).unwrap();
            }
            s.power_fail();
            let rep = s.recover();
            assert!(rep.ok(), "{rep:?}");
            assert!(reads_back(&mut s, &blocks), "fenced {fenced}");
            assert!(rep.nvm_reads.mac >= 4 * 8, "the log pages' MAC lines were read: {:?}", rep.nvm_reads);
        }
    }

    #[test]
    fn a_tampered_or_replayed_log_minor_is_detected() {
        let blocks = [0u64, 1, 2];
        let crashed = || {
            let mut s = logged("secon", &[]);
            store_all(&mut s, &blocks);
            s.apply(&Event::marker(Op::Fence)).unwrap();
            store_all(&mut s, &blocks);
            s.apply(&Event::marker(Op::Fence)).unwrap();
            s.power_fail();
            s
        };
        let (la, slot) = crashed().mc.layout().mac_line_of(1);
        for (what, spare) in [("raised", 5u64), ("lowered", 1)] {
            let mut s = crashed();
            let mut line = *s.mc.st.nvm.image.get(la).unwrap();
            let v = u64::from_le_bytes(line[slot * 8..slot * 8 + 8].try_into().unwrap());
            line[slot * 8..slot * 8 + 8].copy_from_slice(&((v & MAC_MASK) | spare << MAC_BITS).to_le_bytes());
            s.mc.st.nvm.image.put(la, line);
            let rep = s.recover();
            // A minor above the true one breaks the rebuilt root; one below
            // it is not newer, and block 1's MAC (over its spare bits) fails.
            let caught = !rep.ok() || s.mc.read(1).is_err();
            assert!(caught, "{what}: {rep:?}");
        }
    }

    #[test]
    fn secon_refuses_a_tree_without_first_level_cmacs() {
        let e = load_preset("secon", &["tree.type=sit".into()]).unwrap_err().to_string();
        assert!(e.contains("tree.type"), "{e}");
        let e = load_preset("secon", &["scheme.track_units=2000".into()]).unwrap_err().to_string();
        assert!(e.contains("scheme.track_units") && e.contains("1023"), "{e}");
    }
}
