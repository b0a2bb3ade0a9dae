//! Multi-threaded and multi-programmed workloads (issue 14): one thread
//! per core, each thread's events tagged with it ([`Event::thread`]).
//!
//! Three forms, all a [`ThreadSpec`] inside [`WorkloadKind::Threads`]:
//!
//! * `KIND:threads=N,data=partitioned|shared,KEYS` for every persistent
//!   generator (`data` defaults to `partitioned`; `threads=1` is the plain
//!   single-threaded workload, its name and events unchanged);
//! * `mix:a=array-swap,b=queue,...` or `mix:suite:gcc,suite:xz`: one
//!   single-threaded program per core; the presets `mix1`..`mix4` of
//!   Triad-NVM Table II;
//! * `trace:a.trace,b.trace`: one trace per core.
//!
//! ```text
//!  partitioned (and every mix or list of traces), N threads:
//!    span = memory.capacity_bytes / N, rounded down to 4 KiB
//!    thread t's generator runs alone in [0, span) (log 0..4 MiB, roots at
//!    4 MiB, heap from 8 MiB, as pheap lays it out) and lands at t * span:
//!    addr -> addr + t * span; an access beyond span ends t's stream
//!  shared, N threads, one generator:
//!    [0, N * 4 MiB)       the undo logs: thread t's at t * 4 MiB
//!    log address a < 4 MiB of thread t        -> a + t * 4 MiB
//!    any other address a                      -> a + (N - 1) * 4 MiB
//!    lock word: generator address HEAP_BASE - 64 (the last block of the
//!      root region, which no generator uses), so 8 MiB - 64 + (N-1) * 4 MiB
//! ```
//!
//! Seeds: thread 0 keeps the run seed; thread (or mix program) `t > 0`
//! runs with `pheap::mix(seed, t)`.
//!
//! Shared data: the generator's transactions are dealt to the threads in
//! ticket order, the `k`-th to thread `k mod N` (so thread `t`'s `j`-th
//! transaction holds ticket `j * N + t`, [`WorkloadKind::shared_lock`]).
//! A unit dealt is one transaction: an operation's events up to and
//! including its `tx-commit` (an operation that commits early because its
//! log filled is two units; the initial population of `populate=true`
//! travels with the first). A unit with a transaction takes the lock: a
//! volatile load and, as the same instruction (a read-modify-write), a
//! volatile store of the ticket + 1 to the lock word before it, and a
//! volatile store of 0 after its `tx-commit`. An operation without a
//! transaction (`daxbench`) is one unit and takes no lock.
//!
//! [`WorkloadKind::generate`] and [`WorkloadKind::stream`] give the merged
//! stream: operation `i` from thread `i mod N` (a thread whose trace ended
//! is skipped); for shared data that is the generator's own order with the
//! lock events. Without a memory capacity (`generate`), partitions are cut
//! as for the default 8 GiB memory ([`GENERATE_CAPACITY`]).

use super::{pheap, Event, Op, Source, WorkloadKind};
use serde::Serialize;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// Threads (cores) a workload may have.
pub const MAX_THREADS: usize = 64;
/// Partitions are cut on page boundaries.
pub const PARTITION_ALIGN: u64 = 4096;
/// The lock word of shared data, as the generator's address space has it
/// (relocated like any shared address, [`shared_address`]).
pub const LOCK_WORD: u64 = pheap::HEAP_BASE - 64;
/// The memory partitioned when no capacity is given (`generate`): the
/// default `memory.capacity_bytes`, the 8 GB PCM every generator fits.
pub const GENERATE_CAPACITY: u64 = pheap::ADDR_LIMIT;

/// How the threads of `KIND:threads=N` hold the structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataMode {
    /// Each thread its own instance in its own address range.
    Partitioned,
    /// One instance, transactions taken in ticket order under a lock.
    Shared,
}

impl DataMode {
    pub fn name(self) -> &'static str {
        match self {
            DataMode::Partitioned => "partitioned",
            DataMode::Shared => "shared",
        }
    }
}

/// Which spelling a [`ThreadSpec`] came from (and is named back in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadForm {
    /// `KIND:threads=N,data=..`: copies of one generator.
    Copies,
    /// `mix:..` or a preset: one program per core.
    Mix,
    /// `trace:a,b`: one trace per core.
    Traces,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadSpec {
    /// Threads, one per core (1..=64).
    pub threads: usize,
    /// Single-threaded workloads: one per thread (partitioned), or the one
    /// all threads share (shared).
    pub parts: Vec<WorkloadKind>,
    /// The label of each part in a mix (`a=` of `mix:a=queue`).
    pub part_labels: Vec<Option<String>>,
    pub mode: DataMode,
    pub form: ThreadForm,
    /// The name to report instead of the spelled-out parts (`mix1`).
    pub label: Option<String>,
}

/// The seed of thread (or mix program) `t`: the run seed for thread 0.
pub fn thread_seed(seed: u64, t: usize) -> u64 {
    if t == 0 {
        seed
    } else {
        pheap::mix(seed, t as u64)
    }
}

/// Bytes of each thread's partition: `capacity / threads`, rounded down to
/// a multiple of 4 KiB.
pub fn partition_span(capacity_bytes: u64, threads: usize) -> Result<u64, String> {
    let span = capacity_bytes / threads as u64 / PARTITION_ALIGN * PARTITION_ALIGN;
    if span == 0 {
        return Err(format!("memory.capacity_bytes = {capacity_bytes} is too small to give each of {threads} threads a 4 KiB partition"));
    }
    Ok(span)
}

