//! A workload opened for one machine: everything a timed run reads about
//! its workload, read once, before the machine is built, so
//! that building the machine and simulating open no file and consult no
//! workload description.
//!
//! ```text
//!  WorkloadKind (a parsed name: suite programs found, presets expanded)
//!    + the machine's SimConfig (memory: the pool and placement; core.model)
//!    + seed, warm-up, instructions
//!    --WorkloadKind::open--> OpenedWorkload
//!        streams  one EventStream per thread: generator seeded, trace
//!                 reader open, partition cut, events placed
//!        insns    core.model = "ooo": each thread's instruction stream,
//!                 open (the file beside its trace, checked to be made
//!                 from the trace's bytes; a ChampSim trace's, derived)
//!        shared_lock, insns_borrowed: what the machine must know of it
//! ```

use super::{DataMode, EventStream, Placement, SyntheticParams, TraceSpec, WorkloadKind};
use crate::config::{CoreModel, SimConfig};
use crate::trace::champsim_insn;
use crate::trace::insn::{path_for, InsnReader};
use crate::trace::records::{InsnRecords, InsnSource, Records, Sources};
use crate::util::digest::FileDigest;
use std::path::{Path, PathBuf};

/// The instruction stream of one thread and the trace it was made from.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamSource {
    pub stream: PathBuf,
    pub trace: PathBuf,
    /// The trace's digest, when already known (a derived stream's).
    pub digest: Option<FileDigest>,
}

impl StreamSource {
    /// Open the stream, checking that it was made from the trace's bytes.
    pub fn open(&self) -> Result<InsnReader, String> {
        match &self.digest {
            Some(d) => InsnReader::open_bound(&self.stream, &self.trace, d),
            None => InsnReader::open_for(&self.stream, &self.trace),
        }
        .map_err(|e| e.to_string())
    }
}

/// Why a workload has no instruction stream for the `ooo` core.
#[derive(Clone, Debug, PartialEq)]
pub enum NoStream {
    /// A ChampSim trace whose records name no register and no branch: the
    /// interval core runs it, and the run's notes say why.
    NoFields(String),
    /// Anything else (a generated workload, a trace recorded without a
    /// stream or written over since, a damaged file): the run is refused.
    Refused(String),
}

impl std::fmt::Display for NoStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoStream::NoFields(m) | NoStream::Refused(m) => f.write_str(m),
        }
    }
}

/// A workload ready to run on one machine.
pub struct OpenedWorkload {
    /// The workload's name as reports give it ([`WorkloadKind::name`]).
    pub name: String,
    /// One stream per thread (core), each with its own warm-up and limit.
    pub streams: Vec<EventStream>,
    /// Under `core.model = "ooo"`, each thread's instruction stream, in
    /// thread order; empty under any other core model.
    pub insns: Vec<InsnSource>,
    /// The instruction streams are a synthetic profile's borrowed ones
    /// (`insns=`): the run ends where one runs out.
    pub insns_borrowed: bool,
    /// The threads' transactions take a ticket lock in turn (shared data,
    /// [`WorkloadKind::shared_lock`]).
    pub shared_lock: bool,
    /// What a report must say about the core model the workload got (a
    /// ChampSim trace's instruction stream, or why it has none).
    pub notes: Vec<String>,
}

