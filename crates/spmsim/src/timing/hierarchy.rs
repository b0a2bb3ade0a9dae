//! A core's accesses to memory: a block brought to its L1 through L2, L3
//! and the memory controller, the dirty victims on the way written back,
//! and, with several cores, the coherence of their private levels.
//!
//! ```text
//!  fetch(c, t, block), bounded caches (timing/caches): at each level the
//!    access waits while the cache is blocked; a hit (merged into the MSHR
//!    of its block's miss while that is in flight) ends there; a miss holds
//!    an MSHR from its issue to the fill and goes on down; each fill's dirty
//!    victim holds its level's write buffer until the next level took it
//!  fetch, unbounded: L1 hit: l1 | L2 hit: l2 | L3 hit: l3 (or the victim's slot)
//!  memory (both): the functional read (mc.read) -> WorkRecord
//!          data read || counter fetch -> OTP (aes); MAC and tree reads
//!          speculative (bandwidth, no latency); evicted dirty metadata
//!          written in the background with its tree work
//!  a dirty victim -> write_back: encrypted, MACed, the tree updated in the
//!          background; unbounded, the fill waits for its write-queue slot
//!  share (several cores): a write drops the others' copies; a read of a
//!          block in another core's SecPB flushes that entry
//! ```

use super::caches::MissBuffers;
use super::persist::PersistPath;
use super::tags::Lookup;
use super::work::WorkRecord;
use super::{Latencies, TimingSim};
use crate::engine::store::CheckFailure;
use crate::persist::Handover;

/// Where a dirty victim comes from and goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Level {
    L1,
    L2,
    L3,
    Memory,
}

