use anyhow::{anyhow, Result};
use spmsim::api::{ApiError, RunRequest};
use spmsim::timing::RunStats;
use spmsim::util::output::ResultFiles;
use spmsim::util::stats_text::count;
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

/// The first four bytes of `text`'s SHA-256, in hex: a folder name's tag,
/// stable across versions and machines.
fn short_digest(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// The default results folder of a run. Overrides add a short digest of
/// their text (in the order given), stable across versions and machines.
fn default_out(scheme: &str, workload: &str, seed: u64, overrides: &[String]) -> PathBuf {
    // A long workload (an eight-core mix) keeps its first 80 characters and
    // a digest of the whole, inside a file name's 255 bytes.
    let mut w = sanitize(workload);
    if w.len() > 96 {
        w.truncate(80);
        w.push('-');
        w.push_str(&short_digest(workload));
    }
    let mut name = format!("{}__{}__s{seed}", sanitize(scheme), w);
    if !overrides.is_empty() {
        name.push_str("__set-");
        name.push_str(&short_digest(&overrides.join("\n")));
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
    let resolved = spmsim::api::resolve(&req).map_err(|e: ApiError| anyhow!(e))?;
    // The results folder is named after the resolved preset; make sure it
    // can be written before minutes of simulation, not after.
    let out = a.out.clone().unwrap_or_else(|| default_out(&resolved.config.name, &a.workload, a.seed, &a.overrides));
    let mut files = ResultFiles::new(&out)?;
    // Ctrl-C ends the process here (removing the folder made for the
    // result: `interrupt`), so the stop flag is never set.
    let run = resolved.run(&AtomicBool::new(false)).map_err(|e: ApiError| anyhow!(e))?;
    files.add("stats.json", run.stats_json().as_bytes())?;
    files.add("config.toml", run.config.to_toml().as_bytes())?;
    files.commit()?;
    if a.json {
        println!("{}", run.stats_json());
    } else {
        print!("{}", summary(&run.stats, &run.doc, run.doc.get("slowdown").and_then(|s| s.as_f64()).zip(a.baseline.as_deref())));
        println!("\nstats and resolved config written to {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// The human summary of a run: a heading, the notes, then the stats tree
/// (the region of interest and the battery work of a crash at the end)
/// as the one text printer lays it out.
fn summary(stats: &RunStats, doc: &serde_json::Value, slowdown: Option<(f64, &str)>) -> String {
    let mut s = format!("{} on {}, seed {}, crypto {}\n", stats.scheme, stats.workload, stats.seed, stats.crypto_mode);
    for n in &stats.workload_notes {
        s.push_str(&format!("note: {n}\n"));
    }
    if let Some(w) = &stats.warmup {
        s.push_str(&format!("warm-up: {} instructions, {} cycles, before these statistics\n", count(w.instructions), count(w.cycles)));
    }
    if let Some((slow, base)) = slowdown {
        s.push_str(&format!("slowdown vs {base}: {:.2} %\n", slow * 100.0));
    }
    s.push_str("\nregion of interest\n");
    s.push_str(&indent(&spmsim::util::stats_text::render(&doc["roi"])));
    if let Some(d) = doc.get("crash_at_end").filter(|d| !d.is_null()) {
        s.push_str("\nbattery work if power failed at the end\n");
        s.push_str(&indent(&spmsim::util::stats_text::render(d)));
    }
    s
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
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

    #[test]
    fn an_eight_core_mix_gets_a_folder_name_a_file_system_takes() {
        let mix = |p: &str| format!("mix:{}", vec![format!("suite:{p}#persistent=none"); 8].join(","));
        let gcc = default_out("triad-strict", &mix("403-gcc"), 1, &[]);
        let name = gcc.file_name().unwrap().to_str().unwrap();
        assert!(name.len() <= 255 && name.starts_with("triad-strict__mix_suite_403-gcc"), "{name}");
        assert_ne!(gcc, default_out("triad-strict", &mix("456-hmmer"), 1, &[]), "two long workloads, two folders");
        assert_ne!(
            gcc,
            default_out("triad-strict", &format!("{},suite:x", mix("403-gcc")), 1, &[]),
            "the digest covers the whole workload"
        );
    }
}
