use crate::table::{count, percent, render_aligned};
use anyhow::{anyhow, Result};
use spmsim::api::{ApiError, RunRequest};
use spmsim::nvm::ByKind;
use spmsim::output::ResultFiles;
use spmsim::timing::RunStats;
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
    /// Instructions to simulate [default: 1000000], after the warm-up.
    #[arg(long)]
    pub instructions: Option<u64>,
    /// Instructions to run first through the whole model (caches, metadata
    /// caches, persist buffer, PCM queues warm up) before the statistics
    /// start, as ChampSim's option of the same name; the run simulates the
    /// warm-up plus --instructions.
    #[arg(long, default_value_t = 0)]
    pub warmup_instructions: u64,
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
        warmup_instructions: a.warmup_instructions,
        instructions: a.instructions,
        seed: a.seed,
        overrides: a.overrides.clone(),
        baseline: a.baseline.clone(),
    };
    // The results folder is named after the resolved preset; make sure it
    // can be written before minutes of simulation, not after.
    let name = spmsim::api::resolve_config(&a.scheme, &a.overrides).map_err(|e: ApiError| anyhow!(e))?.name;
    let out = a.out.clone().unwrap_or_else(|| default_out(&name, &a.workload, a.seed, &a.overrides));
    let mut files = ResultFiles::new(&out)?;
    // Ctrl-C ends the process here, so the stop flag is never set.
    let run = spmsim::api::run(&req, &AtomicBool::new(false)).map_err(|e: ApiError| anyhow!(e))?;
    files.add("stats.json", run.stats_json().as_bytes())?;
    files.add("config.toml", run.config.to_toml().as_bytes())?;
    files.commit()?;
    if a.json {
        println!("{}", run.stats_json());
    } else {
        print!("{}", summary(&run.stats, run.doc.get("slowdown").and_then(|s| s.as_f64()).zip(a.baseline.as_deref())));
        println!("\nstats and resolved config written to {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The human summary of a run: a heading, the notes, then tables.
fn summary(stats: &RunStats, slowdown: Option<(f64, &str)>) -> String {
    let r = &stats.roi;
    let mut s = format!("{} on {}, seed {}, crypto {}\n", stats.scheme, stats.workload, stats.seed, stats.crypto_mode);
    for n in &stats.workload_notes {
        s.push_str(&format!("note: {n}\n"));
    }
    if let Some(w) = &stats.warmup {
        s.push_str(&format!("warm-up: {} instructions, {} cycles, before these statistics\n", count(w.instructions), count(w.cycles)));
    }
    let row = |what: &str, v: String| vec![what.to_string(), v];
    let mut rows = vec![row("cycles", count(r.cycles)), row("instructions", count(r.instructions)), row("IPC", format!("{:.3}", r.ipc))];
    if let Some((slow, base)) = slowdown {
        rows.push(row(&format!("slowdown vs {base}"), format!("{:.2} %", slow * 100.0)));
    }
    rows.extend([
        row("persists per 1000 instructions (PPTI)", format!("{:.2}", r.ppti)),
        row("stores per SecPB entry (NWPE)", format!("{:.2}", r.nwpe)),
        row("BMT root updates", count(r.bmt_root_updates)),
        row("store-buffer stall cycles", count(r.store_buffer_stall_cycles)),
        row("SecPB-full stall cycles", count(r.secpb_full_stall_cycles)),
        row("persist-path busy cycles", count(r.persist_path_cycles)),
    ]);
    s.push('\n');
    s.push_str(&render_aligned(&["run", "value"], &rows, 1));
    let kinds =
        |what: &str, k: &ByKind| vec![what.to_string(), count(k.data), count(k.counter), count(k.mac), count(k.tree), count(k.total())];
    s.push('\n');
    s.push_str(&render_aligned(
        &["NVM blocks", "data", "counter", "MAC", "tree", "total"],
        &[kinds("reads", &r.nvm_reads), kinds("writes", &r.nvm_writes)],
        1,
    ));
    let mut hits: Vec<Vec<String>> = r.cache_hit_rate.iter().map(|(c, h)| vec![c.to_string(), percent(*h)]).collect();
    hits.extend(r.metadata_cache_hit_rate.iter().map(|(c, h)| vec![format!("metadata: {c}"), percent(*h)]));
    s.push('\n');
    s.push_str(&render_aligned(&["cache", "hit rate"], &hits, 1));
    if let Some(d) = &stats.crash_at_end {
        let work = [
            ("data lines drained", d.front_lines),
            ("AES blocks", d.crypto.aes_blocks),
            ("MACs", d.crypto.macs),
            ("tree hashes", d.crypto.tree_hashes),
            ("NVM writes", d.nvm_writes.total()),
        ];
        let rows: Vec<Vec<String>> = work.iter().map(|(w, n)| row(w, count(*n))).collect();
        s.push('\n');
        s.push_str(&render_aligned(&["battery work if power failed at the end", "count"], &rows, 1));
    }
    s
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
        assert_eq!(
            real,
            default_out("cobcm", "synthetic:ppti=10", 1, &["security.crypto=\"real\"".into()]),
            "the same settings, the same folder"
        );
    }
}
