//! The instruction stream of a ChampSim trace: what the `ooo`
//! core schedules, derived from the record fields ChampSim's own core
//! reads, and cached so that a trace is read for it once.
//!
//! ```text
//!  ChampSim record: ip, is_branch, branch_taken, destination and source
//!  registers, destination and source memory operands
//!    registers --> each source's producer: the last record that wrote it
//!                  (the 3 nearest within MAX_DISTANCE; the instruction
//!                  pointer's register is the front end's, not a data
//!                  dependence)
//!    branches  --> kind from the registers the branch reads and writes
//!                  (ChampSim's convention: stack pointer 6, flags 25,
//!                  instruction pointer 26), target = the next record's ip
//!    memory    --> Load (any source operand) or Store; its registers
//!                  give its address (ChampSim issues a memory operation
//!                  once all its sources are ready)
//!  --> $SPMSIM_CACHE/champsim-insn/KEY.insn (+ KEY.json: what it holds
//!      and the digest of the .insn's bytes), KEY = the SHA-256 of the
//!      trace's bytes, the layout, the derivation's and the stream
//!      format's versions; the stream records the trace's digest too
//! ```
//! The trace has no unit classes: every other instruction is an integer
//! ALU operation. It has no instruction lengths: a call's return address
//! is learned per call site from the first return to it (5 bytes, x86-64's
//! `call rel32`, before that), as a return address stack that learns call
//! sizes would.

use super::champsim::{impossible, Layout, CLOUDSUITE_INSTR};
use super::compress::{self, read_record};
use super::insn::{Insn, InsnReader, InsnWriter, MAX_DISTANCE, MAX_SOURCES};
use super::vex::{BranchKind, FuClass};
use super::{Position, TraceError};
use crate::util::digest::{file_digest, FileDigest};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// ChampSim's register numbers with a meaning (`inc/trace_instruction.h`).
pub const REG_STACK_POINTER: u8 = 6;
pub const REG_FLAGS: u8 = 25;
pub const REG_INSTRUCTION_POINTER: u8 = 26;
/// A call's length before a return to it has been seen.
pub const DEFAULT_CALL_BYTES: u8 = 5;
/// Bumped when the derivation changes, so that a cached stream of an
/// earlier rule is derived again.
const DERIVATION: u32 = 1;

/// Where the register and branch fields of a layout are.
#[derive(Clone, Copy)]
struct Fields {
    dest_regs: (usize, usize),
    src_regs: (usize, usize),
}

fn fields(l: Layout) -> Fields {
    if l == CLOUDSUITE_INSTR {
        Fields { dest_regs: (10, 4), src_regs: (14, 4) }
    } else {
        Fields { dest_regs: (10, 2), src_regs: (12, 4) }
    }
}

/// What a derived stream holds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    pub instructions: u64,
    pub branches: u64,
    pub taken: u64,
    /// Instructions naming at least one register.
    pub with_registers: u64,
    /// Register sources dropped: a fourth one, or a producer further back
    /// than the stream records.
    pub sources_dropped: u64,
    /// Calls whose return address took the default length.
    pub calls_unlearned: u64,
}

impl Derived {
    /// The trace carries registers or branches for the `ooo` core to use.
    pub fn has_fields(&self) -> bool {
        self.branches > 0 || self.with_registers > 0
    }
}

/// A branch's kind from the registers it reads and writes (ChampSim's
/// convention for its traces); a branch of no known shape is taken as
/// conditional (its direction is predicted).
pub fn branch_kind(dest: &[u8], src: &[u8]) -> BranchKind {
    let (reads, writes) = (|r: u8| src.contains(&r), |r: u8| dest.contains(&r));
    let reads_other = src.iter().any(|&r| r != 0 && r != REG_STACK_POINTER && r != REG_FLAGS && r != REG_INSTRUCTION_POINTER);
    let (sp_r, sp_w, ip_r, ip_w, flags) = (
        reads(REG_STACK_POINTER),
        writes(REG_STACK_POINTER),
        reads(REG_INSTRUCTION_POINTER),
        writes(REG_INSTRUCTION_POINTER),
        reads(REG_FLAGS),
    );
    match () {
        _ if !ip_w => BranchKind::Conditional,
        _ if !sp_r && !flags && !reads_other => BranchKind::DirectJump,
        _ if !sp_r && !flags => BranchKind::IndirectJump,
        _ if sp_r && sp_w && ip_r && !flags => {
            if reads_other {
                BranchKind::IndirectCall
            } else {
                BranchKind::DirectCall
            }
        }
        _ if sp_r && sp_w && !ip_r => BranchKind::Return,
        _ => BranchKind::Conditional,
    }
}

