//! The out-of-order core, as an interval model over memory operations:
//! instructions dispatch at the issue width; a memory operation completes
//! after its latency; retirement is in order; an instruction cannot
//! dispatch before the one `rob_entries` older has retired, which bounds
//! how much miss latency overlaps. Retired stores wait in the store buffer
//! and are released in program order, each after the persist path has
//! unblocked the previous one (SecPB IV-B, the unblocking signal).

use super::ooo::{Ooo, OooStats};
use crate::config::CoreConfig;
use serde::Serialize;
use std::collections::VecDeque;

/// The core's counts as the stats tree shows them (`roi.core`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct CoreStats {
    pub cycles: u64,
    pub instructions: u64,
    pub ipc: f64,
    /// Load accesses after splitting at 64 B blocks: a load that straddles
    /// two blocks counts twice. Not instructions, and not the trace's load
    /// records (`spmsim trace info` counts those).
    pub loads: u64,
    /// Block stores that persisted: the pieces of one store instruction in
    /// one block count once, one straddling two blocks counts twice. Not
    /// the trace's store records.
    pub stores: u64,
    /// Block stores to volatile memory, counted as `stores` are: they took
    /// the write-back path, not the persist path.
    pub volatile_stores: u64,
    /// Dirty volatile lines written back to memory from the caches
    /// (absent when none was).
    #[serde(skip_serializing_if = "is_zero")]
    pub volatile_write_backs: u64,
    /// Persists (stores entering the persistence domain) per 1000 instructions.
    pub ppti: f64,
    /// Cycles stores waited to retire for a full store buffer.
    pub store_buffer_stall_cycles: u64,
    /// The `ooo` model's counts (absent under `interval`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ooo: Option<OooStats>,
    /// Transaction-specific epoch persistency's counts (`persistence.model
    /// = "tep"` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tep: Option<super::tep::TepTimingStats>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The access an event brings to its instruction: the `ooo` core cracks
/// an instruction into a micro-op per access (`core.ooo.micro_ops`), not
/// per block piece of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// None (a fence, a marker, `compute`).
    None,
    Load,
    Store,
    /// A later piece of the access before it.
    Piece,
}

impl Access {
    pub fn of(ev: &crate::trace::event::Event) -> Access {
        use crate::trace::event::Op;
        match (ev.op, ev.piece) {
            (Op::Load | Op::Store, true) => Access::Piece,
            (Op::Load, false) => Access::Load,
            (Op::Store, false) => Access::Store,
            _ => Access::None,
        }
    }
}

pub struct Core {
    width: u64,
    rob: u64,
    sb_entries: usize,
    /// Next dispatch slot, in cycles times `width` (exact fractions).
    disp_slots: u64,
    instr: u64,
    last_retire: u64,
    /// (instruction index, retire time) of in-flight memory operations.
    window: VecDeque<(u64, u64)>,
    /// Release times of stores still in the store buffer.
    sb: VecDeque<u64>,
    /// When the persist path accepts the next store.
    unblock: u64,
    last_release: u64,
    /// The `ooo` model's scheduler, when the run has an instruction stream.
    ooo: Option<Box<Ooo>>,
}

impl Core {
    pub fn new(c: &CoreConfig) -> Self {
        Core {
            width: c.issue_width as u64,
            rob: c.rob_entries as u64,
            sb_entries: c.store_buffer_entries as usize,
            disp_slots: 0,
            instr: 0,
            last_retire: 0,
            window: VecDeque::new(),
            sb: VecDeque::new(),
            unblock: 0,
            last_release: 0,
            ooo: None,
        }
    }

    /// Whether the `ooo` model schedules this core.
    pub fn is_ooo(&self) -> bool {
        self.ooo.is_some()
    }

    /// Schedule every instruction by the `ooo` model from now on.
    pub fn set_ooo(&mut self, ooo: Ooo) {
        self.ooo = Some(Box::new(ooo));
    }

    /// The `ooo` model's counts so far, if it runs.
    pub fn ooo_stats(&self) -> Option<OooStats> {
        self.ooo.as_ref().map(|o| o.all_stats())
    }

    /// A borrowed instruction stream has ended (the run ends with it).
    #[inline]
    pub fn ooo_exhausted(&self) -> bool {
        self.ooo.as_ref().is_some_and(|o| o.exhausted)
    }

    /// The core runs on after its region of interest: its instruction
    /// stream starts again at its end, as the events' trace does.
    pub fn run_on(&mut self) {
        if let Some(o) = self.ooo.as_mut() {
            o.run_on();
        }
    }

    /// The instruction stream's first fault, if any (the run fails with it).
    pub fn ooo_error(&self) -> Option<&str> {
        self.ooo.as_ref().and_then(|o| o.error.as_deref())
    }

    fn dispatch_time(&self) -> u64 {
        self.disp_slots / self.width
    }

    /// The cycle this core has reached (its next dispatch).
    pub fn clock(&self) -> u64 {
        match &self.ooo {
            Some(o) => o.open.map_or(self.last_retire, |m| m.issue),
            None => self.dispatch_time(),
        }
    }

