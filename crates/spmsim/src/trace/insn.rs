//! The instruction stream beside a recorded trace (`TRACE.insn`): one
//! entry per architectural instruction of the trace, in order, with what
//! the out-of-order core model needs: its functional-unit
//! class, how far back the instructions that produce its source registers
//! are, and, for a branch, its kind, address, outcome and target.
//!
//! ```text
//!  file:  zstd( "SPMSIMIS" version:u8 source:[u8; 32]  entry*  end )
//!         the head is a frame of its own, one uncompressed block (50
//!         bytes), so the source's digest is written in place last
//!  source: SHA-256 of the bytes of the trace the stream was made from
//!  entry: b0 = class:4 | sources:2 << 4 | taken << 6 | branch << 7
//!         [kind:u8]                              when branch
//!         varint(distance << 1 | address)        per source (1..=1023 back)
//!         varint(zigzag(pc - previous branch pc)) when branch
//!         [len:u8]                               calls (the return address)
//!         varint(zigzag(target - pc))            indirect branches and returns
//!  end:   0x0F varint(folded)                    lackey lines folded into rep instructions
//! ```
//! Distances count architectural instructions (a folded `rep` is one), so
//! entry k belongs to the k-th instruction the trace's gaps and records
//! count. A source written before the recording began has no producer.
//!
//! A stream is used only with the trace it was made from:
//! [`InsnReader::open_for`] compares the digest the stream records with
//! the trace's bytes, and a stream of another trace (the trace written
//! over after it was recorded) or of an older format version, which
//! records no digest, is an error naming both files.

use super::compress;
use super::native::{put_varint, unzigzag, zigzag};
use super::placement::{Placement, HOLD};
use super::vex::{BranchKind, FuClass, RegSet, StaticInsn};
use super::{Position, TraceError};
use crate::util::digest::{file_digest, short_hex, FileDigest};
use rustc_hash::FxHashMap;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"SPMSIMIS";
/// The first byte of the trailer (a class no entry has).
pub(crate) const END: u8 = 0x0F;
/// The format version: 2 records the digest of the source trace, 1 did not.
pub const VERSION: u8 = 2;
/// Decompressed bytes before the first entry: magic, version, source digest.
const HEAD: usize = 8 + 1 + 32;
/// The zstd frame header and block header before the head's bytes.
const HEAD_FRAME_PREFIX: usize = 9;
/// Where in the file the source digest is.
const DIGEST_AT: u64 = (HEAD_FRAME_PREFIX + 9) as u64;

/// The head as a zstd frame of one raw (uncompressed) block, whose size
/// does not depend on the digest (RFC 8878 section 3.1.1: frame header
/// descriptor 0x20, a single segment with a one-byte content size; block
/// header: last block, raw, `HEAD` bytes).
fn head_frame(source: &FileDigest) -> Vec<u8> {
    let mut f = vec![0x28, 0xB5, 0x2F, 0xFD, 0x20, HEAD as u8];
    f.extend_from_slice(&(1u32 | (HEAD as u32) << 3).to_le_bytes()[..3]);
    f.extend_from_slice(MAGIC);
    f.push(VERSION);
    f.extend_from_slice(source);
    debug_assert_eq!(f.len(), HEAD_FRAME_PREFIX + HEAD);
    f
}
/// Producers further back than this are outside any reorder buffer the
/// model allows and so complete before their consumer dispatches.
pub const MAX_DISTANCE: u32 = 1023;
pub const MAX_SOURCES: usize = 3;

/// The instruction stream of the trace at `trace`.
pub fn path_for(trace: &Path) -> PathBuf {
    let mut p = trace.as_os_str().to_owned();
    p.push(".insn");
    PathBuf::from(p)
}

/// Remove the instruction stream beside the trace at `trace`, and the
/// records derived from them, if there are: called when a trace is
/// written without a stream, so that no stream of an earlier trace of
/// that name stays beside it.
pub fn remove_stale(trace: &Path) -> std::io::Result<()> {
    let p = path_for(trace);
    for (f, what) in [(super::records::path_for(&p), "derived records"), (p, "instruction stream")] {
        match std::fs::remove_file(&f) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(std::io::Error::new(e.kind(), format!("cannot remove the stale {what} {}: {e}", f.display())))
            }
            _ => {}
        }
    }
    Ok(())
}

