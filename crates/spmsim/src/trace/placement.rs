//! Addresses for the instructions an instruction stream keeps no pc for.
//!
//! The stream (`trace/insn.rs`) records the pc of branches only. The
//! instructions between two branches run one after another up to the
//! second, so they are placed at `STEP`-byte steps ending just before the
//! branch that ends them; after a branch whose target the stream knows (a
//! taken indirect branch or return) they start at that target; with no
//! branch to end them (the stream's end, or more than `HOLD` of them),
//! they follow the last address placed. A ChampSim trace written from a
//! recorded program (`champsim_write.rs`) carries these addresses, and the
//! out-of-order core's fetch (`timing/frontend.rs`) reads its instruction
//! blocks by them ([`super::insn::InsnReader::next_placed_batch`]).

use super::insn::Insn;
use super::vex::BranchKind;

/// Bytes between the instructions placed before a branch.
pub const STEP: u64 = 4;
/// Instructions held back, at most, waiting for the next branch's pc.
pub const HOLD: usize = 4096;

/// The placing rule's state: the last address placed and a known target.
#[derive(Clone, Copy, Debug, Default)]
pub struct Placement {
    /// Where the next instructions start, when the stream says (a taken
    /// indirect branch's or return's target).
    target: Option<u64>,
    last: u64,
}

impl Placement {
    /// The address of the first of `plain` instructions that run before
    /// the branch at `end` (`None`: no branch ends them); the others
    /// follow at `STEP`-byte steps.
    pub fn first(&mut self, plain: u64, end: Option<u64>) -> u64 {
        let before = end.and_then(|pc| pc.checked_sub(STEP * plain)).filter(|&b| b > 0);
        self.target.take().or(before).unwrap_or(self.last + STEP)
    }

    /// The last instruction placed is at `ip`.
    pub fn placed(&mut self, ip: u64) {
        self.last = ip;
    }

    /// The branch `b` ended a run of instructions: where the next start,
    /// if the stream knows.
    pub fn after_branch(&mut self, b: &Insn) {
        let known = matches!(b.branch, BranchKind::IndirectJump | BranchKind::IndirectCall | BranchKind::Return);
        self.target = (known && b.taken && b.target != 0).then_some(b.target);
    }

    /// Give the instructions of `run` their addresses: `run`'s last
    /// instruction is the branch that ends it when `ended` (it keeps its
    /// pc), else none ends it.
    pub fn place(&mut self, run: &mut [Insn], ended: bool) {
        let plain = run.len() - ended as usize;
        let end = ended.then(|| run[plain].pc);
        let mut at = self.first(plain as u64, end);
        for i in &mut run[..plain] {
            i.pc = at;
            at += STEP;
        }
        if let Some(last) = run.last() {
            self.placed(last.pc);
        }
        if ended {
            self.after_branch(&run[plain]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn branch(kind: BranchKind, taken: bool, pc: u64, target: u64) -> Insn {
        Insn { branch: kind, taken, pc, target, ..Insn::default() }
    }

    #[test]
    fn instructions_before_a_branch_end_just_before_it() {
        let mut p = Placement::default();
        let mut run = vec![Insn::default(); 3];
        run.push(branch(BranchKind::Conditional, false, 0x1000, 0));
        p.place(&mut run, true);
        let pcs: Vec<u64> = run.iter().map(|i| i.pc).collect();
        assert_eq!(pcs, [0xff4, 0xff8, 0xffc, 0x1000]);
    }

    #[test]
    fn a_known_target_starts_the_next_run_and_an_unended_run_follows_the_last_address() {
        let mut p = Placement::default();
        let mut run = vec![branch(BranchKind::Return, true, 0x5000, 0x4321)];
        p.place(&mut run, true);
        let mut next = vec![Insn::default(); 2];
        next.push(branch(BranchKind::DirectJump, true, 0x9000, 0));
        p.place(&mut next, true);
        assert_eq!([next[0].pc, next[1].pc, next[2].pc], [0x4321, 0x4325, 0x9000]);
        let mut tail = vec![Insn::default(); 2];
        p.place(&mut tail, false);
        assert_eq!([tail[0].pc, tail[1].pc], [0x9004, 0x9008]);
    }

    #[test]
    fn a_branch_too_near_address_zero_places_its_run_after_the_last_address() {
        let mut p = Placement::default();
        p.placed(0x100);
        let mut run = vec![Insn::default(); 2];
        run.push(branch(BranchKind::Conditional, true, 0x4, 0));
        p.place(&mut run, true);
        assert_eq!([run[0].pc, run[1].pc, run[2].pc], [0x104, 0x108, 0x4]);
    }
}
