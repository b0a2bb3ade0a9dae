//! Multi-threaded and multi-programmed workloads: one thread
//! per core, each thread's events tagged with it ([`Event::thread`]).
//!
//! Three forms, all a [`ThreadSpec`] inside [`WorkloadKind::Threads`]:
//!
//! * `KIND:threads=N,data=partitioned|shared,KEYS` for every persistent
//!   generator (`data` defaults to `partitioned`; `threads=1` is the plain
//!   single-threaded workload, its name and events unchanged);
//! * `mix:a=array-swap,b=queue,...` or `mix:suite:gcc,suite:xz`: one
//!   single-threaded program per core; the presets `mix1`..`mix4` of
//!   Triad-NVM Table II; a part's `warmup=N` key gives it its own warm-up
//!   in place of the run's;
//! * `trace:a.trace,b.trace`: one trace per core.
//!
//! ```text
//!  partitioned (and every mix or list of traces), N threads:
//!    span = memory.capacity_bytes / N, rounded down to 4 KiB
//!    thread t's generator runs alone in [0, span) (log 0..4 MiB, roots at
//!    4 MiB, heap from 8 MiB, as pheap lays it out) and lands at t * span:
//!    addr -> addr + t * span; an access beyond span ends t's stream
//!  shared, N threads, one generator:
//!    [0, N * 4 MiB)       the undo logs: thread t's at t * 4 MiB
//!    log address a < 4 MiB of thread t        -> a + t * 4 MiB
//!    any other address a                      -> a + (N - 1) * 4 MiB
//!    lock word: generator address HEAP_BASE - 64 (the last block of the
//!      root region, which no generator uses), so 8 MiB - 64 + (N-1) * 4 MiB
//! ```
//!
//! Seeds: thread 0 keeps the run seed; thread (or mix program) `t > 0`
//! runs with `pheap::mix(seed, t)`.
//!
//! Shared data: the generator's transactions are dealt to the threads in
//! ticket order, the `k`-th to thread `k mod N` (so thread `t`'s `j`-th
//! transaction holds ticket `j * N + t`, [`WorkloadKind::shared_lock`]).
//! A unit dealt is one transaction: an operation's events up to and
//! including its `tx-commit` (an operation that commits early because its
//! log filled is two units; the initial population of `populate=true`
//! travels with the first). A unit with a transaction takes the lock: a
//! volatile load and, as the same instruction (a read-modify-write), a
//! volatile store of the ticket + 1 to the lock word before it, and a
//! volatile store of 0 after its `tx-commit`. An operation without a
//! transaction (`daxbench`) is one unit and takes no lock.
//!
//! [`WorkloadKind::generate`] and [`WorkloadKind::stream`] give the merged
//! stream: operation `i` from thread `i mod N` (a thread whose trace ended
//! is skipped); for shared data that is the generator's own order with the
//! lock events. Without a memory capacity (`generate`), partitions are cut
//! as for the default 8 GiB memory ([`GENERATE_CAPACITY`]).
//!
//! This file holds the spec (its forms, parsing, names, notes and the
//! address rules above); `sources.rs` the sources that produce the events.

mod sources;

pub(in crate::workload) use sources::OpSource;

use super::{pheap, WorkloadKind};
use serde::Serialize;

/// Threads (cores) a workload may have.
pub const MAX_THREADS: usize = 64;
/// Partitions are cut on page boundaries.
pub const PARTITION_ALIGN: u64 = 4096;
/// The lock word of shared data, as the generator's address space has it
/// (relocated like any shared address, [`shared_address`]).
pub const LOCK_WORD: u64 = pheap::HEAP_BASE - 64;
/// The memory partitioned when no capacity is given (`generate`): the
/// default `memory.capacity_bytes`, the 8 GB PCM every generator fits.
pub const GENERATE_CAPACITY: u64 = pheap::ADDR_LIMIT;

/// How the threads of `KIND:threads=N` hold the structure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DataMode {
    /// Each thread its own instance in its own address range.
    Partitioned,
    /// One instance, transactions taken in ticket order under a lock.
    Shared,
}

impl DataMode {
    pub fn name(self) -> &'static str {
        match self {
            DataMode::Partitioned => "partitioned",
            DataMode::Shared => "shared",
        }
    }
}

