//! Writing native traces: from another format (`spmsim trace convert`) or
//! from a built-in generator (`spmsim trace generate`).

use super::{open, AddressSpace, Format, NativeWriter, TraceHeader, TraceRecord};
use crate::workload::{Event, WorkloadKind};
use std::path::Path;

/// What a conversion wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    pub records: u64,
    pub instructions: u64,
}

/// Convert any supported trace into the native format, record by record;
/// the header keeps the source's format and description.
pub fn convert(input: &Path, format: Option<Format>, out: &Path) -> Result<Written, String> {
    if input == out {
        return Err(format!("trace convert: input and output are the same file {}", input.display()));
    }
    let mut r = open(input, format).map_err(|e| e.to_string())?;
    let mut h = r.header().clone();
    if h.source.is_empty() {
        h.source = format!("converted from {}", input.display());
    }
    let mut w = NativeWriter::create(out, &h).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut n = Written::default();
    while let Some(rec) = r.next_record().map_err(|e| e.to_string())? {
        w.write(&rec).map_err(|e| format!("{}: {e}", out.display()))?;
        n.records += 1;
        n.instructions += rec.instructions();
    }
    w.finish().map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(n)
}

/// The record an event of a generator stands for (physical address, value kept).
pub fn record_of(e: &Event) -> TraceRecord {
    let mem = e.op == crate::workload::Op::Store || e.op == crate::workload::Op::Load;
    TraceRecord {
        gap: e.gap,
        op: e.op,
        log: e.log,
        addr: if mem { e.addr } else { 0 },
        size: if mem { e.size as u32 } else { 0 },
        value: (e.op == crate::workload::Op::Store).then_some(e.value),
        same_instruction: e.same_instruction,
    }
}

/// Write `instructions` of a built-in workload as a native trace: the same
/// events a simulation of the workload with this seed would see.
pub fn generate(workload: &WorkloadKind, seed: u64, instructions: u64, out: &Path) -> Result<Written, String> {
    let mut h = TraceHeader::new("generator", AddressSpace::Physical, true);
    h.source = format!("spmsim generator {} seed {seed} instructions {instructions}", workload.name());
    let mut w = NativeWriter::create(out, &h).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut stream = workload.stream(seed, instructions, u64::MAX)?;
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
