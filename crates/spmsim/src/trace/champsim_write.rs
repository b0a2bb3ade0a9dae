//! Writing a recorded program as a ChampSim trace (`spmsim trace convert
//! --to champsim`), so that ChampSim and spmsim run the same
//! program: `input_instr` records, xz-compressed, one per instruction.
//!
//! ```text
//!  native trace (memory operands, gaps)  +  TRACE.insn (per instruction:
//!  sources as distances back, branch kind, direction, pc, target)
//!    memory      source_memory (loads) / destination_memory (stores):
//!                each operand's address; 4 loads and 2 stores at most
//!    registers   instruction k writes pool register R(k) (the registers
//!                1 to 62 but 6, 25 and 26, in turn); a source d back
//!                reads R(k - d), kept while no later instruction has
//!                taken R(k - d) again (d < the pool's size)
//!    branches    ChampSim's convention (stack pointer 6, flags 25,
//!                instruction pointer 26): a conditional reads ip and
//!                flags, its nearest producer also writing the flags; a
//!                call reads and writes sp and ip; a return reads sp and
//!                writes sp and ip; an indirect one reads its producer's
//!                register (63, which nothing writes, if none)
//!    ip          a branch's own pc; the stream keeps no other pc, so the
//!                instructions before a branch sit at 4-byte steps ending
//!                at it, or after an indirect branch's known target
//! ```
//! What is lost is counted in [`ChampsimWritten`]: operands beyond a
//! record's slots (a `rep` instruction's iterations), dependences further
//! back than the pool, and the access sizes (ChampSim has none).

use super::champsim_insn::{REG_FLAGS, REG_INSTRUCTION_POINTER, REG_STACK_POINTER};
use super::event::Op;
use super::insn::{path_for, Insn, InsnReader};
use super::placement::{Placement, HOLD, STEP};
use super::vex::BranchKind;
use super::{open, Format};
use std::collections::VecDeque;
use std::io::Write;
use std::path::Path;

/// Registers are numbered below this: ChampSim renames each register a
/// trace names onto its physical register file (128 by default), so a
/// trace naming more than real x86 code does (under 64) runs ChampSim out
/// of physical registers.
const REGISTERS: u8 = 64;
/// A register no written record names as a destination.
const REG_NEVER_WRITTEN: u8 = REGISTERS - 1;

/// What a conversion to ChampSim's format wrote and lost.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct ChampsimWritten {
    pub instructions: u64,
    pub branches: u64,
    /// Memory operands beyond a record's 4 source and 2 destination slots.
    pub operands_dropped: u64,
    /// Register dependences further back than the register pool.
    pub dependences_dropped: u64,
}

/// One record being built.
#[derive(Clone, Copy, Default)]
struct Rec {
    ip: u64,
    insn: Insn,
    dest: [u8; 2],
    src: [u8; 4],
    loads: [u64; 4],
    stores: [u64; 2],
    nloads: usize,
    nstores: usize,
}

impl Rec {
    fn bytes(&self) -> [u8; 64] {
        let mut r = [0u8; 64];
        r[..8].copy_from_slice(&self.ip.to_le_bytes());
        let branch = self.insn.branch != BranchKind::None;
        r[8] = branch as u8;
        r[9] = (branch && self.insn.taken) as u8;
        r[10..12].copy_from_slice(&self.dest);
        r[12..16].copy_from_slice(&self.src);
        for (k, a) in self.stores.iter().enumerate() {
            r[16 + 8 * k..24 + 8 * k].copy_from_slice(&a.to_le_bytes());
        }
        for (k, a) in self.loads.iter().enumerate() {
            r[32 + 8 * k..40 + 8 * k].copy_from_slice(&a.to_le_bytes());
        }
        r
    }
}

/// Registers in the pool ([`pool`]).
pub const POOL_REGISTERS: usize = 59;

/// The register pool: every register below [`REGISTERS`] that ChampSim
/// gives no meaning to.
fn pool() -> Vec<u8> {
    (1..REG_NEVER_WRITTEN).filter(|r| ![REG_STACK_POINTER, REG_FLAGS, REG_INSTRUCTION_POINTER].contains(r)).collect()
}

struct Writer<W: Write> {
    out: W,
    pool: Vec<u8>,
    /// Instruction k is a branch, at k % the pool's size (every dependence
    /// kept is nearer than that).
    branch_at: Vec<bool>,
    held: VecDeque<Rec>,
    /// Index of `held[0]`.
    first: u64,
    next: u64,
    /// The ips placed so far (the stream keeps branches' pcs only).
    placement: Placement,
    n: ChampsimWritten,
}

