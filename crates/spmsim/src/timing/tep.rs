//! The timing of transaction-specific epoch persistency (Secon 3.3): which
//! barriers make the core wait for ACKs, and when a data store may enter
//! the persist path. The same rules as the functional model
//! (`persist::tep`), priced:
//!
//! ```text
//!  barrier between paired epochs: no wait; the next data store enters
//!      the persist path once its pair's log stores are ACKed
//!  barrier closing or opening a regular epoch (the commit): the core
//!      waits for every earlier store's ACK, as under epoch persistency
//! ```
//!
//! The ACK time of a store is when the persist path has it persistent
//! (`PersistPath::persist_barrier()`: its writes hold WPQ slots, for the
//! strict schemes). TODO(Secon): with Secon's background root update the
//! ACK comes when that update finishes; use the per-core `last_ack()` that
//! `timing/persist.rs` will expose instead of `persist_barrier()`.

use serde::Serialize;

/// What TEP's timing did (absent from the stats under another model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TepTimingStats {
    /// Barriers between paired epochs, which made the core wait for nothing.
    pub paired_barriers: u64,
    /// Barriers at a regular epoch, which waited for every earlier ACK.
    pub regular_barriers: u64,
    /// Data stores held back for their log's ACK, and the cycles they waited.
    pub log_ack_waits: u64,
    pub log_ack_wait_cycles: u64,
}

impl TepTimingStats {
    pub(super) fn add(&mut self, o: &TepTimingStats) {
        self.paired_barriers += o.paired_barriers;
        self.regular_barriers += o.regular_barriers;
        self.log_ack_waits += o.log_ack_waits;
        self.log_ack_wait_cycles += o.log_ack_wait_cycles;
    }
}

/// One core's TEP state for the timing model.
#[derive(Clone, Debug)]
pub(super) struct TepTiming {
    pair_order: bool,
    /// The current epoch's type and contents (the epoch-type rule of
    /// `persist::tep`: an epoch after one with no log store is regular; a
    /// thread's first is regular).
    regular: bool,
    has_store: bool,
    has_log: bool,
    /// Latest ACK time of the log stores of earlier epochs (a data store's
    /// gate: its pair's log and, as the functional model, every older one),
    /// and of the current epoch's.
    log_acked: u64,
    log_acked_now: u64,
}

impl TepTiming {
    pub(super) fn new(pair_order: bool) -> Self {
        TepTiming { pair_order, regular: true, has_store: false, has_log: false, log_acked: 0, log_acked_now: 0 }
    }

    /// A persistent store is about to enter the persist path at `release`:
    /// the time it may go.
    pub(super) fn gate(&mut self, release: u64, log: bool, stats: &mut TepTimingStats) -> u64 {
        self.has_store = true;
        self.has_log |= log;
        if log || self.regular || !self.pair_order || self.log_acked <= release {
            return release;
        }
        stats.log_ack_waits += 1;
        stats.log_ack_wait_cycles += self.log_acked - release;
        self.log_acked
    }

    /// A log store went down the persist path; it is ACKed at `ack`.
    pub(super) fn logged(&mut self, ack: u64) {
        self.log_acked_now = self.log_acked_now.max(ack);
    }

    /// A barrier: whether the core waits for every earlier store's ACK.
    pub(super) fn barrier(&mut self, stats: &mut TepTimingStats) -> bool {
        if !self.has_store {
            // `fence; epoch` is one boundary.
            return false;
        }
        let closing_regular = self.regular;
        self.regular = !self.has_log;
        self.has_store = false;
        self.has_log = false;
        self.log_acked = self.log_acked.max(self.log_acked_now);
        let wait = closing_regular || self.regular;
        if wait {
            stats.regular_barriers += 1;
        } else {
            stats.paired_barriers += 1;
        }
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_store_waits_for_its_log_and_paired_barriers_do_not_wait() {
        let mut s = TepTimingStats::default();
        let mut t = TepTiming::new(true);
        // The first epoch is regular: its end waits.
        assert_eq!(t.gate(10, true, &mut s), 10);
        t.logged(100);
        assert!(t.barrier(&mut s));
        // Paired: log then data, the data gated by the log's ACK.
        assert_eq!(t.gate(20, true, &mut s), 20, "log stores are never gated");
        t.logged(300);
        assert!(!t.barrier(&mut s), "a barrier between paired epochs does not wait");
        assert_eq!(t.gate(50, false, &mut s), 300, "the data waits for its log's ACK");
        assert_eq!(t.gate(400, false, &mut s), 400, "not once the ACK is in");
        assert!(t.barrier(&mut s), "the next epoch, the commit, is regular: every ACK first");
        assert!(!t.barrier(&mut s), "an empty epoch ends nothing");
        assert_eq!((s.log_ack_waits, s.log_ack_wait_cycles, s.paired_barriers, s.regular_barriers), (1, 250, 1, 2));
    }

    #[test]
    fn without_the_pair_order_nothing_is_gated() {
        let mut s = TepTimingStats::default();
        let mut t = TepTiming::new(false);
        t.gate(0, true, &mut s);
        t.barrier(&mut s);
        t.gate(1, true, &mut s);
        t.logged(500);
        t.barrier(&mut s);
        assert_eq!(t.gate(2, false, &mut s), 2);
        assert_eq!(s.log_ack_waits, 0);
    }
}
