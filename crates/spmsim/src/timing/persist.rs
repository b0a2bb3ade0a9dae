//! Timing of the persist path: what a released store costs before the
//! next one may go (the unblocking signal), and the background drain.
//!
//! Persist buffer (BBB, SecPB IV-B, Fig. 4 dependency graph), per new entry:
//! ```text
//!  counter (MDC hit 2 / NVM read) -> OTP (AES) ---------> ciphertext (1) -> MAC (40)
//!                                  \-> tree update: its counted hashes x MAC latency
//!                                      (one update in flight when done early)
//!  unblock after the scheme's early steps (crate::scheme), plus its extra
//!  buffer accesses on allocation (OBCM's counter valid bit)
//! ```
//! A coalesced store costs the access plus its value-dependent early steps.
//! Drains start at the high watermark and go on to the low watermark; the
//! MC does the late steps (pipelined tree updates) and the entry is freed
//! once its writes hold WPQ slots.
//!
//! Memory controller (strict persistency with a flush per store: SP, WT,
//! write-back metadata): each store's whole tuple is produced at the MC and
//! its writes enter the WPQ before the next store proceeds.
//!
//! Every price is taken from the functional model's [`WorkRecord`] (which
//! blocks were read and written, and the tree hashes, pads and MACs it
//! computed) and the scheme's [`SchemeWork`] (which steps are early): no
//! scheme has code here. The same rules price an eager BMT update (its
//! hashes up to the root) and a lazy SIT write-back (a node MAC when a
//! dirty node leaves the cache), and a page re-encryption (its reads of
//! the old ciphertexts, then a pad and a MAC per block through the
//! pipelined engine). Verification hashes are speculative (SecPB V-A):
//! their reads cost bandwidth, the tree update waits for them. A scheme
//! whose mechanism this model has no rule for is refused by
//! [`PersistPath::new`], never timed as something else.

use super::engine::{Engine, PendingRoot};
use super::pcm::Pcm;
use super::work::WorkRecord;
use super::Latencies;
use crate::config::{PersistPoint, SimConfig};
use crate::engine::store::CheckFailure;
use crate::machine::System;
use crate::persist::{FrontEnd, Handover};
use crate::scheme::params::{Completion, Front, SchemeWork, Steps, TupleStep};
use serde::Serialize;
use std::collections::VecDeque;

/// The persist path's counts as the stats tree shows them (`roi.persist_path`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct PersistPathStats {
    /// Cycles from a store's release to the unblocking of the next (access
    /// and early metadata work; for SP the whole tuple).
    pub cycles: u64,
    /// The persist buffer's counts (absent for a persist point at the MC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub buffer: Option<BufferStats>,
    /// Metadata writes an idealised baseline made but the timing model did
    /// not price (`SchemeWork::ideal_metadata`; absent otherwise).
    #[serde(skip_serializing_if = "is_zero")]
    pub unpriced_metadata_writes: u64,
    /// The background root updates' counts (absent for a scheme that
    /// defers none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred_roots: Option<DeferredRootStats>,
}

/// Counts of the root updates a scheme runs in the background (Secon 3.2).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeferredRootStats {
    /// Root updates started in the background.
    pub updates: u64,
    /// Writes that found the pending queue full and waited for its oldest.
    pub queue_full_waits: u64,
    /// Writes to a block whose previous write's update was still pending
    /// (one bit per minor holds one increment) that waited for it.
    pub same_block_waits: u64,
    /// Cycles of those two waits.
    pub wait_cycles: u64,
    /// Cycles from a write's persist to its ACK, summed.
    pub ack_lag_cycles: u64,
}

impl PersistPathStats {
    /// The persist buffer's counts, started at zero on first use.
    pub fn buffer_mut(&mut self) -> &mut BufferStats {
        self.buffer.get_or_insert_with(Default::default)
    }
}

