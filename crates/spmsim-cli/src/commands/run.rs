use anyhow::{anyhow, Result};
use spmsim::config::load_preset;
use spmsim::timing::{simulate, RunStats};
use spmsim::workload::WorkloadKind;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Preset name or TOML path.
    #[arg(long)]
    pub scheme: String,
    /// Workload: random-writes, seq-writes, array-swap, synthetic[:ppti=..,nwpe=..].
    #[arg(long)]
    pub workload: String,
    #[arg(long, default_value_t = 1_000_000)]
    pub instructions: u64,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Also run this preset on the same workload and report the slowdown.
    #[arg(long)]
    pub baseline: Option<String>,
    /// Where stats.json and the resolved config.toml are written
    /// (default results/runs/SCHEME__WORKLOAD__sSEED).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

pub fn one(scheme: &str, workload: &str, instructions: u64, seed: u64, overrides: &[String]) -> Result<(spmsim::config::SimConfig, RunStats)> {
    let cfg = load_preset(scheme, overrides)?;
    let w = WorkloadKind::parse(workload).map_err(|e| anyhow!(e))?;
    if instructions == 0 {
        return Err(anyhow!("--instructions must be at least 1"));
    }
    let stats = simulate(&cfg, &w, instructions, seed).map_err(|e| anyhow!(e))?;
    Ok((cfg, stats))
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

pub fn run(a: RunArgs) -> Result<ExitCode> {
    let (cfg, stats) = one(&a.scheme, &a.workload, a.instructions, a.seed, &a.overrides)?;
    let mut doc = serde_json::to_value(&stats)?;
    if let Some(b) = &a.baseline {
        let (_, base) = one(b, &a.workload, a.instructions, a.seed, &[])?;
        let slowdown = stats.roi.cycles as f64 / base.roi.cycles as f64 - 1.0;
        doc["baseline"] = serde_json::json!({"scheme": b, "cycles": base.roi.cycles, "ipc": base.roi.ipc});
        doc["slowdown"] = serde_json::json!(slowdown);
    }
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("results/runs/{}__{}__s{}", sanitize(&cfg.name), sanitize(&a.workload), a.seed)));
    std::fs::create_dir_all(&out).map_err(|e| anyhow!("{}: {e}", out.display()))?;
    spmsim::image::write_atomic(&out.join("stats.json"), serde_json::to_string_pretty(&doc)?.as_bytes())?;
    spmsim::image::write_atomic(&out.join("config.toml"), cfg.to_toml().as_bytes())?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        let r = &stats.roi;
        println!("scheme {}  workload {}  seed {}  crypto {}", stats.scheme, stats.workload, stats.seed, stats.crypto_mode);
        for n in &stats.workload_notes {
            println!("note: {n}");
        }
        println!("cycles {}  instructions {}  IPC {:.4}", r.cycles, r.instructions, r.ipc);
        if let Some(s) = doc.get("slowdown") {
            println!("slowdown vs {}: {:.2} %", a.baseline.as_deref().unwrap_or(""), s.as_f64().unwrap() * 100.0);
        }
        println!("PPTI {:.2}  NWPE {:.2}  BMT root updates {}", r.ppti, r.nwpe, r.bmt_root_updates);
        println!("stalls: store buffer {} cycles, SecPB full {} cycles; persist-path busy {} cycles", r.store_buffer_stall_cycles, r.secpb_full_stall_cycles, r.secpb_early_cycles);
        println!("NVM reads {:?}", r.nvm_reads);
        println!("NVM writes {:?}", r.nvm_writes);
        println!("cache hit rates {:?}; metadata caches {:?}", r.cache_hit_rate, r.metadata_cache_hit_rate);
        if let Some(d) = &stats.crash_at_end {
            println!("crash at end: {} data lines, {} AES blocks, {} MACs, {} tree hashes, {} NVM writes", d.front_lines, d.crypto.aes_blocks, d.crypto.macs, d.crypto.tree_hashes, d.nvm_writes.total());
        }
        println!("stats and resolved config written to {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