/// Where shared data's address `addr` of thread `t` (of `threads`) lands:
/// the undo-log region per thread, everything else above all the logs.
pub fn shared_address(addr: u64, t: usize, threads: usize) -> u64 {
    if addr < pheap::LOG_BYTES {
        addr + t as u64 * pheap::LOG_BYTES
    } else {
        addr + (threads as u64 - 1) * pheap::LOG_BYTES
    }
}

/// A source of operations that can fail (a thread's partition, a trace).
pub(super) trait OpSource: Send {
    /// Append one operation's events; `Ok(false)` at the end.
    fn next_op(&mut self, out: &mut Vec<Event>) -> Result<bool, String>;
    /// What a report should say about where the events came from.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether the source can end (it holds a trace).
    fn finite(&self) -> bool {
        false
    }
}

/// Kinds that start a part of a mix (and names that may follow `LABEL=`).
const PART_STARTS: [&str; 12] =
    ["array", "queue", "btree", "hash", "rbtree", "ycsb", "tpcc", "daxbench", "array-swap", "random-writes", "seq-writes", "synthetic"];

fn starts_workload(s: &str) -> bool {
    PART_STARTS.iter().any(|k| s == *k || s.strip_prefix(k).is_some_and(|r| r.starts_with(':')))
        || ["daxbench-", "suite:", "trace:"].iter().any(|p| s.starts_with(p))
        || s.ends_with(".toml")
}

