//! A workload's events as a stream: where they come from, and how a run
//! bounds them. Generators never end; traces end and can fail; the stream
//! hides the difference and keeps the first error for the caller.
//!
//! ```text
//!  Source: Generator (seeded, endless) | Trace (RecordEvents) | Ops (threads/)
//!    --refill: one operation's events, checked against the memory--> placed (Placement)
//!    --next: [ warm-up: >= W instructions ][ exactly N instructions ]--> Event
//!  ends: the limit reached (the instruction that reaches it whole), the
//!  trace's end, or an error (finish() returns it)
//!  run on (a core of a multi-core run, once its region of interest is
//!  over): the events after the limit, the source reopened at its end
//! ```

use super::{array, array_swap, btree, daxbench, hash, queue, random_writes, rbtree, seq_writes, synthetic, threads, tpcc, ycsb};
use super::{DataMode, Event, Generator, Op, Placement, Warmup, WorkloadKind};
use crate::trace::convert::{record_of, Written};
use crate::trace::records::EventRecords;
use crate::trace::{AddressSpace, NativeWriter, RecordEvents, TraceHeader};

impl WorkloadKind {
    pub(super) fn source(&self, seed: u64, capacity_bytes: u64) -> Result<Source, String> {
        Ok(match self {
            WorkloadKind::RandomWrites => {
                Source::Generator(Box::new(random_writes::RandomWrites::new(seed, random_writes::Params::default())))
            }
            WorkloadKind::SeqWrites => Source::Generator(Box::new(seq_writes::SeqWrites::new(seed, seq_writes::Params::default()))),
            WorkloadKind::ArraySwap => Source::Generator(Box::new(array_swap::ArraySwap::new(seed, array_swap::Params::default()))),
            WorkloadKind::Synthetic(p) => Source::Generator(Box::new(synthetic::Synthetic::new(seed, p.clone()))),
            WorkloadKind::Array(p) => Source::Generator(Box::new(array::Array::new(seed, p.clone())?)),
            WorkloadKind::Queue(p) => Source::Generator(Box::new(queue::Queue::new(seed, p.clone())?)),
            WorkloadKind::Btree(p) => Source::Generator(Box::new(btree::Btree::new(seed, p.clone())?)),
            WorkloadKind::Hash(p) => Source::Generator(Box::new(hash::Hash::new(seed, p.clone())?)),
            WorkloadKind::Rbtree(p) => Source::Generator(Box::new(rbtree::Rbtree::new(seed, p.clone())?)),
            WorkloadKind::Ycsb(p) => Source::Generator(Box::new(ycsb::Ycsb::new(seed, p.clone())?)),
            WorkloadKind::Tpcc(p) => Source::Generator(Box::new(tpcc::Tpcc::new(seed, p.clone())?)),
            WorkloadKind::Daxbench(p) => Source::Generator(Box::new(daxbench::Daxbench::new(seed, p.clone())?)),
            WorkloadKind::Trace(t) => Source::Trace(Box::new(t.open(seed, capacity_bytes)?)),
            WorkloadKind::Threads(t) => Source::Ops(t.merged(seed, capacity_bytes)?),
        })
    }

    /// Write `instructions` of this workload as a native trace: the same
    /// events a simulation of the workload with this seed would see.
    pub fn write_trace(&self, seed: u64, instructions: u64, out: &std::path::Path) -> Result<Written, String> {
        let mut h = TraceHeader::new("generator", AddressSpace::Physical, true);
        h.source = format!("spmsim generator {} seed {seed} instructions {instructions}", self.name());
        let mut w = NativeWriter::create(out, &h).map_err(|e| format!("{}: {e}", out.display()))?;
        let mut stream = self.stream(seed, instructions, u64::MAX)?;
        let mut n = Written::default();
        for e in &mut stream {
            w.write(&record_of(&e)).map_err(|e| format!("{}: {e}", out.display()))?;
            n.records += 1;
            n.instructions += e.instructions();
        }
        stream.finish()?;
        w.finish().map_err(|e| format!("{}: {e}", out.display()))?;
        Ok(n)
    }

    /// The events of `ops` operations (fewer if a trace ends first). An
    /// operation is one transaction or step of a generator, one record of
    /// a trace.
    pub fn generate(&self, ops: u64, seed: u64) -> Result<Vec<Event>, String> {
        self.generate_placed(ops, seed, None)
    }