impl<W: Write> Writer<W> {
    fn new(out: W) -> Self {
        let pool = pool();
        Writer {
            out,
            branch_at: vec![false; pool.len()],
            pool,
            held: VecDeque::new(),
            first: 0,
            next: 0,
            placement: Placement::default(),
            n: ChampsimWritten::default(),
        }
    }

    fn reg_of(&self, index: u64) -> u8 {
        self.pool[(index % self.pool.len() as u64) as usize]
    }

    /// Instruction `insn`, its memory operands to come.
    fn push(&mut self, insn: Insn) -> std::io::Result<()> {
        let i = self.next;
        self.next += 1;
        let len = self.pool.len() as u64;
        let mut producers = Vec::new();
        for d in (0..insn.nsrc as usize).map(|k| insn.srcs[k] as u64).filter(|&d| d <= i) {
            // A branch's destinations are ip and sp: nothing to read.
            if d < len && !self.branch_at[((i - d) % len) as usize] {
                producers.push(i - d);
            } else if d >= len {
                self.n.dependences_dropped += 1;
            }
        }
        self.branch_at[(i % len) as usize] = insn.branch != BranchKind::None;
        let mut r = Rec { insn, ..Rec::default() };
        let (ip, sp, fl) = (REG_INSTRUCTION_POINTER, REG_STACK_POINTER, REG_FLAGS);
        let other = producers.iter().max().map_or(REG_NEVER_WRITTEN, |&p| self.reg_of(p));
        match insn.branch {
            BranchKind::None => {
                r.dest = [self.reg_of(i), 0];
                for (k, &p) in producers.iter().take(4).enumerate() {
                    r.src[k] = self.reg_of(p);
                }
            }
            BranchKind::Conditional => {
                (r.dest, r.src) = ([ip, 0], [ip, fl, 0, 0]);
                // The nearest producer also writes the flags.
                if let Some(&p) = producers.iter().max() {
                    if let Some(h) = p.checked_sub(self.first).and_then(|k| self.held.get_mut(k as usize)) {
                        h.dest[1] = fl;
                    }
                }
            }
            BranchKind::DirectJump => (r.dest, r.src) = ([ip, 0], [ip, 0, 0, 0]),
            BranchKind::IndirectJump => (r.dest, r.src) = ([ip, 0], [other, 0, 0, 0]),
            BranchKind::DirectCall => (r.dest, r.src) = ([ip, sp], [ip, sp, 0, 0]),
            BranchKind::IndirectCall => (r.dest, r.src) = ([ip, sp], [ip, sp, other, 0]),
            BranchKind::Return => (r.dest, r.src) = ([ip, sp], [sp, 0, 0, 0]),
        }
        self.held.push_back(r);
        if insn.branch != BranchKind::None {
            self.n.branches += 1;
            self.place(Some(insn.pc));
            self.placement.after_branch(&insn);
            self.flush(self.held.len())?;
        } else if self.held.len() >= HOLD {
            self.place(None);
            self.flush(self.held.len())?;
        }
        Ok(())
    }

    /// A memory operand of the last instruction.
    fn operand(&mut self, op: Op, addr: u64) {
        let Some(r) = self.held.back_mut() else { return };
        match op {
            Op::Load if r.nloads < 4 => {
                r.loads[r.nloads] = addr;
                r.nloads += 1;
            }
            Op::Store if r.nstores < 2 => {
                r.stores[r.nstores] = addr;
                r.nstores += 1;
            }
            _ => self.n.operands_dropped += 1,
        }
    }

    /// Give the held instructions their ips by the rule of
    /// [`super::placement`]: the branch that ends them (at `pc`) keeps its
    /// own.
    fn place(&mut self, pc: Option<u64>) {
        let plain = self.held.len() as u64 - pc.is_some() as u64;
        let mut at = self.placement.first(plain, pc);
        for h in self.held.iter_mut().take(plain as usize) {
            h.ip = at;
            at += STEP;
        }
        if let (Some(pc), Some(b)) = (pc, self.held.back_mut()) {
            b.ip = pc;
        }
        if let Some(b) = self.held.back() {
            self.placement.placed(b.ip);
        }
    }

    /// Write every held record (each placed).
    fn flush(&mut self, n: usize) -> std::io::Result<()> {
        for r in self.held.drain(..n) {
            self.out.write_all(&r.bytes())?;
        }
        self.first += n as u64;
        self.n.instructions += n as u64;
        Ok(())
    }

    /// Write what is still held.
    fn finish(mut self) -> std::io::Result<(W, ChampsimWritten)> {
        self.place(None);
        self.flush(self.held.len())?;
        Ok((self.out, self.n))
    }
}