/// A persist buffer's counts (BBB, SecPB).
#[derive(Clone, Debug, Default, Serialize)]
pub struct BufferStats {
    /// Entries allocated (stores to a block not already buffered).
    pub allocations: u64,
    pub drains: u64,
    /// Cycles stores waited for a free entry.
    pub full_stall_cycles: u64,
    /// Stores per entry allocation (SecPB IV-A's NWPE).
    pub nwpe: f64,
    /// Early counters found stale at drain (page re-encrypted meanwhile).
    pub stale_early_counters: u64,
    /// Entries that migrated into this buffer from another core's (SecPB
    /// IV-C c); absent with one core.
    #[serde(skip_serializing_if = "is_zero")]
    pub migrated_in: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A store leaving the store buffer for the persist path.
pub struct ReleasedStore {
    /// When the store buffer released it.
    pub release: u64,
    /// When its block's other bytes are at hand (the fetch for ownership).
    pub data_ready: u64,
    pub block: u64,
    /// The bytes it writes, within the block.
    pub bytes: std::ops::Range<usize>,
    /// The whole block as it will be: memory's bytes around the store's.
    pub fill: [u8; 64],
}

/// One core's persist path (its persist buffer or its strict-persistency
/// flushes); the security engine it uses is shared ([`Engine`]).
pub struct PersistPath {
    kind: Kind,
    /// The core whose front end this path drives (`System::fronts`).
    core: usize,
    scheme: SchemeWork,
    early_one_in_flight: bool,
    mc_pipelined: bool,
    /// The tree is an SGX integrity tree: a path's levels are MACed side
    /// by side once their counters are incremented (STAR IV); a BMT's
    /// level waits for the level below.
    sit: bool,
    /// Entries drained but not yet freed (time each frees).
    draining: VecDeque<u64>,
    last_persist: u64,
    /// When the stores so far are ACKed (their deferred root updates done).
    last_ack: u64,
    entries: usize,
    /// The record of the operation being priced (kept to reuse its buffers).
    rec: Option<Box<WorkRecord>>,
}

enum Kind {
    PersistBuffer,
    MemoryController,
}

/// The timing model's shared context for one priced operation.
pub struct Ctx<'a> {
    pub pcm: &'a mut Pcm,
    pub lat: &'a Latencies,
    pub engine: &'a mut Engine,
    /// This core's persist-path counts.
    pub stats: &'a mut PersistPathStats,
}

impl PersistPath {
    /// The persist path of a configuration, or why it cannot be timed.
    pub fn new(cfg: &SimConfig, core: usize) -> Result<Self, String> {
        let scheme = cfg.scheme.work();
        let name = cfg.scheme.name();
        let (kind, one, entries) = match (&cfg.persistence.point, scheme.front) {
            (PersistPoint::PersistBuffer { early_bmt_one_in_flight, entries, .. }, Front::PersistBuffer) => {
                (Kind::PersistBuffer, *early_bmt_one_in_flight, *entries as usize)
            }
            (PersistPoint::MemoryController, Front::MemoryController) => (Kind::MemoryController, true, 0),
            _ => {
                return Err(format!(
                    "scheme `{name}` persists stores in the {}, which the timing model does not time: its caches hold tags only, with no \
                     dirty lines to write back, so an eADR store would be priced as a strict-persistency one. The functional model, \
                     check-crash, attacks and the battery model still run it.",
                    match scheme.front {
                        Front::CacheHierarchy => "data cache hierarchy (eADR)",
                        Front::PersistBuffer => "persist buffer",
                        Front::MemoryController => "memory controller",
                    }
                ))
            }
        };
        Ok(PersistPath {
            kind,
            core,
            scheme,
            early_one_in_flight: one,
            mc_pipelined: cfg.security.mc_bmt_pipelined,
            sit: matches!(cfg.tree, crate::config::TreeConfig::Sit { .. }),
            draining: VecDeque::new(),
            last_persist: 0,
            last_ack: 0,
            entries,
            rec: Some(Box::default()),
        })
    }

    /// When the stores released so far are persistent and ACKed (for
    /// fences: the next epoch's stores wait for the memory controller's
    /// ACK of this one's, which a deferred root update delays; Secon 3.3).
    pub fn persist_barrier(&self) -> u64 {
        match self.kind {
            Kind::PersistBuffer => 0,
            Kind::MemoryController => self.last_ack(),
        }
    }

    /// When the stores released so far are ACKed by the memory controller.
    pub fn last_ack(&self) -> u64 {
        self.last_ack.max(self.last_persist)
    }

    pub fn last_persist(&self) -> u64 {
        self.last_persist.max(self.draining.iter().copied().max().unwrap_or(0))
    }

    /// Whether a store to `block` takes the whole block into the persist
    /// path (a new buffer entry, a write at the MC) rather than only its bytes.
    pub fn needs_whole_block(&self, sys: &System, block: u64) -> bool {
        match (&self.kind, &sys.fronts[self.core]) {
            (Kind::PersistBuffer, FrontEnd::PersistBuffer(pb)) => !pb.contains(block),
            _ => true,
        }
    }

