//! Trace files: spmsim's native format and readers for the formats
//! researchers already have. Every reader streams: it holds one record (or
//! one line) at a time, never the whole trace.
//!
//! ```text
//!  file --(xz | gz | zstd | plain, by magic bytes)--> Format reader
//!       --TraceRecord--> RecordEvents (page map, split, derived values) --Event--> simulator
//! ```
//! The native format is documented in `docs/trace-format.md`.

pub mod champsim;
pub mod champsim_insn;
pub mod champsim_write;
pub mod compress;
pub mod convert;
pub mod event;
pub mod events;
pub mod gem5;
pub mod info;
pub mod insn;
pub mod lackey;
pub mod native;
pub mod placement;
pub mod records;
pub mod text;
pub mod uops;
pub mod valgrind_stack;
pub mod vex;
#[cfg(unix)]
pub mod vgtool;

pub use events::RecordEvents;
pub use native::{NativeReader, NativeWriter, SealedTrace};

use event::Op;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// The largest access one record may make, in bytes, for every reader:
/// one page. The widest single instructions (AVX-512 stores, `fxsave`)
/// stay below it, and a larger size in a trace is damage or a misread
/// format, which would otherwise be simulated as millions of pieces.
pub const MAX_ACCESS_BYTES: u32 = 4096;

/// Why an access size cannot be simulated, if it cannot.
pub fn check_access_size(size: u64) -> Result<(), String> {
    if size == 0 {
        return Err("access of 0 bytes".into());
    }
    if size > MAX_ACCESS_BYTES as u64 {
        return Err(format!("access of {size} bytes, more than the {MAX_ACCESS_BYTES} bytes one instruction can touch"));
    }
    Ok(())
}

/// One operation of a trace, as the source recorded it: `gap` non-memory
/// instructions, then the operation. Sizes are the source's own (a 32-byte
/// vector store stays one record); [`RecordEvents`] splits them for the
/// simulator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRecord {
    pub gap: u32,
    pub op: Op,
    /// A store to the undo-log region (op is `Store`).
    pub log: bool,
    pub addr: u64,
    pub size: u32,
    /// The stored value (little-endian, stores of at most 8 bytes), when the
    /// source has it.
    pub value: Option<u64>,
    /// Part of the previous record's instruction (the store of a
    /// read-modify-write, the second access of a two-operand instruction).
    pub same_instruction: bool,
}

impl TraceRecord {
    pub fn mem(op: Op, addr: u64, size: u32) -> Self {
        TraceRecord { gap: 0, op, log: false, addr, size, value: None, same_instruction: false }
    }
    pub fn marker(op: Op) -> Self {
        TraceRecord { gap: 0, op, log: false, addr: 0, size: 0, value: None, same_instruction: false }
    }
    pub fn after(mut self, gap: u32) -> Self {
        self.gap = gap;
        self
    }
    /// `gap` instructions without a memory access and nothing after them.
    pub fn compute(gap: u32) -> Self {
        TraceRecord::marker(Op::Compute).after(gap)
    }
    pub fn is_memory(&self) -> bool {
        matches!(self.op, Op::Load | Op::Store)
    }
    /// Instructions the record stands for ([`crate::trace::event::instructions`]).
    pub fn instructions(&self) -> u64 {
        crate::trace::event::instructions(self.gap, self.op, self.same_instruction)
    }
}

/// Where the addresses of a trace live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AddressSpace {
    /// Addresses of the simulated memory, used as they are (generators).
    Physical,
    /// A program's virtual addresses: pages are given frames of the
    /// simulated memory in first-touch order when simulated.
    #[default]
    Virtual,
}

/// What a trace says about itself. The native format stores it; the other
/// readers fill in what their format implies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceHeader {
    /// The format the records were read from or converted from.
    pub source_format: String,
    /// Free text: the generator and its parameters, or the command line.
    #[serde(default)]
    pub source: String,
    pub address_space: AddressSpace,
    /// Stores carry the value they wrote.
    pub values: bool,
    /// Inclusive-exclusive byte ranges of persistent memory; empty means
    /// the whole address space is persistent.
    #[serde(default)]
    pub persistent_ranges: Vec<(u64, u64)>,
    /// Instructions skipped before the first record (recorded traces).
    #[serde(default)]
    pub skipped_instructions: u64,
    /// The recorded program's stack, inclusive-exclusive (what
    /// `persistent=heap` leaves volatile); absent when not recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_range: Option<(u64, u64)>,
    /// The stacks of the program's other threads, inclusive-exclusive,
    /// each from its mapping's start to where the thread's stack pointer
    /// began (also volatile under `persistent=heap`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_stacks: Vec<(u64, u64)>,
}

