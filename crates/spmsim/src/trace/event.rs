//! The event type: one memory-level operation of a program, as every
//! workload generator and trace reader produces it and the functional
//! model, the crash oracle and the timing model consume it.
//!
//! An [`Event`] is preceded by `gap` non-memory instructions: a load of
//! 1..=64 bytes or a store of 1..=8 bytes inside one 64 B block, a fence,
//! or a marker (transaction begin/commit, epoch boundary), or `compute`
//! (the gap alone: non-memory instructions with nothing after them). Stores
//! flagged `log` write the undo log. An access flagged `same_instruction`
//! belongs to the instruction of the event before it (a wide or
//! block-straddling access split by a trace reader, or the store half of a
//! read-modify-write), so it is not counted as an instruction of its own.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Op {
    Load,
    Store,
    Fence,
    TxBegin,
    TxCommit,
    /// Epoch boundary (epoch persistency): stores of the next epoch persist
    /// after every store of this one; timed and checked as a fence, but not
    /// an instruction of its own.
    Epoch,
    /// Only non-memory instructions: the event's gap, with no operation
    /// after it. Carries the instructions a trace has after its last memory
    /// access, and the part of a gap that fits an `--instructions` limit,
    /// so instruction counts are exact.
    Compute,
}

/// Instructions an operation stands for: the `gap` of non-memory
/// instructions before it plus itself, except markers (transaction
/// begin/commit, epoch boundary, `compute`), which are not instructions,
/// and an access that belongs to the previous operation's instruction.
/// The one rule for every counter of instructions: events and trace
/// records alike.
pub fn instructions(gap: u32, op: Op, same_instruction: bool) -> u64 {
    gap as u64 + (matches!(op, Op::Load | Op::Store | Op::Fence) && !same_instruction) as u64
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
    /// Part of the previous event's instruction (see the module docs).
    pub same_instruction: bool,
    /// A later piece of the previous event's access (one access of the
    /// program split at a block boundary, or a store into 8-byte pieces),
    /// not another access of its instruction: the `ooo` core cracks an
    /// instruction into a micro-op per access, not per piece.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub piece: bool,
    /// The access is to volatile memory: outside the persistent ranges the
    /// workload's persistence policy gives (a program's stack under
    /// `persistent=heap`). A volatile store takes the ordinary write-back
    /// path: no persist buffer entry, no persist ordering, and nothing a
    /// crash must keep.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub volatile: bool,
    /// The thread (and core) that issues the event: 0 in a single-threaded
    /// workload; `t` for the `t`-th thread or program of a multi-threaded
    /// or multi-programmed one.
    #[serde(skip_serializing_if = "is_zero")]
    pub thread: u8,
}

/// Bytes of one thread's undo log, the region its `log` stores write. The
/// workloads give thread `t` the region `[t * LOG_BYTES, (t + 1) *
/// LOG_BYTES)` and start it with its header, so a machine that must know
/// the region (Secon's `set_log_region`, 3.3) can tell it from the thread or
/// from the first log store; it is part of what an event stream promises,
/// hence defined here and not by the workloads that keep it.
pub const LOG_BYTES: u64 = 4 << 20;

/// The undo-log region `[start, end)` of thread `t` (see [`LOG_BYTES`]); a
/// single-threaded workload's is thread 0's. What Secon's
/// `set_log_region(start, end)` is given (Secon 3.3).
pub const fn log_region_of_thread(t: usize) -> (u64, u64) {
    let start = t as u64 * LOG_BYTES;
    (start, start + LOG_BYTES)
}

fn is_zero(t: &u8) -> bool {
    *t == 0
}

impl Event {
    pub fn store(addr: u64, size: u8, value: u64, log: bool) -> Event {
        debug_assert!((1..=8).contains(&size) && addr % 64 + size as u64 <= 64);
        Event { op: Op::Store, addr, size, value, log, gap: 0, same_instruction: false, piece: false, volatile: false, thread: 0 }
    }
    pub fn load(addr: u64, size: u8) -> Event {
        Event { op: Op::Load, addr, size, value: 0, log: false, gap: 0, same_instruction: false, piece: false, volatile: false, thread: 0 }
    }
    pub fn marker(op: Op) -> Event {
        Event { op, addr: 0, size: 0, value: 0, log: false, gap: 0, same_instruction: false, piece: false, volatile: false, thread: 0 }
    }
    pub fn after(mut self, gap: u32) -> Event {
        self.gap = gap;
        self
    }
    pub fn on_thread(mut self, thread: u8) -> Event {
        self.thread = thread;
        self
    }
    pub fn block(&self) -> u64 {
        self.addr / 64
    }
    /// Instructions this event stands for ([`instructions`]).
    pub fn instructions(&self) -> u64 {
        instructions(self.gap, self.op, self.same_instruction)
    }
    /// Persist ordering point: a fence or an epoch boundary.
    pub fn is_barrier(&self) -> bool {
        matches!(self.op, Op::Fence | Op::Epoch)
    }
    pub fn describe(&self) -> String {
        match self.op {
            Op::Store => format!(
                "store{} {:#x} <- {:#x}{}{}",
                self.size as u32 * 8,
                self.addr,
                self.value,
                if self.log { " (log)" } else { "" },
                if self.volatile { " (volatile)" } else { "" }
            ),
            Op::Load => format!("load{} {:#x}", self.size as u32 * 8, self.addr),
            Op::Fence => "fence".into(),
            Op::TxBegin => "tx-begin".into(),
            Op::TxCommit => "tx-commit".into(),
            Op::Epoch => "epoch".into(),
            Op::Compute => format!("{} instructions without memory access", self.gap),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_continued_accesses_are_not_instructions() {
        assert_eq!(instructions(3, Op::Load, false), 4);
        assert_eq!(instructions(3, Op::Store, true), 3, "the store half of a read-modify-write");
        assert_eq!(instructions(0, Op::Fence, false), 1);
        for op in [Op::TxBegin, Op::TxCommit, Op::Epoch, Op::Compute] {
            assert_eq!(instructions(5, op, false), 5, "{op:?} is not an instruction");
        }
        assert_eq!(Event::store(64, 8, 1, false).after(2).instructions(), 3);
    }
}
