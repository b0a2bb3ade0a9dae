//! The hooks the engine calls at the moments a scheme may change what
//! happens, and the words a scheme answers them with.
//!
//! ```text
//!  scheme::build(cfg, seed) ---------------> Box<dyn Scheme>  (a runtime)
//!        |                                         |
//!        |   owns its volatile state in its own fields (cells: the engine
//!        |   calls it from inside its own operations, so `&self`)
//!        |   keeps its non-volatile state in chip.scheme (SchemeNv)
//!        v
//!  engine: Rules { tree, scheme, shape } passed down every operation
//!    (shape: what the scheme answers once, at assembly, as plain data:
//!     scheme::shape(cfg) -> SchemeShape, engine/shape.rs; not asked here)
//!    assembly:    adopt (a chip state loaded from a file)
//!    data path:   on_counter_update, verify_on_fetch, on_metadata_dirty,
//!                 on_metadata_written, on_metadata_evict, settle,
//!                 data_mac_spare, subtree_root, on_cache_*
//!    power:       on_power_fail (after the front ends and metadata drained),
//!                 on_power_lost, recover, on_shutdown
//!    checks:      own_state, recovery attacks, nv_change (the oracle)
//!    costs:       onchip_nv_registers, battery_duties, recovery_cost, stats
//! ```
//! Every method has a default that reads the scheme's description
//! ([`SchemeWork`]) or does nothing, so a scheme overrides only what its
//! paper changes. The engine names no scheme: what differs between schemes
//! reaches it through here and through the scheme's shape.

use super::chip::{ChipState, SchemeNv};
use super::nvm::{ByKind, NvmImage};
use super::rules::Rules;
#[cfg(doc)]
use super::shape::SchemeShape;
use super::store::{CheckFailure, MetaStore};
use super::tree::RebuildOutcome;
use crate::config::SimConfig;
use crate::engine::crypto::CryptoWork;
use crate::scheme::params::WritePolicy;
use serde::Serialize;

/// A scheme's runtime: what the engine asks of it, with defaults.
pub trait Scheme: SchemeClone + Send + std::fmt::Debug {
    // --- Assembly. ---

    /// A chip state loaded from a file holds the scheme's non-volatile
    /// state as read: take it as the runtime's own type.
    fn adopt(&self, _chip: &mut ChipState) -> Result<(), String> {
        Ok(())
    }

    // --- The data path. ---

