//! Workloads as event streams. Each generator is seeded and deterministic.
//!
//! An [`Event`] is one memory-level operation of the program: a load, a
//! store of 1..=8 bytes inside one 64 B block, a fence, or a marker
//! (transaction begin/commit). Stores flagged `log` write the undo log.

mod array_swap;
mod random_writes;
mod seq_writes;

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
}

impl Event {
    pub fn store(addr: u64, size: u8, value: u64, log: bool) -> Event {
        debug_assert!(size >= 1 && size <= 8 && addr % 64 + size as u64 <= 64);
        Event { op: Op::Store, addr, size, value, log }
    }
    pub fn load(addr: u64, size: u8) -> Event {
        Event { op: Op::Load, addr, size, value: 0, log: false }
    }
    pub fn marker(op: Op) -> Event {
        Event { op, addr: 0, size: 0, value: 0, log: false }
    }
    pub fn block(&self) -> u64 {
        self.addr / 64
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

/// The registry of built-in workloads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WorkloadKind {
    RandomWrites,
    SeqWrites,
    ArraySwap,
}

impl WorkloadKind {
    pub const ALL: [WorkloadKind; 3] = [WorkloadKind::RandomWrites, WorkloadKind::SeqWrites, WorkloadKind::ArraySwap];

    pub fn name(self) -> &'static str {
        match self {
            WorkloadKind::RandomWrites => "random-writes",
            WorkloadKind::SeqWrites => "seq-writes",
            WorkloadKind::ArraySwap => "array-swap",
        }
    }

    pub fn parse(name: &str) -> Result<Self, String> {
        Self::ALL.into_iter().find(|w| w.name() == name).ok_or_else(|| {
            format!("unknown workload `{name}`; known workloads: {}", Self::ALL.map(|w| w.name()).join(", "))
        })
    }

    /// `ops` operations of the workload (what an operation is depends on
    /// the workload: a store, or a transaction).
    pub fn generate(self, ops: u64, seed: u64) -> Vec<Event> {
        match self {
            WorkloadKind::RandomWrites => random_writes::generate(ops, seed, &random_writes::Params::default()),
            WorkloadKind::SeqWrites => seq_writes::generate(ops, seed, &seq_writes::Params::default()),
            WorkloadKind::ArraySwap => array_swap::generate(ops, seed, &array_swap::Params::default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_deterministic_and_stores_stay_in_a_block() {
        for w in WorkloadKind::ALL {
            let a = w.generate(200, 5);
            assert_eq!(a, w.generate(200, 5), "{}", w.name());
            assert!(a.iter().any(|e| e.op == Op::Store));
            for e in a.iter().filter(|e| e.op == Op::Store) {
                assert!(e.addr % 64 + e.size as u64 <= 64);
            }
        }
        assert_ne!(WorkloadKind::RandomWrites.generate(50, 1), WorkloadKind::RandomWrites.generate(50, 2));
    }
}
