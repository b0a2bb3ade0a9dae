//! STAR (Huang and Hua): a write-back metadata cache on the SGX integrity
//! tree made recoverable by counter-MAC synergization, bitmap lines in the
//! ADR domain and a cache-tree (STAR III, Fig. 5).
//!
//! ```text
//!  data write:  counter++ in its counter block; its 10 LSBs ride in the
//!               data MAC's spare bits (III-B), written with the data
//!  write-back:  parent counter++; its 10 LSBs ride in the written node's
//!               MAC field (54-bit MAC + LSBs), one write for both
//!  LSBs wrap:   the parent is written back at once, so NVM keeps its MSBs
//!  dirty/clean: bit of the line set/cleared in the bitmap lines (III-C)
//!  power fail:  ADR bitmap lines -> recovery area; the cache-tree root
//!               (8-ary, over the set-MACs of dirty lines, III-E) is on chip
//!  recovery:    index -> bitmap lines -> stale nodes; each: MSBs from NVM +
//!               LSBs from its 8 children -> MAC under the parent's counter
//!               -> set-MACs -> cache-tree root == register? (III-F)
//! ```
//! Two rules the paper leaves open, chosen here:
//! - The cache-tree register is the value its eager branch updates would
//!   hold. The functional model computes it when power fails, from the
//!   dirty lines then cached (the same value); each update the hardware
//!   would make is counted (`cache_tree_updates`) and, as the paper
//!   argues (IV-C), kept off the write path.
//! - Recovery writes each restored node to NVM, clears the bitmap lines
//!   it read and the register, and leaves the cache empty.

use super::params::{in_range, yes, Completion, MetadataPolicy, Need, ParamError, SchemeParams, SchemeWork, TreeType, WritePolicy};
use super::{FrontChoice, Registered, Role};
use super::bitmap_lines::BitmapLines;
use super::sit_restore::{hash_values, small_tree_root, write_restored};
use crate::config::SimConfig;
use crate::engine::chip::{ChipState, SchemeNv};
use crate::engine::counter::SitNode;
use crate::engine::crypto::MAC_BITS;
use crate::engine::hooks::{
    default_on_metadata_dirty, BatteryDuty, DrainWork, NvChange, NvRegister, OwnState, RecoveryAttack, RecoveryReport, Scheme,
};
use crate::engine::layout::Layout;
use crate::engine::nvm::NvmImage;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::{IntegrityTree, SgxIntegrityTree, SIT_LSB_BITS, SIT_LSB_MASK};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bitmap lines in ADR (STAR IV-E: 16).
pub const STAR_BITMAP_LINES: u32 = 16;

/// STAR: counter-MAC synergization, bitmap lines, cache-tree (STAR III).
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

impl Registered for Star {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(StarRuntime::new(*self))
    }
    /// The recovery area holds the bitmap lines' copy, one bit per
    /// metadata line of the tree (III-C); counter-MAC synergization puts
    /// the parent's LSBs in a written node's MAC field (III-B); recovery
    /// restores the stale nodes (III-F).
    fn shape(&self, tree: &Layout, _cfg: &SimConfig) -> SchemeShape {
        SchemeShape {
            reserved_recovery_lines: BitmapLines::area_lines(tree.metadata_lines()),
            sit_mac_carries_parent_lsbs: self.synergy,
            recovery_restores_dirty_lines: true,
            ..SchemeShape::default()
        }
    }
    /// STAR II-D/III-A: the data MAC's spare bits carry the parent
    /// counter's LSBs, set when the write reaches the controller; a
    /// persist-buffer entry's early MAC has no such bits.
    fn refuses_front(&self, front: FrontChoice) -> Option<String> {
        front.early_mac().map(|v| {
            format!(
                "STAR's data MAC carries its parent counter's low bits, set at the memory controller, but `{}` makes the MAC early in the persist buffer",
                v.name()
            )
        })
    }
}

/// STAR's runtime: its parameters; its state is on chip.
#[derive(Clone, Copy, Debug)]
pub struct StarRuntime {
    p: Star,
}

/// STAR's non-volatile state: the bitmap lines in ADR with the top layer
/// of their index (an on-chip register, III-C, III-D), and the cache-tree
/// root register, taken at power loss (III-E).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StarNv {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bitmap: Option<BitmapLines>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery_root: Option<u64>,
}

