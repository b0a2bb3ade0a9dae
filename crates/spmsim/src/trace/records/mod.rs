//! Derived records: a recorded program's memory trace and its instruction
//! stream, derived once into one file of fixed-width records, so that a
//! run under the `ooo` core reads blocks of plain records instead of
//! decompressing two streams, decoding their varints, translating pages
//! and splitting accesses at every run. The trace and its stream stay
//! the files users exchange; this file is a cache beside the stream,
//! made again whenever it is missing, damaged or stale.
//!
//! ```text
//!  file:   head  event-block*  insn-block*                 (little-endian)
//!  head:   "SPMSIMRC" version:u32 0:u32 trace:[u8; 32] stream:[u8; 32]
//!          format:[u8; 16] events:u64 insns:u64 event_bytes:u64
//!          insn_bytes:u64 max_end:u64 folded:u64 check:u64  (152 bytes)
//!  block:  n:u32 0:u32, n records (1..=2048), check:u64 of the block's
//!          bytes before it and its index in its section; an event block
//!          ends at a record of the trace's end (an access's pieces are
//!          never split between two blocks)
//!  event:  addr:u64 value:u64 gap:u32 op:u8 size:u8 flags:u8 0:u8 (24 bytes)
//!  insn:   pc:u64 target:u64 srcs:[u16; 3] class:u8 nsrc:u8 addr_mask:u8
//!          branch:u8 taken:u8 len:u8 0:[u8; 4]              (32 bytes)
//! ```
//! `trace` and `stream` are the SHA-256 digests of the two sources'
//! bytes, `format` the trace format's name. The events are those
//! [`super::RecordEvents`] makes of the trace (accesses split at blocks,
//! stores into 8-byte pieces, a virtual trace's pages given frames in
//! first-touch order) before what depends on the run: the flags say
//! whether a piece lies in the trace's persistent ranges or its stack
//! (the run's `persistent=` policy picks which makes it volatile) and
//! whether a store has no recorded value (the run derives one from its
//! seed); `max_end` is the end of the highest piece, which the run's
//! memory must hold. The instructions are the stream's, each at its
//! address ([`super::placement`]) as the core reads them in batches of
//! [`PLACED_BATCH`].
//!
//! A file whose head does not read (short, another magic, another
//! version, a bad check), whose length is not the one its counts give, or
//! whose digests are not those of the sources' present bytes is derived
//! again, with a note; a block whose check fails when it is read fails
//! the run with an error naming the file, which is removed so that the
//! next run derives it again.

mod read;
mod source;
mod write;

pub use read::{EventRecords, InsnRecords};
pub use source::InsnSource;

use super::event::Op;
use super::Format;
use crate::util::digest::{file_digest, FileDigest};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const MAGIC: &[u8; 8] = b"SPMSIMRC";
/// The format version: a file of another version is derived again.
pub const VERSION: u32 = 1;
/// Bytes of the head.
pub const HEAD: usize = 152;
/// Records per block (the last block of a section may hold fewer).
pub const BLOCK_RECORDS: usize = 2048;
pub const EVENT_BYTES: usize = 24;
pub const INSN_BYTES: usize = 32;
/// Instructions the core takes from its stream at a time: the placing of
/// addresses ([`super::insn::InsnReader::next_placed_batch`]) is derived
/// in batches of this size, as the core asks for them.
pub const PLACED_BATCH: usize = 256;

/// Event flags.
const LOG: u8 = 1;
const SAME_INSTRUCTION: u8 = 2;
const PIECE: u8 = 4;
/// The piece lies in one of the trace header's persistent ranges.
const IN_RANGES: u8 = 8;
/// The piece lies in the recorded program's stack.
const IN_STACK: u8 = 16;
/// A store the trace recorded no value for: the run derives one.
const DERIVED_VALUE: u8 = 32;

/// The derived records of the instruction stream at `stream`.
pub fn path_for(stream: &Path) -> PathBuf {
    stream.with_extension("rec")
}