    /// What the multi-core scheduler orders cores by: the later of the
    /// core's clock and the time its persist path takes the next store.
    /// Under strict persistency at the MC the persist path runs up to a
    /// store buffer ahead of dispatch, and its requests (metadata reads,
    /// tree updates, WPQ writes) are what the cores contend for at the
    /// memory controller; ordering cores by it brings those requests to
    /// the shared units nearly in time order, as in hardware.
    pub fn schedule_key(&self) -> u64 {
        self.clock().max(self.unblock)
    }

    /// Nothing dispatches before `t` (a transaction waiting for its lock).
    pub fn stall_until(&mut self, t: u64) {
        match &mut self.ooo {
            Some(_) => self.last_retire = self.last_retire.max(t),
            None => {
                self.disp_slots = self.disp_slots.max(t * self.width);
                self.last_retire = self.last_retire.max(t);
            }
        }
    }

    /// Dispatch an event's `instructions` (its gap of single-cycle
    /// instructions, then the operation itself when it is an instruction
    /// of its own: not a marker, not `compute`, not the second piece of a
    /// split access; `event::instructions`); returns when the operation
    /// dispatches.
    /// `access` is the event's (see [`Access`]).
    /// `icache` fetches an instruction block for the `ooo` core's front end
    /// (see [`super::frontend::InstructionFetch`]).
    pub fn dispatch(&mut self, gap: u32, instructions: u64, access: Access, icache: &mut super::frontend::InstructionFetch) -> u64 {
        debug_assert!(instructions <= gap as u64 + 1);
        if let Some(o) = &mut self.ooo {
            self.instr += instructions;
            let own = instructions > gap as u64;
            let t = o.open.map_or(self.last_retire, |m| m.access_at);
            let t = o.run_plains(instructions - own as u64, t, &mut self.last_retire, icache);
            let (load, store) = ((access == Access::Load) as u64, (access == Access::Store) as u64);
            return match (own, access) {
                (true, _) => o.start_memop(load, store, icache),
                (false, Access::Load | Access::Store) => o.more_access(load == 1).unwrap_or(t),
                (false, _) => t,
            };
        }
        self.instr += instructions;
        self.disp_slots += instructions;
        // The ROB must have room: retire everything at least `rob` older.
        while let Some(&(idx, r)) = self.window.front() {
            if idx + self.rob > self.instr {
                break;
            }
            self.window.pop_front();
            if r > self.dispatch_time() {
                self.disp_slots = r * self.width;
            }
        }
        let t = self.dispatch_time();
        if gap > 0 {
            self.last_retire = self.last_retire.max(t);
        }
        t
    }

    pub fn complete_memop(&mut self, t: u64, latency: u64) {
        if let Some(o) = &mut self.ooo {
            let m = o.open.unwrap_or_default();
            o.finish_memop((t + latency).max(m.data_ready) + m.extra, &mut self.last_retire, true);
            return;
        }
        let r = self.last_retire.max(t + latency);
        self.last_retire = r;
        self.window.push_back((self.instr, r));
    }

    /// A store access of the open instruction whose bytes joined the
    /// store before it (the same block, so no store of its own): under
    /// `core.ooo.micro_ops = "x86"` its micro-op still dispatches and
    /// completes.
    pub fn merged_store(&mut self) {
        if let Some(o) = &mut self.ooo {
            if let Some(t) = o.more_access(false) {
                let m = o.open.unwrap_or_default();
                o.finish_memop((t + 1).max(m.data_ready), &mut self.last_retire, false);
            }
        }
    }

    /// Retire a store: it needs a store-buffer entry.
    pub fn retire_store(&mut self, t: u64, stats: &mut CoreStats) -> u64 {
        let mut r = match &mut self.ooo {
            Some(o) => {
                let m = o.open.unwrap_or_default();
                o.finish_memop((t + 1).max(m.data_ready), &mut self.last_retire, false)
            }
            None => self.last_retire.max(t + 1),
        };
        while let Some(&rel) = self.sb.front() {
            if rel <= r {
                self.sb.pop_front();
            } else {
                break;
            }
        }
        if self.sb.len() >= self.sb_entries {
            let rel = self.sb.pop_front().unwrap();
            stats.store_buffer_stall_cycles += rel - r;
            r = rel;
        }
        self.last_retire = r;
        if self.ooo.is_none() {
            self.window.push_back((self.instr, r));
        }
        r
    }

    /// When the store retired at `retire` leaves the store buffer: after
    /// the persist path unblocked the previous store (program order).
    pub fn release_time(&self, retire: u64) -> u64 {
        retire.max(self.unblock)
    }

    /// The store left the buffer at `release`; the path takes the next
    /// one at `unblock`.
    pub fn store_released(&mut self, release: u64, unblock: u64) {
        self.sb.push_back(release);
        self.last_release = release;
        self.unblock = unblock;
    }

    /// A fence retires once earlier stores are persistent (`persisted`;
    /// with a persist buffer that is as soon as they are released).
    pub fn fence(&mut self, t: u64, persisted: u64) {
        if let Some(o) = &mut self.ooo {
            o.finish_memop((t + 1).max(persisted), &mut self.last_retire, false);
            return;
        }
        let r = self.last_retire.max(t + 1).max(persisted);
        self.last_retire = r;
        self.window.push_back((self.instr, r));
    }

    pub fn end_time(&self) -> u64 {
        self.last_retire.max(self.unblock)
    }
}
