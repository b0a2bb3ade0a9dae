//! The cores take their events: which core runs next, each event applied
//! to its core, the end of a core's warm-up, and the ticket lock of
//! shared data.
//!
//! ```text
//!  run_threads(one stream per core): repeat
//!    the runnable core with the earliest schedule key (ties: the lowest id)
//!    runs while it stays the earliest: step -> apply(event)
//!      load        -> fetch (hierarchy.rs)      store -> an open store (stores.rs)
//!      fence/epoch -> the persist barrier        tx-begin/commit -> the ticket lock
//!  run_until(one stream): one core, the same step
//!  a core's warm-up ends at its first event past it; the machine's region
//!  of interest begins with the first core's (end_warmup)
//!  a core whose region of interest is over keeps its counts and runs on
//!  (its trace started again at its end) until every core's is over
//! ```

use super::core::{Access, Core, CoreStats};
use super::persist::PersistPathStats;
use super::stores::OpenStore;
use super::{SimError, TimingSim, WarmupStats, STOP_CHECK_EVENTS};
use crate::engine::store::CheckFailure;
use crate::trace::event::{Event, Op};
use crate::workload::EventStream;
use std::sync::atomic::{AtomicBool, Ordering};

/// A core's events as [`TimingSim::run_threads`] takes them.
pub trait CoreEvents: Iterator<Item = Event> {
    /// Called once the events ended: whether the core may run on past
    /// its region of interest ([`EventStream::run_on`]); hand-built
    /// events cannot.
    fn run_on(&mut self) -> bool {
        false
    }
}

impl CoreEvents for std::vec::IntoIter<Event> {}

impl CoreEvents for EventStream {
    fn run_on(&mut self) -> bool {
        EventStream::run_on(self)
    }
}

/// Shared data (`data=shared`): thread `t`'s `k`-th transaction holds
/// ticket `k * threads + t` and begins once the transaction before it in
/// ticket order committed, so the threads' transactions run in the order
/// the workload generated them in and the persistent state is well defined.
pub(super) struct TicketLock {
    threads: u64,
    /// The ticket whose transaction may begin.
    next: u64,
    /// When the lock was last released (a commit).
    free_at: u64,
    /// Threads whose streams ended: their tickets are skipped.
    finished: Vec<bool>,
    /// Cycles cores waited for the lock.
    pub(super) wait_cycles: u64,
}

impl TicketLock {
    /// No ticket taken yet, none of the `threads` finished.
    pub(super) fn new(threads: usize) -> Self {
        TicketLock { threads: threads as u64, next: 0, free_at: 0, finished: vec![false; threads], wait_cycles: 0 }
    }

    /// The transaction holding the lock ended (committed, or was cut off
    /// with its thread's stream) at `at`: the next ticket may begin.
    fn release(&mut self, at: u64) {
        self.free_at = self.free_at.max(at);
        self.next += 1;
        self.skip_finished();
    }

    /// Past the tickets of threads that will never take them.
    fn skip_finished(&mut self) {
        while self.finished.iter().any(|f| !f) && self.finished[(self.next % self.threads) as usize] {
            self.next += 1;
        }
    }
}