    /// The data path changed counter block `index` to `bytes` (a write, an
    /// early counter, a page re-encryption). Default: the integrity tree
    /// keeps itself consistent (BMT eagerly up to the root register, SIT
    /// lazily).
    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        r.counter_updated(st, index, bytes)
    }

    /// A counter block or tree node came from NVM: check it before use.
    /// Default: against its parent, fetched and checked first, or the root
    /// register (SecPB II-B).
    fn verify_on_fetch(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        r.verify(st, level, index, bytes)
    }

    /// A metadata line changed in its cache and is dirty. Default: the
    /// policy for its kind; write-through lines are persisted now,
    /// write-back ones when evicted.
    fn on_metadata_dirty(&self, r: &Rules, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
        default_on_metadata_dirty(r, st, addr)
    }

    /// A metadata line was just written to NVM and is clean (a write-back,
    /// a flush, a write-through).
    fn on_metadata_written(&self, _st: &mut MetaStore, _addr: u64) {}

    /// A dirty metadata line left its cache. Default: the tree writes it
    /// back (a SIT node is MACed under its parent's advanced counter).
    fn on_metadata_evict(&self, r: &Rules, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        r.write_back(st, addr, bytes)
    }

    /// Background work the scheme defers past a write must be done now:
    /// for the latest write of counter block `counter_index`, or for every
    /// deferred write when `None`. The persistency model calls it where it
    /// waits for the memory controller's ACK. Default: nothing is deferred.
    fn settle(&self, _r: &Rules, _st: &mut MetaStore, _counter_index: Option<u64>) -> Result<(), CheckFailure> {
        Ok(())
    }

    /// The spare bits of the data MAC of a write of `block` under
    /// `counter`, authenticated with it. Default: none.
    fn data_mac_spare(&self, _st: &MetaStore, _block: u64, _counter: (u64, u64)) -> u16 {
        0
    }

    /// A store to the undo log, whose region is `[start, end)` in bytes
    /// as software declares it (Secon 3.3's `set_log_region`). Default:
    /// the memory controller need not know.
    fn on_log_store(&self, _st: &mut MetaStore, _region: (u64, u64)) {}

    /// Whether tree node (level, index) is a root of its own for the
    /// scheme: its hash kept in a register of the scheme's, or a cached
    /// node an update stops at. Asked by the tree at every step of an
    /// update and of a verification. Default: no node is.
    fn subtree_root(&self, _st: &MetaStore, _level: u32, _index: u64) -> SubtreeRoot {
        SubtreeRoot::No
    }

    /// The scheme's register for node (level, index) takes `hash` (only
    /// asked where [`Self::subtree_root`] said [`SubtreeRoot::Register`]).
    fn set_subtree_register(&self, _st: &mut MetaStore, _level: u32, _index: u64, _hash: u64) {}

    /// The nodes whose hashes the scheme keeps in registers, as roots
    /// (image verification walks down from them too).
    fn subtree_registers(&self, _st: &MetaStore) -> Vec<(u32, u64)> {
        Vec::new()
    }

    /// A line entered a metadata cache or was put again (only with
    /// [`SchemeShape::calls_cache_hooks`]).
    fn on_cache_install(&self, _st: &mut MetaStore, _ev: &CacheInstall) {}

    /// A cached line changed in place from `old` to `new`.
    fn on_cache_update(&self, _st: &mut MetaStore, _addr: u64, _old: &[u8; 64], _new: &[u8; 64]) {}

    /// A line was taken out of its cache (not evicted: a SIT write-back
    /// takes its line out first).
    fn on_cache_remove(&self, _st: &mut MetaStore, _addr: u64, _bytes: &[u8; 64]) {}

    // --- Power. ---

    /// Power fails: the front ends have drained and, if the scheme's
    /// battery flushes them, the metadata caches too. A scheme with
    /// battery-backed state of its own (Secon's queue, STAR's bitmap lines,
    /// a register taken from the cache) deals with it here.
    fn on_power_fail(&self, _r: &Rules, _st: &mut MetaStore, _work: &mut DrainWork) {}

    /// Power is gone: whatever of the scheme's is volatile is lost.
    fn on_power_lost(&self) {}

    /// Recovery after a power failure. Default: rebuild the tree from the
    /// persisted counters when the description says so, comparing it with
    /// the root registers. Every NVM access and hash is counted by the
    /// code that does it, so the report prices recovery with no formula.
    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        if r.secure && r.work.recovery_rebuilds_tree {
            if let Some(out) = r.rebuild(st) {
                rep.tree_rebuilt = out.mismatched_roots.is_empty();
                rep.rebuild = Some(out);
            }
        }
    }

    /// No recovery follows from here (the crash oracle's reads after one):
    /// state the scheme keeps only for a recovery need not be kept.
    fn no_recovery_follows(&self) {}

    /// An orderly shutdown wrote every dirty line back and the metadata
    /// caches are about to be emptied: state of the scheme's own that
    /// describes their contents must then say they are empty.
    fn on_shutdown(&self, _st: &mut MetaStore) {}

    // --- What the checks ask. ---

    /// State this scheme adds to the machine beyond what every scheme has,
    /// for the attack harness (the front end's is the harness's own).
    fn own_state(&self) -> Vec<OwnState> {
        Vec::new()
    }

    /// The names of the attacks [`Self::recovery_attacks`] makes.
    fn recovery_attack_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether a crash now would leave recovery something of the scheme's
    /// own to read; `volatile_data`: the caches hold volatile stores.
    fn recovery_state_pending(&self, _st: &MetaStore, _volatile_data: bool) -> bool {
        false
    }

    /// Attacks on the image of a crashed machine (`st`, after its power
    /// failure) aimed at the scheme's recovery state; `earlier` is the
    /// same machine's image at an earlier point, for replays.
    fn recovery_attacks(&self, _r: &Rules, _st: &MetaStore, _earlier: &NvmImage) -> Vec<RecoveryAttack> {
        Vec::new()
    }

    /// What a change of the scheme's non-volatile state from `before` to
    /// `after` means for reads (the crash oracle's incremental reads).
    /// Default: anything may, so every block is read again.
    fn nv_change(&self, _st: &MetaStore, before: &SchemeNv, after: &SchemeNv) -> NvChange {
        if before == after {
            NvChange::Unseen
        } else {
            NvChange::Everything
        }
    }

    // --- Costs. ---

    /// On-chip non-volatile registers beyond the tree's root registers.
    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        Vec::new()
    }

    /// What the battery does at a power failure for state of the scheme's
    /// own, in the worst case.
    fn battery_duties(&self, _cfg: &SimConfig) -> Vec<BatteryDuty> {
        Vec::new()
    }

    /// How the scheme's recovery scales with its metadata cache.
    fn recovery_cost(&self) -> RecoveryCost {
        RecoveryCost::default()
    }

    /// The scheme's own counters (`roi.scheme` of a timed run), all
    /// counts, so a warm-up is taken off leaf by leaf. Default: none.
    fn stats(&self, _st: &MetaStore) -> Option<serde_json::Value> {
        None
    }
}