/// One dynamic instruction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Insn {
    pub class: FuClass,
    pub nsrc: u8,
    /// Distances back to the producers of its sources.
    pub srcs: [u16; MAX_SOURCES],
    /// Bit k: source k feeds a memory address.
    pub addr_mask: u8,
    pub branch: BranchKind,
    pub taken: bool,
    pub pc: u64,
    pub len: u8,
    /// Where it went (indirect branches and returns).
    pub target: u64,
}

/// Writes an instruction stream atomically (it appears complete or not at
/// all), bound on [`InsnWriter::finish`] to the trace it was made from.
pub struct InsnWriter {
    enc: zstd::stream::write::Encoder<'static, std::io::BufWriter<std::fs::File>>,
    pending: crate::util::output::PendingFile,
    buf: Vec<u8>,
    prev_pc: u64,
    pub count: u64,
}

impl InsnWriter {
    pub fn create(path: &Path) -> std::io::Result<InsnWriter> {
        let (pending, f) = crate::util::output::PendingFile::create(path).map_err(|e| std::io::Error::other(e.message))?;
        let mut out = std::io::BufWriter::new(f);
        // The digest is not known yet: zeros, written over by `finish`.
        out.write_all(&head_frame(&[0; 32]))?;
        let mut enc = zstd::stream::write::Encoder::new(out, 3)?;
        enc.include_checksum(true)?;
        Ok(InsnWriter { enc, pending, buf: Vec::with_capacity(1 << 16), prev_pc: 0, count: 0 })
    }

    pub fn write(&mut self, i: &Insn) -> std::io::Result<()> {
        let b = &mut self.buf;
        let is_branch = i.branch != BranchKind::None;
        b.push(i.class as u8 | i.nsrc << 4 | (i.taken as u8) << 6 | (is_branch as u8) << 7);
        if is_branch {
            b.push(i.branch as u8);
        }
        for k in 0..i.nsrc as usize {
            put_varint(b, (i.srcs[k] as u64) << 1 | (i.addr_mask >> k & 1) as u64);
        }
        if is_branch {
            put_varint(b, zigzag(i.pc.wrapping_sub(self.prev_pc) as i64));
            self.prev_pc = i.pc;
            if i.branch.is_call() {
                b.push(i.len);
            }
            if i.branch.is_indirect() {
                put_varint(b, zigzag(i.target.wrapping_sub(i.pc) as i64));
            }
        }
        self.count += 1;
        if b.len() >= 1 << 15 {
            self.enc.write_all(b)?;
            b.clear();
        }
        Ok(())
    }

    /// Close the stream with its trailer (`folded` lackey instruction
    /// lines were folded into the `rep` instructions they iterate), record
    /// `source`, the digest of the trace's bytes ([`file_digest`]), and
    /// move the file into place.
    pub fn finish(mut self, folded: u64, source: &FileDigest) -> std::io::Result<u64> {
        self.buf.push(END);
        put_varint(&mut self.buf, folded);
        self.enc.write_all(&self.buf)?;
        let w = self.enc.finish()?;
        let mut f = w.into_inner().map_err(|e| e.into_error())?;
        f.seek(std::io::SeekFrom::Start(DIGEST_AT))?;
        f.write_all(source)?;
        f.sync_all()?;
        self.pending.publish().map_err(|e| std::io::Error::other(e.message))?;
        Ok(self.count)
    }
}

/// Reads an instruction stream, one entry at a time, decoding from its
/// own buffer of the decompressed bytes (an entry is at most
/// [`MAX_ENTRY`] bytes, so one refill before an entry suffices).
pub struct InsnReader {
    path: PathBuf,
    s: compress::Stream,
    buf: Vec<u8>,
    pos: usize,
    /// Decompressed bytes before `buf[0]`.
    consumed: u64,
    eof: bool,
    prev_pc: u64,
    /// For [`InsnReader::next_placed_batch`]: the instructions decoded
    /// after the last branch, not placed yet, and the placing rule's state.
    unplaced: Vec<Insn>,
    placement: Placement,
    pub count: u64,
    /// From the trailer, once read.
    pub folded: Option<u64>,
    /// The digest of the trace the stream was made from.
    source: FileDigest,
}

/// The longest entry: flags, kind, three 2-byte sources, a 10-byte pc
/// delta, the length and a 10-byte target delta.
const MAX_ENTRY: usize = 32;

