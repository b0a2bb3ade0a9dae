//! Workloads as event streams. Each generator is seeded and deterministic
//! and yields events without end; callers bound a run by operations or by
//! instructions, so no run holds its whole workload in memory.
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
pub mod pheap;
mod placement;
pub mod queue;
mod random_writes;
pub mod rbtree;
mod seq_writes;
mod synthetic;
pub mod threads;
pub mod tpcc;
mod warmup;
pub mod ycsb;

pub use array::ArrayParams;
pub use btree::BtreeParams;
pub use daxbench::DaxParams;
pub use hash::HashParams;
pub use open::OpenedWorkload;
pub use params::{OpsPerTx, Ratio};
pub use pheap::{log_region_of_thread, log_regions_of, TxStyle, LOG_BYTES};
pub use placement::Placement;
pub use queue::QueueParams;
pub use rbtree::RbtreeParams;
pub use synthetic::SyntheticParams;
pub use threads::{DataMode, ThreadForm, ThreadSpec};
pub use tpcc::TpccParams;
pub use warmup::Warmup;
pub use ycsb::{Distribution, YcsbParams};

pub use crate::trace::event::{Event, Op};

use crate::trace::convert::{record_of, Written};
use crate::trace::events::VolatileMemory;
use crate::trace::{AddressSpace, Format, NativeWriter, RecordEvents, TraceHeader};
use serde::Serialize;
use std::path::PathBuf;

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
    /// One thread per core (issue 14): copies of a persistent generator on
    /// partitioned or shared data (`btree:threads=4,data=shared`), a
    /// multi-programmed mix (`mix:a=queue,b=hash`, `mix1`), or one trace
    /// per core (`trace:a.trace,b.trace`); see [`threads`].
    Threads(ThreadSpec),
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceSpec {
    pub path: PathBuf,
    pub format: Option<Format>,
    /// The name to report instead of the path (`suite:gcc`).
    pub label: Option<String>,
    /// Which of the trace's memory is persistent.
    pub persistent: Persistent,
}

/// Which memory of a recorded program is persistent (issue 13): stores
/// elsewhere are volatile and take the ordinary write-back path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Persistent {
    /// What the trace header says (`persistent_ranges`; none listed: all).
    #[default]
    Trace,
    /// Every store, the stack's included (the model before issue 13).
    All,
    /// Everything but the program's stack (heap and globals), from the
    /// stack range the recorder wrote into the trace header.
    Heap,
    /// Nothing: a program of non-persistent memory (Triad-NVM's SPEC
    /// programs), every store volatile.
    None,
}

impl Persistent {
    fn parse(s: &str) -> Result<Self, String> {
        match s {
            "trace" => Ok(Persistent::Trace),
            "all" => Ok(Persistent::All),
            "heap" => Ok(Persistent::Heap),
            "none" => Ok(Persistent::None),
            other => Err(format!("trace workload: unknown persistent=`{other}`; known: trace, all, heap, none")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Persistent::Trace => "trace",
            Persistent::All => "all",
            Persistent::Heap => "heap",
            Persistent::None => "none",
        }
    }
}

impl TraceSpec {
    /// `PATH[#format=NAME][#persistent=trace|all|heap|none]`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (path, options) = split_trace_options(s);
        let mut spec = TraceSpec { path: PathBuf::from(path), format: None, label: None, persistent: Persistent::Trace };
        for (k, v) in options {
            match k {
                "format" => spec.format = Some(Format::parse(v)?),
                "persistent" => spec.persistent = Persistent::parse(v)?,
                other => return Err(format!("trace workload: unknown option `#{other}=`; known: #format=, #persistent=")),
            }
        }
        if path.is_empty() {
            return Err("trace workload: no path given (trace:PATH)".into());
        }
        Ok(spec)
    }
    pub fn name(&self) -> String {
        let mut n = match (&self.label, self.format) {
            (Some(l), _) => l.clone(),
            (None, Some(f)) => format!("trace:{}#format={}", self.path.display(), f.name()),
            (None, None) => format!("trace:{}", self.path.display()),
        };
        if self.persistent != Persistent::Trace {
            n.push_str(&format!("#persistent={}", self.persistent.name()));
        }
        n
    }
    fn open(&self, seed: u64, capacity_bytes: u64) -> Result<RecordEvents, String> {
        let r = crate::trace::open(&self.path, self.format).map_err(|e| e.to_string())?;
        let volatile = match self.persistent {
            Persistent::All => VolatileMemory::None,
            // Outside no range: everywhere.
            Persistent::None => VolatileMemory::Outside(Vec::new()),
            Persistent::Trace if r.header().persistent_ranges.is_empty() => VolatileMemory::None,
            Persistent::Trace => VolatileMemory::Outside(r.header().persistent_ranges.clone()),
            Persistent::Heap => match r.header().stack_range {
                Some(range) => VolatileMemory::Inside(vec![range]),
                None => {
                    return Err(format!(
                        "trace {}: persistent=heap needs the program's stack range, which this trace's header does not give (record it \
                         again with this spmsim: `spmsim suite record` or `spmsim trace record`)",
                        self.path.display()
                    ))
                }
            },
        };
        Ok(RecordEvents::new(&self.path, r, seed, capacity_bytes).with_volatile(volatile))
    }
}

