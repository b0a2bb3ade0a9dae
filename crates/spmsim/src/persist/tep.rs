//! Transaction-specific epoch persistency (TEP; Secon 3.3): the L1D's
//! volatile lines and the TEP manager of one hardware thread, in front of
//! the memory controller.
//!
//! ```text
//!  store --> L1D line {epoch-id (8 b), epoch-type, log-flag}     (volatile)
//!              |  TEP manager: flush a line only when its order allows
//!              v
//!   log line  --(after every earlier log line of the thread)--> MC   --> log state table
//!   data line --(paired: after the ACK of its pair's log lines)--> MC
//!   regular   --(after every earlier epoch, all ACKs back)-----> MC
//!  barrier: epoch counter + 1 (overflow at 255: flush everything, restart at 0)
//!  crash:   the lines still here are lost (not in the battery domain)
//! ```
//!
//! Epochs. The paper sets the epoch type to paired on log writes and to
//! regular "on transaction commits". The event stream has no commit
//! instruction before the commit's own write, so the model applies the
//! rule the undo log's shape gives: the epoch a barrier opens is regular
//! when the epoch it closes wrote no log line, and paired otherwise. In the
//! dynamic transactions of `workload::pheap` (Secon Fig. 6),
//! `{L1} F {D1 L2} F {D2 L3} F ... {Dn} F {header <- 0} F`, the commit
//! epoch `{header <- 0}` is the only regular one; in static ones,
//! `{L*} F {D*} F {header <- 0} F`, likewise. A workload without a log
//! (every epoch regular) gets epoch persistency. A barrier that closes an
//! epoch with no store (the workloads write `fence; epoch` for one
//! boundary) opens no new one.
//!
//! Which writes are log writes is the log region's business
//! (`set_log_region(start, end)`, Secon 3.3), as in the hardware: a store
//! whose block lies in it is a log write.
//!
//! Order (Secon 3.3, Case 1 and Case 2):
//! - a data line of paired epoch `x` reaches the MC only after the log
//!   lines of epoch `x - 1` have been sent and ACKed (the model waits with
//!   `MemoryController::await_ack`, the "ACK of the latest write of this
//!   block"). It also waits for the ACK of every older log line still in
//!   the log state table: undo-log recovery walks the log as a prefix, so a
//!   data write whose log entry survives behind a lost older entry could
//!   not be rolled back. Without deferred ACKs this costs nothing extra.
//! - log lines of one thread are sent to the MC in epoch order (the log is
//!   appended in order and its recovery reads a prefix); they do not wait
//!   for each other's ACKs, so a pair's log (LogB) persists concurrently
//!   with the data of the pair before it (DataA), as Secon Fig. 7c shows.
//! - a line of a regular epoch reaches the MC only after every line of an
//!   earlier epoch has, and every ACK is back; the barrier that closes a
//!   regular epoch flushes everything and waits for every ACK, so a
//!   committed transaction is durable when the program goes on.
//! - a store to a line that holds an older epoch's value sends that line
//!   first (by its own rule): a line carries one epoch-id.
//!
//! Freedom. A line stays volatile until its order forces it out, the
//! buffer is full (a random victim), or, after a store, a seeded draw
//! flushes a random line early (`persistence.tep.early_flush_pct`): lines
//! persist in a legal order that is not program order, deterministic for a
//! seed, so the crash oracle sees the states TEP permits.
//!
//! `persistence.tep.pair_order = false` is the negative control: a data
//! line goes without waiting for its log, which the oracle must catch.

use crate::config::TepConfig;
use crate::engine::controller::MemoryController;
use crate::engine::store::CheckFailure;
use crate::util::rng::SplitMix64;
use serde::Serialize;

/// What the TEP manager did (Secon 3.3's structures at work).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TepStats {
    /// Persistent stores taken into the L1D.
    pub stores: u64,
    /// Lines sent to the MC, of which log lines.
    pub lines_flushed: u64,
    pub log_lines_flushed: u64,
    /// Lines flushed early by the seeded draw.
    pub early_flushes: u64,
    /// Lines evicted because the buffer was full.
    pub evictions: u64,
    /// Lines sent because a store of a later epoch hit them.
    pub conflict_flushes: u64,
    /// Times the 8-bit epoch counter overflowed and every line was flushed.
    pub overflow_flushes: u64,
    /// Epochs opened, by type.
    pub paired_epochs: u64,
    pub regular_epochs: u64,
    /// Waits for one log line's ACK before a data line (log state table).
    pub log_ack_waits: u64,
    /// Waits for every ACK (regular epochs, overflow).
    pub all_ack_waits: u64,
    /// Control only (`pair_order = false`): data lines sent while a log
    /// line of an earlier epoch was still unsent or unACKed.
    pub unordered_data_flushes: u64,
}