impl TimingSim {
    /// Core `c` has run its warm-up: its last store goes down the persist
    /// path and its own counts restart, so every core's region of interest
    /// is its own next instructions, the same in every scheme (ChampSim
    /// counts each core's instructions so; a switch of every core at
    /// once, as gem5's fast-forward does, would give a core that was
    /// behind the rest of its warm-up, so two schemes would time
    /// different stretches of it). The machine's region of interest is
    /// the union of the cores': it begins when the first core's does, and
    /// the shared components' counters (PCM, engine, L3) start there.
    /// (Started at the last core's instead, they missed what the early
    /// cores did before it: an 8-core run looked faster under strict
    /// persistence than without it.)
    fn end_warmup(&mut self, c: usize) -> Result<(), CheckFailure> {
        self.close_store(c)?;
        let first = self.stats.warmup.is_none();
        let u = &mut self.units[c];
        u.ooo_start = u.core.ooo_stats();
        u.l1i_start = u.l1i.stats();
        u.roi_began = u.end_time();
        let now = u.roi_began;
        let fresh = CoreStats { tep: u.stats.tep.map(|_| Default::default()), ..CoreStats::default() };
        let warm = std::mem::replace(&mut u.stats, fresh);
        u.persist = PersistPathStats::default();
        let in_region = u.warm_at_machine_roi.map_or(0, |at| warm.instructions.saturating_sub(at));
        // A core with no warm-up (a mix's generator beside a recorded
        // program) began the machine's region at cycle 0.
        let began = if self.units.iter().any(|u| u.warmup.is_none()) { 0 } else { now };
        let w = self.stats.warmup.get_or_insert(WarmupStats { instructions: 0, cycles: began, instructions_in_region: 0 });
        w.instructions += warm.instructions;
        w.instructions_in_region += in_region;
        if first && began == now {
            self.roi_start = self.counters(now);
            self.engine.mark_roi_start(now);
            self.mark_buffers_roi_start(now);
            for (o, other) in self.units.iter_mut().enumerate() {
                if o != c && other.warmup.is_some_and(|w| !w.is_over()) {
                    other.warm_at_machine_roi = Some(other.stats.instructions);
                }
            }
        }
        Ok(())
    }

    /// A core whose events did not complete its warm-up: the instructions
    /// it ran and the warm-up it was asked for.
    pub fn unfinished_warmup(&self) -> Option<(u64, u64)> {
        self.units.iter().find_map(|u| u.warmup.filter(|w| !w.is_over()).map(|w| (w.instructions(), w.asked())))
    }

    fn apply(&mut self, c: usize, ev: &Event) -> Result<(), CheckFailure> {
        let (block, off, size) = (ev.block(), (ev.addr % 64) as usize, ev.size as usize);
        if ev.op == Op::Store && ev.same_instruction {
            let u = &mut self.units[c];
            if let Some(o) = &mut u.open_store {
                if o.block == block && o.off + o.len == off && o.volatile == ev.volatile {
                    // The next piece of the open store: its bytes only.
                    o.len += size;
                    o.bytes[off..off + size].copy_from_slice(&ev.value.to_le_bytes()[..size]);
                    if !ev.piece {
                        u.core.merged_store();
                    }
                    u.stats.instructions += ev.instructions();
                    return Ok(());
                }
            }
        }
        self.close_store(c)?;
        let t_disp = self.dispatch(c, ev)?;
        match ev.op {
            Op::Load => {
                let lat = self.fetch(c, t_disp, block, false)?;
                let u = &mut self.units[c];
                u.core.complete_memop(t_disp, lat);
                u.stats.loads += 1;
            }
            Op::Store => {
                if ev.log && !ev.volatile {
                    self.sys.note_log_store(ev.addr);
                }
                // The fetch for ownership starts at dispatch (address known).
                let fetch = self.fetch(c, t_disp, block, true)?;
                let data_ready = t_disp + fetch;
                let u = &mut self.units[c];
                let retire = u.core.retire_store(t_disp, &mut u.stats);
                // With MSHRs, a store leaves the store buffer once its line
                // is owned, as it is performed by its write into L1D (gem5
                // `LSQUnit::writebackStores`): the buffer fills behind a
                // store miss, and the misses it sends are bounded by L1D's
                // MSHRs. Unbounded caches keep the model before them.
                let release = match u.l1b {
                    Some(_) => u.core.release_time(retire).max(data_ready),
                    None => u.core.release_time(retire),
                };
                let mut bytes = [0; 64];
                bytes[off..off + size].copy_from_slice(&ev.value.to_le_bytes()[..size]);
                u.open_store = Some(OpenStore { block, volatile: ev.volatile, off, len: size, bytes, release, data_ready, log: ev.log });
            }
            Op::Fence | Op::Epoch if self.units[c].epoch.buffers() => {
                let wait = self.send_epoch(c, t_disp)?;
                self.sys.mc.await_all_acks()?;
                let u = &mut self.units[c];
                let persisted = if wait { u.path.persist_barrier() } else { 0 };
                u.core.fence(t_disp, persisted);
            }
            Op::Fence | Op::Epoch => {
                // The functional model waits for the same ACKs (whatever a
                // scheme deferred completes here; a no-op for most).
                self.sys.mc.await_all_acks()?;
                let u = &mut self.units[c];
                let persisted = u.path.persist_barrier();
                u.core.fence(t_disp, persisted);
            }
            Op::TxBegin => {
                if let Some(l) = &mut self.lock {
                    // The ticket is this core's (the scheduler ran it only
                    // then): nothing of the transaction before the release.
                    let u = &mut self.units[c];
                    let at = u.core.clock();
                    if l.free_at > at {
                        l.wait_cycles += l.free_at - at;
                        u.core.stall_until(l.free_at);
                    }
                }
                self.units[c].tx_begun += 1;
            }
            Op::TxCommit => {
                let u = &mut self.units[c];
                u.tx_committed += 1;
                if let Some(l) = &mut self.lock {
                    l.release(u.core.clock());
                }
            }
            Op::Compute => {}
        }
        self.units[c].stats.instructions += ev.instructions();
        Ok(())
    }

