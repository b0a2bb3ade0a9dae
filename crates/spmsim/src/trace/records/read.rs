//! Reading the records: a section's blocks, each checked as it is read,
//! decoded into the events a run takes and the instructions its core
//! schedules.

use super::{checksum, op_of, u64_at, Records, Volatility, BLOCK_RECORDS, DERIVED_VALUE, EVENT_BYTES, HEAD, INSN_BYTES};
use super::{LOG, PIECE, SAME_INSTRUCTION};
use crate::trace::event::{Event, Op};
use crate::trace::events::derived_value;
use crate::trace::insn::{Insn, MAX_DISTANCE};
use crate::trace::vex::{BranchKind, FuClass};
use crate::trace::{Position, TraceError, TraceHeader};
use std::io::{Read, Seek};
use std::path::PathBuf;

/// One section of a file of records, a block at a time.
struct Blocks {
    path: PathBuf,
    file: std::fs::File,
    /// Where the next block begins in the file.
    at: u64,
    size: usize,
    /// Records of the section not read yet.
    left: u64,
    /// The next block's index.
    block: u64,
    /// The current block: its count's 8 bytes, its records, its check.
    buf: Vec<u8>,
    /// Records of the block and the next one to take.
    len: usize,
    pos: usize,
}

impl Blocks {
    fn open(rec: &Records, start: u64, size: usize, records: u64) -> Result<Blocks, TraceError> {
        let mut file = std::fs::File::open(&rec.path).map_err(|e| TraceError::new(&rec.path, Position::Offset(0), e.to_string()))?;
        file.seek(std::io::SeekFrom::Start(start)).map_err(|e| TraceError::new(&rec.path, Position::Offset(start), e.to_string()))?;
        let buf = vec![0; 8 + size * BLOCK_RECORDS + 8];
        Ok(Blocks { path: rec.path.clone(), file, at: start, size, left: records, block: 0, buf, len: 0, pos: 0 })
    }

    /// The records of the current block not taken yet, the next block's
    /// once it is taken; none at the end of the section.
    #[inline]
    fn records(&mut self) -> Result<&[u8], TraceError> {
        if self.pos == self.len && self.left > 0 {
            self.read_block()?;
        }
        Ok(&self.buf[8 + self.pos * self.size..8 + self.len * self.size])
    }

    /// The record `k` after the next one to take, if the block has it.
    #[inline]
    fn peek(&self, k: usize) -> Option<&[u8]> {
        (self.pos + k < self.len).then(|| &self.buf[8 + (self.pos + k) * self.size..][..self.size])
    }

    #[inline]
    fn take(&mut self, n: usize) {
        self.pos += n;
    }

    #[cold]
    fn read_block(&mut self) -> Result<(), TraceError> {
        let mut count = [0u8; 8];
        if let Err(e) = self.file.read_exact(&mut count) {
            return Err(self.damaged(&format!("cannot be read ({e})")));
        }
        let n = u32::from_le_bytes(count[..4].try_into().expect("4 bytes")) as usize;
        if n == 0 || n > BLOCK_RECORDS || n as u64 > self.left {
            return Err(self.damaged(&format!("gives a count of {n} records")));
        }
        // The buffer keeps the largest block's length: a block is read
        // over the last one's bytes, not into cleared memory.
        let end = 8 + n * self.size + 8;
        self.buf[..8].copy_from_slice(&count);
        if let Err(e) = self.file.read_exact(&mut self.buf[8..end]) {
            return Err(self.damaged(&format!("cannot be read ({e})")));
        }
        if checksum(&self.buf[..8 + n * self.size], self.block) != u64_at(&self.buf, 8 + n * self.size) {
            return Err(self.damaged("fails its check"));
        }
        self.at += end as u64;
        self.left -= n as u64;
        self.block += 1;
        self.len = n;
        self.pos = 0;
        Ok(())
    }