/// Which spelling a [`ThreadSpec`] came from (and is named back in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThreadForm {
    /// `KIND:threads=N,data=..`: copies of one generator.
    Copies,
    /// `mix:..` or a preset: one program per core.
    Mix,
    /// `trace:a,b`: one trace per core.
    Traces,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThreadSpec {
    /// Threads, one per core (1..=64).
    pub threads: usize,
    /// Single-threaded workloads: one per thread (partitioned), or the one
    /// all threads share (shared).
    pub parts: Vec<WorkloadKind>,
    /// The label of each part in a mix (`a=` of `mix:a=queue`).
    pub part_labels: Vec<Option<String>>,
    /// A mix part's own warm-up (`mix:a=suite:mcf,warmup=30000000,b=queue`),
    /// instead of the run's (`--warmup-instructions`): empty, or one per
    /// part.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub part_warmups: Vec<Option<u64>>,
    pub mode: DataMode,
    pub form: ThreadForm,
    /// The name to report instead of the spelled-out parts (`mix1`).
    pub label: Option<String>,
}

/// A mix part's spec without its `warmup=N` key, and that key's value: a
/// part may warm up as long as it does when it runs alone (a recorded
/// program after its cache warm-up, a generator from its first
/// instruction), whatever the run's `--warmup-instructions` says.
fn split_warmup(spec: &str) -> Result<(String, Option<u64>), String> {
    let Some((head, keys)) = spec.split_once(':') else {
        return Ok((spec.to_string(), None));
    };
    let mut warmup = None;
    let mut kept = Vec::new();
    for k in keys.split(',') {
        match k.strip_prefix("warmup=") {
            Some(v) => {
                let n = v
                    .trim()
                    .parse::<u64>()
                    .map_err(|_| format!("mix workload, program `{spec}`: warmup=`{v}` is not a count of instructions"))?;
                if warmup.replace(n).is_some() {
                    return Err(format!("mix workload, program `{spec}`: warmup= given twice"));
                }
            }
            None => kept.push(k),
        }
    }
    let spec = if kept.is_empty() { head.to_string() } else { format!("{head}:{}", kept.join(",")) };
    Ok((spec, warmup))
}

/// The seed of thread (or mix program) `t`: the run seed for thread 0.
pub fn thread_seed(seed: u64, t: usize) -> u64 {
    if t == 0 {
        seed
    } else {
        pheap::mix(seed, t as u64)
    }
}

/// Bytes of each thread's partition: `capacity / threads`, rounded down to
/// a multiple of 4 KiB.
pub fn partition_span(capacity_bytes: u64, threads: usize) -> Result<u64, String> {
    let span = capacity_bytes / threads as u64 / PARTITION_ALIGN * PARTITION_ALIGN;
    if span == 0 {
        return Err(format!("memory.capacity_bytes = {capacity_bytes} is too small to give each of {threads} threads a 4 KiB partition"));
    }
    Ok(span)
}

/// Where shared data's address `addr` of thread `t` (of `threads`) lands:
/// the undo-log region per thread, everything else above all the logs.
pub fn shared_address(addr: u64, t: usize, threads: usize) -> u64 {
    if addr < pheap::LOG_BYTES {
        addr + t as u64 * pheap::LOG_BYTES
    } else {
        addr + (threads as u64 - 1) * pheap::LOG_BYTES
    }
}

/// Kinds that start a part of a mix (and names that may follow `LABEL=`).
const PART_STARTS: [&str; 12] =
    ["array", "queue", "btree", "hash", "rbtree", "ycsb", "tpcc", "daxbench", "array-swap", "random-writes", "seq-writes", "synthetic"];

fn starts_workload(s: &str) -> bool {
    PART_STARTS.iter().any(|k| s == *k || s.strip_prefix(k).is_some_and(|r| r.starts_with(':')))
        || ["daxbench-", "suite:", "trace:"].iter().any(|p| s.starts_with(p))
        || s.ends_with(".toml")
}