/// Which accesses of a trace are volatile, as the run's `persistent=`
/// policy says (`workload::trace_spec`), decided per piece from its flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Volatility {
    Never,
    Always,
    /// Outside the trace header's persistent ranges.
    OutsideRanges,
    /// Inside the recorded program's stack.
    InsideStack,
}

impl Volatility {
    #[inline(always)]
    fn of(self, flags: u8) -> bool {
        match self {
            Volatility::Never => false,
            Volatility::Always => true,
            Volatility::OutsideRanges => flags & IN_RANGES == 0,
            Volatility::InsideStack => flags & IN_STACK != 0,
        }
    }
}

fn op_code(op: Op) -> u8 {
    match op {
        Op::Load => 0,
        Op::Store => 1,
        Op::Fence => 2,
        Op::TxBegin => 3,
        Op::TxCommit => 4,
        Op::Epoch => 5,
        Op::Compute => 6,
    }
}

fn op_of(code: u8) -> Option<Op> {
    [Op::Load, Op::Store, Op::Fence, Op::TxBegin, Op::TxCommit, Op::Epoch, Op::Compute].get(code as usize).copied()
}

/// What the head says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Head {
    pub trace: FileDigest,
    pub stream: FileDigest,
    pub format: String,
    pub events: u64,
    pub insns: u64,
    /// Bytes of each section, its blocks' counts and checks included.
    pub event_bytes: u64,
    pub insn_bytes: u64,
    /// The end of the highest piece in the simulated memory.
    pub max_end: u64,
    /// The stream's count of lackey lines folded into `rep` instructions.
    pub folded: u64,
}

impl Head {
    fn encode(&self) -> [u8; HEAD] {
        let mut h = [0u8; HEAD];
        h[..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[16..48].copy_from_slice(&self.trace);
        h[48..80].copy_from_slice(&self.stream);
        let name = self.format.as_bytes();
        h[80..80 + name.len().min(16)].copy_from_slice(&name[..name.len().min(16)]);
        let counts = [self.events, self.insns, self.event_bytes, self.insn_bytes, self.max_end, self.folded];
        for (k, v) in counts.into_iter().enumerate() {
            h[96 + 8 * k..104 + 8 * k].copy_from_slice(&v.to_le_bytes());
        }
        let c = checksum(&h[..CHECK_AT], u64::MAX);
        h[CHECK_AT..].copy_from_slice(&c.to_le_bytes());
        h
    }

    /// The head in `h`, or why it is not one this spmsim reads.
    fn decode(h: &[u8; HEAD]) -> Result<Head, String> {
        if &h[..8] != MAGIC {
            return Err("not a derived record file (no SPMSIMRC magic)".into());
        }
        let version = u32::from_le_bytes(h[8..12].try_into().expect("4 bytes"));
        if version != VERSION {
            return Err(format!("format version {version}, not this spmsim's {VERSION}"));
        }
        if checksum(&h[..CHECK_AT], u64::MAX) != u64_at(h, CHECK_AT) {
            return Err("its head fails its check (damaged)".into());
        }
        let name = &h[80..96];
        let len = name.iter().position(|&b| b == 0).unwrap_or(16);
        Ok(Head {
            trace: h[16..48].try_into().expect("32 bytes"),
            stream: h[48..80].try_into().expect("32 bytes"),
            format: String::from_utf8_lossy(&name[..len]).into_owned(),
            events: u64_at(h, 96),
            insns: u64_at(h, 104),
            event_bytes: u64_at(h, 112),
            insn_bytes: u64_at(h, 120),
            max_end: u64_at(h, 128),
            folded: u64_at(h, 136),
        })
    }

    /// Bytes of the whole file this head describes.
    fn file_bytes(&self) -> Option<u64> {
        (HEAD as u64).checked_add(self.event_bytes)?.checked_add(self.insn_bytes)
    }
}

/// Where the head's check is.
const CHECK_AT: usize = HEAD - 8;

#[inline(always)]
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The check of a block: four lanes of multiply-and-rotate over its
/// 8-byte words, each step a bijection of the lane, so a changed word
/// always changes the result; `index` seeds it, so blocks that changed
/// places do not pass either.
pub(crate) fn checksum(bytes: &[u8], index: u64) -> u64 {
    #[inline(always)]
    fn step(lane: u64, word: &[u8]) -> u64 {
        (lane ^ u64::from_le_bytes(word.try_into().expect("8 bytes"))).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
    }
    let (mut a, mut b, mut c, mut d) = (index ^ 0x243F_6A88_85A3_08D3, 0x1319_8A2E_0370_7344, 0xA409_3822_299F_31D0, bytes.len() as u64);
    let mut quads = bytes.chunks_exact(32);
    for q in quads.by_ref() {
        a = step(a, &q[..8]);
        b = step(b, &q[8..16]);
        c = step(c, &q[16..24]);
        d = step(d, &q[24..]);
    }
    let mut words = quads.remainder().chunks_exact(8);
    for w in words.by_ref() {
        a = step(a, w);
    }
    for &byte in words.remainder() {
        a = step(a, &(byte as u64).to_le_bytes());
    }
    a ^ b.rotate_left(16) ^ c.rotate_left(32) ^ d.rotate_left(48)
}

/// The two sources of a file of derived records.
#[derive(Clone, Copy, Debug)]
pub struct Sources<'a> {
    pub trace: &'a Path,
    pub format: Format,
    pub stream: &'a Path,
}

