//! Workloads as event streams. Each generator is seeded and deterministic
//! and yields events without end; callers bound a run by operations or by
//! instructions, so no run holds its whole workload in memory.
//!
//! An [`Event`] is one memory-level operation of the program, preceded by
//! `gap` non-memory instructions: a load, a store of 1..=8 bytes inside one
//! 64 B block, a fence, or a marker (transaction begin/commit). Stores
//! flagged `log` write the undo log.

mod array_swap;
mod random_writes;
mod seq_writes;
mod synthetic;

pub use synthetic::SyntheticParams;

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    Load,
    Store,
    Fence,
    TxBegin,
    TxCommit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Event {
    pub op: Op,
    /// Byte address (stores and loads).
    pub addr: u64,
    pub size: u8,
    /// Stored value, little-endian in the low `size` bytes.
    pub value: u64,
    /// The store writes the undo-log region.
    pub log: bool,
    /// Non-memory instructions executed before this event.
    pub gap: u32,
}

impl Event {
    pub fn store(addr: u64, size: u8, value: u64, log: bool) -> Event {
        debug_assert!((1..=8).contains(&size) && addr % 64 + size as u64 <= 64);
        Event { op: Op::Store, addr, size, value, log, gap: 0 }
    }
    pub fn load(addr: u64, size: u8) -> Event {
        Event { op: Op::Load, addr, size, value: 0, log: false, gap: 0 }
    }
    pub fn marker(op: Op) -> Event {
        Event { op, addr: 0, size: 0, value: 0, log: false, gap: 0 }
    }
    pub fn after(mut self, gap: u32) -> Event {
        self.gap = gap;
        self
    }
    pub fn block(&self) -> u64 {
        self.addr / 64
    }
    /// Instructions this event stands for: its gap plus itself, except
    /// markers, which are not instructions.
    pub fn instructions(&self) -> u64 {
        self.gap as u64 + matches!(self.op, Op::Load | Op::Store | Op::Fence) as u64
    }
    pub fn describe(&self) -> String {
        match self.op {
            Op::Store => format!("store{} {:#x} <- {:#x}{}", self.size * 8, self.addr, self.value, if self.log { " (log)" } else { "" }),
            Op::Load => format!("load{} {:#x}", self.size * 8, self.addr),
            Op::Fence => "fence".into(),
            Op::TxBegin => "tx-begin".into(),
            Op::TxCommit => "tx-commit".into(),
        }
    }
}

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
}

impl WorkloadKind {
    pub const NAMED: [&'static str; 4] = ["random-writes", "seq-writes", "array-swap", "synthetic[:ppti=P,nwpe=N,footprint_mib=F,loads_pti=L]"];

    pub fn name(&self) -> String {
        match self {
            WorkloadKind::RandomWrites => "random-writes".into(),
            WorkloadKind::SeqWrites => "seq-writes".into(),
            WorkloadKind::ArraySwap => "array-swap".into(),
            WorkloadKind::Synthetic(p) => p.name(),
        }
    }

    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "random-writes" => Ok(WorkloadKind::RandomWrites),
            "seq-writes" => Ok(WorkloadKind::SeqWrites),
            "array-swap" => Ok(WorkloadKind::ArraySwap),
            s if s == "synthetic" || s.starts_with("synthetic:") => SyntheticParams::parse(s).map(WorkloadKind::Synthetic),
            _ => Err(format!("unknown workload `{name}`; known workloads: {}", Self::NAMED.join(", "))),
        }
    }

    pub fn generator(&self, seed: u64) -> Box<dyn Generator> {
        match self {
            WorkloadKind::RandomWrites => Box::new(random_writes::RandomWrites::new(seed, random_writes::Params::default())),
            WorkloadKind::SeqWrites => Box::new(seq_writes::SeqWrites::new(seed, seq_writes::Params::default())),
            WorkloadKind::ArraySwap => Box::new(array_swap::ArraySwap::new(seed, array_swap::Params::default())),
            WorkloadKind::Synthetic(p) => Box::new(synthetic::Synthetic::new(seed, p.clone())),
        }
    }

    /// The events of `ops` operations.
    pub fn generate(&self, ops: u64, seed: u64) -> Vec<Event> {
        let mut g = self.generator(seed);
        let mut v = Vec::new();
        for _ in 0..ops {
            g.next_op(&mut v);
        }
        v
    }

    /// A stream of events that ends once `instructions` have been produced.
    pub fn stream(&self, seed: u64, instructions: u64) -> EventStream {
        EventStream { gen: self.generator(seed), buf: Vec::new(), pos: 0, left: instructions }
    }
}

pub struct EventStream {
    gen: Box<dyn Generator>,
    buf: Vec<Event>,
    pos: usize,
    left: u64,
}

impl Iterator for EventStream {
    type Item = Event;
    fn next(&mut self) -> Option<Event> {
        if self.left == 0 {
            return None;
        }
        while self.pos >= self.buf.len() {
            self.buf.clear();
            self.pos = 0;
            self.gen.next_op(&mut self.buf);
        }
        let e = self.buf[self.pos];
        self.pos += 1;
        self.left = self.left.saturating_sub(e.instructions());
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
            let a = w.generate(200, 5);
            assert_eq!(a, w.generate(200, 5), "{name}");
            assert!(a.iter().any(|e| e.op == Op::Store));
            for e in a.iter().filter(|e| e.op == Op::Store) {
                assert!(e.addr % 64 + e.size as u64 <= 64);
            }
            let n: u64 = w.stream(5, 10_000).map(|e| e.instructions()).sum();
            assert!((10_000..10_000 + 2000).contains(&n), "{name}: {n}");
        }
        let r = WorkloadKind::RandomWrites;
        assert_ne!(r.generate(50, 1), r.generate(50, 2));
    }
}