    /// Whether the scheme is an idealised baseline whose metadata work is
    /// not priced (`SchemeWork::ideal_metadata`).
    pub(super) fn ideal_metadata(&self) -> bool {
        self.scheme.ideal_metadata
    }

    /// An idealised baseline's metadata writes leave the record unpriced
    /// (counted); every other scheme's record is left as it is.
    pub(super) fn drop_unpriced(&self, layout: &crate::engine::layout::Layout, rec: &mut WorkRecord, stats: &mut PersistPathStats) {
        if self.scheme.ideal_metadata {
            let before = rec.writes.len();
            rec.writes.retain(|&w| layout.kind_of(w) == crate::engine::layout::RegionKind::Data);
            stats.unpriced_metadata_writes += (before - rec.writes.len()) as u64;
        }
    }

    /// The writes an operation queued hold WPQ slots from `t`; returns when
    /// the last got one.
    pub(super) fn queue_writes(pcm: &mut Pcm, t: u64, blocks: &[u64]) -> u64 {
        blocks.iter().fold(t, |done, &b| done.max(pcm.write(t, b)))
    }

    /// The operation's tree-update hashes on the hash unit from `ready`
    /// (after the verification reads, `tree_extra`): a BMT path's levels one
    /// after the other, each waiting for the hash below it; a SIT's side by
    /// side (STAR IV: "SIT can calculate different level MACs in parallel
    /// as long as these counters have been prepared"); a non-pipelined
    /// update holds the unit for all of them. Returns when the last is done.
    fn tree_update(&self, engine: &mut Engine, ready: u64, rec: &WorkRecord, tree_extra: u64, pipelined: bool) -> Option<u64> {
        let hashes = rec.update_hashes();
        (hashes > 0).then(|| {
            engine.tree_updates += 1;
            let start = ready + tree_extra;
            match (pipelined, self.sit) {
                (false, _) => engine.hash.hold(start, hashes * engine.hash.latency()),
                (true, true) => engine.hash.parallel(start, hashes),
                (true, false) => engine.hash.chain(start, hashes),
            }
        })
    }

    /// The operation's multiset-register increments (Kubo et al. 4.2: a
    /// line that enters or changes in the metadata cache is added to Read
    /// Hash, the value it replaces to Write Hash), from `ready`, when the
    /// new values are known, on each register's unit as the scheme
    /// declares it (pipelined with a serial accumulate, or one increment
    /// at a time; Table 1: 160 cycles a hash), the two side by side.
    /// Returns when both are done.
    fn register_update(engine: &mut Engine, ready: u64, rec: &WorkRecord) -> Option<u64> {
        let adds = [rec.crypto.read_hash_adds, rec.crypto.write_hash_adds];
        if adds == [0, 0] {
            return None;
        }
        let mut done = ready;
        for (register, n) in engine.registers.iter_mut().zip(adds) {
            if n > 0 {
                done = done.max(register.add(ready, n));
            }
        }
        Some(done)
    }

    /// The tree update and the register increments, which run on their
    /// own units side by side; when both are done.
    fn metadata_update(&self, engine: &mut Engine, ready: u64, rec: &WorkRecord, tree_extra: u64, pipelined: bool) -> Option<u64> {
        let tree = self.tree_update(engine, ready, rec, tree_extra, pipelined);
        let registers = Self::register_update(engine, ready, rec);
        tree.max(registers)
    }

    /// Metadata work of an operation off the persist path (a write-back of
    /// a volatile line's metadata, dirty metadata a load's fetch evicted, a
    /// flushed SecPB entry): a job of the engine's background queue from
    /// `t`, its tree update and register increments on their units, its
    /// writes queued when they are done. Returns when the job got its
    /// entry (a full queue holds the offerer back) and when it is done.
    /// A job with writes and no hashing (dirty metadata evicted with its
    /// MAC already made) is a job too: its entry is held until its writes
    /// hold write-queue slots, so a full WPQ holds the offerer back.
    pub(super) fn background_job(&self, engine: &mut Engine, pcm: &mut Pcm, t: u64, rec: &WorkRecord, writes: &[u64]) -> (u64, u64) {
        let hashes = rec.update_hashes() > 0 || rec.crypto.read_hash_adds + rec.crypto.write_hash_adds > 0;
        if !hashes && writes.is_empty() {
            return (t, t);
        }
        let at = engine.background.admit(t);
        // The job holds its entry until its writes hold write-queue slots:
        // a full WPQ backs up into this queue.
        let hashed = self.metadata_update(engine, at, rec, 0, true).unwrap_or(at);
        let end = Self::queue_writes(pcm, hashed, writes);
        engine.background.push(at, end);
        (at, end)
    }