/// Turns records into instructions, one at a time, each held back until
/// the next record gives its successor's address (a branch's target).
pub struct Deriver {
    f: Fields,
    layout: Layout,
    /// Index + 1 of the last writer of each register (0: none yet).
    writer: Vec<u64>,
    index: u64,
    held: Option<Insn>,
    /// The pcs of the calls not returned from yet.
    calls: Vec<u64>,
    call_bytes: FxHashMap<u64, u8>,
    pub summary: Derived,
}

impl Deriver {
    pub fn new(layout: Layout) -> Self {
        Deriver {
            f: fields(layout),
            layout,
            writer: vec![0; 256],
            index: 0,
            held: None,
            calls: Vec::new(),
            call_bytes: FxHashMap::default(),
            summary: Derived::default(),
        }
    }

    /// Take record `rec`; returns the instruction of the record before it,
    /// now complete.
    pub fn push(&mut self, rec: &[u8]) -> Option<Insn> {
        let u64_at = |at: usize| u64::from_le_bytes(rec[at..at + 8].try_into().expect("8 bytes"));
        let ip = u64_at(0);
        let regs = |(at, n): (usize, usize)| -> Vec<u8> { rec[at..at + n].iter().copied().filter(|&r| r != 0).collect() };
        let (dest, src) = (regs(self.f.dest_regs), regs(self.f.src_regs));
        let l = self.layout;
        let loads = (0..l.src_memory_count).any(|k| u64_at(l.src_memory_at + 8 * k) != 0);
        let stores = (0..l.dest_memory_count).any(|k| u64_at(l.dest_memory_at + 8 * k) != 0);
        let mut i = Insn {
            class: if loads {
                FuClass::Load
            } else if stores {
                FuClass::Store
            } else {
                FuClass::IntAlu
            },
            ..Insn::default()
        };
        // Sources: the nearest producers first.
        let mut dists: Vec<u64> = src
            .iter()
            .filter(|&&r| r != REG_INSTRUCTION_POINTER)
            .filter(|&&r| self.writer[r as usize] > 0)
            .map(|&r| self.index + 1 - self.writer[r as usize])
            .collect();
        dists.sort_unstable();
        dists.dedup();
        let kept: Vec<u64> = dists.iter().copied().filter(|&d| d <= MAX_DISTANCE as u64).take(MAX_SOURCES).collect();
        self.summary.sources_dropped += (dists.len() - kept.len()) as u64;
        for (k, d) in kept.iter().enumerate() {
            i.srcs[k] = *d as u16;
        }
        i.nsrc = kept.len() as u8;
        if loads || stores {
            i.addr_mask = (1u8 << i.nsrc) - 1;
        }
        if rec[8] != 0 {
            i.branch = branch_kind(&dest, &src);
            i.taken = rec[9] != 0;
            i.pc = ip;
            self.summary.branches += 1;
            self.summary.taken += i.taken as u64;
            if i.branch.is_call() {
                i.len = match self.call_bytes.get(&ip) {
                    Some(&n) => n,
                    None => {
                        self.summary.calls_unlearned += 1;
                        DEFAULT_CALL_BYTES
                    }
                };
                // A stack deeper than any program's call depth is one
                // whose returns were never seen (longjmp, exceptions).
                if self.calls.len() == 1 << 12 {
                    self.calls.remove(0);
                }
                self.calls.push(ip);
            }
        }
        self.summary.instructions += 1;
        self.summary.with_registers += (!dest.is_empty() || !src.is_empty()) as u64;
        for &r in &dest {
            self.writer[r as usize] = self.index + 1;
        }
        self.index += 1;
        let prev = self.complete(ip);
        self.held = Some(i);
        prev
    }

    /// The instruction held back, its successor now known to be at
    /// `next_ip` (a branch's target).
    fn complete(&mut self, next_ip: u64) -> Option<Insn> {
        let mut b = self.held.take()?;
        if b.branch != BranchKind::None {
            b.target = next_ip;
            if b.branch == BranchKind::Return {
                // The call this returns to learns its length.
                if let Some(call) = self.calls.pop() {
                    if let Some(n) = next_ip.checked_sub(call).filter(|&n| (1..=15).contains(&n)) {
                        self.call_bytes.insert(call, n as u8);
                    }
                }
            }
        }
        Some(b)
    }

    /// The last instruction (a branch at the end has no target).
    pub fn finish(&mut self) -> Option<Insn> {
        self.held.take()
    }
}