impl InsnReader {
    /// Open the stream at `path` whatever trace it was made from: for a
    /// stream with a trace, [`InsnReader::open_for`].
    pub fn open(path: &Path) -> Result<InsnReader, TraceError> {
        let mut s = compress::open(path)?;
        let mut head = [0u8; HEAD];
        let ok = compress::read_record(path, &mut s, &mut head[..9])?;
        if !ok || &head[..8] != MAGIC {
            return Err(TraceError::new(path, Position::Offset(0), "not an spmsim instruction stream (no SPMSIMIS magic)"));
        }
        match head[8] {
            VERSION => {}
            v if v < VERSION => {
                return Err(TraceError::new(
                    path,
                    Position::Offset(8),
                    format!(
                        "an instruction stream of the older format version {v} (this spmsim reads {VERSION}), which does not record the trace it was made from: record the trace again (`spmsim trace record`; `spmsim suite record` for a suite program)"
                    ),
                ))
            }
            v => {
                return Err(TraceError::new(
                    path,
                    Position::Offset(8),
                    format!("instruction stream format version {v}, newer than this spmsim reads ({VERSION}): use the spmsim that wrote it"),
                ))
            }
        }
        if !compress::read_record(path, &mut s, &mut head[9..])? {
            return Err(TraceError::new(path, Position::Offset(9), "the stream ends inside its head (cut short?)"));
        }
        Ok(InsnReader {
            path: path.to_path_buf(),
            s,
            buf: Vec::with_capacity(1 << 16),
            pos: 0,
            consumed: HEAD as u64,
            eof: false,
            prev_pc: 0,
            unplaced: Vec::new(),
            placement: Placement::default(),
            count: 0,
            folded: None,
            source: head[9..].try_into().expect("32 bytes"),
        })
    }

    /// Open `stream`, the instruction stream of the trace at `trace`,
    /// after checking that it was made from the trace's present bytes.
    pub fn open_for(stream: &Path, trace: &Path) -> Result<InsnReader, TraceError> {
        let digest = file_digest(trace).map_err(TraceError::from)?;
        InsnReader::open_bound(stream, trace, &digest)
    }

    /// [`InsnReader::open_for`] with the trace's digest already known.
    pub fn open_bound(stream: &Path, trace: &Path, digest: &FileDigest) -> Result<InsnReader, TraceError> {
        let r = InsnReader::open(stream)?;
        if &r.source != digest {
            return Err(TraceError::new(
                stream,
                Position::Offset(9),
                format!(
                    "this instruction stream was made from other contents of the trace {} than the file holds now (trace digest {} recorded in the stream, {} of the file): the trace was written over after the stream was recorded. Record the trace again (`spmsim trace record` writes both), or delete the stream",
                    trace.display(),
                    short_hex(&r.source),
                    short_hex(digest)
                ),
            ));
        }
        Ok(r)
    }

    /// The digest of the trace the stream was made from.
    pub fn source(&self) -> &FileDigest {
        &self.source
    }

    /// The same stream again, from its first instruction (the same file,
    /// still made from the same trace).
    pub fn reopen(&self) -> Result<InsnReader, TraceError> {
        let r = InsnReader::open(&self.path)?;
        if r.source != self.source {
            return Err(TraceError::new(&self.path, Position::Offset(9), "the instruction stream was replaced during the run"));
        }
        Ok(r)
    }

    fn err(&self, m: &str) -> TraceError {
        TraceError::new(&self.path, Position::Offset(self.consumed + self.pos as u64), format!("instruction {}: {m}", self.count))
    }

    /// Make at least [`MAX_ENTRY`] bytes available, unless the stream ends first.
    #[inline(always)]
    fn fill(&mut self) -> Result<(), TraceError> {
        if self.eof || self.buf.len() - self.pos >= MAX_ENTRY {
            return Ok(());
        }
        self.refill()
    }

