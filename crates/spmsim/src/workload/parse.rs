//! A workload's name, parsed: the command line's `kind:key=value,...`, a
//! workload file, a recorded trace or suite program, a mix or a preset.
//!
//! ```text
//!  "random-writes" | "seq-writes" | "array-swap"     -> the fixed generators
//!  "synthetic[:..]"                                  -> SyntheticParams
//!  "KIND[:key=value,..]" (+ threads=N, data=..)      -> params::table_of -> from_table_threads
//!  "daxbench-S-RW", "mix1".., "daxbench1"..          -> aliases and Triad-NVM's presets
//!  "FILE.toml"                                       -> from_file (kind = .., or kind = "mix")
//!  "trace:PATH[#..]" | an existing file              -> TraceSpec (trace_spec.rs)
//!  "trace:A,B,.." | "mix:.."                         -> ThreadSpec (threads/)
//!  "suite:NAME[#persistent=..]"                      -> the program's trace in the suite's cache
//! ```
//! Parsing finds files (a suite program's trace, a workload file) but
//! opens no trace: that is [`WorkloadKind::open`]'s, once the machine is known.

use super::{daxbench, params, threads, DataMode, SyntheticParams, ThreadSpec, WorkloadKind};
use super::{Persistent, TraceSpec};
use crate::trace::Format;

impl WorkloadKind {
    pub fn parse(name: &str) -> Result<Self, String> {
        match name {
            "random-writes" => Ok(WorkloadKind::RandomWrites),
            "seq-writes" => Ok(WorkloadKind::SeqWrites),
            "array-swap" => Ok(WorkloadKind::ArraySwap),
            s if s == "synthetic" || s.starts_with("synthetic:") => SyntheticParams::parse(s).map(WorkloadKind::Synthetic),
            s if s.starts_with("suite:") => {
                let (name, options) = split_trace_options(&s["suite:".len()..]);
                let path = crate::suite::trace_path(name)?;
                let mut spec =
                    TraceSpec { path, format: Some(Format::Native), label: Some(format!("suite:{name}")), persistent: Persistent::Trace };
                for (k, v) in options {
                    match k {
                        "persistent" => spec.persistent = Persistent::parse(v)?,
                        other => return Err(format!("suite workload: unknown option `#{other}=`; known: #persistent=")),
                    }
                }
                Ok(WorkloadKind::Trace(spec))
            }
            s if s.starts_with("mix:") => ThreadSpec::parse_mix(&s["mix:".len()..]),
            s if s.starts_with("trace:") => {
                let body = &s["trace:".len()..];
                // A path with a comma that names a file stays one trace.
                if body.contains(',') && !std::path::Path::new(split_trace_options(body).0).is_file() {
                    ThreadSpec::parse_traces(body)
                } else {
                    TraceSpec::parse(body).map(WorkloadKind::Trace)
                }
            }
            // A TOML file describes a generator; any other file is a trace.
            s if s.ends_with(".toml") => Self::from_file(std::path::Path::new(s)),
            s if std::path::Path::new(s).is_file() => TraceSpec::parse(s).map(WorkloadKind::Trace),
            s => {
                if let Some(preset) = threads::preset(s) {
                    return preset;
                }
                if let Some(rest) = s.strip_prefix("daxbench-") {
                    return Self::from_table_threads("daxbench", daxbench::DaxParams::alias_table(rest)?);
                }
                let (kind, body) = s.split_once(':').unwrap_or((s, ""));
                if !Self::GENERATORS.contains(&kind) {
                    if kind == "array-swap" {
                        return Err("array-swap is the fixed legacy swap of 1024 8-byte elements and takes no keys; `array:KEY=..` is the Secon/STAR array benchmark".into());
                    }
                    return Err(format!("unknown workload `{name}`; known workloads: {}", Self::NAMED.join(", ")));
                }
                Self::from_table_threads(kind, params::table_of(kind, body)?)
            }
        }
    }

