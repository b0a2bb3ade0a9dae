//! The `ooo` core model's scheduler (issue 13): every instruction of the
//! recorded instruction stream (`trace/insn.rs`) dispatches in order at
//! the issue width once the reorder buffer (and, for a load, the load
//! queue) has room, issues when its source registers' producers have
//! completed and a unit of its class is free, completes after the unit's
//! latency, and retires in order at the issue width. A mispredicted
//! branch holds dispatch until it has executed and the front end has
//! refilled. Memory instructions take their latency from the cache and
//! memory model ([`super::core::Core`] passes it in).

use super::branch::Tournament;
use super::frontend::{FrontEnd, FrontEndStats, InstructionFetch};
use crate::config::{CoreConfig, FuPool};
use crate::trace::insn::{Insn, InsnReader, MAX_DISTANCE};
use crate::trace::vex::{BranchKind, FuClass};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Ring size for per-instruction times: above any distance the stream
/// records and any reorder buffer the configuration allows.
const RING: usize = 1024;

const _: () = assert!((MAX_DISTANCE as usize) < RING);

/// Instructions decoded from the stream at a time.
const BATCH: usize = 256;

/// Issue (or retirement) slots: `width` per cycle, taken in order. The
/// next free slot is `cycle * width + used`, kept as the pair so that
/// taking a slot needs no division.
#[derive(Clone, Copy, Debug, Default)]
struct Slots {
    cycle: u64,
    /// Slots of `cycle` already taken (below the width).
    used: u64,
}

impl Slots {
    /// Take the first slot at or after cycle `t`.
    #[inline]
    fn take(&mut self, t: u64, width: u64) {
        if t > self.cycle {
            self.cycle = t;
            self.used = 0;
        }
        self.used += 1;
        if self.used == width {
            self.cycle += 1;
            self.used = 0;
        }
    }
}

/// What the `ooo` model counted (`roi.core.ooo`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct OooStats {
    pub branches: u64,
    pub conditional_branches: u64,
    pub mispredicts: u64,
    pub conditional_mispredicts: u64,
    pub indirect_mispredicts: u64,
    pub return_mispredicts: u64,
    /// Cycles dispatch waited for a full reorder buffer.
    pub rob_full_cycles: u64,
    /// Cycles dispatch waited for a full instruction queue.
    pub iq_full_cycles: u64,
    /// Cycles dispatch waited for the front end: after a misprediction
    /// and, with the fetch front end, for L1I and the fetch stages.
    pub refill_cycles: u64,
    /// The fetch front end's counts (`core.ooo.front_end = "fetch"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub front_end: Option<FrontEndStats>,
}

impl OooStats {
    pub fn minus(&self, o: &OooStats) -> OooStats {
        OooStats {
            branches: self.branches - o.branches,
            conditional_branches: self.conditional_branches - o.conditional_branches,
            mispredicts: self.mispredicts - o.mispredicts,
            conditional_mispredicts: self.conditional_mispredicts - o.conditional_mispredicts,
            indirect_mispredicts: self.indirect_mispredicts - o.indirect_mispredicts,
            return_mispredicts: self.return_mispredicts - o.return_mispredicts,
            rob_full_cycles: self.rob_full_cycles - o.rob_full_cycles,
            iq_full_cycles: self.iq_full_cycles - o.iq_full_cycles,
            refill_cycles: self.refill_cycles - o.refill_cycles,
            front_end: self.front_end.map(|f| f.minus(&o.front_end.unwrap_or_default())),
        }
    }
}

/// The memory (or fence) instruction dispatched last, whose completion the
/// cache model decides.
#[derive(Clone, Copy, Debug, Default)]
pub struct OpenMemop {
    pub index: u64,
    /// When its address is known and the access may start.
    pub issue: u64,
    /// When its other sources are ready (a store's data).
    pub data_ready: u64,
    /// Cycles of computation on a loaded value (a load-op instruction).
    pub extra: u64,
    /// A branch that reads or writes memory (`ret`, `call`, `jmp *mem`),
    /// resolved when the access completes; `None` once resolved.
    pub branch: Option<Insn>,
    /// Once its first block piece has finished: (its completion, its
    /// retirement, the retire slots before it), so that later pieces of
    /// the same instruction (an access split at a block boundary, a `rep`
    /// instruction's iterations) move its one retirement rather than take
    /// another.
    finished: Option<(u64, u64, Slots)>,
    /// It holds a load-queue entry.
    pub in_lq: bool,
}

