//! Recording a program under valgrind: lackey's output (or spmtrace's, at
//! simulation points) read from a pipe as the program runs, parsed line by
//! line, and written as a native trace with its instruction stream.
//!
//! ```text
//!  valgrind --tool=lackey --trace-mem=yes [-d -d --trace-flags=..] PROGRAM
//!     | fd 3 (PatientPipe) --lines--> Parser (mod.rs) --records--> NativeWriter (atomic)
//!     |                    --IR blocks--> vex::FrontEnd --> InsnWriter (TRACE.insn,
//!     |                                   bound to the trace's bytes by their digest)
//!     | stack range from valgrind's own messages (valgrind_stack)
//!  stop: the instructions asked for are recorded -> the program is killed
//!  record_windows: spmtrace prints lackey's lines only inside each window,
//!                  one trace per window
//! ```

use super::Parser;
use crate::trace::event::Op;
#[cfg(unix)]
use crate::trace::insn::{InsnTracker, InsnWriter};
#[cfg(unix)]
use crate::trace::vex::FrontEnd;
use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
use std::collections::VecDeque;
#[cfg(unix)]
use std::io::BufRead;
use std::path::{Path, PathBuf};

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
    /// Run the program in `env` alone (with a fixed PATH, and HOME and PWD
    /// the working folder), not in spmsim's own environment: the bytes of
    /// the environment sit on the program's stack, so an inherited one (the
    /// shell's, the path spmsim was started from) would move the stack's
    /// addresses from one recording to the next.
    pub isolated: bool,
    /// Where spmtrace's folder is linked for this run (`record_windows`
    /// only; none: it is named where it was built, in the cache). Valgrind
    /// passes its `VALGRIND_LIB` on to the program, and an `LD_PRELOAD`
    /// naming a library in it, so a path that does not depend on the
    /// cache's keeps the program's environment the same.
    pub tool_link: Option<PathBuf>,
}

/// Give `cmd` the program's environment: `env` over spmsim's own, or, when
/// `isolated`, `env` with a fixed PATH, and HOME and PWD the working folder,
/// alone; variables `cmd` already sets for valgrind itself are kept. (PWD
/// is set so the program sees the same whether `valgrind` is a shell script
/// that would export it, as Debian's is, or not.)
pub fn program_env(cmd: &mut std::process::Command, env: &[(String, String)], isolated: bool, cwd: Option<&Path>) {
    if isolated {
        let own: Vec<(std::ffi::OsString, std::ffi::OsString)> =
            cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k.to_owned(), v.to_owned()))).collect();
        cmd.env_clear();
        cmd.env("PATH", "/usr/local/bin:/usr/bin:/bin");
        if let Some(d) = cwd {
            cmd.env("HOME", d).env("PWD", d);
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
        if crate::trace::vex::is_front_end(l) {
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
    let mut tool = crate::trace::vgtool::ensure(&opts.cache)?;
    if let Some(link) = &opts.run.tool_link {
        tool = tool.linked_at(link)?;
    }
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
    // The stacks of the threads beside the main one (whose stack is
    // `stack_range`), as spmtrace says them when each thread starts; a
    // later thread may get an ended one's stack back (glibc keeps them).
    let mut thread_stacks: Vec<(u64, u64)> = Vec::new();
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
                (Some("stack"), Some(thread), Some(lo)) => match num(3) {
                    Some(hi) if lo < hi => {
                        if thread > 1 && !thread_stacks.contains(&(lo, hi)) {
                            if let Some((w, _, _)) = &cap {
                                // The window's header is written: its
                                // later windows list the stack, this one
                                // cannot.
                                eprintln!(
                                    "trace record: {}: thread {thread} started inside window {w}: its stack is not in that window's header, \
                                     so persistent=heap takes its stores there for the heap's",
                                    opts.outs[*w].display()
                                );
                            }
                            thread_stacks.push((lo, hi));
                        }
                    }
                    _ => break Err(format!("trace record: spmtrace printed a bad stack line `{}`", String::from_utf8_lossy(l))),
                },
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
                    header.thread_stacks = thread_stacks.clone();
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
        if crate::trace::vex::is_front_end(l) {
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
        let insn_path = crate::trace::insn::path_for(out);
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
        if self.iw.count != sum.recorded_instructions {
            return Err(format!(
                "trace record: the instruction stream has {} entries for {} recorded instructions (a recorder fault)",
                self.iw.count, sum.recorded_instructions
            ));
        }
        // The trace is written whole first; the stream records the digest
        // of its bytes and is published before it, so a trace never stands
        // without its stream, and a stream beside a trace of other bytes
        // (the process stopped between the two renames) is refused.
        let finishing = |e: std::io::Error| format!("trace record: finishing {}: {e}", self.out.display());
        let sealed = self.w.seal().map_err(finishing)?;
        let digest = crate::util::digest::file_digest(sealed.written()).map_err(|e| format!("trace record: {e}"))?;
        sum.stream_instructions = self.iw.finish(self.p.folded, &digest).map_err(insn_err)?;
        sealed.publish().map_err(finishing)?;
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
            let mut scan = crate::trace::valgrind_stack::StackScan::default();
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
        assert_eq!(run(true), ["HOME=/work/x", "LC_ALL=C", "PATH=/usr/local/bin:/usr/bin:/bin", "PWD=/work/x", "VALGRIND_LIB=/lib/tool"]);
        // Not isolated: spmsim's own environment comes along (cargo sets
        // CARGO_PKG_NAME for a test run).
        let inherited = run(false);
        assert!(inherited.iter().any(|l| l.starts_with("CARGO_PKG_NAME=")) && inherited.contains(&"LC_ALL=C".to_string()), "{inherited:?}");
    }
}
