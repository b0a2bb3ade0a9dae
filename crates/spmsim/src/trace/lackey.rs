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

use super::compress::{self, Stream};
use super::event::Op;
#[cfg(unix)]
use super::insn::{InsnTracker, InsnWriter};
#[cfg(unix)]
use super::vex::FrontEnd;
use super::{AddressSpace, NativeWriter, Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::{Path, PathBuf};

/// How recorded lackey output becomes a trace; a change that moves a
/// recorded trace changes this, so the suite records its traces again.
pub const RECORDING_RULES: &str = "spmsim lackey rules 3: rep iterations folded, stack range recorded, instruction stream";

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

/// Write the pending records, counting them into `sum`.
#[cfg(unix)]
fn write_all(w: &mut NativeWriter, pending: &mut VecDeque<TraceRecord>, sum: &mut RecordSummary) -> std::io::Result<()> {
    while let Some(rec) = pending.pop_front() {
        match rec.op {
            Op::Load => sum.loads += 1,
            Op::Store => sum.stores += 1,
            _ => {}
        }
        sum.records += 1;
        w.write(&rec)?;
    }
    Ok(())
}

/// How to record a program under lackey.
#[derive(Clone, Debug, Default)]
pub struct RecordOptions {
    /// argv\[0\] and the arguments.
    pub program: Vec<String>,
    pub cwd: Option<PathBuf>,
    /// File fed to the program's standard input (none: `/dev/null`).
    pub stdin: Option<PathBuf>,
    /// Instructions run before recording starts.
    pub skip: u64,
    /// Stop the program after this many recorded instructions.
    pub instructions: Option<u64>,
    pub persistent_ranges: Vec<(u64, u64)>,
    /// The native trace to write (atomically: it appears complete or not at all).
    pub out: PathBuf,
    /// Free text stored in the trace header.
    pub source: String,
    /// Environment variables set for the program (beside the inherited
    /// ones, unless `isolated`).
    pub env: Vec<(String, String)>,
    /// Run the program in `env` alone (with a fixed PATH and HOME, the
    /// working folder), not in spmsim's own environment: the bytes of the
    /// environment sit on the program's stack, so an inherited one (the
    /// shell's, the path spmsim was started from) would move the stack's
    /// addresses from one recording to the next.
    pub isolated: bool,
}

/// Give `cmd` the program's environment: `env` over spmsim's own, or, when
/// `isolated`, `env` with a fixed PATH and HOME (the working folder) alone;
/// variables `cmd` already sets for valgrind itself are kept.
pub fn program_env(cmd: &mut std::process::Command, env: &[(String, String)], isolated: bool, cwd: Option<&Path>) {
    if isolated {
        let own: Vec<(std::ffi::OsString, std::ffi::OsString)> =
            cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))).collect();
        cmd.env_clear();
        cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
        if let Some(d) = cwd {
            cmd.env("HOME", d);
        }
        cmd.envs(own);
    }
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
}

#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordSummary {
    pub skipped_instructions: u64,
    pub recorded_instructions: u64,
    pub loads: u64,
    pub stores: u64,
    pub records: u64,
    /// The program ran to its end (rather than being stopped at the limit).
    pub program_finished: bool,
    /// Lackey instruction lines folded into the `rep` instruction they
    /// iterate (not counted in `recorded_instructions`).
    #[serde(default)]
    pub folded_iterations: u64,
    /// Entries of the instruction stream written beside the trace
    /// (`TRACE.insn`; one per recorded instruction).
    #[serde(default)]
    pub stream_instructions: u64,
    /// Instructions whose translation valgrind's front end did not print
    /// (written as one-cycle ALU operations without sources).
    #[serde(default)]
    pub untranslated_instructions: u64,
}