/// Refuse an output that would overwrite the input or the input's own
/// instruction stream (compared as files, whatever the paths' spelling).
pub fn check_output(input: &Path, out: &Path) -> Result<(), String> {
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    if same(input, out) {
        return Err(format!("trace convert: input and output are the same file {}", input.display()));
    }
    if out.is_dir() {
        return Err(format!("trace convert: the output {} is a folder; name a file", out.display()));
    }
    let stream = path_for(input);
    if same(&stream, out) {
        return Err(format!(
            "trace convert: the output {} is the instruction stream of the input {}; writing it would destroy the stream (choose another output)",
            out.display(),
            input.display()
        ));
    }
    Ok(())
}

/// Write the recorded program at `input` (a trace with its instruction
/// stream beside it, made from the trace's bytes) as a ChampSim trace at
/// `out`, xz-compressed; at most `limit` instructions (at least 1). An
/// instruction stream beside `out` (of an earlier trace of that name) is
/// removed.
pub fn write(input: &Path, format: Option<Format>, out: &Path, limit: Option<u64>) -> Result<ChampsimWritten, String> {
    check_output(input, out)?;
    if limit == Some(0) {
        return Err("trace convert --to champsim: --instructions 0 would write a trace without instructions; give at least 1".into());
    }
    if !input.exists() {
        return Err(format!("trace convert: the input trace {} does not exist", input.display()));
    }
    let stream = path_for(input);
    if !stream.exists() {
        return Err(format!(
            "trace convert --to champsim: {} has no instruction stream beside it ({}); a program recorded by `spmsim trace record` has one",
            input.display(),
            stream.display()
        ));
    }
    let mut insns = InsnReader::open_for(&stream, input).map_err(|e| e.to_string())?;
    let mut r = open(input, format).map_err(|e| e.to_string())?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        if dir.exists() && !dir.is_dir() {
            return Err(format!("trace convert: the output {} is under {}, which is a file, not a folder", out.display(), dir.display()));
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("trace convert: cannot make the folder {} for the output {}: {e}", dir.display(), out.display()))?;
    }
    let (pending, f) = crate::util::output::PendingFile::create(out)
        .map_err(|e| format!("trace convert: cannot write {}: {}", out.display(), e.message))?;
    let io = |e: std::io::Error| format!("trace convert: writing {}: {e}", out.display());
    let mut w = Writer::new(xz2::write::XzEncoder::new(std::io::BufWriter::new(f), 3));
    let limit = limit.unwrap_or(u64::MAX);
    let mut next = |w: &mut Writer<_>| -> Result<bool, String> {
        if w.next >= limit {
            return Ok(false);
        }
        match insns.next_insn().map_err(|e| e.to_string())? {
            Some(i) => w.push(i).map_err(io).map(|_| true),
            None => Err(format!("{}: the instruction stream ends before the trace does", stream.display())),
        }
    };
    'records: while let Some(rec) = r.next_record().map_err(|e| e.to_string())? {
        for _ in 0..rec.gap {
            if !next(&mut w)? {
                break 'records;
            }
        }
        match rec.op {
            Op::Load | Op::Store if rec.same_instruction => w.operand(rec.op, rec.addr),
            Op::Load | Op::Store | Op::Fence => {
                if !next(&mut w)? {
                    break;
                }
                if rec.op != Op::Fence {
                    w.operand(rec.op, rec.addr);
                }
            }
            Op::TxBegin | Op::TxCommit | Op::Epoch | Op::Compute => {}
        }
    }
    let (enc, n) = w.finish().map_err(io)?;
    let buf = enc.finish().map_err(io)?;
    buf.into_inner().map_err(|e| io(e.into_error()))?.sync_all().map_err(io)?;
    pending.publish().map_err(|e| format!("trace convert: cannot move {} into place: {}", out.display(), e.message))?;
    super::insn::remove_stale(out).map_err(io)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::champsim::INPUT_INSTR;
    use crate::trace::champsim_insn::Deriver;
    use crate::trace::vex::FuClass;

    fn plain(srcs: &[u16]) -> Insn {
        let mut i = Insn { nsrc: srcs.len() as u8, ..Insn::default() };
        i.srcs[..srcs.len()].copy_from_slice(srcs);
        i
    }

    fn branch(kind: BranchKind, taken: bool, pc: u64, target: u64, srcs: &[u16]) -> Insn {
        Insn { branch: kind, taken, pc, target, len: 5, ..plain(srcs) }
    }

    #[test]
    fn an_output_over_the_input_or_its_stream_is_refused_however_spelled() {
        let dir = std::env::temp_dir().join(format!("spmsim-champsim-out-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let input = dir.join("p.trace");
        std::fs::write(&input, b"t").unwrap();
        std::fs::write(path_for(&input), b"s").unwrap();
        let e = check_output(&input, &dir.join("sub/../p.trace")).unwrap_err();
        assert!(e.contains("same file"), "{e}");
        let e = check_output(&input, &dir.join("sub/../p.trace.insn")).unwrap_err();
        assert!(e.contains("is the instruction stream of the input") && e.contains("p.trace.insn"), "{e}");
        assert!(check_output(&input, &dir.join("q.trace")).is_ok());
        // Refused before a byte is read or written.
        let e = write(&input, None, &path_for(&input), None).unwrap_err();
        assert!(e.contains("instruction stream of the input"), "{e}");
        assert_eq!(std::fs::read(path_for(&input)).unwrap(), b"s");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn the_pool_is_every_register_without_a_meaning() {
        let p = pool();
        assert_eq!(p.len(), POOL_REGISTERS);
        assert!(!p.contains(&0) && !p.contains(&REG_NEVER_WRITTEN) && !p.contains(&REG_FLAGS));
    }

    /// What spmsim writes, ChampSim's conventions read back: kinds,
    /// directions, branch pcs and targets, memory operands, and every
    /// dependence within the pool's reach.
    #[test]
    fn a_written_trace_derives_back_to_its_instruction_stream() {
        let mut stream: Vec<(Insn, Vec<(Op, u64)>)> = vec![
            (plain(&[]), vec![(Op::Load, 0x7000)]),
            (plain(&[1]), vec![]),
            (plain(&[1, 2]), vec![(Op::Store, 0x7040), (Op::Load, 0x7080)]),
            (branch(BranchKind::Conditional, true, 0x4010, 0, &[1]), vec![]),
            (plain(&[]), vec![]),
            (branch(BranchKind::DirectCall, true, 0x5000, 0, &[]), vec![]),
            (branch(BranchKind::Return, true, 0x6000, 0x5005, &[]), vec![]),
            (plain(&[3]), vec![]),
            (branch(BranchKind::IndirectJump, true, 0x5010, 0x9000, &[1]), vec![]),
            (plain(&[]), vec![(Op::Load, 0x1), (Op::Load, 0x2), (Op::Load, 0x3), (Op::Load, 0x4), (Op::Load, 0x5)]),
            (branch(BranchKind::Conditional, false, 0x9008, 0, &[]), vec![]),
        ];
        // A dependence further back than the pool reaches is lost.
        stream.extend((0..POOL_REGISTERS).map(|_| (plain(&[]), vec![])));
        stream.push((plain(&[1, POOL_REGISTERS as u16 + 1]), vec![]));
        let mut w = Writer::new(Vec::new());
        for (i, ops) in &stream {
            w.push(*i).unwrap();
            for &(op, a) in ops {
                w.operand(op, a);
            }
        }
        let (bytes, n) = w.finish().unwrap();
        assert_eq!((n.instructions, n.branches, n.operands_dropped, n.dependences_dropped), (stream.len() as u64, 5, 1, 1));
        let mut d = Deriver::new(INPUT_INSTR);
        let mut back: Vec<Insn> = bytes.chunks(64).filter_map(|r| d.push(r)).collect();
        back.extend(d.finish());
        assert_eq!(back.len(), stream.len());
        for (k, ((i, ops), b)) in stream.iter().zip(&back).enumerate() {
            let class = match ops.first() {
                Some((Op::Load, _)) => FuClass::Load,
                Some((Op::Store, _)) => FuClass::Store,
                _ => FuClass::IntAlu,
            };
            let class = if ops.iter().any(|(op, _)| *op == Op::Load) { FuClass::Load } else { class };
            assert_eq!((b.branch, b.taken, b.class), (i.branch, i.taken && i.branch != BranchKind::None, class), "instruction {k}");
            if i.branch != BranchKind::None {
                assert_eq!(b.pc, i.pc, "instruction {k}");
            }
            if matches!(i.branch, BranchKind::Return | BranchKind::IndirectJump) {
                assert_eq!(b.target, i.target, "instruction {k}: the next record starts at the known target");
            }
            if i.branch == BranchKind::None && k + 1 < stream.len() {
                let want: Vec<u16> = i.srcs[..i.nsrc as usize].to_vec();
                assert_eq!(&b.srcs[..b.nsrc as usize], &want[..], "instruction {k}");
            }
        }
        // The last one keeps the dependence within reach, loses the other.
        let last = back.last().unwrap();
        assert_eq!(&last.srcs[..last.nsrc as usize], &[1]);
        // The conditional branch depends on its producer through the flags.
        assert_eq!(&back[3].srcs[..back[3].nsrc as usize], &[1]);
        // Instructions before a branch sit before its pc; after the return,
        // at its target.
        let ip = |k: usize| u64::from_le_bytes(bytes[64 * k..64 * k + 8].try_into().unwrap());
        assert_eq!((ip(0), ip(1), ip(2), ip(3)), (0x4004, 0x4008, 0x400c, 0x4010));
        assert_eq!((ip(6), ip(7)), (0x6000, 0x5005));
    }
}
