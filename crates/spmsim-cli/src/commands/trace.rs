//! `spmsim trace`: record a program under valgrind, inspect, convert and
//! generate traces (format: `docs/trace-format.md`).

use anyhow::{anyhow, bail, Result};
use spmsim::trace::{self, Format};
use spmsim::workload::WorkloadKind;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Subcommand)]
pub enum TraceCmd {
    /// Run a program under valgrind lackey and write its memory trace in
    /// the native format as it runs.
    Record(RecordArgs),
    /// Instruction and memory-operation counts, footprint, write fraction
    /// and persistent share of a trace.
    Info(InfoArgs),
    /// Turn a trace of any supported format into the native format.
    Convert(ConvertArgs),
    /// Write a built-in workload's events as a native trace.
    Generate(GenerateArgs),
}

#[derive(clap::Args)]
pub struct RecordArgs {
    /// A persistent address range A-B (hex with 0x, or decimal; B exclusive);
    /// repeatable. Without one, all memory is persistent.
    #[arg(long = "persistent-range", value_name = "A-B")]
    pub persistent: Vec<String>,
    /// Instructions to run before recording starts.
    #[arg(long, default_value_t = 0)]
    pub skip: u64,
    /// Stop after recording this many instructions.
    #[arg(long)]
    pub instructions: Option<u64>,
    /// Record only these windows of the run, START+LENGTH in instructions
    /// as valgrind counts them (each `rep` iteration is one), comma
    /// separated, ascending; the program runs at valgrind's own speed in
    /// between (spmsim's `spmtrace` tool, built on first use). Window i
    /// goes to OUTPUT with `.w<i>` before its extension. Not with --skip;
    /// with --instructions, each window's trace stops at that many
    /// architectural instructions (a `rep` counted once), and the program
    /// is stopped once the last window's is full.
    #[arg(long, value_name = "S+L,...", conflicts_with_all = ["skip"])]
    pub windows: Option<String>,
    #[arg(short = 'o', long = "output")]
    pub out: PathBuf,
    /// The program and its arguments (after `--`).
    #[arg(last = true, required = true)]
    pub program: Vec<String>,
}

#[derive(clap::Args)]
pub struct InfoArgs {
    pub file: PathBuf,
    /// The format, if detection by magic bytes is not enough.
    #[arg(long)]
    pub format: Option<String>,
    #[arg(long)]
    pub json: bool,
}

#[derive(clap::Args)]
pub struct ConvertArgs {
    pub input: PathBuf,
    #[arg(long)]
    pub format: Option<String>,
    /// The format written: `native`, or `champsim` (a recorded program with
    /// its instruction stream, as ChampSim's xz-compressed input_instr
    /// records, registers and branches from the stream).
    #[arg(long, default_value = "native", value_parser = ["native", "champsim"])]
    pub to: String,
    /// At most this many instructions (`--to champsim`).
    #[arg(long)]
    pub instructions: Option<u64>,
    #[arg(short = 'o', long = "output")]
    pub out: PathBuf,
}

#[derive(clap::Args)]
pub struct GenerateArgs {
    /// Any workload `spmsim run` accepts.
    #[arg(long)]
    pub workload: String,
    #[arg(long, default_value_t = 1_000_000)]
    pub instructions: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(short = 'o', long = "output")]
    pub out: PathBuf,
}

fn parse_addr(s: &str) -> Result<u64> {
    let s = s.trim();
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    };
    v.map_err(|_| anyhow!("`{s}` is not an address (hex with 0x, or decimal)"))
}

/// `A-B` with A < B.
pub fn parse_range(s: &str) -> Result<(u64, u64)> {
    let (a, b) = s.split_once('-').ok_or_else(|| anyhow!("--persistent-range `{s}`: expected A-B"))?;
    let (a, b) = (parse_addr(a)?, parse_addr(b)?);
    if a >= b {
        bail!("--persistent-range `{s}`: the start must be below the end");
    }
    Ok((a, b))
}

fn format_arg(f: &Option<String>) -> Result<Option<Format>> {
    f.as_deref().map(Format::parse).transpose().map_err(|e| anyhow!(e))
}