/// The default [`Scheme::on_metadata_dirty`]: the write policy of the
/// line's kind (write-through lines persisted now).
pub fn default_on_metadata_dirty(r: &Rules, st: &mut MetaStore, addr: u64) -> Result<(), CheckFailure> {
    if st.policy_for(addr) == WritePolicy::WriteThrough {
        r.persist_line(st, addr)?;
    }
    Ok(())
}

/// A scheme runtime's deep copy (a machine is cloned at crash points with
/// everything it holds).
pub trait SchemeClone {
    fn clone_box(&self) -> Box<dyn Scheme>;
}

impl<T: Scheme + Clone + 'static> SchemeClone for T {
    fn clone_box(&self) -> Box<dyn Scheme> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn Scheme> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// What a tree node is to the scheme ([`Scheme::subtree_root`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubtreeRoot {
    /// An ordinary node: checked against and hashed into its parent.
    No,
    /// Its hash is in a register of the scheme's (ASSURE's hot tree): it is
    /// checked against that register, and an update stops there.
    Register(u64),
    /// A cached node an update from below stops at, having changed it
    /// (CacheTree's HNodes).
    StopsUpdate,
}

/// A line entering a metadata cache (or put again while cached).
#[derive(Debug, Clone, Copy)]
pub struct CacheInstall {
    pub addr: u64,
    pub bytes: [u8; 64],
    /// The bytes it replaced, when it was cached already.
    pub replaced: Option<[u8; 64]>,
    /// The line it evicted, clean or dirty: (address, bytes, dirty).
    pub evicted: Option<(u64, [u8; 64], bool)>,
    /// The way it filled, when it was not cached before.
    pub filled_way: Option<usize>,
    /// Whether that is a way of the scheme's level cache.
    pub in_level_cache: bool,
}

/// What a change of a scheme's non-volatile state means for reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvChange {
    /// Reads do not see it (recovery state only its recovery reads).
    Unseen,
    /// These metadata lines' edges to their parents are checked again.
    Edges(Vec<u64>),
    /// Anything may read differently: read every block again.
    Everything,
}

/// How a scheme's recovery scales with its metadata cache (the
/// recovery-time model's extrapolation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecoveryCost {
    /// It reads its whole recovery area whatever is dirty (Anubis's shadow
    /// table: one line per cache way).
    pub reads_whole_recovery_area: bool,
    /// It restores every line of the cache, not the dirty ones only
    /// (Anubis once the cache has filled).
    pub restores_every_line: bool,
}

