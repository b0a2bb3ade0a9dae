//! Anubis for the SGX integrity tree (Zubair and Awad, ISCA 2019; STAR's
//! baseline, STAR II-E and IV-A): a shadow table in NVM with one entry per
//! way of the metadata cache, written whenever the cached line in that way
//! changes, and a small Merkle tree over the table whose root is on chip.
//!
//! ```text
//!  cached metadata line changed --> shadow entry of its way <- (address, counters)
//!                                   (one extra NVM write per update: STAR's "2x")
//!  power fail --> shadow-tree root on chip
//!  recovery   --> read the whole table; per address, counters = the newest
//!                 (element-wise max) of its entries and its NVM copy; write
//!                 each node back with its MAC; shadow-tree root == register?
//! ```
//! An entry holds the node's whole counters (56 B) beside its address
//! (8 B): Anubis packs LSBs, but whole counters fit in the 64 B entry, so
//! no MSB bookkeeping is needed. An entry left by a line since evicted is
//! harmless: counters only grow, so the newest copy wins. As for STAR's
//! cache-tree, the register is computed when power fails from the table
//! the hardware kept it over; each update is one NVM write of an entry.

use super::params::{Completion, MetadataPolicy, Need, SchemeParams, SchemeWork, TreeType, WritePolicy};
use super::{Registered, Role};
use super::sit_restore::{small_tree_root, write_restored};
use crate::config::SimConfig;
use crate::engine::chip::{ChipState, SchemeNv};
use crate::engine::counter::SitNode;
use crate::engine::hooks::{default_on_metadata_dirty, DrainWork, NvChange, NvRegister, RecoveryCost, RecoveryReport, Scheme};
use crate::engine::layout::Layout;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

impl Registered for AnubisSit {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(AnubisRuntime)
    }
    /// The shadow table, one entry per way of the unified cache; recovery
    /// restores the cached lines from it.
    fn shape(&self, _tree: &Layout, cfg: &SimConfig) -> SchemeShape {
        let reserved_recovery_lines = super::unified_metadata_cache_lines(cfg);
        SchemeShape { reserved_recovery_lines, recovery_restores_dirty_lines: true, ..SchemeShape::default() }
    }
}

/// Anubis's runtime: its rules need no state beyond the chip's register.
#[derive(Clone, Copy, Debug, Default)]
pub struct AnubisRuntime;

/// The shadow-table tree's root register (on chip), taken at power loss.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnubisNv {
    pub recovery_root: Option<u64>,
}

fn entry(addr: u64, counters: &[u8; 56]) -> [u8; 64] {
    let mut b = [0u8; 64];
    // Address + 1, so that an all-zero entry is an empty way.
    b[0..8].copy_from_slice(&(addr + 1).to_le_bytes());
    b[8..64].copy_from_slice(counters);
    b
}

fn decode_entry(b: &[u8; 64]) -> Option<(u64, [u64; 8])> {
    let a = u64::from_le_bytes(b[0..8].try_into().expect("8 bytes"));
    let mut ctr = [0u8; 64];
    ctr[0..56].copy_from_slice(&b[8..64]);
    (a != 0).then(|| (a - 1, SitNode::decode(&ctr).counters))
}

/// The shadow-tree root over the table's entries (leaf = hash of an entry).
fn shadow_root(st: &mut MetaStore, entries: &BTreeMap<u64, [u8; 64]>, counted: bool) -> u64 {
    let (_, lines) = st.layout.recovery.expect("the shadow table");
    let leaves: BTreeMap<u64, u64> = entries
        .iter()
        .map(|(&i, b)| {
            let h = match counted {
                true => st.crypto.bmt_hash(b),
                false => st.crypto.bmt_hash_uncounted(b),
            };
            (i, h)
        })
        .collect();
    small_tree_root(&mut st.crypto, lines, &leaves, counted)
}

impl Scheme for AnubisRuntime {
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<AnubisNv>()
    }

    fn on_metadata_dirty(&self, r: &Rules, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        let layout = st.layout.clone();
        if layout.meta_pos(addr).is_none() {
            return default_on_metadata_dirty(r, st, addr);
        }
        let cache = st.caches.for_addr(&layout, addr);
        let (Some(way), Some((line, _))) = (cache.way_of(addr), cache.peek(addr)) else { return Ok(()) };
        let n = SitNode::decode(&line);
        st.nvm.write(&layout, layout.recovery_addr(way as u64), entry(addr, &n.counter_bytes()));
        Ok(())
    }

    fn on_power_fail(&self, r: &Rules, st: &mut MetaStore, _work: &mut DrainWork) {
        if !r.secure {
            return;
        }
        let (base, lines) = st.layout.recovery.expect("the shadow table");
        let entries: BTreeMap<u64, [u8; 64]> = (0..lines).filter_map(|i| st.nvm.peek(base + i).map(|b| (i, b))).collect();
        let root = shadow_root(st, &entries, false);
        st.chip.scheme.get_mut::<AnubisNv>().recovery_root = Some(root);
    }

    /// The shadow table's Merkle tree root.
    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        vec![NvRegister { what: "shadow table tree root register", bytes: 8 }]
    }

    /// Recovery reads the whole table (one line per cache way) whatever is
    /// dirty, and restores every line it shadows (all of them once the
    /// cache has filled).
    fn recovery_cost(&self) -> RecoveryCost {
        RecoveryCost { reads_whole_recovery_area: true, restores_every_line: true }
    }

    /// The register is read by recovery alone.
    fn nv_change(&self, _st: &MetaStore, _before: &SchemeNv, _after: &SchemeNv) -> NvChange {
        NvChange::Unseen
    }

    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        if !r.secure {
            return;
        }
        let IntegrityTree::Sit(tree) = &r.tree else { return };
        let layout = st.layout.clone();
        let (base, lines) = layout.recovery.expect("the shadow table");
        let mut entries = BTreeMap::new();
        let mut restored: BTreeMap<u64, [u64; 8]> = BTreeMap::new();
        for i in 0..lines {
            let Some(b) = st.nvm.read(&layout, base + i) else { continue };
            entries.insert(i, b);
            let Some((a, c)) = decode_entry(&b) else { continue };
            if layout.meta_pos(a).is_none() {
                continue;
            }
            let r = restored.entry(a).or_insert([0; 8]);
            for (x, y) in r.iter_mut().zip(c) {
                *x = (*x).max(y);
            }
        }
        for (&a, r) in restored.iter_mut() {
            let stored = SitNode::decode(&st.nvm.read(&layout, a).unwrap_or([0; 64])).counters;
            for (x, y) in r.iter_mut().zip(stored) {
                *x = (*x).max(y);
            }
        }
        let root = shadow_root(st, &entries, true);
        write_restored(tree, st, &restored);
        rep.add_count("stale_restored", restored.len() as u64);
        if st.chip.scheme.get::<AnubisNv>().and_then(|n| n.recovery_root).is_some_and(|r| r != root) {
            rep.scheme_failure =
                Some("the shadow table's tree does not match the on-chip root (Anubis): the table was tampered with".into());
        }
    }
}