    /// [`Self::generate`] with the events placed in physical memory as a
    /// configuration with persistent regions says ([`Placement`]).
    pub fn generate_placed(&self, ops: u64, seed: u64, placement: Option<Placement>) -> Result<Vec<Event>, String> {
        // A multi-programmed workload splits the persistent pool between
        // its programs.
        let pool = placement.as_ref().map_or(u64::MAX, Placement::size);
        let mut s = EventStream::new(self.source(seed, pool)?, u64::MAX, u64::MAX);
        s.placement = placement;
        let mut v = Vec::new();
        for _ in 0..ops {
            if !s.refill(&mut v) {
                break;
            }
        }
        s.finish()?;
        Ok(v)
    }

    /// A stream of events that ends once `instructions` have been produced
    /// (or the trace ends). An event beyond `capacity_bytes` ends the stream
    /// with an error that [`EventStream::finish`] reports.
    pub fn stream(&self, seed: u64, instructions: u64, capacity_bytes: u64) -> Result<EventStream, String> {
        let mut s = EventStream::new(self.source(seed, capacity_bytes)?, instructions, capacity_bytes);
        s.kind_notes = self.notes();
        Ok(s)
    }

    /// [`Self::stream`] after a warm-up of at least `warmup` instructions
    /// ([`Warmup`]): the warm-up's events, then exactly `instructions` more.
    pub fn stream_after_warmup(&self, seed: u64, warmup: u64, instructions: u64, capacity_bytes: u64) -> Result<EventStream, String> {
        let mut s = self.stream(seed, instructions, capacity_bytes)?;
        s.warmup = (warmup > 0).then(|| Warmup::new(warmup));
        Ok(s)
    }

    /// [`Self::stream_after_warmup`] of a trace, its events read from
    /// the trace's derived records.
    pub(super) fn records_stream(&self, events: EventRecords, warmup: u64, instructions: u64, capacity_bytes: u64) -> EventStream {
        let mut s = EventStream::new(Source::Records(Box::new(events)), instructions, capacity_bytes);
        s.kind_notes = self.notes();
        s.warmup = (warmup > 0).then(|| Warmup::new(warmup));
        s
    }

    /// One stream per thread, its events tagged with the thread
    /// ([`Event::thread`]), each after a warm-up of `warmup` of that
    /// thread's instructions (a mix part's own `warmup=`, if it has one) and ending after `instructions` more of them
    /// (instruction limits are per core, as in ChampSim).
    pub fn thread_streams(&self, seed: u64, warmup: u64, instructions: u64, capacity_bytes: u64) -> Result<Vec<EventStream>, String> {
        let WorkloadKind::Threads(spec) = self else {
            return Ok(vec![self.stream_after_warmup(seed, warmup, instructions, capacity_bytes)?]);
        };
        let notes = self.notes();
        Ok(spec
            .per_thread(seed, capacity_bytes)?
            .into_iter()
            .enumerate()
            .map(|(t, src)| {
                let mut s = EventStream::new(Source::Ops(src), instructions, capacity_bytes);
                s.kind_notes = notes.clone();
                let warmup = spec.part_warmup(t).unwrap_or(warmup);
                s.warmup = (warmup > 0).then(|| Warmup::new(warmup));
                if spec.mode == DataMode::Partitioned {
                    let (spec, t) = (spec.clone(), t);
                    s.reopen = Some(Box::new(move || spec.thread_partition(t, seed, capacity_bytes).map(Source::Ops)));
                }
                s
            })
            .collect())
    }
}

/// Where events come from: an endless seeded generator or a trace file.
pub(super) enum Source {
    Generator(Box<dyn Generator>),
    Trace(Box<RecordEvents>),
    /// A trace's derived records ([`crate::trace::records`]).
    Records(Box<EventRecords>),
    /// Several threads' events ([`threads`]): sources that can fail.
    Ops(Box<dyn threads::OpSource>),
}

/// A fresh copy of a stream's source, from its start (a thread's own
/// program, for [`EventStream::run_on`]).
type Reopen = Box<dyn FnMut() -> Result<Source, String> + Send>;

