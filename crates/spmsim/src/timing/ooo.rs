//! The `ooo` core model's scheduler: every instruction of the
//! recorded instruction stream (`trace/insn.rs`) dispatches in order at
//! the issue width once the reorder buffer (and, for a load, the load
//! queue) has room, issues when its source registers' producers have
//! completed and a unit of its class is free, completes after the unit's
//! latency, and retires in order at the issue width. A mispredicted
//! branch holds dispatch until it has executed and the front end has
//! refilled. Memory instructions take their latency from the cache and
//! memory model ([`super::core::Core`] passes it in).
//!
//! Under `core.ooo.micro_ops = "x86"` an instruction is cracked into
//! micro-ops (`trace/uops.rs`): a micro-op per access, as its accesses
//! come, and one if it also computes. Each takes a slot of the fetch,
//! dispatch and commit widths and an entry of the fetch queue, the
//! reorder buffer and the instruction queue, as in gem5's O3 CPU:
//!
//! ```text
//!  micro-op      holds an IQ entry until            frees its ROB entry
//!  an access     the access starts                  when its instruction retires
//!  the compute   the loaded value is back
//! ```
//! An instruction retires when its last micro-op commits, its micro-ops
//! taking their commit slots then. Only an instruction of more micro-ops
//! than the reorder buffer holds (a long `rep` string instruction) frees
//! entries before it retires: a micro-op of it waits for the one a
//! buffer's length before it to have committed, which is when the
//! instruction's accesses up to that one had completed and the
//! instruction before it had retired (gem5 commits micro-ops one by one).
//! Register dependences, units and the load queue stay per instruction.

use super::branch::Tournament;
use super::frontend::{FrontEnd, FrontEndStats, InstructionFetch};
use crate::config::{CoreConfig, FuPool};
use crate::trace::insn::{Insn, MAX_DISTANCE};
use crate::trace::records::{InsnSource, PLACED_BATCH};
use crate::trace::uops;
use crate::trace::vex::{BranchKind, FuClass};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Ring size for per-instruction times: above any distance the stream
/// records and any reorder buffer the configuration allows.
const RING: usize = 1024;

const _: () = assert!((MAX_DISTANCE as usize) < RING);

/// Instructions decoded from the stream at a time (the batches the
/// derived records were placed in).
const BATCH: usize = PLACED_BATCH;

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

    /// Take `n` (at least one) slots in a row, the first at or after cycle
    /// `t`, as `n` calls of [`Self::take`] at `t`; the cycle of the last.
    fn take_n(&mut self, t: u64, width: u64, n: u64) -> u64 {
        if t > self.cycle {
            self.cycle = t;
            self.used = 0;
        }
        let last = self.cycle + (self.used + n - 1) / width;
        let used = self.used + n;
        self.cycle += used / width;
        self.used = used % width;
        last
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
    /// Micro-ops dispatched (`core.ooo.micro_ops = "x86"` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_ops: Option<u64>,
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
            micro_ops: self.micro_ops.map(|n| n - o.micro_ops.unwrap_or(0)),
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
    /// When its current access may start: `issue` for its first, and
    /// under `micro_ops = "x86"` no earlier than a later access's
    /// micro-op dispatches.
    pub access_at: u64,
    /// A branch that reads or writes memory (`ret`, `call`, `jmp *mem`),
    /// resolved when the access completes; `None` once resolved.
    pub branch: Option<Insn>,
    /// Once its first block piece has finished, so that later pieces of
    /// the same instruction (an access split at a block boundary, a `rep`
    /// instruction's iterations) move its one retirement rather than take
    /// another.
    finished: Option<Finished>,
    /// It holds a load-queue entry.
    pub in_lq: bool,
    /// The instruction, its accesses so far and its micro-ops so far.
    insn: Insn,
    loads: u64,
    stores: u64,
    micro_ops: u64,
    /// The first micro-op of its current access.
    access_from: u64,
    /// Its compute micro-op holds an instruction-queue entry until its
    /// loaded value is back, which the next finished piece tells.
    compute_waits: bool,
}

/// The retirement of the open memory instruction so far.
#[derive(Clone, Copy, Debug, Default)]
struct Finished {
    /// Its completion.
    done: u64,
    /// The cycle its commit slots are taken from, the slots before them,
    /// how many it took, and the cycle of the last (its retirement).
    from: u64,
    before: Slots,
    micro_ops: u64,
    retired: u64,
}

