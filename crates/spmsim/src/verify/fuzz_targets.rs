//! Fuzz entry points: one `fn(&[u8]) -> Result<(), String>` per input the
//! outside world hands spmsim (each trace reader, the preset loader, `--set`
//! overrides, a saved image). Each drives the same public entry the command
//! line uses, so what is fuzzed is what users run.
//!
//! The contract a fuzzer checks: for any bytes, an entry returns (`Err` is
//! a correct answer to bad input) without panicking, hanging or allocating
//! without bound. The drivers are `crates/spmsim/tests/fuzz.rs` (seeded,
//! bounded, run in CI) and the cargo-fuzz targets in `fuzz/` (long runs);
//! `docs/fuzzing.md` explains both.

use crate::config::{list_presets, load_str, presets_dir};
use crate::trace::{self, Format, RecordEvents};
use crate::workload::WorkloadKind;
use std::path::{Path, PathBuf};

/// Records read per input at most. The readers stream, so a small
/// compressed input can stand for an endless trace; past this many records
/// an input has shown everything a longer one would.
pub const MAX_RECORDS: u64 = 200_000;

/// Instructions simulated for a configuration that loads: enough to touch
/// every cache, queue and the tree, short enough to fuzz quickly.
const SIMULATED_INSTRUCTIONS: u64 = 300;

/// Every target by name (the names of the cargo-fuzz targets and of the
/// corpus folders `fuzz/corpus/NAME`).
/// One fuzz target: it reads arbitrary bytes and must never panic.
pub type Target = fn(&[u8]) -> Result<(), String>;

pub const TARGETS: &[(&str, Target)] = &[
    ("trace_auto", trace_auto),
    ("trace_native", trace_native),
    ("trace_champsim", trace_champsim),
    ("trace_champsim_cloudsuite", trace_champsim_cloudsuite),
    ("trace_lackey", trace_lackey),
    ("trace_gem5", trace_gem5),
    ("trace_ramulator", trace_ramulator),
    ("trace_dramsim3", trace_dramsim3),
    ("trace_insn", trace_insn),
    ("config", config),
    ("set", set),
    ("image", image),
];

/// A trace file whose format `trace:FILE` detects from its bytes.
pub fn trace_auto(data: &[u8]) -> Result<(), String> {
    trace_bytes(None, data)
}
/// `trace:FILE#format=native`; likewise for the other formats below.
pub fn trace_native(data: &[u8]) -> Result<(), String> {
    trace_bytes(Some(Format::Native), data)
}
pub fn trace_champsim(data: &[u8]) -> Result<(), String> {
    trace_bytes(Some(Format::Champsim), data)
}
pub fn trace_champsim_cloudsuite(data: &[u8]) -> Result<(), String> {
    trace_bytes(Some(Format::ChampsimCloudsuite), data)
}
pub fn trace_lackey(data: &[u8]) -> Result<(), String> {
    trace_bytes(Some(Format::Lackey), data)
}
pub fn trace_gem5(data: &[u8]) -> Result<(), String> {
    trace_bytes(Some(Format::Gem5), data)
}
pub fn trace_ramulator(data: &[u8]) -> Result<(), String> {
    trace_bytes(Some(Format::Ramulator), data)
}
pub fn trace_dramsim3(data: &[u8]) -> Result<(), String> {
    trace_bytes(Some(Format::Dramsim3), data)
}

/// An instruction stream (`TRACE.insn`), read as the `ooo` core reads one
/// (in batches, then from its start again, as a core running on does) and
/// entry by entry as `trace info` summarises it, each at most
/// [`MAX_RECORDS`] instructions (a small input can decompress to an
/// endless stream).
pub fn trace_insn(data: &[u8]) -> Result<(), String> {
    use crate::trace::insn::InsnReader;
    let path = scratch_file("input.insn", data)?;
    let mut r = InsnReader::open(&path).map_err(|e| e.to_string())?;
    let mut batch = Vec::new();
    while r.count < MAX_RECORDS && r.folded.is_none() {
        batch.clear();
        r.next_batch(&mut batch, 4096).map_err(|e| e.to_string())?;
    }
    let mut again = r.reopen().map_err(|e| e.to_string())?;
    while again.count < MAX_RECORDS && again.next_insn().map_err(|e| e.to_string())?.is_some() {}
    Ok(())
}

/// The bytes as a trace file (any compression around it), read the two
/// ways the command line reads one: into simulator events, as `run` does,
/// and through `trace info`'s scan.
pub fn trace_bytes(format: Option<Format>, data: &[u8]) -> Result<(), String> {
    let path = scratch_file("input.trace", data)?;
    let format = match format {
        Some(f) => f,
        None => trace::detect(&path).map_err(|e| e.to_string())?,
    };
    let capacity = crate::config::SimConfig::default().memory.capacity_bytes;
    let reader = trace::open(&path, Some(format)).map_err(|e| e.to_string())?;
    let mut events = RecordEvents::new(&path, reader, 1, capacity);
    let mut out = Vec::new();
    let mut records = 0;
    while records < MAX_RECORDS && events.next_op(&mut out).map_err(|e| e.to_string())? {
        records += 1;
        out.clear();
    }
    let mut reader = trace::open(&path, Some(format)).map_err(|e| e.to_string())?;
    trace::info::scan(format.name(), &mut Capped { inner: reader.as_mut(), left: MAX_RECORDS }).map_err(|e| e.to_string())?;
    Ok(())
}

