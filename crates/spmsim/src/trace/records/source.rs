//! Where the `ooo` core takes its instructions from: the instruction
//! stream itself, or its derived records.

use super::InsnRecords;
use crate::trace::insn::{Insn, InsnReader};
use crate::trace::TraceError;

/// The instructions one core schedules.
pub enum InsnSource {
    /// Decoded from the stream (`TRACE.insn`), placed as they are read.
    Stream(InsnReader),
    /// Read from the derived records, placed when they were derived.
    Records(InsnRecords),
}

impl From<InsnReader> for InsnSource {
    fn from(r: InsnReader) -> Self {
        InsnSource::Stream(r)
    }
}

impl InsnSource {
    /// About `max` more instructions onto `out`, each at its address;
    /// none only at the end. On a fault, those read before it.
    #[inline]
    pub fn next_placed_batch(&mut self, out: &mut Vec<Insn>, max: usize) -> Result<(), TraceError> {
        match self {
            InsnSource::Stream(r) => r.next_placed_batch(out, max),
            InsnSource::Records(r) => r.next_placed_batch(out, max),
        }
    }

    /// The same instructions again, from the first.
    pub fn reopen(&self) -> Result<InsnSource, TraceError> {
        Ok(match self {
            InsnSource::Stream(r) => InsnSource::Stream(r.reopen()?),
            InsnSource::Records(r) => InsnSource::Records(r.reopen()?),
        })
    }

    /// Instructions read so far.
    pub fn count(&self) -> u64 {
        match self {
            InsnSource::Stream(r) => r.count,
            InsnSource::Records(r) => r.count,
        }
    }
}
