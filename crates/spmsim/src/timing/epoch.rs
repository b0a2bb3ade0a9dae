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
    pub lines: Vec<EpochLine>,
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
    pub fn new(model: PersistencyModel) -> Self {
        // A thread's first epoch is regular, as `persist::tep` has it: what
        // it stores before its first barrier is durable at that barrier.
        EpochLines { model, lines: Vec::new(), regular: true, log_ack: 0 }
    }

    /// Whether stores wait in L1D for a barrier under this model.
    pub fn buffers(&self) -> bool {
        self.model != PersistencyModel::Strict
    }

    /// A store into the epoch: a line already written this epoch takes its
    /// bytes (coalesced); otherwise a new line.
    pub fn store(&mut self, block: u64, off: usize, bytes: &[u8], release: u64, data_ready: u64, log: bool) {
        let mask = (((1u128 << bytes.len()) - 1) as u64) << off;
        match self.lines.iter_mut().find(|l| l.block == block) {
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
                self.lines.push(EpochLine { block, bytes: b, mask, release, data_ready, log });
            }
        }
    }

    /// A barrier at `t`: which lines go and from when. `all_ack` is when
    /// every line sent so far is ACKed.
    pub fn barrier(&mut self, t: u64, all_ack: u64) -> Flush {
        let lines = std::mem::take(&mut self.lines);
        if lines.is_empty() {
            return Flush { sends: Vec::new(), wait_for_acks: self.model == PersistencyModel::Epoch };
        }
        let wrote_log = lines.iter().any(|l| l.log);
        let at = |l: &EpochLine| l.release.max(t);
        let flush = match self.model {
            PersistencyModel::Strict | PersistencyModel::Epoch => {
                Flush { sends: lines.into_iter().map(|l| (l.release.max(t), l)).map(|(a, l)| (l, a)).collect(), wait_for_acks: true }
            }
            PersistencyModel::Tep => {
                let regular = self.regular;
                // Log lines first: they wait for nothing but the log before
                // them, which went in an earlier barrier; the data lines of
                // a pair wait for the previous log epoch's ACK.
                let (logs, data): (Vec<EpochLine>, Vec<EpochLine>) = lines.into_iter().partition(|l| l.log);
                let mut sends: Vec<(EpochLine, u64)> = Vec::new();
                for l in logs {
                    let a = if regular { at(&l).max(all_ack) } else { at(&l) };
                    sends.push((l, a));
                }
                for l in data {
                    let a = if regular { at(&l).max(all_ack) } else { at(&l).max(self.log_ack) };
                    sends.push((l, a));
                }
                Flush { sends, wait_for_acks: regular }
            }
        };
        self.regular = !wrote_log;
        flush
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_to_a_line_coalesce_until_the_barrier() {
        let mut e = EpochLines::new(PersistencyModel::Epoch);
        e.store(7, 0, &[1; 8], 10, 10, false);
        e.store(7, 8, &[2; 8], 12, 11, false);
        e.store(9, 0, &[3; 8], 13, 13, false);
        let f = e.barrier(20, 0);
        assert_eq!(f.sends.len(), 2, "two lines, three stores");
        let (l, at) = &f.sends[0];
        assert_eq!((l.block, l.mask, l.release, *at), (7, 0xffff, 12, 20));
        assert!(f.wait_for_acks && e.lines.is_empty());
        assert!(e.barrier(30, 0).sends.is_empty(), "an empty epoch sends nothing");
    }

    #[test]
    fn tep_orders_data_after_its_log_and_the_commit_after_everything() {
        let mut e = EpochLines::new(PersistencyModel::Tep);
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
