//! Schemes as plugins: each scheme's parameters (plain data, `params/`)
//! build its runtime (one file each here), which the engine calls through
//! the hooks it declares (`engine::hooks`).
//!
//! ```text
//!  configs/<preset>.toml  [scheme] type = "secon", track_units = 16
//!        |  config (imports params/ only)
//!  SchemeKind::Secon(params)  -- work(): SchemeWork  read by every mechanism
//!        |  build(cfg, seed)                          (front ends, timing, battery)
//!        v
//!  SeconRuntime: impl engine::hooks::Scheme
//!        volatile state   its own fields (cells)
//!        NV state         its type in chip.scheme (SchemeNv)
//!        stats            roi.scheme (stats())
//!        costs            recovery_cost(), battery_duties(), onchip_nv_registers()
//! ```
//! A scheme whose rules are all data (SecPB's six, BBB, SP, the
//! write-through and write-back baselines, eADR) runs on [`Described`], the
//! runtime with every hook at its default. Adding a scheme is its
//! parameters and one arm in `params/`, a runtime file here with its arm in
//! [`build`], and a preset in `configs/` (see `docs/architecture.md`).

mod anubis_sit;
mod assure;
pub mod bitmap_lines;
mod cache_tree;
pub mod mset;
mod osiris;
pub mod params;
mod secon;
mod sit_restore;
mod star;
mod toy_counting;
mod tracking;
mod triad;
mod triad_no_persist;
mod write_through_to_cached;

pub use anubis_sit::AnubisRuntime;
pub use assure::{AssureRuntime, HotTree};
pub use cache_tree::CacheTreeRuntime;
pub use mset::{MsetRegisters, MsetRuntime};
pub use osiris::OsirisRuntime;
pub use secon::{CounterTrack, SeconRuntime, TrackStats, TrackUnit};
pub use star::StarRuntime;
pub use toy_counting::ToyCountingRuntime;
pub use triad::TriadRuntime;
pub use triad_no_persist::TriadNoPersistRuntime;
pub use write_through_to_cached::WriteThroughToCachedRuntime;

use crate::config::SimConfig;
use crate::engine::chip::ChipState;
use crate::engine::controller::MemoryController;
use crate::engine::hooks::{NvRegister, Scheme};
use crate::engine::nvm::Nvm;
use params::SchemeKind;

/// The runtime of a scheme whose rules are all in its description: every
/// hook at its default, nothing remembered.
#[derive(Clone, Copy, Debug, Default)]
pub struct Described;

impl Scheme for Described {}

/// The runtime of `cfg`'s scheme, for a machine of seed `seed` (the
/// registry of runtimes: one arm per scheme with state or hooks of its own).
pub fn build(cfg: &SimConfig, seed: u64) -> Box<dyn Scheme> {
    build_kind(cfg.scheme, cfg, seed)
}

/// The runtime of scheme `kind` on `cfg`'s machine: a composed scheme runs
/// its metadata scheme's runtime (its rules read the composed description
/// from `cfg`).
fn build_kind(kind: SchemeKind, cfg: &SimConfig, seed: u64) -> Box<dyn Scheme> {
    match kind {
        SchemeKind::Composed(c) => build_kind(c.metadata_kind(), cfg, seed),
        SchemeKind::Secon(p) => Box::new(SeconRuntime::new(p)),
        SchemeKind::Star(p) => Box::new(StarRuntime::new(p)),
        SchemeKind::AnubisSit(_) => Box::new(AnubisRuntime),
        SchemeKind::Triad(p) => Box::new(TriadRuntime::new(p, cfg)),
        SchemeKind::TriadNoPersist(_) => Box::new(TriadNoPersistRuntime::new(cfg)),
        SchemeKind::Osiris(p) => Box::new(OsirisRuntime::new(p)),
        SchemeKind::Mset(p) => Box::new(MsetRuntime::new(p, seed)),
        SchemeKind::Assure(p) => Box::new(AssureRuntime::new(p)),
        SchemeKind::CacheTree(p) => Box::new(CacheTreeRuntime::new(p)),
        SchemeKind::WriteThroughToCached(_) => Box::new(WriteThroughToCachedRuntime::default()),
        SchemeKind::ToyCounting(p) => Box::new(ToyCountingRuntime::new(p)),
        SchemeKind::Secpb(_)
        | SchemeKind::Bbb(_)
        | SchemeKind::BbbGap(_)
        | SchemeKind::Sp(_)
        | SchemeKind::WriteThrough(_)
        | SchemeKind::LevelWriteThrough(_)
        | SchemeKind::BatteryWriteBack(_)
        | SchemeKind::IdealWriteBack(_)
        | SchemeKind::WriteBackNoBattery(_)
        | SchemeKind::Eadr(_)
        | SchemeKind::ToyLazyTree(_) => Box::new(Described),
    }
}

/// The runtime of `cfg`'s scheme for the questions that do not depend on a
/// machine (its battery duties, its registers, its own state, its
/// recovery's scaling): no state of it is used.
pub fn describe(cfg: &SimConfig) -> Box<dyn Scheme> {
    build(cfg, 0)
}

