//! Schemes as plugins: what a scheme does with security metadata, said
//! once, as data that every mechanism reads.
//!
//! ```text
//!  configs/<preset>.toml  [scheme] type = "secpb", variant = "cm"
//!        |
//!  SchemeKind (closed enum: the registry)  --> impl Scheme (one file each)
//!        |  work(): SchemeWork  (front end, early tuple steps, metadata
//!        |                       write policies, power-fail and recovery)
//!        |  hooks: on_persist, on_counter_update, verify_on_fetch,
//!        |         on_metadata_dirty, on_metadata_evict, own_state,
//!        |         on_power_fail, recover (defaults read SchemeWork)
//!        +--> persist::PersistBuffer  which steps a store does early
//!        +--> controller / store      which metadata lines write through
//!        +--> system::power_fail      what the battery drains, what recovery does
//!        +--> timing                  what the persist path prices (or refuses)
//!        +--> battery                 what the energy source must pay for
//! ```
//! The mechanism (front ends, controller, trees, timing) has no
//! scheme-specific code: it asks the scheme's [`SchemeWork`]. Adding a
//! scheme is one file here, one arm of [`SchemeKind`] and one preset in
//! `configs/` (see `docs/architecture.md`).

mod anubis_sit;
mod assure;
mod bbb;
pub mod bitmap_lines;
mod cache_tree;
mod eadr;
mod level_write_through;
mod mset;
mod osiris;
mod plp;
mod secon;
mod secpb;
mod sit_restore;
mod star;
mod toy_lazy_tree;
mod tracking_attacks;
mod triad;
mod triad_no_persist;
mod write_back;
mod write_through;

pub use anubis_sit::AnubisSit;
pub use assure::{Assure, EpochCounts};
pub use bbb::{Bbb, BbbGap};
pub use cache_tree::CacheTree;
pub use eadr::Eadr;
pub use level_write_through::LevelWriteThrough;
pub use mset::Mset;
pub use osiris::Osiris;
pub use plp::Plp;
pub use secon::{CounterTrack, Secon, SeconRecovery, TrackStats, TrackUnit, SECON_MAX_TRACK_UNITS, SECON_TRACK_UNITS};
pub use secpb::{SecPb, SecPbVariant};
pub use star::{Star, STAR_BITMAP_LINES};
pub use toy_lazy_tree::ToyLazyTree;
pub use triad::Triad;
pub use triad_no_persist::TriadNoPersist;
pub use write_back::{BatteryWriteBack, IdealWriteBack, WriteBackNoBattery};
pub use write_through::WriteThrough;

use crate::config::{SimConfig, WritePolicy};
use crate::engine::controller::MemoryController;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use crate::machine::{DrainWork, RecoveryReport, System};
use serde::{Deserialize, Serialize};

/// One step of a memory tuple's update (SecPB Fig. 4): the counter
/// increment, the one-time pad, the BMT root update, the ciphertext, the
/// data MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TupleStep {
    Counter,
    Otp,
    Ciphertext,
    Bmt,
    Mac,
}

impl TupleStep {
    pub const ALL: [TupleStep; 5] = [TupleStep::Counter, TupleStep::Otp, TupleStep::Ciphertext, TupleStep::Bmt, TupleStep::Mac];
}

/// A set of tuple steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Steps(u8);

impl Steps {
    pub const NONE: Steps = Steps(0);
    pub const ALL: Steps = Steps(0b11111);

    pub const fn of(steps: &[TupleStep]) -> Steps {
        let mut bits = 0u8;
        let mut i = 0;
        while i < steps.len() {
            bits |= 1 << steps[i] as u8;
            i += 1;
        }
        Steps(bits)
    }
    pub fn contains(self, s: TupleStep) -> bool {
        self.0 & (1 << s as u8) != 0
    }
    /// The steps of a tuple not in `self`.
    pub fn complement(self) -> Steps {
        Steps(Steps::ALL.0 & !self.0)
    }
    pub fn union(self, other: Steps) -> Steps {
        Steps(self.0 | other.0)
    }
    pub fn intersect(self, other: Steps) -> Steps {
        Steps(self.0 & other.0)
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The steps in `TupleStep::ALL` order.
    pub fn to_vec(self) -> Vec<TupleStep> {
        TupleStep::ALL.into_iter().filter(|s| self.contains(*s)).collect()
    }
}

impl Serialize for Steps {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_vec().serialize(s)
    }
}