    /// Dispatch `ev`'s instructions on core `c` (see `Core::dispatch`);
    /// the `ooo` core fetches its instruction blocks through L1I and the
    /// levels below, so the core is taken out of its unit meanwhile.
    fn dispatch(&mut self, c: usize, ev: &Event) -> Result<u64, CheckFailure> {
        if !self.units[c].core.is_ooo() || self.units[c].l1i.is_absent() {
            return Ok(self.units[c].core.dispatch(ev.gap, ev.instructions(), Access::of(ev), &mut |t, _| t));
        }
        let mut core = std::mem::replace(&mut self.units[c].core, Core::new(&self.sys.cfg.core));
        let mut failed = None;
        let t = core.dispatch(ev.gap, ev.instructions(), Access::of(ev), &mut |t, block| match self.fetch_instruction(c, t, block) {
            Ok(ready) => ready,
            Err(e) => {
                failed.get_or_insert(e);
                t
            }
        });
        self.units[c].core = core;
        match failed {
            Some(e) => Err(e),
            None => Ok(t),
        }
    }

    /// Whether core `c` must wait before `ev`: a transaction whose ticket
    /// is not the lock's next.
    fn blocked(&self, c: usize, ev: &Event) -> bool {
        match &self.lock {
            Some(l) if ev.op == Op::TxBegin => self.units[c].tx_begun * l.threads + c as u64 != l.next,
            _ => false,
        }
    }

    /// Core `c`'s stream ended: its last store goes down the persist path
    /// and its tickets are given up (a transaction cut off by the
    /// instruction limit releases the lock).
    fn finish_core(&mut self, c: usize) -> Result<(), CheckFailure> {
        self.close_store(c)?;
        if self.units[c].epoch.buffers() {
            let t = self.units[c].core.clock();
            self.send_epoch(c, t)?;
        }
        let u = &self.units[c];
        if let Some(l) = &mut self.lock {
            l.finished[c] = true;
            if u.tx_begun > u.tx_committed {
                l.release(u.core.clock());
            } else {
                l.skip_finished();
            }
        }
        Ok(())
    }

    /// Run a stream of events to its end.
    pub fn run<I: IntoIterator<Item = Event>>(&mut self, events: I) -> Result<(), String> {
        self.run_until(events, &AtomicBool::new(false)).map_err(|e| e.to_string())
    }

    /// One event of core `c`, with its warm-up check.
    fn step(&mut self, c: usize, i: usize, ev: &Event) -> Result<(), SimError> {
        if ev.thread as usize != c {
            return Err(SimError::Invalid(format!(
                "event {} ({}) of thread {} is in the stream of core {c}: each core runs its own thread's events (core.count = threads)",
                i + 1,
                ev.describe(),
                ev.thread
            )));
        }
        if self.units[c].warmup.as_mut().is_some_and(|w| !w.is_over() && !w.takes(ev)) {
            self.end_warmup(c).map_err(|e| SimError::Failed(format!("the last store of the warm-up: integrity check failed: {e}")))?;
        }
        self.apply(c, ev).map_err(|e| match e {
            CheckFailure::NoCore { .. } => SimError::Invalid(format!("event {} ({}): {e}", i + 1, ev.describe())),
            e => SimError::Failed(format!("event {} ({}): integrity check failed: {e}", i + 1, ev.describe())),
        })
    }