pub struct EventStream {
    src: Source,
    buf: Vec<Event>,
    pos: usize,
    left: u64,
    requested: u64,
    capacity_bytes: u64,
    error: Option<String>,
    /// What the workload itself asks a report to say ([`WorkloadKind::notes`]).
    kind_notes: Vec<String>,
    /// Events before the region of interest, outside the instruction limit.
    warmup: Option<Warmup>,
    /// Where the events go in physical memory (persistent regions).
    placement: Option<Placement>,
    /// How to start the source again from its beginning, if it can be.
    reopen: Option<Reopen>,
    /// Past the limit on purpose ([`Self::run_on`]).
    running_on: bool,
    /// Times the source was started again while running on.
    restarts: u64,
    /// What the report says of the region of interest, taken when it
    /// ended (the source running on is another copy).
    roi_notes: Option<Vec<String>>,
    /// The source, started again, has given no event yet (such a source
    /// is not started again).
    restarted_empty: bool,
}

impl EventStream {
    /// The warm-up this stream runs before its region of interest
    /// (instructions; 0: none).
    pub fn warmup_asked(&self) -> u64 {
        self.warmup.map_or(0, |w| w.asked())
    }

    fn new(src: Source, instructions: u64, capacity_bytes: u64) -> Self {
        EventStream {
            src,
            buf: Vec::new(),
            pos: 0,
            left: instructions,
            requested: instructions,
            capacity_bytes,
            error: None,
            kind_notes: Vec::new(),
            warmup: None,
            placement: None,
            reopen: None,
            running_on: false,
            restarts: 0,
            roi_notes: None,
            restarted_empty: false,
        }
    }

    /// The stream ended at its limit (its region of interest is over):
    /// go on past it, as a core of a multi-core run does until the last
    /// core's region of interest is over (ChampSim's rule: a core that
    /// finished keeps running, and a trace that ends starts again). The
    /// events after the limit follow (the rest of the instruction the
    /// limit cut), and a finite source starts again from its beginning at
    /// its end. False, and the stream stays ended, if it cannot: a
    /// warm-up not over, an error, a finite source that cannot be started
    /// again (shared data), or a stream the instruction limit did not end.
    pub fn run_on(&mut self) -> bool {
        let warm = self.warmup.is_none_or(|w| w.is_over());
        let endless = matches!(self.src, Source::Generator(_));
        if !warm || self.error.is_some() || !(endless || self.reopen.is_some()) {
            return false;
        }
        self.roi_notes = Some(self.notes());
        self.running_on = true;
        true
    }

    /// Start the source again from its beginning (running on); false if
    /// it cannot or its last start gave no event.
    fn restart(&mut self) -> bool {
        if self.restarted_empty {
            return false;
        }
        let Some(reopen) = self.reopen.as_mut() else { return false };
        match reopen() {
            Ok(src) => {
                self.src = src;
                self.restarts += 1;
                self.restarted_empty = true;
                true
            }
            Err(_) => false,
        }
    }

    /// The same stream, its events placed in physical memory as `p` says.
    pub fn with_placement(mut self, p: Option<Placement>) -> Self {
        self.placement = p;
        self
    }

    /// Append one operation's events to `out`; false at the end or on error.
    fn refill(&mut self, out: &mut Vec<Event>) -> bool {
        let start = out.len();
        let more = self.refill_unplaced(out);
        if let (true, Some(p)) = (more, self.placement.as_mut()) {
            let ops = out.split_off(start);
            for e in ops {
                if let Err(err) = p.place(e, out) {
                    self.error = Some(err);
                    return false;
                }
            }
        }
        more
    }

    fn refill_unplaced(&mut self, out: &mut Vec<Event>) -> bool {
        match &mut self.src {
            Source::Generator(g) => {
                let start = out.len();
                g.next_op(out);
                if let Some(e) = out[start..].iter().find(|e| e.addr + e.size as u64 > self.capacity_bytes) {
                    self.error = Some(format!("workload touches {:#x}, beyond memory.capacity_bytes = {}", e.addr, self.capacity_bytes));
                    return false;
                }
                true
            }
            Source::Trace(t) => match t.next_op(out) {
                Ok(more) => more,
                Err(e) => {
                    self.error = Some(e.to_string());
                    false
                }
            },
            Source::Records(r) => {
                // A placement may refuse an event: a record at a time, as
                // from the trace, so the events before it are the same.
                let read = if self.placement.is_some() { r.next_op(out) } else { r.next_block(out) };
                read.unwrap_or_else(|e| {
                    self.error = Some(e.to_string());
                    false
                })
            }
            Source::Ops(o) => {
                let start = out.len();
                match o.next_op(out) {
                    Ok(more) => {
                        if let Some(e) = out[start..].iter().find(|e| e.addr + e.size as u64 > self.capacity_bytes) {
                            self.error = Some(format!(
                                "workload touches {:#x} (thread {}), beyond memory.capacity_bytes = {}",
                                e.addr, e.thread, self.capacity_bytes
                            ));
                            return false;
                        }
                        more
                    }
                    Err(e) => {
                        self.error = Some(e);
                        false
                    }
                }
            }
        }
    }