/// A file of derived records checked against its sources.
#[derive(Clone, Debug)]
pub struct Records {
    pub path: PathBuf,
    pub head: Head,
}

/// Why a file of records is not used as it is.
#[derive(Debug, PartialEq, Eq)]
enum Unusable {
    Missing,
    /// Damaged or stale: derived again, with a note.
    Bad(String),
}

/// Derivations of this process, one at a time: threads that open the
/// same program at once find the file the first one made.
static DERIVING: Mutex<()> = Mutex::new(());

impl Records {
    /// The records of `src`, derived now if the file beside the stream is
    /// missing, damaged or stale (a note on stderr says which).
    pub fn open_or_derive(src: Sources) -> Result<Records, String> {
        let digests = (file_digest(src.trace).map_err(|e| e.to_string())?, file_digest(src.stream).map_err(|e| e.to_string())?);
        let path = path_for(src.stream);
        match Records::check(&path, src, &digests) {
            Ok(head) => return Ok(Records { path, head }),
            Err(Unusable::Missing) => {}
            Err(Unusable::Bad(why)) => eprintln!("note: the derived records {}: {why}; deriving them again", path.display()),
        }
        let _one = DERIVING.lock().unwrap_or_else(|e| e.into_inner());
        if let Ok(head) = Records::check(&path, src, &digests) {
            return Ok(Records { path, head });
        }
        let head = write::derive(&path, src, digests)?;
        Ok(Records { path, head })
    }

    /// The head of the file at `path` if it is whole and made from the
    /// sources' present bytes (`digests`: the trace's and the stream's).
    fn check(path: &Path, src: Sources, digests: &(FileDigest, FileDigest)) -> Result<Head, Unusable> {
        let mut f = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Unusable::Missing),
            Err(e) => return Err(Unusable::Bad(format!("cannot be read ({e})"))),
        };
        let len = f.metadata().map_err(|e| Unusable::Bad(format!("cannot be read ({e})")))?.len();
        let mut h = [0u8; HEAD];
        if len < HEAD as u64 || f.read_exact(&mut h).is_err() {
            return Err(Unusable::Bad(format!("{len} bytes, shorter than its head (cut short)")));
        }
        let head = Head::decode(&h).map_err(Unusable::Bad)?;
        if head.trace != digests.0 || head.stream != digests.1 || head.format != src.format.name() {
            return Err(Unusable::Bad(format!(
                "made from other contents of the trace {} or its instruction stream than the files hold now (stale)",
                src.trace.display()
            )));
        }
        match head.file_bytes() {
            Some(n) if n == len => Ok(head),
            n => Err(Unusable::Bad(format!("{len} bytes where its head gives {} (cut short or damaged)", n.unwrap_or(u64::MAX)))),
        }
    }
}

#[cfg(test)]
mod tests;