/// Run `opts.program` under `valgrind --tool=lackey --trace-mem=yes` and
/// convert its output into a native trace as it arrives. Valgrind writes
/// its log to a pipe on descriptor 3, so the program's own output stays
/// apart and no text trace touches the disk.
#[cfg(unix)]
pub fn record(opts: &RecordOptions) -> Result<RecordSummary, String> {
    let mut cmd = std::process::Command::new("valgrind");
    cmd.args(["--tool=lackey", "--trace-mem=yes"]);
    let mut run = Valgrind::start(cmd, opts)?;
    let mut header = TraceHeader::new("lackey", AddressSpace::Virtual, false);
    header.source = if opts.source.is_empty() { format!("valgrind lackey: {}", opts.program.join(" ")) } else { opts.source.clone() };
    header.persistent_ranges = opts.persistent_ranges.clone();
    header.skipped_instructions = opts.skip;
    header.stack_range = run.stack_range;
    let mut cap = Capture::create(&header, &opts.out, opts.skip)?;
    let mut front = FrontEnd::default();
    let limit = opts.instructions.map(|n| opts.skip + n);
    let mut stopped = false;
    let outcome: Result<(), String> = loop {
        let (lineno, l) = match run.next_line() {
            Ok(Some(x)) => x,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        if let Some(lim) = limit {
            // The instruction that would pass the limit is not recorded.
            if cap.p.instructions >= lim && l.first() == Some(&b'I') && !cap.p.repeats(l) {
                stopped = true;
                break Ok(());
            }
        }
        if super::vex::is_front_end(l) {
            front.feed(&String::from_utf8_lossy(l));
            continue;
        }
        if let Err(e) = cap.feed(l, lineno, &front) {
            break Err(e);
        }
    };
    run.end(stopped || outcome.is_err(), opts)?;
    outcome?;
    if cap.p.instructions <= opts.skip {
        return Err(format!(
            "trace record: the program ran only {} instructions, not more than the {} to skip",
            cap.p.instructions, opts.skip
        ));
    }
    front.finish();
    cap.finish(&front, opts.skip, stopped)
}

/// How to record windows of a program's run with spmsim's own tool.
#[derive(Clone, Debug, Default)]
pub struct WindowOptions {
    /// The program, its folder and input, and the trace header's fields;
    /// `skip`, `instructions` and `out` are not used.
    pub run: RecordOptions,
    /// (instructions before the window, instructions in it), ascending
    /// and disjoint, counted as valgrind counts them (each iteration of a
    /// `rep` instruction is one).
    pub windows: Vec<(u64, u64)>,
    /// The trace of each window.
    pub outs: Vec<PathBuf>,
    /// Stop a window's trace once it holds this many (architectural)
    /// instructions; windows are counted with each `rep` iteration as one,
    /// so a window longer than this leaves room for folded iterations.
    pub instructions: Option<u64>,
    /// The cache folder the tool is built in.
    pub cache: PathBuf,
}

/// Record several windows of one run of a program under `spmtrace`
/// (vgtool.rs), which runs the program at valgrind's own speed between
/// them: one trace (and instruction stream) per window, each with the
/// instructions before it as its `skipped_instructions`. A window the
/// program does not reach has no trace and is missing from the result.
#[cfg(unix)]
pub fn record_windows(opts: &WindowOptions) -> Result<Vec<RecordSummary>, String> {
    if opts.windows.is_empty() || opts.windows.len() != opts.outs.len() {
        return Err(format!("trace record: {} windows for {} output files", opts.windows.len(), opts.outs.len()));
    }
    let tool = super::vgtool::ensure(&opts.cache)?;
    let mut cmd = tool.command();
    let list: Vec<String> = opts.windows.iter().map(|(s, n)| format!("{s}+{n}")).collect();
    cmd.arg(format!("--windows={}", list.join(",")));
    let mut run = Valgrind::start(cmd, &opts.run)?;
    let mut front = FrontEnd::default();
    // The window being written, and the instructions run before it.
    let mut cap: Option<(usize, u64, Capture)> = None;
    let mut sums = Vec::new();
    let mut done = false;
    let stack_range = run.stack_range;
    let outcome: Result<(), String> = loop {
        let (lineno, l) = match run.next_line() {
            Ok(Some(x)) => x,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        if let Some(m) = l.strip_prefix(b"SPMTRACE ") {
            let words: Vec<&str> = std::str::from_utf8(m).unwrap_or("").split(' ').collect();
            let num = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
            match (words.first().copied(), num(1), num(2)) {
                (Some("begin"), Some(w), Some(before)) if (w as usize) < opts.outs.len() => {
                    let w = w as usize;
                    let mut header = TraceHeader::new("spmtrace", AddressSpace::Virtual, false);
                    header.source = format!(
                        "{} (window {w} of {}, valgrind spmtrace)",
                        if opts.run.source.is_empty() { opts.run.program.join(" ") } else { opts.run.source.clone() },
                        opts.windows.len()
                    );
                    header.persistent_ranges = opts.run.persistent_ranges.clone();
                    header.skipped_instructions = before;
                    header.stack_range = stack_range;
                    match Capture::create(&header, &opts.outs[w], 0) {
                        Ok(c) => cap = Some((w, before, c)),
                        Err(e) => break Err(e),
                    }
                }
                (Some("end"), Some(w), Some(_)) => {
                    if let Some((cw, before, c)) = cap.take() {
                        if cw as u64 != w {
                            break Err(format!("trace record: spmtrace ended window {w} while window {cw} was open"));
                        }
                        if let Err(e) = close_window(&mut front, before, c, &mut sums) {
                            break Err(e);
                        }
                    }
                }
                (Some("done"), _, _) => {
                    done = true;
                    break Ok(());
                }
                (Some("exit"), _, _) => {}
                _ => {
                    break Err(format!("trace record: spmtrace printed `{}`, which this spmsim does not know", String::from_utf8_lossy(l)))
                }
            }
            continue;
        }
        if super::vex::is_front_end(l) {
            front.feed(&String::from_utf8_lossy(l));
            continue;
        }
        if let Some((_, _, c)) = cap.as_mut() {
            if let Some(lim) = opts.instructions {
                if c.p.instructions >= lim && l.first() == Some(&b'I') && !c.p.repeats(l) {
                    // Full: the rest of the window is not recorded.
                    let (_, before, c) = cap.take().expect("a window is open");
                    if let Err(e) = close_window(&mut front, before, c, &mut sums) {
                        break Err(e);
                    }
                    if sums.len() == opts.windows.len() {
                        // The last window is full: nothing after it is
                        // recorded, so the program need not run on.
                        done = true;
                        break Ok(());
                    }
                    continue;
                }
            }
            if let Err(e) = c.feed(l, lineno, &front) {
                break Err(e);
            }
        }
    };
    run.end(done || outcome.is_err(), &opts.run)?;
    outcome?;
    Ok(sums)
}

/// Publish a window's trace, `before` instructions into the run.
#[cfg(unix)]
fn close_window(front: &mut FrontEnd, before: u64, c: Capture, sums: &mut Vec<RecordSummary>) -> Result<(), String> {
    front.finish();
    let mut s = c.finish(front, 0, true)?;
    s.skipped_instructions = before;
    sums.push(s);
    Ok(())
}

/// One trace being written from valgrind's log: the parser's state, the
/// trace and its instruction stream.
#[cfg(unix)]
struct Capture {
    w: NativeWriter,
    out: PathBuf,
    p: Parser,
    iw: InsnWriter,
    insn_path: PathBuf,
    tracker: InsnTracker,
    pending: VecDeque<TraceRecord>,
    sum: RecordSummary,
}

#[cfg(unix)]
impl Capture {
    fn create(header: &TraceHeader, out: &Path, skip: u64) -> Result<Self, String> {
        let w = NativeWriter::create(out, header).map_err(|e| format!("trace record: {}: {e}", out.display()))?;
        let insn_path = super::insn::path_for(out);
        let iw = InsnWriter::create(&insn_path).map_err(|e| format!("trace record: {}: {e}", insn_path.display()))?;
        Ok(Capture {
            w,
            out: out.to_path_buf(),
            p: Parser { skip, pcs: Some(Vec::new()), ..Parser::default() },
            iw,
            insn_path,
            tracker: InsnTracker::new(),
            pending: VecDeque::new(),
            sum: RecordSummary::default(),
        })
    }

    /// One line of lackey's format.
    fn feed(&mut self, l: &[u8], lineno: u64, front: &FrontEnd) -> Result<(), String> {
        self.p
            .feed(l, &mut self.pending)
            .map_err(|m| format!("trace record: valgrind output line {lineno}: {m} in `{}`", String::from_utf8_lossy(l)))?;
        push_pcs(&mut self.p, &mut self.tracker, front, &mut self.iw)
            .map_err(|e| format!("trace record: writing {}: {e}", self.insn_path.display()))?;
        write_all(&mut self.w, &mut self.pending, &mut self.sum).map_err(|e| format!("trace record: writing {}: {e}", self.out.display()))
    }

    /// Write what is held and publish the trace and its stream.
    fn finish(mut self, front: &FrontEnd, skip: u64, stopped: bool) -> Result<RecordSummary, String> {
        // The instructions after the last access are part of the trace too, so
        // `trace info` counts what was recorded.
        self.p.finish(&mut self.pending);
        write_all(&mut self.w, &mut self.pending, &mut self.sum)
            .map_err(|e| format!("trace record: writing {}: {e}", self.out.display()))?;
        let mut sum = self.sum;
        sum.skipped_instructions = skip;
        sum.recorded_instructions = self.p.instructions - skip.min(self.p.instructions);
        sum.folded_iterations = self.p.folded;
        sum.program_finished = !stopped;
        let insn_path = self.insn_path;
        let insn_err = |e: std::io::Error| format!("trace record: writing {}: {e}", insn_path.display());
        push_pcs(&mut self.p, &mut self.tracker, front, &mut self.iw).map_err(insn_err)?;
        self.tracker.finish(&mut self.iw).map_err(insn_err)?;
        sum.untranslated_instructions = self.tracker.unknown;
        sum.stream_instructions = self.iw.finish(self.p.folded).map_err(insn_err)?;
        if sum.stream_instructions != sum.recorded_instructions {
            return Err(format!(
                "trace record: the instruction stream has {} entries for {} recorded instructions (a recorder fault)",
                sum.stream_instructions, sum.recorded_instructions
            ));
        }
        // The stream is published first, so a trace never stands without it.
        self.w.finish().map_err(|e| format!("trace record: finishing {}: {e}", self.out.display()))?;
        Ok(sum)
    }
}

/// A program running under valgrind with its log on a pipe.
#[cfg(unix)]
struct Valgrind {
    child: std::process::Child,
    log: std::io::BufReader<PatientPipe>,
    line: Vec<u8>,
    lineno: u64,
    err_tail: std::thread::JoinHandle<String>,
    /// Where valgrind put the main thread's stack, if it said.
    stack_range: Option<(u64, u64)>,
}

#[cfg(unix)]
impl Valgrind {
    /// Start `cmd` (valgrind with its tool's arguments) on `opts.program`.
    fn start(mut cmd: std::process::Command, opts: &RecordOptions) -> Result<Self, String> {
        use std::io::BufReader;
        use std::os::fd::FromRawFd;
        use std::os::unix::process::CommandExt;
        use std::process::Stdio;

        if opts.program.is_empty() {
            return Err("trace record: no program given".into());
        }
        let mut fds = [0i32; 2];
        // SAFETY: `fds` is a valid array of two descriptors for pipe2 to fill.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(format!("trace record: cannot create a pipe: {}", std::io::Error::last_os_error()));
        }
        let (read_fd, write_fd) = (fds[0], fds[1]);
        // `-d -d` makes valgrind print where it put the program's stack (on
        // stderr, at start-up), which the header records (valgrind_stack).
        // `--trace-flags=10000000` prints each translated block's front-end
        // IR into the same log, ahead of the block's first execution: the
        // registers, units and branches of the instruction stream (vex.rs).
        cmd.args(["-d", "-d", "--trace-flags=10000000", "--trace-notbelow=0", "--log-fd=3"]).args(&opts.program);
        if let Some(d) = &opts.cwd {
            cmd.current_dir(d);
        }
        program_env(&mut cmd, &opts.env, opts.isolated, opts.cwd.as_deref());
        let stdin = match &opts.stdin {
            Some(p) => Stdio::from(std::fs::File::open(p).map_err(|e| format!("trace record: stdin file {}: {e}", p.display()))?),
            None => Stdio::null(),
        };
        cmd.stdin(stdin).stdout(Stdio::null()).stderr(Stdio::piped());
        // SAFETY: only async-signal-safe calls (dup2) run between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::dup2(write_fd, 3) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let spawned = cmd.spawn();
        // SAFETY: the parent owns both ends; the write end is closed here so the
        // read end sees end-of-file when valgrind exits.
        unsafe { libc::close(write_fd) };
        // SAFETY: read_fd is an open descriptor that nothing else owns.
        let log = unsafe { std::fs::File::from_raw_fd(read_fd) };
        let mut child = spawned.map_err(|e| format!("trace record: cannot start valgrind (is it installed?): {e}"))?;
        // Drain the program's stderr on a thread so it can never block on a full pipe.
        let mut err_pipe = child.stderr.take().expect("stderr is piped");
        let (stack_tx, stack_rx) = std::sync::mpsc::channel::<Option<(u64, u64)>>();
        let err_tail = std::thread::spawn(move || {
            let mut scan = super::valgrind_stack::StackScan::default();
            let mut sent = false;
            let mut tail: VecDeque<String> = VecDeque::new();
            for l in BufReader::new(&mut err_pipe).lines() {
                let Ok(l) = l else { break };
                if !sent {
                    scan.feed(&l);
                    if let Some(r) = scan.range() {
                        let _ = stack_tx.send(Some(r));
                        sent = true;
                    }
                }
                // valgrind's own debug lines (`--PID:LEVEL: ...`) are not the
                // program's output: keep them out of an error message.
                let debug = l.strip_prefix("--").and_then(|r| r.split(':').nth(1)).is_some_and(|lvl| lvl.trim().parse::<u32>().is_ok());
                if !debug {
                    tail.push_back(l);
                    if tail.len() > 40 {
                        tail.pop_front();
                    }
                }
            }
            if !sent {
                let _ = stack_tx.send(None);
            }
            tail.into_iter().collect::<Vec<_>>().join("\n")
        });
        // Valgrind says where the stack is before the program starts, so this
        // wait is short; a valgrind that does not say leaves the range unknown.
        let stack_range = stack_rx.recv_timeout(std::time::Duration::from_secs(30)).ok().flatten();
        Ok(Valgrind {
            child,
            log: BufReader::with_capacity(1 << 20, PatientPipe::new(log)),
            line: Vec::with_capacity(64),
            lineno: 0,
            err_tail,
            stack_range,
        })
    }

    /// The log's next line (its number, its text without the newline);
    /// `None` at its end.
    fn next_line(&mut self) -> Result<Option<(u64, &[u8])>, String> {
        self.line.clear();
        match self.log.read_until(b'\n', &mut self.line) {
            Ok(0) => Ok(None),
            Ok(_) => {
                self.lineno += 1;
                Ok(Some((self.lineno, self.line.strip_suffix(b"\n").unwrap_or(&self.line))))
            }
            Err(e) => Err(format!("trace record: reading valgrind's output: {e}")),
        }
    }

    /// Wait for valgrind (killing it first when `kill`); an exit that was
    /// neither asked for nor clean is an error carrying its last output.
    fn end(mut self, kill: bool, opts: &RecordOptions) -> Result<(), String> {
        if kill {
            let _ = self.child.kill();
        }
        drop(self.log);
        let status = self.child.wait().map_err(|e| format!("trace record: waiting for valgrind: {e}"))?;
        let tail = self.err_tail.join().unwrap_or_default();
        if !kill && !status.success() {
            return Err(format!(
                "trace record: `{}` under valgrind exited with {status}; its last output:\n{tail}",
                opts.program.join(" ")
            ));
        }
        Ok(())
    }
}

/// The read end of valgrind's log pipe. Valgrind writes its log in many
/// small pieces; a reader that wakes for each one costs more in system
/// time than valgrind itself (measured: 19 s of system time for a program
/// that runs in 2.4 s with its log sent to /dev/null). So the pipe is
/// made large and, after a short read, the reader waits a millisecond to
/// let valgrind fill it.
#[cfg(unix)]
struct PatientPipe {
    f: std::fs::File,
    last: usize,
}

#[cfg(unix)]
impl PatientPipe {
    const LARGE: usize = 1 << 18;
    fn new(f: std::fs::File) -> Self {
        use std::os::fd::AsRawFd;
        // SAFETY: F_SETPIPE_SZ on a descriptor this process owns; a
        // refusal (above the system's limit) leaves the pipe as it was.
        unsafe { libc::fcntl(f.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
        PatientPipe { f, last: Self::LARGE }
    }
}

#[cfg(unix)]
impl std::io::Read for PatientPipe {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.last < Self::LARGE.min(buf.len()) {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let n = self.f.read(buf)?;
        self.last = n;
        Ok(n)
    }
}

/// The instructions the parser recorded since the last call go into the
/// instruction stream.
#[cfg(unix)]
fn push_pcs(p: &mut Parser, t: &mut InsnTracker, front: &FrontEnd, w: &mut InsnWriter) -> std::io::Result<()> {
    if let Some(pcs) = &mut p.pcs {
        for (pc, len) in pcs.drain(..) {
            t.push(pc, len, &front.table, w)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn an_isolated_program_sees_only_its_own_environment() {
        let run = |isolated: bool| {
            let mut cmd = std::process::Command::new("/usr/bin/env");
            cmd.env("VALGRIND_LIB", "/lib/tool");
            program_env(&mut cmd, &[("LC_ALL".into(), "C".into())], isolated, Some(Path::new("/work/x")));
            let out = cmd.output().expect("/usr/bin/env runs");
            let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout).lines().map(String::from).collect();
            v.sort();
            v
        };
        assert_eq!(run(true), ["HOME=/work/x", "LC_ALL=C", "PATH=/usr/local/bin:/usr/bin:/bin", "VALGRIND_LIB=/lib/tool"]);
        // Not isolated: spmsim's own environment comes along (cargo sets
        // CARGO_PKG_NAME for a test run).
        let inherited = run(false);
        assert!(inherited.iter().any(|l| l.starts_with("CARGO_PKG_NAME=")) && inherited.contains(&"LC_ALL=C".to_string()), "{inherited:?}");
    }

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
