//! Deriving the records: the trace's events and the stream's placed
//! instructions written in blocks, the head last, the file published
//! whole (a temporary file renamed into place) or not at all.

use super::{checksum, op_code, Head, Sources, BLOCK_RECORDS, DERIVED_VALUE, EVENT_BYTES, HEAD, INSN_BYTES, IN_RANGES, IN_STACK};
use super::{LOG, PIECE, PLACED_BATCH, SAME_INSTRUCTION};
use crate::trace::event::{Event, Op};
use crate::trace::events::{split_access, PageMap};
use crate::trace::insn::{Insn, InsnReader};
use crate::trace::{AddressSpace, TraceHeader};
use crate::util::digest::FileDigest;
use crate::util::output::PendingFile;
use std::io::{Seek, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// Records gathered into blocks, each written with its count and check.
struct BlockWriter<W: Write> {
    out: W,
    size: usize,
    /// The block being gathered: its count's 8 bytes, then its records.
    buf: Vec<u8>,
    block: u64,
    count: u64,
    bytes: u64,
}

impl<W: Write> BlockWriter<W> {
    fn new(out: W, size: usize) -> Self {
        let mut buf = Vec::with_capacity(8 + size * BLOCK_RECORDS + 8);
        buf.extend_from_slice(&[0; 8]);
        BlockWriter { out, size, buf, block: 0, count: 0, bytes: 0 }
    }

    fn records_in_block(&self) -> usize {
        (self.buf.len() - 8) / self.size
    }

    /// Add `recs`, whole records that must stay in one block (an access's
    /// pieces): the block is written first if they do not fit in it.
    fn push(&mut self, recs: &[u8]) -> std::io::Result<()> {
        debug_assert!(recs.len().is_multiple_of(self.size) && recs.len() / self.size <= BLOCK_RECORDS);
        if self.records_in_block() + recs.len() / self.size > BLOCK_RECORDS {
            self.flush_block()?;
        }
        self.buf.extend_from_slice(recs);
        self.count += (recs.len() / self.size) as u64;
        if self.records_in_block() == BLOCK_RECORDS {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> std::io::Result<()> {
        let n = self.records_in_block();
        if n == 0 {
            return Ok(());
        }
        self.buf[..4].copy_from_slice(&(n as u32).to_le_bytes());
        let c = checksum(&self.buf, self.block);
        self.buf.extend_from_slice(&c.to_le_bytes());
        self.out.write_all(&self.buf)?;
        self.bytes += self.buf.len() as u64;
        self.buf.truncate(8);
        self.block += 1;
        Ok(())
    }

    /// The last block written: the writer, the records it took and the
    /// section's bytes.
    fn finish(mut self) -> std::io::Result<(W, u64, u64)> {
        self.flush_block()?;
        Ok((self.out, self.count, self.bytes))
    }
}

fn encode_event(e: &Event, extra: u8) -> [u8; EVENT_BYTES] {
    let mut r = [0u8; EVENT_BYTES];
    r[..8].copy_from_slice(&e.addr.to_le_bytes());
    r[8..16].copy_from_slice(&e.value.to_le_bytes());
    r[16..20].copy_from_slice(&e.gap.to_le_bytes());
    r[20] = op_code(e.op);
    r[21] = e.size;
    r[22] = extra | (e.log as u8 * LOG) | (e.same_instruction as u8 * SAME_INSTRUCTION) | (e.piece as u8 * PIECE);
    r
}

fn encode_insn(i: &Insn) -> [u8; INSN_BYTES] {
    let mut r = [0u8; INSN_BYTES];
    r[..8].copy_from_slice(&i.pc.to_le_bytes());
    r[8..16].copy_from_slice(&i.target.to_le_bytes());
    for (k, s) in i.srcs.iter().enumerate() {
        r[16 + 2 * k..18 + 2 * k].copy_from_slice(&s.to_le_bytes());
    }
    r[22] = i.class as u8;
    r[23] = i.nsrc;
    r[24] = i.addr_mask;
    r[25] = i.branch as u8;
    r[26] = i.taken as u8;
    r[27] = i.len;
    r
}

/// Plain progress lines on stderr while a derivation runs long.
struct Progress<'a> {
    what: &'a Path,
    start: Instant,
    next: Duration,
}

impl Progress<'_> {
    const EVERY: Duration = Duration::from_secs(5);

    fn due(&mut self) -> bool {
        let t = self.start.elapsed();
        if t < self.next {
            return false;
        }
        self.next = t + Self::EVERY;
        true
    }

    /// The trace's events so far (their count is known only at its end).
    fn events(&mut self, done: u64) {
        if self.due() {
            eprintln!("deriving the records of {}: {done} events of the trace so far", self.what.display());
        }
    }

    /// `done` of the stream's `total` instructions.
    fn insns(&mut self, done: u64, total: u64) {
        if !self.due() || done == 0 {
            return;
        }
        let share = (done as f64 / total.max(1) as f64).min(1.0);
        let t = self.start.elapsed().as_secs_f64();
        let eta = t * (1.0 - share) / share;
        eprintln!("deriving the records of {}: instructions {:.0} %, about {eta:.0} s left", self.what.display(), 100.0 * share);
    }
}

/// The trace's events into `w`: the largest end of a piece, and the
/// instructions the events stand for.
fn write_events<W: Write>(src: Sources, w: &mut BlockWriter<W>, progress: &mut Progress) -> Result<(u64, u64), String> {
    let mut reader = crate::trace::open(src.trace, Some(src.format)).map_err(|e| e.to_string())?;
    let header: TraceHeader = reader.header().clone();
    let stacks = if header.stack_range.is_some() { header.stacks() } else { Vec::new() };
    let within = |rs: &[(u64, u64)], a: u64| rs.iter().any(|&(s, e)| (s..e).contains(&a));
    let mut pages = (header.address_space == AddressSpace::Virtual).then(PageMap::default);
    let (mut max_end, mut instructions) = (0u64, 0u64);
    let (mut pieces, mut records) = (Vec::new(), 0u64);
    let io = |e: std::io::Error| format!("writing the derived records: {e}");
    while let Some(r) = reader.next_record().map_err(|e| e.to_string())? {
        instructions += r.instructions();
        if !r.is_memory() {
            w.push(&encode_event(&Event { same_instruction: r.same_instruction, ..Event::marker(r.op).after(r.gap) }, 0)).map_err(io)?;
            continue;
        }
        pieces.clear();
        split_access(&r, &mut pages, |p| {
            let mut flags = (within(&header.persistent_ranges, p.va) as u8 * IN_RANGES) | (within(&stacks, p.va) as u8 * IN_STACK);
            if r.op == Op::Store && p.recorded_value(&r).is_none() {
                flags |= DERIVED_VALUE;
            }
            max_end = max_end.max(p.pa.saturating_add(p.len));
            pieces.extend_from_slice(&encode_event(&p.event(&r), flags));
            Ok(())
        })
        .map_err(|m| format!("{}: {m}", src.trace.display()))?;
        w.push(&pieces).map_err(io)?;
        records += 1;
        if records.is_multiple_of(1 << 16) {
            progress.events(w.count);
        }
    }
    Ok((max_end, instructions))
}

/// The stream's instructions, placed as the core places them, into `w`:
/// the stream's count of folded lines.
fn write_insns<W: Write>(
    src: Sources,
    trace: &FileDigest,
    w: &mut BlockWriter<W>,
    total: u64,
    progress: &mut Progress,
) -> Result<u64, String> {
    let mut reader = InsnReader::open_bound(src.stream, src.trace, trace).map_err(|e| e.to_string())?;
    let io = |e: std::io::Error| format!("writing the derived records: {e}");
    let mut batch = Vec::with_capacity(PLACED_BATCH);
    loop {
        batch.clear();
        reader.next_placed_batch(&mut batch, PLACED_BATCH).map_err(|e| e.to_string())?;
        if batch.is_empty() {
            break;
        }
        for i in &batch {
            w.push(&encode_insn(i)).map_err(io)?;
        }
        progress.insns(w.count, total);
    }
    Ok(reader.folded.unwrap_or(0))
}

/// Derive the records of `src` into `path`: the head written.
pub(super) fn derive(path: &Path, src: Sources, digests: (FileDigest, FileDigest)) -> Result<Head, String> {
    let io = |e: std::io::Error| format!("{}: writing the derived records: {e}", path.display());
    let (pending, file) = PendingFile::create(path).map_err(|e| e.message)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    out.write_all(&[0u8; HEAD]).map_err(io)?;
    let mut progress = Progress { what: src.trace, start: Instant::now(), next: Progress::EVERY };
    let mut events = BlockWriter::new(out, EVENT_BYTES);
    let (max_end, instructions) = write_events(src, &mut events, &mut progress)?;
    let (out, n_events, event_bytes) = events.finish().map_err(io)?;
    let mut insns = BlockWriter::new(out, INSN_BYTES);
    let folded = write_insns(src, &digests.0, &mut insns, instructions, &mut progress)?;
    let (out, n_insns, insn_bytes) = insns.finish().map_err(io)?;
    let head = Head {
        trace: digests.0,
        stream: digests.1,
        format: src.format.name().into(),
        events: n_events,
        insns: n_insns,
        event_bytes,
        insn_bytes,
        max_end,
        folded,
    };
    let mut f = out.into_inner().map_err(|e| io(e.into_error()))?;
    f.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    f.write_all(&head.encode()).map_err(io)?;
    f.sync_all().map_err(io)?;
    pending.publish().map_err(|e| e.message)?;
    Ok(head)
}
