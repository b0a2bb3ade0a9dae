//! A core's accesses to memory: a block brought to its L1 through L2, L3
//! and the memory controller, the dirty victims on the way written back,
//! and, with several cores, the coherence of their private levels.
//!
//! ```text
//!  fetch(c, t, block): L1 hit: l1 | L2 hit: l2 | L3 hit: l3 (or the victim's slot)
//!    miss: the functional read (mc.read) -> WorkRecord
//!          data read || counter fetch -> OTP (aes); MAC and tree reads
//!          speculative (bandwidth, no latency); evicted dirty metadata
//!          written in the background with its tree work
//!  a dirty victim -> write_back: encrypted, MACed, the tree updated in the
//!          background; the fill waits for its write-queue slot
//!  share (several cores): a write drops the others' copies; a read of a
//!          block in another core's SecPB flushes that entry
//! ```

use super::persist::PersistPath;
use super::tags::Lookup;
use super::work::WorkRecord;
use super::TimingSim;
use crate::engine::store::CheckFailure;
use crate::persist::Handover;

impl TimingSim {
    /// Latency of bringing `block` to core `c`'s L1 at time `t` (filling
    /// every level). Another core's copy in its private caches is dropped
    /// on a write (invalidation); another core's SecPB entry for it is
    /// flushed to memory on a read, beside the data's delivery (SecPB IV-C c).
    pub(super) fn fetch(&mut self, c: usize, t: u64, block: u64, write: bool) -> Result<u64, CheckFailure> {
        if self.units.len() > 1 {
            self.share(c, t, block, write)?;
            let u = &mut self.units[c];
            u.lo = u.lo.min(block);
            u.hi = u.hi.max(block);
        }
        let u = &mut self.units[c];
        let Lookup::Miss { dirty_victim: v1 } = u.l1.lookup(block) else { return Ok(self.lat.l1) };
        let (l2, l3) = match u.l2.lookup(block) {
            Lookup::Hit => (Lookup::Hit, Lookup::Hit),
            l2 => (l2, self.l3.lookup(block)),
        };
        let v2 = match l2 {
            Lookup::Miss { dirty_victim } => dirty_victim,
            Lookup::Hit => None,
        };
        let v3 = match l3 {
            Lookup::Miss { dirty_victim } => dirty_victim,
            Lookup::Hit => None,
        };
        // Each dirty victim goes down to the next level that holds its
        // block, or back to memory from the last (no level allocates for
        // a victim, so the hits and misses are those of the clean model).
        let mut victim_out = t;
        if v1.is_some() || v2.is_some() || v3.is_some() {
            let at = t + self.lat.l3;
            let u = &mut self.units[c];
            let to_memory: Vec<u64> =
                [v1.filter(|&v| !u.l2.mark_dirty(v)), v2].into_iter().flatten().filter(|&v| !self.l3.mark_dirty(v)).chain(v3).collect();
            for v in to_memory {
                victim_out = victim_out.max(self.write_back(c, at, v)?);
            }
        }
        if l2 == Lookup::Hit {
            return Ok(self.lat.l2);
        }
        if l3 == Lookup::Hit {
            return Ok(self.lat.l3.max(victim_out - t));
        }
        // Memory: the data read and the counter fetch run in parallel; the
        // OTP follows the counter; MAC and tree checks are speculative
        // (SecPB V-A), so they cost bandwidth but not latency.
        let mark = WorkRecord::start(&mut self.sys.mc);
        let value = self.sys.mc.read(block)?;
        debug_assert_eq!(value, self.sys.mc.peek_plaintext(block), "a read and a peek of memory disagree");
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(&mut self.sys.mc, mark, block);
        let u = &mut self.units[c];
        u.path.drop_unpriced(&self.sys.mc.st.layout, &mut rec, &mut u.persist);
        let t0 = t + self.lat.l3;
        // Dirty metadata the read evicted is written back in the background
        // (with its tree work: a lazy SIT write-back MACs the node); a full
        // background queue holds the read back.
        let admitted = if self.units[c].path.ideal_metadata() {
            PersistPath::queue_writes(&mut self.pcm, t0, &rec.writes);
            t0
        } else {
            self.units[c].path.background_job(&mut self.engine, &mut self.pcm, t0, &rec, &rec.writes).0
        };
        let data = self.pcm.read(t0, block);
        let mut done = data.max(admitted);
        if self.sys.mc.secure() {
            // The counter fetch runs beside the data read; its tree checks
            // are speculative, as are the MAC line reads.
            let looked = self.engine.lookup(t0);
            let mut ctr = looked;
            for &a in &rec.counter_reads {
                ctr = ctr.max(self.engine.miss(&mut self.pcm, t0, a));
            }
            for &a in rec.mac_reads.iter().chain(&rec.tree_reads) {
                self.engine.miss(&mut self.pcm, t0, a);
            }
            done = done.max(self.engine.aes.issue(ctr)) + 1;
        }
        self.rec = Some(rec);
        // The fill waits for its dirty victim's slot in the write queue.
        Ok(done.max(victim_out) - t)
    }

