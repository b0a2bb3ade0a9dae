use anyhow::{anyhow, Result};
use spmsim::api::{ApiError, RunRequest};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

#[derive(clap::Args)]
pub struct RunArgs {
    /// Preset name or TOML path.
    #[arg(long)]
    pub scheme: String,
    /// Workload: random-writes, seq-writes, array-swap, synthetic[:ppti=..,nwpe=..].
    #[arg(long)]
    pub workload: String,
    #[arg(long, default_value_t = spmsim::api::DEFAULT_INSTRUCTIONS)]
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

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

pub fn run(a: RunArgs) -> Result<ExitCode> {
    let req = RunRequest {
        scheme: a.scheme.clone(),
        workload: a.workload.clone(),
        instructions: a.instructions,
        seed: a.seed,
        overrides: a.overrides.clone(),
        baseline: a.baseline.clone(),
    };
    // Ctrl-C ends the process here, so the stop flag is never set.
    let run = spmsim::api::run(&req, &AtomicBool::new(false)).map_err(|e: ApiError| anyhow!(e))?;
    let (cfg, stats, doc) = (&run.config, &run.stats, &run.doc);
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from(format!("results/runs/{}__{}__s{}", sanitize(&cfg.name), sanitize(&a.workload), a.seed)));
    std::fs::create_dir_all(&out).map_err(|e| anyhow!("{}: {e}", out.display()))?;
    spmsim::image::write_atomic(&out.join("stats.json"), run.stats_json().as_bytes())?;
    spmsim::image::write_atomic(&out.join("config.toml"), cfg.to_toml().as_bytes())?;
    if a.json {
        println!("{}", run.stats_json());
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