pub struct Ooo {
    reader: InsnReader,
    /// Instructions decoded ahead of dispatch, and the next one's place.
    batch: Vec<Insn>,
    at: usize,
    /// The fault that ended the last batch's decoding, raised once the
    /// instructions decoded before it have dispatched.
    fault: Option<crate::trace::TraceError>,
    /// The stream is another workload's (a synthetic profile's `insns=`):
    /// its end ends the run rather than failing it.
    borrowed: bool,
    /// A borrowed stream has ended.
    pub exhausted: bool,
    /// The core runs on after its region of interest: the stream starts
    /// again at its end, with the events' trace (a multi-core run).
    running_on: bool,
    /// The first fault of the stream (a damaged or short file): the run
    /// fails with it.
    pub error: Option<String>,
    /// Dispatch and commit widths.
    width: u64,
    commit_width: u64,
    rob: u64,
    iq: usize,
    /// Issue times of the instructions in the instruction queue.
    queued: BinaryHeap<Reverse<u64>>,
    refill: u64,
    lq: usize,
    index: u64,
    done: Box<[u64; RING]>,
    retired: Box<[u64; RING]>,
    disp: Slots,
    ret: Slots,
    fetch_ready: u64,
    /// Retire times of the loads in the load queue.
    loads: VecDeque<u64>,
    /// Next free cycle of each unit, per class.
    units: Vec<Vec<u64>>,
    pools: Vec<FuPool>,
    /// Per class: its unit's latency (0 for a plain load or store).
    latency: [u64; FuClass::ALL.len()],
    bp: Tournament,
    /// Fetch through L1I and the front-end stages (`None`: the constant
    /// refill, `core.ooo.front_end = "constant"`).
    front: Option<FrontEnd>,
    pub stats: OooStats,
    pub open: Option<OpenMemop>,
}

fn class_index(c: FuClass) -> usize {
    c as usize
}

impl Ooo {
    pub fn new(c: &CoreConfig, reader: InsnReader, borrowed: bool) -> Self {
        let o = &c.ooo;
        let no_unit = FuPool { count: 1, latency: 1, issue_interval: 0 };
        let pools: Vec<FuPool> = FuClass::ALL
            .iter()
            .map(|k| match k {
                FuClass::IntAlu => o.int_alu,
                FuClass::IntMult => o.int_mult,
                FuClass::IntDiv => o.int_div,
                FuClass::FpAdd => o.fp_add,
                FuClass::FpMult => o.fp_mult,
                FuClass::FpDiv => o.fp_div,
                FuClass::FpSqrt => o.fp_sqrt,
                FuClass::Load | FuClass::Store => no_unit,
            })
            .collect();
        let latency = std::array::from_fn(|k| match FuClass::ALL[k] {
            FuClass::Load | FuClass::Store => 0,
            _ => pools[k].latency as u64,
        });
        Ooo {
            reader,
            batch: Vec::with_capacity(BATCH),
            at: 0,
            fault: None,
            borrowed,
            exhausted: false,
            running_on: false,
            error: None,
            width: o.dispatch_width as u64,
            commit_width: o.commit_width as u64,
            rob: c.rob_entries as u64,
            iq: o.iq_entries as usize,
            queued: BinaryHeap::new(),
            refill: o.mispredict_refill_cycles as u64,
            lq: o.load_queue_entries as usize,
            index: 0,
            done: Box::new([0; RING]),
            retired: Box::new([0; RING]),
            disp: Slots::default(),
            ret: Slots::default(),
            fetch_ready: 0,
            loads: VecDeque::new(),
            units: pools.iter().map(|p| vec![0; p.count as usize]).collect(),
            pools,
            latency,
            bp: Tournament::new(o),
            front: (o.front_end == crate::config::FrontEnd::Fetch).then(|| FrontEnd::new(o)),
            stats: OooStats::default(),
            open: None,
        }
    }

    /// The counts so far, the front end's included.
    pub fn all_stats(&self) -> OooStats {
        OooStats { front_end: self.front.as_ref().map(|f| f.stats), ..self.stats }
    }

    /// Run on after the region of interest (see `running_on`).
    pub fn run_on(&mut self) {
        self.running_on = true;
    }

    #[inline]
    fn next(&mut self) -> Insn {
        match self.batch.get(self.at) {
            Some(&i) => {
                self.at += 1;
                i
            }
            None => self.next_batch(),
        }
    }

