//! Writing native traces: from another format (`spmsim trace convert`) or
//! from a built-in generator's events (`spmsim trace generate`, through
//! [`crate::workload::WorkloadKind::write_trace`], which owns the generators).

use super::event::{Event, Op};
use super::{open, Format, NativeWriter, TraceRecord};
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
    super::champsim_write::check_output(input, out)?;
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
    let mem = e.op == Op::Store || e.op == Op::Load;
    TraceRecord {
        gap: e.gap,
        op: e.op,
        log: e.log,
        addr: if mem { e.addr } else { 0 },
        size: if mem { e.size as u32 } else { 0 },
        value: (e.op == Op::Store).then_some(e.value),
        same_instruction: e.same_instruction,
    }
}