    /// A page re-encryption (a minor counter overflowed): the old
    /// ciphertexts of the page's other blocks are read once the counter
    /// block is at hand (`ctr`), then each is decrypted, re-encrypted and
    /// MACed on the AES and MAC units. Returns when its writes may be
    /// queued (`ctr` when the operation re-encrypted nothing).
    fn reencryption(pcm: &mut Pcm, engine: &mut Engine, ctr: u64, rec: &WorkRecord) -> u64 {
        if rec.data_reads.is_empty() {
            return ctr;
        }
        let read = rec.data_reads.iter().fold(ctr, |done, &a| done.max(pcm.read(ctr, a)));
        let mut done = read;
        for _ in 0..rec.crypto.macs.saturating_sub(1) {
            let pad = engine.aes.issue(read);
            done = done.max(engine.mac.issue(pad + 1));
        }
        done
    }

    /// A page re-encryption that does not hold back the store that caused
    /// it (a persist buffer's early counter, a drained entry's late one):
    /// a job of the engine's background queue, admitted once the counter
    /// block is at hand (`ctr`; a full queue holds the offerer back), its
    /// reads and crypto from then. Returns when it was admitted and when
    /// its writes may be queued; the job holds its entry until they hold
    /// WPQ slots ([`Self::end_job`]). `None` when nothing was re-encrypted.
    fn reencryption_job(pcm: &mut Pcm, engine: &mut Engine, ctr: u64, rec: &WorkRecord) -> Option<(u64, u64)> {
        if rec.data_reads.is_empty() {
            return None;
        }
        let at = engine.background.admit(ctr);
        Some((at, Self::reencryption(pcm, engine, at, rec)))
    }

    /// A background job admitted at `at` (if any) is over once its writes
    /// hold WPQ slots, at `slots`.
    fn end_job(engine: &mut Engine, job: Option<(u64, u64)>, slots: u64) {
        if let Some((at, _)) = job {
            engine.background.push(at, slots);
        }
    }

    /// Price a released store; returns when the next store may go.
    pub fn store(&mut self, sys: &mut System, cx: Ctx, s: ReleasedStore) -> Result<u64, CheckFailure> {
        match self.kind {
            Kind::PersistBuffer => self.buffer_store(sys, cx, s),
            Kind::MemoryController => self.mc_store(sys, cx, s),
        }
    }

    fn buffer_store(&mut self, sys: &mut System, cx: Ctx, s: ReleasedStore) -> Result<u64, CheckFailure> {
        let Ctx { pcm, lat, engine, stats } = cx;
        let mut t = s.release;
        let (resident, occupancy) = match &sys.fronts[self.core] {
            FrontEnd::PersistBuffer(pb) => (pb.contains(s.block), pb.occupancy()),
            _ => unreachable!("a persist-buffer path without a persist buffer"),
        };
        if !resident {
            // A new entry needs a free slot: entries being drained hold
            // theirs until the MC has queued their writes.
            while self.draining.front().is_some_and(|&f| f <= t) {
                self.draining.pop_front();
            }
            while occupancy + self.draining.len() >= self.entries {
                let f = self.draining.pop_front().expect("a full buffer has drains in flight");
                if f > t {
                    stats.buffer_mut().full_stall_cycles += f - t;
                    t = f;
                }
            }
            // Another core's SecPB may hold the block: its entry migrates
            // here with its early metadata (SecPB IV-C c), one round trip
            // through the directory at the shared level.
            if sys.claim_for_store(self.core, s.block)? == Handover::Migrated {
                t += lat.l3;
                stats.buffer_mut().migrated_in += 1;
            }
        }
        let System { fronts, mc, .. } = sys;
        let FrontEnd::PersistBuffer(pb) = &mut fronts[self.core] else { unreachable!("a persist-buffer path without a persist buffer") };
        let mark = WorkRecord::start(mc);
        let out = pb.store_filled(mc, s.block, s.bytes.start, &s.fill[s.bytes.clone()], if resident { None } else { Some(s.fill) })?;
        // Writes of the early work (a page re-encrypted on a minor-counter
        // overflow) go to the WPQ without holding the store back.
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(mc, mark, s.block);
        let w = out.early;
        let start = t + lat.pb_access;
        let data = if out.allocated { start.max(s.data_ready) } else { start };
        let mut done = start;
        // When the entry's pad is at hand: made now, or kept from an earlier
        // store to the same entry (coalesced).
        let mut pad = start;
        let mut reencryption = None;
        if w.contains(TupleStep::Counter) {
            let (ctr, tree_extra) = engine.metadata_reads(pcm, start, &rec);
            reencryption = Self::reencryption_job(pcm, engine, ctr, &rec);
            done = done.max(ctr).max(reencryption.map_or(0, |(at, _)| at));
            if let Some(b) = self.metadata_update(engine, ctr, &rec, tree_extra, !self.early_one_in_flight) {
                done = done.max(b);
            }
            if w.contains(TupleStep::Otp) {
                pad = engine.aes.issue(ctr);
                done = done.max(pad);
            }
        }
        // Fig. 4: the ciphertext needs the pad and the data, not the tree
        // update, which runs beside it.
        if w.contains(TupleStep::Ciphertext) {
            let ct = data.max(pad) + 1;
            done = done.max(ct);
            if w.contains(TupleStep::Mac) {
                done = done.max(engine.mac.issue(ct));
            }
        }
        if out.allocated {
            done += lat.pb_access * u64::from(self.scheme.allocate_extra_accesses);
        }
        let slots = Self::queue_writes(pcm, done.max(reencryption.map_or(0, |(_, r)| r)), &rec.writes);
        Self::end_job(engine, reencryption, slots);
        stats.cycles += done - t;
        if out.allocated {
            stats.buffer_mut().allocations += 1;
        }
        // Drain at the high watermark, down to the low watermark.
        for _ in 0..pb.watermark_drains() {
            let mark = WorkRecord::start(mc);
            let Some((b, late)) = pb.drain_oldest(mc)? else { break };
            rec.fill(mc, mark, b);
            let freed = self.mc_late_work(pcm, engine, lat, t, b, late, &rec, mc.secure());
            self.draining.push_back(freed);
            stats.buffer_mut().drains += 1;
        }
        self.last_persist = self.last_persist.max(t);
        self.rec = Some(rec);
        Ok(done)
    }