    #[cold]
    fn refill(&mut self) -> Result<(), TraceError> {
        self.consumed += self.pos as u64;
        self.buf.drain(..self.pos);
        self.pos = 0;
        while self.buf.len() < MAX_ENTRY && !self.eof {
            let have = self.buf.len();
            self.buf.resize(have + (1 << 16), 0);
            let n = loop {
                match self.s.read(&mut self.buf[have..]) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        self.buf.truncate(have);
                        return Err(self.err(&format!("read error (damaged compressed data?): {e}")));
                    }
                }
            };
            self.buf.truncate(have + n);
            self.eof = n == 0;
        }
        Ok(())
    }

    /// What ended an entry's decoding: the trailer (its count of folded
    /// lines is read, and the stream is over) or a fault in the stream.
    #[cold]
    fn stopped(&mut self, f: Fault) -> Result<(), TraceError> {
        if !matches!(f, Fault::End) {
            return Err(self.err(&f.to_string()));
        }
        let mut p = self.pos;
        let folded = varint_at(&self.buf, &mut p);
        self.pos = p;
        self.folded = Some(folded.map_err(|f| self.err(&f.to_string()))?);
        Ok(())
    }

    /// Decode up to `max` instructions onto `out`, fewer at the end of
    /// the stream. The instructions decoded before a fault stay in `out`.
    pub fn next_batch(&mut self, out: &mut Vec<Insn>, max: usize) -> Result<(), TraceError> {
        out.reserve(max);
        while out.len() < max && self.folded.is_none() {
            self.fill()?;
            // After the fill, entries decode without another one while a
            // whole entry fits in the bytes at hand.
            let (buf, mut p, mut pc) = (&self.buf, self.pos, self.prev_pc);
            let whole = buf.len().saturating_sub(MAX_ENTRY);
            let before = out.len();
            let fault = loop {
                match decode(buf, &mut p, &mut pc) {
                    Ok(i) => out.push(i),
                    Err(f) => break Some(f),
                }
                if out.len() >= max || p > whole {
                    break None;
                }
            };
            self.pos = p;
            self.prev_pc = pc;
            self.count += (out.len() - before) as u64;
            if let Some(f) = fault {
                self.stopped(f)?;
            }
        }
        Ok(())
    }

    /// [`Self::next_batch`] with every instruction at an address: the
    /// stream keeps branches' pcs only, and the others are placed by the
    /// rule of [`super::placement`], so the instructions after the last
    /// branch decoded wait (up to `HOLD` of them) for the branch that ends
    /// them. Puts about `max` instructions onto `out`, none only at the
    /// end of the stream; on a fault, those decoded before it, placed.
    pub fn next_placed_batch(&mut self, out: &mut Vec<Insn>, max: usize) -> Result<(), TraceError> {
        let from = out.len();
        let mut run = from;
        out.append(&mut self.unplaced);
        loop {
            let scan = out.len();
            let read = self.next_batch(out, scan + max.max(1));
            for k in scan..out.len() {
                if out[k].branch != BranchKind::None {
                    self.placement.place(&mut out[run..=k], true);
                    run = k + 1;
                }
            }
            if read.is_err() || self.folded.is_some() || out.len() - run >= HOLD {
                self.placement.place(&mut out[run..], false);
                return read;
            }
            if run > from {
                // The run after the last branch waits for its end.
                self.unplaced = out.split_off(run);
                return Ok(());
            }
        }
    }

    /// The next instruction; `None` at the end of the stream.
    pub fn next_insn(&mut self) -> Result<Option<Insn>, TraceError> {
        if self.folded.is_some() {
            return Ok(None);
        }
        self.fill()?;
        let mut p = self.pos;
        let decoded = decode(&self.buf, &mut p, &mut self.prev_pc);
        self.pos = p;
        match decoded {
            Ok(i) => {
                self.count += 1;
                Ok(Some(i))
            }
            Err(f) => self.stopped(f).map(|()| None),
        }
    }
}

/// Why an entry did not decode.
enum Fault {
    /// The trailer's first byte: not an entry, the end of the stream.
    End,
    NoTrailer,
    Short,
    LongVarint,
    Class(u8),
    Kind(u8),
    Distance(u64),
}

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fault::End => write!(f, "the trailer"),
            Fault::NoTrailer => write!(f, "the stream ends without its trailer (cut short?)"),
            Fault::Short => write!(f, "the stream ends inside an entry"),
            Fault::LongVarint => write!(f, "a varint longer than 64 bits"),
            Fault::Class(c) => write!(f, "unknown unit class {c}"),
            Fault::Kind(k) => write!(f, "unknown branch kind {k}"),
            Fault::Distance(d) => write!(f, "source distance {d} outside 1..={MAX_DISTANCE}"),
        }
    }
}

#[inline(always)]
fn byte_at(buf: &[u8], p: &mut usize) -> Result<u8, Fault> {
    let b = *buf.get(*p).ok_or(Fault::Short)?;
    *p += 1;
    Ok(b)
}