/// Where a store becomes persistent, as far as a scheme cares: the
/// geometry of each front end is in `persistence.point`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Front {
    /// Strict persistency with a flush per store: persistent at the WPQ.
    MemoryController,
    /// A battery-backed persist buffer beside L1D (BBB, SecPB).
    PersistBuffer,
    /// The data caches are in the persistence domain (eADR).
    CacheHierarchy,
}

impl Front {
    /// The `persistence.point.type` value of this front end.
    pub fn point_type(self) -> &'static str {
        match self {
            Front::MemoryController => "memory-controller",
            Front::PersistBuffer => "persist-buffer",
            Front::CacheHierarchy => "cache-hierarchy",
        }
    }
}

/// How each kind of metadata line reaches NVM once it is dirty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MetadataPolicy {
    pub counter: WritePolicy,
    pub mac: WritePolicy,
    pub tree: WritePolicy,
    /// Tree nodes up to this level (1 = the level above the counter
    /// blocks) are written through whatever `tree` says: Secon's WT writes
    /// "the first-level BMT blocks" with each write (Secon 4.3), Triad-NVM's
    /// level-N persistence the levels up to N. 0: `tree` for every level.
    pub tree_through_levels: u32,
}

impl MetadataPolicy {
    pub const fn uniform(p: WritePolicy) -> Self {
        MetadataPolicy { counter: p, mac: p, tree: p, tree_through_levels: 0 }
    }

    /// The same, with tree nodes written as `p`.
    pub const fn with_tree(self, p: WritePolicy) -> Self {
        MetadataPolicy { tree: p, ..self }
    }
}

/// What the battery does with the front end's contents on power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FrontDrain {
    /// Each drained line passes through the security engine (SecPB's late
    /// strategy; secure eADR).
    Secured,
    /// Lines reach NVM without their memory tuple: the security engine is
    /// outside the battery domain (BBB with security at the MC: the
    /// recoverability gap of SecPB Fig. 1b). Plain BBB and eADR, which have
    /// no security, also drain this way.
    Unsecured,
}

/// A scheme's whole description: the one place its rules live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SchemeWork {
    pub front: Front,
    /// The scheme protects memory (counters, MACs, tree); false for BBB and
    /// eADR, which `security.enabled = false` must then say too.
    pub secure: bool,
    /// Tuple steps done when a store enters the persist buffer; the rest
    /// are done when it drains (SecPB IV). Empty for other front ends.
    pub early: Steps,
    /// Extra persist-buffer accesses when a store allocates an entry
    /// (OBCM reads the counter valid bit: SecPB IV-B).
    pub allocate_extra_accesses: u32,
    pub metadata: MetadataPolicy,
    pub front_drain: FrontDrain,
    /// The battery flushes the dirty metadata caches on power loss.
    pub battery_flushes_metadata: bool,
    /// Recovery rebuilds the tree from the persisted counters and compares
    /// it with the root registers (PLP's SP: the tree is written back).
    pub recovery_rebuilds_tree: bool,
    /// An idealised baseline (Secon's WB, Secon 4.1: "without the
    /// overheads of BMT updates and extra metadata writes"): the functional
    /// model does all the metadata work, so integrity and recovery hold,
    /// but the timing model prices no tree update and queues no metadata
    /// write; the writes it leaves out are counted as unpriced.
    pub ideal_metadata: bool,
    /// Root updates that may wait at once in the background (Secon 3.2's
    /// pending BMT update queue, 16); 0: none, every root update is done
    /// before the write persists. With N > 0 the root update above the
    /// first tree level runs after the tuple persists: a write is
    /// persistent when its tuple holds WPQ slots, and ACKed when its root
    /// update is done; a write that finds N pending waits for the oldest.
    pub deferred_root_updates: u32,
}

