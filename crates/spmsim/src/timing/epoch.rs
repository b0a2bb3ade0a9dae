//! Timing of the relaxed persistency models at the memory controller
//! (`persistence.model = "epoch" | "tep"`): a core's persistent stores
//! stay in L1D, coalescing per line, until a barrier sends the epoch's
//! lines to the memory controller (clwb), one write per line.
//!
//! ```text
//!  epoch (Pelley et al.; Secon's no-TEP ablation):
//!    barrier: every line of the epoch goes to the MC; the core waits for
//!             their ACKs (a deferred root update delays an ACK)
//!  TEP (Secon 3.3, Fig. 7c):
//!    barrier closing a paired epoch: its log lines go at once; its data
//!             lines go once the previous log epoch is ACKed; the core goes on
//!    an epoch after one that wrote no log line is regular (the commit):
//!             its lines go once everything earlier is ACKed, and the barrier
//!             closing it waits for every ACK (the transaction is durable)
//! ```
//! A barrier that closes an epoch with no store opens no new one (the
//! workloads write `fence; epoch` for one boundary), as `persist::tep`
//! does in the functional model.

use crate::config::PersistencyModel;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;

/// A line the epoch wrote: the bytes its stores changed and when the last
/// of them was released.
pub(super) struct EpochLine {
    pub block: u64,
    pub bytes: [u8; 64],
    /// Which bytes the epoch's stores wrote.
    pub mask: u64,
    pub release: u64,
    pub data_ready: u64,
    pub log: bool,
}

/// One core's lines of the open epoch, and the ACK times the model orders by.
pub(super) struct EpochLines {
    pub model: PersistencyModel,
    /// The open epoch's lines by block, and their blocks oldest first.
    lines: FxHashMap<u64, EpochLine>,
    order: VecDeque<u64>,
    /// Lines L1D can hold: one more makes the oldest leave (a write-back
    /// the cache does on its own, still in the model's order).
    capacity: usize,
    /// The open epoch follows one that wrote no log line (TEP's regular epoch).
    pub regular: bool,
    /// When the log lines sent so far are ACKed (TEP's log state table).
    pub log_ack: u64,
}

/// The lines a barrier sends, each with the earliest time it may go.
pub(super) struct Flush {
    pub sends: Vec<(EpochLine, u64)>,
    /// The core waits at the barrier for every ACK.
    pub wait_for_acks: bool,
}

impl EpochLines {
    pub fn new(model: PersistencyModel, capacity_lines: usize) -> Self {
        // A thread's first epoch is regular, as `persist::tep` has it: what
        // it stores before its first barrier is durable at that barrier.
        EpochLines {
            model,
            lines: FxHashMap::default(),
            order: VecDeque::new(),
            capacity: capacity_lines.max(1),
            regular: true,
            log_ack: 0,
        }
    }

    /// Lines the open epoch holds.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether stores wait in L1D for a barrier under this model.
    pub fn buffers(&self) -> bool {
        self.model != PersistencyModel::Strict
    }

    /// A store into the epoch: a line already written this epoch takes its
    /// bytes (coalesced); otherwise a new line.
    pub fn store(&mut self, block: u64, off: usize, bytes: &[u8], release: u64, data_ready: u64, log: bool) {
        let mask = (((1u128 << bytes.len()) - 1) as u64) << off;
        match self.lines.get_mut(&block) {
            Some(l) => {
                l.bytes[off..off + bytes.len()].copy_from_slice(bytes);
                l.mask |= mask;
                l.release = l.release.max(release);
                l.data_ready = l.data_ready.max(data_ready);
                l.log |= log;
            }
            None => {
                let mut b = [0; 64];
                b[off..off + bytes.len()].copy_from_slice(bytes);
                self.lines.insert(block, EpochLine { block, bytes: b, mask, release, data_ready, log });
                self.order.push_back(block);
            }
        }
    }

    /// When the open epoch holds more lines than L1D can, its oldest line
    /// leaves at `t`, when its order allows (as at a barrier).
    pub fn overflow(&mut self, t: u64, all_ack: u64) -> Option<(EpochLine, u64)> {
        if self.lines.len() <= self.capacity {
            return None;
        }
        let block = self.order.pop_front()?;
        let l = self.lines.remove(&block)?;
        let at = self.earliest(&l, t, all_ack);
        Some((l, at))
    }

    /// The earliest a line of the open epoch may go at `t`.
    fn earliest(&self, l: &EpochLine, t: u64, all_ack: u64) -> u64 {
        let at = l.release.max(t);
        match self.model {
            PersistencyModel::Strict | PersistencyModel::Epoch => at,
            PersistencyModel::Tep if self.regular => at.max(all_ack),
            PersistencyModel::Tep if l.log => at,
            PersistencyModel::Tep => at.max(self.log_ack),
        }
    }