pub struct Ooo {
    reader: InsnSource,
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
    /// Issue times of the micro-ops in the instruction queue.
    queued: BinaryHeap<Reverse<u64>>,
    /// Micro-ops in the instruction queue whose issue time is not known
    /// yet (not in `queued`).
    iq_waiting: usize,
    /// Instructions cracked into micro-ops (`core.ooo.micro_ops = "x86"`).
    crack: bool,
    /// Micro-ops dispatched, and per micro-op (a ring as `done`): its
    /// instruction's index, and for a micro-op of the open memory
    /// instruction, when it frees its reorder-buffer entry (see the
    /// module docs; 0 until its access has completed).
    micro_ops: u64,
    micro_op_insn: Box<[u64; RING]>,
    micro_op_free: Box<[u64; RING]>,
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
    /// What the tests' occupancy checks read.
    #[cfg(test)]
    probe: tests::Probe,
}

fn class_index(c: FuClass) -> usize {
    c as usize
}

impl Ooo {
    pub fn new(c: &CoreConfig, reader: impl Into<InsnSource>, borrowed: bool) -> Self {
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
            reader: reader.into(),
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
            iq_waiting: 0,
            crack: o.micro_ops == crate::config::MicroOps::X86,
            micro_ops: 0,
            micro_op_insn: Box::new([0; RING]),
            micro_op_free: Box::new([0; RING]),
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
            #[cfg(test)]
            probe: Default::default(),
        }
    }

    /// The counts so far, the front end's included.
    pub fn all_stats(&self) -> OooStats {
        OooStats { front_end: self.front.as_ref().map(|f| f.stats), micro_ops: self.crack.then_some(self.micro_ops), ..self.stats }
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
                        self.reader.count()
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

    /// Dispatch micro-op `self.micro_ops` of instruction `i`: its first,
    /// fetched by the instruction's address through `fetch`, or another
    /// of it (`fetch` is `None`); `load_queue`: it needs a load-queue
    /// entry. It holds an instruction-queue entry whose issue time
    /// [`Self::enter_iq`] gives. Returns its dispatch time.
    #[inline(always)]
    fn dispatch_micro_op(&mut self, i: u64, fetch: Option<(&Insn, &mut InstructionFetch)>, load_queue: bool) -> u64 {
        let slot = self.disp.cycle;
        let front = match (&mut self.front, fetch) {
            (Some(f), Some((ins, icache))) => f.fetch(ins, icache),
            (Some(f), None) => f.fetch_micro_op(),
            (None, _) => self.fetch_ready,
        };
        let mut d = slot.max(front);
        self.stats.refill_cycles += front.saturating_sub(slot);
        let u = self.micro_ops;
        if u >= self.rob {
            // The micro-op a buffer's length older has freed its entry.
            let k = ((u - self.rob) as usize) % RING;
            let j = self.micro_op_insn[k];
            let r = if j == i { self.micro_op_free[k] } else { self.retired[(j as usize) % RING] };
            if r > d {
                self.stats.rob_full_cycles += r - d;
                d = r;
            }
        }
        if load_queue && self.loads.len() >= self.lq {
            d = d.max(self.loads[self.loads.len() - self.lq]);
        }
        d = self.iq_room(d);
        self.disp.take(d, self.width);
        if let Some(f) = &mut self.front {
            f.dispatched(d);
        }
        let k = (u as usize) % RING;
        self.micro_op_insn[k] = i;
        self.micro_op_free[k] = 0;
        self.micro_ops += 1;
        self.iq_waiting += 1;
        #[cfg(test)]
        self.probe.dispatched.push((i, d));
        d
    }

    /// A micro-op dispatched earlier issues at `issue`: its
    /// instruction-queue entry is free from then on.
    #[inline]
    fn enter_iq(&mut self, issue: u64) {
        self.queued.push(Reverse(issue));
        self.iq_waiting -= 1;
        #[cfg(test)]
        self.probe.issued.push(issue);
    }

    /// Dispatch the next instruction of the stream with its micro-ops:
    /// one, or under `micro_ops = "x86"` for a memory instruction those
    /// its first access makes (`loads`, `stores`: 0 or 1 each, both 0 for
    /// a fence). Returns (index, its first micro-op's dispatch time,
    /// address-ready time, data-ready time, the instruction, its
    /// micro-ops).
    #[inline(always)]
    fn dispatch_one(&mut self, memop: bool, loads: u64, stores: u64, icache: &mut InstructionFetch) -> (u64, u64, u64, u64, Insn, u64) {
        let ins = self.next();
        let i = self.index;
        // An instruction without accesses is one micro-op (`uops::micro_ops`).
        let n = if self.crack && memop { uops::micro_ops(&ins, loads, stores) } else { 1 };
        let d = self.dispatch_micro_op(i, Some((&ins, icache)), memop && ins.class == FuClass::Load);
        let mut last = d;
        for _ in 1..n {
            last = self.dispatch_micro_op(i, None, false);
        }
        if let Some(f) = &mut self.front {
            f.fetched_instruction(&ins);
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
        // Its compute micro-op starts no earlier than it dispatches.
        data = data.max(last);
        self.index += 1;
        (i, d, addr, data, ins, n)
    }

    /// `n` non-memory instructions, through to retirement at or after
    /// `last_retire`; returns the last one's dispatch time, or `t` when
    /// `n` is 0.
    pub fn run_plains(&mut self, n: u64, mut t: u64, last_retire: &mut u64, icache: &mut InstructionFetch) -> u64 {
        if n > 0 {
            self.close_open();
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
        let (i, d, addr, data, ins, _) = self.dispatch_one(false, 0, 0, icache);
        let ready = addr.max(data);
        let issue = self.take_unit(ins.class, ready);
        self.enter_iq(issue);
        let done = issue + self.latency(ins.class).max(1);
        self.resolve_branch(&ins, done);
        self.finish(i, done, last_retire, 1);
        d
    }

    /// The open memory instruction is over. Every access finishes before
    /// the next instruction dispatches, so its compute micro-op has its
    /// issue time; should one still wait, it issues with its data.
    fn close_open(&mut self) {
        if let Some(m) = self.open.take() {
            if m.compute_waits {
                self.enter_iq(m.data_ready);
            }
        }
    }

    /// A memory or fence instruction: dispatched, its first access to be
    /// priced (`loads`, `stores`: 0 or 1 each, both 0 for a fence).
    pub fn start_memop(&mut self, loads: u64, stores: u64, icache: &mut InstructionFetch) -> u64 {
        self.close_open();
        let (i, _d, addr, data, ins, n) = self.dispatch_one(true, loads, stores, icache);
        let extra = self.latency(ins.class);
        self.enter_iq(addr);
        let branch = (ins.branch != BranchKind::None).then_some(ins);
        self.open = Some(OpenMemop {
            index: i,
            issue: addr,
            access_at: addr,
            data_ready: data,
            extra,
            branch,
            finished: None,
            in_lq: false,
            insn: ins,
            loads,
            stores,
            micro_ops: n,
            access_from: self.micro_ops - n,
            compute_waits: n > (loads + stores).max(1),
        });
        // Its result is not known yet: consumers wait at least this long.
        self.done[(i as usize) % RING] = u64::MAX / 4;
        addr
    }

    /// Another access of the open memory instruction begins (a
    /// read-modify-write's store, a `rep` instruction's next iteration;
    /// `load`: it loads, else it stores). Under `micro_ops = "x86"` the
    /// micro-ops it adds (its own, and a compute micro-op when it makes
    /// the instruction compute) dispatch now, and it starts once its own
    /// has dispatched: returns when it may start. `None` when nothing is
    /// cracked: it starts with the instruction's first access.
    pub fn more_access(&mut self, load: bool) -> Option<u64> {
        let m = self.open.filter(|_| self.crack)?;
        let (loads, stores) = (m.loads + load as u64, m.stores + !load as u64);
        let n = uops::micro_ops(&m.insn, loads, stores);
        let (from, added) = (self.micro_ops, n.saturating_sub(m.micro_ops));
        let (mut at, mut last) = (m.issue, 0);
        for k in 0..added {
            last = self.dispatch_micro_op(m.index, None, false);
            if k == 0 {
                at = at.max(last);
                self.enter_iq(at);
            }
        }
        let o = self.open.as_mut().expect("the open memory instruction");
        if added > 1 {
            o.compute_waits = true;
            o.data_ready = o.data_ready.max(last);
        }
        (o.loads, o.stores, o.micro_ops, o.access_from, o.access_at) = (loads, stores, n, from, at);
        Some(at)
    }

    /// A block piece of the open memory instruction completes at `done`;
    /// the instruction completes with its last piece and retires once, in
    /// order. Returns its retirement so far.
    pub fn finish_memop(&mut self, done: u64, last_retire: &mut u64, load: bool) -> u64 {
        let Some(m) = self.open.as_mut() else { return done.max(*last_retire) };
        // What this piece needs of the open instruction, read in place
        // (the instruction is written back below with what changed).
        let (i, finished, in_lq, n, extra, access_from) = (m.index, m.finished, m.in_lq, m.micro_ops, m.extra, m.access_from);
        let branch = if m.branch.is_some() { m.branch.take() } else { None };
        if std::mem::take(&mut m.compute_waits) {
            // The compute micro-op issues once the loaded value is back.
            self.enter_iq(done.saturating_sub(extra));
        }
        if let Some(b) = branch {
            self.resolve_branch(&b, done);
        }
        let f = match finished {
            None => {
                let before = self.ret;
                let from = done.max(*last_retire).max(self.ret.cycle);
                let retired = self.finish(i, done, last_retire, n);
                Finished { done, from, before, micro_ops: n, retired }
            }
            Some(f) => {
                // A later piece: the retirement moves to its completion,
                // with the slots the instruction's micro-ops take.
                let done = done.max(f.done);
                let from = f.from.max(done);
                let retired = match from > f.from || n != f.micro_ops {
                    true => {
                        self.ret = f.before;
                        self.ret.take_n(from, self.commit_width, n)
                    }
                    false => f.retired,
                };
                self.done[(i as usize) % RING] = done;
                self.retired[(i as usize) % RING] = retired;
                #[cfg(test)]
                self.probe.retire(i, retired);
                *last_retire = retired.max(*last_retire);
                Finished { done, from, before: f.before, micro_ops: n, retired }
            }
        };
        let r = *last_retire;
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
        if self.crack {
            // The current access's micro-ops commit once it and those
            // before it have completed (see the module docs).
            for u in access_from..self.micro_ops {
                self.micro_op_free[(u as usize) % RING] = f.from;
            }
        }
        if let Some(m) = self.open.as_mut() {
            m.finished = Some(f);
            m.in_lq = now_in_lq;
        }
        r
    }

    /// The first cycle at or after `d` (dispatch times only grow) at which
    /// the instruction queue has an entry free: a micro-op holds one from
    /// its dispatch until it issues (gem5 `numIQEntries`).
    #[inline]
    fn iq_room(&mut self, d: u64) -> u64 {
        let mut d = d;
        while let Some(&Reverse(t)) = self.queued.peek() {
            if t <= d {
                self.queued.pop();
            } else if self.queued.len() + self.iq_waiting >= self.iq {
                self.stats.iq_full_cycles += t - d;
                d = t;
                self.queued.pop();
            } else {
                break;
            }
        }
        d
    }

    /// Instruction `i` of `n` micro-ops completes at `done`: it retires in
    /// order once its micro-ops have commit slots. Returns its retirement
    /// (its last micro-op's commit).
    fn finish(&mut self, i: u64, done: u64, last_retire: &mut u64, n: u64) -> u64 {
        let from = done.max(*last_retire).max(self.ret.cycle);
        let r = match n {
            1 => {
                self.ret.take(from, self.commit_width);
                from
            }
            _ => self.ret.take_n(from, self.commit_width, n),
        };
        *last_retire = r;
        self.done[(i as usize) % RING] = done;
        self.retired[(i as usize) % RING] = r;
        #[cfg(test)]
        self.probe.retire(i, r);
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
    use crate::trace::insn::InsnReader;

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

    /// Every micro-op's instruction and dispatch, every issue from the
    /// instruction queue, and each instruction's (last) retirement.
    #[derive(Default)]
    pub(super) struct Probe {
        pub(super) dispatched: Vec<(u64, u64)>,
        pub(super) issued: Vec<u64>,
        retired: Vec<u64>,
    }

    impl Probe {
        pub(super) fn retire(&mut self, i: u64, r: u64) {
            let i = i as usize;
            if self.retired.len() <= i {
                self.retired.resize(i + 1, 0);
            }
            self.retired[i] = r;
        }

        /// The most micro-ops the reorder buffer and the instruction queue
        /// held at once, at the end of any cycle a micro-op dispatched in:
        /// those dispatched by then less those that freed their entry (a
        /// micro-op frees it no earlier than it dispatches).
        fn peaks(&self) -> (usize, usize) {
            let sorted = |mut v: Vec<u64>| {
                v.sort_unstable();
                v
            };
            let at_or_before = |v: &[u64], t: u64| v.partition_point(|&x| x <= t);
            let dispatched = sorted(self.dispatched.iter().map(|&(_, d)| d).collect());
            let freed = sorted(self.dispatched.iter().map(|&(i, _)| self.retired[i as usize]).collect());
            let issued = sorted(self.issued.clone());
            assert_eq!(issued.len(), dispatched.len(), "every micro-op issued once");
            dispatched.iter().fold((0, 0), |(rob, iq), &t| {
                let n = at_or_before(&dispatched, t);
                (rob.max(n - at_or_before(&freed, t)), iq.max(n - at_or_before(&issued, t)))
            })
        }
    }

    /// A core of `width` (dispatch and commit), a reorder buffer of `rob`
    /// and the constant front end, cracking as `micro_ops` says.
    fn core(micro_ops: crate::config::MicroOps, width: u32, rob: u32) -> CoreConfig {
        let mut c = CoreConfig { rob_entries: rob, ..CoreConfig::default() };
        c.ooo.micro_ops = micro_ops;
        (c.ooo.dispatch_width, c.ooo.commit_width) = (width, width);
        c.ooo.front_end = crate::config::FrontEnd::Constant;
        c
    }

    /// A memory instruction whose accesses are `accesses` (true: a load,
    /// false: a store), each completing `latency` after it starts, as
    /// `Core` runs one; returns when its first access started.
    fn memop(o: &mut Ooo, accesses: &[bool], latency: u64, last_retire: &mut u64) -> u64 {
        let first = accesses[0];
        let at = o.start_memop(first as u64, !first as u64, &mut |t, _| t + 1);
        let m = o.open.unwrap();
        o.finish_memop((at + latency).max(m.data_ready) + m.extra, last_retire, first);
        for &load in &accesses[1..] {
            let t = o.more_access(load).unwrap_or(at);
            let m = o.open.unwrap();
            o.finish_memop((t + latency).max(m.data_ready) + m.extra * load as u64, last_retire, load);
        }
        at
    }

    use crate::config::MicroOps::{OnePerInstruction, X86};

    #[test]
    fn a_memory_operand_with_an_alu_op_takes_two_slots_and_a_read_modify_write_three() {
        const W: u64 = 6;
        const M: usize = 600;
        // `add (%rsi),%rax` (a unit class with a load): two micro-ops, so
        // three instructions dispatch a cycle at a width of six, or six
        // uncracked.
        for (crack, per_cycle) in [(X86, 3), (OnePerInstruction, 6)] {
            let mut o = Ooo::new(&core(crack, W as u32, 192), stream(&format!("load-op-{crack:?}"), M, &[]), false);
            let mut last = 0;
            let starts: Vec<u64> = (0..M).map(|_| memop(&mut o, &[true], 1, &mut last)).collect();
            assert_eq!(o.error, None);
            assert_eq!(o.index, M as u64);
            assert_eq!(o.all_stats().micro_ops, (crack == X86).then_some(2 * M as u64));
            for (k, &t) in starts.iter().enumerate() {
                assert_eq!(t, k as u64 / per_cycle, "{crack:?}: instruction {k} starts its load in cycle {t}");
            }
        }
        // `add %rax,(%rsi)` (a store that loads first): three micro-ops,
        // the third with its store, so two instructions a cycle.
        for (crack, per_cycle) in [(X86, 2), (OnePerInstruction, 6)] {
            let mut o = Ooo::new(&core(crack, W as u32, 192), stream(&format!("rmw-{crack:?}"), 0, &[0x08; M]), false);
            let mut last = 0;
            let starts: Vec<u64> = (0..M).map(|_| memop(&mut o, &[true, false], 1, &mut last)).collect();
            assert_eq!(o.all_stats().micro_ops, (crack == X86).then_some(3 * M as u64));
            for (k, &t) in starts.iter().enumerate() {
                assert_eq!(t, k as u64 / per_cycle, "{crack:?}: read-modify-write {k} starts in cycle {t}");
            }
        }
    }

    #[test]
    fn a_chain_of_plain_instructions_runs_the_same_cracked_or_not() {
        // Each instruction reads the one before it: one micro-op each.
        let chain: Vec<u8> = [0x10, 0x02].repeat(N);
        let run = |crack| {
            let mut o = Ooo::new(&core(crack, 8, 192), stream(&format!("chain-{crack:?}"), 0, &chain), false);
            let mut last = 0;
            let t = o.run_plains(N as u64, 0, &mut last, &mut |t, _| t + 1);
            (t, last, o.all_stats())
        };
        let (x86, one) = (run(X86), run(OnePerInstruction));
        assert_eq!(x86.2.micro_ops, Some(N as u64));
        assert_eq!(one.2.micro_ops, None);
        assert_eq!((x86.0, x86.1, OooStats { micro_ops: None, ..x86.2 }), one);
        assert_eq!(x86.1, N as u64, "a one-cycle chain retires an instruction a cycle");
    }

    /// A mix of plain instructions, load-op instructions on long misses,
    /// read-modify-writes and ALU ops with a memory operand, `n` of each,
    /// on a core of `rob` reorder-buffer and `iq` queue entries.
    fn mixed(n: usize, rob: u32, iq: u32, fetch_queue: u32) -> Ooo {
        let mut c = core(X86, 4, rob);
        c.ooo.iq_entries = iq;
        c.ooo.front_end = crate::config::FrontEnd::Fetch;
        c.ooo.fetch_queue_entries = fetch_queue;
        let entries: Vec<u8> = [&[0x00][..], &[0x17, 0x02], &[0x08], &[0x00]].concat().repeat(n);
        let mut o = Ooo::new(&c, stream(&format!("mixed-{rob}-{iq}"), 0, &entries), false);
        let mut last = 0;
        for _ in 0..n {
            o.run_plains(1, 0, &mut last, &mut |t, _| t + 1);
            memop(&mut o, &[true], 40, &mut last);
            memop(&mut o, &[true, false], 2, &mut last);
            memop(&mut o, &[true], 3, &mut last);
        }
        assert_eq!(o.error, None);
        o
    }

    #[test]
    fn no_micro_op_finds_the_reorder_buffer_or_the_queues_over_their_size() {
        // A small ROB, a small IQ, and both of middling size.
        for (rob, iq, fq) in [(16, 64, 4), (192, 8, 2), (32, 16, 32)] {
            let o = mixed(400, rob, iq, fq);
            let (rob_peak, iq_peak) = o.probe.peaks();
            let s = o.all_stats();
            let fq_peak = s.front_end.unwrap().fetch_queue_peak;
            println!(
                "ROB {rob} IQ {iq} FQ {fq}: peaks {rob_peak} {iq_peak} {fq_peak}, full cycles {} {}",
                s.rob_full_cycles, s.iq_full_cycles
            );
            assert_eq!(s.micro_ops, Some(400 * (1 + 2 + 3 + 2)));
            assert!(rob_peak <= rob as usize, "ROB of {rob}: {rob_peak} micro-ops held");
            assert!(iq_peak <= iq as usize, "IQ of {iq}: {iq_peak} micro-ops held");
            assert!(fq_peak <= fq as u64, "fetch queue of {fq}: {fq_peak} held");
            // The checks bite: each structure filled where it is small.
            if rob == 16 {
                assert!(rob_peak == 16 && s.rob_full_cycles > 0, "ROB peak {rob_peak}, {} full cycles", s.rob_full_cycles);
            }
            if iq == 8 {
                // (A micro-op issuing in the cycle another takes its entry
                // is not held at that cycle's end.)
                assert!(iq_peak + 1 >= iq as usize && s.iq_full_cycles > 0, "IQ peak {iq_peak}, {} full cycles", s.iq_full_cycles);
            }
        }
    }

    #[test]
    fn a_rep_instruction_longer_than_the_reorder_buffer_runs_through_it() {
        // `rep movsq` of 100 iterations, 10 cycles an access: 201 micro-ops
        // (a load and a store each, one compute) through a ROB of 16.
        let mut o = Ooo::new(&core(X86, 4, 16), stream("rep", 0, &[0x08, 0x00]), false);
        let mut last = 0;
        let accesses: Vec<bool> = [true, false].repeat(100);
        memop(&mut o, &accesses, 10, &mut last);
        let s = o.all_stats();
        assert_eq!(s.micro_ops, Some(201));
        // Its micro-ops beyond the first 16 wait for earlier ones to
        // complete rather than for the instruction to retire.
        assert!(s.rob_full_cycles > 0);
        let end = o.probe.dispatched.last().unwrap().1;
        assert!(end >= 200 / 4, "its micro-ops take the dispatch width: the last at {end}");
        assert!(last >= end + 10, "it retires after its last access: {last}");
        o.run_plains(1, 0, &mut last, &mut |t, _| t + 1);
        assert_eq!(o.index, 2);
    }
}
