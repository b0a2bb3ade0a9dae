//! Reading the records: a section's blocks, each checked as it is read,
//! decoded into the events a run takes and the instructions its core
//! schedules.

use super::{checksum, op_of, u64_at, Records, Volatility, BLOCK_RECORDS, DERIVED_VALUE, EVENT_BYTES, HEAD, INSN_BYTES};
use super::{LOG, PIECE, SAME_INSTRUCTION};
use crate::trace::event::{Event, Op};
use crate::trace::events::derived_value;
use crate::trace::insn::Insn;
use crate::trace::vex::{BranchKind, FuClass};
use crate::trace::{Position, TraceError, TraceHeader};
use std::io::{Read, Seek};
use std::path::PathBuf;

/// One section of a file of records, a block at a time.
struct Blocks {
    path: PathBuf,
    file: std::io::BufReader<std::fs::File>,
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
        let file = std::io::BufReader::with_capacity(1 << 18, file);
        let buf = Vec::with_capacity(size * BLOCK_RECORDS + 16);
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
        self.buf.clear();
        self.buf.extend_from_slice(&count);
        self.buf.resize(8 + n * self.size + 8, 0);
        if let Err(e) = self.file.read_exact(&mut self.buf[8..]) {
            return Err(self.damaged(&format!("cannot be read ({e})")));
        }
        if checksum(&self.buf[..8 + n * self.size], self.block) != u64_at(&self.buf, 8 + n * self.size) {
            return Err(self.damaged("fails its check"));
        }
        self.at += self.buf.len() as u64;
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

/// The trace's events from its derived records, each block's at a time,
/// with what depends on the run applied: the volatile pieces, and the
/// values of stores the trace recorded none for (from the run's seed).
pub struct EventRecords {
    blocks: Blocks,
    header: TraceHeader,
    volatility: Volatility,
    seed: u64,
    /// Stores (pieces) so far.
    stores: u64,
    /// Stores given a derived value so far.
    pub derived_values: u64,
}

impl EventRecords {
    /// The events of `rec`, whose trace's header is `header`.
    pub fn open(rec: &Records, header: TraceHeader, volatility: Volatility, seed: u64) -> Result<EventRecords, TraceError> {
        let blocks = Blocks::open(rec, HEAD as u64, EVENT_BYTES, rec.head.events)?;
        Ok(EventRecords { blocks, header, volatility, seed, stores: 0, derived_values: 0 })
    }

    pub fn header(&self) -> &TraceHeader {
        &self.header
    }

    #[inline(always)]
    fn decode(&mut self, r: &[u8]) -> Result<Event, String> {
        let op = op_of(r[20]).ok_or_else(|| format!("unknown operation {}", r[20]))?;
        let flags = r[22];
        let mut e = Event {
            op,
            addr: u64_at(r, 0),
            size: r[21],
            value: u64_at(r, 8),
            log: flags & LOG != 0,
            gap: u32::from_le_bytes(r[16..20].try_into().expect("4 bytes")),
            same_instruction: flags & SAME_INSTRUCTION != 0,
            piece: flags & PIECE != 0,
            volatile: false,
            thread: 0,
        };
        if matches!(op, Op::Load | Op::Store) {
            e.volatile = self.volatility.of(flags);
            if op == Op::Store {
                if flags & DERIVED_VALUE != 0 {
                    self.derived_values += 1;
                    e.value = derived_value(self.seed, e.addr, self.stores);
                }
                self.stores += 1;
            }
        }
        Ok(e)
    }

    fn bad(&self, m: String) -> TraceError {
        TraceError::new(&self.blocks.path, Position::Unknown, m)
    }

    /// Push the rest of the current block's events (the next block's, if
    /// it is over): whole records of the trace; `Ok(false)` at the end.
    pub fn next_block(&mut self, out: &mut Vec<Event>) -> Result<bool, TraceError> {
        let n = self.blocks.records()?.len() / EVENT_BYTES;
        out.reserve(n);
        for k in 0..n {
            let r: [u8; EVENT_BYTES] = self.blocks.peek(k).expect("a record of the block").try_into().expect("a record");
            let e = self.decode(&r).map_err(|m| self.bad(m))?;
            out.push(e);
        }
        self.blocks.take(n);
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
        for k in 0..n {
            let r: [u8; EVENT_BYTES] = self.blocks.peek(k).expect("a record of the block").try_into().expect("a record");
            let e = self.decode(&r).map_err(|m| self.bad(m))?;
            out.push(e);
        }
        self.blocks.take(n);
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
        let rs = self.blocks.records()?;
        let n = (rs.len() / INSN_BYTES).min(max);
        out.reserve(n);
        let bad = |m: String| TraceError::new(&self.blocks.path, Position::Unknown, m);
        for r in self.blocks.buf[8 + self.blocks.pos * INSN_BYTES..].chunks_exact(INSN_BYTES).take(n) {
            let class = FuClass::from_u8(r[22]).ok_or_else(|| bad(format!("unknown unit class {}", r[22])))?;
            let branch = BranchKind::from_u8(r[25]).ok_or_else(|| bad(format!("unknown branch kind {}", r[25])))?;
            out.push(Insn {
                class,
                nsrc: r[23],
                srcs: [u16::from_le_bytes([r[16], r[17]]), u16::from_le_bytes([r[18], r[19]]), u16::from_le_bytes([r[20], r[21]])],
                addr_mask: r[24],
                branch,
                taken: r[26] != 0,
                pc: u64_at(r, 0),
                len: r[27],
                target: u64_at(r, 8),
            });
        }
        self.blocks.take(n);
        self.count += n as u64;
        Ok(())
    }
}