    /// Decode the next batch and take its first instruction; at the end
    /// of the stream, start it again (running on), end a borrowed one,
    /// or fail the run.
    #[cold]
    fn next_batch(&mut self) -> Insn {
        if self.error.is_some() || self.exhausted {
            return Insn::default();
        }
        self.batch.clear();
        self.at = 0;
        let read = match self.fault.take() {
            Some(e) => Err(e),
            None => self.reader.next_placed_batch(&mut self.batch, BATCH),
        };
        if !self.batch.is_empty() {
            self.fault = read.err();
        } else {
            match read {
                Err(e) => self.error = Some(e.to_string()),
                Ok(()) if self.running_on => {
                    let again = |e| format!("running on: the instruction stream could not be read again: {e}");
                    match self.reader.reopen() {
                        Err(e) => self.error = Some(again(e)),
                        Ok(mut r) => match (r.next_placed_batch(&mut self.batch, BATCH), self.batch.is_empty()) {
                            (Err(e), true) => self.error = Some(again(e)),
                            (Ok(()), true) => self.error = Some("running on: the instruction stream holds no instruction".into()),
                            (read, false) => {
                                self.reader = r;
                                self.fault = read.err();
                            }
                        },
                    }
                }
                Ok(()) if self.borrowed => self.exhausted = true,
                Ok(()) => {
                    self.error = Some(format!(
                        "the instruction stream ends after {} instructions, before the trace does (record the trace again)",
                        self.reader.count
                    ))
                }
            }
        }
        match self.batch.first() {
            Some(&i) => {
                self.at = 1;
                i
            }
            None => Insn::default(),
        }
    }

    /// Latency of a class's unit (0 for a plain load or store).
    #[inline]
    fn latency(&self, c: FuClass) -> u64 {
        self.latency[class_index(c)]
    }

    /// When `ready` can issue on a unit of class `c`, taking the unit.
    fn take_unit(&mut self, c: FuClass, ready: u64) -> u64 {
        let interval = self.pools[class_index(c)].issue_interval as u64;
        if interval == 0 {
            return ready;
        }
        let units = &mut self.units[class_index(c)];
        let (k, free) = units.iter().copied().enumerate().min_by_key(|&(_, f)| f).expect("a unit");
        let issue = ready.max(free);
        units[k] = issue + interval;
        issue
    }

    /// Dispatch the next instruction of the stream; `last_retire` is the
    /// previous instruction's retirement. Returns (index, dispatch time,
    /// address-ready time, data-ready time, the instruction).
    #[inline(always)]
    fn dispatch_one(&mut self, memop: bool, icache: &mut InstructionFetch) -> (u64, u64, u64, u64, Insn) {
        let ins = self.next();
        let i = self.index;
        let slot = self.disp.cycle;
        let front = match &mut self.front {
            Some(f) => f.fetch(&ins, icache),
            None => self.fetch_ready,
        };
        let mut d = slot.max(front);
        self.stats.refill_cycles += front.saturating_sub(slot);
        if i >= self.rob {
            let r = self.retired[((i - self.rob) as usize) % RING];
            if r > d {
                self.stats.rob_full_cycles += r - d;
                d = r;
            }
        }
        if memop && ins.class == FuClass::Load && self.loads.len() >= self.lq {
            d = d.max(self.loads[self.loads.len() - self.lq]);
        }
        d = self.iq_room(d);
        self.disp.take(d, self.width);
        if let Some(f) = &mut self.front {
            f.dispatched(d);
        }
        let (mut addr, mut data) = (d, d);
        for k in 0..ins.nsrc as usize {
            let dist = ins.srcs[k] as u64;
            if dist > i {
                continue;
            }
            let t = self.done[((i - dist) as usize) % RING];
            if ins.addr_mask >> k & 1 == 1 {
                addr = addr.max(t);
            } else {
                data = data.max(t);
            }
        }
        self.index += 1;
        (i, d, addr, data, ins)
    }

    /// `n` non-memory instructions, through to retirement at or after
    /// `last_retire`; returns the last one's dispatch time, or `t` when
    /// `n` is 0.
    pub fn run_plains(&mut self, n: u64, mut t: u64, last_retire: &mut u64, icache: &mut InstructionFetch) -> u64 {
        if n > 0 {
            self.open = None;
        }
        for _ in 0..n {
            t = self.run_plain(last_retire, icache);
        }
        t
    }