    /// The MC completes a drained entry's tuple; returns when the entry's
    /// buffer slot frees (its data block holds a WPQ slot).
    #[allow(clippy::too_many_arguments)]
    fn mc_late_work(
        &mut self,
        pcm: &mut Pcm,
        engine: &mut Engine,
        lat: &Latencies,
        t: u64,
        block: u64,
        late: Steps,
        rec: &WorkRecord,
        secure: bool,
    ) -> u64 {
        let issue = t.max(engine.mc_next);
        let updates_tree = rec.update_hashes() > 0;
        // The engine takes one drained entry per buffer access, or per hash
        // pipeline stage when the entry still needs its tree update.
        engine.mc_next = issue + if updates_tree { lat.hash_interval.max(lat.pb_access) } else { lat.pb_access };
        let mut done = issue;
        let mut reencryption = None;
        if secure {
            let (ctr, tree_extra) = engine.metadata_reads(pcm, issue, rec);
            reencryption = Self::reencryption_job(pcm, engine, ctr, rec);
            let ctr = if late.contains(TupleStep::Counter) { ctr } else { issue };
            let otp = if late.contains(TupleStep::Otp) { engine.aes.issue(ctr) } else { issue };
            let ct = otp.max(issue) + 1;
            let mac = if late.contains(TupleStep::Mac) { engine.mac.issue(ct) } else { ct };
            done = done.max(mac);
            if let Some(b) = self.metadata_update(engine, ctr, rec, tree_extra, self.mc_pipelined) {
                done = done.max(b);
            }
        }
        // Fig. 3c: a drained block waits at the MC (in the battery-backed
        // WPQ) while its tuple is completed, so its buffer slot frees as soon
        // as it holds a WPQ slot; the metadata writes follow the late work.
        // The entry waits at the MC while its re-encryption waits for an
        // entry of the background queue.
        let mut freed = reencryption.map_or(issue, |(at, _)| at);
        let mut slots = issue;
        for &w in &rec.writes {
            if w == block {
                freed = freed.max(pcm.write_when_ready(issue, done, w));
            } else {
                slots = slots.max(pcm.write(done.max(reencryption.map_or(issue, |(_, r)| r)), w));
            }
        }
        Self::end_job(engine, reencryption, slots);
        freed
    }