/// A derived stream in the cache.
pub struct DerivedStream {
    pub stream: PathBuf,
    pub summary: Derived,
    /// The digest of the trace's bytes, which the stream records.
    pub source: FileDigest,
}

/// What the cache keeps beside a derived stream.
#[derive(Serialize, Deserialize)]
struct CacheEntry {
    #[serde(flatten)]
    summary: Derived,
    /// SHA-256 of the stream file's bytes as written: a stream damaged
    /// since is derived again.
    stream_sha256: String,
}

/// The cached stream of the ChampSim trace at `path` (and what it holds),
/// derived now unless the cache holds a whole one derived from the
/// trace's present bytes by this rule and format: a cache entry is found
/// by the content of the trace, not its name, size or time, and an entry
/// that is damaged, cut short or of another trace is derived again.
pub fn derive(path: &Path, layout: Layout) -> Result<DerivedStream, TraceError> {
    derive_in(&super::cache_dir().join("champsim-insn"), path, layout)
}

/// [`derive`], with the cache in `dir`.
pub fn derive_in(dir: &Path, path: &Path, layout: Layout) -> Result<DerivedStream, TraceError> {
    let source = file_digest(path).map_err(TraceError::from)?;
    let key = format!("{}-{}-d{DERIVATION}-v{}", hex::encode(source), layout.name, super::insn::VERSION);
    let out = dir.join(format!("{key}.insn"));
    let entry_path = dir.join(format!("{key}.json"));
    if let Some(summary) = cached(&out, &entry_path, path, &source) {
        return Ok(DerivedStream { stream: out, summary, source });
    }
    let io = |e: std::io::Error| TraceError::new(&out, Position::Offset(0), format!("writing the derived instruction stream: {e}"));
    std::fs::create_dir_all(dir).map_err(io)?;
    let mut w = InsnWriter::create(&out).map_err(io)?;
    let mut s = compress::open(path)?;
    let mut rec = vec![0u8; layout.record_bytes];
    let mut d = Deriver::new(layout);
    let mut n = 0u64;
    while read_record(path, &mut s, &mut rec)? {
        if let Some(m) = impossible(&rec, layout, n) {
            return Err(TraceError::new(
                path,
                Position::Offset(n * layout.record_bytes as u64),
                format!("ChampSim {} record {n}: {m}", layout.name),
            ));
        }
        if let Some(i) = d.push(&rec) {
            w.write(&i).map_err(io)?;
        }
        n += 1;
    }
    if let Some(i) = d.finish() {
        w.write(&i).map_err(io)?;
    }
    w.finish(0, &source).map_err(io)?;
    let written = file_digest(&out).map_err(TraceError::from)?;
    let entry = CacheEntry { summary: d.summary.clone(), stream_sha256: hex::encode(written) };
    let json = serde_json::to_string(&entry).expect("a cache entry serializes");
    crate::util::output::write_atomic(&entry_path, json.as_bytes()).map_err(|e| io(std::io::Error::other(e.message)))?;
    Ok(DerivedStream { stream: out, summary: d.summary, source })
}