    /// A block that cannot be used: the file is removed, so that the next
    /// run derives it again.
    fn damaged(&self, why: &str) -> TraceError {
        let removed = match std::fs::remove_file(&self.path) {
            Ok(()) => "it was removed, and the next run derives the records again".to_string(),
            Err(e) => format!("it could not be removed ({e}): delete it, and the next run derives the records again"),
        };
        TraceError::new(
            &self.path,
            Position::Offset(self.at),
            format!("block {} of the derived records {why} (damaged): {removed}", self.block),
        )
    }
}

/// What a run adds to the events of its records: the volatile pieces
/// (its `persistent=` policy), the values of stores the trace recorded
/// none for (from its seed, and the store's place among the stores).
struct RunSide {
    volatility: Volatility,
    seed: u64,
    /// Stores (pieces) so far.
    stores: u64,
    /// Stores given a derived value so far.
    derived_values: u64,
}

impl RunSide {
    /// The event of record `r`, and whether it is one (an access inside
    /// one block, a store of at most 8 bytes, a known operation).
    #[inline(always)]
    fn event(&mut self, r: &[u8; EVENT_BYTES]) -> (Event, bool) {
        let flags = r[22];
        let op = op_of(r[20]);
        let mut e = Event {
            op: op.unwrap_or(Op::Compute),
            addr: u64_at(r, 0),
            size: r[21],
            value: u64_at(r, 8),
            log: flags & LOG != 0,
            gap: u32::from_le_bytes([r[16], r[17], r[18], r[19]]),
            same_instruction: flags & SAME_INSTRUCTION != 0,
            piece: flags & PIECE != 0,
            volatile: false,
            thread: 0,
        };
        let mut ok = op.is_some();
        if matches!(e.op, Op::Load | Op::Store) {
            ok &= e.size > 0 && e.addr % 64 + e.size as u64 <= 64;
            e.volatile = self.volatility.of(flags);
            if e.op == Op::Store {
                ok &= e.size <= 8;
                if flags & DERIVED_VALUE != 0 {
                    self.derived_values += 1;
                    e.value = derived_value(self.seed, e.addr, self.stores);
                }
                self.stores += 1;
            }
        }
        (e, ok)
    }
}

/// The trace's events from its derived records, a block at a time, with
/// what depends on the run applied ([`RunSide`]).
pub struct EventRecords {
    blocks: Blocks,
    header: TraceHeader,
    run: RunSide,
}

impl EventRecords {
    /// The events of `rec`, whose trace's header is `header`.
    pub fn open(rec: &Records, header: TraceHeader, volatility: Volatility, seed: u64) -> Result<EventRecords, TraceError> {
        let blocks = Blocks::open(rec, HEAD as u64, EVENT_BYTES, rec.head.events)?;
        Ok(EventRecords { blocks, header, run: RunSide { volatility, seed, stores: 0, derived_values: 0 } })
    }

    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    /// Stores given a derived value so far.
    pub fn derived_values(&self) -> u64 {
        self.run.derived_values
    }

    /// Decode the next `n` records of the block onto `out`; on a record
    /// that is no event, the events before it and an error.
    fn decode(&mut self, n: usize, out: &mut Vec<Event>) -> Result<(), TraceError> {
        let from = 8 + self.blocks.pos * EVENT_BYTES;
        let start = out.len();
        let mut ok = true;
        out.reserve(n);
        for r in self.blocks.buf[from..from + n * EVENT_BYTES].chunks_exact(EVENT_BYTES) {
            let (e, good) = self.run.event(r.try_into().expect("a record"));
            ok &= good;
            out.push(e);
        }
        self.blocks.take(n);
        if ok {
            return Ok(());
        }
        let k = (0..n)
            .find(|&k| !RunSide { stores: 0, derived_values: 0, ..self.run }.event(&record(&self.blocks.buf, from, k)).1)
            .unwrap_or(0);
        out.truncate(start + k);
        let r = record(&self.blocks.buf, from, k);
        let m = format!(
            "record {k} of block {} is no event (operation {}, {} bytes at {:#x})",
            self.blocks.block - 1,
            r[20],
            r[21],
            u64_at(&r, 0)
        );
        Err(TraceError::new(&self.blocks.path, Position::Unknown, m))
    }