impl WorkloadKind {
    /// Open this workload for a machine of configuration `cfg` (one core
    /// per thread already, [`SimConfig::with_cores_for`]): each thread's
    /// stream after a warm-up of `warmup` of its instructions and ending
    /// `instructions` after it, placed in the machine's memory; under
    /// `core.model = "ooo"` each thread's instruction stream as well.
    pub fn open(&self, cfg: &SimConfig, seed: u64, warmup: u64, instructions: u64) -> Result<OpenedWorkload, String> {
        let champsim = self.champsim_traces()?;
        let mut notes = Vec::new();
        let insns = match cfg.core.model {
            // A ChampSim trace without registers or branches gets the
            // interval core, and the report says why; the same rule holds
            // for every thread of a mix, and anything else without a
            // stream is refused, in a mix as alone.
            CoreModel::Ooo => match self.instruction_streams() {
                Err(NoStream::NoFields(why)) => {
                    notes.push(format!("the interval core ran it, not the ooo core asked for: {why}"));
                    Vec::new()
                }
                Err(NoStream::Refused(e)) => return Err(e),
                Ok(sources) => {
                    if !champsim.is_empty() {
                        notes.push(
                            "the ooo core scheduled the instruction stream derived from the ChampSim trace: register dependences from its register fields, branches (kind from the registers they read and write, direction from branch_taken) through the branch predictor; fetch reads L1I at the branches' ips, the instructions between two branches placed at 4-byte steps before the second (the derived stream keeps no other ip); no unit classes (every instruction but a load or store is an integer ALU operation)"
                                .into(),
                        );
                    }
                    if let Some((stream, insns)) = self.open_records(cfg, &sources, seed, warmup, instructions) {
                        return Ok(OpenedWorkload {
                            name: self.name(),
                            streams: vec![stream.with_placement(Placement::of(cfg))],
                            insns: vec![insns],
                            insns_borrowed: false,
                            shared_lock: self.shared_lock(),
                            notes,
                        });
                    }
                    sources.iter().map(|s| s.open().map(InsnSource::from)).collect::<Result<_, _>>()?
                }
            },
            _ => {
                if !champsim.is_empty() {
                    notes.push("the interval core ran it: the ChampSim trace's register and branch fields are not used (core.model = \"ooo\" uses them)".into());
                }
                Vec::new()
            }
        };
        // Each stream places its own events: a placement counts its
        // thread's transactions.
        let streams = self
            .thread_streams(seed, warmup, instructions, Placement::pool_bytes(cfg))?
            .into_iter()
            .map(|s| s.with_placement(Placement::of(cfg)))
            .collect();
        Ok(OpenedWorkload {
            name: self.name(),
            streams,
            insns,
            insns_borrowed: matches!(self, WorkloadKind::Synthetic(_)),
            shared_lock: self.shared_lock(),
            notes,
        })
    }