#[inline(always)]
fn varint_at(buf: &[u8], p: &mut usize) -> Result<u64, Fault> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let b = byte_at(buf, p)?;
        v |= ((b & 0x7F) as u64) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(Fault::LongVarint)
}

/// Decode the entry at `buf[*p..]`, moving `*p` past what it read (to
/// the fault's place on a fault); `prev_pc` is the last branch's address.
#[inline(always)]
fn decode(buf: &[u8], p: &mut usize, prev_pc: &mut u64) -> Result<Insn, Fault> {
    let b0 = *buf.get(*p).ok_or(Fault::NoTrailer)?;
    *p += 1;
    if b0 == END {
        return Err(Fault::End);
    }
    let class = FuClass::from_u8(b0 & 0xF).ok_or(Fault::Class(b0 & 0xF))?;
    let mut i = Insn { class, nsrc: (b0 >> 4) & 3, taken: b0 & 0x40 != 0, ..Insn::default() };
    if b0 & 0x80 != 0 {
        let k = byte_at(buf, p)?;
        i.branch = BranchKind::from_u8(k).filter(|&k| k != BranchKind::None).ok_or(Fault::Kind(k))?;
    }
    for k in 0..i.nsrc as usize {
        let v = varint_at(buf, p)?;
        let d = v >> 1;
        if d == 0 || d > MAX_DISTANCE as u64 {
            return Err(Fault::Distance(d));
        }
        i.srcs[k] = d as u16;
        i.addr_mask |= ((v & 1) as u8) << k;
    }
    if i.branch != BranchKind::None {
        i.pc = prev_pc.wrapping_add(unzigzag(varint_at(buf, p)?) as u64);
        *prev_pc = i.pc;
        if i.branch.is_call() {
            i.len = byte_at(buf, p)?;
        }
        if i.branch.is_indirect() {
            i.target = i.pc.wrapping_add(unzigzag(varint_at(buf, p)?) as u64);
        }
    }
    Ok(i)
}

/// What an instruction stream holds (`spmsim trace info`).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StreamSummary {
    pub instructions: u64,
    /// Lackey instruction lines folded into `rep` instructions: lackey
    /// counted `instructions + folded_iterations`.
    pub folded_iterations: u64,
    /// Instructions per unit class.
    pub classes: std::collections::BTreeMap<String, u64>,
    /// Branches per kind.
    pub branches: std::collections::BTreeMap<String, u64>,
    pub conditional_taken: u64,
    /// Mean number of recorded producers per instruction.
    pub mean_sources: f64,
    /// Mean distance to the nearest producer, in instructions.
    pub mean_nearest_distance: f64,
}

/// Read a whole stream into its summary.
pub fn summarize(mut r: InsnReader) -> Result<StreamSummary, TraceError> {
    let mut s = StreamSummary::default();
    let (mut sources, mut nearest, mut with) = (0u64, 0u64, 0u64);
    while let Some(i) = r.next_insn()? {
        s.instructions += 1;
        *s.classes.entry(format!("{:?}", i.class)).or_default() += 1;
        if i.branch != BranchKind::None {
            *s.branches.entry(format!("{:?}", i.branch)).or_default() += 1;
            s.conditional_taken += (i.branch == BranchKind::Conditional && i.taken) as u64;
        }
        sources += i.nsrc as u64;
        if i.nsrc > 0 {
            nearest += i.srcs[0] as u64;
            with += 1;
        }
    }
    s.folded_iterations = r.folded.unwrap_or(0);
    s.mean_sources = sources as f64 / s.instructions.max(1) as f64;
    s.mean_nearest_distance = nearest as f64 / with.max(1) as f64;
    Ok(s)
}

/// Turns the recorded instruction addresses into stream entries: looks
/// each up in the front-end table, finds its producers through the last
/// writer of every register, and learns a branch's outcome from the next
/// instruction's address.
#[derive(Default)]
pub struct InsnTracker {
    /// Index + 1 of the last instruction that wrote each register.
    last_writer: Vec<u64>,
    /// The instruction whose successor is not known yet.
    held: Option<Insn>,
    index: u64,
    /// Instructions whose address the front end never translated (none,
    /// unless valgrind's output was cut).
    pub unknown: u64,
}

impl InsnTracker {
    pub fn new() -> Self {
        InsnTracker { last_writer: vec![0; 128], ..Default::default() }
    }