    /// The error that ended the stream early, if any.
    pub fn finish(&self) -> Result<(), String> {
        self.error.clone().map_or(Ok(()), Err)
    }

    /// What a report should say about how the events were obtained.
    pub fn notes(&self) -> Vec<String> {
        if let Some(n) = &self.roi_notes {
            let mut n = n.clone();
            n.push(format!(
                "ran on after its region of interest until the last core's ended (ChampSim's rule; its counts are its region's), its source started again {} time(s)",
                self.restarts
            ));
            return n;
        }
        let mut n = self.kind_notes.clone();
        let trace = match &self.src {
            Source::Trace(t) => Some((t.header(), t.derived_values)),
            Source::Records(r) => {
                // The events of the block after the record the stream
                // looked at last were read ahead of what a reader of the
                // trace reads (a record at a time).
                let unread = match self.buf.get(self.pos..) {
                    Some(rest) if !rest.is_empty() && self.placement.is_none() => {
                        r.derived_from(self.pos + 1 + rest[1..].iter().position(|e| !e.piece).unwrap_or(rest.len() - 1))
                    }
                    _ => 0,
                };
                Some((r.header(), r.derived_values() - unread))
            }
            _ => None,
        };
        if let Some((h, derived_values)) = trace {
            n.push(format!("trace from {} ({})", h.source_format, if h.source.is_empty() { "no source recorded" } else { &h.source }));
            if derived_values > 0 {
                n.push(format!("values derived: {derived_values} stores carried no recorded value, so the simulator wrote a deterministic value derived from the seed"));
            }
            if self.left > 0 && self.requested != u64::MAX {
                n.push(format!("trace ended {} instructions short of the {} requested", self.left, self.requested));
            }
        }
        if let Source::Ops(o) = &self.src {
            n.extend(o.notes());
            if o.finite() && self.left > 0 && self.requested != u64::MAX {
                n.push(format!("traces ended {} instructions short of the {} requested", self.left, self.requested));
            }
        }
        n
    }
}

impl Iterator for EventStream {
    type Item = Event;
    /// Events up to exactly the requested number of instructions: an event
    /// whose gap runs past the limit is cut to a `compute` event of the
    /// instructions that are left, and the instruction that reaches the
    /// limit is simulated whole (its later pieces, `same_instruction` with
    /// no gap, still follow).
    fn next(&mut self) -> Option<Event> {
        while self.pos >= self.buf.len() {
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            self.pos = 0;
            let more = self.refill(&mut buf);
            self.buf = buf;
            self.restarted_empty &= self.buf.is_empty();
            if !more && self.running_on {
                // Beyond the region of interest: an error there ends the
                // running on, not the run.
                self.error = None;
                if self.restart() {
                    continue;
                }
                return None;
            }
            if !more {
                if self.left == 0 {
                    // Looking past the limit for the rest of an instruction
                    // only: what lies beyond is not part of the run.
                    self.error = None;
                }
                self.buf.clear();
                return None;
            }
        }
        let e = self.buf[self.pos];
        if self.running_on {
            self.pos += 1;
            return Some(e);
        }
        if self.warmup.as_mut().is_some_and(|w| w.takes(&e)) {
            self.pos += 1;
            return Some(e);
        }
        let n = e.instructions();
        if self.left == 0 {
            if e.same_instruction && n == 0 {
                self.pos += 1;
                return Some(e);
            }
            return None;
        }
        if n > self.left {
            // The limit falls inside the gap (n is the gap plus at most
            // one); the rest of the event stays for running on.
            let cut = Event::marker(Op::Compute).after(self.left as u32).on_thread(e.thread);
            self.buf[self.pos] = e.after(e.gap - self.left as u32);
            self.left = 0;
            return Some(cut);
        }
        self.pos += 1;
        self.left -= n;
        Some(e)
    }
}