    /// Run a stream of events to its end, or until `stop` is set (by
    /// another thread: a Ctrl-C handler, a front end that gave up). The
    /// flag is read once every [`STOP_CHECK_EVENTS`] events, so the check
    /// costs nothing beside an event's crypto, yet a stop lands within
    /// milliseconds.
    pub fn run_until<I: IntoIterator<Item = Event>>(&mut self, events: I, stop: &AtomicBool) -> Result<(), SimError> {
        if self.units.len() > 1 {
            return Err(SimError::Invalid(format!(
                "a machine of {} cores runs one event stream per core (run_threads), not one merged stream",
                self.units.len()
            )));
        }
        for (i, ev) in events.into_iter().enumerate() {
            if i % STOP_CHECK_EVENTS == 0 && stop.load(Ordering::Relaxed) {
                return Err(SimError::Cancelled);
            }
            // As the cores' loop of `run_threads` does: the calendars
            // (a relaxed model's writes and tree updates) drop what ends
            // before the core's clock.
            let horizon = self.units[0].core.clock().saturating_sub(self.horizon_margin);
            self.set_horizon(horizon);
            self.step(0, i, &ev)?;
            if self.units[0].core.ooo_exhausted() {
                // A synthetic profile's borrowed stream ran out: the run
                // ends here (simulate_after_warmup notes it).
                break;
            }
        }
        if let Some(e) = self.units[0].core.ooo_error() {
            return Err(SimError::Invalid(format!("core.model = \"ooo\": {e}")));
        }
        self.close_store(0).map_err(|e| SimError::Failed(format!("the last store: integrity check failed: {e}")))
    }

