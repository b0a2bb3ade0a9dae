//! A store's way out of a core: it waits in the store buffer as an open
//! store (the later pieces of a wide store folded in), then goes down the
//! persist path, or into L1 when it is volatile or while epoch persistency
//! holds it there until a barrier.
//!
//! ```text
//!  store event -> OpenStore (release, data_ready, bytes) <- its same-instruction pieces
//!  close_store: volatile     -> L1 (write-allocate); written back when evicted
//!               epoch, TEP   -> the epoch's lines in L1D, until a barrier or overflow
//!               otherwise    -> PersistPath::store (SecPB entry, SP tuple, WPQ)
//!  a barrier (send_epoch): the epoch's lines to the MC in their order (send_lines)
//! ```

use super::epoch;
use super::persist::{Ctx, ReleasedStore};
use super::TimingSim;
use crate::engine::store::CheckFailure;

/// A store to one block that has entered the store buffer but not yet the
/// persist path. A trace splits a wide store (a 32-byte vector store) into
/// 8-byte pieces flagged `same_instruction`; in hardware it is one store,
/// one store-buffer entry and one write into the SecPB entry (SecPB IV-A
/// counts persists per store, not per byte), so the pieces that continue
/// it in the same block are folded in before it persists.
pub(super) struct OpenStore {
    pub(super) block: u64,
    /// To volatile memory: it goes to L1 only, not down the persist path.
    pub(super) volatile: bool,
    pub(super) off: usize,
    pub(super) len: usize,
    /// The stored bytes, at their offsets in the block.
    pub(super) bytes: [u8; 64],
    pub(super) release: u64,
    pub(super) data_ready: u64,
    /// The store writes the undo log.
    pub(super) log: bool,
}

impl TimingSim {
    /// Core `c`'s open store, if any, goes down the persist path.
    pub(super) fn close_store(&mut self, c: usize) -> Result<(), CheckFailure> {
        let u = &mut self.units[c];
        let Some(o) = u.open_store.take() else { return Ok(()) };
        if o.volatile {
            // Volatile memory: the store buffer writes the store
            // into L1 once the line is owned (write-allocate), one store a
            // cycle; no persist buffer entry, no tuple, no persist order.
            // The line is dirty from now on; its write-back, when it
            // leaves the caches, is priced by `write_back`.
            self.sys.store_volatile(c, o.block, o.off, &o.bytes[o.off..o.off + o.len])?;
            // The ownership fetch left the line in L1 (this event's).
            u.l1.mark_dirty(o.block);
            u.core.store_released(o.release, o.release.max(o.data_ready) + 1);
            u.stats.volatile_stores += 1;
            return Ok(());
        }
        if u.epoch.buffers() {
            // Epoch persistency and TEP: the store stays in L1D, coalescing
            // with the epoch's other stores to its line, until a barrier.
            u.epoch.store(o.block, o.off, &o.bytes[o.off..o.off + o.len], o.release, o.data_ready, o.log);
            u.core.store_released(o.release, o.release.max(o.data_ready) + 1);
            u.stats.stores += 1;
            let all_ack = u.path.last_ack();
            if let Some(sent) = u.epoch.overflow(o.release, all_ack) {
                self.send_lines(c, vec![sent])?;
            }
            return Ok(());
        }
        // The rest of the block comes from memory only when the persist
        // path takes a whole block (a new SecPB entry, an SP write).
        let mut fill = if u.path.needs_whole_block(&self.sys, o.block) { self.sys.mc.peek_plaintext(o.block) } else { [0; 64] };
        fill[o.off..o.off + o.len].copy_from_slice(&o.bytes[o.off..o.off + o.len]);
        let cx = Ctx { pcm: &mut self.pcm, lat: &self.lat, engine: &mut self.engine, stats: &mut u.persist };
        let store = ReleasedStore { release: o.release, data_ready: o.data_ready, block: o.block, bytes: o.off..o.off + o.len, fill };
        let unblock = u.path.store(&mut self.sys, cx, store)?;
        u.core.store_released(o.release, unblock);
        u.stats.stores += 1;
        Ok(())
    }

    /// A barrier of core `c` at `t` under epoch persistency or TEP: the
    /// epoch's lines go to the memory controller, each when its order
    /// allows ([`epoch::EpochLines::barrier`]); returns whether the core
    /// waits for every ACK.
    pub(super) fn send_epoch(&mut self, c: usize, t: u64) -> Result<bool, CheckFailure> {
        let u = &mut self.units[c];
        let flush = u.epoch.barrier(t, u.path.last_ack());
        if let Some(s) = &mut u.stats.tep {
            if flush.wait_for_acks {
                s.regular_barriers += 1;
            } else {
                s.paired_barriers += 1;
            }
            for (line, at) in flush.sends.iter().filter(|(l, _)| !l.log) {
                if *at > line.release.max(t) {
                    s.log_ack_waits += 1;
                    s.log_ack_wait_cycles += at - line.release.max(t);
                }
            }
        }
        self.send_lines(c, flush.sends)?;
        Ok(flush.wait_for_acks)
    }

    /// Lines of core `c` to the memory controller, each from its time.
    fn send_lines(&mut self, c: usize, sends: Vec<(epoch::EpochLine, u64)>) -> Result<(), CheckFailure> {
        for (line, at) in sends {
            let mut fill = self.sys.mc.peek_plaintext(line.block);
            for (i, b) in fill.iter_mut().enumerate() {
                if line.mask >> i & 1 == 1 {
                    *b = line.bytes[i];
                }
            }
            let u = &mut self.units[c];
            let cx = Ctx { pcm: &mut self.pcm, lat: &self.lat, engine: &mut self.engine, stats: &mut u.persist };
            let store = ReleasedStore { release: at, data_ready: line.data_ready, block: line.block, bytes: 0..64, fill };
            u.path.store(&mut self.sys, cx, store)?;
            if line.log {
                // TEP's log state table: the data of the next pair waits
                // for these log lines' ACKs.
                u.epoch.log_ack = u.epoch.log_ack.max(u.path.last_ack());
            }
        }
        Ok(())
    }
}