fn sit(tree: &IntegrityTree) -> &SgxIntegrityTree {
    match tree {
        IntegrityTree::Sit(t) => t,
        IntegrityTree::Bmt(_) => unreachable!("STAR's configuration requires the SGX integrity tree"),
    }
}

/// The MAC fields of a set's dirty lines, in ascending address order, make
/// its set-MAC; the set-MACs are the cache-tree's leaves (STAR III-E).
pub fn cache_tree_root(st: &mut MetaStore, macs: &BTreeMap<u64, u64>, counted: bool) -> u64 {
    let layout = st.layout.clone();
    let mut sets: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
    let mut nsets = 1;
    for (&a, &m) in macs {
        let cache = st.caches.for_addr(&layout, a);
        nsets = cache.sets();
        sets.entry(cache.set_of(a) as u64).or_default().push(m);
    }
    let leaves: BTreeMap<u64, u64> = sets.into_iter().map(|(s, m)| (s, hash_values(&mut st.crypto, &m, counted))).collect();
    small_tree_root(&mut st.crypto, nsets, &leaves, counted)
}

impl StarRuntime {
    pub fn new(p: Star) -> Self {
        StarRuntime { p }
    }

    /// The chip's bitmap lines, made on first use over `metadata_lines`
    /// (from the chip state's field, not the store, so the NVM and layout
    /// stay borrowable).
    fn bitmap<'a>(&self, nv: &'a mut SchemeNv, metadata_lines: u64) -> &'a mut BitmapLines {
        nv.get_mut::<StarNv>().bitmap.get_or_insert_with(|| BitmapLines::new(metadata_lines, self.p.bitmap_lines))
    }

    /// Whether a dirty line's counters left the MSBs its NVM copy holds
    /// (its LSBs wrapped, STAR III-B): it must be written back now.
    fn msbs_moved(st: &MetaStore, addr: u64, line: &[u8; 64]) -> bool {
        let now = SitNode::decode(line).counters;
        let was = SitNode::decode(&st.nvm.peek(addr).unwrap_or([0; 64])).counters;
        now.iter().zip(&was).any(|(n, w)| n >> SIT_LSB_BITS != w >> SIT_LSB_BITS)
    }

    /// The MAC field each dirty metadata line would carry if written now
    /// (its parent's counter for it cannot change while it is dirty): the
    /// leaves' inputs of the cache-tree as the hardware holds them.
    fn dirty_macs(tree: &SgxIntegrityTree, st: &MetaStore) -> BTreeMap<u64, u64> {
        let layout = &st.layout;
        let mut out = BTreeMap::new();
        let victims = st.victims.iter().copied();
        for (a, bytes) in st.caches.dirty_lines().into_iter().chain(victims) {
            let Some((level, index)) = layout.meta_pos(a) else { continue };
            let pc = match layout.parent_of(level, index) {
                None => st.chip.roots.value_or(index, 0),
                Some((pl, pi, slot)) => SitNode::decode(&st.peek_line(layout.meta_addr(pl, pi)).unwrap_or([0; 64])).counters[slot],
            };
            let n = SitNode::decode(&bytes);
            out.insert(a, tree.pack(st.crypto.sit_mac_uncounted(&n.counter_bytes(), a, pc), pc));
        }
        out
    }

    /// The LSBs a child carries for its parent: a data block's in its MAC's
    /// spare bits, a node's in its MAC field; read from NVM (counted).
    fn child_lsbs(st: &mut MetaStore, level: u32, index: u64, slot: usize) -> Option<u64> {
        let layout = st.layout.clone();
        let child = index * layout.arity + slot as u64;
        if level == 0 {
            if child >= layout.data_blocks {
                return None;
            }
            // The MAC travels with its data (Synergy's ninth chip): one read.
            st.nvm.read(&layout, child);
            let (line, s) = layout.mac_line_of(child);
            let word = st.nvm.peek(line).map(|l| u64::from_le_bytes(l[s * 8..s * 8 + 8].try_into().expect("8 bytes")));
            return Some(word.unwrap_or(0) >> MAC_BITS & SIT_LSB_MASK);
        }
        if child >= layout.level_nodes[level as usize - 1] {
            return None;
        }
        let bytes = st.nvm.read(&layout, layout.meta_addr(level - 1, child)).unwrap_or([0; 64]);
        Some(SitNode::decode(&bytes).mac >> MAC_BITS & SIT_LSB_MASK)
    }
}