impl TraceHeader {
    pub fn new(source_format: &str, address_space: AddressSpace, values: bool) -> Self {
        TraceHeader {
            source_format: source_format.into(),
            source: String::new(),
            address_space,
            values,
            persistent_ranges: Vec::new(),
            skipped_instructions: 0,
            stack_range: None,
            thread_stacks: Vec::new(),
        }
    }
    /// Every recorded stack: the main thread's, then the other threads'.
    pub fn stacks(&self) -> Vec<(u64, u64)> {
        self.stack_range.iter().chain(&self.thread_stacks).copied().collect()
    }
    pub fn is_persistent(&self, addr: u64) -> bool {
        self.persistent_ranges.is_empty() || self.persistent_ranges.iter().any(|&(a, b)| (a..b).contains(&addr))
    }
}

/// Where in a file a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Position {
    /// Byte offset in the (decompressed) stream.
    Offset(u64),
    /// 1-based line of a text trace.
    Line(u64),
    Unknown,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError {
    pub path: PathBuf,
    pub at: Position,
    pub msg: String,
}

impl TraceError {
    pub fn new(path: &Path, at: Position, msg: impl Into<String>) -> Self {
        TraceError { path: path.to_path_buf(), at, msg: msg.into() }
    }
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at {
            Position::Offset(o) => write!(f, "{}: at byte {o}: {}", self.path.display(), self.msg),
            Position::Line(l) => write!(f, "{}:{l}: {}", self.path.display(), self.msg),
            Position::Unknown => write!(f, "{}: {}", self.path.display(), self.msg),
        }
    }
}

impl std::error::Error for TraceError {}

impl From<crate::util::digest::DigestError> for TraceError {
    fn from(e: crate::util::digest::DigestError) -> Self {
        TraceError::new(&e.path, Position::Unknown, format!("cannot read it for its digest: {}", e.source))
    }
}

/// A streaming reader of one trace format.
pub trait RecordReader: Send {
    fn header(&self) -> &TraceHeader;
    /// The next record, `Ok(None)` at the end of the trace.
    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError>;
}

/// The registry of trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// spmsim's own format (`docs/trace-format.md`).
    Native,
    /// ChampSim `input_instr`: 64-byte records.
    Champsim,
    /// ChampSim's cloudsuite variant: 96-byte records with ASIDs.
    ChampsimCloudsuite,
    /// valgrind `--tool=lackey --trace-mem=yes` output.
    Lackey,
    /// gem5 protobuf packet trace (`gem5` magic, varint-delimited messages).
    Gem5,
    /// Ramulator 2 load/store trace: `LD|ST address` per line.
    Ramulator,
    /// DRAMsim3 trace: `address READ|WRITE cycle` per line.
    Dramsim3,
}

impl Format {
    pub const ALL: [Format; 7] =
        [Format::Native, Format::Champsim, Format::ChampsimCloudsuite, Format::Lackey, Format::Gem5, Format::Ramulator, Format::Dramsim3];

    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "native",
            Format::Champsim => "champsim",
            Format::ChampsimCloudsuite => "champsim-cloudsuite",
            Format::Lackey => "lackey",
            Format::Gem5 => "gem5",
            Format::Ramulator => "ramulator",
            Format::Dramsim3 => "dramsim3",
        }
    }

    pub fn parse(s: &str) -> Result<Format, String> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown trace format `{s}`; known formats: {}", Format::ALL.map(|f| f.name()).join(", ")))
    }
}

/// Open a trace, choosing the format by its magic bytes (after
/// decompression) unless `format` is given.
pub fn open(path: &Path, format: Option<Format>) -> Result<Box<dyn RecordReader>, TraceError> {
    let format = match format {
        Some(f) => f,
        None => detect(path)?,
    };
    match format {
        Format::Native => Ok(Box::new(NativeReader::open(path)?)),
        Format::Champsim => champsim::open(path, false),
        Format::ChampsimCloudsuite => champsim::open(path, true),
        Format::Lackey => lackey::open(path),
        Format::Gem5 => gem5::open(path),
        Format::Ramulator => text::open_ramulator(path),
        Format::Dramsim3 => text::open_dramsim3(path),
    }
}