    /// A dirty volatile line leaves core `c`'s last cache level that holds
    /// it at `t`: the memory controller encrypts it under a fresh counter,
    /// MACs it and updates the tree under the scheme's rule for its region
    /// (write-back metadata for non-persistent memory under Triad-NVM,
    /// every level under strict persistence), in the background. Returns
    /// when the line holds a write-queue slot: a full queue stalls the
    /// fill that evicted it.
    fn write_back(&mut self, c: usize, t: u64, block: u64) -> Result<u64, CheckFailure> {
        let mark = WorkRecord::start(&mut self.sys.mc);
        self.sys.write_back_volatile(block)?;
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(&mut self.sys.mc, mark, block);
        let u = &mut self.units[c];
        u.stats.volatile_write_backs += 1;
        u.path.drop_unpriced(&self.sys.mc.st.layout, &mut rec, &mut u.persist);
        let mut ready = t;
        let mut at = t;
        let metadata: Vec<u64> = rec.writes.iter().copied().filter(|&w| w != block).collect();
        if self.sys.mc.secure() {
            // The write-back's metadata work is a job of the engine's
            // background queue: a full queue holds the victim, and so the
            // fill that evicted it, back.
            let ideal = self.units[c].path.ideal_metadata();
            let (ctr, tree_extra) = self.engine.metadata_reads(&mut self.pcm, t, &rec);
            if !ideal {
                at = self.units[c].path.background_job(&mut self.engine, &mut self.pcm, ctr + tree_extra, &rec, &metadata).0;
            }
            let pad = self.engine.aes.issue(ctr.max(at));
            ready = self.engine.mac.issue(pad + 1);
            if ideal {
                // An ideal baseline's metadata is made at no cost, then
                // written with the data.
                PersistPath::queue_writes(&mut self.pcm, ready, &metadata);
            }
        } else {
            PersistPath::queue_writes(&mut self.pcm, t, &metadata);
        }
        // The data's own write takes its slot once the controller took the
        // job, and reaches the device once it is secured.
        let mut slot = at;
        for &w in rec.writes.iter().filter(|&&w| w == block) {
            slot = slot.max(self.pcm.write_when_ready(at, ready, w));
        }
        self.rec = Some(rec);
        Ok(slot)
    }

    /// Coherence of the private levels between cores: a write drops the
    /// other cores' copies; a read of a block in another core's SecPB
    /// flushes that entry, its tuple completed by the shared engine and
    /// queued in the background while the data is served.
    fn share(&mut self, c: usize, t: u64, block: u64, write: bool) -> Result<(), CheckFailure> {
        if write {
            for (i, u) in self.units.iter_mut().enumerate() {
                if i != c && u.may_hold(block) {
                    u.l1.invalidate(block);
                    u.l2.invalidate(block);
                }
            }
            return Ok(());
        }
        if !self.units.iter().enumerate().any(|(i, u)| i != c && u.may_hold(block)) {
            return Ok(());
        }
        let mark = WorkRecord::start(&mut self.sys.mc);
        if self.sys.claim_for_load(c, block)? == Handover::Flushed {
            let mut rec = self.rec.take().unwrap_or_default();
            rec.fill(&mut self.sys.mc, mark, block);
            let t0 = t + self.lat.l3;
            let pad = self.engine.aes.issue(t0);
            let mac = self.engine.mac.issue(pad + 1);
            self.units[c].path.background_job(&mut self.engine, &mut self.pcm, mac, &rec, &rec.writes);
            self.rec = Some(rec);
        }
        Ok(())
    }
}
