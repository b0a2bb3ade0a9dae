//! Schemes as plugins: one file per scheme holds its parameters (plain
//! data, what every mechanism reads), its runtime (the hooks the engine
//! calls, `engine::hooks`), the engine's shape under it (plain data read
//! at assembly, `engine::shape`) and its part in compositions; one line of
//! the registry below names it.
//!
//! ```text
//!  configs/<preset>.toml  [scheme] type = "secon", track_units = 16
//!        |  config: serde (tag = "type"; unknown keys refused)
//!  SchemeKind::Secon(Secon { .. })       the registry (below; registry.rs)
//!        |  .params(): SchemeParams      name(), work(): SchemeWork, validate(), needs()
//!        |  .role(): Role                a metadata choice, a front end's pair, alone
//!        |  build(cfg, seed)             .registered().build(): Box<dyn Scheme>
//!        |  shape(cfg)                   .registered().shape(): SchemeShape, plain data
//!        |                               the engine is assembled with (engine/shape.rs)
//!        v
//!  SeconRuntime: impl engine::hooks::Scheme      (secon/mod.rs, beside Secon)
//!        volatile state   its own fields (cells)
//!        NV state         its type in chip.scheme (SchemeNv)
//!        stats            roi.scheme (stats())
//!        costs            recovery_cost(), battery_duties(), onchip_nv_registers()
//! ```
//! A scheme whose rules are all data (SecPB's six, BBB, SP, the
//! write-through and write-back baselines, eADR, the toy lazy tree) runs on
//! [`Described`], the runtime with every hook at its default. Adding a
//! scheme is its file here, its line in the registry and a preset in
//! `configs/` (see `docs/architecture.md`).

pub mod bitmap_lines;
pub mod params;
mod registry;
mod sit_restore;
mod tracking;

pub use params::{SchemeParams, SchemeWork};
pub use registry::{by_name, Registered, Role};
pub use secpb::SecPbVariant;

use crate::config::SimConfig;
use crate::engine::chip::ChipState;
use crate::engine::controller::{tree_layout, MemoryController};
use crate::engine::hooks::{NvRegister, Scheme};
use crate::engine::nvm::Nvm;
use crate::engine::shape::SchemeShape;

registry::schemes! {
    composed: Composed(composed::Composed);
    Secpb(secpb::SecPb),
    Bbb(bbb::Bbb),
    BbbGap(bbb_gap::BbbGap),
    #[serde(alias = "plp")]
    Sp(sp::Sp),
    WriteThrough(write_through::WriteThrough),
    LevelWriteThrough(level_write_through::LevelWriteThrough),
    BatteryWriteBack(battery_write_back::BatteryWriteBack),
    IdealWriteBack(ideal_write_back::IdealWriteBack),
    Secon(secon::Secon),
    WriteBackNoBattery(write_back_no_battery::WriteBackNoBattery),
    Eadr(eadr::Eadr),
    Star(star::Star),
    AnubisSit(anubis_sit::AnubisSit),
    Triad(triad::Triad),
    TriadNoPersist(triad_no_persist::TriadNoPersist),
    Osiris(osiris::Osiris),
    Mset(mset::Mset),
    Assure(assure::Assure),
    #[serde(rename = "cachetree")]
    CacheTree(cache_tree::CacheTree),
    WriteThroughToCached(write_through_to_cached::WriteThroughToCached),
    ToyLazyTree(toy_lazy_tree::ToyLazyTree),
    ToyCounting(toy_counting::ToyCounting),
}

pub use composed::{FrontChoice, MetadataChoice};

/// The runtime of a scheme whose rules are all in its description: every
/// hook at its default, nothing remembered.
#[derive(Clone, Copy, Debug, Default)]
pub struct Described;

impl Scheme for Described {}

/// The runtime of `cfg`'s scheme, for a machine of seed `seed`: the one
/// its registry entry builds (a composed scheme's is its metadata
/// scheme's, whose rules read the composed description from `cfg`).
pub fn build(cfg: &SimConfig, seed: u64) -> Box<dyn Scheme> {
    cfg.scheme.registered().build(cfg, seed)
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

/// What `cfg`'s scheme answers once, when the engine is assembled: its
/// registry entry's shape over the tree `cfg` lays out (a composed
/// scheme's is its metadata scheme's).
pub fn shape(cfg: &SimConfig) -> SchemeShape {
    cfg.scheme.registered().shape(&tree_layout(cfg), cfg)
}

/// A memory controller re-created around a saved chip state and NVM image.
pub fn controller_on_chip(cfg: &SimConfig, chip: ChipState, nvm: Nvm) -> MemoryController {
    let scheme = build(cfg, chip.seed);
    MemoryController::assemble(cfg, chip, nvm, scheme, shape(cfg))
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

/// Lines of `cfg`'s unified metadata cache (0 with separate caches): the
/// recovery area of a scheme that keeps a line of NVM per cached line
/// (Anubis's shadow table, the multiset-hash scheme's log).
pub fn unified_metadata_cache_lines(cfg: &SimConfig) -> u64 {
    use crate::config::MetadataCacheOrganization as O;
    match &cfg.metadata_cache.organization {
        O::Unified { unified } => unified.capacity_bytes / 64,
        O::Separate { .. } => 0,
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