pub fn run(cmd: TraceCmd) -> Result<ExitCode> {
    match cmd {
        TraceCmd::Record(a) => record(a),
        TraceCmd::Info(a) => info(a),
        TraceCmd::Convert(a) if a.to == "champsim" => {
            let w = trace::champsim_write::write(&a.input, format_arg(&a.format)?, &a.out, a.instructions).map_err(|e| anyhow!(e))?;
            println!(
                "wrote {}: {} instructions ({} branches) as ChampSim input_instr records; lost: {} memory operands beyond a record's slots, {} register dependences further back than {} registers reach",
                a.out.display(),
                w.instructions,
                w.branches,
                w.operands_dropped,
                w.dependences_dropped,
                trace::champsim_write::POOL_REGISTERS
            );
            Ok(ExitCode::SUCCESS)
        }
        TraceCmd::Convert(a) => {
            if a.instructions.is_some() {
                bail!("--instructions: only with --to champsim");
            }
            let w = trace::convert::convert(&a.input, format_arg(&a.format)?, &a.out).map_err(|e| anyhow!(e))?;
            println!("wrote {}: {} records, {} instructions", a.out.display(), w.records, w.instructions);
            Ok(ExitCode::SUCCESS)
        }
        TraceCmd::Generate(a) => {
            let w = WorkloadKind::parse(&a.workload).map_err(|e| anyhow!(e))?;
            if a.instructions == 0 {
                bail!("--instructions must be at least 1");
            }
            let n = w.write_trace(a.seed, a.instructions, &a.out).map_err(|e| anyhow!(e))?;
            println!("wrote {}: {} records, {} instructions", a.out.display(), n.records, n.instructions);
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[cfg(unix)]
fn record(a: RecordArgs) -> Result<ExitCode> {
    let ranges = a.persistent.iter().map(|s| parse_range(s)).collect::<Result<Vec<_>>>()?;
    if a.instructions == Some(0) {
        bail!("--instructions must be at least 1");
    }
    if let Some(w) = &a.windows {
        return record_windows(&a, w, ranges);
    }
    let opts = trace::lackey::RecordOptions {
        program: a.program.clone(),
        skip: a.skip,
        instructions: a.instructions,
        persistent_ranges: ranges,
        out: a.out.clone(),
        ..Default::default()
    };
    let s = trace::lackey::record(&opts).map_err(|e| anyhow!(e))?;
    println!(
        "wrote {}: {} instructions recorded ({} skipped), {} load records, {} store records; the program {}",
        a.out.display(),
        s.recorded_instructions,
        s.skipped_instructions,
        s.loads,
        s.stores,
        if s.program_finished { "ran to its end" } else { "was stopped at the instruction limit" }
    );
    if s.folded_iterations > 0 {
        println!(
            "rep string instructions: {} lackey instruction lines folded into the instruction they iterate ({} lines in all)",
            s.folded_iterations,
            s.recorded_instructions + s.folded_iterations
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `START+LENGTH,...`, ascending and disjoint.
pub fn parse_windows(s: &str) -> Result<Vec<(u64, u64)>> {
    let mut v: Vec<(u64, u64)> = Vec::new();
    for part in s.split(',') {
        let (a, b) = part.split_once('+').ok_or_else(|| anyhow!("--windows: `{part}` is not START+LENGTH"))?;
        let start: u64 = a.trim().parse().map_err(|_| anyhow!("--windows: `{a}` in `{part}` is not a number"))?;
        let len: u64 = b.trim().parse().map_err(|_| anyhow!("--windows: `{b}` in `{part}` is not a number"))?;
        if len == 0 {
            bail!("--windows: `{part}` has no instructions");
        }
        if let Some(&(ps, pl)) = v.last() {
            if start < ps + pl {
                bail!("--windows: `{part}` starts before the window ahead of it ends");
            }
        }
        v.push((start, len));
    }
    Ok(v)
}

/// OUT with `.w<i>` before its extension.
pub fn window_path(out: &std::path::Path, i: usize) -> PathBuf {
    let stem = out.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match out.extension() {
        Some(e) => format!("{stem}.w{i}.{}", e.to_string_lossy()),
        None => format!("{stem}.w{i}"),
    };
    out.with_file_name(name)
}

#[cfg(unix)]
fn record_windows(a: &RecordArgs, w: &str, ranges: Vec<(u64, u64)>) -> Result<ExitCode> {
    let windows = parse_windows(w)?;
    let outs: Vec<PathBuf> = (0..windows.len()).map(|i| window_path(&a.out, i)).collect();
    let opts = trace::lackey::WindowOptions {
        run: trace::lackey::RecordOptions { program: a.program.clone(), persistent_ranges: ranges, ..Default::default() },
        windows: windows.clone(),
        outs: outs.clone(),
        instructions: a.instructions,
        cache: spmsim::suite::cache_dir(),
    };
    let sums = trace::lackey::record_windows(&opts).map_err(|e| anyhow!(e))?;
    for (i, s) in sums.iter().enumerate() {
        println!(
            "wrote {}: {} instructions recorded after {}, {} load records, {} store records, {} rep iterations folded",
            outs[i].display(),
            s.recorded_instructions,
            s.skipped_instructions,
            s.loads,
            s.stores,
            s.folded_iterations
        );
    }
    if sums.len() < windows.len() {
        println!("the program ended before window {}: {} of {} windows recorded", sums.len(), sums.len(), windows.len());
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(unix))]
fn record(_: RecordArgs) -> Result<ExitCode> {
    bail!("trace record needs valgrind, which runs on Unix-like systems only")
}

fn info(a: InfoArgs) -> Result<ExitCode> {
    let f = match format_arg(&a.format)? {
        Some(f) => f,
        None => trace::detect(&a.file).map_err(|e| anyhow!(e))?,
    };
    let mut r = trace::open(&a.file, Some(f)).map_err(|e| anyhow!(e))?;
    let mut i = trace::info::scan(f.name(), r.as_mut()).map_err(|e| anyhow!(e))?;
    let stream = trace::insn::path_for(&a.file);
    if stream.exists() {
        // A stream made from other bytes than the trace's is refused.
        let digest = spmsim::util::digest::file_digest(&a.file).map_err(|e| anyhow!(e))?;
        let open = || trace::insn::InsnReader::open_bound(&stream, &a.file, &digest).map_err(|e| anyhow!(e));
        i.instruction_stream = Some(trace::insn::summarize(open()?).map_err(|e| anyhow!(e))?);
        let mut again = trace::open(&a.file, Some(f)).map_err(|e| anyhow!(e))?;
        i.micro_ops = Some(trace::uops::estimate(again.as_mut(), open()?).map_err(|e| anyhow!(e))?);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&i)?);
        return Ok(ExitCode::SUCCESS);
    }
    let h = i.header.as_ref();
    println!("{}: {} trace", a.file.display(), i.format);
    if let Some(h) = h.filter(|h| !h.source.is_empty()) {
        println!("source: {}", h.source);
    }
    println!(
        "instructions {}  load records {}  store records {} (log region {})  fences {}  epochs {}  transactions {}",
        i.instructions, i.loads, i.stores, i.log_stores, i.fences, i.epochs, i.transactions
    );
    println!("(a record is one access as the trace has it; `run` counts loads and stores per 64 B block)");
    println!("memory ops per kilo-instruction {:.2}  stores per kilo-instruction {:.2}", i.memory_ops_pti, i.stores_pti);
    println!(
        "footprint {:.2} MiB ({:.2} MiB written)  write fraction {:.3}  persistent share {:.3}",
        i.footprint_bytes as f64 / 1048576.0,
        i.written_footprint_bytes as f64 / 1048576.0,
        i.write_fraction,
        i.persistent_share
    );
    println!(
        "values {}{}",
        i.values,
        if i.values == "derived" { " (the simulator derives a deterministic value per store from the seed)" } else { "" }
    );
    if let Some(h) = h {
        let space = match h.address_space {
            spmsim::trace::AddressSpace::Physical => "physical",
            spmsim::trace::AddressSpace::Virtual => "virtual (pages get frames in first-touch order)",
        };
        println!("address space {space}; skipped before recording {} instructions", h.skipped_instructions);
        match (h.stack_range, i.stack_stores) {
            (Some((a, b)), Some(n)) => println!(
                "stack {a:#x}-{b:#x}: {n} store records ({:.1} %), volatile under `#persistent=heap`",
                100.0 * n as f64 / i.stores.max(1) as f64
            ),
            _ => println!("stack range not recorded (`#persistent=heap` needs a trace recorded by this spmsim)"),
        }
    }
    match &i.instruction_stream {
        Some(s) => {
            println!(
                "instruction stream {}: {} instructions{}",
                stream.display(),
                s.instructions,
                if s.folded_iterations > 0 {
                    format!(
                        "; lackey counted {} (its {} rep iterations folded into their instructions)",
                        s.instructions + s.folded_iterations,
                        s.folded_iterations
                    )
                } else {
                    String::new()
                }
            );
            let list =
                |m: &std::collections::BTreeMap<String, u64>| m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
            println!("  units: {}", list(&s.classes));
            if let Some(u) = &i.micro_ops {
                println!(
                    "  micro-ops as gem5's x86 decoder would split them (an estimate, a lower bound): {} ({:.3} per instruction; {} load-ops, {} read-modify-writes)",
                    u.micro_ops, u.per_instruction, u.load_ops, u.read_modify_writes
                );
            }
            println!("  branches: {} (conditional taken {})", list(&s.branches), s.conditional_taken);
            println!("  producers per instruction {:.2}, nearest {:.1} instructions back", s.mean_sources, s.mean_nearest_distance);
        }
        None => println!("no instruction stream (core.model = \"ooo\" needs one: `spmsim trace record` writes it)"),
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    #[test]
    fn persistent_ranges_parse_hex_and_decimal_and_reject_empty_ones() {
        assert_eq!(super::parse_range("0x1000-0x2000").unwrap(), (0x1000, 0x2000));
        assert_eq!(super::parse_range("10-20").unwrap(), (10, 20));
        assert!(super::parse_range("0x20-0x10").is_err());
        assert!(super::parse_range("0x20").is_err());
        assert!(super::parse_range("zz-0x10").is_err());
    }
}
