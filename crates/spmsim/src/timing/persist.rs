//! Timing of the persist path: what a released store costs before the
//! next one may go (the unblocking signal), and the background drain.
//!
//! SecPB (SecPB IV-B, Fig. 4 dependency graph), per new entry:
//! ```text
//!  counter (MDC hit 2 / NVM read) -> OTP (AES) ---------> ciphertext (1) -> MAC (40)
//!                                  \-> BMT root update: levels x MAC latency
//!                                      (one update in flight when done early)
//!  unblock after: NoGap max(BMT, MAC) | M max(BMT, ct) | CM max(BMT, OTP)
//!                 BCM OTP | OBCM counter + a second SecPB access | COBCM access
//! ```
//! A coalesced store costs the access, plus ciphertext (M) or ciphertext
//! and MAC (NoGap). Drains start at the high watermark and go on to the low
//! watermark; the MC does the late work (pipelined BMT updates) and the
//! entry is freed once its writes hold WPQ slots.
//!
//! SP (PLP at the memory controller): each store's whole tuple is produced
//! at the MC and its writes enter the WPQ before the next store proceeds.

use super::pcm::Pcm;
use super::stats::RunStats;
use super::{Latencies, Probe};
use crate::config::{PersistPoint, SimConfig};
use crate::persist::{FrontEnd, Work};
use crate::store::CheckFailure;
use crate::system::System;
use std::collections::VecDeque;

#[derive(Default)]
struct BmtUnit {
    /// Earliest start of a non-pipelined update (one in flight).
    busy_until: u64,
    /// Earliest start of a pipelined update.
    next_issue: u64,
}

impl BmtUnit {
    fn update(&mut self, ready: u64, duration: u64, stage: u64, pipelined: bool) -> u64 {
        let start = if pipelined { ready.max(self.next_issue) } else { ready.max(self.busy_until) };
        let done = start + duration;
        self.next_issue = self.next_issue.max(start + stage);
        self.busy_until = self.busy_until.max(done);
        done
    }
}

pub struct PersistPath {
    kind: Kind,
    bmt: BmtUnit,
    early_one_in_flight: bool,
    mc_pipelined: bool,
    /// Entries drained but not yet freed (time each frees).
    draining: VecDeque<u64>,
    mc_next: u64,
    last_persist: u64,
    capacity: usize,
}

enum Kind {
    SecPb,
    Sp,
}

impl PersistPath {
    pub fn new(cfg: &SimConfig) -> Self {
        let (kind, one, capacity) = match &cfg.persistence.point {
            PersistPoint::PersistBuffer { early_bmt_one_in_flight, entries, .. } => {
                (Kind::SecPb, *early_bmt_one_in_flight, *entries as usize)
            }
            // The functional model's eADR cache is not timed; it runs as SP.
            PersistPoint::MemoryController | PersistPoint::CacheHierarchy { .. } => (Kind::Sp, true, 0),
        };
        PersistPath {
            kind,
            bmt: BmtUnit::default(),
            early_one_in_flight: one,
            mc_pipelined: cfg.security.mc_bmt_pipelined,
            draining: VecDeque::new(),
            mc_next: 0,
            last_persist: 0,
            capacity,
        }
    }

    /// When the stores released so far are persistent (for fences).
    pub fn persist_barrier(&self) -> u64 {
        match self.kind {
            Kind::SecPb => 0,
            Kind::Sp => self.last_persist,
        }
    }

    pub fn last_persist(&self) -> u64 {
        self.last_persist.max(self.draining.iter().copied().max().unwrap_or(0))
    }

    pub fn pb_stats(&self) -> usize {
        self.capacity
    }

    /// Whether a store to `block` takes the whole block into the persist
    /// path (a new SecPB entry, an SP write) rather than only its bytes.
    pub fn needs_whole_block(&self, sys: &System, block: u64) -> bool {
        match (&self.kind, &sys.front) {
            (Kind::SecPb, FrontEnd::PersistBuffer(pb)) => !pb.contains(block),
            _ => true,
        }
    }

