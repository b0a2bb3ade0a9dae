//! One timed run, in three steps taken in order and once each:
//! what the run reads is resolved first, then the machine is built from
//! it, then it simulates.
//!
//! ```text
//!  resolve  SimConfig + WorkloadKind + seed, warm-up, instructions
//!             -> one core per thread          (SimConfig::with_cores_for)
//!             -> the workload opened for it   (WorkloadKind::open: streams,
//!                                              trace and instruction readers)
//!           = ResolvedRun                      bad input stops here
//!  build    TimingSim (timing model + functional System), each core's
//!           ooo scheduler on its instruction stream, the ticket lock
//!           = BuiltRun                         a scheme the timing model
//!                                              cannot price stops here
//!  run      the cores take their streams' events (TimingSim::run_threads)
//!           -> RunStats with the workload's notes
//! ```
//! `spmsim run` (through [`crate::api`]), the reproductions, the
//! comparison and `spmsim bench` all take these steps; [`simulate`] and its
//! variants take all three at once.

use super::schedule::TicketLock;
use super::{ooo, RunStats, TimingSim};
use crate::config::{CoreModel, SimConfig};
use crate::trace::records::InsnSource;
use crate::workload::{EventStream, OpenedWorkload, WorkloadKind};
use std::sync::atomic::AtomicBool;

/// Events between two reads of a run's stop flag.
pub const STOP_CHECK_EVENTS: usize = 4096;

/// Why a timed run ended without statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// Bad input, not a simulator fault: a preset, key or value, a
    /// workload that cannot be opened or read (bad trace, an address beyond
    /// the memory).
    Invalid(String),
    /// The simulation itself failed (an integrity check on the way).
    Failed(String),
    /// The stop flag was set.
    Cancelled,
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Invalid(m) | SimError::Failed(m) => f.write_str(m),
            SimError::Cancelled => f.write_str("cancelled"),
        }
    }
}

impl std::error::Error for SimError {}

/// A timed run with everything it reads resolved: the machine's
/// configuration and the workload opened for that machine.
pub struct ResolvedRun {
    /// The configuration with one core per thread of the workload.
    cfg: SimConfig,
    seed: u64,
    instructions: u64,
    workload: OpenedWorkload,
}

impl ResolvedRun {
    /// Resolve a run of `instructions` of `workload` per core on the
    /// machine `cfg` describes, after a warm-up of `warmup` (0: none).
    pub fn new(cfg: &SimConfig, workload: &WorkloadKind, warmup: u64, instructions: u64, seed: u64) -> Result<Self, SimError> {
        let mut cfg = cfg.with_cores_for(workload.threads()).map_err(SimError::Invalid)?;
        // `core.model = "auto"` is decided here, before the machine is
        // built: only the ooo core has an instruction cache.
        let mut chosen = None;
        if cfg.core.model == CoreModel::Auto {
            let (model, note) = workload.auto_core();
            cfg.core.model = model;
            chosen = note;
        }
        let mut workload = workload.open(&cfg, seed, warmup, instructions).map_err(SimError::Invalid)?;
        workload.notes.splice(0..0, chosen);
        Ok(ResolvedRun { cfg, seed, instructions, workload })
    }

    /// The machine, loaded with the workload: one core per thread; under
    /// `core.model = "ooo"` each core schedules its thread's instruction
    /// stream; a shared-data workload's transactions take the ticket lock.
    pub fn build(self) -> Result<BuiltRun, SimError> {
        let ResolvedRun { cfg, seed, instructions, workload } = self;
        let OpenedWorkload { name, streams, insns, insns_borrowed, shared_lock, notes } = workload;
        let mut sim = TimingSim::new(&cfg, seed).map_err(SimError::Invalid)?;
        sim.take_workload(&cfg, insns, insns_borrowed, shared_lock);
        let warmups: Vec<u64> = streams.iter().map(EventStream::warmup_asked).collect();
        Ok(BuiltRun { sim: sim.with_warmups(&warmups), streams, name, seed, instructions, core_notes: notes })
    }