impl SchemeWork {
    /// A scheme that persists each store at the memory controller (strict
    /// persistency with a flush per store): its metadata policy, whether the
    /// battery flushes the dirty metadata caches, whether recovery rebuilds
    /// the tree. SP, the write-through baselines and the write-back ones.
    pub const fn at_memory_controller(metadata: MetadataPolicy, battery_flushes_metadata: bool, recovery_rebuilds_tree: bool) -> Self {
        SchemeWork {
            front: Front::MemoryController,
            secure: true,
            early: Steps::NONE,
            allocate_extra_accesses: 0,
            metadata,
            front_drain: FrontDrain::Secured,
            battery_flushes_metadata,
            recovery_rebuilds_tree,
            ideal_metadata: false,
            deferred_root_updates: 0,
        }
    }

    /// Tuple steps left for the drain or the battery.
    pub fn late(&self) -> Steps {
        if self.secure {
            self.early.complement()
        } else {
            Steps::NONE
        }
    }
}

/// State a scheme adds to the machine, as the attack harness sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnState {
    /// On the chip or in its battery domain (a persist buffer, battery-
    /// backed caches): out of the attacker's reach by the threat model, so
    /// the harness reports the attack on it as ruled out, saying why.
    OnChip { name: &'static str, why: &'static str },
}

/// An attack on the NVM image of a crashed machine, aimed at what the
/// scheme's recovery reads (Secon's marks in first-level CMACs): the
/// harness powers the tampered image on, so recovery runs, and checks it.
pub struct RecoveryAttack {
    pub name: &'static str,
    /// What the attacker changed.
    pub target: String,
    pub image: crate::engine::nvm::NvmImage,
    /// Blocks the attacker writes (Some) or removes (None) once recovery
    /// is over and before anything is read: what a recovery leaves for
    /// later (Triad-NVM's zeroed level-1 nodes) is attacked there.
    pub after_recovery: Vec<(u64, Option<[u8; 64]>)>,
    /// A data block whose read decides the attack when no check fails:
    /// read back as valid, the attack succeeded; refused, it did not.
    pub focus: Option<u64>,
}

/// One piece of on-chip non-volatile state: a register the chip keeps
/// across a power failure with no battery (`spmsim compare`'s on-chip
/// state column).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NvRegister {
    pub what: &'static str,
    pub bytes: u64,
}

/// Work the battery must pay for at a power failure for state of the
/// scheme's own, in the worst case (every entry full, every line dirty),
/// beyond the front end, the WPQ and a metadata-cache flush: lines it
/// moves to NVM and 64 B hashes it computes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BatteryDuty {
    pub what: &'static str,
    pub lines_moved: u64,
    pub hashes: u64,
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

/// The hooks a scheme plugs into the mechanism. Every method but `name`
/// and `work` has a default that reads the description, so a scheme
/// overrides only what its paper changes.
pub trait Scheme {
    /// The name the paper uses (and the battery report prints).
    fn name(&self) -> &'static str;
    /// The scheme's rules, as data.
    fn work(&self) -> SchemeWork;
    /// Whether a configuration gives this scheme the mechanism it needs.
    /// Default: [`check_front`].
    fn check(&self, cfg: &SimConfig) -> Result<(), String> {
        check_front(self, cfg)
    }

    /// Blocks of NVM the scheme keeps for its own recovery state after the
    /// tree (STAR's recovery area of bitmap lines, Anubis's shadow table);
    /// 0: none.
    fn recovery_area_lines(&self, _layout: &crate::engine::layout::Layout, _cfg: &SimConfig) -> u64 {
        0
    }