impl Scheme for StarRuntime {
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<StarNv>()
    }

    fn data_mac_spare(&self, _st: &MetaStore, _block: u64, (counter, _): (u64, u64)) -> u16 {
        match self.p.synergy {
            true => (counter & SIT_LSB_MASK) as u16,
            false => 0,
        }
    }

    fn on_metadata_dirty(&self, r: &Rules, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        let Some(m) = st.layout.metadata_line_of(addr) else {
            // MAC lines (none with data-line MACs): the policy.
            return default_on_metadata_dirty(r, st, addr);
        };
        let Some((line, true)) = st.caches.for_addr(&st.layout, addr).peek(addr) else { return Ok(()) };
        if self.p.synergy && Self::msbs_moved(st, addr, &line) {
            return r.write_back(st, addr, line);
        }
        let b = self.bitmap(&mut st.chip.scheme, st.layout.metadata_lines());
        b.stats.cache_tree_updates += 1;
        if !b.is_marked(&st.nvm, &st.layout, m) {
            b.mark(&mut st.nvm, &st.layout, m, true);
        }
        Ok(())
    }

    fn on_metadata_written(&self, st: &mut MetaStore, addr: u64) {
        let Some(m) = st.layout.metadata_line_of(addr) else { return };
        let b = self.bitmap(&mut st.chip.scheme, st.layout.metadata_lines());
        if b.is_marked(&st.nvm, &st.layout, m) {
            b.stats.cache_tree_updates += 1;
            b.mark(&mut st.nvm, &st.layout, m, false);
        }
    }

    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip {
            name: "star-adr-bitmap-tamper",
            why: "the bitmap lines in ADR, the top index register and the cache-tree root are in the memory controller, inside the trusted chip (STAR III-C, III-D, III-E)",
        }]
    }

    fn recovery_attack_names(&self) -> &'static [&'static str] {
        &[
            "star-tamper-stale-msbs",
            "star-replay-stale-node",
            "star-tamper-child-lsbs",
            "star-replay-child",
            "star-tamper-bitmap-line",
            "star-replay-bitmap-line",
            "star-tamper-index",
        ]
    }

    fn recovery_state_pending(&self, st: &MetaStore, _volatile_data: bool) -> bool {
        st.caches.dirty_lines().iter().any(|(a, _)| st.layout.meta_pos(*a).is_some())
    }

    fn recovery_attacks(&self, _r: &Rules, st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        star_attacks(st, earlier)
    }

    /// The bitmap lines and the cache-tree root are read by recovery alone.
    fn nv_change(&self, _st: &MetaStore, _before: &SchemeNv, _after: &SchemeNv) -> NvChange {
        NvChange::Unseen
    }

    /// What the bitmap lines did (STAR Fig. 10, Table II).
    fn stats(&self, st: &MetaStore) -> Option<serde_json::Value> {
        let b = st.chip.scheme.get::<StarNv>()?.bitmap.as_ref()?;
        Some(serde_json::json!({ "bitmap_lines": b.stats }))
    }

    /// III-D: the bitmap index's top layer (one line) and III-E: the
    /// cache-tree root.
    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        vec![NvRegister { what: "bitmap index top layer (one line)", bytes: 64 }, NvRegister { what: "cache-tree root register", bytes: 8 }]
    }

    /// III-C: the bitmap lines in ADR are written to NVM; III-E: the
    /// cache-tree root is computed over the dirty lines (all of them, at
    /// worst), a MAC each and a hash per inner node of its 8-ary tree.
    fn battery_duties(&self, cfg: &SimConfig) -> Vec<BatteryDuty> {
        let lines = super::metadata_cache_lines(cfg);
        let hashes = lines + super::tree_above(lines, 8).1;
        vec![
            BatteryDuty { what: "bitmap lines in ADR", lines_moved: self.p.bitmap_lines as u64, hashes: 0 },
            BatteryDuty { what: "cache-tree root over the dirty metadata lines", lines_moved: 0, hashes },
        ]
    }

    fn on_power_fail(&self, r: &Rules, st: &mut MetaStore, work: &mut DrainWork) {
        if !r.secure {
            return;
        }
        let macs = Self::dirty_macs(sit(&r.tree), st);
        let root = cache_tree_root(st, &macs, false);
        st.chip.scheme.get_mut::<StarNv>().recovery_root = Some(root);
        let layout = st.layout.clone();
        if let Some(b) = st.chip.scheme.get_mut::<StarNv>().bitmap.as_mut() {
            match self.p.bitmap_persist {
                true => work.metadata_lines += b.drain(&mut st.nvm, &layout),
                false => b.lose_adr(),
            }
        }
    }

    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        if !r.secure {
            return;
        }
        let tree = sit(&r.tree);
        let layout = st.layout.clone();
        let b = self.bitmap(&mut st.chip.scheme, layout.metadata_lines());
        let stale: Vec<u64> = b.take_marked(&mut st.nvm, &layout).into_iter().map(|m| layout.metadata_line_addr(m)).collect();
        // III-F: each stale node's counters are its MSBs in NVM with the
        // LSBs its children carry.
        let mut restored: BTreeMap<u64, [u64; 8]> = BTreeMap::new();
        for &a in &stale {
            let (level, index) = layout.meta_pos(a).expect("bitmap bits are metadata lines");
            let old = SitNode::decode(&st.nvm.read(&layout, a).unwrap_or([0; 64])).counters;
            let mut c = old;
            for (slot, ctr) in c.iter_mut().enumerate() {
                if let Some(lsbs) = Self::child_lsbs(st, level, index, slot) {
                    *ctr = (*ctr & !SIT_LSB_MASK) | lsbs;
                }
            }
            restored.insert(a, c);
        }
        let macs = write_restored(tree, st, &restored);
        rep.add_count("stale_restored", restored.len() as u64);
        if let Some(expect) = st.chip.scheme.get_mut::<StarNv>().recovery_root.take() {
            let got = cache_tree_root(st, &macs, true);
            if self.p.cache_tree && got != expect {
                rep.scheme_failure = Some(format!(
                    "the cache-tree rebuilt from {} restored node(s) does not match the on-chip root (STAR III-E): recovery input was tampered with or lost",
                    restored.len()
                ));
            }
        }
    }
}