    /// A write that defers its root update needs a place in the pending
    /// queue (Secon 3.2: a full queue or bitmap stalls the next write), and
    /// its block's minor must not already be marked: either waits for the
    /// update that frees it. Returns when the write may go on.
    fn wait_for_pending_slot(
        engine: &mut Engine,
        stats: &mut PersistPathStats,
        t: u64,
        (counter_block, minor): (u64, usize),
        cap: usize,
    ) -> u64 {
        let mut t = t;
        engine.pending.retain(|p| p.ack > t);
        let d = stats.deferred_roots.get_or_insert_with(Default::default);
        if let Some(p) = engine.pending.iter().find(|p| p.counter_block == counter_block) {
            if p.minors >> minor & 1 == 1 {
                d.same_block_waits += 1;
                d.wait_cycles += p.ack - t;
                t = p.ack;
                engine.pending.retain(|p| p.ack > t);
            }
            return t;
        }
        if engine.pending.len() >= cap {
            let first = engine.pending.iter().map(|p| p.ack).min().expect("a full queue has entries");
            d.queue_full_waits += 1;
            d.wait_cycles += first - t;
            t = first;
            engine.pending.retain(|p| p.ack > t);
        }
        t
    }

    /// Start the background root update of a write whose first-level CMAC
    /// is made at `cmac` (the levels above it, on the shared engine) and
    /// note it pending; returns when it ACKs the write. The functional
    /// model settles a level-1 node's updates at once where a barrier or a
    /// full queue asks; their hashes are the updates booked here, not
    /// priced again.
    fn background_root(
        &mut self,
        engine: &mut Engine,
        stats: &mut PersistPathStats,
        lat: &Latencies,
        (counter_block, minor): (u64, usize),
        cmac: u64,
        levels: u64,
    ) -> u64 {
        let above = levels.saturating_sub(1);
        engine.tree_updates += 1;
        // On the shared hash unit, as every root update: booked ahead of
        // others (a TEP data line sent at its log's future ACK), it holds
        // back none of them (the unit keeps a calendar).
        let ack = match self.mc_pipelined {
            true => engine.hash.chain(cmac, above),
            false => engine.hash.hold(cmac, above * lat.hash),
        };
        match engine.pending.iter_mut().find(|p| p.counter_block == counter_block) {
            Some(p) => {
                p.minors |= 1 << minor;
                p.ack = p.ack.max(ack);
            }
            None => engine.pending.push_back(PendingRoot { counter_block, minors: 1 << minor, ack }),
        }
        stats.deferred_roots.get_or_insert_with(Default::default).updates += 1;
        self.last_ack = self.last_ack.max(ack);
        ack
    }