/// Split `PATH#key=value#key=value` at the options (a `#` in a path
/// before the first `key=` stays in the path).
fn split_trace_options(s: &str) -> (&str, Vec<(&str, &str)>) {
    let mut parts: Vec<&str> = s.split('#').collect();
    let mut options = Vec::new();
    while parts.len() > 1 {
        let last = *parts.last().unwrap();
        match last.split_once('=') {
            Some((k, v)) if !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
                options.push((k, v));
                parts.pop();
            }
            _ => break,
        }
    }
    options.reverse();
    let path_len = parts.iter().map(|p| p.len()).sum::<usize>() + parts.len() - 1;
    (&s[..path_len], options)
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

    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "random-writes" => Ok(WorkloadKind::RandomWrites),
            "seq-writes" => Ok(WorkloadKind::SeqWrites),
            "array-swap" => Ok(WorkloadKind::ArraySwap),
            s if s == "synthetic" || s.starts_with("synthetic:") => SyntheticParams::parse(s).map(WorkloadKind::Synthetic),
            s if s.starts_with("suite:") => {
                let (name, options) = split_trace_options(&s["suite:".len()..]);
                let path = crate::suite::trace_path(name)?;
                let mut spec =
                    TraceSpec { path, format: Some(Format::Native), label: Some(format!("suite:{name}")), persistent: Persistent::Trace };
                for (k, v) in options {
                    match k {
                        "persistent" => spec.persistent = Persistent::parse(v)?,
                        other => return Err(format!("suite workload: unknown option `#{other}=`; known: #persistent=")),
                    }
                }
                Ok(WorkloadKind::Trace(spec))
            }
            s if s.starts_with("mix:") => ThreadSpec::parse_mix(&s["mix:".len()..]),
            s if s.starts_with("trace:") => {
                let body = &s["trace:".len()..];
                // A path with a comma that names a file stays one trace.
                if body.contains(',') && !std::path::Path::new(split_trace_options(body).0).is_file() {
                    ThreadSpec::parse_traces(body)
                } else {
                    TraceSpec::parse(body).map(WorkloadKind::Trace)
                }
            }
            // A TOML file describes a generator; any other file is a trace.
            s if s.ends_with(".toml") => Self::from_file(std::path::Path::new(s)),
            s if std::path::Path::new(s).is_file() => TraceSpec::parse(s).map(WorkloadKind::Trace),
            s => {
                if let Some(preset) = threads::preset(s) {
                    return preset;
                }
                if let Some(rest) = s.strip_prefix("daxbench-") {
                    return Self::from_table_threads("daxbench", daxbench::DaxParams::alias_table(rest)?);
                }
                let (kind, body) = s.split_once(':').unwrap_or((s, ""));
                if !Self::GENERATORS.contains(&kind) {
                    if kind == "array-swap" {
                        return Err("array-swap is the fixed legacy swap of 1024 8-byte elements and takes no keys; `array:KEY=..` is the Secon/STAR array benchmark".into());
                    }
                    return Err(format!("unknown workload `{name}`; known workloads: {}", Self::NAMED.join(", ")));
                }
                Self::from_table_threads(kind, params::table_of(kind, body)?)
            }
        }
    }

    /// Kinds that take `key=value` parameters through [`Self::from_table`].
    const GENERATORS: [&'static str; 8] = ["array", "queue", "btree", "hash", "rbtree", "ycsb", "tpcc", "daxbench"];

    /// [`Self::from_table`], after taking out the keys `threads` and `data`
    /// of a multi-threaded generator (issue 14).
    fn from_table_threads(kind: &str, mut t: toml::Table) -> Result<Self, String> {
        let threads = t.remove("threads");
        let data = t.remove("data");
        if (threads.is_some() || data.is_some()) && !Self::GENERATORS.contains(&kind) {
            return Err(format!(
                "{kind} workload: `threads` and `data` apply to the persistent generators ({}) only",
                Self::GENERATORS.join(", ")
            ));
        }
        let n = match threads {
            None => 1,
            Some(toml::Value::Integer(n)) if (1..=threads::MAX_THREADS as i64).contains(&n) => n as usize,
            Some(v) => {
                return Err(format!("{kind} workload: key `threads` must be an integer from 1 to {}, got {v}", threads::MAX_THREADS))
            }
        };
        let mode = match data {
            None => DataMode::Partitioned,
            Some(toml::Value::String(s)) if s == "partitioned" => DataMode::Partitioned,
            Some(toml::Value::String(s)) if s == "shared" => DataMode::Shared,
            Some(v) => return Err(format!("{kind} workload: key `data` must be `partitioned` or `shared`, got {v}")),
        };
        ThreadSpec::copies(Self::from_table(kind, t)?, n, mode)
    }

    /// A generator of `kind` with the keys of `t`, validated.
    fn from_table(kind: &str, t: toml::Table) -> Result<Self, String> {
        use params::from_table;
        let w = match kind {
            "array" => WorkloadKind::Array(from_table(kind, t)?),
            "queue" => WorkloadKind::Queue(from_table(kind, t)?),
            "btree" => WorkloadKind::Btree(from_table(kind, t)?),
            "hash" => WorkloadKind::Hash(from_table(kind, t)?),
            "rbtree" => WorkloadKind::Rbtree(from_table(kind, t)?),
            "ycsb" => WorkloadKind::Ycsb(from_table(kind, t)?),
            "tpcc" => WorkloadKind::Tpcc(from_table(kind, t)?),
            "daxbench" => WorkloadKind::Daxbench(from_table(kind, t)?),
            "synthetic" => {
                let body: Vec<String> = t
                    .iter()
                    .map(|(k, v)| match v {
                        toml::Value::Integer(i) => Ok(format!("{k}={i}")),
                        toml::Value::Float(f) => Ok(format!("{k}={f}")),
                        _ => Err(format!("synthetic workload: `{k}` wants a number, got {v}")),
                    })
                    .collect::<Result<_, _>>()?;
                return SyntheticParams::parse(&format!("synthetic:{}", body.join(","))).map(WorkloadKind::Synthetic);
            }
            "random-writes" | "seq-writes" | "array-swap" => {
                if let Some(k) = t.keys().next() {
                    return Err(format!("{kind} workload takes no keys, got `{k}`"));
                }
                return Self::parse(kind);
            }
            _ => {
                return Err(format!(
                    "unknown workload kind `{kind}`; kinds: random-writes, seq-writes, array-swap, synthetic, {}",
                    Self::GENERATORS.join(", ")
                ))
            }
        };
        w.validate()?;
        Ok(w)
    }

    /// A workload file: `kind = "btree"` and that generator's keys.
    pub fn from_file(path: &std::path::Path) -> Result<Self, String> {
        let at = |e: String| format!("workload file {}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| at(format!("cannot read it: {e}")))?;
        let mut t: toml::Table = text.parse().map_err(|e: toml::de::Error| at(e.message().to_string()))?;
        let kind = match t.remove("kind") {
            Some(toml::Value::String(k)) => k,
            Some(v) => return Err(at(format!("`kind` must be a string, got {v}"))),
            None => {
                return Err(at(format!(
                    "no `kind` key; kinds: random-writes, seq-writes, array-swap, synthetic, {}",
                    Self::GENERATORS.join(", ")
                )))
            }
        };
        if kind == "mix" {
            return Self::mix_from_table(t).map_err(at);
        }
        Self::from_table_threads(&kind, t).map_err(at)
    }

    /// A mix in a workload file: `kind = "mix"` and `parts = ["a=queue",
    /// "b=hash:size_mib=64,gap=3"]`, each part `LABEL=WORKLOAD` or
    /// `WORKLOAD`.
    fn mix_from_table(mut t: toml::Table) -> Result<Self, String> {
        let parts = match t.remove("parts") {
            Some(toml::Value::Array(a)) => a,
            Some(v) => return Err(format!("mix: `parts` must be an array of workload strings, got {v}")),
            None => return Err("mix: no `parts` key (parts = [\"a=array-swap\", \"b=queue\"])".into()),
        };
        if let Some(k) = t.keys().next() {
            return Err(format!("mix: unknown key `{k}`; a mix file has kind and parts"));
        }
        let specs = parts
            .into_iter()
            .map(|v| match v {
                toml::Value::String(s) => match threads::part_start(&s) {
                    Some((label, spec)) => Ok((label.map(str::to_string), spec.to_string())),
                    None => Err(format!("mix: part `{s}` is neither a workload nor LABEL=workload")),
                },
                v => Err(format!("mix: each of `parts` must be a string, got {v}")),
            })
            .collect::<Result<Vec<_>, String>>()?;
        ThreadSpec::mix_of(specs)
    }

    fn validate(&self) -> Result<(), String> {
        match self {
            WorkloadKind::Array(p) => p.validate(),
            WorkloadKind::Queue(p) => p.validate(),
            WorkloadKind::Btree(p) => p.validate(),
            WorkloadKind::Hash(p) => p.validate(),
            WorkloadKind::Rbtree(p) => p.validate(),
            WorkloadKind::Ycsb(p) => p.validate(),
            WorkloadKind::Tpcc(p) => p.validate(),
            WorkloadKind::Daxbench(p) => p.validate(),
            _ => Ok(()),
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

    fn source(&self, seed: u64, capacity_bytes: u64) -> Result<Source, String> {
        Ok(match self {
            WorkloadKind::RandomWrites => {
                Source::Generator(Box::new(random_writes::RandomWrites::new(seed, random_writes::Params::default())))
            }
            WorkloadKind::SeqWrites => Source::Generator(Box::new(seq_writes::SeqWrites::new(seed, seq_writes::Params::default()))),
            WorkloadKind::ArraySwap => Source::Generator(Box::new(array_swap::ArraySwap::new(seed, array_swap::Params::default()))),
            WorkloadKind::Synthetic(p) => Source::Generator(Box::new(synthetic::Synthetic::new(seed, p.clone()))),
            WorkloadKind::Array(p) => Source::Generator(Box::new(array::Array::new(seed, p.clone())?)),
            WorkloadKind::Queue(p) => Source::Generator(Box::new(queue::Queue::new(seed, p.clone())?)),
            WorkloadKind::Btree(p) => Source::Generator(Box::new(btree::Btree::new(seed, p.clone())?)),
            WorkloadKind::Hash(p) => Source::Generator(Box::new(hash::Hash::new(seed, p.clone())?)),
            WorkloadKind::Rbtree(p) => Source::Generator(Box::new(rbtree::Rbtree::new(seed, p.clone())?)),
            WorkloadKind::Ycsb(p) => Source::Generator(Box::new(ycsb::Ycsb::new(seed, p.clone())?)),
            WorkloadKind::Tpcc(p) => Source::Generator(Box::new(tpcc::Tpcc::new(seed, p.clone())?)),
            WorkloadKind::Daxbench(p) => Source::Generator(Box::new(daxbench::Daxbench::new(seed, p.clone())?)),
            WorkloadKind::Trace(t) => Source::Trace(Box::new(t.open(seed, capacity_bytes)?)),
            WorkloadKind::Threads(t) => Source::Ops(t.merged(seed, capacity_bytes)?),
        })
    }

    /// Write `instructions` of this workload as a native trace: the same
    /// events a simulation of the workload with this seed would see.
    pub fn write_trace(&self, seed: u64, instructions: u64, out: &std::path::Path) -> Result<Written, String> {
        let mut h = TraceHeader::new("generator", AddressSpace::Physical, true);
        h.source = format!("spmsim generator {} seed {seed} instructions {instructions}", self.name());
        let mut w = NativeWriter::create(out, &h).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut stream = self.stream(seed, instructions, u64::MAX)?;
        let mut n = Written::default();
        for e in &mut stream {
            w.write(&record_of(&e)).map_err(|e| format!("{}: {e}", out.display()))?;
            n.records += 1;
            n.instructions += e.instructions();
        }
        stream.finish()?;
        w.finish().map_err(|e| format!("{}: {e}", out.display()))?;
        Ok(n)
    }

    /// The events of `ops` operations (fewer if a trace ends first). An
    /// operation is one transaction or step of a generator, one record of
    /// a trace.
    pub fn generate(&self, ops: u64, seed: u64) -> Result<Vec<Event>, String> {
        self.generate_placed(ops, seed, None)
    }

    /// [`Self::generate`] with the events placed in physical memory as a
    /// configuration with persistent regions says ([`Placement`]).
    pub fn generate_placed(&self, ops: u64, seed: u64, placement: Option<Placement>) -> Result<Vec<Event>, String> {
        // A multi-programmed workload splits the persistent pool between
        // its programs.
        let pool = placement.as_ref().map_or(u64::MAX, Placement::size);
        let mut s = EventStream::new(self.source(seed, pool)?, u64::MAX, u64::MAX);
        s.placement = placement;
        let mut v = Vec::new();
        for _ in 0..ops {
            if !s.refill(&mut v) {
                break;
            }
        }
        s.finish()?;
        Ok(v)
    }

    /// A stream of events that ends once `instructions` have been produced
    /// (or the trace ends). An event beyond `capacity_bytes` ends the stream
    /// with an error that [`EventStream::finish`] reports.
    pub fn stream(&self, seed: u64, instructions: u64, capacity_bytes: u64) -> Result<EventStream, String> {
        let mut s = EventStream::new(self.source(seed, capacity_bytes)?, instructions, capacity_bytes);
        s.kind_notes = self.notes();
        Ok(s)
    }

    /// [`Self::stream`] after a warm-up of at least `warmup` instructions
    /// ([`Warmup`]): the warm-up's events, then exactly `instructions` more.
    pub fn stream_after_warmup(&self, seed: u64, warmup: u64, instructions: u64, capacity_bytes: u64) -> Result<EventStream, String> {
        let mut s = self.stream(seed, instructions, capacity_bytes)?;
        s.warmup = (warmup > 0).then(|| Warmup::new(warmup));
        Ok(s)
    }

    /// Threads the workload runs, one per core (issue 14): 1 for every
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

    /// One stream per thread, its events tagged with the thread
    /// ([`Event::thread`]), each after a warm-up of `warmup` of that
    /// thread's instructions and ending after `instructions` more of them
    /// (instruction limits are per core, as in ChampSim).
    pub fn thread_streams(&self, seed: u64, warmup: u64, instructions: u64, capacity_bytes: u64) -> Result<Vec<EventStream>, String> {
        let WorkloadKind::Threads(spec) = self else {
            return Ok(vec![self.stream_after_warmup(seed, warmup, instructions, capacity_bytes)?]);
        };
        let notes = self.notes();
        Ok(spec
            .per_thread(seed, capacity_bytes)?
            .into_iter()
            .map(|src| {
                let mut s = EventStream::new(Source::Ops(src), instructions, capacity_bytes);
                s.kind_notes = notes.clone();
                s.warmup = (warmup > 0).then(|| Warmup::new(warmup));
                s
            })
            .collect())
    }
}

/// Where events come from: an endless seeded generator or a trace file.
enum Source {
    Generator(Box<dyn Generator>),
    Trace(Box<RecordEvents>),
    /// Several threads' events ([`threads`]): sources that can fail.
    Ops(Box<dyn threads::OpSource>),
}

pub struct EventStream {
    src: Source,
    buf: Vec<Event>,
    pos: usize,
    left: u64,
    requested: u64,
    capacity_bytes: u64,
    error: Option<String>,
    /// What the workload itself asks a report to say ([`WorkloadKind::notes`]).
    kind_notes: Vec<String>,
    /// Events before the region of interest, outside the instruction limit.
    warmup: Option<Warmup>,
    /// Where the events go in physical memory (persistent regions).
    placement: Option<Placement>,
}

impl EventStream {
    fn new(src: Source, instructions: u64, capacity_bytes: u64) -> Self {
        EventStream {
            src,
            buf: Vec::new(),
            pos: 0,
            left: instructions,
            requested: instructions,
            capacity_bytes,
            error: None,
            kind_notes: Vec::new(),
            warmup: None,
            placement: None,
        }
    }

    /// The same stream, its events placed in physical memory as `p` says.
    pub fn with_placement(mut self, p: Option<Placement>) -> Self {
        self.placement = p;
        self
    }

    /// Append one operation's events to `out`; false at the end or on error.
    fn refill(&mut self, out: &mut Vec<Event>) -> bool {
        let start = out.len();
        let more = self.refill_unplaced(out);
        if let (true, Some(p)) = (more, self.placement.as_mut()) {
            let ops = out.split_off(start);
            for e in ops {
                if let Err(err) = p.place(e, out) {
                    self.error = Some(err);
                    return false;
                }
            }
        }
        more
    }

    fn refill_unplaced(&mut self, out: &mut Vec<Event>) -> bool {
        match &mut self.src {
            Source::Generator(g) => {
                let start = out.len();
                g.next_op(out);
                if let Some(e) = out[start..].iter().find(|e| e.addr + e.size as u64 > self.capacity_bytes) {
                    self.error = Some(format!("workload touches {:#x}, beyond memory.capacity_bytes = {}", e.addr, self.capacity_bytes));
                    return false;
                }
                true
            }
            Source::Trace(t) => match t.next_op(out) {
                Ok(more) => more,
                Err(e) => {
                    self.error = Some(e.to_string());
                    false
                }
            },
            Source::Ops(o) => {
                let start = out.len();
                match o.next_op(out) {
                    Ok(more) => {
                        if let Some(e) = out[start..].iter().find(|e| e.addr + e.size as u64 > self.capacity_bytes) {
                            self.error = Some(format!(
                                "workload touches {:#x} (thread {}), beyond memory.capacity_bytes = {}",
                                e.addr, e.thread, self.capacity_bytes
                            ));
                            return false;
                        }
                        more
                    }
                    Err(e) => {
                        self.error = Some(e);
                        false
                    }
                }
            }
        }
    }

    /// The error that ended the stream early, if any.
    pub fn finish(&self) -> Result<(), String> {
        self.error.clone().map_or(Ok(()), Err)
    }

    /// What a report should say about how the events were obtained.
    pub fn notes(&self) -> Vec<String> {
        let mut n = self.kind_notes.clone();
        if let Source::Trace(t) = &self.src {
            let h = t.header();
            n.push(format!("trace from {} ({})", h.source_format, if h.source.is_empty() { "no source recorded" } else { &h.source }));
            if t.derived_values > 0 {
                n.push(format!("values derived: {} stores carried no recorded value, so the simulator wrote a deterministic value derived from the seed", t.derived_values));
            }
            if self.left > 0 && self.requested != u64::MAX {
                n.push(format!("trace ended {} instructions short of the {} requested", self.left, self.requested));
            }
        }
        if let Source::Ops(o) = &self.src {
            n.extend(o.notes());
            if o.finite() && self.left > 0 && self.requested != u64::MAX {
                n.push(format!("traces ended {} instructions short of the {} requested", self.left, self.requested));
            }
        }
        n
    }
}

impl Iterator for EventStream {
    type Item = Event;
    /// Events up to exactly the requested number of instructions: an event
    /// whose gap runs past the limit is cut to a `compute` event of the
    /// instructions that are left, and the instruction that reaches the
    /// limit is simulated whole (its later pieces, `same_instruction` with
    /// no gap, still follow).
    fn next(&mut self) -> Option<Event> {
        while self.pos >= self.buf.len() {
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            self.pos = 0;
            let more = self.refill(&mut buf);
            self.buf = buf;
            if !more {
                if self.left == 0 {
                    // Looking past the limit for the rest of an instruction
                    // only: what lies beyond is not part of the run.
                    self.error = None;
                }
                self.buf.clear();
                return None;
            }
        }
        let e = self.buf[self.pos];
        if self.warmup.as_mut().is_some_and(|w| w.takes(&e)) {
            self.pos += 1;
            return Some(e);
        }
        let n = e.instructions();
        if self.left == 0 {
            if e.same_instruction && n == 0 {
                self.pos += 1;
                return Some(e);
            }
            return None;
        }
        self.pos += 1;
        if n > self.left {
            // The limit falls inside the gap (n is the gap plus at most one).
            let cut = Event::marker(Op::Compute).after(self.left as u32).on_thread(e.thread);
            self.left = 0;
            return Some(cut);
        }
        self.left -= n;
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_stores_stay_in_a_block() {
        for name in ["random-writes", "seq-writes", "array-swap", "synthetic:ppti=20,nwpe=3"] {
            let w = WorkloadKind::parse(name).unwrap();
            let a = w.generate(200, 5).unwrap();
            assert_eq!(a, w.generate(200, 5).unwrap(), "{name}");
            assert!(a.iter().any(|e| e.op == Op::Store));
            for e in a.iter().filter(|e| e.op == Op::Store) {
                assert!(e.addr % 64 + e.size as u64 <= 64);
            }
            let n: u64 = w.stream(5, 10_000, u64::MAX).unwrap().map(|e| e.instructions()).sum();
            assert_eq!(n, 10_000, "{name}: exactly the instructions asked for");
        }
        let r = WorkloadKind::RandomWrites;
        assert_ne!(r.generate(50, 1).unwrap(), r.generate(50, 2).unwrap());
    }

    /// A fresh folder for a test's files, named after the test and the
    /// process (created; the test removes it).
    pub(crate) fn scratch_dir(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("spmsim-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    pub(crate) const SMALL: [&str; 9] = [
        "array:size_mib=1",
        "queue:size_mib=1",
        "btree:size_mib=1",
        "hash:size_mib=1",
        "rbtree:size_mib=1",
        "ycsb:size_mib=1",
        "tpcc:warehouses=1,orders_per_district=4096",
        "daxbench:size_mib=1",
        "daxbench-128-2",
    ];

    #[test]
    fn every_generator_parses_names_itself_and_round_trips() {
        for spec in SMALL {
            let w = WorkloadKind::parse(spec).unwrap();
            let name = w.name();
            assert_eq!(WorkloadKind::parse(&name).unwrap(), w, "{spec} -> {name}");
            let a = w.generate(20, 3).unwrap();
            assert_eq!(a, w.generate(20, 3).unwrap(), "{spec}");
            assert_ne!(a, w.generate(20, 4).unwrap(), "{spec}: the seed matters");
            let n: u64 = w.stream(5, 50_000, 8 << 30).unwrap().map(|e| e.instructions()).sum();
            assert_eq!(n, 50_000, "{spec}: exactly the instructions asked for");
        }
        // Bare kinds take the papers' defaults.
        for (kind, w) in [("btree", WorkloadKind::Btree(BtreeParams::default())), ("ycsb", WorkloadKind::Ycsb(YcsbParams::default()))] {
            assert_eq!(WorkloadKind::parse(kind).unwrap(), w);
        }
        let d = WorkloadKind::parse("daxbench-256-1:1").unwrap();
        assert_eq!(d, WorkloadKind::Daxbench(DaxParams { stride: 256, ..DaxParams::default() }));
        assert!(d.name().starts_with("daxbench:") && d.name().contains("rw=1:1") && d.name().contains("stride=256"));
        let b = WorkloadKind::parse("btree:value_bytes=64,ops_per_tx=2-4,style=static").unwrap();
        match &b {
            WorkloadKind::Btree(p) => {
                assert_eq!((p.value_bytes, p.ops_per_tx, p.style), (64, OpsPerTx { min: 2, max: 4 }, TxStyle::Static))
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn bad_parameters_name_the_key_and_the_valid_ones() {
        let e = WorkloadKind::parse("btree:valu_bytes=8").unwrap_err();
        assert!(e.contains("valu_bytes") && e.contains("value_bytes") && e.contains("ops_per_tx"), "{e}");
        let e = WorkloadKind::parse("hash:value_bytes=12").unwrap_err();
        assert!(e.contains("value_bytes") && e.contains("multiple of 8"), "{e}");
        let e = WorkloadKind::parse("queue:ops_per_tx=0").unwrap_err();
        assert!(e.contains("ops_per_tx"), "{e}");
        let e = WorkloadKind::parse("rbtree:style=lazy").unwrap_err();
        assert!(e.contains("style") && e.contains("dynamic"), "{e}");
        let e = WorkloadKind::parse("array:size_mib=100000").unwrap_err();
        assert!(e.contains("size_mib"), "{e}");
        let e = WorkloadKind::parse("tpcc:warehouses=80").unwrap_err();
        assert!(e.contains("8 GiB"), "{e}");
        let e = WorkloadKind::parse("ycsb:theta=1.5").unwrap_err();
        assert!(e.contains("theta"), "{e}");
        let e = WorkloadKind::parse("btree:populate=true").unwrap_err();
        assert!(e.contains("populate"), "{e}");
        let e = WorkloadKind::parse("array-swap:elements=5").unwrap_err();
        assert!(e.contains("array:"), "{e}");
        let e = WorkloadKind::parse("bptree").unwrap_err();
        assert!(e.contains("unknown workload") && e.contains("btree["), "{e}");
        assert!(WorkloadKind::parse("daxbench-64").unwrap_err().contains("daxbench-STRIDE-RW"));
    }

    #[test]
    fn toml_files_describe_generators_and_errors_name_file_and_key() {
        let dir = scratch_dir("workload");
        let f = dir.join("bt.toml");
        std::fs::write(&f, "kind = \"btree\"\nvalue_bytes = 64\nsize_mib = 2\nops_per_tx = \"1-4\"\n").unwrap();
        let w = WorkloadKind::parse(f.to_str().unwrap()).unwrap();
        assert_eq!(w, WorkloadKind::parse("btree:value_bytes=64,size_mib=2,ops_per_tx=1-4").unwrap());
        std::fs::write(&f, "kind = \"daxbench\"\nstride = 128\nrw = 2\n").unwrap();
        assert_eq!(WorkloadKind::parse(f.to_str().unwrap()).unwrap(), WorkloadKind::parse("daxbench-128-2").unwrap());
        std::fs::write(&f, "kind = \"synthetic\"\nppti = 20\nnwpe = 2.5\nstride = 4096\n").unwrap();
        assert_eq!(
            WorkloadKind::parse(f.to_str().unwrap()).unwrap(),
            WorkloadKind::parse("synthetic:ppti=20,nwpe=2.5,stride=4096").unwrap()
        );
        std::fs::write(&f, "kind = \"rbtree\"\nvalue_byte = 64\n").unwrap();
        let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("bt.toml") && e.contains("value_byte") && e.contains("value_bytes"), "{e}");
        std::fs::write(&f, "kind = \"queue\"\nsize_mib = \"big\"\n").unwrap();
        let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("bt.toml") && e.contains("size_mib"), "{e}");
        std::fs::write(&f, "value_bytes = 64\n").unwrap();
        assert!(WorkloadKind::parse(f.to_str().unwrap()).unwrap_err().contains("no `kind`"));
        std::fs::write(&f, "kind = \"nope\"\n").unwrap();
        assert!(WorkloadKind::parse(f.to_str().unwrap()).unwrap_err().contains("unknown workload kind"));
        let missing = dir.join("missing.toml");
        assert!(WorkloadKind::parse(missing.to_str().unwrap()).unwrap_err().contains("cannot read"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A trace of a load after a gap of 5, a 16-byte store (two pieces, one
    /// instruction) after a gap of 2, then 4 instructions without access.
    fn small_trace(dir: &std::path::Path) -> WorkloadKind {
        use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
        let p = dir.join("small.trace");
        let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Physical, true)).unwrap();
        for r in [
            TraceRecord::mem(Op::Load, 0x40, 8).after(5),
            TraceRecord { value: None, ..TraceRecord::mem(Op::Store, 0x80, 16).after(2) },
            TraceRecord::compute(4),
        ] {
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        WorkloadKind::parse(&format!("trace:{}", p.display())).unwrap()
    }

    #[test]
    fn a_stream_stops_at_exactly_the_instructions_asked_for() {
        let dir = scratch_dir("exact");
        let w = small_trace(&dir);
        let run = |n: u64| -> Vec<Event> { w.stream(1, n, 1 << 30).unwrap().collect() };
        for n in 1..=14 {
            let ev = run(n);
            let total: u64 = ev.iter().map(|e| e.instructions()).sum();
            assert_eq!(total, n.min(13), "--instructions {n}: {ev:?}");
        }
        // Inside the first gap: only the gap's instructions, no load.
        assert_eq!(run(1), vec![Event::marker(Op::Compute).after(1)]);
        // The store that reaches the limit is simulated whole, both pieces.
        let ev = run(9);
        assert_eq!(ev.iter().filter(|e| e.op == Op::Store).count(), 2, "{ev:?}");
        assert_eq!(ev.last().map(|e| e.same_instruction), Some(true));
        // The whole trace: 13 instructions, the last 4 in a compute event.
        assert_eq!(run(u64::MAX).last(), Some(&Event::marker(Op::Compute).after(4)));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_warmup_comes_before_the_instructions_asked_for() {
        let dir = scratch_dir("warm-stream");
        let w = small_trace(&dir);
        // A warm-up of 4 takes the load and its gap (6 instructions); the
        // 3 asked for are then the store's gap and the store, both pieces.
        let ev: Vec<Event> = w.stream_after_warmup(1, 4, 3, 1 << 30).unwrap().collect();
        assert_eq!(ev.iter().map(|e| e.instructions()).sum::<u64>(), 9, "{ev:?}");
        assert_eq!(ev.iter().map(|e| e.op).collect::<Vec<_>>(), [Op::Load, Op::Store, Op::Store]);
        let plain: Vec<Event> = w.stream(1, 9, 1 << 30).unwrap().collect();
        assert_eq!(ev, plain, "the same events as a run of both without a warm-up");
        std::fs::remove_dir_all(&dir).ok();
    }

    /// A program's trace with a stack: stores to the heap at 0x1000 and to
    /// the stack at 0x8000, and a header naming the stack range and, when
    /// `ranges`, the heap page as the only persistent range.
    fn stack_trace(dir: &std::path::Path, ranges: bool) -> std::path::PathBuf {
        use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
        let p = dir.join(format!("stack-{ranges}.trace"));
        let mut h = TraceHeader::new("test", AddressSpace::Physical, true);
        h.stack_range = Some((0x8000, 0x9000));
        if ranges {
            h.persistent_ranges = vec![(0x1000, 0x2000)];
        }
        let mut w = NativeWriter::create(&p, &h).unwrap();
        for r in [TraceRecord::mem(Op::Store, 0x1000, 8), TraceRecord::mem(Op::Store, 0x8040, 8), TraceRecord::mem(Op::Store, 0x4000, 8)] {
            w.write(&r).unwrap();
        }
        w.finish().unwrap();
        p
    }

    #[test]
    fn the_persistence_policy_flags_volatile_accesses() {
        let dir = scratch_dir("volatile");
        let flags = |spec: String| -> Vec<bool> {
            WorkloadKind::parse(&spec).unwrap().stream(1, 100, 1 << 30).unwrap().filter(|e| e.op == Op::Store).map(|e| e.volatile).collect()
        };
        let plain = stack_trace(&dir, false).display().to_string();
        let ranged = stack_trace(&dir, true).display().to_string();
        // heap, stack, other: the header's ranges (none: all persistent),
        // everything, everything but the stack.
        assert_eq!(flags(format!("trace:{plain}")), [false, false, false]);
        assert_eq!(flags(format!("trace:{ranged}")), [false, true, true]);
        assert_eq!(flags(format!("trace:{ranged}#persistent=all")), [false, false, false]);
        assert_eq!(flags(format!("trace:{plain}#persistent=heap")), [false, true, false]);
        assert_eq!(flags(format!("trace:{plain}#format=native#persistent=heap")), [false, true, false]);
        assert_eq!(flags(format!("trace:{ranged}#persistent=none")), [true, true, true]);
        let w = WorkloadKind::parse(&format!("trace:{plain}#persistent=heap")).unwrap();
        assert!(w.name().ends_with("#persistent=heap"), "{}", w.name());
        let e = WorkloadKind::parse(&format!("trace:{plain}#persistent=stack")).unwrap_err();
        assert!(e.contains("persistent=`stack`") && e.contains("heap"), "{e}");
        let e = WorkloadKind::parse(&format!("trace:{plain}#colour=red")).unwrap_err();
        assert!(e.contains("#colour="), "{e}");
        // A trace without a recorded stack cannot say what `heap` leaves out.
        let mut h = crate::trace::TraceHeader::new("test", crate::trace::AddressSpace::Physical, true);
        h.stack_range = None;
        let bare = dir.join("bare.trace");
        let mut wr = crate::trace::NativeWriter::create(&bare, &h).unwrap();
        wr.write(&crate::trace::TraceRecord::mem(Op::Store, 0x40, 8)).unwrap();
        wr.finish().unwrap();
        let e = WorkloadKind::parse(&format!("trace:{}#persistent=heap", bare.display())).unwrap().stream(1, 10, 1 << 30).err().unwrap();
        assert!(e.contains("stack range"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn reports_learn_what_is_synthetic_or_implicit() {
        let notes = |s: &str| WorkloadKind::parse(s).unwrap().stream(1, 1000, 8 << 30).unwrap().notes();
        assert!(notes("synthetic:ppti=10").iter().any(|n| n.starts_with("synthetic stream")));
        assert!(notes("daxbench-64-2").iter().any(|n| n.contains("synthetic")));
        assert!(notes("btree:size_mib=1").iter().any(|n| n.contains("implicit")));
        assert!(notes("btree:size_mib=1,populate=true").is_empty());
        assert!(notes("array-swap").is_empty());
    }
}
