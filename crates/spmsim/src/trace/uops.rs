//! How many micro-ops a recorded program's instructions would be as gem5's
//! x86 decoder splits them (SecPB counts PPTI per thousand
//! instructions on gem5, whose committed-instruction count is of
//! micro-ops). An estimate from what a trace and its instruction stream
//! hold, one instruction at a time:
//!
//! ```text
//!  micro-ops = loads + stores + (1 if it computes), at least 1
//!  computes  = a unit other than Load or Store (an ALU, multiply or FP op,
//!              memory operand or not), or a Load with a source that is
//!              not its address (`add 8(%rsi),%rax`: load, add), or a
//!              Store that also loads (read-modify-write: load, op, store)
//! ```
//! A `rep` instruction's iterations are one stream entry with all their
//! accesses, so it counts a micro-op per access. A source whose producer
//! came before the recording began is not in the stream, so a load-op on
//! such a register counts as a plain load: the estimate is a lower bound.
//!
//! The `ooo` core cracks each instruction it schedules into micro-ops by
//! the same rule ([`micro_ops`], `core.ooo.micro_ops = "x86"`), counting
//! the accesses as they come.

use super::event::Op;
use super::insn::{Insn, InsnReader};
use super::vex::FuClass;
use super::{RecordReader, TraceError};
use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MicroOps {
    pub instructions: u64,
    pub micro_ops: u64,
    /// Loads that also compute (two micro-ops).
    pub load_ops: u64,
    /// Stores that also load (three micro-ops).
    pub read_modify_writes: u64,
    /// Micro-ops per instruction.
    pub per_instruction: f64,
}

/// Whether an instruction with `loads` load accesses has a micro-op that
/// computes besides its accesses (the rule above).
fn computes(insn: &Insn, loads: u64) -> bool {
    match insn.class {
        FuClass::Load => (0..insn.nsrc as usize).any(|k| insn.addr_mask & (1 << k) == 0),
        FuClass::Store => loads > 0,
        _ => true,
    }
}

/// The micro-ops of one instruction with `loads` and `stores` accesses
/// (the rule above): the one rule for this estimate and for the `ooo`
/// core, which cracks instructions into them (`core.ooo.micro_ops`). An
/// instruction without accesses is one micro-op.
pub fn micro_ops(insn: &Insn, loads: u64, stores: u64) -> u64 {
    (loads + stores + computes(insn, loads) as u64).max(1)
}

/// The micro-ops of one memory instruction with its accesses.
fn memory_instruction(m: &mut MicroOps, insn: &Insn, loads: u64, stores: u64) {
    let computes = computes(insn, loads);
    m.load_ops += (insn.class == FuClass::Load && computes) as u64;
    m.read_modify_writes += (insn.class == FuClass::Store && computes) as u64;
    m.micro_ops += micro_ops(insn, loads, stores);
}

/// Walk the trace's records beside its instruction stream `s` (opened
/// for this trace, [`InsnReader::open_for`]).
pub fn estimate(r: &mut dyn RecordReader, mut s: InsnReader) -> Result<MicroOps, TraceError> {
    let mut m = MicroOps::default();
    let mut next = |m: &mut MicroOps| -> Result<Option<Insn>, TraceError> {
        let i = s.next_insn()?;
        m.instructions += i.is_some() as u64;
        Ok(i)
    };
    // The memory instruction being read: its entry, loads and stores.
    let mut open: Option<(Insn, u64, u64)> = None;
    while let Some(rec) = r.next_record()? {
        let memory = matches!(rec.op, Op::Load | Op::Store);
        if memory && rec.same_instruction {
            if let Some((_, l, st)) = open.as_mut() {
                *l += (rec.op == Op::Load) as u64;
                *st += (rec.op == Op::Store) as u64;
                continue;
            }
        }
        if let Some((insn, l, st)) = open.take() {
            memory_instruction(&mut m, &insn, l, st);
        }
        for _ in 0..rec.gap {
            match next(&mut m)? {
                Some(insn) => m.micro_ops += micro_ops(&insn, 0, 0),
                None => break,
            }
        }
        if memory {
            if let Some(insn) = next(&mut m)? {
                open = Some((insn, (rec.op == Op::Load) as u64, (rec.op == Op::Store) as u64));
            }
        } else if rec.op == Op::Fence {
            if let Some(insn) = next(&mut m)? {
                m.micro_ops += micro_ops(&insn, 0, 0);
            }
        }
    }
    if let Some((insn, l, st)) = open {
        memory_instruction(&mut m, &insn, l, st);
    }
    m.per_instruction = m.micro_ops as f64 / m.instructions.max(1) as f64;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn insn(class: FuClass, nsrc: u8, addr_mask: u8) -> Insn {
        Insn { class, nsrc, addr_mask, ..Default::default() }
    }

    #[test]
    fn each_kind_of_memory_instruction_splits_as_gem5_splits_it() {
        let mut m = MicroOps::default();
        memory_instruction(&mut m, &insn(FuClass::Load, 1, 0b1), 1, 0); // mov (%rsi),%rax
        assert_eq!(m.micro_ops, 1);
        memory_instruction(&mut m, &insn(FuClass::Load, 2, 0b01), 1, 0); // add (%rsi),%rax
        assert_eq!((m.micro_ops, m.load_ops), (3, 1));
        memory_instruction(&mut m, &insn(FuClass::Store, 2, 0b01), 0, 1); // mov %rax,(%rsi)
        assert_eq!(m.micro_ops, 4);
        memory_instruction(&mut m, &insn(FuClass::Store, 2, 0b01), 1, 1); // add %rax,(%rsi)
        assert_eq!((m.micro_ops, m.read_modify_writes), (7, 1));
        memory_instruction(&mut m, &insn(FuClass::FpMult, 2, 0b01), 1, 0); // mulsd (%rsi),%xmm0
        assert_eq!(m.micro_ops, 9);
        memory_instruction(&mut m, &insn(FuClass::Store, 2, 0b11), 16, 16); // rep movsq, 16 iterations
        assert_eq!(m.micro_ops, 9 + 33);
        // Without accesses (a plain instruction, a fence): one.
        for class in FuClass::ALL {
            assert_eq!(micro_ops(&insn(class, 1, 0), 0, 0), 1, "{class:?}");
        }
    }
}