/// The summary of the cache entry at `stream` and `entry`, if it is
/// whole: its record readable, the stream's bytes those it records, and
/// the stream made from `source`, the digest of the trace at `trace`.
fn cached(stream: &Path, entry: &Path, trace: &Path, source: &FileDigest) -> Option<Derived> {
    let e: CacheEntry = serde_json::from_str(&std::fs::read_to_string(entry).ok()?).ok()?;
    let bytes = file_digest(stream).ok()?;
    (hex::encode(bytes) == e.stream_sha256).then_some(())?;
    InsnReader::open_bound(stream, trace, source).ok()?;
    Some(e.summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::champsim::INPUT_INSTR;

    /// One `input_instr` record.
    fn rec(ip: u64, branch: Option<bool>, dest: &[u8], src: &[u8], load: u64, store: u64) -> Vec<u8> {
        let mut r = vec![0u8; 64];
        r[..8].copy_from_slice(&ip.to_le_bytes());
        if let Some(taken) = branch {
            r[8] = 1;
            r[9] = taken as u8;
        }
        r[10..10 + dest.len()].copy_from_slice(dest);
        r[12..12 + src.len()].copy_from_slice(src);
        r[16..24].copy_from_slice(&store.to_le_bytes());
        r[32..40].copy_from_slice(&load.to_le_bytes());
        r
    }

    fn derive_all(recs: &[Vec<u8>]) -> (Vec<Insn>, Derived) {
        let mut d = Deriver::new(INPUT_INSTR);
        let mut out: Vec<Insn> = recs.iter().filter_map(|r| d.push(r)).collect();
        out.extend(d.finish());
        (out, d.summary)
    }

    #[test]
    fn branch_kinds_follow_the_registers_a_branch_reads_and_writes() {
        let (sp, fl, ip) = (REG_STACK_POINTER, REG_FLAGS, REG_INSTRUCTION_POINTER);
        assert_eq!(branch_kind(&[ip], &[ip, fl]), BranchKind::Conditional);
        assert_eq!(branch_kind(&[ip], &[ip]), BranchKind::DirectJump);
        assert_eq!(branch_kind(&[ip], &[3]), BranchKind::IndirectJump);
        assert_eq!(branch_kind(&[ip, sp], &[ip, sp]), BranchKind::DirectCall);
        assert_eq!(branch_kind(&[ip, sp], &[ip, sp, 3]), BranchKind::IndirectCall);
        assert_eq!(branch_kind(&[ip, sp], &[sp]), BranchKind::Return);
    }

    #[test]
    fn registers_become_distances_to_their_producers_and_branches_take_the_next_ip() {
        let (sp, fl, ip) = (REG_STACK_POINTER, REG_FLAGS, REG_INSTRUCTION_POINTER);
        let recs = vec![
            rec(0x1000, None, &[3], &[], 0, 0),                  // 0: r3 =
            rec(0x1004, None, &[4, fl], &[3], 0, 0),             // 1: r4, flags = f(r3)
            rec(0x1008, None, &[5], &[4, 3], 0x8000, 0),         // 2: load at r4 + r3
            rec(0x100c, Some(true), &[ip], &[ip, fl], 0, 0),     // 3: jcc taken
            rec(0x2000, Some(true), &[ip, sp], &[ip, sp], 0, 0), // 4: call
            rec(0x3000, Some(true), &[ip, sp], &[sp], 0, 0),     // 5: ret to 0x2005
            rec(0x2005, None, &[], &[5], 0, 0x9000),             // 6: store r5
            rec(0x2008, Some(true), &[ip, sp], &[ip, sp], 0, 0), // 7: the call again
            rec(0x3000, Some(true), &[ip, sp], &[sp], 0, 0),     // 8: ret
            rec(0x2007, Some(false), &[ip], &[ip, fl], 0, 0),    // 9: jcc not taken, last
        ];
        let (v, s) = derive_all(&recs);
        assert_eq!(v.len(), recs.len(), "one instruction per record");
        assert_eq!((v[1].nsrc, v[1].srcs[0]), (1, 1), "r3 from the record before");
        assert_eq!(v[2].class, FuClass::Load);
        assert_eq!(
            (v[2].nsrc, &v[2].srcs[..2], v[2].addr_mask),
            (2, &[1u16, 2][..], 0b11),
            "r4 one back, r3 two back; both give the address"
        );
        assert_eq!((v[3].branch, v[3].taken, v[3].pc, v[3].target), (BranchKind::Conditional, true, 0x100c, 0x2000));
        assert_eq!((v[3].nsrc, v[3].srcs[0]), (1, 2), "the flags from record 1; the ip register is no data dependence");
        assert_eq!((v[4].branch, v[4].len), (BranchKind::DirectCall, DEFAULT_CALL_BYTES), "no return seen yet");
        assert_eq!((v[5].branch, v[5].target), (BranchKind::Return, 0x2005));
        assert_eq!((v[6].class, v[6].nsrc, v[6].srcs[0]), (FuClass::Store, 1, 4), "r5 from the load");
        assert_eq!(v[7].len, DEFAULT_CALL_BYTES, "another call site: nothing learned for it");
        assert_eq!((v[9].taken, v[9].target), (false, 0), "the last record has no successor");
        assert_eq!((s.instructions, s.branches, s.taken, s.with_registers), (10, 6, 5, 10));
        assert!(s.has_fields());
        // A call site learns its length from the return to it: 3 bytes.
        let call = rec(0x2000, Some(true), &[ip, sp], &[ip, sp], 0, 0);
        let ret = rec(0x3000, Some(true), &[ip, sp], &[sp], 0, 0);
        let after = rec(0x2003, None, &[], &[], 0, 0);
        let (v, s) = derive_all(&[call.clone(), ret.clone(), after.clone(), call, ret, after]);
        assert_eq!((v[0].len, v[3].len, s.calls_unlearned), (DEFAULT_CALL_BYTES, 3, 1));
    }

    #[test]
    fn cloudsuite_records_read_their_own_register_fields() {
        let (ip, fl) = (REG_INSTRUCTION_POINTER, REG_FLAGS);
        let rec = |pc: u64, branch: bool, dest: &[u8], src: &[u8]| {
            let mut r = vec![0u8; CLOUDSUITE_INSTR.record_bytes];
            r[..8].copy_from_slice(&pc.to_le_bytes());
            r[8] = branch as u8;
            r[9] = branch as u8;
            r[10..10 + dest.len()].copy_from_slice(dest);
            r[14..14 + src.len()].copy_from_slice(src);
            r
        };
        // Four destinations: the fourth one feeds the branch.
        let recs = [rec(0x1000, false, &[1, 2, 3, fl], &[]), rec(0x1004, false, &[], &[]), rec(0x1008, true, &[ip], &[ip, fl])];
        let mut d = Deriver::new(CLOUDSUITE_INSTR);
        let mut v: Vec<Insn> = recs.iter().filter_map(|r| d.push(r)).collect();
        v.extend(d.finish());
        assert_eq!((v[2].branch, v[2].nsrc, v[2].srcs[0]), (BranchKind::Conditional, 1, 2));
    }

    /// The instructions of a cached stream.
    fn read_all(p: &Path) -> Vec<Insn> {
        let mut r = InsnReader::open(p).unwrap();
        std::iter::from_fn(|| r.next_insn().unwrap()).collect()
    }

    #[test]
    fn the_cache_is_found_by_the_trace_s_content_and_a_damaged_entry_is_derived_again() {
        let dir = std::env::temp_dir().join(format!("spmsim-champsim-cache-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let cache = dir.join("cache");
        std::fs::create_dir_all(&dir).unwrap();
        let (fl, ip) = (REG_FLAGS, REG_INSTRUCTION_POINTER);
        // Two traces of the same size: a dependence chain, and the same
        // records with a taken branch in the middle.
        let a: Vec<u8> = (0..8).flat_map(|k| rec(0x1000 + 4 * k, None, &[3], &[3], 0, 0)).collect();
        let b: Vec<u8> = (0..8)
            .flat_map(
                |k| if k == 4 { rec(0x1010, Some(true), &[ip], &[ip, fl], 0, 0) } else { rec(0x1000 + 4 * k, None, &[3], &[3], 0, 0) },
            )
            .collect();
        assert_eq!(a.len(), b.len());
        let t = dir.join("t.champsim");
        std::fs::write(&t, &a).unwrap();
        let first = derive_in(&cache, &t, INPUT_INSTR).unwrap();
        assert_eq!((first.summary.instructions, first.summary.branches), (8, 0));
        assert!(InsnReader::open_for(&first.stream, &t).is_ok(), "the derived stream records the trace's digest");
        // Written over with the other records, its time set back: another
        // key, another stream.
        let mtime = std::fs::metadata(&t).unwrap().modified().unwrap();
        std::fs::write(&t, &b).unwrap();
        std::fs::File::options().write(true).open(&t).unwrap().set_modified(mtime).unwrap();
        let second = derive_in(&cache, &t, INPUT_INSTR).unwrap();
        assert_ne!(second.stream, first.stream);
        assert_eq!(second.summary.branches, 1);
        assert_eq!(read_all(&second.stream)[4].branch, BranchKind::Conditional);
        // Found again: the same entry, not derived again.
        let modified = || std::fs::metadata(&second.stream).unwrap().modified().unwrap();
        let before = modified();
        assert_eq!(derive_in(&cache, &t, INPUT_INSTR).unwrap().stream, second.stream);
        assert_eq!(modified(), before, "a whole entry is used as it is");
        // A damaged entry (its stream cut short, or a byte changed, or its
        // record unreadable) is derived again, never read as valid.
        let whole = std::fs::read(&second.stream).unwrap();
        let json = second.stream.with_extension("json");
        let mut flipped = whole.clone();
        let k = flipped.len() - 8;
        flipped[k] ^= 1;
        let damages =
            [("cut", &second.stream, &whole[..whole.len() - 3]), ("flipped", &second.stream, &flipped[..]), ("record", &json, &b"{"[..])];
        for (what, file, bytes) in damages {
            std::fs::write(file, bytes).unwrap();
            let again = derive_in(&cache, &t, INPUT_INSTR).unwrap();
            assert_eq!(std::fs::read(&again.stream).unwrap(), whole, "{what}: derived again, the same bytes");
            assert_eq!(again.summary, second.summary, "{what}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_trace_without_registers_or_branches_has_no_fields() {
        let (v, s) = derive_all(&[rec(0x1000, None, &[], &[], 0x10, 0), rec(0x1004, None, &[], &[], 0, 0)]);
        assert_eq!(v.len(), 2);
        assert!(!s.has_fields());
    }
}
