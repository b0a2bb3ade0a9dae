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
//! the hardware kept it over; each update is counted (`shadow_tree_updates`).

use super::sit_restore::{small_tree_root, write_restored};
use super::{Scheme, SchemeWork};
use crate::config::{MacPlacement, MetadataCacheOrganization, SimConfig, TreeConfig, WritePolicy};
use crate::engine::counter::SitNode;
use crate::engine::layout::Layout;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use crate::machine::{DrainWork, RecoveryReport, System};
use crate::scheme::MetadataPolicy;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnubisSit {}

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

impl Scheme for AnubisSit {
    fn name(&self) -> &'static str {
        "anubis-sit"
    }

    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), false, false)
    }

    fn check(&self, cfg: &SimConfig) -> Result<(), String> {
        if !matches!(cfg.tree, TreeConfig::Sit { .. }) {
            return Err("scheme `anubis-sit` is Anubis for the SGX integrity tree; set tree.type = \"sit\"".into());
        }
        if !matches!(cfg.metadata_cache.organization, MetadataCacheOrganization::Unified { .. }) {
            return Err("scheme `anubis-sit` shadows one unified metadata cache; set metadata_cache.organization.type = \"unified\"".into());
        }
        if cfg.security.mac_placement != MacPlacement::DataLine {
            return Err(
                "scheme `anubis-sit` runs on STAR's machine, MACs in the data line; set security.mac_placement = \"data-line\"".into()
            );
        }
        super::check_front(self, cfg)
    }

    fn recovery_area_lines(&self, _layout: &Layout, cfg: &SimConfig) -> u64 {
        match &cfg.metadata_cache.organization {
            MetadataCacheOrganization::Unified { unified } => unified.capacity_bytes / 64,
            MetadataCacheOrganization::Separate { .. } => 0,
        }
    }

    fn on_metadata_dirty(&self, tree: &IntegrityTree, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        let layout = st.layout.clone();
        if layout.meta_pos(addr).is_none() {
            return super::default_on_metadata_dirty(tree, st, addr);
        }
        let cache = st.caches.for_addr(&layout, addr);
        let (Some(way), Some((line, _))) = (cache.way_of(addr), cache.peek(addr)) else { return Ok(()) };
        let n = SitNode::decode(&line);
        st.nvm.write(&layout, layout.recovery_addr(way as u64), entry(addr, &n.counter_bytes()));
        st.shadow_tree_updates += 1;
        Ok(())
    }

    fn restores_dirty_metadata(&self) -> bool {
        true
    }

    fn on_power_fail(&self, sys: &mut System, work: &mut DrainWork) {
        super::drain_front_and_metadata(self, sys, work);
        if !sys.mc.secure {
            return;
        }
        let st = &mut sys.mc.st;
        let (base, lines) = st.layout.recovery.expect("the shadow table");
        let entries: BTreeMap<u64, [u8; 64]> = (0..lines).filter_map(|i| st.nvm.peek(base + i).map(|b| (i, b))).collect();
        st.chip.recovery_root = Some(shadow_root(st, &entries, false));
    }

    /// The shadow table's Merkle tree root.
    fn onchip_nv_registers(&self) -> Vec<super::NvRegister> {
        vec![super::NvRegister { what: "shadow table tree root register", bytes: 8 }]
    }

    fn recover(&self, sys: &mut System, rep: &mut RecoveryReport) {
        if !sys.mc.secure {
            return;
        }
        let IntegrityTree::Sit(tree) = sys.mc.tree.clone() else { return };
        let st = &mut sys.mc.st;
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
        write_restored(&tree, st, &restored);
        rep.stale_restored = restored.len() as u64;
        if st.chip.recovery_root.is_some_and(|r| r != root) {
            rep.scheme_failure =
                Some("the shadow table's tree does not match the on-chip root (Anubis): the table was tampered with".into());
        }
    }
}
