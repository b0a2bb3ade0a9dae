//! A scheme's description as data: the tuple steps a persist buffer does
//! early, the write policy of each kind of metadata line, what the battery
//! drains. Every mechanism (front ends, controller, timing, battery) reads
//! it; none asks which scheme it is.
//!
//! ```text
//!  SchemeWork { front, secure, early: Steps, metadata: MetadataPolicy,
//!               front_drain, battery_flushes_metadata, recovery_rebuilds_tree,
//!               ideal_metadata, deferred_root_updates }
//! ```

use serde::{Deserialize, Serialize};

/// How a kind of metadata line reaches NVM once it is dirty.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WritePolicy {
    /// Every metadata update is written to NVM with its data (SP, WT).
    WriteThrough,
    /// Dirty metadata is written when evicted or flushed (WB).
    WriteBack,
}

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

/// When a store persisted at the memory controller is complete: what must
/// be done before strict persistency lets the core go on, and before an
/// epoch's barrier passes. Each scheme states it with its
/// paper's sentence; the engine's units decide how long it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Completion {
    /// The whole tree update is done (the root register holds it) and every
    /// line the write puts in the WPQ holds a slot.
    Root,
    /// The whole update is logged in persistent registers (Triad-NVM
    /// Fig. 7: "before being persisted ... it logs all its corresponding
    /// updates (counter, data, MT nodes and root) to persistent registers
    /// ... and then set a persistent bit"): complete once logged; the
    /// registers hold it until its lines hold WPQ slots, and the next
    /// write waits for them.
    Staged,
    /// The tuple (data, its MAC, the lines written with it) holds WPQ
    /// slots; the tree update runs in the background, through the
    /// engine's background queue.
    Tuple,
}

/// On-chip registers a scheme brings that each accumulate the hash of
/// every element given them (the multiset-hash scheme's Read Hash and
/// Write Hash, Kubo et al. 4.2): how each register's unit takes its
/// elements. The hash's latency is `security.multiset_hash_latency_cycles`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HashRegisters {
    /// Each register has a pipelined hash unit taking a new element every
    /// `interval` cycles, and an accumulator that adds each hash into the
    /// register, one at a time, in `accumulate` cycles.
    Pipelined { interval: u32, accumulate: u32 },
    /// Each register's unit takes one increment at a time, for the whole
    /// hash latency.
    OneAtATime,
}

/// A scheme's description: the rules its mechanisms read, as data.
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
    /// When a persist at the memory controller is complete.
    pub completion: Completion,
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
            completion: Completion::Root,
        }
    }

    /// The same, complete as `c` says.
    pub const fn completing(self, c: Completion) -> Self {
        SchemeWork { completion: c, ..self }
    }

    /// A battery-backed persist buffer (BBB, SecPB) whose entries carry
    /// the tuple steps `early`, the rest done at the drain.
    pub const fn at_persist_buffer(secure: bool, early: Steps, metadata: MetadataPolicy, recovery_rebuilds_tree: bool) -> Self {
        SchemeWork {
            front: Front::PersistBuffer,
            secure,
            early,
            allocate_extra_accesses: 0,
            metadata,
            front_drain: if secure { FrontDrain::Secured } else { FrontDrain::Unsecured },
            battery_flushes_metadata: false,
            recovery_rebuilds_tree,
            ideal_metadata: false,
            deferred_root_updates: 0,
            completion: Completion::Root,
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