/// The paper's replay (III-E): a child of some stale node put back to an
/// earlier tuple (a data block with its own MAC word, as it travels in its
/// line; a node whole), so its parent is restored to the earlier counter.
fn child_replay(layout: &Layout, img: &NvmImage, earlier: &NvmImage, stale: &[u64]) -> Option<RecoveryAttack> {
    for &a in stale {
        let (level, index) = layout.meta_pos(a).expect("a metadata line");
        for s in 0..layout.arity as usize {
            let child = index * layout.arity + s as u64;
            let mut i = img.clone();
            if level == 0 {
                if child >= layout.data_blocks {
                    break;
                }
                let Some(e) = earlier.get(child).filter(|e| Some(*e) != img.get(child)) else { continue };
                let (line, ws) = layout.mac_line_of(child);
                let old = earlier.get(line).copied().unwrap_or([0; 64]);
                let mut cur = img.get(line).copied().unwrap_or([0; 64]);
                cur[ws * 8..ws * 8 + 8].copy_from_slice(&old[ws * 8..ws * 8 + 8]);
                i.put(child, *e);
                i.put(line, cur);
            } else {
                let caddr = layout.meta_addr(level - 1, child);
                let Some(e) = earlier.get(caddr).filter(|e| Some(*e) != img.get(caddr)) else { continue };
                i.put(caddr, *e);
            }
            return Some(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "star-replay-child",
                target: format!("child {s} of stale level-{level} node {index:#x} replayed with its MAC and LSBs"),
                image: i,
            });
        }
    }
    None
}

