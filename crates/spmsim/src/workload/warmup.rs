//! The warm-up of a run, as ChampSim has it (`--warmup-instructions`):
//! the first instructions run through the whole model (memory contents,
//! caches, metadata caches, persist buffer, PCM queues) but the statistics
//! of the region of interest start after them.
//!
//! ```text
//!  events: [ warm-up: >= W instructions, the last one whole ][ region of interest: N ]
//!                                                           ^ first event that starts
//!                                                             an instruction after W
//! ```
//! The warm-up ends at an instruction boundary: the event that reaches
//! `W` belongs to it with its whole gap, and so do the later pieces of its
//! instruction (`same_instruction`), as ChampSim's warm-up ends at the
//! first retirement that reaches its count. The event stream and the
//! timing model each keep one of these, so they agree on where the region
//! of interest begins.

use super::Event;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Warmup {
    /// Instructions asked for.
    asked: u64,
    /// Instructions still to run before the warm-up can end.
    left: u64,
    /// Instructions the warm-up took (at least the count asked for).
    taken: u64,
    over: bool,
}

impl Warmup {
    pub fn new(instructions: u64) -> Self {
        Warmup { asked: instructions, left: instructions, taken: 0, over: false }
    }

    /// Whether `e`, the next event of the run, belongs to the warm-up;
    /// false from the first event of the region of interest on.
    pub fn takes(&mut self, e: &Event) -> bool {
        if self.over {
            return false;
        }
        if self.left == 0 && !e.same_instruction {
            self.over = true;
            return false;
        }
        let n = e.instructions();
        self.left = self.left.saturating_sub(n);
        self.taken += n;
        true
    }

    pub fn is_over(&self) -> bool {
        self.over
    }

    /// Instructions the warm-up was asked to run.
    pub fn asked(&self) -> u64 {
        self.asked
    }

    /// Instructions the warm-up ran so far.
    pub fn instructions(&self) -> u64 {
        self.taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    #[test]
    fn the_warmup_ends_at_the_first_instruction_after_its_count() {
        let mut w = Warmup::new(5);
        assert!(w.takes(&Event::load(0, 8).after(2)), "3 instructions");
        assert!(w.takes(&Event::store(64, 8, 1, false).after(3)), "7: the count is reached inside this event's gap");
        let piece = Event { same_instruction: true, ..Event::store(72, 8, 2, false) };
        assert!(w.takes(&piece), "the rest of the instruction that reached the count");
        assert!(!w.is_over());
        assert!(!w.takes(&Event::marker(Op::Fence)), "the next instruction is the region of interest's first");
        assert!(w.is_over() && w.instructions() == 7);
        assert!(!w.takes(&Event::load(0, 8)), "and it stays over");
        let mut none = Warmup::new(0);
        assert!(!none.takes(&Event::load(0, 8)) && none.instructions() == 0);
    }
}