/// State a scheme adds to the machine, as the attack harness sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnState {
    /// On the chip or in its battery domain: out of the attacker's reach
    /// by the threat model, so the harness reports the attack on it as
    /// ruled out, saying why.
    OnChip { name: &'static str, why: &'static str },
}

/// An attack on the NVM image of a crashed machine, aimed at what the
/// scheme's recovery reads: the harness powers the tampered image on, so
/// recovery runs, and checks it.
pub struct RecoveryAttack {
    pub name: &'static str,
    /// What the attacker changed.
    pub target: String,
    pub image: NvmImage,
    /// Blocks the attacker writes (Some) or removes (None) once recovery
    /// is over and before anything is read: what a recovery leaves for
    /// later (Triad-NVM's zeroed level-1 nodes) is attacked there.
    pub after_recovery: Vec<(u64, Option<[u8; 64]>)>,
    /// A data block whose read decides the attack when no check fails:
    /// read back as valid, the attack succeeded; refused, it did not.
    pub focus: Option<u64>,
}

/// One piece of on-chip non-volatile state: a register the chip keeps
/// across a power failure with no battery.
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

/// The work a battery pays for after power fails (SecPB V, Table III
/// prices each kind).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DrainWork {
    /// Data lines moved out of the persist buffer or caches.
    pub front_lines: u64,
    /// Dirty metadata lines written back.
    pub metadata_lines: u64,
    /// WPQ entries drained (ADR).
    pub wpq_entries: u64,
    pub crypto: CryptoWork,
    pub nvm_reads: ByKind,
    pub nvm_writes: ByKind,
    /// An integrity failure met while draining (it would also be met later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

impl DrainWork {
    /// Keep the first integrity failure a drain met.
    pub fn failed(&mut self, e: CheckFailure) {
        if self.failure.is_none() {
            self.failure = Some(e.to_string());
        }
    }
}

/// What a recovery did and found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    pub tree_rebuilt: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<RebuildOutcome>,
    pub root_registers_lost: bool,
    pub crypto: CryptoWork,
    pub nvm_reads: ByKind,
    pub nvm_writes: ByKind,
    /// The scheme's own counts, in the order it gives them; a zero count is
    /// left out (Secon's counters rolled back and its counter-track
    /// mismatches, Osiris's counters recovered by trials, STAR's and
    /// Anubis's stale lines restored).
    #[serde(flatten, serialize_with = "counts_as_map")]
    pub counts: Vec<(&'static str, u64)>,
    /// The scheme's own recovery check failed, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheme_failure: Option<String>,
    /// The scheme's recovery found its input inconsistent without a
    /// failure message of its own (Secon's counter-track mismatches).
    #[serde(skip)]
    pub scheme_rejected: bool,
}

fn counts_as_map<S: serde::Serializer>(counts: &[(&'static str, u64)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(None)?;
    for (k, v) in counts.iter().filter(|(_, v)| *v != 0) {
        m.serialize_entry(k, v)?;
    }
    m.end()
}

impl RecoveryReport {
    pub fn ok(&self) -> bool {
        !self.root_registers_lost
            && !self.scheme_rejected
            && self.scheme_failure.is_none()
            && self.rebuild.as_ref().is_none_or(|r| r.mismatched_roots.is_empty())
    }

    /// The scheme's count `name` (0 when it gave none).
    pub fn count(&self, name: &str) -> u64 {
        self.counts.iter().filter(|(k, _)| *k == name).map(|(_, v)| v).sum()
    }

    /// Add `n` to the scheme's count `name`, keeping the order counts were
    /// first given in.
    pub fn add_count(&mut self, name: &'static str, n: u64) {
        match self.counts.iter_mut().find(|(k, _)| *k == name) {
            Some((_, v)) => *v += n,
            None => self.counts.push((name, n)),
        }
    }
}