/// A new machine's memory controller running `cfg`'s scheme.
pub fn controller(cfg: &SimConfig, seed: u64) -> MemoryController {
    let chip = ChipState::new(cfg, seed);
    controller_on_chip(cfg, chip, Nvm::new(cfg.persistence.wpq_entries as usize))
}

/// A memory controller re-created around a saved chip state and NVM image.
pub fn controller_on_chip(cfg: &SimConfig, chip: ChipState, nvm: Nvm) -> MemoryController {
    let scheme = build(cfg, chip.seed);
    MemoryController::assemble(cfg, chip, nvm, scheme)
}

/// The root registers of the tree over `layout`: one 8 B hash (BMT) or
/// counter (SIT) per top-level node, and the tree levels kept on chip
/// above it (Triad-NVM Observation 5), one 64 B node each.
pub fn root_registers(cfg: &SimConfig, layout: &crate::engine::layout::Layout) -> Vec<NvRegister> {
    let mut regs = layout.level_nodes[layout.top_level() as usize];
    let mut out = vec![NvRegister { what: "root registers (8 B per top-level node)", bytes: regs * 8 }];
    if let crate::config::TreeConfig::Bmt { onchip_levels, arity, .. } = cfg.tree {
        let mut nodes = 0;
        for _ in 0..onchip_levels {
            regs = regs.div_ceil(arity).max(1);
            nodes += regs;
        }
        if nodes > 0 {
            out.push(NvRegister { what: "tree levels kept on chip (64 B per node)", bytes: nodes * 64 });
        }
    }
    out
}

/// An `arity`-ary tree over `n` leaves, up to one root: the levels above
/// the leaves and the nodes on them (the small on-chip trees: CacheTree's
/// HNodeTree, STAR's cache-tree, the levels above Triad-NVM's roots).
pub fn tree_above(n: u64, arity: u64) -> (u32, u64) {
    let (mut width, mut levels, mut nodes) = (n.max(1), 0, 0);
    while width > 1 {
        width = width.div_ceil(arity);
        levels += 1;
        nodes += width;
    }
    (levels, nodes)
}

/// Lines of every metadata cache `cfg` has.
pub fn metadata_cache_lines(cfg: &SimConfig) -> u64 {
    use crate::config::MetadataCacheOrganization as O;
    match &cfg.metadata_cache.organization {
        O::Separate { counter, mac, tree } => (counter.capacity_bytes + mac.capacity_bytes + tree.capacity_bytes) / 64,
        O::Unified { unified } => unified.capacity_bytes / 64,
    }
}

#[cfg(test)]
mod tests {
    use crate::config::{load_preset, load_str};
    use crate::machine::System;
    use crate::workload::Event;

    /// The default `on_metadata_dirty` hook follows the scheme's policy on
    /// both trees: write-through queues the counter block, the MAC line and
    /// every node above the counter block; write-back leaves them dirty.
    #[test]
    fn the_default_dirty_hook_follows_the_policy_on_every_tree() {
        for tree in ["bmt", "sit"] {
            for (scheme, through) in [("write-through", true), ("battery-write-back", false)] {
                let toml = format!("[memory]\ncapacity_bytes = 16777216\n[tree]\ntype = '{tree}'\n[scheme]\ntype = '{scheme}'\n");
                let mut mc = super::controller(&load_str(&toml, "test", &[]).unwrap(), 1);
                mc.write(5, &[1; 64]).unwrap();
                let w = mc.st.nvm.enqueued;
                let above = mc.layout().levels() as u64 - 1;
                let expect = if through { (1, 1, 1, above, true) } else { (1, 0, 0, 0, false) };
                assert_eq!((w.data, w.counter, w.mac, w.tree, mc.st.caches.dirty_lines().is_empty()), expect, "{tree} {scheme}");
            }
        }
    }

    /// Stores to 40 blocks over 5 pages; the tree writes each persisted,
    /// and whether a crash then recovers.
    fn run(preset: &str) -> (u64, u64, bool) {
        let cfg = load_preset(preset, &["memory.capacity_bytes=67108864".into()]).unwrap();
        let mut s = System::new(&cfg, 3);
        for i in 0..40u64 {
            s.apply(&Event::store((i % 5) * 4096 + (i / 5) * 64, 8, i + 1, false)).unwrap();
        }
        let w = s.mc.st.nvm.enqueued;
        s.power_fail();
        let ok = s.recover().ok() && (0..40u64).all(|i| s.mc.read((i % 5) * 64 + i / 5).unwrap()[..8] == (i + 1).to_le_bytes());
        (w.tree, w.counter, ok)
    }

    #[test]
    fn secons_wt_writes_the_first_tree_level_and_rebuilds_the_rest() {
        let (tree, counters, ok) = run("wt");
        // Each store writes its counter block and the one level-1 node above it.
        assert_eq!((tree, counters), (40, 40));
        assert!(ok, "the upper levels, lost at the crash, are rebuilt from the counters");
        // STAR's strict persistence writes every level of the path.
        let (all_levels, _, ok) = run("secure-wt");
        assert!(all_levels > 2 * tree && ok, "{all_levels}");
    }
}