/// How many bytes [`detect`] looks at: 64 ChampSim records.
const DETECT_BYTES: usize = 4096;

/// Tell the format of a trace from its first bytes (after decompression),
/// only by what identifies it positively: a magic number, text lines of a
/// text format, or ChampSim records that are all plausible. Anything else
/// is an error that says what was tried.
pub fn detect(path: &Path) -> Result<Format, TraceError> {
    let head = compress::peek(path, DETECT_BYTES)?;
    if head.starts_with(native::MAGIC) {
        return Ok(Format::Native);
    }
    if head.starts_with(b"gem5") {
        return Ok(Format::Gem5);
    }
    let inner = compress::Compression::of(&head);
    if inner != compress::Compression::Plain {
        return Err(TraceError::new(
            path,
            Position::Offset(0),
            format!(
                "the data is {} compressed inside the file's own compression (compressed twice?); decompress the outer layer first",
                inner.name()
            ),
        ));
    }
    // Text traces hold no NUL bytes; binary ones (ChampSim records, whose
    // u64 fields have zero high bytes) always do, even when every other
    // byte happens to be ASCII.
    let text = if head.contains(&0) {
        None
    } else {
        std::str::from_utf8(&head).ok().or_else(|| {
            // A cut multi-byte character at the end of the window is still text.
            std::str::from_utf8(&head[..head.len().saturating_sub(3)]).ok()
        })
    };
    let tried = "native (magic SPMTRACE), gem5 (magic gem5), lackey, ramulator and dramsim3 (the first line of a text file), champsim and champsim-cloudsuite (the first records)";
    let unknown = |why: String| {
        TraceError::new(
            path,
            Position::Offset(0),
            format!("cannot tell the trace format: {why}; tried {tried}. Name the format with trace:PATH#format=NAME (or --format)"),
        )
    };
    if head.is_empty() {
        return Err(unknown("the file is empty".into()));
    }
    if let Some(t) = text {
        let first = t.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#')).unwrap_or("");
        if first.starts_with("==")
            || first.starts_with("I ")
            || first.starts_with("L ")
            || first.starts_with("S ")
            || first.starts_with("M ")
        {
            return Ok(Format::Lackey);
        }
        if first.starts_with("LD ") || first.starts_with("ST ") {
            return Ok(Format::Ramulator);
        }
        let words: Vec<&str> = first.split_whitespace().collect();
        // The operation words the DRAMsim3 reader accepts (text.rs).
        if words.len() == 3
            && matches!(
                words[1],
                "READ" | "WRITE" | "read" | "write" | "P_MEM_RD" | "P_MEM_WR" | "P_FETCH" | "P_LOCK_RD" | "P_LOCK_WR" | "BOFF"
            )
        {
            return Ok(Format::Dramsim3);
        }
        let shown: String = first.chars().take(40).collect();
        return Err(unknown(format!("text whose first line `{shown}` is no known trace line")));
    }
    // ChampSim has no magic: the name picks the cloudsuite layout, and the
    // first records must all be ones a ChampSim tracer writes.
    let (format, layout) = if path.to_string_lossy().contains("cloudsuite") {
        (Format::ChampsimCloudsuite, champsim::CLOUDSUITE_INSTR)
    } else {
        (Format::Champsim, champsim::INPUT_INSTR)
    };
    if head.len() < layout.record_bytes {
        return Err(unknown(format!("{} bytes, less than one {}-byte ChampSim record", head.len(), layout.record_bytes)));
    }
    for (i, rec) in head.chunks_exact(layout.record_bytes).enumerate() {
        if let Some(why) = champsim::impossible(rec, layout, i as u64) {
            return Err(unknown(format!("binary data that is not ChampSim {} records (record {i}: {why})", layout.name)));
        }
    }
    Ok(format)
}

/// `n` instructions without a memory access as `compute` records (more
/// than one when `n` exceeds what a gap holds): how a reader hands out the
/// instructions after the last access of a trace.
pub fn compute_records(mut n: u64) -> Vec<TraceRecord> {
    let mut v = Vec::new();
    while n > 0 {
        let gap = n.min(u32::MAX as u64) as u32;
        v.push(TraceRecord::compute(gap));
        n -= gap as u64;
    }
    v
}

/// The folder traces are cached in: `$SPMSIM_CACHE`, else
/// `$XDG_CACHE_HOME/spmsim`, else `~/.cache/spmsim`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("SPMSIM_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(d).join("spmsim");
    }
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("."));
    home.join(".cache").join("spmsim")
}
