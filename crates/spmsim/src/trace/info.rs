//! `spmsim trace info`: what a trace holds, read in one streaming pass.

use super::event::Op;
use super::{RecordReader, TraceError, TraceHeader};
use rustc_hash::FxHashSet;
use serde::Serialize;

#[derive(Clone, Debug, Default, Serialize)]
pub struct TraceInfo {
    pub format: String,
    pub header: Option<TraceHeader>,
    pub records: u64,
    /// Every instruction, those without a memory access included.
    pub instructions: u64,
    /// Load records: one per load operand of an instruction, whatever its
    /// size (a run's `roi.loads` counts 64 B block pieces instead).
    pub loads: u64,
    /// Store records, log-region stores included (a run's `roi.stores`
    /// counts block stores that persisted).
    pub stores: u64,
    pub log_stores: u64,
    pub fences: u64,
    pub epochs: u64,
    pub transactions: u64,
    pub bytes_loaded: u64,
    pub bytes_stored: u64,
    /// Distinct 64 B blocks touched, in bytes.
    pub footprint_bytes: u64,
    /// Distinct 64 B blocks written, in bytes.
    pub written_footprint_bytes: u64,
    /// Stores over loads plus stores.
    pub write_fraction: f64,
    /// Share of loads and stores inside the persistent ranges (1 when the
    /// trace declares none: all of memory is persistent).
    pub persistent_share: f64,
    /// Stores inside the recorded stack range (what `persistent=heap`
    /// leaves volatile); absent when the trace records no stack range.
    pub stack_stores: Option<u64>,
    /// Memory operations per 1000 instructions.
    pub memory_ops_pti: f64,
    pub stores_pti: f64,
    /// `recorded` if stores carry their values, else `derived`: the
    /// simulator makes up a deterministic value from the seed.
    pub values: String,
    /// The instruction stream beside the trace, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instruction_stream: Option<super::insn::StreamSummary>,
    /// Micro-ops as gem5's x86 decoder would split the instructions (an
    /// estimate from the stream, [`super::uops`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub micro_ops: Option<super::uops::MicroOps>,
}

pub fn scan(format: &str, r: &mut dyn RecordReader) -> Result<TraceInfo, TraceError> {
    let header = r.header().clone();
    let mut i =
        TraceInfo { format: format.into(), values: if header.values { "recorded".into() } else { "derived".into() }, ..Default::default() };
    let mut blocks = FxHashSet::default();
    let mut written = FxHashSet::default();
    let mut persistent = 0u64;
    let mut stack_stores = 0u64;
    let stacks = header.stacks();
    while let Some(rec) = r.next_record()? {
        i.records += 1;
        i.instructions += rec.instructions();
        match rec.op {
            Op::Load => {
                i.loads += 1;
                i.bytes_loaded += rec.size as u64;
            }
            Op::Store => {
                i.stores += 1;
                i.log_stores += rec.log as u64;
                i.bytes_stored += rec.size as u64;
            }
            Op::Fence => i.fences += 1,
            Op::Epoch => i.epochs += 1,
            Op::TxBegin => i.transactions += 1,
            Op::TxCommit | Op::Compute => {}
        }
        if rec.is_memory() {
            persistent += header.is_persistent(rec.addr) as u64;
            stack_stores += (rec.op == Op::Store && stacks.iter().any(|&(a, b)| (a..b).contains(&rec.addr))) as u64;
            let last = rec.addr.saturating_add(rec.size.max(1) as u64 - 1);
            for b in rec.addr / 64..=last / 64 {
                blocks.insert(b);
                if rec.op == Op::Store {
                    written.insert(b);
                }
            }
        }
    }
    let mem = i.loads + i.stores;
    i.footprint_bytes = blocks.len() as u64 * 64;
    i.written_footprint_bytes = written.len() as u64 * 64;
    i.write_fraction = if mem > 0 { i.stores as f64 / mem as f64 } else { 0.0 };
    i.persistent_share = if mem > 0 { persistent as f64 / mem as f64 } else { 0.0 };
    i.stack_stores = header.stack_range.map(|_| stack_stores);
    let per_k = |n: u64| if i.instructions > 0 { n as f64 * 1000.0 / i.instructions as f64 } else { 0.0 };
    i.memory_ops_pti = per_k(mem);
    i.stores_pti = per_k(i.stores);
    i.header = Some(header);
    Ok(i)
}