    /// Run one event stream per core (or until `stop`): the core that has
    /// reached the earliest cycle (`Core::schedule_key`) goes next, ties to
    /// the lowest core id, so a run depends only on its seed and
    /// configuration. With one core this is [`Self::run_until`].
    ///
    /// A core whose region of interest is over while another's is not
    /// keeps the counts of its region and runs on, its trace started
    /// again at its end, until the last core's region is over, as
    /// ChampSim runs a multi-core machine: every region of interest is
    /// then timed against a machine whose other cores all still run, and
    /// none against one left quiet by cores that finished first (under
    /// strict persistence, 8 copies of libquantum whose regions spread
    /// over 0.65-4.46 M cycles of a 26.7 M-cycle run made it look faster
    /// than the baseline, whose regions ran in step). The shared
    /// components' counters (PCM, engine, L3) cover the machine's region,
    /// the cores running on included, as ChampSim's do. Shared data (the
    /// ticket lock) does not run on: its transactions are dealt once.
    pub fn run_threads<I: CoreEvents>(&mut self, streams: &mut [I], stop: &AtomicBool) -> Result<(), SimError> {
        let n = self.units.len();
        if streams.len() != n {
            return Err(SimError::Invalid(format!("{} event streams for {n} cores", streams.len())));
        }
        if n == 1 {
            return self.run_until(&mut streams[0], stop);
        }
        let mut next: Vec<Option<Event>> = streams.iter_mut().map(|s| s.next()).collect();
        // Whether each core's region of interest is over.
        let mut over = vec![false; n];
        for c in (0..n).filter(|&c| next[c].is_none()) {
            self.finish_core(c).map_err(|e| SimError::Failed(format!("core {c}: {e}")))?;
            over[c] = true;
        }
        let mut i = 0usize;
        // Each core's clock and key; only the core that ran changes its own.
        let mut clocks: Vec<u64> = self.units.iter().map(|u| u.core.clock()).collect();
        let mut keys: Vec<u64> = self.units.iter().map(|u| u.schedule_key()).collect();
        while !over.iter().all(|&o| o) {
            // The runnable core with the earliest key (ties to the lowest
            // id), and the one after it.
            let mut best: Option<(u64, usize)> = None;
            let mut second: Option<(u64, usize)> = None;
            let mut earliest = u64::MAX;
            for (c, ev) in next.iter().enumerate() {
                let Some(ev) = ev else { continue };
                earliest = earliest.min(clocks[c]);
                if self.blocked(c, ev) {
                    continue;
                }
                let k = (keys[c], c);
                if best.is_none_or(|b| k < b) {
                    second = best;
                    best = Some(k);
                } else if second.is_none_or(|b| k < b) {
                    second = Some(k);
                }
            }
            let Some((_, c)) = best else {
                let waiting: Vec<String> =
                    (0..n).filter(|&c| next[c].is_some()).map(|c| format!("core {c} (ticket {})", self.units[c].tx_begun)).collect();
                return Err(SimError::Failed(format!(
                    "the ticket lock is out of step: every core waits ({}) for ticket {}; a shared-data workload must give each operation exactly one transaction",
                    waiting.join(", "),
                    self.lock.as_ref().map_or(0, |l| l.next)
                )));
            };
            // No core asks the memory for anything before its clock (less a
            // margin for the `ooo` core's memory operations, which may issue
            // a little before it).
            self.set_horizon(earliest.saturating_sub(self.horizon_margin));
            // Core `c` runs while it stays the earliest: the others' keys
            // stand still meanwhile, and which of them may run changes only
            // when `c` releases the lock or ends, so this is the same order
            // as choosing anew before every event.
            // The others stand still, so no request comes before the
            // earliest of their clocks and `c`'s own: as `c` runs on (alone,
            // once the others are done), the calendars drop what ends
            // before that, or they would keep everything since the others
            // stopped.
            let others = (0..n).filter(|&d| d != c && next[d].is_some()).map(|d| clocks[d]).min().unwrap_or(u64::MAX);
            let mut horizon = earliest.saturating_sub(self.horizon_margin);
            loop {
                let h = self.units[c].core.clock().min(others).saturating_sub(self.horizon_margin);
                if h > horizon {
                    horizon = h;
                    self.set_horizon(h);
                }
                if i.is_multiple_of(STOP_CHECK_EVENTS) && stop.load(Ordering::Relaxed) {
                    return Err(SimError::Cancelled);
                }
                let ev = next[c].take().expect("chosen cores have an event");
                self.step(c, i, &ev).map_err(|e| match e {
                    SimError::Failed(m) => SimError::Failed(format!("core {c}: {m}")),
                    other => other,
                })?;
                i += 1;
                next[c] = if self.units[c].core.ooo_exhausted() { None } else { streams[c].next() };
                if next[c].is_none() {
                    next[c] = self.end_of_events(c, &mut streams[c], &mut over)?;
                    if next[c].is_none() || over.iter().all(|&o| o) {
                        break;
                    }
                }
                let following = next[c].as_ref().expect("an event follows");
                let released = ev.op == Op::TxCommit && self.lock.is_some();
                if released || self.blocked(c, following) || second.is_some_and(|b| (self.units[c].schedule_key(), c) > b) {
                    break;
                }
            }
            clocks[c] = self.units[c].core.clock();
            keys[c] = self.units[c].schedule_key();
        }
        for u in &self.units {
            if let Some(e) = u.core.ooo_error() {
                return Err(SimError::Invalid(format!("core.model = \"ooo\": {e}")));
            }
        }
        Ok(())
    }

    /// Core `c`'s events ended: at the end of its region of interest,
    /// its last store goes down the persist path and, while another
    /// core's region goes on, it keeps its counts and runs on; the event
    /// it runs on with, if it does.
    fn end_of_events<I: CoreEvents>(&mut self, c: usize, stream: &mut I, over: &mut [bool]) -> Result<Option<Event>, SimError> {
        let ended = |e| SimError::Failed(format!("core {c}: the last store: integrity check failed: {e}"));
        if over[c] {
            // Running on, its trace could not start again.
            self.finish_core(c).map_err(ended)?;
            return Ok(None);
        }
        over[c] = true;
        self.finish_core(c).map_err(ended)?;
        let warm = self.units[c].warmup.is_none_or(|w| w.is_over());
        if self.lock.is_some() || over.iter().all(|&o| o) || !warm || self.units[c].core.ooo_exhausted() || !stream.run_on() {
            return Ok(None);
        }
        self.units[c].freeze();
        Ok(stream.next())
    }

    /// Whether a core's borrowed instruction stream ran out.
    pub(super) fn ooo_exhausted(&self) -> bool {
        self.units.iter().any(|u| u.core.ooo_exhausted())
    }
}
