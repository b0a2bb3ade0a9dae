//! Triad-NVM (Awad et al., III-B and III-C): persistent and non-persistent
//! regions, two key sets, and the tree persisted bottom-up to level N for
//! the persistent region only.
//!
//! ```text
//!  write of persistent data (Fig. 7): counter, MAC, tree nodes of levels
//!    1..=N above it --persistent registers + READY bit--> WPQ with the data
//!    (the rest of the path, and everything of non-persistent data, stays
//!    in the metadata caches, written back when evicted)
//!  recovery: new volatile key set (a new boot)
//!    persistent subtrees: read level N, rebuild above it, compare roots
//!    non-persistent subtrees: zero every level-1 node, build above them;
//!      a zero entry then marks "first write since recovery" (lazy)
//! ```
//! The persistent registers make a write's tuple atomic: spmsim puts a
//! write's lines in the WPQ together, within the event that makes it, so a
//! crash falls before or after all of them, as the READY bit gives.
//!
//! TriadNVM-N persists "the highest level ... guaranteed to be strictly
//! persisted, e.g., if such a level is 2, then counters, their parents and
//! grandparents" (III-C): N = 1 writes the counter block and its parent.

use super::params::{in_range, Completion, MetadataPolicy, Need, ParamError, SchemeParams, SchemeWork, TreeType, TREE_WRITTEN_BACK};
use super::{Registered, Role};
use crate::config::SimConfig;
use crate::engine::controller::MemoryController;
use crate::engine::hooks::{OwnState, RecoveryAttack, RecoveryReport, Scheme};
use crate::engine::layout::{Cover, Layout, Region};
use crate::engine::nvm::NvmImage;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::BonsaiMerkleTree;
use serde::{Deserialize, Serialize};

/// Triad-NVM: persistent regions, two key sets, level-N persistence
/// (Triad-NVM III-B, III-C).
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

impl Default for Triad {
    fn default() -> Self {
        Triad { persist_level: first_level(), first_persisted_level: first_level() }
    }
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

pub(super) const TRIAD_TREE: Need = Need::Tree { tree: TreeType::Bmt, no_onchip_levels: false, why: "works on a Bonsai Merkle tree (Triad-NVM II-A)" };

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

impl Registered for Triad {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(TriadRuntime::new(*self, cfg))
    }
    /// Recovery zeroes the non-persistent subtrees' level-1 nodes, whose
    /// zero entries then mark counter blocks not written since (III-C).
    fn shape(&self, _tree: &Layout, _cfg: &SimConfig) -> SchemeShape {
        SchemeShape { zero_level1_entry_marks_unwritten: true, ..SchemeShape::default() }
    }
}

/// Triad-NVM's runtime: its parameters and whether the configuration
/// keeps a volatile key set (a recovery moves it on).
#[derive(Clone, Copy, Debug)]
pub struct TriadRuntime {
    p: Triad,
    volatile_key: bool,
}

/// A recovery's first step on a Triad-NVM machine: a new boot, so a new
/// volatile key set (Triad-NVM III-B1: the chip counts its boots); then
/// the BMT to rebuild (None: security is off).
pub(super) fn new_boot<'a>(r: &'a Rules, st: &mut MetaStore, volatile_key: bool) -> Option<&'a BonsaiMerkleTree> {
    if !r.secure {
        return None;
    }
    MemoryController::next_boot_keys(r, st, volatile_key);
    r.tree.as_bmt()
}

impl TriadRuntime {
    pub fn new(p: Triad, cfg: &SimConfig) -> Self {
        TriadRuntime { p, volatile_key: cfg.security.volatile_key }
    }

    fn level(&self) -> u32 {
        self.p.level()
    }

    /// Whether a dirty metadata line is written through now: lines over
    /// persistent data only, and of the tree only levels
    /// `first_persisted_level..=persist_level` (III-B1, III-B3).
    fn writes_through(&self, layout: &Layout, addr: u64) -> bool {
        if layout.cover_of_line(addr) == Cover::Volatile {
            return false;
        }
        match layout.region(addr) {
            Some(Region::Tree { level, .. }) => (self.p.first_persisted_level..=self.p.persist_level).contains(&(level as u64)),
            _ => true,
        }
    }
}