    /// A SIT node written back carries the 10 LSBs of its parent's counter
    /// for it in the spare bits of its MAC field (STAR III-B's counter-MAC
    /// synergization). Default: no, the MAC takes all 64 bits.
    fn sit_parent_lsbs_in_mac(&self) -> bool {
        false
    }

    /// A metadata line was just written to NVM and is clean (a write-back,
    /// a flush, a write-through). Default: nothing. STAR clears its
    /// bitmap bit here (III-C).
    fn on_metadata_written(&self, _st: &mut MetaStore, _addr: u64) {}

    /// Recovery restores the dirty metadata lines the crash lost (STAR,
    /// Anubis): the crash oracle then checks every one against the cache's
    /// copy before the crash.
    fn restores_dirty_metadata(&self) -> bool {
        false
    }

    /// A zero level-1 BMT entry marks a counter block as not written since
    /// the last recovery, which then starts again from zero (Triad-NVM
    /// III-C's lazy recovery of the non-persistent subtree). Default: no.
    fn lazy_counter_init(&self) -> bool {
        false
    }

    /// The volatile key set covers all of memory, persistent regions too
    /// (Triad-NVM's no-persistence baseline loses every counter). Default:
    /// the non-persistent regions only.
    fn rekeys_all_memory(&self) -> bool {
        false
    }

    /// Bits of a counter block's hash its level-1 BMT entry keeps (64; a
    /// scheme that takes spare bits there says fewer).
    fn first_level_entry_bits(&self) -> u32 {
        64
    }

    // Metadata persistence: how metadata reaches NVM and is checked
    // (DESIGN.md's axis). The mechanism calls these at the moment each
    // thing happens; the defaults are the tree's and the policy's rules.

    /// A store entered the persistence domain (the persist buffer, the
    /// WPQ, the battery-backed caches) after the front end did the early
    /// steps of `work().early`. Default: nothing more. A scheme that
    /// tracks persists itself (an epoch of Secon's TEP) hooks in here.
    fn on_persist(&self, _mc: &mut MemoryController, _block: u64) -> Result<(), CheckFailure> {
        Ok(())
    }

    /// The data path changed counter block `index` to `bytes` (a write,
    /// an early counter, a page re-encryption). Default: the integrity tree
    /// keeps itself consistent (BMT eagerly up to the root register, SIT
    /// lazily). A scheme that updates something else instead (Osiris's
    /// stop-loss counter writes, a multiset hash) overrides this.
    fn on_counter_update(&self, tree: &IntegrityTree, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        tree.counter_updated(st, index, bytes)
    }

    /// A counter block or tree node came from NVM: check it before use.
    /// Default: against its parent, fetched and checked first, or the root
    /// register (SecPB II-B).
    fn verify_on_fetch(
        &self,
        tree: &IntegrityTree,
        st: &mut MetaStore,
        level: u32,
        index: u64,
        bytes: &[u8; 64],
    ) -> Result<(), CheckFailure> {
        tree.verify(st, level, index, bytes)
    }

    /// A metadata line (counter block, tree node, MAC line) changed in its
    /// cache and is dirty. Default: the scheme's `metadata` policy for its
    /// kind; write-through lines are persisted now, write-back ones when
    /// evicted. Secon's pre-persist, STAR's bitmap lines and Anubis's
    /// shadow table hook in here.
    fn on_metadata_dirty(&self, tree: &IntegrityTree, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        default_on_metadata_dirty(tree, st, addr)
    }

    /// Background work a scheme defers past a write (Secon's root update,
    /// Secon 3.2) must be done now: for the latest write of counter block
    /// `counter_index`, or for every deferred write when `None`. The
    /// persistency model calls it where it waits for the memory
    /// controller's ACK (a barrier, TEP's paired and regular epochs).
    /// Default: nothing is ever deferred.
    fn settle(&self, _tree: &IntegrityTree, _st: &mut MetaStore, _counter_index: Option<u64>) -> Result<(), CheckFailure> {
        Ok(())
    }