    /// Push the rest of the current block's events (the next block's, if
    /// it is over): whole records of the trace; `Ok(false)` at the end.
    pub fn next_block(&mut self, out: &mut Vec<Event>) -> Result<bool, TraceError> {
        let n = self.blocks.records()?.len() / EVENT_BYTES;
        self.decode(n, out)?;
        Ok(n > 0)
    }

    /// Push the events of the trace's next record (an access's pieces
    /// together, which one block holds), as
    /// [`crate::trace::RecordEvents::next_op`] does; `Ok(false)` at the end.
    pub fn next_op(&mut self, out: &mut Vec<Event>) -> Result<bool, TraceError> {
        if self.blocks.records()?.is_empty() {
            return Ok(false);
        }
        let mut n = 1;
        while self.blocks.peek(n).is_some_and(|r| r[22] & PIECE != 0) {
            n += 1;
        }
        self.decode(n, out)?;
        Ok(true)
    }

    /// The stores given a derived value among the events of the current
    /// block from its `k`-th on ([`Self::next_block`] handed them all):
    /// a reader of the trace itself would not have read their records yet.
    pub fn derived_from(&self, k: usize) -> u64 {
        (k..self.blocks.len)
            .filter_map(|j| self.blocks.buf.get(8 + j * EVENT_BYTES..8 + (j + 1) * EVENT_BYTES))
            .filter(|r| r[20] == 1 && r[22] & DERIVED_VALUE != 0)
            .count() as u64
    }
}

/// Record `k` of the records at `buf[from..]`.
fn record(buf: &[u8], from: usize, k: usize) -> [u8; EVENT_BYTES] {
    buf[from + k * EVENT_BYTES..][..EVENT_BYTES].try_into().expect("a record")
}

/// The instruction stream from its derived records, placed.
pub struct InsnRecords {
    rec: Records,
    blocks: Blocks,
    /// Instructions read so far.
    pub count: u64,
}

impl InsnRecords {
    pub fn open(rec: &Records) -> Result<InsnRecords, TraceError> {
        let start = HEAD as u64 + rec.head.event_bytes;
        let blocks = Blocks::open(rec, start, INSN_BYTES, rec.head.insns)?;
        Ok(InsnRecords { rec: rec.clone(), blocks, count: 0 })
    }

    /// The same instructions again, from the first.
    pub fn reopen(&self) -> Result<InsnRecords, TraceError> {
        InsnRecords::open(&self.rec)
    }

    /// Put up to `max` instructions onto `out`, none only at the end.
    pub fn next_placed_batch(&mut self, out: &mut Vec<Insn>, max: usize) -> Result<(), TraceError> {
        let n = (self.blocks.records()?.len() / INSN_BYTES).min(max);
        let from = 8 + self.blocks.pos * INSN_BYTES;
        let recs = &self.blocks.buf[from..from + n * INSN_BYTES];
        out.extend(recs.chunks_exact(INSN_BYTES).map(|r| decode_insn(r.try_into().expect("a record"))));
        self.blocks.take(n);
        self.count += n as u64;
        Ok(())
    }
}

/// The instruction of record `r`. The block's check keeps out damage; a
/// record made to be wrong gets the first class and no branch, and at
/// most three sources, each at most [`MAX_DISTANCE`] back.
#[inline(always)]
fn decode_insn(r: &[u8; INSN_BYTES]) -> Insn {
    Insn {
        class: FuClass::from_u8(r[22]).unwrap_or_default(),
        nsrc: r[23].min(3),
        srcs: [src(r, 16), src(r, 18), src(r, 20)],
        addr_mask: r[24],
        branch: BranchKind::from_u8(r[25]).unwrap_or_default(),
        taken: r[26] != 0,
        pc: u64::from_le_bytes(r[..8].try_into().expect("8 bytes")),
        len: r[27],
        target: u64::from_le_bytes(r[8..16].try_into().expect("8 bytes")),
    }
}

#[inline(always)]
fn src(r: &[u8; INSN_BYTES], at: usize) -> u16 {
    u16::from_le_bytes([r[at], r[at + 1]]).min(MAX_DISTANCE as u16)
}