impl TepStats {
    pub fn add(&mut self, o: &TepStats) {
        self.stores += o.stores;
        self.lines_flushed += o.lines_flushed;
        self.log_lines_flushed += o.log_lines_flushed;
        self.early_flushes += o.early_flushes;
        self.evictions += o.evictions;
        self.conflict_flushes += o.conflict_flushes;
        self.overflow_flushes += o.overflow_flushes;
        self.paired_epochs += o.paired_epochs;
        self.regular_epochs += o.regular_epochs;
        self.log_ack_waits += o.log_ack_waits;
        self.all_ack_waits += o.all_ack_waits;
        self.unordered_data_flushes += o.unordered_data_flushes;
    }
}

/// One L1D line with TEP's three fields (Secon 3.3).
#[derive(Clone, Debug)]
struct Line {
    block: u64,
    data: [u8; 64],
    /// 8-bit epoch-id.
    epoch: u8,
    /// Epoch-type: regular (0 in the paper) or paired (1).
    regular: bool,
    /// Log-flag.
    log: bool,
}

#[derive(Clone, Debug)]
pub struct TepFront {
    /// `[start, end)` byte addresses of this thread's log region.
    log_region: (u64, u64),
    pair_order: bool,
    capacity: usize,
    early_flush_pct: u64,
    rng: SplitMix64,
    /// The thread's 8-bit epoch counter and epoch type.
    epoch: u8,
    regular: bool,
    /// The current epoch wrote a log line (decides the next one's type).
    epoch_has_log: bool,
    /// The current epoch has a store: a barrier right after a barrier (the
    /// workloads' `fence; epoch`) opens no new epoch.
    epoch_has_store: bool,
    /// The volatile lines (a transaction's worth: a few dozen), in no order.
    lines: Vec<Line>,
    /// Log state table: log lines sent to the MC whose ACK nobody has
    /// waited for yet, with their epoch-ids.
    log_state: Vec<(u8, u64)>,
    pub stats: TepStats,
}

impl TepFront {
    pub fn new(cfg: &TepConfig, seed: u64) -> Self {
        TepFront {
            log_region: (0, 0),
            pair_order: cfg.pair_order,
            capacity: cfg.buffer_lines.max(1) as usize,
            early_flush_pct: cfg.early_flush_pct as u64,
            rng: SplitMix64::new(seed ^ 0x7E9_7E9),
            epoch: 0,
            // A thread's first epoch follows no log epoch: regular by the
            // rule below, so stores before the first barrier are durable
            // by its end (a workload's initialisation, a log-less program).
            regular: true,
            epoch_has_log: false,
            epoch_has_store: false,
            lines: Vec::new(),
            log_state: Vec::new(),
            stats: TepStats::default(),
        }
    }

    /// Secon 3.3's `set_log_region(start, end)`: the two registers in the
    /// L1 cache controller that identify log writes.
    pub fn set_log_region(&mut self, start: u64, end: u64) {
        self.log_region = (start, end);
    }

    pub fn log_region(&self) -> (u64, u64) {
        self.log_region
    }

    /// Draw a new flush order (the machine's seed, per core).
    pub fn reseed(&mut self, seed: u64) {
        self.rng = SplitMix64::new(seed ^ 0x7E9_7E9);
    }

    fn is_log(&self, block: u64) -> bool {
        let a = block * 64;
        a >= self.log_region.0 && a < self.log_region.1
    }

    fn find(&self, block: u64) -> Option<usize> {
        self.lines.iter().position(|l| l.block == block)
    }

    pub fn contains(&self, block: u64) -> bool {
        self.find(block).is_some()
    }

    pub fn occupancy(&self) -> usize {
        self.lines.len()
    }

    /// The current epoch-id and whether the epoch is regular.
    pub fn epoch(&self) -> (u8, bool) {
        (self.epoch, self.regular)
    }

