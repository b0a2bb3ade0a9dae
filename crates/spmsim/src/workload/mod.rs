//! Workloads: a name resolved to event streams. Each generator is seeded
//! and deterministic and yields events without end; callers bound a run by
//! operations or by instructions, so no run holds its whole workload in
//! memory.
//!
//! ```text
//!  "btree:threads=4" | "suite:gcc" | "trace:x.gz" | "mix1" | FILE.toml
//!    --WorkloadKind::parse (parse.rs; trace_spec.rs; threads/)--> WorkloadKind
//!    --open(machine, seed, warm-up, count) (open.rs)--> OpenedWorkload
//!         one EventStream per thread (stream.rs): Source -> placed -> bounded
//!         + the ooo core's instruction streams
//!  generate / generate_placed / write_trace: the same events, unbounded by
//!  a machine (the functional model, the oracles, `trace generate`)
//! ```
//!
//! The events themselves ([`Event`], [`Op`]) are defined in
//! [`crate::trace::event`], which says what one stands for and how instructions
//! are counted; they are re-exported here.
//!
//! Workloads come from built-in generators (infinite, seeded) or from trace
//! files ([`crate::trace`]), which end and can fail; [`EventStream`] hides
//! the difference and keeps the first error for the caller.
//!
//! Built-in generators: `random-writes`, `seq-writes`, `array-swap` (the
//! small legacy swap), `synthetic:` profiles, and the persistent benchmarks
//! of Secon, STAR and Triad-NVM over the undo-logged heap of [`pheap`]:
//! `array`, `queue`, `btree`, `hash`, `rbtree`, `ycsb`, `tpcc`, `daxbench`.
//! Each takes `kind:key=value,...` on the command line (every key optional;
//! a bad key is named with the valid ones), or a TOML file `NAME.toml`
//! holding `kind = "btree"` and the same keys. `name()` spells every key
//! out and parses back to the same workload.

pub mod array;
mod array_swap;
pub mod btree;
pub mod daxbench;
pub mod hash;
mod open;
pub mod params;
mod parse;
pub mod pheap;
mod placement;
pub mod queue;
mod random_writes;
pub mod rbtree;
mod seq_writes;
mod stream;
mod synthetic;
pub mod threads;
pub mod tpcc;
mod trace_spec;
mod warmup;
pub mod ycsb;

pub use array::ArrayParams;
pub use btree::BtreeParams;
pub use daxbench::DaxParams;
pub use hash::HashParams;
pub use open::{NoStream, OpenedWorkload, StreamSource};
pub use params::{OpsPerTx, Ratio};
pub use pheap::{log_region_of_thread, log_regions_of, TxStyle, LOG_BYTES};
pub use placement::Placement;
pub use queue::QueueParams;
pub use rbtree::RbtreeParams;
pub use stream::EventStream;
pub use synthetic::SyntheticParams;
pub use threads::{DataMode, ThreadForm, ThreadSpec};
pub use tpcc::TpccParams;
pub use trace_spec::{Persistent, TraceSpec};
pub use warmup::Warmup;
pub use ycsb::{Distribution, YcsbParams};

pub use crate::trace::event::{Event, Op};

use serde::Serialize;
// The sources of events, which a thread's partition wraps (threads/).
use stream::Source;

/// A generator: yields the events of one operation at a time.
pub trait Generator: Send {
    /// Push the events of the next operation onto `out`.
    fn next_op(&mut self, out: &mut Vec<Event>);
}

/// The registry of built-in workloads.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    RandomWrites,
    SeqWrites,
    ArraySwap,
    /// A synthetic stream with a set store rate and stores per block, for
    /// controlled experiments (documented as synthetic wherever reported).
    Synthetic(SyntheticParams),
    /// Persistent benchmarks (Secon 4.1, STAR V-A, Triad-NVM IV).
    Array(ArrayParams),
    Queue(QueueParams),
    Btree(BtreeParams),
    Hash(HashParams),
    Rbtree(RbtreeParams),
    Ycsb(YcsbParams),
    Tpcc(TpccParams),
    /// Triad-NVM's synthetic DAXBENCH-S-RW.
    Daxbench(DaxParams),
    /// A trace file in any supported format (`trace:PATH`, or
    /// `trace:PATH#format=NAME` to name the format; `#persistent=` chooses
    /// which memory is persistent, [`Persistent`]).
    Trace(TraceSpec),
    /// One thread per core: copies of a persistent generator on
    /// partitioned or shared data (`btree:threads=4,data=shared`), a
    /// multi-programmed mix (`mix:a=queue,b=hash`, `mix1`), or one trace
    /// per core (`trace:a.trace,b.trace`); see [`threads`].
    Threads(ThreadSpec),
}

