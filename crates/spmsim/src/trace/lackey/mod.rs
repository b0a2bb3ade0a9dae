//! valgrind lackey `--trace-mem=yes` output, read from a file or recorded
//! live from a running program.
//!
//! Lackey prints one line per guest instruction and per data access, in
//! program order (valgrind's `lackey/lk_main.c` documents the format):
//!
//! ```text
//!  I  04010173,3      instruction fetch: address, length
//!   L 1ffefffd80,8    load
//!   S 1ffefffd78,8    store
//!   M 04a1c2b0,4      modify: a load and a store by the same instruction
//!  ==1234== ...       valgrind's own messages (skipped)
//! ```
//! An instruction with no data access adds one to the next record's gap;
//! the accesses of one instruction become records of which all but the first
//! are flagged `same_instruction`. Lackey does not print values, so stores
//! get derived values when simulated. Instructions after the last access
//! of a trace become a `compute` record, so every instruction is counted.
//!
//! This file reads the format (from a file, or line by line for a live
//! recording); `record.rs` runs the program under valgrind and writes what
//! the parser makes of its output as a native trace.

mod record;

pub use record::{program_env, RecordOptions, RecordSummary, WindowOptions};
#[cfg(unix)]
pub use record::{record, record_windows};

use super::compress::{self, Stream};
use super::event::Op;
use super::{AddressSpace, Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// How recorded lackey output becomes a trace; a change that moves a
/// recorded trace changes this, so the suite records its traces again.
pub const RECORDING_RULES: &str =
    "spmsim lackey rules 4: rep iterations folded, stack range recorded, instruction stream, run from a fixed stage";

/// What one line of lackey output was.
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// An instruction fetch: its address and length.
    Instruction(u64, u32),
    Access(Op, u64, u32, bool),
    Other,
}

fn hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        let d = (c as char).to_digit(16)?;
        v = v << 4 | d as u64;
    }
    Some(v)
}

fn dec(s: &[u8]) -> Option<u32> {
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Parse one line; `Err` holds what is wrong with it.
fn parse_line(line: &[u8]) -> Result<Line, String> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.is_empty() || line.starts_with(b"==") || line.starts_with(b"--") {
        return Ok(Line::Other);
    }
    let kind = line.iter().position(|c| !c.is_ascii_whitespace()).map(|i| (line[i], &line[i + 1..]));
    let (k, rest) = kind.ok_or("blank line")?;
    let rest = rest.trim_ascii();
    let (addr, size) = match rest.iter().position(|&c| c == b',') {
        Some(i) => (&rest[..i], &rest[i + 1..]),
        None => return Err(format!("expected `ADDR,SIZE` after `{}`", k as char)),
    };
    let addr = hex(addr).ok_or_else(|| format!("bad hex address `{}`", String::from_utf8_lossy(addr)))?;
    let size = dec(size).ok_or_else(|| format!("bad size `{}`", String::from_utf8_lossy(size)))?;
    super::check_access_size(size as u64)?;
    if addr.checked_add(size as u64).is_none() {
        return Err(format!("access at {addr:#x} of {size} bytes wraps the address space"));
    }
    match k {
        b'I' => Ok(Line::Instruction(addr, size)),
        b'L' => Ok(Line::Access(Op::Load, addr, size, false)),
        b'S' => Ok(Line::Access(Op::Store, addr, size, false)),
        b'M' => Ok(Line::Access(Op::Load, addr, size, true)),
        other => Err(format!("unknown lackey record kind `{}`", other as char)),
    }
}