fn valid_label(l: &str) -> bool {
    !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// `LABEL=spec` or `spec`, when the segment starts a part.
pub(super) fn part_start(seg: &str) -> Option<(Option<&str>, &str)> {
    if starts_workload(seg) {
        return Some((None, seg));
    }
    let (l, spec) = seg.split_once('=')?;
    (valid_label(l) && starts_workload(spec)).then_some((Some(l), spec))
}

fn check_threads(n: usize, what: &str) -> Result<(), String> {
    if !(1..=MAX_THREADS).contains(&n) {
        return Err(format!("{what}: threads must be 1 to {MAX_THREADS}, got {n}"));
    }
    Ok(())
}

/// Triad-NVM Table II's multi-programmed mixes (`mix1`..`mix4`), or `None`
/// if `name` is not one.
pub fn preset(name: &str) -> Option<Result<WorkloadKind, String>> {
    let lower = name.to_ascii_lowercase();
    // MIX2 and MIX3 hold SPEC CPU2006's mcf and lbm, which spmsim cannot
    // ship: the memory-intensive suite's stand-ins take their place, every
    // access non-persistent (`configs/suite/memory-intensive.toml`).
    let parts: &[&str] = match lower.as_str() {
        "mix1" => &["array-swap", "queue", "hash", "daxbench-64-2"],
        "mix2" => &["suite:mcf#persistent=none", "queue", "hash", "daxbench-64-2"],
        "mix3" => &["suite:mcf#persistent=none", "suite:lbm#persistent=none", "hash", "daxbench-512-2"],
        "mix4" => &["array-swap", "hash", "hash", "daxbench-1024-2"],
        // DAXBENCH1..4 are one program each (Table II lists one
        // DAXBENCH-S-RW per row): `daxbench-S-RW` is S-byte stride, RW
        // reads per write.
        "daxbench1" => return Some(WorkloadKind::parse("daxbench-128-2")),
        "daxbench2" => return Some(WorkloadKind::parse("daxbench-1024-2")),
        "daxbench3" => return Some(WorkloadKind::parse("daxbench-256-2")),
        "daxbench4" => return Some(WorkloadKind::parse("daxbench-512-3")),
        _ => return None,
    };
    Some((|| {
        let parts = parts.iter().map(|p| WorkloadKind::parse(p)).collect::<Result<Vec<_>, _>>()?;
        Ok(ThreadSpec::partitioned(parts, ThreadForm::Mix, Some(lower.clone())))
    })())
}

impl ThreadSpec {
    /// One unlabelled part per core, each in its own partition.
    fn partitioned(parts: Vec<WorkloadKind>, form: ThreadForm, label: Option<String>) -> WorkloadKind {
        WorkloadKind::Threads(ThreadSpec {
            threads: parts.len(),
            part_labels: vec![None; parts.len()],
            part_warmups: Vec::new(),
            parts,
            mode: DataMode::Partitioned,
            form,
            label,
        })
    }

    /// `threads` copies of the single-threaded generator `base`.
    pub fn copies(base: WorkloadKind, threads: usize, mode: DataMode) -> Result<WorkloadKind, String> {
        check_threads(threads, &base.name())?;
        if threads == 1 {
            return Ok(base);
        }
        let parts = match mode {
            DataMode::Partitioned => vec![base; threads],
            DataMode::Shared => vec![base],
        };
        Ok(WorkloadKind::Threads(ThreadSpec {
            threads,
            part_labels: vec![None; parts.len()],
            part_warmups: Vec::new(),
            parts,
            mode,
            form: ThreadForm::Copies,
            label: None,
        }))
    }

    /// The body of `mix:BODY`.
    pub fn parse_mix(body: &str) -> Result<WorkloadKind, String> {
        let mut specs: Vec<(Option<String>, String)> = Vec::new();
        for seg in body.split(',') {
            let seg = seg.trim();
            if seg.is_empty() {
                continue;
            }
            match part_start(seg) {
                Some((label, spec)) => specs.push((label.map(str::to_string), spec.to_string())),
                None => match specs.last_mut() {
                    Some((_, spec)) if seg.contains('=') => {
                        spec.push(if spec.contains(':') { ',' } else { ':' });
                        spec.push_str(seg);
                    }
                    _ => {
                        return Err(format!(
                        "mix workload: `{seg}` is neither a workload, LABEL=workload nor a key=value of the program before it (a mix is \
                             mix:a=array-swap,b=queue:size_mib=64,gap=3,... or mix:suite:gcc,trace:PATH)"
                    ))
                    }
                },
            }
        }
        Self::mix_of(specs)
    }

    /// A mix of `(label, spec)` parts.
    pub fn mix_of(specs: Vec<(Option<String>, String)>) -> Result<WorkloadKind, String> {
        if specs.is_empty() {
            return Err("mix workload: no programs given (mix:a=array-swap,b=queue,...)".into());
        }
        check_threads(specs.len(), "mix workload")?;
        let mut labels = Vec::new();
        let mut parts = Vec::new();
        let mut warmups = Vec::new();
        for (label, spec) in specs {
            let (spec, warmup) = split_warmup(&spec)?;
            if let Some(l) = &label {
                if labels.contains(&Some(l.clone())) {
                    return Err(format!("mix workload: label `{l}` given twice"));
                }
            }
            let w = WorkloadKind::parse(&spec).map_err(|e| format!("mix workload, program `{spec}`: {e}"))?;
            if w.threads() > 1 || matches!(w, WorkloadKind::Threads(_)) {
                return Err(format!("mix workload: program `{spec}` is multi-threaded; a mix runs one single-threaded program per core"));
            }
            labels.push(label);
            parts.push(w);
            warmups.push(warmup);
        }
        if warmups.iter().all(Option::is_none) {
            warmups.clear();
        }
        Ok(WorkloadKind::Threads(ThreadSpec {
            threads: parts.len(),
            parts,
            part_labels: labels,
            part_warmups: warmups,
            mode: DataMode::Partitioned,
            form: ThreadForm::Mix,
            label: None,
        }))
    }

    /// `trace:a,b,..`: one trace per core.
    pub fn parse_traces(body: &str) -> Result<WorkloadKind, String> {
        let parts = body.split(',').map(|p| super::TraceSpec::parse(p.trim()).map(WorkloadKind::Trace)).collect::<Result<Vec<_>, _>>()?;
        check_threads(parts.len(), "trace workload")?;
        Ok(ThreadSpec::partitioned(parts, ThreadForm::Traces, None))
    }

    pub fn name(&self) -> String {
        if let Some(l) = &self.label {
            return l.clone();
        }
        match self.form {
            ThreadForm::Copies => {
                let base = self.parts[0].name();
                let (kind, keys) = base.split_once(':').unwrap_or((&base, ""));
                let sep = if keys.is_empty() { "" } else { "," };
                format!("{kind}:threads={},data={}{sep}{keys}", self.threads, self.mode.name())
            }
            ThreadForm::Mix => {
                let parts: Vec<String> = self
                    .parts
                    .iter()
                    .zip(&self.part_labels)
                    .enumerate()
                    .map(|(t, (p, l))| {
                        let name = match self.part_warmup(t) {
                            Some(w) => format!("{},warmup={w}", p.name()),
                            None => p.name(),
                        };
                        match l {
                            Some(l) => format!("{l}={name}"),
                            None => name,
                        }
                    })
                    .collect();
                format!("mix:{}", parts.join(","))
            }
            ThreadForm::Traces => {
                let parts: Vec<String> = self.parts.iter().map(|p| p.name().trim_start_matches("trace:").to_string()).collect();
                format!("trace:{}", parts.join(","))
            }
        }
    }

    /// Part `t`'s own warm-up, if the mix gives it one.
    pub fn part_warmup(&self, t: usize) -> Option<u64> {
        self.part_warmups.get(t).copied().flatten()
    }

    /// What a report must say about how the threads use memory.
    pub fn notes(&self) -> Vec<String> {
        let n = self.threads;
        let seeds = "thread 0 keeps the run seed, thread t > 0 runs with mix(seed, t) (pheap::mix)";
        let layout = format!(
            "memory partitioned: thread t's addresses are offset by t x span, span = memory.capacity_bytes / {n} rounded down to 4 KiB \
             ({} bytes without a capacity); each thread's undo log is at the start of its partition",
            GENERATE_CAPACITY / n as u64 / PARTITION_ALIGN * PARTITION_ALIGN
        );
        let mut notes = match (self.form, self.mode) {
            (ThreadForm::Copies, DataMode::Shared) => vec![format!(
                "{n} threads share one {} on shared data (one seed): its transactions are dealt in ticket order, the k-th to thread k mod {n}; \
                 thread t's undo log is at [t x 4 MiB, (t+1) x 4 MiB), every other address moves up by {} MiB; each transaction takes a \
                 ticket lock, a volatile load and store of the lock word at {:#x} before tx-begin and a volatile store releasing it after \
                 tx-commit",
                self.parts[0].name(),
                (n - 1) * 4,
                shared_address(LOCK_WORD, 0, n)
            )],
            (ThreadForm::Copies, DataMode::Partitioned) => {
                vec![format!("{n} threads, each its own instance of {} on partitioned data; {seeds}", self.parts[0].name()), layout]
            }
            (ThreadForm::Mix, _) | (ThreadForm::Traces, _) => {
                vec![format!("multi-programmed: {n} programs, one per core, each in its own partition; {seeds}"), layout]
            }
        };
        let mut seen: Vec<String> = Vec::new();
        for (t, p) in self.parts.iter().enumerate() {
            for note in p.notes() {
                if !seen.contains(&note) {
                    seen.push(note.clone());
                    let who = if self.mode == DataMode::Shared { "shared".to_string() } else { format!("thread {t}") };
                    notes.push(format!("{who} ({}): {note}", p.name()));
                }
            }
        }
        notes
    }
}

#[cfg(test)]
mod tests;
