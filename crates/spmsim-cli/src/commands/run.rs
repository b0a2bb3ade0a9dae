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
    /// (default results/runs/SCHEME__WORKLOAD__sSEED, plus __set-HASH
    /// when --set is given, so runs that differ only in settings keep
    /// their own results).
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[arg(long)]
    pub json: bool,
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '.' { c } else { '_' }).collect()
}

/// The default results folder of a run. Overrides add a short digest of
/// their text (in the order given), stable across versions and machines.
fn default_out(scheme: &str, workload: &str, seed: u64, overrides: &[String]) -> PathBuf {
    use sha2::Digest;
    let mut name = format!("{}__{}__s{seed}", sanitize(scheme), sanitize(workload));
    if !overrides.is_empty() {
        let digest = sha2::Sha256::digest(overrides.join("\n").as_bytes());
        name.push_str("__set-");
        name.extend(digest[..4].iter().map(|b| format!("{b:02x}")));
    }
    PathBuf::from("results/runs").join(name)
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
    let out = a.out.clone().unwrap_or_else(|| default_out(&cfg.name, &a.workload, a.seed, &a.overrides));
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

#[cfg(test)]
mod tests {
    use super::default_out;

    #[test]
    fn runs_that_differ_only_in_settings_get_their_own_folder() {
        let plain = default_out("cobcm", "synthetic:ppti=10", 1, &[]);
        assert_eq!(plain, std::path::Path::new("results/runs/cobcm__synthetic_ppti_10__s1"));
        let real = default_out("cobcm", "synthetic:ppti=10", 1, &["security.crypto=\"real\"".into()]);
        let timing = default_out("cobcm", "synthetic:ppti=10", 1, &["security.crypto=\"timing-only\"".into()]);
        assert_ne!(real, timing);
        assert_ne!(real, plain);
        assert!(real.to_str().unwrap().starts_with("results/runs/cobcm__synthetic_ppti_10__s1__set-"), "{}", real.display());
        assert_eq!(real, default_out("cobcm", "synthetic:ppti=10", 1, &["security.crypto=\"real\"".into()]), "the same settings, the same folder");
    }
}