impl Scheme for TriadRuntime {
    fn on_metadata_dirty(&self, r: &Rules, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        if self.writes_through(&st.layout, addr) {
            r.persist_line(st, addr)?;
        }
        Ok(())
    }
    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip {
            name: "persistent-registers-tamper",
            why: "the persistent registers and READY bit that stage a write's tuple are inside the processor (Triad-NVM III-C, Fig. 7)",
        }]
    }
    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        let Some(t) = new_boot(r, st, self.volatile_key) else { return };
        t.reset_region(st, Cover::Volatile);
        let out = t.rebuild_region(st, self.level(), Cover::Persistent);
        rep.tree_rebuilt = out.mismatched_roots.is_empty();
        rep.rebuild = Some(out);
    }
    fn recovery_attack_names(&self) -> &'static [&'static str] {
        &TRIAD_ATTACKS
    }
    fn recovery_state_pending(&self, st: &MetaStore, volatile_data: bool) -> bool {
        st.layout.has_regions() && volatile_data
    }
    fn recovery_attacks(&self, _r: &Rules, st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        triad_attacks(self.level(), st, earlier)
    }
}

const TRIAD_ATTACKS: [&str; 4] = ["triad-level-n-tamper", "triad-level-n-replay", "triad-zeroed-node-tamper", "triad-stale-np-data"];

/// The attacks on what Triad-NVM's recovery reads and leaves (III-C): the
/// persisted level-N nodes it rebuilds from, and the zeroed level-1 nodes
/// and stale blocks of the non-persistent region it leaves for later.
fn triad_attacks(level: u32, crashed: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
    let layout = &crashed.layout;
    let img = &crashed.nvm.image;
    let mut out = Vec::new();
    let attack = |name: &'static str, target: String, image: NvmImage| RecoveryAttack {
        name,
        target,
        image,
        after_recovery: Vec::new(),
        focus: None,
    };
    // A persisted level-N node over persistent data.
    let level = level.min(layout.top_level());
    let persisted: Vec<u64> = layout
        .nodes_covering(level, Cover::Persistent)
        .iter()
        .flat_map(|&(lo, hi)| img.addrs_in(layout.meta_addr(level, lo), layout.meta_addr(level, hi)))
        .collect();
    if let Some(&a) = persisted.first() {
        let mut tampered = img.clone();
        let mut b = *img.get(a).expect("listed");
        b[5] ^= 0x20;
        tampered.put(a, b);
        out.push(attack("triad-level-n-tamper", format!("persisted level-{level} node {a:#x}, bit 45"), tampered));
    }
    if let Some(&a) = persisted.iter().find(|&&a| earlier.get(a).is_some_and(|old| Some(old) != img.get(a))) {
        let mut replayed = img.clone();
        replayed.put(a, *earlier.get(a).expect("found"));
        out.push(attack("triad-level-n-replay", format!("persisted level-{level} node {a:#x} from an earlier image"), replayed));
    }
    // A non-persistent block the program wrote before the crash, whose
    // ciphertext reached NVM.
    let np = img.addrs_in(0, layout.data_blocks).into_iter().find(|&b| !layout.is_persistent(b));
    if let Some(b) = np {
        let (ci, _) = layout.counter_of(b);
        if let Some((pl, pi, _)) = layout.parent_of(0, ci) {
            let node = layout.meta_addr(pl, pi);
            let mut forged = [0u8; 64];
            forged[9] = 0x01;
            out.push(RecoveryAttack {
                after_recovery: vec![(node, Some(forged))],
                focus: Some(b),
                ..attack(
                    "triad-zeroed-node-tamper",
                    format!("zeroed level-1 node {node:#x} over non-persistent block {:#x}, made non-zero after recovery", b * 64),
                    img.clone(),
                )
            });
        }
        out.push(RecoveryAttack {
            focus: Some(b),
            ..attack(
                "triad-stale-np-data",
                format!("non-persistent block {:#x}: its ciphertext, MAC and counter block of before the crash, left in NVM and read after recovery", b * 64),
                img.clone(),
            )
        });
    }
    out
}