/// Tamper with and replay what STAR's recovery reads (STAR III-F): a stale
/// node's MSBs, a child's LSBs, a bitmap line and the index.
fn star_attacks(st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
    let layout = &st.layout;
    let img = &st.nvm.image;
    let Some(b) = st.chip.scheme.get::<StarNv>().and_then(|n| n.bitmap.as_ref()) else { return Vec::new() };
    let mut out = Vec::new();
    let with = |addr: u64, bytes: [u8; 64]| {
        let mut i = img.clone();
        i.put(addr, bytes);
        i
    };
    let Some((base, lines)) = layout.recovery else { return out };
    let l1 = b.layer_lines[0];
    // The marked metadata lines, from the L1 lines as the battery left them.
    let mut stale = Vec::new();
    for i in 0..l1.min(lines) {
        if let Some(line) = img.get(base + i) {
            for (w, chunk) in line.chunks(8).enumerate() {
                let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
                stale.extend((0..64).filter(|bit| word >> bit & 1 == 1).map(|bit| i * 512 + w as u64 * 64 + bit));
            }
        }
    }
    // A stale tree node above the counter blocks whose stored copy and some
    // child differ from `earlier`'s, where one exists; else any stale node.
    let nodes: Vec<u64> = stale.iter().map(|&m| layout.metadata_line_addr(m)).collect();
    let pick = nodes
        .iter()
        .copied()
        .find(|&a| img.get(a).is_some() && earlier.get(a).is_some_and(|e| Some(e) != img.get(a)))
        .or(nodes.first().copied());
    if let Some(a) = pick {
        let (level, index) = layout.meta_pos(a).expect("a metadata line");
        let mut n = SitNode::decode(&img.get(a).copied().unwrap_or([0; 64]));
        let slot = n.counters.iter().position(|&c| c > 0).unwrap_or(0);
        n.counters[slot] ^= 1 << SIT_LSB_BITS;
        out.push(RecoveryAttack {
            after_recovery: Vec::new(),
            focus: None,
            name: "star-tamper-stale-msbs",
            target: format!("an MSB of counter {slot} of stale level-{level} node {index:#x} in NVM"),
            image: with(a, n.encode()),
        });
        if let Some(e) = earlier.get(a).filter(|e| Some(*e) != img.get(a)) {
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "star-replay-stale-node",
                target: format!("stale level-{level} node {index:#x} replayed to an earlier copy"),
                image: with(a, *e),
            });
        }
        // A child whose carried LSBs are non-zero (a written child).
        for s in 0..layout.arity as usize {
            let child = index * layout.arity + s as u64;
            let (caddr, word_at) = if level == 0 {
                if child >= layout.data_blocks {
                    continue;
                }
                let (line, ws) = layout.mac_line_of(child);
                (line, ws * 8)
            } else {
                (layout.meta_addr(level - 1, child), 56)
            };
            let Some(cur) = img.get(caddr).copied() else { continue };
            let word = u64::from_le_bytes(cur[word_at..word_at + 8].try_into().expect("8 bytes"));
            if word >> MAC_BITS == 0 {
                continue;
            }
            let mut t = cur;
            t[word_at + (MAC_BITS / 8) as usize] ^= 1 << (MAC_BITS % 8);
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "star-tamper-child-lsbs",
                target: format!("a spare bit of the MAC of child {s} of stale level-{level} node {index:#x}"),
                image: with(caddr, t),
            });
            break;
        }
    }
    if let Some(a) = child_replay(layout, img, earlier, &nodes) {
        out.push(a);
    }
    // The first non-zero L1 line: one of its bits cleared (a stale node
    // hidden from recovery), and the line replayed.
    if let Some(i) = (0..l1.min(lines)).find(|&i| img.get(base + i).is_some_and(|l| *l != [0; 64])) {
        let cur = *img.get(base + i).expect("found");
        let mut t = cur;
        let byte = t.iter().position(|&x| x != 0).expect("non-zero");
        t[byte] &= t[byte] - 1;
        out.push(RecoveryAttack {
            after_recovery: Vec::new(),
            focus: None,
            name: "star-tamper-bitmap-line",
            target: format!("a set bit of bitmap line {i} in the recovery area cleared"),
            image: with(base + i, t),
        });
        let old = earlier.get(base + i).copied().unwrap_or([0; 64]);
        if old != cur {
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "star-replay-bitmap-line",
                target: format!("bitmap line {i} in the recovery area replayed to an earlier copy"),
                image: with(base + i, old),
            });
        }
    }
    // The index: a layer-2 line's bit for a non-zero L1 line cleared.
    if b.layer_lines.len() > 2 {
        if let Some(i) = (l1..lines).find(|&i| img.get(base + i).is_some_and(|l| *l != [0; 64])) {
            let mut t = *img.get(base + i).expect("found");
            let byte = t.iter().position(|&x| x != 0).expect("non-zero");
            t[byte] &= t[byte] - 1;
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "star-tamper-index",
                target: format!("a set bit of index line {} (layer 2) cleared", i - l1),
                image: with(base + i, t),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;
    use crate::machine::System;

    fn machine(sets: &[&str]) -> System {
        let mut o: Vec<String> = vec!["memory.capacity_bytes=67108864".into()];
        o.extend(sets.iter().map(|s| s.to_string()));
        System::new(&load_preset("star", &o).unwrap(), 1)
    }

    /// A set-MAC covers a set of any width: on a 16-way cache every set
    /// of which may hold more than eight dirty lines, power fails and the
    /// recovery checks out (the set-MAC hashed at most eight values and
    /// panicked before).
    #[test]
    fn a_cache_wider_than_eight_ways_is_recovered() {
        let ways = ["metadata_cache.organization.unified.capacity_bytes=16384", "metadata_cache.organization.unified.ways=16"];
        let mut s = machine(&ways);
        for i in 0..4000u64 {
            s.mc.write((i * 4099) % 200_000, &[i as u8; 64]).unwrap();
        }
        s.power_fail();
        let rep = s.recover();
        assert!(rep.ok(), "{rep:?}");
        assert!(rep.count("stale_restored") > 8, "{rep:?}");
    }

    /// III-B: the data MAC carries the 10 LSBs of its counter, and the
    /// 1024th write of a block wraps them, so its counter block is written
    /// back at once: NVM then holds the MSBs recovery combines them with.
    #[test]
    fn a_wrap_of_the_lsbs_writes_the_counter_block_back() {
        let mut s = machine(&[]);
        let layout = s.mc.st.layout.clone();
        let ca = layout.meta_addr(0, 0);
        for i in 1..=1023u64 {
            s.mc.write(3, &[i as u8; 64]).unwrap();
        }
        let (line, slot) = layout.mac_line_of(3);
        let mac = u64::from_le_bytes(s.mc.st.nvm.peek(line).unwrap()[slot * 8..slot * 8 + 8].try_into().unwrap());
        assert_eq!(mac >> MAC_BITS, 1023, "the data MAC's spare bits hold the counter's LSBs");
        assert!(s.mc.st.nvm.peek(ca).is_none(), "before the wrap the counter block is only cached");
        s.mc.write(3, &[0; 64]).unwrap();
        let stored = SitNode::decode(&s.mc.st.nvm.peek(ca).expect("written back at the wrap"));
        assert_eq!(stored.counters[3], 1024);
        assert_ne!(s.mc.st.caches.for_addr(&layout, ca).peek(ca).map(|(_, dirty)| dirty), Some(true), "clean after the write-back");
        let b = s.mc.st.chip.scheme.get::<super::StarNv>().and_then(|n| n.bitmap.as_ref()).unwrap();
        assert!(!b.is_marked(&s.mc.st.nvm, &layout, layout.metadata_line_of(ca).unwrap()), "a clean line is not marked stale");
    }

    /// A crash with dirty lines at every level is recovered exactly, and
    /// the cache-tree catches a restored line gone wrong.
    #[test]
    fn recovery_restores_the_dirty_lines_and_the_cache_tree_checks_them() {
        for synergy in [true, false] {
            let mut s = machine(&[
                if synergy { "scheme.synergy=true" } else { "scheme.synergy=false" },
                "metadata_cache.organization.unified.capacity_bytes=16384",
            ]);
            for b in (0..4000u64).step_by(37) {
                s.mc.write(b, &[b as u8; 64]).unwrap();
            }
            // Evict part of the cache so parents carry write-backs.
            for b in (0..200_000u64).step_by(4099) {
                s.mc.write(b, &[1; 64]).unwrap();
            }
            let dirty: Vec<(u64, [u8; 64])> =
                s.mc.st.caches.dirty_lines().into_iter().filter(|(a, _)| s.mc.st.layout.meta_pos(*a).is_some()).collect();
            assert!(dirty.iter().any(|(a, _)| s.mc.st.layout.meta_pos(*a).unwrap().0 > 0), "tree nodes are dirty too");
            s.power_fail();
            let rep = s.recover();
            assert_eq!(rep.count("stale_restored"), dirty.len() as u64);
            let exact = dirty.iter().all(|(a, b)| s.mc.st.nvm.peek(*a).unwrap()[..56] == b[..56]);
            assert_eq!((exact, rep.ok()), (synergy, synergy), "synergy {synergy}: {rep:?}");
            if synergy {
                assert_eq!(s.mc.read(37).unwrap(), [37; 64]);
            }
        }
    }
}