    /// A barrier at `t`: which lines go and from when. `all_ack` is when
    /// every line sent so far is ACKed.
    pub fn barrier(&mut self, t: u64, all_ack: u64) -> Flush {
        let mut map = std::mem::take(&mut self.lines);
        let lines: Vec<EpochLine> = self.order.drain(..).filter_map(|b| map.remove(&b)).collect();
        if lines.is_empty() {
            return Flush { sends: Vec::new(), wait_for_acks: self.model == PersistencyModel::Epoch };
        }
        let wrote_log = lines.iter().any(|l| l.log);
        // Log lines first: they wait for nothing but the log before them,
        // which went in an earlier barrier; the data lines of a pair wait
        // for the previous log epoch's ACK (TEP; one order for epoch).
        let (logs, data): (Vec<EpochLine>, Vec<EpochLine>) = lines.into_iter().partition(|l| l.log);
        let sends: Vec<(EpochLine, u64)> = logs
            .into_iter()
            .chain(data)
            .map(|l| {
                let a = self.earliest(&l, t, all_ack);
                (l, a)
            })
            .collect();
        let wait_for_acks = self.model != PersistencyModel::Tep || self.regular;
        let flush = Flush { sends, wait_for_acks };
        self.regular = !wrote_log;
        flush
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_to_a_line_coalesce_until_the_barrier() {
        let mut e = EpochLines::new(PersistencyModel::Epoch, 512);
        e.store(7, 0, &[1; 8], 10, 10, false);
        e.store(7, 8, &[2; 8], 12, 11, false);
        e.store(9, 0, &[3; 8], 13, 13, false);
        let f = e.barrier(20, 0);
        assert_eq!(f.sends.len(), 2, "two lines, three stores");
        let (l, at) = &f.sends[0];
        assert_eq!((l.block, l.mask, l.release, *at), (7, 0xffff, 12, 20));
        assert!(f.wait_for_acks && e.len() == 0);
        assert!(e.barrier(30, 0).sends.is_empty(), "an empty epoch sends nothing");
    }

    #[test]
    fn tep_orders_data_after_its_log_and_the_commit_after_everything() {
        let mut e = EpochLines::new(PersistencyModel::Tep, 512);
        // The first epoch is regular: its barrier waits for its ACKs.
        e.store(3, 0, &[9; 8], 1, 1, true);
        assert!(e.barrier(5, 0).wait_for_acks);
        // {L1} F: the log line goes at once; the core does not wait.
        e.store(1, 0, &[1; 8], 10, 10, true);
        let f = e.barrier(20, 0);
        assert_eq!(f.sends.iter().map(|(l, a)| (l.block, *a)).collect::<Vec<_>>(), vec![(1, 20)]);
        assert!(!f.wait_for_acks);
        e.log_ack = 500; // L1's ACK
                         // {D1 L2} F: L2 goes at once, D1 after L1's ACK.
        e.store(100, 0, &[2; 8], 30, 30, false);
        e.store(2, 0, &[3; 8], 31, 31, true);
        let f = e.barrier(40, 600);
        assert_eq!(f.sends.iter().map(|(l, a)| (l.block, *a)).collect::<Vec<_>>(), vec![(2, 40), (100, 500)]);
        // {D2} F closes an epoch with no log line: the next is regular.
        e.store(101, 0, &[4; 8], 50, 50, false);
        let f = e.barrier(60, 700);
        assert!(!f.wait_for_acks);
        // {header} F: after every ACK, and the core waits.
        e.store(0, 0, &[0; 8], 70, 70, true);
        let f = e.barrier(80, 900);
        assert_eq!(f.sends[0].1, 900);
        assert!(f.wait_for_acks);
    }
}

#[cfg(test)]
mod capacity_tests {
    use super::*;

    #[test]
    fn an_epoch_larger_than_l1d_sends_its_oldest_lines_early() {
        let mut e = EpochLines::new(PersistencyModel::Epoch, 2);
        for b in 0..3 {
            e.store(b, 0, &[1; 8], 10 + b, 10, false);
            if b < 2 {
                assert!(e.overflow(20, 0).is_none());
            }
        }
        let (l, at) = e.overflow(20, 0).expect("three lines in a two-line L1D");
        assert_eq!((l.block, at, e.len()), (0, 20, 2));
        assert_eq!(e.barrier(30, 0).sends.iter().map(|(l, _)| l.block).collect::<Vec<_>>(), vec![1, 2]);
    }
}