    /// Build and run to the end (or until `stop` is set).
    pub fn simulate(self, stop: &AtomicBool) -> Result<RunStats, SimError> {
        let mut run = self.build()?;
        run.run(stop)?;
        Ok(run.finish())
    }
}

impl TimingSim {
    /// The instruction streams the cores schedule and the lock the
    /// threads share, from the opened workload.
    fn take_workload(&mut self, cfg: &SimConfig, insns: Vec<InsnSource>, borrowed: bool, shared_lock: bool) {
        for (u, reader) in self.units.iter_mut().zip(insns) {
            u.core.set_ooo(ooo::Ooo::new(&cfg.core, reader, borrowed));
        }
        if shared_lock {
            self.lock = Some(TicketLock::new(self.units.len()));
        }
    }
}

/// A built machine and the event streams it runs.
pub struct BuiltRun {
    /// The machine (public so a caller may look at it before [`Self::finish`]).
    pub sim: TimingSim,
    streams: Vec<EventStream>,
    /// The workload's name, for the statistics.
    name: String,
    seed: u64,
    instructions: u64,
    /// What the report must say about the core model the workload got.
    core_notes: Vec<String>,
}

impl BuiltRun {
    /// Run every core's stream to its end, or until `stop` is set; a
    /// stream that failed (a bad trace record, an address beyond the
    /// memory) or a warm-up the workload never finished is an error.
    pub fn run(&mut self, stop: &AtomicBool) -> Result<(), SimError> {
        self.sim.run_threads(&mut self.streams, stop)?;
        for s in &self.streams {
            s.finish().map_err(SimError::Invalid)?;
        }
        if let Some((ran, asked)) = self.sim.unfinished_warmup() {
            return Err(SimError::Invalid(format!(
                "the workload ended after {ran} instructions, within the warm-up of {asked} (--warmup-instructions, or a mix part's warmup=); no region of interest is left"
            )));
        }
        Ok(())
    }

    /// The statistics of the run, with what the workload's streams ask a
    /// report to say (thread 0's notes, then the other threads' own).
    pub fn finish(self) -> RunStats {
        let BuiltRun { sim, streams, name, seed, instructions, core_notes } = self;
        let exhausted = sim.ooo_exhausted();
        let mut s = sim.finish();
        let stream = &streams[0];
        s.workload_notes = stream.notes();
        for (t, other) in streams.iter().enumerate().skip(1) {
            let own = format!("thread {t}: ");
            s.workload_notes.extend(other.notes().into_iter().filter(|n| !stream.notes().contains(n)).map(|n| {
                if n.starts_with(&own) {
                    n
                } else {
                    format!("{own}{n}")
                }
            }));
        }
        s.workload_notes.extend(core_notes);
        if exhausted {
            s.workload_notes.push(format!(
                "the borrowed instruction stream (insns=) ended after {} instructions, so the run stopped there, short of the {instructions} asked for",
                s.roi.core.instructions
            ));
        }
        s.workload = name;
        s.seed = seed;
        s
    }
}

/// Convenience: simulate `instructions` of a workload.
pub fn simulate(cfg: &SimConfig, workload: &WorkloadKind, instructions: u64, seed: u64) -> Result<RunStats, String> {
    simulate_until(cfg, workload, instructions, seed, &AtomicBool::new(false)).map_err(|e| e.to_string())
}

/// [`simulate`], stopping early with [`SimError::Cancelled`] once `stop`
/// is set.
pub fn simulate_until(
    cfg: &SimConfig,
    workload: &WorkloadKind,
    instructions: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<RunStats, SimError> {
    simulate_after_warmup(cfg, workload, 0, instructions, seed, stop)
}

/// [`simulate_until`] after a warm-up of `warmup` instructions (0: none):
/// the warm-up runs through the whole model, the statistics cover the
/// `instructions` after it (ChampSim's `--warmup-instructions`).
pub fn simulate_after_warmup(
    cfg: &SimConfig,
    workload: &WorkloadKind,
    warmup: u64,
    instructions: u64,
    seed: u64,
    stop: &AtomicBool,
) -> Result<RunStats, SimError> {
    ResolvedRun::new(cfg, workload, warmup, instructions, seed)?.simulate(stop)
}
