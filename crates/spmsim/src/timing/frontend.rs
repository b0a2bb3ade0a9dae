//! The `ooo` core's front end, as gem5's O3 fetch, decode and rename
//! stages (`src/cpu/o3/fetch.cc`, `BaseO3CPU.py`): instructions are
//! fetched in program order by their address, their micro-ops
//! (`core.ooo.micro_ops`) `fetch_width` a cycle, from a fetch buffer of
//! `fetch_buffer_bytes` that an access to L1I fills; an instruction
//! outside the buffer waits for a new L1I access (gem5
//! `IcacheWaitResponse`), and a predicted-taken branch ends its fetch
//! cycle. Fetched micro-ops wait in the fetch queue (`fetchQueueSize`)
//! until decode takes them; a full queue stops fetch. A micro-op reaches
//! dispatch (in IEW) `fetchToDecodeDelay + decodeToRenameDelay +
//! renameToIEWDelay` cycles after its fetch. A mispredicted branch's
//! squash reaches fetch `iewToFetchDelay` after it executes; fetch then
//! starts again at the right path with an empty buffer, so a
//! misprediction costs the squash, the refetch through L1I and the stages.

use crate::config::OooConfig;
use crate::trace::insn::Insn;
use serde::Serialize;
use std::collections::VecDeque;

/// What the front end counted (`roi.core.ooo.front_end`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FrontEndStats {
    /// Fetch buffers filled (each an L1I access).
    pub l1i_accesses: u64,
    /// Cycles fetch waited for L1I (hit latencies and misses).
    pub l1i_wait_cycles: u64,
    /// Cycles fetch waited for room in the fetch queue.
    pub fetch_queue_full_cycles: u64,
    /// Peak micro-ops in the fetch queue, and the micro-op-cycles they
    /// were held there (fetch to decode).
    pub fetch_queue_peak: u64,
    pub fetch_queue_busy_cycles: u64,
    /// Squashes that restarted fetch (mispredicted branches).
    pub redirects: u64,
}

impl FrontEndStats {
    pub fn minus(&self, o: &FrontEndStats) -> FrontEndStats {
        FrontEndStats {
            l1i_accesses: self.l1i_accesses - o.l1i_accesses,
            l1i_wait_cycles: self.l1i_wait_cycles - o.l1i_wait_cycles,
            fetch_queue_full_cycles: self.fetch_queue_full_cycles - o.fetch_queue_full_cycles,
            fetch_queue_peak: self.fetch_queue_peak,
            fetch_queue_busy_cycles: self.fetch_queue_busy_cycles - o.fetch_queue_busy_cycles,
            redirects: self.redirects - o.redirects,
        }
    }
}

/// Where fetch gets an instruction block: `(t, block)` asks L1I at cycle
/// `t` for the 64-byte block `block`; the answer is when its bytes are
/// in the fetch buffer.
pub type InstructionFetch<'a> = dyn FnMut(u64, u64) -> u64 + 'a;

pub struct FrontEnd {
    width: u64,
    buffer_bytes: u64,
    queue: usize,
    /// Fetch to dispatch, and fetch to decode.
    depth: u64,
    to_decode: u64,
    /// Dispatch back to decode (decode to rename + rename to IEW).
    after_decode: u64,
    squash: u64,
    /// The fetch cycle reached and the slots of it taken.
    cycle: u64,
    used: u64,
    /// The fetch buffer's size as a shift, when it is a power of two.
    buffer_shift: Option<u32>,
    /// The fetch buffer's address (in buffer units) and when it filled.
    buffer: Option<u64>,
    /// When each of the last `queue` dispatched micro-ops left the fetch
    /// queue (decode took it), in program order: non-decreasing, as fetch
    /// and dispatch are in order.
    left: VecDeque<u64>,
    /// How many of `left`, from its front, had left by the last fetch:
    /// fetch times only grow, so this only moves on (or back as the
    /// front is dropped).
    gone: usize,
    /// The fetch time of the micro-op fetched last, until it dispatches.
    fetched: Option<u64>,
    pub stats: FrontEndStats,
}

impl FrontEnd {
    pub fn new(o: &OooConfig) -> Self {
        let after_decode = (o.decode_to_rename_cycles + o.rename_to_iew_cycles) as u64;
        let buffer_bytes = o.fetch_buffer_bytes.clamp(4, 64) as u64;
        FrontEnd {
            width: o.fetch_width.max(1) as u64,
            buffer_bytes,
            buffer_shift: buffer_bytes.is_power_of_two().then(|| buffer_bytes.trailing_zeros()),
            queue: o.fetch_queue_entries.max(1) as usize,
            depth: o.fetch_to_decode_cycles as u64 + after_decode,
            to_decode: o.fetch_to_decode_cycles as u64,
            after_decode,
            squash: o.iew_to_fetch_cycles as u64,
            cycle: 0,
            used: 0,
            buffer: None,
            left: VecDeque::new(),
            gone: 0,
            fetched: None,
            stats: FrontEndStats::default(),
        }
    }