    /// A dirty metadata line left its cache. Default: the tree writes it
    /// back (a SIT node is MACed under its parent's advanced counter).
    fn on_metadata_evict(&self, tree: &IntegrityTree, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        tree.write_back(st, addr, bytes)
    }

    /// The state this scheme adds to the machine, for the attack harness,
    /// beyond what every scheme has (data, MACs, counters, tree, root
    /// registers, metadata caches). Default: its front end's battery-backed
    /// store, on chip. A scheme with state of its own in NVM (STAR's bitmap
    /// lines, Anubis's shadow table) lists it here for the harness to tamper with.
    fn own_state(&self) -> Vec<OwnState> {
        match self.work().front {
            Front::MemoryController => Vec::new(),
            Front::PersistBuffer => vec![OwnState::OnChip {
                name: "persist-buffer-tamper",
                why: "the battery-backed persist buffer sits beside L1D, inside the trusted chip (SecPB II-A, III)",
            }],
            Front::CacheHierarchy => vec![OwnState::OnChip {
                name: "data-cache-tamper",
                why: "eADR's battery-backed data caches are inside the trusted chip (SecPB II-A, II-C)",
            }],
        }
    }

    /// Whether the tree is updated lazily: a change stops at its cached
    /// line, and a dirty line hashes into its parent only when it is
    /// written back (the multiset-hash scheme, Kubo et al. 4.3). A flush
    /// then writes lines back lowest level first, through
    /// [`Self::on_metadata_evict`]. Default: eager updates.
    fn lazy_tree(&self) -> bool {
        false
    }

    /// A cache of the scheme's own for the nodes of one tree level, beside
    /// the metadata caches (CacheTree's HNode cache). Default: none.
    fn level_cache(&self, _cfg: &SimConfig) -> Option<crate::engine::metacache::LevelCacheGeometry> {
        None
    }

    /// An orderly shutdown wrote every dirty line back and the metadata
    /// caches are about to be emptied: state of the scheme's own that
    /// describes their contents (a tracking table, registers over them)
    /// must then say they are empty. Default: nothing.
    fn on_shutdown(&self, _st: &mut MetaStore) {}

    /// Whether the memory controller must know the undo-log regions
    /// (Secon's counter-log colocation tells log writes by address).
    fn uses_log_regions(&self) -> bool {
        false
    }

    /// The spare bits of the data MAC of a write of `block` under
    /// `counter`, authenticated with it (Secon 3.4.1 keeps a log write's
    /// minor counter there). Default: none.
    fn data_mac_spare(&self, _st: &MetaStore, _block: u64, _counter: (u64, u64)) -> u16 {
        0
    }

    /// The names of the attacks [`Self::recovery_attacks`] makes (none by
    /// default), so the harness can report them skipped when a run gives
    /// them nothing to attack.
    fn recovery_attack_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether a crash now would leave recovery something of the scheme's
    /// own to read (Secon: writes whose root update is pending).
    fn recovery_state_pending(&self, _sys: &System) -> bool {
        false
    }

    /// Attacks on the image of `crashed` (after its power failure) aimed at
    /// the scheme's recovery state; `earlier` is the same machine's image
    /// at an earlier point, for replays. Default: none.
    fn recovery_attacks(&self, _crashed: &System, _earlier: &crate::engine::nvm::NvmImage) -> Vec<RecoveryAttack> {
        Vec::new()
    }