/// A reader that ends after `left` records.
struct Capped<'a> {
    inner: &'a mut dyn trace::RecordReader,
    left: u64,
}

impl trace::RecordReader for Capped<'_> {
    fn header(&self) -> &trace::TraceHeader {
        self.inner.header()
    }
    fn next_record(&mut self) -> Result<Option<trace::TraceRecord>, trace::TraceError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        self.inner.next_record()
    }
}

/// The bytes as a preset file. A configuration that loads must also
/// survive what `run` does with it: build every cache, queue and the tree,
/// and simulate a few instructions.
pub fn config(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    let cfg = load_str(text, "fuzz.toml", &[]).map_err(|e| e.to_string())?;
    simulate_briefly(&cfg)
}

/// `--set` overrides: the first line names a preset (by its index among
/// `configs/*.toml`, or its name), each further line is one `key=value`.
pub fn set(data: &[u8]) -> Result<(), String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    let mut lines = text.lines();
    let presets = list_presets();
    if presets.is_empty() {
        return Err(format!("no presets in {}", presets_dir().display()));
    }
    let first = lines.next().unwrap_or("").trim();
    let name = match first.parse::<usize>() {
        Ok(i) => presets[i % presets.len()].clone(),
        Err(_) => first.to_string(),
    };
    if !presets.contains(&name) {
        return Err(format!("unknown preset `{name}`"));
    }
    let file = presets_dir().join(format!("{name}.toml"));
    let preset = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let overrides: Vec<String> = lines.map(str::to_string).collect();
    let cfg = load_str(&preset, &file.display().to_string(), &overrides).map_err(|e| e.to_string())?;
    simulate_briefly(&cfg)
}

fn simulate_briefly(cfg: &crate::config::SimConfig) -> Result<(), String> {
    if crate::timing::TimingSim::new(cfg, 1).is_err() {
        // A scheme the timing model refuses still runs functionally.
        let events = WorkloadKind::RandomWrites.generate(SIMULATED_INSTRUCTIONS / 100, 1)?;
        let mut sys = crate::machine::System::new(cfg, 1);
        for e in &events {
            sys.apply(e).map_err(|e| e.to_string())?;
        }
        sys.power_fail();
        sys.recover();
        return Ok(());
    }
    crate::timing::simulate(cfg, &WorkloadKind::RandomWrites, SIMULATED_INSTRUCTIONS, 1)?;
    Ok(())
}

/// A saved machine. The input is `chip.json`'s length (u32, little-endian),
/// `chip.json`, then `nvm.img`; it is opened, inspected and verified as
/// `image inspect` and `image verify` do.
pub fn image(data: &[u8]) -> Result<(), String> {
    let (chip, nvm) = split_image_input(data);
    scratch_file("chip.json", chip)?;
    let dir = scratch_file("nvm.img", nvm)?.parent().map(Path::to_path_buf).unwrap_or_default();
    let (chip, mut mc) = crate::verify::image::open(&dir).map_err(|e| e.to_string())?;
    crate::verify::image::inspect(&chip, &mc);
    crate::verify::image::verify(&mut mc);
    Ok(())
}

/// The two files of an [`image`] input; a length past the end takes all.
pub fn split_image_input(data: &[u8]) -> (&[u8], &[u8]) {
    let Some((len, rest)) = data.split_first_chunk::<4>() else { return (data, &[]) };
    rest.split_at((u32::from_le_bytes(*len) as usize).min(rest.len()))
}

/// The inverse of [`split_image_input`], for writing seed inputs.
pub fn join_image_input(chip_json: &[u8], nvm_img: &[u8]) -> Vec<u8> {
    let mut v = (chip_json.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(chip_json);
    v.extend_from_slice(nvm_img);
    v
}

/// Write `data` to `name` in this thread's scratch folder. Every reader
/// takes a path (as the command line gives it one), so inputs go through
/// a file; the folder is per process and thread so parallel drivers never
/// share one.
fn scratch_file(name: &str, data: &[u8]) -> Result<PathBuf, String> {
    thread_local! {
        static DIR: ScratchDir = ScratchDir::new();
    }
    DIR.with(|d| {
        let p = d.0.join(name);
        std::fs::write(&p, data).map_err(|e| format!("fuzz scratch file {}: {e}", p.display()))?;
        Ok(p)
    })
}

struct ScratchDir(PathBuf);

impl ScratchDir {
    fn new() -> Self {
        let tid = format!("{:?}", std::thread::current().id()).chars().filter(char::is_ascii_digit).collect::<String>();
        let p = std::env::temp_dir().join(format!("spmsim-fuzz-{}-{tid}", std::process::id()));
        // A failure here shows as the error of the first write into it.
        let _ = std::fs::create_dir_all(&p);
        ScratchDir(p)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