    /// A non-memory instruction, through to retirement at or after
    /// `last_retire`; returns its dispatch time.
    #[inline(always)]
    fn run_plain(&mut self, last_retire: &mut u64, icache: &mut InstructionFetch) -> u64 {
        let (i, d, addr, data, ins) = self.dispatch_one(false, icache);
        let ready = addr.max(data);
        let issue = self.take_unit(ins.class, ready);
        self.queued.push(Reverse(issue));
        let done = issue + self.latency(ins.class).max(1);
        self.resolve_branch(&ins, done);
        self.finish(i, done, last_retire);
        d
    }

    /// A memory or fence instruction: dispatched, its access to be priced.
    pub fn start_memop(&mut self, icache: &mut InstructionFetch) -> u64 {
        let (i, _d, addr, data, ins) = self.dispatch_one(true, icache);
        let extra = self.latency(ins.class);
        self.queued.push(Reverse(addr));
        let branch = (ins.branch != BranchKind::None).then_some(ins);
        self.open = Some(OpenMemop { index: i, issue: addr, data_ready: data, extra, branch, finished: None, in_lq: false });
        // Its result is not known yet: consumers wait at least this long.
        self.done[(i as usize) % RING] = u64::MAX / 4;
        addr
    }

    /// A block piece of the open memory instruction completes at `done`;
    /// the instruction completes with its last piece and retires once, in
    /// order. Returns its retirement so far.
    pub fn finish_memop(&mut self, done: u64, last_retire: &mut u64, load: bool) -> u64 {
        let Some(m) = self.open.as_mut() else { return done.max(*last_retire) };
        // What this piece needs of the open instruction, read in place
        // (the instruction is written back below with what changed).
        let (i, finished, in_lq) = (m.index, m.finished, m.in_lq);
        let branch = if m.branch.is_some() { m.branch.take() } else { None };
        if let Some(b) = branch {
            self.resolve_branch(&b, done);
        }
        let (r, finished) = match finished {
            None => {
                let before = self.ret;
                let r = self.finish(i, done, last_retire);
                (r, (done, r, before))
            }
            Some((d0, r0, before)) => {
                // A later piece: the retirement moves to its completion,
                // with the one slot the first piece took.
                let done = done.max(d0);
                let r = r0.max(done);
                if r > r0 {
                    self.ret = before;
                    self.ret.take(r, self.commit_width);
                }
                self.done[(i as usize) % RING] = done;
                self.retired[(i as usize) % RING] = r;
                let last = r.max(*last_retire);
                *last_retire = last;
                (last, (done, r, before))
            }
        };
        let mut now_in_lq = in_lq;
        if load {
            if in_lq {
                let back = self.loads.back_mut().expect("the instruction's load-queue entry");
                *back = (*back).max(r);
            } else {
                now_in_lq = true;
                self.loads.push_back(r);
                if self.loads.len() > self.lq {
                    self.loads.pop_front();
                }
            }
        }
        if let Some(m) = self.open.as_mut() {
            m.finished = Some(finished);
            m.in_lq = now_in_lq;
        }
        r
    }

    /// The first cycle at or after `d` (dispatch times only grow) at which
    /// the instruction queue has an entry free: an instruction holds one
    /// from its dispatch until it issues (gem5 `numIQEntries`).
    #[inline]
    fn iq_room(&mut self, d: u64) -> u64 {
        let mut d = d;
        while let Some(&Reverse(t)) = self.queued.peek() {
            if t <= d {
                self.queued.pop();
            } else if self.queued.len() >= self.iq {
                self.stats.iq_full_cycles += t - d;
                d = t;
                self.queued.pop();
            } else {
                break;
            }
        }
        d
    }

    fn finish(&mut self, i: u64, done: u64, last_retire: &mut u64) -> u64 {
        let r = done.max(*last_retire).max(self.ret.cycle);
        self.ret.take(r, self.commit_width);
        *last_retire = r;
        self.done[(i as usize) % RING] = done;
        self.retired[(i as usize) % RING] = r;
        r
    }