    /// The on-chip non-volatile registers this scheme keeps beyond the
    /// tree's root registers ([`root_registers`], every secure scheme's).
    /// Default: none.
    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        Vec::new()
    }

    /// What the battery does at a power failure for state of the scheme's
    /// own (STAR's bitmap lines, Secon's queue). Default: nothing.
    fn battery_duties(&self, _cfg: &SimConfig) -> Vec<BatteryDuty> {
        Vec::new()
    }

    /// Power fails (before the caches are lost and ADR drains the WPQ):
    /// the battery drains the front end as `front_drain` says, and the
    /// metadata caches if `battery_flushes_metadata`. A scheme with
    /// battery-backed state of its own (Secon's queue, STAR's bitmap
    /// lines) drains it here.
    fn on_power_fail(&self, sys: &mut System, work: &mut DrainWork) {
        drain_front_and_metadata(self, sys, work)
    }

    /// Recovery after a power failure: rebuild the tree from the persisted
    /// counters when `recovery_rebuilds_tree`, comparing it with the root
    /// registers. Every NVM access and hash it does is counted by the code
    /// that does it, so the report prices recovery with no formula.
    fn recover(&self, sys: &mut System, rep: &mut RecoveryReport) {
        if sys.mc.secure && self.work().recovery_rebuilds_tree {
            if let Some(out) = sys.mc.tree.rebuild(&mut sys.mc.st) {
                rep.tree_rebuilt = out.mismatched_roots.is_empty();
                rep.rebuild = Some(out);
            }
        }
    }
}

/// The default [`Scheme::on_metadata_dirty`]: the scheme's policy for the
/// line's kind (write-through lines persisted now).
pub fn default_on_metadata_dirty(tree: &IntegrityTree, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
    if st.policy_for(addr) == WritePolicy::WriteThrough {
        tree.persist_line(st, addr)?;
    }
    Ok(())
}

/// The check every scheme shares: the configuration's persist point is
/// the scheme's front end, and an insecure scheme runs without security.
pub fn check_front(scheme: &(impl Scheme + ?Sized), cfg: &SimConfig) -> Result<(), String> {
    let w = scheme.work();
    let point = match &cfg.persistence.point {
        crate::config::PersistPoint::MemoryController => Front::MemoryController,
        crate::config::PersistPoint::PersistBuffer { .. } => Front::PersistBuffer,
        crate::config::PersistPoint::CacheHierarchy { .. } => Front::CacheHierarchy,
    };
    if point != w.front {
        return Err(format!(
            "scheme `{}` persists stores at the {}; set persistence.point.type = \"{}\"",
            scheme.name(),
            w.front.point_type(),
            w.front.point_type()
        ));
    }
    // A secure scheme may run with the security engine off (the same
    // mechanism, insecure, for comparison), but an insecure scheme has
    // no engine to turn on. The battery domain is left to the
    // configuration: taking a battery away is how the controls fail.
    if !w.secure && cfg.security.enabled {
        return Err(format!("scheme `{}` has no security engine; set security.enabled = false", scheme.name()));
    }
    Ok(())
}

/// The power-fail work every scheme shares: the battery drains the front
/// ends as `front_drain` says, and the metadata caches if
/// `battery_flushes_metadata`.
pub fn drain_front_and_metadata(scheme: &(impl Scheme + ?Sized), sys: &mut System, work: &mut DrainWork) {
    let w = scheme.work();
    let battery = sys.cfg.persistence.battery.clone();
    // Every core's front end drains, in core order (SecPB IV-C c keeps
    // a block in one of them only, so the order moves no value).
    for f in &mut sys.fronts {
        match f.crash_drain(&mut sys.mc, &battery, w.front_drain) {
            Ok(n) => work.front_lines += n,
            Err(e) => System::drain_failed(work, e),
        }
    }
    if w.battery_flushes_metadata {
        match sys.mc.flush_metadata() {
            Ok(n) => work.metadata_lines = n,
            Err(e) => System::drain_failed(work, e),
        }
    }
}