    /// Kinds that take `key=value` parameters through [`Self::from_table`].
    const GENERATORS: [&'static str; 8] = ["array", "queue", "btree", "hash", "rbtree", "ycsb", "tpcc", "daxbench"];

    /// [`Self::from_table`], after taking out the keys `threads` and `data`
    /// of a multi-threaded generator.
    fn from_table_threads(kind: &str, mut t: toml::Table) -> Result<Self, String> {
        let threads = t.remove("threads");
        let data = t.remove("data");
        if (threads.is_some() || data.is_some()) && !Self::GENERATORS.contains(&kind) {
            return Err(format!(
                "{kind} workload: `threads` and `data` apply to the persistent generators ({}) only",
                Self::GENERATORS.join(", ")
            ));
        }
        let n = match threads {
            None => 1,
            Some(toml::Value::Integer(n)) if (1..=threads::MAX_THREADS as i64).contains(&n) => n as usize,
            Some(v) => {
                return Err(format!("{kind} workload: key `threads` must be an integer from 1 to {}, got {v}", threads::MAX_THREADS))
            }
        };
        let mode = match data {
            None => DataMode::Partitioned,
            Some(toml::Value::String(s)) if s == "partitioned" => DataMode::Partitioned,
            Some(toml::Value::String(s)) if s == "shared" => DataMode::Shared,
            Some(v) => return Err(format!("{kind} workload: key `data` must be `partitioned` or `shared`, got {v}")),
        };
        ThreadSpec::copies(Self::from_table(kind, t)?, n, mode)
    }

    /// A generator of `kind` with the keys of `t`, validated.
    fn from_table(kind: &str, t: toml::Table) -> Result<Self, String> {
        use params::from_table;
        let w = match kind {
            "array" => WorkloadKind::Array(from_table(kind, t)?),
            "queue" => WorkloadKind::Queue(from_table(kind, t)?),
            "btree" => WorkloadKind::Btree(from_table(kind, t)?),
            "hash" => WorkloadKind::Hash(from_table(kind, t)?),
            "rbtree" => WorkloadKind::Rbtree(from_table(kind, t)?),
            "ycsb" => WorkloadKind::Ycsb(from_table(kind, t)?),
            "tpcc" => WorkloadKind::Tpcc(from_table(kind, t)?),
            "daxbench" => WorkloadKind::Daxbench(from_table(kind, t)?),
            "synthetic" => {
                let body: Vec<String> = t
                    .iter()
                    .map(|(k, v)| match v {
                        toml::Value::Integer(i) => Ok(format!("{k}={i}")),
                        toml::Value::Float(f) => Ok(format!("{k}={f}")),
                        _ => Err(format!("synthetic workload: `{k}` wants a number, got {v}")),
                    })
                    .collect::<Result<_, _>>()?;
                return SyntheticParams::parse(&format!("synthetic:{}", body.join(","))).map(WorkloadKind::Synthetic);
            }
            "random-writes" | "seq-writes" | "array-swap" => {
                if let Some(k) = t.keys().next() {
                    return Err(format!("{kind} workload takes no keys, got `{k}`"));
                }
                return Self::parse(kind);
            }
            _ => {
                return Err(format!(
                    "unknown workload kind `{kind}`; kinds: random-writes, seq-writes, array-swap, synthetic, {}",
                    Self::GENERATORS.join(", ")
                ))
            }
        };
        w.validate()?;
        Ok(w)
    }

    /// A workload file: `kind = "btree"` and that generator's keys.
    pub fn from_file(path: &std::path::Path) -> Result<Self, String> {
        let at = |e: String| format!("workload file {}: {e}", path.display());
        let text = std::fs::read_to_string(path).map_err(|e| at(format!("cannot read it: {e}")))?;
        let mut t: toml::Table = text.parse().map_err(|e: toml::de::Error| at(e.message().to_string()))?;
        let kind = match t.remove("kind") {
            Some(toml::Value::String(k)) => k,
            Some(v) => return Err(at(format!("`kind` must be a string, got {v}"))),
            None => {
                return Err(at(format!(
                    "no `kind` key; kinds: random-writes, seq-writes, array-swap, synthetic, {}",
                    Self::GENERATORS.join(", ")
                )))
            }
        };
        if kind == "mix" {
            return Self::mix_from_table(t).map_err(at);
        }
        Self::from_table_threads(&kind, t).map_err(at)
    }

    /// A mix in a workload file: `kind = "mix"` and `parts = ["a=queue",
    /// "b=hash:size_mib=64,gap=3"]`, each part `LABEL=WORKLOAD` or
    /// `WORKLOAD`.
    fn mix_from_table(mut t: toml::Table) -> Result<Self, String> {
        let parts = match t.remove("parts") {
            Some(toml::Value::Array(a)) => a,
            Some(v) => return Err(format!("mix: `parts` must be an array of workload strings, got {v}")),
            None => return Err("mix: no `parts` key (parts = [\"a=array-swap\", \"b=queue\"])".into()),
        };
        if let Some(k) = t.keys().next() {
            return Err(format!("mix: unknown key `{k}`; a mix file has kind and parts"));
        }
        let specs = parts
            .into_iter()
            .map(|v| match v {
                toml::Value::String(s) => match threads::part_start(&s) {
                    Some((label, spec)) => Ok((label.map(str::to_string), spec.to_string())),
                    None => Err(format!("mix: part `{s}` is neither a workload nor LABEL=workload")),
                },
                v => Err(format!("mix: each of `parts` must be a string, got {v}")),
            })
            .collect::<Result<Vec<_>, String>>()?;
        ThreadSpec::mix_of(specs)
    }

    /// The parameters of a generator, in range and consistent.
    fn validate(&self) -> Result<(), String> {
        match self {
            WorkloadKind::Array(p) => p.validate(),
            WorkloadKind::Queue(p) => p.validate(),
            WorkloadKind::Btree(p) => p.validate(),
            WorkloadKind::Hash(p) => p.validate(),
            WorkloadKind::Rbtree(p) => p.validate(),
            WorkloadKind::Ycsb(p) => p.validate(),
            WorkloadKind::Tpcc(p) => p.validate(),
            WorkloadKind::Daxbench(p) => p.validate(),
            _ => Ok(()),
        }
    }
}

/// Split `PATH#key=value#key=value` at the options (a `#` in a path
/// before the first `key=` stays in the path).
pub(super) fn split_trace_options(s: &str) -> (&str, Vec<(&str, &str)>) {
    let mut parts: Vec<&str> = s.split('#').collect();
    let mut options = Vec::new();
    while parts.len() > 1 {
        let last = *parts.last().unwrap();
        match last.split_once('=') {
            Some((k, v)) if !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
                options.push((k, v));
                parts.pop();
            }
            _ => break,
        }
    }
    options.reverse();
    let path_len = parts.iter().map(|p| p.len()).sum::<usize>() + parts.len() - 1;
    (&s[..path_len], options)
}