fn valid_label(l: &str) -> bool {
    !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `LABEL=spec` or `spec`, when the segment starts a part.
pub(super) fn part_start(seg: &str) -> Option<(Option<&str>, &str)> {
    if starts_workload(seg) {
        return Some((None, seg));
    }
    let (l, spec) = seg.split_once('=')?;
    (valid_label(l) && starts_workload(spec)).then_some((Some(l), spec))
}

fn check_threads(n: usize, what: &str) -> Result<(), String> {
    if !(1..=MAX_THREADS).contains(&n) {
        return Err(format!("{what}: threads must be 1 to {MAX_THREADS}, got {n}"));
    }
    Ok(())
}

/// Triad-NVM Table II's multi-programmed mixes (`mix1`..`mix4`), or `None`
/// if `name` is not one.
pub fn preset(name: &str) -> Option<Result<WorkloadKind, String>> {
    let lower = name.to_ascii_lowercase();
    // MIX2 and MIX3 hold SPEC CPU2006's mcf and lbm, which spmsim cannot
    // ship: the memory-intensive suite's stand-ins take their place, every
    // access non-persistent (`configs/suite/memory-intensive.toml`).
    let parts: &[&str] = match lower.as_str() {
        "mix1" => &["array-swap", "queue", "hash", "daxbench-64-2"],
        "mix2" => &["suite:mcf#persistent=none", "queue", "hash", "daxbench-64-2"],
        "mix3" => &["suite:mcf#persistent=none", "suite:lbm#persistent=none", "hash", "daxbench-512-2"],
        "mix4" => &["array-swap", "hash", "hash", "daxbench-1024-2"],
        // DAXBENCH1..4 are one program each (Table II lists one
        // DAXBENCH-S-RW per row): `daxbench-S-RW` is S-byte stride, RW
        // reads per write.
        "daxbench1" => return Some(WorkloadKind::parse("daxbench-128-2")),
        "daxbench2" => return Some(WorkloadKind::parse("daxbench-1024-2")),
        "daxbench3" => return Some(WorkloadKind::parse("daxbench-256-2")),
        "daxbench4" => return Some(WorkloadKind::parse("daxbench-512-3")),
        _ => return None,
    };
    Some((|| {
        let parts = parts.iter().map(|p| WorkloadKind::parse(p)).collect::<Result<Vec<_>, _>>()?;
        Ok(ThreadSpec::partitioned(parts, ThreadForm::Mix, Some(lower.clone())))
    })())
}

impl ThreadSpec {
    /// One unlabelled part per core, each in its own partition.
    fn partitioned(parts: Vec<WorkloadKind>, form: ThreadForm, label: Option<String>) -> WorkloadKind {
        WorkloadKind::Threads(ThreadSpec {
            threads: parts.len(),
            part_labels: vec![None; parts.len()],
            parts,
            mode: DataMode::Partitioned,
            form,
            label,
        })
    }

    /// `threads` copies of the single-threaded generator `base`.
    pub fn copies(base: WorkloadKind, threads: usize, mode: DataMode) -> Result<WorkloadKind, String> {
        check_threads(threads, &base.name())?;
        if threads == 1 {
            return Ok(base);
        }
        let parts = match mode {
            DataMode::Partitioned => vec![base; threads],
            DataMode::Shared => vec![base],
        };
        Ok(WorkloadKind::Threads(ThreadSpec {
            threads,
            part_labels: vec![None; parts.len()],
            parts,
            mode,
            form: ThreadForm::Copies,
            label: None,
        }))
    }

    /// The body of `mix:BODY`.
    pub fn parse_mix(body: &str) -> Result<WorkloadKind, String> {
        let mut specs: Vec<(Option<String>, String)> = Vec::new();
        for seg in body.split(',') {
            let seg = seg.trim();
            if seg.is_empty() {
                continue;
            }
            match part_start(seg) {
                Some((label, spec)) => specs.push((label.map(str::to_string), spec.to_string())),
                None => match specs.last_mut() {
                    Some((_, spec)) if seg.contains('=') => {
                        spec.push(if spec.contains(':') { ',' } else { ':' });
                        spec.push_str(seg);
                    }
                    _ => {
                        return Err(format!(
                        "mix workload: `{seg}` is neither a workload, LABEL=workload nor a key=value of the program before it (a mix is \
                             mix:a=array-swap,b=queue:size_mib=64,gap=3,... or mix:suite:gcc,trace:PATH)"
                    ))
                    }
                },
            }
        }
        Self::mix_of(specs)
    }

    /// A mix of `(label, spec)` parts.
    pub fn mix_of(specs: Vec<(Option<String>, String)>) -> Result<WorkloadKind, String> {
        if specs.is_empty() {
            return Err("mix workload: no programs given (mix:a=array-swap,b=queue,...)".into());
        }
        check_threads(specs.len(), "mix workload")?;
        let mut labels = Vec::new();
        let mut parts = Vec::new();
        for (label, spec) in specs {
            if let Some(l) = &label {
                if labels.contains(&Some(l.clone())) {
                    return Err(format!("mix workload: label `{l}` given twice"));
                }
            }
            let w = WorkloadKind::parse(&spec).map_err(|e| format!("mix workload, program `{spec}`: {e}"))?;
            if w.threads() > 1 || matches!(w, WorkloadKind::Threads(_)) {
                return Err(format!("mix workload: program `{spec}` is multi-threaded; a mix runs one single-threaded program per core"));
            }
            labels.push(label);
            parts.push(w);
        }
        Ok(WorkloadKind::Threads(ThreadSpec {
            threads: parts.len(),
            parts,
            part_labels: labels,
            mode: DataMode::Partitioned,
            form: ThreadForm::Mix,
            label: None,
        }))
    }

    /// `trace:a,b,..`: one trace per core.
    pub fn parse_traces(body: &str) -> Result<WorkloadKind, String> {
        let parts = body.split(',').map(|p| super::TraceSpec::parse(p.trim()).map(WorkloadKind::Trace)).collect::<Result<Vec<_>, _>>()?;
        check_threads(parts.len(), "trace workload")?;
        Ok(ThreadSpec::partitioned(parts, ThreadForm::Traces, None))
    }

    pub fn name(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        match self.form {
            ThreadForm::Copies => {
                let base = self.parts[0].name();
                let (kind, keys) = base.split_once(':').unwrap_or((&base, ""));
                let sep = if keys.is_empty() { "" } else { "," };
                format!("{kind}:threads={},data={}{sep}{keys}", self.threads, self.mode.name())
            }
            ThreadForm::Mix => {
                let parts: Vec<String> = self
                    .parts
                    .iter()
                    .zip(&self.part_labels)
                    .map(|(p, l)| match l {
                        Some(l) => format!("{l}={}", p.name()),
                        None => p.name(),
                    })
                    .collect();
                format!("mix:{}", parts.join(","))
            }
            ThreadForm::Traces => {
                let parts: Vec<String> = self.parts.iter().map(|p| p.name().trim_start_matches("trace:").to_string()).collect();
                format!("trace:{}", parts.join(","))
            }
        }
    }

    /// What a report must say about how the threads use memory.
    pub fn notes(&self) -> Vec<String> {
        let n = self.threads;
        let seeds = "thread 0 keeps the run seed, thread t > 0 runs with mix(seed, t) (pheap::mix)";
        let layout = format!(
            "memory partitioned: thread t's addresses are offset by t x span, span = memory.capacity_bytes / {n} rounded down to 4 KiB \
             ({} bytes without a capacity); each thread's undo log is at the start of its partition",
            GENERATE_CAPACITY / n as u64 / PARTITION_ALIGN * PARTITION_ALIGN
        );
        let mut notes = match (self.form, self.mode) {
            (ThreadForm::Copies, DataMode::Shared) => vec![format!(
                "{n} threads share one {} on shared data (one seed): its transactions are dealt in ticket order, the k-th to thread k mod {n}; \
                 thread t's undo log is at [t x 4 MiB, (t+1) x 4 MiB), every other address moves up by {} MiB; each transaction takes a \
                 ticket lock, a volatile load and store of the lock word at {:#x} before tx-begin and a volatile store releasing it after \
                 tx-commit",
                self.parts[0].name(),
                (n - 1) * 4,
                shared_address(LOCK_WORD, 0, n)
            )],
            (ThreadForm::Copies, DataMode::Partitioned) => {
                vec![format!("{n} threads, each its own instance of {} on partitioned data; {seeds}", self.parts[0].name()), layout]
            }
            (ThreadForm::Mix, _) | (ThreadForm::Traces, _) => {
                vec![format!("multi-programmed: {n} programs, one per core, each in its own partition; {seeds}"), layout]
            }
        };
        let mut seen: Vec<String> = Vec::new();
        for (t, p) in self.parts.iter().enumerate() {
            for note in p.notes() {
                if !seen.contains(&note) {
                    seen.push(note.clone());
                    let who = if self.mode == DataMode::Shared { "shared".to_string() } else { format!("thread {t}") };
                    notes.push(format!("{who} ({}): {note}", p.name()));
                }
            }
        }
        notes
    }

    /// Thread `t`'s partitioned source.
    fn partition(&self, t: usize, seed: u64, capacity_bytes: u64) -> Result<Partition, String> {
        let span = partition_span(capacity_bytes, self.threads)?;
        let part = &self.parts[t];
        let src = part.source(thread_seed(seed, t), span).map_err(|e| format!("thread {t} ({}): {e}", part.name()))?;
        Ok(Partition { src, thread: t, threads: self.threads, span, capacity_bytes, name: part.name() })
    }

    fn shared_core(&self, seed: u64) -> Result<SharedCore, String> {
        let Source::Generator(gen) = self.parts[0].source(seed, u64::MAX)? else {
            return Err(format!("{}: only a generator can be shared by threads", self.parts[0].name()));
        };
        Ok(SharedCore {
            gen,
            threads: self.threads,
            pending: Vec::new(),
            pos: 0,
            ticket: 0,
            queues: vec![VecDeque::new(); self.threads],
            closed: vec![false; self.threads],
        })
    }

    /// The merged stream: operation `i` from thread `i mod N`.
    pub(super) fn merged(&self, seed: u64, capacity_bytes: u64) -> Result<Box<dyn OpSource>, String> {
        let capacity_bytes = if capacity_bytes == u64::MAX { GENERATE_CAPACITY } else { capacity_bytes };
        match self.mode {
            DataMode::Shared => Ok(Box::new(SharedMerged(self.shared_core(seed)?))),
            DataMode::Partitioned => {
                let parts = (0..self.threads).map(|t| self.partition(t, seed, capacity_bytes)).collect::<Result<Vec<_>, _>>()?;
                Ok(Box::new(RoundRobin { done: vec![false; parts.len()], parts, next: 0 }))
            }
        }
    }

    /// One source per thread.
    pub(super) fn per_thread(&self, seed: u64, capacity_bytes: u64) -> Result<Vec<Box<dyn OpSource>>, String> {
        match self.mode {
            DataMode::Shared => {
                let core = Arc::new(Mutex::new(self.shared_core(seed)?));
                Ok((0..self.threads).map(|t| Box::new(SharedThread { core: core.clone(), t }) as Box<dyn OpSource>).collect())
            }
            DataMode::Partitioned => {
                (0..self.threads).map(|t| Ok(Box::new(self.partition(t, seed, capacity_bytes)?) as Box<dyn OpSource>)).collect()
            }
        }
    }
}

/// One thread's own program, moved into its partition.
struct Partition {
    src: Source,
    thread: usize,
    threads: usize,
    span: u64,
    capacity_bytes: u64,
    name: String,
}

impl OpSource for Partition {
    fn next_op(&mut self, out: &mut Vec<Event>) -> Result<bool, String> {
        let start = out.len();
        let t = self.thread;
        let more = match &mut self.src {
            Source::Generator(g) => {
                g.next_op(out);
                true
            }
            Source::Trace(r) => r.next_op(out).map_err(|e| format!("thread {t} ({}): {e}", self.name))?,
            Source::Ops(o) => o.next_op(out)?,
        };
        let base = t as u64 * self.span;
        for e in &mut out[start..] {
            if matches!(e.op, Op::Load | Op::Store) {
                if e.addr + e.size as u64 > self.span {
                    return Err(format!(
                        "thread {t} ({}) touches {:#x}, beyond its partition of {} bytes (memory.capacity_bytes = {} / {} threads, rounded \
                         down to 4 KiB); use fewer threads, more memory or a smaller footprint",
                        self.name, e.addr, self.span, self.capacity_bytes, self.threads
                    ));
                }
                e.addr += base;
            }
            e.thread = t as u8;
        }
        Ok(more)
    }

    fn notes(&self) -> Vec<String> {
        match &self.src {
            Source::Trace(r) => {
                let h = r.header();
                let mut n = vec![format!(
                    "thread {}: trace from {} ({})",
                    self.thread,
                    h.source_format,
                    if h.source.is_empty() { "no source recorded" } else { &h.source }
                )];
                if r.derived_values > 0 {
                    n.push(format!(
                        "thread {}: values derived: {} stores carried no recorded value, so the simulator wrote a deterministic value derived from the seed",
                        self.thread, r.derived_values
                    ));
                }
                n
            }
            _ => Vec::new(),
        }
    }

    fn finite(&self) -> bool {
        matches!(self.src, Source::Trace(_))
    }
}

/// Partitions interleaved by operation.
struct RoundRobin {
    parts: Vec<Partition>,
    done: Vec<bool>,
    next: usize,
}

impl OpSource for RoundRobin {
    fn next_op(&mut self, out: &mut Vec<Event>) -> Result<bool, String> {
        for _ in 0..self.parts.len() {
            let i = self.next;
            self.next = (self.next + 1) % self.parts.len();
            if self.done[i] {
                continue;
            }
            let start = out.len();
            if self.parts[i].next_op(out)? {
                return Ok(true);
            }
            out.truncate(start);
            self.done[i] = true;
        }
        Ok(false)
    }

    fn notes(&self) -> Vec<String> {
        self.parts.iter().flat_map(|p| p.notes()).collect()
    }

    fn finite(&self) -> bool {
        self.parts.iter().any(|p| p.finite())
    }
}

/// The one generator of shared data, dealing its transactions in ticket
/// order into per-thread queues.
struct SharedCore {
    gen: Box<dyn super::Generator>,
    threads: usize,
    /// The generator's current operation, from `pos` not yet dealt.
    pending: Vec<Event>,
    pos: usize,
    ticket: u64,
    queues: Vec<VecDeque<Vec<Event>>>,
    /// Threads whose stream was dropped: their units are discarded.
    closed: Vec<bool>,
}

impl SharedCore {
    /// Append the next unit (one transaction, with its lock) to `out`;
    /// returns the thread it belongs to.
    fn next_unit(&mut self, out: &mut Vec<Event>) -> usize {
        while self.pos >= self.pending.len() {
            self.pending.clear();
            self.pos = 0;
            self.gen.next_op(&mut self.pending);
        }
        let unit = &self.pending[self.pos..];
        let end = unit.iter().position(|e| e.op == Op::TxCommit).map_or(unit.len(), |i| i + 1);
        let unit = &unit[..end];
        let n = self.threads;
        let t = (self.ticket % n as u64) as usize;
        let locked = unit.iter().any(|e| e.op == Op::TxBegin);
        let lock = shared_address(LOCK_WORD, t, n);
        let vol = |e: Event| Event { volatile: true, ..e }.on_thread(t as u8);
        if locked {
            out.push(vol(Event::load(lock, 8)));
            out.push(vol(Event { same_instruction: true, ..Event::store(lock, 8, self.ticket + 1, false) }));
        }
        for e in unit {
            let mut e = *e;
            if matches!(e.op, Op::Load | Op::Store) {
                e.addr = shared_address(e.addr, t, n);
            }
            out.push(e.on_thread(t as u8));
        }
        if locked {
            out.push(vol(Event::store(lock, 8, 0, false)));
        }
        self.pos += end;
        self.ticket += 1;
        t
    }
}

/// Shared data, all threads merged: the generator's order.
struct SharedMerged(SharedCore);

impl OpSource for SharedMerged {
    fn next_op(&mut self, out: &mut Vec<Event>) -> Result<bool, String> {
        self.0.next_unit(out);
        Ok(true)
    }
}

/// Thread `t`'s share of shared data.
struct SharedThread {
    core: Arc<Mutex<SharedCore>>,
    t: usize,
}

impl OpSource for SharedThread {
    fn next_op(&mut self, out: &mut Vec<Event>) -> Result<bool, String> {
        let mut c = self.core.lock().map_err(|_| format!("thread {}: the shared generator failed in another thread", self.t))?;
        if let Some(unit) = c.queues[self.t].pop_front() {
            out.extend(unit);
            return Ok(true);
        }
        loop {
            let mut unit = Vec::new();
            let u = c.next_unit(&mut unit);
            if u == self.t {
                out.extend(unit);
                return Ok(true);
            }
            if !c.closed[u] {
                c.queues[u].push_back(unit);
            }
        }
    }
}

impl Drop for SharedThread {
    fn drop(&mut self) {
        if let Ok(mut c) = self.core.lock() {
            c.closed[self.t] = true;
            c.queues[self.t].clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{EventStream, HashParams};

    /// The generators' small sizes (the workload tests' list, without its
    /// `daxbench-S-RW` alias).
    const SMALL: [&str; 8] = {
        let all = crate::workload::tests::SMALL;
        [all[0], all[1], all[2], all[3], all[4], all[5], all[6], all[7]]
    };

    fn parse(s: &str) -> WorkloadKind {
        WorkloadKind::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn take(s: &mut EventStream, n: usize) -> Vec<Event> {
        let v: Vec<Event> = s.by_ref().take(n).collect();
        assert_eq!(v.len(), n);
        s.finish().unwrap();
        v
    }

    #[test]
    fn one_thread_is_the_plain_workload() {
        for spec in SMALL.iter().copied().chain(["daxbench-128-2"]) {
            let plain = parse(spec);
            for extra in ["threads=1", "threads=1,data=shared", "data=partitioned,threads=1"] {
                let sep = if spec.contains(':') { "," } else { ":" };
                let w = parse(&format!("{spec}{sep}{extra}"));
                assert_eq!(w, plain, "{spec} {extra}");
                assert_eq!(w.name(), plain.name());
                assert_eq!(w.threads(), 1);
                assert!(!w.shared_lock());
                assert_eq!(w.generate(20, 3).unwrap(), plain.generate(20, 3).unwrap());
            }
            let s = plain.thread_streams(3, 100, 5000, 8 << 30).unwrap();
            assert_eq!(s.len(), 1);
        }
    }

    #[test]
    fn bad_thread_keys_are_named() {
        for (spec, want) in [
            ("btree:threads=0", "threads"),
            ("btree:threads=65", "1 to 64"),
            ("hash:threads=two", "threads"),
            ("queue:threads=2,data=both", "`data` must be `partitioned` or `shared`"),
            ("daxbench-64-2:threads=99", "threads"),
            ("mix:a=btree:threads=2,b=queue", "multi-threaded"),
            ("mix:size_mib=3,queue", "neither a workload"),
            ("mix:a=queue,a=hash", "label `a` given twice"),
            ("mix:a=queue,b=nosuch:x=1", "nosuch"),
            ("mix:", "no programs"),
            ("mix:trace:a.trace,b.trace", "`b.trace` is neither a workload"),
        ] {
            let e = WorkloadKind::parse(spec).unwrap_err();
            assert!(e.contains(want), "{spec}: {e}");
        }
        // The generator still rejects its own unknown keys.
        let e = WorkloadKind::parse("btree:threads=2,valu_bytes=8").unwrap_err();
        assert!(e.contains("valu_bytes"), "{e}");
    }

    #[test]
    fn names_parse_back_to_the_same_workload() {
        for spec in [
            "btree:size_mib=1,threads=4",
            "hash:threads=8,data=shared,size_mib=2,gap=3",
            "daxbench-256-1:1:size_mib=4,threads=2",
            "ycsb:threads=64,data=partitioned,size_mib=1",
            "mix:a=array-swap,b=queue:size_mib=1,gap=3,c=hash,d=daxbench-64-2",
            "mix:array-swap,random-writes,synthetic:ppti=20,nwpe=3",
            "mix1",
            "MIX4",
        ] {
            let w = parse(spec);
            let name = w.name();
            assert_eq!(parse(&name), w, "{spec} -> {name}");
            assert!(w.threads() > 1, "{spec}");
        }
        let w = parse("hash:threads=8,data=shared,size_mib=2,gap=3");
        assert!(w.name().starts_with("hash:threads=8,data=shared,") && w.name().contains("gap=3"), "{}", w.name());
        assert!(w.shared_lock() && w.threads() == 8);
        assert!(!parse("hash:threads=8").shared_lock());
    }

    #[test]
    fn mixes_parse_in_both_forms() {
        let w = parse("mix:a=array-swap,b=queue:size_mib=1,gap=3,c=hash,d=daxbench-64-2");
        let WorkloadKind::Threads(t) = &w else { panic!("{w:?}") };
        assert_eq!(t.threads, 4);
        assert_eq!(t.part_labels, ["a", "b", "c", "d"].map(|l| Some(l.to_string())));
        assert_eq!(t.parts, vec![parse("array-swap"), parse("queue:size_mib=1,gap=3"), parse("hash"), parse("daxbench-64-2")]);
        assert_eq!((t.mode, t.form), (DataMode::Partitioned, ThreadForm::Mix));
        // Unlabelled: every segment naming a workload starts a program.
        let w = parse("mix:array-swap,hash:size_mib=2,value_bytes=64,seq-writes");
        let WorkloadKind::Threads(t) = &w else { panic!("{w:?}") };
        assert_eq!(t.part_labels, vec![None, None, None]);
        assert_eq!(t.parts[1], WorkloadKind::Hash(HashParams { size_mib: 2, value_bytes: 64, ..HashParams::default() }));
        // suite: starts a program too (none recorded here: its own error).
        let e = WorkloadKind::parse("mix:suite:no-such-program,suite:gcc").unwrap_err();
        assert!(e.contains("suite program `no-such-program`"), "{e}");
        // The presets of Triad-NVM Table II.
        let m1 = parse("Mix1");
        let WorkloadKind::Threads(t) = &m1 else { panic!() };
        assert_eq!(t.parts, vec![parse("array-swap"), parse("queue"), parse("hash"), parse("daxbench-64-2")]);
        assert_eq!(m1.name(), "mix1");
        let WorkloadKind::Threads(t) = parse("mix4") else { panic!() };
        assert_eq!(t.parts, vec![parse("array-swap"), parse("hash"), parse("hash"), parse("daxbench-1024-2")]);
        for (p, d) in [
            ("daxbench1", "daxbench-128-2"),
            ("DAXBENCH2", "daxbench-1024-2"),
            ("daxbench3", "daxbench-256-2"),
            ("daxbench4", "daxbench-512-3"),
        ] {
            assert_eq!(parse(p), parse(d), "{p}");
        }
    }

    #[test]
    fn the_spec_cpu_mixes_run_the_stand_ins_or_say_how_to_record_them() {
        for (mix, first, second) in
            [("MIX2", "suite:mcf#persistent=none", "queue"), ("mix3", "suite:mcf#persistent=none", "suite:lbm#persistent=none")]
        {
            match WorkloadKind::parse(mix) {
                Ok(WorkloadKind::Threads(t)) => {
                    assert_eq!(t.parts.len(), 4, "{mix}");
                    assert_eq!(t.parts[0].name(), first, "{mix}");
                    assert!(t.parts[1].name().starts_with(second), "{mix}: {}", t.parts[1].name());
                }
                Ok(w) => panic!("{mix}: {}", w.name()),
                // The cache lacks the stand-ins' traces: the error says how
                // to record them.
                Err(e) => assert!(e.contains("memory-intensive.toml") && e.contains("suite record"), "{mix}: {e}"),
            }
        }
    }

    #[test]
    fn partitioned_threads_stay_in_their_own_range() {
        let cap = 64 << 20;
        let span = partition_span(cap, 4).unwrap();
        assert_eq!(span, 16 << 20);
        for spec in [
            "btree:size_mib=1,threads=4",
            "queue:size_mib=1,threads=4",
            "mix:a=array-swap,b=queue:size_mib=1,c=hash:size_mib=1,d=daxbench-64-2:size_mib=1",
        ] {
            let w = parse(spec);
            let streams = w.thread_streams(9, 1000, 20_000, cap).unwrap();
            assert_eq!(streams.len(), 4);
            for (t, mut s) in streams.into_iter().enumerate() {
                let ev: Vec<Event> = s.by_ref().collect();
                s.finish().unwrap();
                assert!(ev.iter().filter(|e| e.op == Op::Store).count() > 10, "{spec} thread {t}");
                let warm = ev.iter().map(|e| e.instructions()).sum::<u64>();
                assert!(warm >= 21_000, "{spec} thread {t}: warm-up and limit per thread, got {warm}");
                for e in &ev {
                    assert_eq!(e.thread as usize, t, "{spec}");
                    if matches!(e.op, Op::Load | Op::Store) {
                        let lo = t as u64 * span;
                        assert!(e.addr >= lo && e.addr + e.size as u64 <= lo + span, "{spec} thread {t}: {:#x}", e.addr);
                    }
                }
            }
        }
        // Thread 0 keeps the run seed; thread 1 runs its own instance.
        let w = parse("btree:size_mib=1,threads=2");
        let mut s = w.thread_streams(9, 0, 10_000, cap).unwrap();
        let plain: Vec<Event> = parse("btree:size_mib=1").stream(9, 10_000, cap).unwrap().collect();
        let t0: Vec<Event> = s[0].by_ref().collect();
        assert_eq!(t0, plain);
        let t1: Vec<Event> = s[1]
            .by_ref()
            .map(|mut e| {
                e.addr -= if matches!(e.op, Op::Load | Op::Store) { 32 << 20 } else { 0 };
                e.thread = 0;
                e
            })
            .collect();
        assert_ne!(t1, plain, "thread 1 has its own seed");
    }

    #[test]
    fn a_thread_beyond_its_partition_says_so() {
        let w = parse("btree:size_mib=64,threads=4");
        let mut s = w.thread_streams(1, 0, 1_000_000, 64 << 20).unwrap().remove(0);
        assert!(s.by_ref().count() < 1_000_000);
        let e = s.finish().unwrap_err();
        assert!(e.contains("thread 0") && e.contains("partition of 16777216 bytes") && e.contains("/ 4 threads"), "{e}");
        let e = WorkloadKind::parse("queue:size_mib=1,threads=64").unwrap().thread_streams(1, 0, 10, 4096 * 10).err().unwrap();
        assert!(e.contains("too small"), "{e}");
    }

    /// The shared generator's events without the lock and moved back.
    fn unshare(ev: &[Event], n: usize) -> Vec<Event> {
        ev.iter()
            .filter(|e| !e.volatile)
            .map(|e| {
                let mut e = *e;
                if matches!(e.op, Op::Load | Op::Store) {
                    let t = e.thread as u64;
                    let lo = t * pheap::LOG_BYTES;
                    e.addr = if e.addr >= lo && e.addr < lo + pheap::LOG_BYTES && e.addr < n as u64 * pheap::LOG_BYTES {
                        e.addr - lo
                    } else {
                        e.addr - (n as u64 - 1) * pheap::LOG_BYTES
                    };
                }
                e.thread = 0;
                e
            })
            .collect()
    }

    #[test]
    fn shared_data_deals_transactions_in_ticket_order_under_a_lock() {
        let n = 3;
        let w = parse("hash:size_mib=1,threads=3,data=shared");
        let plain = parse("hash:size_mib=1");
        let merged = w.generate(30, 4).unwrap();
        let ours = plain.generate(30, 4).unwrap();
        assert_eq!(unshare(&merged, n), ours, "the generator's own order, moved and locked");
        let lock = shared_address(LOCK_WORD, 0, n);
        assert_eq!(lock, (8 << 20) - 64 + 2 * (4 << 20));
        // Every transaction: lock (load, store ticket+1), tx-begin .. tx-commit, release; the k-th on thread k mod n.
        let mut k = 0u64;
        let mut i = 0;
        while i < merged.len() {
            let t = (k % n as u64) as u8;
            let e = &merged[i];
            assert!(e.op == Op::Load && e.volatile && e.addr == lock && e.thread == t, "unit {k} at {i}: {e:?}");
            let s = &merged[i + 1];
            assert!(s.op == Op::Store && s.volatile && s.addr == lock && s.value == k + 1 && s.same_instruction);
            assert_eq!(merged[i + 2].op, Op::TxBegin);
            let end = i + merged[i..].iter().position(|e| e.op == Op::TxCommit).unwrap();
            for e in &merged[i..=end + 1] {
                assert_eq!(e.thread, t);
                if e.op == Op::Store && e.log {
                    assert!(e.addr / pheap::LOG_BYTES == t as u64, "thread {t}'s log: {:#x}", e.addr);
                } else if matches!(e.op, Op::Load | Op::Store) && !e.volatile {
                    assert!(e.addr >= n as u64 * pheap::LOG_BYTES, "shared data above the logs: {:#x}", e.addr);
                }
            }
            let r = &merged[end + 1];
            assert!(r.op == Op::Store && r.volatile && r.addr == lock && r.value == 0, "release: {r:?}");
            i = end + 2;
            k += 1;
        }
        assert_eq!(k, 30);
        // Each thread's stream is the merged stream's events of that thread.
        let mut streams = w.thread_streams(4, 0, u64::MAX, 8 << 30).unwrap();
        for (t, s) in streams.iter_mut().enumerate() {
            let want: Vec<Event> = merged.iter().filter(|e| e.thread as usize == t).copied().collect();
            assert_eq!(take(s, want.len()), want, "thread {t}");
        }
        let notes = w.notes();
        assert!(notes.iter().any(|n| n.contains("ticket") && n.contains("lock") && n.contains("undo log")), "{notes:?}");
    }

    #[test]
    fn the_merged_stream_takes_operations_round_robin() {
        let w = parse("array:size_mib=1,threads=3");
        let merged = w.generate(12, 2).unwrap();
        let mut runs: Vec<u8> = Vec::new();
        for e in &merged {
            if runs.last() != Some(&e.thread) {
                runs.push(e.thread);
            }
        }
        assert_eq!(runs, [0, 1, 2].repeat(4));
        // The same events each thread's own stream gives, partitioned as
        // for the default memory.
        let mut streams = w.thread_streams(2, 0, u64::MAX, GENERATE_CAPACITY).unwrap();
        for (t, s) in streams.iter_mut().enumerate() {
            let want: Vec<Event> = merged.iter().filter(|e| e.thread as usize == t).copied().collect();
            assert_eq!(take(s, want.len()), want, "thread {t}");
        }
        // stream(): the instruction limit is the total.
        let n: u64 = w.stream(2, 30_000, 8 << 30).unwrap().map(|e| e.instructions()).sum();
        assert_eq!(n, 30_000);
    }

    #[test]
    fn runs_are_deterministic_and_seeded() {
        for spec in ["rbtree:size_mib=1,threads=2", "ycsb:size_mib=1,threads=2,data=shared", "mix1"] {
            let w = parse(spec);
            let run =
                |seed| -> Vec<Vec<Event>> { w.thread_streams(seed, 0, 5_000, 8 << 30).unwrap().into_iter().map(|s| s.collect()).collect() };
            assert_eq!(run(7), run(7), "{spec}");
            assert_ne!(run(7), run(8), "{spec}");
            assert_eq!(w.generate(10, 7).unwrap(), w.generate(10, 7).unwrap());
            for (t, s) in w.thread_streams(7, 0, 5_000, 8 << 30).unwrap().into_iter().enumerate() {
                assert_eq!(s.map(|e| e.instructions()).sum::<u64>(), 5_000, "{spec} thread {t}: its own limit");
            }
        }
    }

    #[test]
    fn traces_run_one_per_core() {
        use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
        let dir = crate::workload::tests::scratch_dir("threads");
        let mk = |name: &str, addr: u64| {
            let p = dir.join(name);
            let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Physical, true)).unwrap();
            for i in 0..4 {
                w.write(&TraceRecord::mem(Op::Store, addr + 64 * i, 8).after(1)).unwrap();
            }
            w.finish().unwrap();
            p.display().to_string()
        };
        let (a, b) = (mk("a.trace", 0x1000), mk("b.trace", 0x2000));
        let w = parse(&format!("trace:{a},{b}"));
        assert_eq!(w.threads(), 2);
        assert_eq!(parse(&w.name()), w);
        assert_eq!(w.instruction_streams().unwrap_err(), parse(&format!("trace:{a}")).instruction_stream().unwrap_err());
        let span = partition_span(1 << 30, 2).unwrap();
        let streams = w.thread_streams(1, 0, u64::MAX, 1 << 30).unwrap();
        for (t, s) in streams.into_iter().enumerate() {
            let addrs: Vec<u64> = s.map(|e| e.addr).collect();
            let base = if t == 0 { 0x1000 } else { 0x2000 + span };
            assert_eq!(addrs, (0..4).map(|i| base + 64 * i).collect::<Vec<_>>(), "thread {t}");
        }
        // Merged: alternating until both end.
        let m: Vec<u8> = w.stream(1, u64::MAX, 1 << 30).unwrap().map(|e| e.thread).collect();
        assert_eq!(m, [0, 1, 0, 1, 0, 1, 0, 1]);
        // The unlabelled mix form takes traces too; one path stays one trace.
        assert_eq!(parse(&format!("mix:trace:{a},trace:{b}")).threads(), 2);
        assert!(matches!(parse(&format!("trace:{a}")), WorkloadKind::Trace(_)));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn workload_files_take_threads_and_mixes() {
        let dir = crate::workload::tests::scratch_dir("threads-toml");
        let f = dir.join("w.toml");
        std::fs::write(&f, "kind = \"hash\"\nthreads = 4\ndata = \"shared\"\nsize_mib = 2\n").unwrap();
        assert_eq!(parse(f.to_str().unwrap()), parse("hash:threads=4,data=shared,size_mib=2"));
        std::fs::write(&f, "kind = \"mix\"\nparts = [\"a=array-swap\", \"b=queue:size_mib=1,gap=3\"]\n").unwrap();
        assert_eq!(parse(f.to_str().unwrap()), parse("mix:a=array-swap,b=queue:size_mib=1,gap=3"));
        std::fs::write(&f, "kind = \"btree\"\nthreads = 100\n").unwrap();
        let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("w.toml") && e.contains("threads"), "{e}");
        std::fs::write(&f, "kind = \"synthetic\"\nthreads = 2\n").unwrap();
        let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
        assert!(e.contains("threads") && e.contains("persistent generators"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_merged_stream_passes_the_crash_oracle() {
        use crate::verify::oracle::{CrashCheck, CrashPoints};
        let one = crate::config::load_preset("cobcm", &[]).unwrap();
        for spec in ["hash:size_mib=1,threads=3,data=shared", "queue:size_mib=1,threads=2", "mix:a=array-swap,b=btree:size_mib=1"] {
            let w = parse(spec);
            // One core per thread, each with its own SecPB.
            let cfg = one.with_cores_for(w.threads()).unwrap();
            let events = w.generate(40, 7).unwrap();
            assert!(events.iter().any(|e| e.thread > 0), "{spec}");
            let r = CrashCheck {
                cfg: &cfg,
                workload_name: w.name(),
                events,
                ops: 40,
                seed: 7,
                points: CrashPoints::Sample(40),
                max_listed: 5,
                guarantee: None,
            }
            .run()
            .unwrap();
            assert_eq!(r.crash_points, 40, "{spec}");
            assert_eq!(r.violations, 0, "{spec}: {:?}", r.violation_list.first());
            let m = r.multicore.as_ref().unwrap_or_else(|| panic!("{spec}: no multi-core report"));
            assert_eq!((m.cores, m.undrained_points), (w.threads(), 0), "{spec}");
        }
    }

    #[test]
    fn notes_say_how_memory_is_shared_or_partitioned() {
        let n = parse("btree:size_mib=1,threads=2").stream(1, 1000, 8 << 30).unwrap().notes();
        assert!(n.iter().any(|x| x.contains("partitioned") && x.contains("mix(seed, t)")), "{n:?}");
        assert!(n.iter().any(|x| x.contains("undo log") && x.contains("span")), "{n:?}");
        assert!(n.iter().any(|x| x.contains("implicit")), "the part's own notes: {n:?}");
        let n = parse("mix1").notes();
        assert!(n.iter().any(|x| x.contains("multi-programmed")), "{n:?}");
        assert!(n.iter().any(|x| x.contains("thread 3") && x.contains("synthetic")), "{n:?}");
    }
}