/// The line-by-line state: instruction counting, skipping and the gap.
///
/// A `rep`-prefixed string instruction (`rep movs`, `rep stos`, ...) runs
/// as one iteration per element, and lackey prints each iteration as an
/// instruction of its own at the same address (measured: a 200-byte
/// `rep movsb` prints 201 `I` lines at its address, 200 with a 1-byte
/// load and store). Back-to-back fetches of one address and length are
/// therefore folded into one architectural instruction whose accesses are
/// the iterations', coalesced into contiguous accesses within a 64 B block
/// as fast-string hardware moves whole lines. Only a rep prefix repeats an
/// instruction back to back; a one-instruction loop (`jmp .`) would fold
/// too, and it has no accesses to fold.
#[derive(Default)]
struct Parser {
    /// Architectural instructions seen (skipped ones included).
    instructions: u64,
    skip: u64,
    /// Instructions since the last record, not yet carried by one.
    gap: u64,
    /// The current instruction already has a record.
    has_access: bool,
    /// Address and length of the current instruction.
    current: Option<(u64, u32)>,
    /// The current instruction is a folded repetition (a rep iteration).
    repeating: bool,
    /// The current instruction's records, held until it ends so that a
    /// rep's iterations can coalesce.
    held: Vec<TraceRecord>,
    /// Lackey instruction lines folded into the instruction before them
    /// while recording.
    pub folded: u64,
    /// Address and length of each recorded architectural instruction, in
    /// order, when the recorder asks for them (the instruction stream).
    pcs: Option<Vec<(u64, u32)>>,
}

impl Parser {
    fn recording(&self) -> bool {
        self.instructions > self.skip
    }

    /// Whether `line` fetches the current instruction again (a rep
    /// iteration), which does not start a new instruction.
    fn repeats(&self, line: &[u8]) -> bool {
        matches!(parse_line(line), Ok(Line::Instruction(a, n)) if self.current == Some((a, n)))
    }

    /// The current instruction's records, in order.
    fn flush(&mut self, out: &mut VecDeque<TraceRecord>) {
        out.extend(self.held.drain(..));
    }

    /// The end of the input: the held records, then the instructions after
    /// the last access as compute records.
    fn finish(&mut self, out: &mut VecDeque<TraceRecord>) {
        self.flush(out);
        out.extend(super::compute_records(std::mem::take(&mut self.gap)));
    }

    /// Add an access of a rep iteration to a held record of the same kind
    /// that it continues (up or down) within one block; false if none.
    fn coalesce(&mut self, op: Op, addr: u64, size: u32) -> bool {
        let Some(r) = self.held.iter_mut().rev().find(|r| r.op == op) else { return false };
        let (lo, hi) = (r.addr.min(addr), (r.addr + r.size as u64).max(addr + size as u64));
        let contiguous = addr == r.addr + r.size as u64 || addr + size as u64 == r.addr;
        if contiguous && lo / 64 == (hi - 1) / 64 {
            r.addr = lo;
            r.size = (hi - lo) as u32;
            return true;
        }
        false
    }

    /// Feed one line, pushing the records it makes onto `out`.
    fn feed(&mut self, line: &[u8], out: &mut VecDeque<TraceRecord>) -> Result<(), String> {
        match parse_line(line)? {
            Line::Other => {}
            Line::Instruction(a, n) if self.current == Some((a, n)) => {
                // A rep iteration: the same instruction goes on.
                self.repeating = true;
                if self.recording() {
                    self.folded += 1;
                }
            }
            Line::Instruction(a, n) => {
                self.flush(out);
                self.current = Some((a, n));
                self.repeating = false;
                self.instructions += 1;
                if self.recording() {
                    self.gap += 1;
                    if let Some(p) = &mut self.pcs {
                        p.push((a, n));
                    }
                }
                self.has_access = false;
            }
            Line::Access(op, addr, size, modify) => {
                if !self.recording() {
                    return Ok(());
                }
                if self.repeating && self.has_access {
                    let merged = self.coalesce(op, addr, size);
                    let merged_store = !modify || self.coalesce(Op::Store, addr, size);
                    if merged && merged_store {
                        return Ok(());
                    }
                }
                let same = self.has_access;
                if !same {
                    // This instruction was counted in the gap; it is the record's own.
                    self.gap = self.gap.saturating_sub(1);
                }
                let gap = u32::try_from(self.gap).unwrap_or(u32::MAX);
                self.gap -= gap as u64;
                self.held.push(TraceRecord { same_instruction: same, ..TraceRecord::mem(op, addr, size).after(gap) });
                if modify {
                    self.held.push(TraceRecord { same_instruction: true, ..TraceRecord::mem(Op::Store, addr, size) });
                }
                self.has_access = true;
            }
        }
        Ok(())
    }
}