    pub fn store(&mut self, mc: &mut MemoryController, block: u64, offset: usize, bytes: &[u8]) -> Result<(), CheckFailure> {
        self.stats.stores += 1;
        let log = self.is_log(block);
        self.epoch_has_log |= log;
        self.epoch_has_store = true;
        let i = match self.find(block) {
            Some(i) if self.lines[i].epoch == self.epoch => i,
            held => {
                let base = match held {
                    Some(i) => {
                        // The line holds an older epoch's value: it goes first.
                        let base = self.lines[i].data;
                        self.stats.conflict_flushes += 1;
                        self.flush_block(mc, block)?;
                        base
                    }
                    None => mc.read(block)?,
                };
                self.lines.push(Line { block, data: base, epoch: self.epoch, regular: self.regular, log });
                self.lines.len() - 1
            }
        };
        self.lines[i].data[offset..offset + bytes.len()].copy_from_slice(bytes);
        if self.lines.len() > self.capacity {
            self.stats.evictions += 1;
            self.flush_random(mc)?;
        }
        if self.early_flush_pct > 0 && !self.lines.is_empty() && self.rng.below(100) < self.early_flush_pct {
            self.stats.early_flushes += 1;
            self.flush_random(mc)?;
        }
        Ok(())
    }

    pub fn load(&mut self, mc: &mut MemoryController, block: u64) -> Result<[u8; 64], CheckFailure> {
        match self.find(block) {
            Some(i) => Ok(self.lines[i].data),
            None => mc.read(block),
        }
    }

    /// A barrier (fence or epoch boundary): the epoch ends and the next one
    /// begins, with its type and the next epoch-id.
    pub fn barrier(&mut self, mc: &mut MemoryController) -> Result<(), CheckFailure> {
        if !self.epoch_has_store {
            // An empty epoch (`fence; epoch` is one boundary): nothing ends.
            return Ok(());
        }
        self.epoch_has_store = false;
        if self.regular {
            // The commit's epoch ends: it is durable before the program
            // goes on (Case 2 for everything before it, then its own lines).
            self.flush_all(mc)?;
        }
        let next_regular = !self.epoch_has_log;
        if self.epoch == u8::MAX {
            // Secon 3.3: "If the epoch-id overflows, Secon persists all
            // transaction writes in L1D, and resets the next epoch-id to 0."
            self.stats.overflow_flushes += 1;
            self.flush_all(mc)?;
            self.epoch = 0;
        } else {
            self.epoch += 1;
        }
        self.regular = next_regular;
        self.epoch_has_log = false;
        if next_regular {
            self.stats.regular_epochs += 1;
        } else {
            self.stats.paired_epochs += 1;
        }
        Ok(())
    }

    /// Every line to the MC, in a seeded legal order, then every ACK.
    pub fn flush_all(&mut self, mc: &mut MemoryController) -> Result<(), CheckFailure> {
        while !self.lines.is_empty() {
            self.flush_random(mc)?;
        }
        self.await_all(mc)
    }

    fn await_all(&mut self, mc: &mut MemoryController) -> Result<(), CheckFailure> {
        self.stats.all_ack_waits += 1;
        self.log_state.clear();
        mc.await_all_acks()
    }

    fn flush_random(&mut self, mc: &mut MemoryController) -> Result<(), CheckFailure> {
        let i = self.rng.below(self.lines.len() as u64) as usize;
        let b = self.lines[i].block;
        self.flush_block(mc, b)
    }

    /// The oldest unsent log line of an epoch before `epoch`.
    fn older_log_line(&self, epoch: u8) -> Option<u64> {
        self.lines.iter().filter(|l| l.log && l.epoch < epoch).min_by_key(|l| l.epoch).map(|l| l.block)
    }