    fn resolve_branch(&mut self, ins: &Insn, done: u64) {
        if ins.branch == BranchKind::None {
            return;
        }
        self.stats.branches += 1;
        let correct = match ins.branch {
            BranchKind::Conditional => {
                self.stats.conditional_branches += 1;
                let ok = self.bp.conditional(ins.pc, ins.taken);
                self.stats.conditional_mispredicts += !ok as u64;
                ok
            }
            BranchKind::DirectJump => true,
            BranchKind::DirectCall => {
                self.bp.call(ins.pc + ins.len as u64);
                true
            }
            BranchKind::IndirectJump | BranchKind::IndirectCall => {
                if ins.branch == BranchKind::IndirectCall {
                    self.bp.call(ins.pc + ins.len as u64);
                }
                let ok = self.bp.indirect(ins.pc, ins.target);
                self.stats.indirect_mispredicts += !ok as u64;
                ok
            }
            BranchKind::Return => {
                let ok = self.bp.ret(ins.target);
                self.stats.return_mispredicts += !ok as u64;
                ok
            }
            BranchKind::None => true,
        };
        if !correct {
            self.stats.mispredicts += 1;
            match &mut self.front {
                Some(f) => f.redirect(done),
                None => self.fetch_ready = self.fetch_ready.max(done + self.refill),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream of `n` one-cycle instructions with no sources, then `tail`.
    fn stream(name: &str, n: usize, tail: &[u8]) -> InsnReader {
        let dir = std::env::temp_dir().join(format!("spmsim-ooo-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("s.insn");
        let mut raw = [&b"SPMSIMIS\x02"[..], &[0; 32]].concat();
        raw.extend(std::iter::repeat_n(0u8, n));
        raw.extend_from_slice(tail);
        std::fs::write(&p, zstd::encode_all(&raw[..], 1).unwrap()).unwrap();
        InsnReader::open(&p).unwrap()
    }

    /// Run `n` plain instructions; the fault so far.
    fn run(o: &mut Ooo, n: u64) -> Option<String> {
        let mut last = 0;
        o.run_plains(n, 0, &mut last, &mut |t, _| t + 1);
        o.error.clone()
    }

    // More instructions than one decoded batch, so that the fault comes
    // in a later batch than the first and after instructions of its own.
    const N: usize = BATCH + 44;

    #[test]
    fn a_damaged_entry_fails_the_run_after_the_instructions_before_it() {
        let mut o = Ooo::new(&CoreConfig::default(), stream("damaged", N, &[0x09]), false);
        assert_eq!(run(&mut o, N as u64), None, "every instruction before the damaged entry runs");
        let e = run(&mut o, 1).expect("the damaged entry is the run's fault");
        assert!(e.contains(&format!("instruction {N}: unknown unit class 9")), "{e}");
    }

    #[test]
    fn a_stream_shorter_than_the_trace_fails_an_own_run_ends_a_borrowed_one_and_starts_again_running_on() {
        let end = [crate::trace::insn::END, 0];
        let mut own = Ooo::new(&CoreConfig::default(), stream("own", N, &end), false);
        assert_eq!(run(&mut own, N as u64), None);
        let e = run(&mut own, 1).expect("an own stream may not end before the trace");
        assert!(e.contains(&format!("ends after {N} instructions")), "{e}");

        let mut borrowed = Ooo::new(&CoreConfig::default(), stream("borrowed", N, &end), true);
        assert_eq!(run(&mut borrowed, N as u64 + 1), None);
        assert!(borrowed.exhausted);

        let mut on = Ooo::new(&CoreConfig::default(), stream("on", N, &end), false);
        on.run_on();
        assert_eq!(run(&mut on, 3 * N as u64), None, "the stream starts again at its end");
        assert_eq!(on.index, 3 * N as u64);

        let mut empty = Ooo::new(&CoreConfig::default(), stream("empty", 0, &end), false);
        empty.run_on();
        let e = run(&mut empty, 1).expect("an empty stream cannot run on");
        assert!(e.contains("holds no instruction"), "{e}");
    }

    #[test]
    fn taking_slots_as_pairs_is_taking_them_as_one_count() {
        // The count form: next slot = max(slots, t * width) + 1, cycle = slots / width.
        for width in 1..=5u64 {
            let (mut pair, mut count) = (Slots::default(), 0u64);
            for (k, t) in [0u64, 0, 0, 1, 1, 7, 3, 3, 3, 3, 3, 8, 20, 20].into_iter().enumerate() {
                pair.take(t, width);
                count = count.max(t * width) + 1;
                assert_eq!((pair.cycle, pair.used), (count / width, count % width), "width {width}, take {k}");
            }
        }
    }
}