    /// Fetch the next instruction's first micro-op, in program order: the
    /// earliest cycle it may dispatch. [`Self::dispatched`] must follow
    /// with its dispatch, and [`Self::fetched_instruction`] once the
    /// instruction's micro-ops are all fetched.
    pub fn fetch(&mut self, ins: &Insn, icache: &mut InstructionFetch) -> u64 {
        let mut f = self.queue_room();
        let line = match self.buffer_shift {
            Some(s) => ins.pc >> s,
            None => ins.pc / self.buffer_bytes,
        };
        if self.buffer != Some(line) {
            self.stats.l1i_accesses += 1;
            let ready = icache(f, ins.pc / 64);
            self.stats.l1i_wait_cycles += ready.saturating_sub(f);
            f = f.max(ready);
            self.buffer = Some(line);
        }
        self.enter(f)
    }

    /// Fetch another micro-op of the instruction fetched last (its bytes
    /// are in the fetch buffer): the earliest cycle it may dispatch; as
    /// [`Self::fetch`], [`Self::dispatched`] must follow.
    pub fn fetch_micro_op(&mut self) -> u64 {
        let f = self.queue_room();
        self.enter(f)
    }

    /// The instruction fetched last has all its micro-ops fetched: a
    /// predicted-taken branch ends its fetch cycle (gem5 fetch stops at a
    /// predicted branch); a mispredicted one is redirected at its
    /// execution instead.
    pub fn fetched_instruction(&mut self, ins: &Insn) {
        if ins.taken {
            self.next_cycle();
        }
    }

    /// The first fetch cycle at which the fetch queue has room for one
    /// more micro-op: it holds `queue`, so this one needs the one `queue`
    /// earlier to have left it.
    fn queue_room(&mut self) -> u64 {
        let mut f = self.cycle;
        if self.left.len() >= self.queue {
            let out = self.left[self.left.len() - self.queue];
            if out > f {
                self.stats.fetch_queue_full_cycles += out - f;
                f = out;
            }
        }
        f
    }

    /// A micro-op fetched at `f` enters the fetch queue; the earliest
    /// cycle it may dispatch.
    fn enter(&mut self, f: u64) -> u64 {
        self.take(f);
        // In the queue at `f`: this one and those fetched before that
        // leave after `f`.
        while self.left.get(self.gone).is_some_and(|&out| out <= f) {
            self.gone += 1;
        }
        debug_assert_eq!(self.gone, self.left.partition_point(|&out| out <= f));
        let queued = (self.left.len() - self.gone) as u64 + 1;
        self.stats.fetch_queue_peak = self.stats.fetch_queue_peak.max(queued);
        debug_assert!(self.fetched.is_none(), "a fetched micro-op dispatches before the next is fetched");
        self.fetched = Some(f);
        f + self.depth
    }

    /// The micro-op fetched last dispatches at `d`: it left the fetch
    /// queue when decode took it, `decodeToRename + renameToIEW` before
    /// (and not before it reached decode).
    pub fn dispatched(&mut self, d: u64) {
        let f = self.fetched.take().expect("a fetched instruction");
        let out = (f + self.to_decode).max(d.saturating_sub(self.after_decode));
        self.stats.fetch_queue_busy_cycles += out - f;
        self.left.push_back(out);
        if self.left.len() > self.queue {
            self.left.pop_front();
            self.gone = self.gone.saturating_sub(1);
        }
    }

    /// A mispredicted branch executed at `done`: fetch starts again on the
    /// right path once the squash reaches it, with its buffer emptied.
    pub fn redirect(&mut self, done: u64) {
        self.stats.redirects += 1;
        let at = done + self.squash;
        if at > self.cycle {
            self.cycle = at;
            self.used = 0;
        }
        self.buffer = None;
    }

    fn take(&mut self, t: u64) {
        if t > self.cycle {
            self.cycle = t;
            self.used = 0;
        }
        self.used += 1;
        if self.used == self.width {
            self.next_cycle();
        }
    }

    fn next_cycle(&mut self) {
        self.cycle += 1;
        self.used = 0;
    }
}