    /// Send `block`'s line to the MC once everything it depends on has
    /// gone (and been ACKed where TEP says so). Nothing if not held.
    pub fn flush_block(&mut self, mc: &mut MemoryController, block: u64) -> Result<(), CheckFailure> {
        let Some(i) = self.find(block) else { return Ok(()) };
        let (epoch, regular, log) = (self.lines[i].epoch, self.lines[i].regular, self.lines[i].log);
        if regular {
            // Case 2: every line of an earlier epoch persists and the ACK
            // counter drains to 0 first.
            while let Some(b) = self.lines.iter().find(|l| l.epoch < epoch).map(|l| l.block) {
                self.flush_block(mc, b)?;
            }
            self.await_all(mc)?;
        } else if log {
            // The thread's log lines go in epoch order.
            while let Some(b) = self.older_log_line(epoch) {
                self.flush_block(mc, b)?;
            }
        } else if self.pair_order {
            // Case 1: the pair's log lines (epoch x - 1, and any older one
            // still unsent or unACKed) persist and are ACKed first.
            while let Some(b) = self.older_log_line(epoch) {
                self.flush_block(mc, b)?;
            }
            let mut k = 0;
            while k < self.log_state.len() {
                if self.log_state[k].0 < epoch {
                    let (_, b) = self.log_state.swap_remove(k);
                    self.stats.log_ack_waits += 1;
                    mc.await_ack(b)?;
                } else {
                    k += 1;
                }
            }
        } else if self.older_log_line(epoch).is_some() || self.log_state.iter().any(|&(e, _)| e < epoch) {
            self.stats.unordered_data_flushes += 1;
        }
        let i = self.find(block).expect("a line leaves only by its own flush");
        let line = self.lines.swap_remove(i);
        mc.write(block, &line.data)?;
        self.stats.lines_flushed += 1;
        if line.log {
            self.stats.log_lines_flushed += 1;
            self.log_state.push((line.epoch, block));
        }
        Ok(())
    }

