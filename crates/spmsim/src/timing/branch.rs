//! Branch prediction for the `ooo` core: a tournament predictor of the
//! kind gem5's O3 CPU uses by default (`TournamentBP`, after the Alpha
//! 21264: a local predictor indexed by per-branch history, a global one
//! indexed by the global history, and a choice table between them), a
//! target buffer for indirect branches and a return address stack.

use crate::config::OooConfig;

/// A 2-bit saturating counter's update.
fn bump(c: &mut u8, up: bool) {
    if up {
        *c = (*c + 1).min(3);
    } else {
        *c = c.saturating_sub(1);
    }
}

pub struct Tournament {
    local_history: Vec<u16>,
    local_counters: Vec<u8>,
    global_counters: Vec<u8>,
    choice: Vec<u8>,
    global_history: u64,
    btb: Vec<(u64, u64)>,
    ras: Vec<u64>,
    ras_top: usize,
    ras_live: usize,
}

impl Tournament {
    pub fn new(c: &OooConfig) -> Self {
        Tournament {
            local_history: vec![0; c.local_history_entries as usize],
            // Weakly taken, as gem5's counters start.
            local_counters: vec![2; c.local_counter_entries as usize],
            global_counters: vec![2; c.global_counter_entries as usize],
            choice: vec![2; c.global_counter_entries as usize],
            global_history: 0,
            btb: vec![(u64::MAX, 0); c.btb_entries as usize],
            ras: vec![0; c.ras_entries as usize],
            ras_top: 0,
            ras_live: 0,
        }
    }

    /// Predict the conditional branch at `pc`, learn its outcome; true if
    /// the prediction was right.
    pub fn conditional(&mut self, pc: u64, taken: bool) -> bool {
        let lh_i = (pc as usize) % self.local_history.len();
        let lh = self.local_history[lh_i] as usize % self.local_counters.len();
        let gh = (self.global_history as usize) % self.global_counters.len();
        let local = self.local_counters[lh] >= 2;
        let global = self.global_counters[gh] >= 2;
        let use_global = self.choice[gh] >= 2;
        let predicted = if use_global { global } else { local };
        if local != global {
            bump(&mut self.choice[gh], global == taken);
        }
        bump(&mut self.local_counters[lh], taken);
        bump(&mut self.global_counters[gh], taken);
        let mask = self.local_counters.len() - 1;
        self.local_history[lh_i] = (((lh << 1) | taken as usize) & mask) as u16;
        self.global_history = self.global_history << 1 | taken as u64;
        predicted == taken
    }

    /// An indirect branch at `pc` went to `target`: right if the target
    /// buffer held that target for it.
    pub fn indirect(&mut self, pc: u64, target: u64) -> bool {
        let i = (pc as usize) % self.btb.len();
        let ok = self.btb[i] == (pc, target);
        self.btb[i] = (pc, target);
        ok
    }

    pub fn call(&mut self, return_address: u64) {
        self.ras_top = (self.ras_top + 1) % self.ras.len();
        self.ras[self.ras_top] = return_address;
        self.ras_live = (self.ras_live + 1).min(self.ras.len());
    }

    /// A return to `target`: right if the stack's top was that address.
    pub fn ret(&mut self, target: u64) -> bool {
        if self.ras_live == 0 {
            return false;
        }
        let predicted = self.ras[self.ras_top];
        self.ras_top = (self.ras_top + self.ras.len() - 1) % self.ras.len();
        self.ras_live -= 1;
        predicted == target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_a_loop_and_a_pattern() {
        let mut t = Tournament::new(&OooConfig::default());
        // A loop branch taken 7 times then not taken, many times over:
        // once warm, at most the exit mispredicts.
        let mut wrong = 0;
        for round in 0..200 {
            for k in 0..8 {
                let ok = t.conditional(0x4010, k != 7);
                if round >= 100 && !ok {
                    wrong += 1;
                }
            }
        }
        assert!(wrong <= 100, "{wrong} mispredictions in 800 warm branches");
        // Alternating outcomes: learnt by history.
        let mut wrong = 0;
        for k in 0..2000 {
            if !t.conditional(0x5000, k % 2 == 0) && k >= 1000 {
                wrong += 1;
            }
        }
        assert!(wrong < 20, "{wrong}");
    }

    #[test]
    fn returns_and_indirect_targets() {
        let mut t = Tournament::new(&OooConfig::default());
        assert!(!t.ret(0x10), "an empty stack predicts nothing");
        t.call(0x100);
        t.call(0x200);
        assert!(t.ret(0x200));
        assert!(t.ret(0x100));
        assert!(!t.indirect(0x50, 0x900));
        assert!(t.indirect(0x50, 0x900));
        assert!(!t.indirect(0x50, 0xA00), "a new target mispredicts");
    }
}