/// The registry: every scheme, chosen by the `[scheme]` table's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SchemeKind {
    /// The six SecPB schemes (SecPB IV), one table row each.
    Secpb(SecPb),
    /// BBB's persist buffer, no security (SecPB's insecure baseline).
    Bbb(Bbb),
    /// Control: BBB beside a secure MC, battery outside the engine.
    BbbGap(BbbGap),
    /// SP: PLP's strict persistency at the MC (SecPB's baseline).
    Plp(Plp),
    /// Every metadata line written through (STAR's strict persistence).
    WriteThrough(WriteThrough),
    /// Counters, MACs and the tree's lowest levels written through, the
    /// rest rebuilt at recovery (Secon's WT).
    LevelWriteThrough(LevelWriteThrough),
    /// Battery-backed write-back metadata cache, its tree updates and
    /// write-backs priced (STAR's WB, `secure-wb-battery`).
    BatteryWriteBack(BatteryWriteBack),
    /// Secon's ideal WB: the same, with no metadata work priced.
    IdealWriteBack(IdealWriteBack),
    /// Secon: pre-persisted write-through metadata, background root update.
    Secon(Secon),
    /// Control: a write-back metadata cache under ADR only.
    WriteBackNoBattery(WriteBackNoBattery),
    /// eADR and secure eADR (SecPB II-C).
    Eadr(Eadr),
    /// STAR: counter-MAC synergization, bitmap lines, cache-tree (STAR III).
    Star(Star),
    /// Anubis's shadow table for the SGX integrity tree (STAR's baseline).
    AnubisSit(AnubisSit),
    /// Triad-NVM: persistent regions, two key sets, level-N persistence.
    Triad(Triad),
    /// Triad-NVM's baseline that persists no metadata (recovery scans all).
    TriadNoPersist(TriadNoPersist),
    /// Osiris: lazy counters with a stop-loss, recovered by MAC trials.
    Osiris(Osiris),
    /// The multiset-hash scheme: Read/Write Hash registers over a
    /// write-back metadata cache (Kubo et al.).
    Mset(Mset),
    /// ASSURE's multi-root tree with one hot tree (the multiset-hash
    /// paper's configuration of it): write-through metadata, the hot
    /// tree's root in a second register.
    Assure(Assure),
    /// CacheTree (Chen et al.; the multiset-hash paper's baseline): an
    /// HNode cache of last-level tree nodes, written back, under a small
    /// tree whose root is an on-chip register.
    #[serde(rename = "cachetree")]
    CacheTree(CacheTree),
    /// Test-only: a write-back tree with nothing to recover it.
    ToyLazyTree(ToyLazyTree),
}

impl Default for SchemeKind {
    fn default() -> Self {
        SchemeKind::WriteThrough(WriteThrough {})
    }
}