    /// A store persisted at the memory controller (strict persistency
    /// with a flush per store, or a line an epoch's barrier sends): its
    /// work starts when it arrives, on the engine's units, beside whatever
    /// earlier stores left running; it is complete when its scheme's
    /// [`Completion`] says, and persists no earlier than the stores before
    /// it (the WPQ takes them in order). Returns when it is complete.
    fn mc_store(&mut self, sys: &mut System, cx: Ctx, s: ReleasedStore) -> Result<u64, CheckFailure> {
        let Ctx { pcm, lat, engine, stats } = cx;
        let mark = WorkRecord::start(&mut sys.mc);
        sys.mc.write(s.block, &s.fill)?;
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(&mut sys.mc, mark, s.block);
        self.drop_unpriced(&sys.mc.st.layout, &mut rec, stats);
        let mut arrive = s.release.max(s.data_ready) + lat.l1;
        let deferred = self.scheme.deferred_root_updates as usize;
        let secure = sys.mc.secure();
        if deferred > 0 && secure {
            arrive = Self::wait_for_pending_slot(engine, stats, arrive, sys.mc.layout().counter_of(s.block), deferred);
        }
        let completion = if secure && deferred == 0 && !self.scheme.ideal_metadata { self.scheme.completion } else { Completion::Root };
        let mut done = arrive;
        let mut ack = None;
        let mut background = None;
        if secure {
            let (ctr, tree_extra) = engine.metadata_reads(pcm, arrive, &rec);
            let pad = engine.aes.issue(ctr);
            let mac = engine.mac.issue(pad.max(arrive) + 1);
            let reencrypted = Self::reencryption(pcm, engine, ctr, &rec);
            done = mac.max(reencrypted);
            if deferred > 0 {
                // Secon 3.2: the tuple (ciphertext, counter, first-level
                // CMAC) goes to the WPQ once its CMAC is made; the root
                // update above the first level runs in the background and
                // ACKs the write.
                let cmac = engine.hash.issue(ctr + tree_extra);
                let levels = sys.mc.layout().levels() as u64;
                ack = Some(self.background_root(engine, stats, lat, sys.mc.layout().counter_of(s.block), cmac, levels));
                done = done.max(cmac);
            } else if self.scheme.ideal_metadata {
                // An ideal baseline's tree update costs nothing (Secon 4.1).
            } else if completion == Completion::Tuple {
                // The tree update is handed to the background queue once the
                // counter is known; a full queue holds the store back.
                if rec.update_hashes() > 0 || rec.crypto.read_hash_adds + rec.crypto.write_hash_adds > 0 {
                    let at = engine.background.admit(ctr);
                    let end = self.metadata_update(engine, at, &rec, tree_extra, self.mc_pipelined).unwrap_or(at);
                    done = done.max(at);
                    background = Some((at, end));
                }
            } else if let Some(t) = self.metadata_update(engine, ctr, &rec, tree_extra, self.mc_pipelined) {
                done = done.max(t);
            }
        }
        let persisted = match completion {
            Completion::Root => Self::queue_writes(pcm, done, &rec.writes),
            Completion::Tuple => {
                // The tuple's lines now; the tree's once its update is done.
                let layout = sys.mc.layout();
                let is_tree = |w: u64| layout.kind_of(w) == crate::engine::layout::RegionKind::Tree;
                let mut persisted = done;
                let mut queued = background.map(|(at, end)| (at, end, end));
                for &w in &rec.writes {
                    match (is_tree(w), &mut queued) {
                        (true, Some((_, end, slots))) => *slots = (*slots).max(pcm.write(*end, w)),
                        _ => persisted = persisted.max(pcm.write(done, w)),
                    }
                }
                // The job holds its entry until its writes hold slots.
                if let Some((at, _, slots)) = queued {
                    engine.background.push(at, slots);
                }
                persisted
            }
            Completion::Staged => {
                // Triad-NVM Fig. 7: logged in the persistent registers once
                // they are free (the READY bit set), then copied to the WPQ,
                // which holds them until every line has a slot.
                let logged = engine.persistent_registers.free_from(done);
                let copied = Self::queue_writes(pcm, logged, &rec.writes);
                engine.persistent_registers.occupy(logged, copied);
                logged
            }
        };
        if let (Some(a), Some(d)) = (ack, &mut stats.deferred_roots) {
            d.ack_lag_cycles += a.saturating_sub(persisted);
        }
        // Persists are ordered: none completes before the stores before it.
        let persisted = persisted.max(self.last_persist);
        stats.cycles += persisted - s.release;
        self.last_persist = persisted;
        self.rec = Some(rec);
        Ok(persisted)
    }
}

#[cfg(test)]
mod tests {
    //! Exact-cycle unblock times of SecPB Fig. 4's dependency graph, one
    //! per scheme, against an idle PCM: a store whose counter block and
    //! tree path are already in the metadata caches, released when every
    //! unit is idle. Each expectation is the figure's formula over the
    //! latencies, so a change to any edge of the graph fails here.

    use super::*;
    use crate::config::load_preset;

    /// Round, distinct latencies so that no two paths tie by accident.
    fn latencies() -> Latencies {
        Latencies {
            l1: 3,
            l1i: 3,
            l2: 20,
            l3: 30,
            nvm_read: 220,
            mdc: 2,
            mac: 40,
            hash: 40,
            hash_interval: 1,
            mset_hash: 160,
            aes: 37,
            pb_access: 5,
        }
    }

    /// Cycles from the release of a store to block 1 until the next store
    /// may go, after a store to block 0 of the same page warmed the
    /// counter block and the tree path; with the latencies and the tree's
    /// height (the hashes of one eager BMT update).
    fn unblock(preset: &str) -> (u64, Latencies, u64) {
        let (done, _, lat, levels) = unblock_and_ack(preset);
        (done, lat, levels)
    }