/// Reads a file of lackey output (plain or compressed).
pub struct LackeyReader {
    path: PathBuf,
    header: TraceHeader,
    s: Stream,
    p: Parser,
    line: Vec<u8>,
    lineno: u64,
    pending: VecDeque<TraceRecord>,
    /// The end of the input was reached and its records queued.
    done: bool,
}

pub fn open(path: &Path) -> Result<Box<dyn RecordReader>, TraceError> {
    let s = compress::open(path)?;
    let mut header = TraceHeader::new("lackey", AddressSpace::Virtual, false);
    header.source = format!("valgrind lackey output {}", path.display());
    Ok(Box::new(LackeyReader {
        path: path.to_path_buf(),
        header,
        s,
        p: Parser::default(),
        line: Vec::new(),
        lineno: 0,
        pending: VecDeque::new(),
        done: false,
    }))
}

impl RecordReader for LackeyReader {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        while self.pending.is_empty() {
            self.line.clear();
            let n = self.s.read_until(b'\n', &mut self.line).map_err(|e| {
                TraceError::new(&self.path, Position::Line(self.lineno + 1), format!("read error (damaged compressed data?): {e}"))
            })?;
            if n == 0 {
                // The held records, then the instructions after the last
                // access, as compute records.
                if self.pending.is_empty() && !self.done {
                    self.p.finish(&mut self.pending);
                    self.done = true;
                }
                return Ok(self.pending.pop_front());
            }
            self.lineno += 1;
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            self.p.feed(line, &mut self.pending).map_err(|m| {
                TraceError::new(&self.path, Position::Line(self.lineno), format!("{m} in `{}`", String::from_utf8_lossy(line)))
            })?;
        }
        Ok(self.pending.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str, skip: u64) -> Vec<TraceRecord> {
        let mut p = Parser { skip, ..Parser::default() };
        let mut out = VecDeque::new();
        for l in text.lines() {
            p.feed(l.as_bytes(), &mut out).unwrap();
        }
        p.flush(&mut out);
        out.into()
    }

    /// `rep movsb` of `n` bytes from `src` to `dst`: lackey's lines for its
    /// `n` iterations and its last check, after a `mov` and before a `ret`.
    fn rep_movsb(src: u64, dst: u64, n: u64) -> String {
        let mut t = String::from("I  1000,5\n");
        for i in 0..n {
            t.push_str(&format!("I  1005,2\n L {:x},1\n S {:x},1\n", src + i, dst + i));
        }
        t.push_str("I  1005,2\nI  1007,1\n L 9000,8\n");
        t
    }

    #[test]
    fn a_rep_instruction_is_one_instruction_with_block_sized_accesses() {
        // 200 bytes from 0x2010 to 0x4030: the source ends at 0x20d8, the
        // destination at 0x40f8, four blocks each; a piece starts where an
        // iteration first enters a block.
        let t = rep_movsb(0x2010, 0x4030, 200);
        let mut p = Parser::default();
        let mut out = VecDeque::new();
        for l in t.lines() {
            p.feed(l.as_bytes(), &mut out).unwrap();
        }
        p.flush(&mut out);
        let r: Vec<TraceRecord> = out.into();
        assert_eq!(p.instructions, 3, "mov, rep movsb, ret");
        assert_eq!(p.folded, 200, "the 200 repeated fetches of the rep");
        assert_eq!(r.iter().map(|x| x.instructions()).sum::<u64>(), 3);
        let rep: Vec<(Op, u64, u32)> = r[..r.len() - 1].iter().map(|x| (x.op, x.addr, x.size)).collect();
        assert_eq!(
            rep,
            [
                (Op::Load, 0x2010, 48),
                (Op::Store, 0x4030, 16),
                (Op::Store, 0x4040, 64),
                (Op::Load, 0x2040, 64),
                (Op::Store, 0x4080, 64),
                (Op::Load, 0x2080, 64),
                (Op::Store, 0x40c0, 56),
                (Op::Load, 0x20c0, 24),
            ]
        );
        let bytes = |op: Op| rep.iter().filter(|x| x.0 == op).map(|x| x.2 as u64).sum::<u64>();
        assert_eq!((bytes(Op::Load), bytes(Op::Store)), (200, 200), "every byte once");
        assert!(r[1..r.len() - 1].iter().all(|x| x.same_instruction) && !r[0].same_instruction);
        assert_eq!((r.last().unwrap().addr, r.last().unwrap().gap), (0x9000, 0), "the ret after it");
    }