    /// Power fails: the L1D and the manager's tables are volatile.
    pub fn discard(&mut self) {
        self.lines.clear();
        self.log_state.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;

    fn mc() -> MemoryController {
        let cfg = load_preset("tep", &["memory.capacity_bytes=67108864".into()]).unwrap();
        crate::scheme::controller(&cfg, 1)
    }

    /// A front past its first (regular) epoch: one log write to the header
    /// block and a barrier, so the next epoch is paired (epoch-id 1) and
    /// the buffer and the counts are empty.
    fn front(m: &mut MemoryController, pair_order: bool, early: u32) -> TepFront {
        let mut f = TepFront::new(&TepConfig { pair_order, buffer_lines: 512, early_flush_pct: early }, 3);
        f.set_log_region(0, 4 << 20);
        assert_eq!(f.epoch(), (0, true), "a thread's first epoch is regular");
        f.store(m, 0, 0, &[9]).unwrap();
        f.barrier(m).unwrap();
        assert_eq!((f.epoch(), f.occupancy()), ((1, false), 0));
        f.stats = TepStats::default();
        f
    }

    fn word(mc: &mut MemoryController, block: u64) -> u64 {
        u64::from_le_bytes(mc.read(block).unwrap()[..8].try_into().unwrap())
    }

    const LOG: u64 = 1;
    /// A block of the heap, above the 4 MiB log region.
    const DATA: u64 = (8 << 20) / 64;

    #[test]
    fn epoch_types_follow_the_log() {
        let mut m = mc();
        let mut f = front(&mut m, true, 0);
        f.store(&mut m, LOG, 0, &[1]).unwrap();
        f.barrier(&mut m).unwrap();
        assert_eq!(f.epoch(), (2, false), "after a log epoch: paired");
        f.store(&mut m, DATA, 0, &[1]).unwrap();
        f.barrier(&mut m).unwrap();
        assert_eq!(f.epoch(), (3, true), "after a data-only epoch: regular (the commit)");
        f.store(&mut m, 0, 0, &[0]).unwrap();
        f.barrier(&mut m).unwrap();
        assert_eq!(f.occupancy(), 0, "the barrier closing a regular epoch persists everything");
        assert_eq!((f.stats.paired_epochs, f.stats.regular_epochs), (2, 1));
    }

    #[test]
    fn lines_stay_volatile_until_their_order_forces_them() {
        let mut m = mc();
        let mut f = front(&mut m, true, 0);
        f.store(&mut m, LOG, 0, &7u64.to_le_bytes()).unwrap();
        f.barrier(&mut m).unwrap();
        f.store(&mut m, DATA, 0, &9u64.to_le_bytes()).unwrap();
        assert_eq!(f.occupancy(), 2);
        assert_eq!(word(&mut m, DATA), 0, "the MC has not seen the data");
        assert_eq!(u64::from_le_bytes(f.load(&mut m, DATA).unwrap()[..8].try_into().unwrap()), 9, "a load sees the L1D line");
        // Sending the data line first sends its log line and waits for its ACK.
        f.flush_block(&mut m, DATA).unwrap();
        assert_eq!((word(&mut m, LOG), word(&mut m, DATA)), (7, 9));
        assert_eq!((f.stats.lines_flushed, f.stats.log_ack_waits), (2, 1));
        f.discard();
        assert_eq!(f.occupancy(), 0);
    }

    #[test]
    fn without_the_pair_order_data_goes_before_its_log() {
        let mut m = mc();
        let mut f = front(&mut m, false, 0);
        f.store(&mut m, LOG, 0, &7u64.to_le_bytes()).unwrap();
        f.barrier(&mut m).unwrap();
        f.store(&mut m, DATA, 0, &9u64.to_le_bytes()).unwrap();
        f.flush_block(&mut m, DATA).unwrap();
        assert_eq!((word(&mut m, LOG), word(&mut m, DATA)), (0, 9), "the data persisted, its log did not");
        assert_eq!(f.stats.unordered_data_flushes, 1);
    }

    #[test]
    fn log_lines_go_in_epoch_order() {
        let mut m = mc();
        let mut f = front(&mut m, true, 0);
        for e in 0..3u64 {
            f.store(&mut m, LOG + e, 0, &(e + 1).to_le_bytes()).unwrap();
            f.barrier(&mut m).unwrap();
        }
        f.flush_block(&mut m, LOG + 2).unwrap();
        assert_eq!((word(&mut m, LOG), word(&mut m, LOG + 1), word(&mut m, LOG + 2)), (1, 2, 3));
        assert_eq!(f.stats.log_ack_waits, 0, "log lines do not wait for each other's ACKs");
    }

    #[test]
    fn a_store_to_an_older_epochs_line_sends_it_first() {
        let mut m = mc();
        let mut f = front(&mut m, true, 0);
        f.store(&mut m, LOG, 0, &[1]).unwrap();
        f.barrier(&mut m).unwrap();
        f.store(&mut m, LOG, 8, &[2]).unwrap();
        assert_eq!(f.stats.conflict_flushes, 1);
        assert_eq!(m.read(LOG).unwrap()[..9], [1, 0, 0, 0, 0, 0, 0, 0, 0], "the older epoch's value persisted alone");
        assert_eq!(f.load(&mut m, LOG).unwrap()[..9], [1, 0, 0, 0, 0, 0, 0, 0, 2], "the line holds both");
    }

    #[test]
    fn the_epoch_counter_overflows_after_255_barriers() {
        let mut m = mc();
        let mut f = front(&mut m, true, 0);
        let mut i = 0;
        while f.epoch().0 < 255 {
            f.store(&mut m, LOG + i, 0, &[1]).unwrap();
            f.barrier(&mut m).unwrap();
            i += 1;
        }
        assert_eq!((i, f.occupancy() as u64, f.stats.overflow_flushes), (254, 254, 0), "log lines wait in 254 epochs");
        f.store(&mut m, LOG + 300, 0, &[1]).unwrap();
        f.barrier(&mut m).unwrap();
        assert_eq!((f.epoch().0, f.occupancy(), f.stats.overflow_flushes), (0, 0, 1), "every line persisted, the id restarts at 0");
    }

    #[test]
    fn early_flushes_are_seeded_and_not_in_program_order() {
        let run = |seed: u64| {
            let mut m = mc();
            let mut f = front(&mut m, true, 50);
            f.reseed(seed);
            let mut order = Vec::new();
            for i in 0..40u64 {
                f.store(&mut m, DATA + i, 0, &[1]).unwrap();
                for b in 0..40 {
                    if m.read(DATA + b).unwrap()[0] == 1 && !order.contains(&b) {
                        order.push(b);
                    }
                }
            }
            (order, f.stats.early_flushes)
        };
        let (a, n) = run(5);
        assert_eq!(run(5), (a.clone(), n), "the same seed gives the same order");
        assert!(n > 5, "{n} early flushes");
        let mut sorted = a.clone();
        sorted.sort_unstable();
        assert_ne!(a, sorted, "lines persist out of program order");
    }
}
