//! Where the threads' events come from: each thread's own program in its
//! partition, or one shared generator dealing transactions in ticket
//! order (the layouts are in the folder's docs).
//!
//! ```text
//!  partitioned:  Partition(t) = part t's Source, seeded thread_seed(seed, t),
//!                addresses + t * span          -> thread t's stream
//!                RoundRobin(Partition..)       -> the merged stream
//!  shared:       SharedCore(generator) -> unit k (one transaction + lock
//!                events) for thread k mod N
//!                SharedThread(t): its units, the others' queued
//!                SharedMerged: every unit in ticket order (the merged stream)
//! ```

use super::{partition_span, shared_address, thread_seed, DataMode, ThreadSpec, GENERATE_CAPACITY, LOCK_WORD};
use crate::workload::{Event, Generator, Op, Source};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// A source of operations that can fail (a thread's partition, a trace).
pub(in crate::workload) trait OpSource: Send {
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

impl ThreadSpec {
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
    pub(in crate::workload) fn merged(&self, seed: u64, capacity_bytes: u64) -> Result<Box<dyn OpSource>, String> {
        let capacity_bytes = if capacity_bytes == u64::MAX { GENERATE_CAPACITY } else { capacity_bytes };
        match self.mode {
            DataMode::Shared => Ok(Box::new(SharedMerged(self.shared_core(seed)?))),
            DataMode::Partitioned => {
                let parts = (0..self.threads).map(|t| self.partition(t, seed, capacity_bytes)).collect::<Result<Vec<_>, _>>()?;
                Ok(Box::new(RoundRobin { done: vec![false; parts.len()], parts, next: 0 }))
            }
        }
    }

    /// Thread `t`'s source of partitioned data, from its start: one of
    /// [`Self::per_thread`]'s, or a fresh one for a core running on after
    /// its region of interest.
    pub(in crate::workload) fn thread_partition(&self, t: usize, seed: u64, capacity_bytes: u64) -> Result<Box<dyn OpSource>, String> {
        Ok(Box::new(self.partition(t, seed, capacity_bytes)?))
    }

    /// One source per thread.
    pub(in crate::workload) fn per_thread(&self, seed: u64, capacity_bytes: u64) -> Result<Vec<Box<dyn OpSource>>, String> {
        match self.mode {
            DataMode::Shared => {
                let core = Arc::new(Mutex::new(self.shared_core(seed)?));
                Ok((0..self.threads).map(|t| Box::new(SharedThread { core: core.clone(), t }) as Box<dyn OpSource>).collect())
            }
            DataMode::Partitioned => (0..self.threads).map(|t| self.thread_partition(t, seed, capacity_bytes)).collect(),
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
            Source::Records(r) => r.next_op(out).map_err(|e| format!("thread {t} ({}): {e}", self.name))?,
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
        matches!(self.src, Source::Trace(_) | Source::Records(_))
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
    gen: Box<dyn Generator>,
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