    #[test]
    fn a_loop_of_two_instructions_is_not_folded_nor_is_a_return_to_an_address() {
        // A loop body alternating two instructions, then the first again
        // after a different one: five instructions, nothing folded.
        let t = "I  10,2\n S 100,8\nI  12,2\nI  10,2\n S 108,8\nI  12,2\nI  10,2\n";
        let mut p = Parser::default();
        let mut out = VecDeque::new();
        for l in t.lines() {
            p.feed(l.as_bytes(), &mut out).unwrap();
        }
        p.flush(&mut out);
        assert_eq!((p.instructions, p.folded), (5, 0));
        let r: Vec<TraceRecord> = out.into();
        assert_eq!(r.iter().map(|x| (x.addr, x.size)).collect::<Vec<_>>(), [(0x100, 8), (0x108, 8)], "no coalescing outside a rep");
        // A rep going down (direction flag set) coalesces downwards.
        let mut down = String::from("I  20,2\n S 4038,8\n");
        for a in [0x4030u64, 0x4028, 0x4020] {
            down.push_str(&format!("I  20,2\n S {a:x},8\n"));
        }
        assert_eq!(records(&down, 0).iter().map(|x| (x.addr, x.size)).collect::<Vec<_>>(), [(0x4020, 32)]);
    }

    #[test]
    fn instructions_become_gaps_and_modify_is_a_load_and_a_store() {
        let t = "==1== Lackey\nI  0400,3\nI  0403,2\n L 1000,8\nI  0405,4\n M 2000,4\n S 3000,16\nI  0409,1\nI  040a,1\n S 4000,8\n";
        let r = records(t, 0);
        assert_eq!(r.len(), 5);
        assert_eq!((r[0].op, r[0].addr, r[0].size, r[0].gap, r[0].same_instruction), (Op::Load, 0x1000, 8, 1, false));
        assert_eq!((r[1].op, r[1].addr, r[1].gap, r[1].same_instruction), (Op::Load, 0x2000, 0, false));
        assert_eq!((r[2].op, r[2].same_instruction), (Op::Store, true));
        assert_eq!((r[3].op, r[3].size, r[3].same_instruction), (Op::Store, 16, true));
        assert_eq!((r[4].addr, r[4].gap), (0x4000, 1));
        // Five instructions, all but none trailing carried by the records.
        assert_eq!(r.iter().map(|x| x.instructions()).sum::<u64>(), 5);
    }

    #[test]
    fn skipping_drops_the_first_instructions() {
        let t = "I  1,1\n S 10,8\nI  2,1\n L 20,8\nI  3,1\nI  4,1\n L 30,8\n";
        let r = records(t, 2);
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].addr, r[0].gap), (0x30, 1));
    }

    #[test]
    fn malformed_lines_are_errors() {
        for bad in ["I  zz,3", " L 1000", " X 10,8", " S 10,0", " L 10,abc"] {
            let mut p = Parser::default();
            assert!(p.feed(bad.as_bytes(), &mut VecDeque::new()).is_err(), "{bad}");
        }
    }
}