    /// The next instruction, at `pc`; writes the one before it.
    pub fn push(&mut self, pc: u64, len: u32, table: &FxHashMap<u64, StaticInsn>, w: &mut InsnWriter) -> std::io::Result<()> {
        self.resolve_held(Some(pc), w)?;
        let s = match table.get(&pc) {
            Some(s) => *s,
            None => {
                self.unknown += 1;
                StaticInsn { len: len as u8, ..StaticInsn::default() }
            }
        };
        let mut i = Insn { class: s.class, branch: s.branch, pc, len: s.len, ..Insn::default() };
        // The producers, nearest first, one entry each.
        let mut found: Vec<(u64, bool)> = Vec::with_capacity(8);
        let regs: RegSet = s.addr_regs | s.data_regs;
        let mut bits = regs;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let w = self.last_writer[r];
            if w == 0 {
                continue;
            }
            let d = self.index + 1 - w;
            let addr = s.addr_regs >> r & 1 == 1;
            if d <= MAX_DISTANCE as u64 {
                match found.iter_mut().find(|(x, _)| *x == d) {
                    Some(f) => f.1 |= addr,
                    None => found.push((d, addr)),
                }
            }
        }
        found.sort_unstable();
        for (k, &(d, addr)) in found.iter().take(MAX_SOURCES).enumerate() {
            i.srcs[k] = d as u16;
            i.addr_mask |= (addr as u8) << k;
            i.nsrc += 1;
        }
        let mut bits = s.writes;
        while bits != 0 {
            let r = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            self.last_writer[r] = self.index + 1;
        }
        self.index += 1;
        self.held = Some(i);
        Ok(())
    }

    fn resolve_held(&mut self, next: Option<u64>, w: &mut InsnWriter) -> std::io::Result<()> {
        if let Some(mut h) = self.held.take() {
            if let Some(n) = next {
                h.taken = n != h.pc + h.len as u64;
                h.target = n;
            }
            w.write(&h)?;
        }
        Ok(())
    }

    /// The end of the recording: the last instruction (its outcome unknown:
    /// not taken).
    pub fn finish(&mut self, w: &mut InsnWriter) -> std::io::Result<()> {
        self.resolve_held(None, w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("spmsim-insn-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn entries_round_trip_through_the_file() {
        let dir = scratch("round");
        let p = dir.join("t.insn");
        let entries = [
            Insn { class: FuClass::Load, nsrc: 1, srcs: [3, 0, 0], addr_mask: 1, ..Insn::default() },
            Insn { class: FuClass::FpMult, nsrc: 3, srcs: [1, 2, 1023], addr_mask: 0b100, ..Insn::default() },
            Insn { branch: BranchKind::Conditional, taken: true, pc: 0x401000, ..Insn::default() },
            Insn { branch: BranchKind::DirectCall, pc: 0x400ff0, len: 5, ..Insn::default() },
            Insn { branch: BranchKind::Return, pc: 0x7000, target: 0x400ff5, ..Insn::default() },
        ];
        let mut w = InsnWriter::create(&p).unwrap();
        for e in &entries {
            w.write(e).unwrap();
        }
        assert_eq!(w.finish(7, &[0xAB; 32]).unwrap(), 5);
        let mut r = InsnReader::open(&p).unwrap();
        assert_eq!(r.source(), &[0xAB; 32]);
        for e in &entries {
            assert_eq!(r.next_insn().unwrap().as_ref(), Some(e));
        }
        assert_eq!(r.next_insn().unwrap(), None);
        assert_eq!(r.folded, Some(7));
        let sum = summarize(InsnReader::open(&p).unwrap()).unwrap();
        assert_eq!((sum.instructions, sum.folded_iterations, sum.conditional_taken), (5, 7, 1));
        assert_eq!(sum.branches.values().sum::<u64>(), 3);
    }

    #[test]
    fn placed_batches_of_any_size_give_every_instruction_the_address_one_pass_gives() {
        let dir = scratch("placed");
        let p = dir.join("p.insn");
        // Runs of 0 to 9 plain instructions ended by branches of each
        // kind, and a branchless run longer than HOLD at the end.
        let mut entries = Vec::new();
        let mut pc = 0x40_0000u64;
        for k in 0..300u64 {
            entries.extend(std::iter::repeat_n(Insn { class: FuClass::IntAlu, ..Insn::default() }, (k % 10) as usize));
            pc += 64 + (k % 7) * 12;
            let (branch, target) = match k % 3 {
                0 => (BranchKind::Conditional, 0),
                1 => (BranchKind::Return, pc + 0x1000),
                _ => (BranchKind::DirectJump, 0),
            };
            entries.push(Insn { branch, taken: k % 2 == 0, pc, target, ..Insn::default() });
        }
        entries.extend(std::iter::repeat_n(Insn::default(), HOLD + 5));
        let mut w = InsnWriter::create(&p).unwrap();
        for e in &entries {
            w.write(e).unwrap();
        }
        w.finish(0, &[0; 32]).unwrap();
        let mut r = InsnReader::open(&p).unwrap();
        let mut whole: Vec<Insn> = std::iter::from_fn(|| r.next_insn().unwrap()).collect();
        let mut one_pass = Placement::default();
        let mut run = 0;
        for k in 0..whole.len() {
            if whole[k].branch != BranchKind::None {
                one_pass.place(&mut whole[run..=k], true);
                run = k + 1;
            }
        }
        for chunk in whole[run..].chunks_mut(HOLD) {
            one_pass.place(chunk, false);
        }
        assert!(whole.iter().all(|i| i.pc != 0), "every instruction has an address");
        for max in [1, 7, 256, 5000] {
            let mut r = InsnReader::open(&p).unwrap();
            let (mut got, mut batch) = (Vec::new(), Vec::new());
            loop {
                batch.clear();
                r.next_placed_batch(&mut batch, max).unwrap();
                if batch.is_empty() {
                    break;
                }
                got.extend_from_slice(&batch);
            }
            assert_eq!(got.len(), whole.len(), "batch size {max}");
            assert!(got == whole, "batch size {max}: the addresses differ from one pass's");
        }
    }

    #[test]
    fn a_stream_cut_inside_an_entry_is_an_error_naming_the_file() {
        let dir = scratch("cut");
        let p = dir.join("cut.insn");
        let mut raw = Vec::from(&MAGIC[..]);
        raw.push(VERSION);
        raw.extend_from_slice(&[0; 32]);
        raw.push(0x80 | 0x10); // a branch with one source, then nothing
        std::fs::write(&p, zstd::encode_all(&raw[..], 1).unwrap()).unwrap();
        let e = InsnReader::open(&p).unwrap().next_insn().unwrap_err().to_string();
        assert!(e.contains("cut.insn") && e.contains("at byte 42") && e.contains("ends inside an entry"), "{e}");
        raw.truncate(HEAD);
        std::fs::write(&p, zstd::encode_all(&raw[..], 1).unwrap()).unwrap();
        let e = InsnReader::open(&p).unwrap().next_insn().unwrap_err().to_string();
        assert!(e.contains("without its trailer"), "{e}");
        raw.truncate(20);
        std::fs::write(&p, zstd::encode_all(&raw[..], 1).unwrap()).unwrap();
        let e = InsnReader::open(&p).err().unwrap().to_string();
        assert!(e.contains("at byte 9") && e.contains("truncated"), "{e}");
        std::fs::write(&p, b"not a stream at all").unwrap();
        let e = InsnReader::open(&p).err().unwrap().to_string();
        assert!(e.contains("SPMSIMIS"), "{e}");
    }

    #[test]
    fn the_head_is_a_zstd_frame_of_its_own_holding_the_source_digest() {
        let f = head_frame(&[7; 32]);
        assert_eq!(f.len(), HEAD_FRAME_PREFIX + HEAD);
        let plain = zstd::decode_all(&f[..]).unwrap();
        assert_eq!(&plain[..8], MAGIC);
        assert_eq!(plain[8], VERSION);
        assert_eq!(&plain[9..], &[7; 32]);
        assert_eq!(&f[DIGEST_AT as usize..], &[7; 32], "the digest is where `finish` writes it");
    }

    /// A trace and the stream written for it, in `dir`.
    fn bound_pair(dir: &Path, bytes: &[u8]) -> (PathBuf, PathBuf) {
        let t = dir.join("t.trace");
        std::fs::write(&t, bytes).unwrap();
        let mut w = InsnWriter::create(&path_for(&t)).unwrap();
        w.write(&Insn::default()).unwrap();
        w.finish(0, &file_digest(&t).unwrap()).unwrap();
        (t.clone(), path_for(&t))
    }

    #[test]
    fn a_stream_opens_only_for_the_bytes_of_the_trace_it_was_made_from() {
        let dir = scratch("bound");
        let (t, s) = bound_pair(&dir, b"the first trace's bytes");
        let mut r = InsnReader::open_for(&s, &t).unwrap();
        assert_eq!(r.next_insn().unwrap(), Some(Insn::default()));
        assert!(r.reopen().is_ok());
        // The trace written over with other bytes of the same length, its
        // modification time set back: the stream is not its stream.
        let mtime = std::fs::metadata(&t).unwrap().modified().unwrap();
        std::fs::write(&t, b"the other trace's bytes").unwrap();
        std::fs::File::options().write(true).open(&t).unwrap().set_modified(mtime).unwrap();
        let e = InsnReader::open_for(&s, &t).err().unwrap().to_string();
        assert!(
            e.contains("t.trace.insn") && e.contains("t.trace ") && e.contains("written over") && e.contains("Record the trace again"),
            "{e}"
        );
        // A stream replaced during a run is not read on from its start.
        let (t2, s2) = bound_pair(&scratch("bound2"), b"a third trace");
        std::fs::copy(&s2, &s).unwrap();
        let e = r.reopen().err().unwrap().to_string();
        assert!(e.contains("replaced during the run"), "{e}");
        // The trace itself missing: named as missing.
        std::fs::remove_file(&t2).unwrap();
        let e = InsnReader::open_for(&s2, &t2).err().unwrap().to_string();
        assert!(e.contains("t.trace") && e.contains("cannot read it"), "{e}");
    }

    #[test]
    fn a_stream_of_the_older_format_is_refused_with_what_to_do() {
        let dir = scratch("old");
        let p = dir.join("old.insn");
        let mut raw = Vec::from(&MAGIC[..]);
        raw.push(1);
        raw.extend_from_slice(&[0, END, 0]);
        std::fs::write(&p, zstd::encode_all(&raw[..], 1).unwrap()).unwrap();
        let e = InsnReader::open(&p).err().unwrap().to_string();
        assert!(e.contains("old.insn: at byte 8") && e.contains("older format version 1") && e.contains("record the trace again"), "{e}");
        raw[8] = VERSION + 1;
        std::fs::write(&p, zstd::encode_all(&raw[..], 1).unwrap()).unwrap();
        let e = InsnReader::open(&p).err().unwrap().to_string();
        assert!(e.contains("newer than this spmsim reads"), "{e}");
    }

    #[test]
    fn producers_outcomes_and_targets_from_addresses() {
        let rax = 1u128 << super::super::vex::reg_id(16);
        let rbx = 1u128 << super::super::vex::reg_id(40);
        let mut table = FxHashMap::default();
        // 0x10: rax = ...; 0x13: rbx = load [rax]; 0x16: jcc on rbx; 0x30: ret
        table.insert(0x10, StaticInsn { len: 3, writes: rax, ..Default::default() });
        table.insert(0x13, StaticInsn { len: 3, class: FuClass::Load, addr_regs: rax, writes: rbx, ..Default::default() });
        table.insert(0x16, StaticInsn { len: 2, data_regs: rbx | rax, branch: BranchKind::Conditional, ..Default::default() });
        table.insert(0x30, StaticInsn { len: 1, branch: BranchKind::Return, ..Default::default() });
        let dir = scratch("track");
        let p = dir.join("t.insn");
        let mut w = InsnWriter::create(&p).unwrap();
        let mut t = InsnTracker::new();
        for pc in [0x10, 0x13, 0x16, 0x30, 0x18] {
            t.push(pc, 1, &table, &mut w).unwrap();
        }
        t.finish(&mut w).unwrap();
        w.finish(0, &[0; 32]).unwrap();
        assert_eq!(t.unknown, 1, "0x18 was never translated");
        let mut r = InsnReader::open(&p).unwrap();
        let all: Vec<Insn> = std::iter::from_fn(|| r.next_insn().unwrap()).collect();
        assert_eq!(all.len(), 5);
        assert_eq!((all[0].nsrc, all[1].nsrc), (0, 1));
        assert_eq!((all[1].srcs[0], all[1].addr_mask), (1, 1));
        assert_eq!((all[2].nsrc, &all[2].srcs[..2]), (2, &[1u16, 2][..]));
        assert!(all[2].taken, "0x16 went on to 0x30, not 0x18");
        assert_eq!(all[3].target, 0x18);
    }
}