/// A dirty line a fill evicted, on its way down.
#[derive(Clone, Copy, Debug)]
struct Victim {
    block: u64,
    from: Level,
    to: Level,
}

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
        if self.units[c].l1b.is_some() {
            self.fetch_bounded(c, t, block)
        } else {
            self.fetch_unbounded(c, t, block)
        }
    }

    /// [`Self::fetch`] through caches with MSHRs and write buffers
    /// (`timing/caches`): each level's miss holds an MSHR from its issue
    /// to the fill, an access waits while its cache is blocked, an access
    /// to a block in flight merges into its MSHR, and each dirty victim
    /// holds its level's write-buffer entry from the fill until the next
    /// level (or the write queue) took it.
    fn fetch_bounded(&mut self, c: usize, t: u64, block: u64) -> Result<u64, CheckFailure> {
        let lat1 = self.lat.l1;
        let u = &mut self.units[c];
        let l1b = u.l1b.as_mut().expect("bounded caches have L1D buffers");
        let Lookup::Miss { dirty_victim: v1 } = u.l1.lookup(block) else {
            let at = l1b.ready(t);
            return Ok(l1b.hit(at, block, lat1) - t);
        };
        let s1 = l1b.allocate(t);
        let done = self.below_l1(c, s1 + lat1, block, v1)?;
        if let Some(b) = self.units[c].l1b.as_mut() {
            b.hold_miss(s1, done, block);
        }
        Ok(done - t)
    }

    /// Core `c`'s fetch of the instruction block `block` at `t` through
    /// its L1I (`caches.l1i`, read only): when the block's bytes reach the
    /// fetch buffer. An L1I miss holds an L1I MSHR and goes to L2 as a
    /// data miss does (the same MSHRs and write buffers below L1).
    pub(super) fn fetch_instruction(&mut self, c: usize, t: u64, block: u64) -> Result<u64, CheckFailure> {
        let lat1 = self.lat.l1i;
        let several = self.units.len() > 1;
        let u = &mut self.units[c];
        if several {
            u.lo = u.lo.min(block);
            u.hi = u.hi.max(block);
        }
        let hit = !matches!(u.l1i.lookup(block), Lookup::Miss { .. });
        let Some(ib) = u.l1ib.as_mut() else {
            return if hit { Ok(t + lat1) } else { self.below_l1_unbounded(c, t, block) };
        };
        if hit {
            let at = ib.ready(t);
            return Ok(ib.hit(at, block, lat1));
        }
        let s1 = ib.allocate(t);
        let done = self.below_l1(c, s1 + lat1, block, None)?;
        if let Some(b) = self.units[c].l1ib.as_mut() {
            b.hold_miss(s1, done, block);
        }
        Ok(done)
    }

    /// An L1 miss of core `c` for `block` reaching L2 at `a2`, through
    /// bounded caches, with `v1` the dirty victim of its fill into L1:
    /// when the fill is done. Holds the L2 and L3 MSHRs and writes the
    /// fills' victims.
    fn below_l1(&mut self, c: usize, a2: u64, block: u64, v1: Option<u64>) -> Result<u64, CheckFailure> {
        // Each level's latency from the access's arrival there.
        let (lat2, lat3) = (self.lat.l2.saturating_sub(self.lat.l1), self.lat.l3.saturating_sub(self.lat.l2));
        let u = &mut self.units[c];
        let (l2, l3) = match u.l2.lookup(block) {
            Lookup::Hit => (Lookup::Hit, Lookup::Hit),
            l2 => (l2, self.l3.lookup(block)),
        };
        let victims = self.place_victims(c, v1, l2, l3);
        let u = &mut self.units[c];
        let mut s2 = None;
        let mut s3 = None;
        let done = if l2 == Lookup::Hit {
            match u.l2b.as_mut() {
                Some(b) => {
                    let at = b.ready(a2);
                    b.hit(at, block, lat2)
                }
                None => a2 + lat2,
            }
        } else {
            let start2 = u.l2b.as_mut().map_or(a2, |b| b.allocate(a2));
            s2 = Some(start2);
            let a3 = start2 + lat2;
            if l3 == Lookup::Hit {
                match self.l3b.as_mut() {
                    Some(b) => {
                        let at = b.ready(a3);
                        b.hit(at, block, lat3)
                    }
                    None => a3 + lat3,
                }
            } else {
                let start3 = self.l3b.as_mut().map_or(a3, |b| b.allocate(a3));
                s3 = Some(start3);
                self.read_memory(c, start3 + lat3, block)?
            }
        };
        let u = &mut self.units[c];
        if let (Some(b), Some(s)) = (u.l2b.as_mut(), s2) {
            b.hold_miss(s, done, block);
        }
        if let (Some(b), Some(s)) = (self.l3b.as_mut(), s3) {
            b.hold_miss(s, done, block);
        }
        for v in victims {
            self.write_victim(c, done, v)?;
        }
        Ok(done)
    }

    /// An L1I miss of core `c` at `t` under `caches.mshrs = "unbounded"`,
    /// priced as [`Self::fetch_unbounded`] prices a data miss below L1
    /// (an instruction fill evicts no dirty L1 line): when it is filled.
    fn below_l1_unbounded(&mut self, c: usize, t: u64, block: u64) -> Result<u64, CheckFailure> {
        let u = &mut self.units[c];
        let (l2, l3) = match u.l2.lookup(block) {
            Lookup::Hit => return Ok(t + self.lat.l2),
            l2 => (l2, self.l3.lookup(block)),
        };
        let v2 = match l2 {
            Lookup::Miss { dirty_victim } => dirty_victim.filter(|&v| !self.l3.mark_dirty(v)),
            Lookup::Hit => None,
        };
        let v3 = match l3 {
            Lookup::Miss { dirty_victim } => dirty_victim,
            Lookup::Hit => None,
        };
        let mut victim_out = t;
        for v in [v2, v3].into_iter().flatten() {
            victim_out = victim_out.max(self.write_back(c, t + self.lat.l3, v)?);
        }
        if l3 == Lookup::Hit {
            return Ok((t + self.lat.l3).max(victim_out));
        }
        Ok(self.read_memory(c, t + self.lat.l3, block)?.max(victim_out))
    }

    /// The dirty victims of a fill into core `c`'s L1 (`v1`) and of the
    /// L2 and L3 lookups' fills, each marked dirty in the next level that
    /// holds its block (no level allocates for a victim, so the hits and
    /// misses are those of the clean model) or bound for memory.
    fn place_victims(&mut self, c: usize, v1: Option<u64>, l2: Lookup, l3: Lookup) -> Vec<Victim> {
        let u = &mut self.units[c];
        let mut out = Vec::new();
        if let Some(v) = v1 {
            let to = if u.l2.mark_dirty(v) {
                Level::L2
            } else if self.l3.mark_dirty(v) {
                Level::L3
            } else {
                Level::Memory
            };
            out.push(Victim { block: v, from: Level::L1, to });
        }
        if let Lookup::Miss { dirty_victim: Some(v) } = l2 {
            let to = if self.l3.mark_dirty(v) { Level::L3 } else { Level::Memory };
            out.push(Victim { block: v, from: Level::L2, to });
        }
        if let Lookup::Miss { dirty_victim: Some(v) } = l3 {
            out.push(Victim { block: v, from: Level::L3, to: Level::Memory });
        }
        out
    }

    /// A dirty victim evicted by the fill at `fill`: it takes an entry of
    /// its level's write buffer then and holds it until the level it goes
    /// to took it (that level's latency) or, bound for memory, until it
    /// holds a write-queue slot.
    fn write_victim(&mut self, c: usize, fill: u64, v: Victim) -> Result<(), CheckFailure> {
        let at = match self.buffers(c, v.from) {
            Some(b) => b.victim(fill),
            None => fill,
        };
        let core_time = |l: Level, lat: &Latencies| match l {
            Level::L1 => lat.l1,
            Level::L2 => lat.l2,
            Level::L3 | Level::Memory => lat.l3,
        };
        let taken = match v.to {
            Level::Memory => self.write_back(c, at, v.block)?,
            to => at + core_time(to, &self.lat).saturating_sub(core_time(v.from, &self.lat)),
        };
        if let Some(b) = self.buffers(c, v.from) {
            b.hold_victim(at, taken, v.block);
        }
        Ok(())
    }

    /// Core `c`'s buffers of a cache level (the shared L3's for L3).
    fn buffers(&mut self, c: usize, l: Level) -> Option<&mut MissBuffers> {
        match l {
            Level::L1 => self.units[c].l1b.as_mut(),
            Level::L2 => self.units[c].l2b.as_mut(),
            Level::L3 => self.l3b.as_mut(),
            Level::Memory => None,
        }
    }

    /// [`Self::fetch`] without MSHRs or write buffers (`caches.mshrs =
    /// "unbounded"`): every miss in flight at once, an access to a block
    /// in flight a hit, and a fill waits for its dirty victim's slot in
    /// the write queue.
    fn fetch_unbounded(&mut self, c: usize, t: u64, block: u64) -> Result<u64, CheckFailure> {
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
        let done = self.read_memory(c, t + self.lat.l3, block)?;
        // The fill waits for its dirty victim's slot in the write queue.
        Ok(done.max(victim_out) - t)
    }

    /// A read of `block` from memory for core `c`, reaching the memory
    /// controller at `t0`: when its data is at hand. The data read and the
    /// counter fetch run in parallel; the OTP follows the counter; MAC and
    /// tree checks are speculative (SecPB V-A), so they cost bandwidth but
    /// not latency.
    fn read_memory(&mut self, c: usize, t0: u64, block: u64) -> Result<u64, CheckFailure> {
        let mark = WorkRecord::start(&mut self.sys.mc);
        let value = self.sys.mc.read(block)?;
        debug_assert_eq!(value, self.sys.mc.peek_plaintext(block), "a read and a peek of memory disagree");
        let mut rec = self.rec.take().unwrap_or_default();
        rec.fill(&mut self.sys.mc, mark, block);
        let u = &mut self.units[c];
        u.path.drop_unpriced(&self.sys.mc.st.layout, &mut rec, &mut u.persist);
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
        Ok(done)
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