    /// [`unblock`], and the cycles until a fence after the store may
    /// retire (the store ACKed).
    fn unblock_and_ack(preset: &str) -> (u64, u64, Latencies, u64) {
        let cfg = load_preset(preset, &["memory.capacity_bytes=67108864".into()]).unwrap();
        let mut sys = System::new(&cfg, 1);
        sys.mc.st.nvm.log_writes = true;
        let lat = latencies();
        let levels = sys.mc.layout().levels() as u64;
        let mut path = PersistPath::new(&cfg, 0).unwrap();
        let mut engine = Engine::new(super::super::engine::EngineShape {
            aes: (1, lat.aes, 1),
            mac: (1, lat.mac, 1),
            hash: (1, lat.hash, lat.hash_interval),
            registers: (lat.mset_hash, cfg.scheme.params().hash_registers().unwrap_or(crate::scheme::params::HashRegisters::OneAtATime)),
            background_entries: 16,
            metadata_cache: (1, lat.mdc, 32),
        });
        let mut pcm = Pcm::new(16, 220, 600, 32);
        let mut stats = PersistPathStats::default();
        let mut go = |path: &mut PersistPath, sys: &mut System, pcm: &mut Pcm, stats: &mut PersistPathStats, block: u64, release: u64| {
            let fill = [block as u8 + 1; 64];
            let cx = Ctx { pcm, lat: &lat, engine: &mut engine, stats };
            path.store(sys, cx, ReleasedStore { release, data_ready: release, block, bytes: 0..8, fill }).unwrap()
        };
        go(&mut path, &mut sys, &mut pcm, &mut stats, 0, 0);
        let release = 1_000_000;
        let done = go(&mut path, &mut sys, &mut pcm, &mut stats, 1, release);
        (done - release, path.persist_barrier().saturating_sub(release), lat, levels)
    }

    #[test]
    fn secons_write_persists_before_its_root_update_and_a_fence_waits_for_it() {
        // Secon 3.2: the tuple leaves once the data MAC and the first-level
        // CMAC are made; the levels above hash in the background, and the
        // next epoch waits for that ACK (Secon 3.3).
        let (got, ack, l, levels) = unblock_and_ack("secon");
        let ctr = l.l1 + l.mdc;
        assert_eq!(got, (ctr + l.aes + 1 + l.mac).max(ctr + l.mac));
        assert_eq!(ack, ctr + l.mac + (levels - 1) * l.mac);
        // WT holds the write until the whole root update is done.
        let (wt, wt_ack, _, _) = unblock_and_ack("wt");
        assert_eq!((wt, wt_ack), (ack, ack));
        assert!(got < wt);
    }

    #[test]
    fn fig4_unblock_time_of_every_secpb_scheme() {
        let (_, l, levels) = unblock("cobcm");
        let start = l.pb_access;
        let ctr = start + l.mdc;
        let otp = ctr + l.aes;
        let tree = ctr + levels * l.mac;
        let ct = otp + 1;
        let mac = ct + l.mac;
        for (preset, want) in [
            // NoGap: everything early: max(BMT root update, MAC).
            ("nogap", tree.max(mac)),
            // M: all but the MAC: max(BMT, ciphertext).
            ("m", tree.max(ct)),
            // CM: counter, OTP and BMT: max(BMT, OTP).
            ("cm", tree.max(otp)),
            // BCM: counter and OTP.
            ("bcm", otp),
            // OBCM: the counter, plus a second SecPB access for its valid bit.
            ("obcm", ctr + l.pb_access),
            // COBCM and BBB: the access only.
            ("cobcm", start),
            ("bbb", start),
        ] {
            let (got, _, _) = unblock(preset);
            assert_eq!(got, want, "{preset}");
        }
        // The tree update dominates the early-BMT schemes at these latencies,
        // so the order of Fig. 4 holds.
        assert!(tree > mac && mac > otp && otp > ctr + l.pb_access && ctr + l.pb_access > start);
    }

    #[test]
    fn strict_persistency_waits_for_the_whole_tuple() {
        // SP (PLP) at the MC: the store arrives after an L1 access, then its
        // counter, OTP, ciphertext and MAC beside the root update; the next
        // store goes once the tuple's writes hold WPQ slots (idle: at once).
        let (got, l, levels) = unblock("sp");
        let ctr = l.l1 + l.mdc;
        assert_eq!(got, (ctr + l.aes + 1 + l.mac).max(ctr + levels * l.mac));
    }

    #[test]
    fn the_multiset_registers_run_behind_the_store_and_the_baseline_waits_for_its_root() {
        // Kubo et al. 4.2-4.3: a store whose counter block is cached changes
        // that line only: its new value goes into Read Hash, its old one
        // into Write Hash, one increment on each register's unit, and no
        // tree hash (a cached line acts as a root). The store is complete
        // with its data and MAC; the increments run in the background.
        let (got, l, _) = unblock("mset");
        let ctr = l.l1 + l.mdc;
        assert!(l.mset_hash > l.aes + 1 + l.mac, "the latencies must tell the two paths apart");
        assert_eq!(got, ctr + l.aes + 1 + l.mac);
        // Without the registers (the write-through baseline on the same
        // machine) the store waits for its eager tree update instead.
        let (base, l, levels) = unblock("mset-baseline");
        assert_eq!(base, (ctr + l.aes + 1 + l.mac).max(ctr + levels * l.hash));
    }
}