    /// The writes an operation queued hold WPQ slots from `t`; returns when
    /// the last got one.
    pub(super) fn queue_writes(pcm: &mut Pcm, t: u64, blocks: &[u64]) -> u64 {
        blocks.iter().fold(t, |done, &b| done.max(pcm.write(t, b)))
    }

    /// Counter and tree reads of an operation, issued at `t`; returns when
    /// the counter is available and the extra time the tree fetches add.
    fn metadata_reads(pcm: &mut Pcm, lat: &Latencies, t: u64, d: &Probe, key: u64) -> (u64, u64) {
        let mut ctr = t + lat.mdc;
        for i in 0..d.reads.counter {
            ctr = ctr.max(pcm.read(t + lat.mdc, key ^ (0x77 + i)));
        }
        let mut tree_extra = 0;
        for i in 0..d.reads.tree {
            let done = pcm.read(ctr, key ^ (0x99 + i));
            tree_extra = tree_extra.max(done - ctr);
        }
        for i in 0..d.reads.mac {
            pcm.read(t, key ^ (0x55 + i));
        }
        (ctr, tree_extra)
    }

    #[allow(clippy::too_many_arguments)]
    pub fn store(
        &mut self,
        sys: &mut System,
        pcm: &mut Pcm,
        lat: &Latencies,
        stats: &mut RunStats,
        release: u64,
        data_ready: u64,
        block: u64,
        bytes: std::ops::Range<usize>,
        fill: [u8; 64],
    ) -> Result<u64, CheckFailure> {
        match self.kind {
            Kind::SecPb => self.secpb_store(sys, pcm, lat, stats, release, data_ready, block, bytes, fill),
            Kind::Sp => self.sp_store(sys, pcm, lat, stats, release, data_ready, block, fill),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn secpb_store(
        &mut self,
        sys: &mut System,
        pcm: &mut Pcm,
        lat: &Latencies,
        stats: &mut RunStats,
        release: u64,
        data_ready: u64,
        block: u64,
        bytes: std::ops::Range<usize>,
        fill: [u8; 64],
    ) -> Result<u64, CheckFailure> {
        let mut t = release;
        let System { front, mc, .. } = sys;
        let FrontEnd::PersistBuffer(pb) = front else { unreachable!("SecPB path without a persist buffer") };
        let resident = pb.contains(block);
        if !resident {
            // A new entry needs a free slot: entries being drained hold
            // theirs until the MC has queued their writes.
            while let Some(&f) = self.draining.front() {
                if f <= t {
                    self.draining.pop_front();
                } else {
                    break;
                }
            }
            while pb.occupancy() + self.draining.len() >= self.capacity {
                let f = self.draining.pop_front().expect("a full buffer has drains in flight");
                if f > t {
                    stats.roi.secpb_full_stall_cycles += f - t;
                    t = f;
                }
            }
        }
        let before = Probe::of_mc(mc);
        let scheme = pb.scheme;
        let out = pb.store_filled(mc, block, bytes.start, &fill[bytes.clone()], if resident { None } else { Some(fill) })?;
        let d = Probe::of_mc(mc).since(&before);
        // Writes of the early work (a page re-encrypted on a minor-counter
        // overflow) go to the WPQ without holding the store back.
        let early_writes = std::mem::take(&mut mc.st.nvm.write_log);
        let w = out.early;
        let start = t + lat.pb_access;
        let data = if out.allocated { start.max(data_ready) } else { start };
        let mut done = start;
        if w.counter {
            let (ctr, tree_extra) = Self::metadata_reads(pcm, lat, start, &d, block);
            let otp = ctr + if w.otp { lat.aes } else { 0 };
            done = done.max(ctr);
            if w.bmt {
                let b = self.bmt.update(ctr, lat.levels * lat.mac + tree_extra, lat.hash_interval, !self.early_one_in_flight);
                done = done.max(b);
            }
            if w.otp {
                done = done.max(otp);
            }
        }
        if w.ciphertext {
            let ct = data.max(done) + 1;
            done = done.max(ct);
            if w.mac {
                done = done.max(ct + lat.mac);
            }
        }
        if out.allocated && scheme == crate::config::SecPbScheme::Obcm {
            // OBCM checks the counter valid bit: a second SecPB access.
            done += lat.pb_access;
        }
        Self::queue_writes(pcm, done, &early_writes);
        stats.roi.secpb_early_cycles += done - t;
        if out.allocated {
            stats.roi.secpb_allocations += 1;
        }
        // Drain at the high watermark, down to the low watermark.
        if pb.needs_drain() {
            while pb.occupancy() > pb.low {
                let before = Probe::of_mc(mc);
                let Some((b, late)) = pb.drain_oldest(mc)? else { break };
                let d = Probe::of_mc(mc).since(&before);
                let writes = std::mem::take(&mut mc.st.nvm.write_log);
                let freed = self.mc_late_work(pcm, lat, t, b, &late, &d, &writes, mc.secure);
                self.draining.push_back(freed);
                stats.roi.secpb_drains += 1;
            }
        }
        self.last_persist = self.last_persist.max(t);
        Ok(done)
    }

    /// The MC completes a drained entry's tuple; returns when the entry's
    /// SecPB slot frees (its data block holds a WPQ slot).
    #[allow(clippy::too_many_arguments)]
    fn mc_late_work(
        &mut self,
        pcm: &mut Pcm,
        lat: &Latencies,
        t: u64,
        block: u64,
        late: &Work,
        d: &Probe,
        writes: &[u64],
        secure: bool,
    ) -> u64 {
        let issue = t.max(self.mc_next);
        // The engine takes one drained entry per SecPB access, or per hash
        // pipeline stage when the entry still needs its BMT update.
        self.mc_next = issue + if secure && late.bmt { lat.hash_interval.max(lat.pb_access) } else { lat.pb_access };
        let mut done = issue;
        if secure {
            let (ctr, tree_extra) = Self::metadata_reads(pcm, lat, issue, d, block);
            let ctr = if late.counter { ctr } else { issue };
            let otp = if late.otp { ctr + lat.aes } else { issue };
            let ct = otp.max(issue) + 1;
            let mac = if late.mac { ct + lat.mac } else { ct };
            done = done.max(mac);
            if late.bmt {
                done = done.max(self.bmt.update(ctr, lat.levels * lat.mac + tree_extra, lat.hash_interval, self.mc_pipelined));
            }
        }
        // Fig. 3c: a drained block waits at the MC (in the battery-backed
        // WPQ) while its tuple is completed, so its SecPB slot frees as soon
        // as it holds a WPQ slot; the metadata writes follow the late work.
        let mut freed = issue;
        for &w in writes {
            if w == block {
                freed = freed.max(pcm.write_when_ready(issue, done, w));
            } else {
                pcm.write(done, w);
            }
        }
        freed
    }

    #[allow(clippy::too_many_arguments)]
    fn sp_store(
        &mut self,
        sys: &mut System,
        pcm: &mut Pcm,
        lat: &Latencies,
        stats: &mut RunStats,
        release: u64,
        data_ready: u64,
        block: u64,
        fill: [u8; 64],
    ) -> Result<u64, CheckFailure> {
        // Strict persistency at the MC: the store is flushed and its whole
        // memory tuple persists before the next store's.
        let t = release.max(self.last_persist);
        let before = Probe::of(sys);
        sys.mc.write(block, &fill)?;
        let d = Probe::of(sys).since(&before);
        let writes = std::mem::take(&mut sys.mc.st.nvm.write_log);
        let arrive = t.max(data_ready) + lat.l1;
        let mut done = arrive;
        if sys.mc.secure {
            let (ctr, tree_extra) = Self::metadata_reads(pcm, lat, arrive, &d, block);
            let otp = ctr + lat.aes;
            let mac = otp + 1 + lat.mac;
            let bmt = self.bmt.update(ctr, lat.levels * lat.mac + tree_extra, lat.hash_interval, false);
            done = mac.max(bmt);
        }
        let persisted = Self::queue_writes(pcm, done, &writes);
        stats.roi.secpb_early_cycles += persisted - release;
        self.last_persist = persisted;
        // The store buffer releases the next store once this one is in
        // the persistence domain.
        Ok(persisted)
    }
}