impl SchemeKind {
    /// The plugin behind the registry entry.
    pub fn plugin(&self) -> &dyn Scheme {
        match self {
            SchemeKind::Secpb(s) => s,
            SchemeKind::Bbb(s) => s,
            SchemeKind::BbbGap(s) => s,
            SchemeKind::Plp(s) => s,
            SchemeKind::WriteThrough(s) => s,
            SchemeKind::LevelWriteThrough(s) => s,
            SchemeKind::BatteryWriteBack(s) => s,
            SchemeKind::IdealWriteBack(s) => s,
            SchemeKind::Secon(s) => s,
            SchemeKind::WriteBackNoBattery(s) => s,
            SchemeKind::Eadr(s) => s,
            SchemeKind::Star(s) => s,
            SchemeKind::AnubisSit(s) => s,
            SchemeKind::Triad(s) => s,
            SchemeKind::TriadNoPersist(s) => s,
            SchemeKind::Osiris(s) => s,
            SchemeKind::Mset(s) => s,
            SchemeKind::Assure(s) => s,
            SchemeKind::CacheTree(s) => s,
            SchemeKind::ToyLazyTree(s) => s,
        }
    }
    pub fn name(&self) -> &'static str {
        self.plugin().name()
    }
    pub fn work(&self) -> SchemeWork {
        self.plugin().work()
    }
    pub fn check(&self, cfg: &SimConfig) -> Result<(), String> {
        self.plugin().check(cfg)
    }

    pub const fn secpb(variant: SecPbVariant) -> SchemeKind {
        SchemeKind::Secpb(SecPb { variant })
    }
    pub const BBB: SchemeKind = SchemeKind::Bbb(Bbb {});
    pub const EADR: SchemeKind = SchemeKind::Eadr(Eadr { secure: false });
    pub const SECURE_EADR: SchemeKind = SchemeKind::Eadr(Eadr { secure: true });

    /// The rows of SecPB Table V, in its order: the six SecPB schemes,
    /// secure eADR, BBB and eADR.
    pub fn table_v() -> Vec<SchemeKind> {
        let mut v: Vec<SchemeKind> = SecPbVariant::ALL.iter().map(|&variant| SchemeKind::Secpb(SecPb { variant })).collect();
        v.push(SchemeKind::Eadr(Eadr { secure: true }));
        v.push(SchemeKind::Bbb(Bbb {}));
        v.push(SchemeKind::Eadr(Eadr { secure: false }));
        v
    }

    /// A scheme of [`Self::table_v`] by its name (`cm`, `s-eadr`, ...).
    pub fn from_name(name: &str) -> Result<SchemeKind, String> {
        let n = name.trim().to_ascii_lowercase();
        let all = Self::table_v();
        all.iter()
            .copied()
            .find(|s| s.name() == n || (n == "s_eadr" && s.name() == "s-eadr"))
            .ok_or_else(|| format!("unknown scheme `{n}`; known: {}", all.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")))
    }
}

/// Serde by name (`"cm"`, `"s-eadr"`), for tables that list schemes
/// rather than configure one: `#[serde(with = "crate::scheme::by_name")]`.
pub mod by_name {
    use super::SchemeKind;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(k: &SchemeKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.name())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SchemeKind, D::Error> {
        let name = String::deserialize(d)?;
        SchemeKind::from_name(&name).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_what_they_are_given() {
        let s = Steps::of(&[TupleStep::Counter, TupleStep::Bmt]);
        assert!(s.contains(TupleStep::Counter) && s.contains(TupleStep::Bmt));
        assert!(!s.contains(TupleStep::Mac));
        assert_eq!(s.complement().to_vec(), vec![TupleStep::Otp, TupleStep::Ciphertext, TupleStep::Mac]);
        assert_eq!(Steps::ALL.complement(), Steps::NONE);
    }

    #[test]
    fn table_v_names_round_trip() {
        for s in SchemeKind::table_v() {
            assert_eq!(SchemeKind::from_name(s.name()).unwrap(), s);
        }
        assert!(SchemeKind::from_name("nope").unwrap_err().contains("cobcm"));
    }

    /// The default `on_metadata_dirty` hook follows the scheme's policy on
    /// both trees: write-through queues the counter block, the MAC line and
    /// every node above the counter block; write-back leaves them dirty.
    #[test]
    fn the_default_dirty_hook_follows_the_policy_on_every_tree() {
        use crate::config::load_str;
        use crate::engine::controller::MemoryController;
        for tree in ["bmt", "sit"] {
            for (scheme, through) in [("write-through", true), ("battery-write-back", false)] {
                let toml = format!("[memory]\ncapacity_bytes = 16777216\n[tree]\ntype = '{tree}'\n[scheme]\ntype = '{scheme}'\n");
                let mut mc = MemoryController::new(&load_str(&toml, "test", &[]).unwrap(), 1);
                mc.write(5, &[1; 64]).unwrap();
                let w = mc.st.nvm.enqueued;
                let above = mc.layout().levels() as u64 - 1;
                let expect = if through { (1, 1, 1, above, true) } else { (1, 0, 0, 0, false) };
                assert_eq!((w.data, w.counter, w.mac, w.tree, mc.st.caches.dirty_lines().is_empty()), expect, "{tree} {scheme}");
            }
        }
    }

    #[test]
    fn insecure_schemes_have_no_late_work() {
        for s in SchemeKind::table_v() {
            let w = s.work();
            assert_eq!(w.late().is_empty(), !w.secure || w.early == Steps::ALL, "{s}");
        }
    }
}
