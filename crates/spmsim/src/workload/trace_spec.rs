//! A trace file as a workload: which file, in which format, under which
//! name, and which of its memory is persistent.
//!
//! ```text
//!  trace:PATH[#format=NAME][#persistent=trace|all|heap|none]  -> TraceSpec
//!  suite:NAME[#persistent=..]  -> TraceSpec { path: the cached trace, label: suite:NAME }
//!  open: trace::open (format by magic bytes unless named)
//!        -> RecordEvents, volatile where the policy says:
//!             trace  outside the header's persistent ranges (none listed: nowhere)
//!             all    nowhere        heap  inside the recorded stack
//!             none   everywhere
//! ```

use super::parse::split_trace_options;
use crate::trace::events::VolatileMemory;
use crate::trace::records::{EventRecords, Records, Volatility};
use crate::trace::{Format, RecordEvents, TraceHeader};
use serde::Serialize;
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceSpec {
    pub path: PathBuf,
    pub format: Option<Format>,
    /// The name to report instead of the path (`suite:gcc`).
    pub label: Option<String>,
    /// Which of the trace's memory is persistent.
    pub persistent: Persistent,
}

/// Which memory of a recorded program is persistent: stores
/// elsewhere are volatile and take the ordinary write-back path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Persistent {
    /// What the trace header says (`persistent_ranges`; none listed: all).
    #[default]
    Trace,
    /// Every store, the stack's included (the model before a recorder knew the stack).
    All,
    /// Everything but the program's stack (heap and globals), from the
    /// stack range the recorder wrote into the trace header.
    Heap,
    /// Nothing: a program of non-persistent memory (Triad-NVM's SPEC
    /// programs), every store volatile.
    None,
}

impl Persistent {
    pub(super) fn parse(s: &str) -> Result<Self, String> {
        match s {
            "trace" => Ok(Persistent::Trace),
            "all" => Ok(Persistent::All),
            "heap" => Ok(Persistent::Heap),
            "none" => Ok(Persistent::None),
            other => Err(format!("trace workload: unknown persistent=`{other}`; known: trace, all, heap, none")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Persistent::Trace => "trace",
            Persistent::All => "all",
            Persistent::Heap => "heap",
            Persistent::None => "none",
        }
    }
}

impl TraceSpec {
    /// The record layout of a ChampSim trace (by `#format=`, else by its
    /// first records); None for any other format.
    pub fn champsim_layout(&self) -> Result<Option<crate::trace::champsim::Layout>, String> {
        use crate::trace::{champsim, Format};
        let format = match self.format {
            Some(f) => f,
            None => crate::trace::detect(&self.path).map_err(|e| e.to_string())?,
        };
        Ok(match format {
            Format::Champsim => Some(champsim::INPUT_INSTR),
            Format::ChampsimCloudsuite => Some(champsim::CLOUDSUITE_INSTR),
            _ => None,
        })
    }

    /// `PATH[#format=NAME][#persistent=trace|all|heap|none]`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let (path, options) = split_trace_options(s);
        let mut spec = TraceSpec { path: PathBuf::from(path), format: None, label: None, persistent: Persistent::Trace };
        for (k, v) in options {
            match k {
                "format" => spec.format = Some(Format::parse(v)?),
                "persistent" => spec.persistent = Persistent::parse(v)?,
                other => return Err(format!("trace workload: unknown option `#{other}=`; known: #format=, #persistent=")),
            }
        }
        if path.is_empty() {
            return Err("trace workload: no path given (trace:PATH)".into());
        }
        Ok(spec)
    }
    pub fn name(&self) -> String {
        let mut n = match (&self.label, self.format) {
            (Some(l), _) => l.clone(),
            (None, Some(f)) => format!("trace:{}#format={}", self.path.display(), f.name()),
            (None, None) => format!("trace:{}", self.path.display()),
        };
        if self.persistent != Persistent::Trace {
            n.push_str(&format!("#persistent={}", self.persistent.name()));
        }
        n
    }
    /// Which accesses of the trace of header `h` are volatile under this
    /// spec's `persistent=` policy.
    fn volatility(&self, h: &TraceHeader) -> Result<Volatility, String> {
        Ok(match self.persistent {
            Persistent::All => Volatility::Never,
            // Outside no range: everywhere.
            Persistent::None => Volatility::Always,
            Persistent::Trace if h.persistent_ranges.is_empty() => Volatility::Never,
            Persistent::Trace => Volatility::OutsideRanges,
            Persistent::Heap => match h.stack_range {
                Some(_) => Volatility::InsideStack,
                None => {
                    return Err(format!(
                        "trace {}: persistent=heap needs the program's stack range, which this trace's header does not give (record it \
                         again with this spmsim: `spmsim suite record` or `spmsim trace record`)",
                        self.path.display()
                    ))
                }
            },
        })
    }

    pub(super) fn open(&self, seed: u64, capacity_bytes: u64) -> Result<RecordEvents, String> {
        let r = crate::trace::open(&self.path, self.format).map_err(|e| e.to_string())?;
        let h = r.header();
        let volatile = match self.volatility(h)? {
            Volatility::Never => VolatileMemory::None,
            Volatility::Always => VolatileMemory::Outside(Vec::new()),
            Volatility::OutsideRanges => VolatileMemory::Outside(h.persistent_ranges.clone()),
            Volatility::InsideStack => VolatileMemory::Inside(h.stacks()),
        };
        Ok(RecordEvents::new(&self.path, r, seed, capacity_bytes).with_volatile(volatile))
    }

    /// The trace's format: the one named, else the one its bytes show.
    pub(super) fn effective_format(&self) -> Result<Format, String> {
        self.format.map_or_else(|| crate::trace::detect(&self.path).map_err(|e| e.to_string()), Ok)
    }

    /// The events of the derived records `rec` of this trace, for a run
    /// of this seed on a memory of `capacity_bytes`; None if a piece lies
    /// beyond it (the trace's own reader reports where).
    pub(super) fn open_records(&self, rec: &Records, seed: u64, capacity_bytes: u64) -> Result<Option<EventRecords>, String> {
        if rec.head.max_end > capacity_bytes {
            return Ok(None);
        }
        let header = crate::trace::open(&self.path, self.format).map_err(|e| e.to_string())?.header().clone();
        let v = self.volatility(&header)?;
        EventRecords::open(rec, header, v, seed).map(Some).map_err(|e| e.to_string())
    }
}