    /// A recorded program's events and instructions read from their
    /// derived records ([`crate::trace::records`]), derived now if they
    /// must be, when `SPMSIM_RECORDS=on` asks for them: they take about
    /// 40 bytes per instruction on disk, a hundred times the compressed
    /// trace and stream. None, and the run reads the trace and its stream,
    /// without it, for anything else than one trace, when the
    /// records cannot be derived or written (a note says why), or when
    /// opening them fails as opening the trace would (which then says so).
    fn open_records(
        &self,
        cfg: &SimConfig,
        sources: &[StreamSource],
        seed: u64,
        warmup: u64,
        instructions: u64,
    ) -> Option<(EventStream, InsnSource)> {
        let (WorkloadKind::Trace(t), [src]) = (self, sources) else { return None };
        if std::env::var_os("SPMSIM_RECORDS").is_none_or(|v| v != "on") {
            return None;
        }
        let format = t.effective_format().ok()?;
        let rec = match Records::open_or_derive(Sources { trace: &t.path, format, stream: &src.stream }) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("note: {}: no derived records ({e}); the run reads the trace and its instruction stream", t.path.display());
                return None;
            }
        };
        let capacity = Placement::pool_bytes(cfg);
        let events = t.open_records(&rec, seed, capacity).ok()??;
        let insns = InsnRecords::open(&rec).ok()?;
        Some((self.records_stream(events, warmup, instructions, capacity), InsnSource::Records(insns)))
    }

    /// The core model `core.model = "auto"` gives this workload, and the
    /// note that says which ran and why: the ooo core where every thread
    /// has an instruction stream (a recorded program's, or one derived
    /// from a ChampSim trace's registers and branches), the interval core
    /// otherwise. A generated workload, which never has one, gets no note.
    pub fn auto_core(&self) -> (CoreModel, Option<String>) {
        let unset = "core.model unset (\"auto\")";
        match self.instruction_streams() {
            Ok(_) => (
                CoreModel::Ooo,
                Some(format!("the ooo core ran it: {unset}, and the workload has its instruction stream (core.model = \"interval\" runs the interval core)")),
            ),
            Err(NoStream::NoFields(why)) => (CoreModel::Interval, Some(format!("the interval core ran it: {unset}, and {why}"))),
            Err(NoStream::Refused(_)) if self.reads_traces() => (
                CoreModel::Interval,
                Some(format!("the interval core ran it: {unset}, and the trace has no instruction stream beside it for the ooo core (`spmsim trace record` writes one; core.model = \"ooo\" names what is missing)")),
            ),
            Err(NoStream::Refused(_)) => (CoreModel::Interval, None),
        }
    }

    /// Whether any thread of this workload reads a trace file.
    fn reads_traces(&self) -> bool {
        match self {
            WorkloadKind::Trace(_) => true,
            WorkloadKind::Threads(t) => t.parts.iter().any(|p| matches!(p, WorkloadKind::Trace(_))),
            _ => false,
        }
    }

    /// The ChampSim traces this workload reads (one per thread of a mix).
    fn champsim_traces(&self) -> Result<Vec<&TraceSpec>, String> {
        let traces: Vec<&TraceSpec> = match self {
            WorkloadKind::Trace(t) => vec![t],
            WorkloadKind::Threads(t) if t.mode == DataMode::Partitioned => {
                t.parts.iter().filter_map(|p| if let WorkloadKind::Trace(t) = p { Some(t) } else { None }).collect()
            }
            _ => Vec::new(),
        };
        let mut out = Vec::new();
        for t in traces {
            if t.champsim_layout()?.is_some() {
                out.push(t);
            }
        }
        Ok(out)
    }

    /// The instruction stream the `ooo` core model schedules, which only
    /// a trace recorded by `spmsim trace record` has beside it, or which
    /// is derived from a ChampSim trace's records.
    pub fn instruction_stream(&self) -> Result<StreamSource, NoStream> {
        if let WorkloadKind::Synthetic(SyntheticParams { insns: Some(trace), .. }) = self {
            let p = path_for(Path::new(trace));
            if !p.exists() {
                return Err(NoStream::Refused(format!(
                    "synthetic workload: insns={trace}: no instruction stream {} beside it (a trace recorded by `spmsim trace record` has one)",
                    p.display()
                )));
            }
            return Ok(StreamSource { stream: p, trace: PathBuf::from(trace), digest: None });
        }
        let WorkloadKind::Trace(t) = self else {
            return Err(NoStream::Refused(format!(
                "core.model = \"ooo\" needs the instruction stream of a recorded program; the generated workload `{}` has none (use core.model = \"interval\", or give a synthetic profile the stream of a recorded trace with insns=TRACE)",
                self.name()
            )));
        };
        if let Some(layout) = t.champsim_layout().map_err(NoStream::Refused)? {
            let d = champsim_insn::derive(&t.path, layout).map_err(|e| NoStream::Refused(e.to_string()))?;
            return match d.summary.has_fields() {
                true => Ok(StreamSource { stream: d.stream, trace: t.path.clone(), digest: Some(d.source) }),
                false => Err(NoStream::NoFields(format!(
                    "the ChampSim trace {} carries no register or branch fields ({} records, none naming a register or a branch)",
                    t.path.display(),
                    d.summary.instructions
                ))),
            };
        }
        let p = path_for(&t.path);
        if !p.exists() {
            return Err(NoStream::Refused(format!(
                "core.model = \"ooo\" needs the instruction stream {} beside the trace {}; it is written by `spmsim trace record` (record the trace again, or use core.model = \"interval\")",
                p.display(),
                t.path.display()
            )));
        }
        Ok(StreamSource { stream: p, trace: t.path.clone(), digest: None })
    }

    /// The instruction stream of each thread, for `core.model = "ooo"`:
    /// one per program of a mix or list of traces. A thread refused is
    /// the mix's refusal, whatever the others; a ChampSim trace without
    /// fields sends the whole machine to the interval core, as alone.
    pub fn instruction_streams(&self) -> Result<Vec<StreamSource>, NoStream> {
        let parts = match self {
            WorkloadKind::Threads(t) if t.mode == DataMode::Partitioned => &t.parts,
            _ => return Ok(vec![self.instruction_stream()?]),
        };
        let mut sources = Vec::new();
        let mut no_fields = None;
        for (k, p) in parts.iter().enumerate() {
            match p.instruction_stream() {
                Ok(s) => sources.push(s),
                Err(NoStream::Refused(e)) => {
                    return Err(NoStream::Refused(format!(
                        "thread {k} of the mix ({}): {e}; under core.model = \"ooo\" every program of a mix needs its instruction stream, as alone",
                        p.name()
                    )))
                }
                Err(NoStream::NoFields(e)) => no_fields = no_fields.or(Some(format!("thread {k}: {e}"))),
            }
        }
        match no_fields {
            Some(why) => Err(NoStream::NoFields(format!("{why}; one core model runs every thread of a mix"))),
            None => Ok(sources),
        }
    }
}