impl WorkloadKind {
    pub const NAMED: [&'static str; 18] = [
        "random-writes",
        "seq-writes",
        "array-swap",
        "synthetic[:ppti=P,nwpe=N,footprint_mib=F,loads_pti=L,miss_pti=M,stride=S,reuse_distance=R,reuse_fraction=Q,write_fraction=W]",
        "array[:value_bytes=256,size_mib=1024,ops_per_tx=1-16,gap=6,style=dynamic|static|strict,populate=false]",
        "queue[:value_bytes=256,size_mib=1024,ops_per_tx=1-16,gap=6,style=..,populate=..]",
        "btree[:value_bytes=256,size_mib=1024,ops_per_tx=1-16,order=8,gap=5,style=..,populate=..]",
        "hash[:value_bytes=256,size_mib=1024,ops_per_tx=1-16,gap=5,style=..,populate=..]",
        "rbtree[:value_bytes=256,size_mib=1024,ops_per_tx=1-16,gap=5,style=..,populate=..]",
        "ycsb[:fields=10,field_bytes=100,size_mib=1024,distribution=zipfian|uniform,theta=0.99,ops_per_tx=1,gap=8,style=..,populate=..]",
        "tpcc[:warehouses=16,orders_per_district=8192,ops_per_tx=1,gap=10,style=..,populate=..]",
        "daxbench[:stride=64,rw=1:1,size_mib=1024,access_bytes=8,gap=4,persist=true] or daxbench-STRIDE-RW",
        "FILE.toml (kind = \"btree\" plus the keys)",
        "trace:PATH[#format=F][#persistent=trace|all|heap]",
        "suite:NAME[#persistent=trace|all|heap]",
        "KIND:threads=N,data=partitioned|shared,... (N = 1-64, every persistent generator KIND above)",
        "mix:a=WORKLOAD,b=WORKLOAD,... or mix:WORKLOAD,WORKLOAD,... (one program per core), mix1-mix4, daxbench1-daxbench4 (Triad-NVM Table II)",
        "trace:PATH,PATH,... (one trace per core)",
    ];

    pub fn name(&self) -> String {
        use params::keys_of;
        match self {
            WorkloadKind::RandomWrites => "random-writes".into(),
            WorkloadKind::SeqWrites => "seq-writes".into(),
            WorkloadKind::ArraySwap => "array-swap".into(),
            WorkloadKind::Synthetic(p) => p.name(),
            WorkloadKind::Array(p) => format!("array:{}", keys_of(p)),
            WorkloadKind::Queue(p) => format!("queue:{}", keys_of(p)),
            WorkloadKind::Btree(p) => format!("btree:{}", keys_of(p)),
            WorkloadKind::Hash(p) => format!("hash:{}", keys_of(p)),
            WorkloadKind::Rbtree(p) => format!("rbtree:{}", keys_of(p)),
            WorkloadKind::Ycsb(p) => format!("ycsb:{}", keys_of(p)),
            WorkloadKind::Tpcc(p) => format!("tpcc:{}", keys_of(p)),
            WorkloadKind::Daxbench(p) => format!("daxbench:{}", keys_of(p)),
            WorkloadKind::Trace(t) => t.name(),
            WorkloadKind::Threads(t) => t.name(),
        }
    }

    /// What a report must say about this workload's events beyond its name.
    pub fn notes(&self) -> Vec<String> {
        let implicit = |populate: bool| {
            (!populate).then(|| {
                "initial population implicit: the structure starts full as a deterministic function of the seed, but its initial contents are not stored to simulated memory (which reads zero there) until the workload writes them; populate=true emits them".to_string()
            })
        };
        match self {
            WorkloadKind::Threads(t) => t.notes(),
            WorkloadKind::Synthetic(p) => vec![format!("synthetic stream, not a program: {}", p.name())],
            WorkloadKind::Daxbench(_) => {
                vec!["synthetic stream (Triad-NVM DAXBENCH-S-RW): strided loads and persisted stores, not a data structure".into()]
            }
            WorkloadKind::Array(p) => implicit(p.populate).into_iter().collect(),
            WorkloadKind::Queue(p) => implicit(p.populate).into_iter().collect(),
            WorkloadKind::Btree(p) => implicit(p.populate).into_iter().collect(),
            WorkloadKind::Hash(p) => implicit(p.populate).into_iter().collect(),
            WorkloadKind::Rbtree(p) => implicit(p.populate).into_iter().collect(),
            WorkloadKind::Ycsb(p) => implicit(p.populate).into_iter().collect(),
            WorkloadKind::Tpcc(p) => implicit(p.populate).into_iter().collect(),
            _ => Vec::new(),
        }
    }

    /// Threads the workload runs, one per core: 1 for every
    /// single-threaded generator and trace.
    pub fn threads(&self) -> usize {
        match self {
            WorkloadKind::Threads(t) => t.threads,
            _ => 1,
        }
    }

    /// Whether the threads' transactions take one lock in turn (shared
    /// data, `threads=N,data=shared`): thread `t`'s `k`-th transaction
    /// holds ticket `k * threads + t`, so a transaction begins only after
    /// the one before it in that order committed.
    pub fn shared_lock(&self) -> bool {
        matches!(self, WorkloadKind::Threads(t) if t.mode == DataMode::Shared)
    }
}

#[cfg(test)]
mod tests;
