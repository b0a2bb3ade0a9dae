//! `spmsim recovery`: the recovery time of a scheme that restores lost
//! metadata (STAR, Anubis), from the counted work of a real recovery at
//! each metadata-cache size, and scaled to a dirty share (STAR Fig. 14);
//! with `--memory`, of a scheme that rebuilds the tree (Triad-NVM Fig. 10),
//! from the counted work of a real recovery on a machine of each size;
//! with `--count-from-level-below`, a TriadNVM-N recovery also counted from
//! level N-1, as Triad-NVM's recovery figures count it (V-B, III-C).

use anyhow::{anyhow, Result};
use spmsim::config::load_preset;
use spmsim::verify::recovery::{measure_counting, Counting, Measured, Prices};
use spmsim::workload::WorkloadKind;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct RecoveryArgs {
    /// A preset whose recovery restores metadata: star, anubis-sit, ...
    #[arg(long, default_value = "star")]
    pub scheme: String,
    /// Metadata-cache sizes, comma-separated (4MiB, 512KiB, 65536).
    #[arg(long = "metadata-cache", value_name = "SIZES", default_value = "4MiB")]
    pub metadata_cache: String,
    /// Also scale each recovery to this share of the cache dirty (STAR
    /// Fig. 14a: 0.78).
    #[arg(long)]
    pub dirty: Option<f64>,
    /// The workload run before the crash.
    #[arg(long, default_value = "hash")]
    pub workload: String,
    /// Operations before the crash (default: half the cache's lines, at least 2000).
    #[arg(long)]
    pub ops: Option<u64>,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Nanoseconds per NVM line read (STAR IV-F: 100).
    #[arg(long, default_value_t = 100.0)]
    pub read_ns: f64,
    /// Nanoseconds per hash (default: the preset's MAC latency at its clock).
    #[arg(long)]
    pub hash_ns: Option<f64>,
    /// Memory sizes, comma-separated (1TiB, 8TiB): time a rebuilding
    /// scheme's recovery (Triad-NVM Fig. 10) on a machine of each size.
    #[arg(long, value_name = "SIZES")]
    pub memory: Option<String>,
    /// With --memory: the share of memory in the persistent region, at its
    /// top (1: all of it; Triad-NVM III-C's 6 TB example: 0.5).
    #[arg(long, default_value_t = 1.0)]
    pub persistent_share: f64,
    /// With --memory: nanoseconds per tree or data block a recovery reads
    /// or computes and MACs (Triad-NVM V-B: "reading a tree block in
    /// addition to calculating its MAC value takes 100ns").
    #[arg(long, default_value_t = 100.0)]
    pub block_ns: f64,
    /// With --memory and a Triad-NVM scheme (triad-1, triad-2, triad-3):
    /// also count the recovery of TriadNVM-N from level N-1, as the
    /// paper's recovery figures do (V-B: 30.68 s for 1 TB under
    /// TriadNVM-1 is (2^28 + 2^25 + ... + 1) x 100 ns, every counter block
    /// re-read, although V-A has TriadNVM-1 persist level 1 with it).
    #[arg(long, requires = "memory")]
    pub count_from_level_below: bool,
    /// Override a config key: --set persistence.wpq_entries=64
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    #[arg(long)]
    pub json: bool,
}

/// `4MiB`, `512KiB`, `1GiB`, `8TiB` or a plain byte count.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let (num, mul) = [("TiB", 1u64 << 40), ("GiB", 1u64 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1)]
        .iter()
        .find_map(|(suf, m)| t.strip_suffix(suf).map(|n| (n, *m)))
        .unwrap_or((t, 1));
    let n: u64 = num.trim().parse().map_err(|_| anyhow!("`{s}` is not a size (write 4MiB, 512KiB or a byte count)"))?;
    Ok(n * mul)
}

pub fn run(a: RecoveryArgs) -> Result<ExitCode> {
    if a.memory.is_some() {
        return run_memory(a);
    }
    let sizes: Vec<u64> = a.metadata_cache.split(',').map(parse_size).collect::<Result<_>>()?;
    if let Some(d) = a.dirty {
        if !(0.0..=1.0).contains(&d) {
            return Err(anyhow!("--dirty must be a share between 0 and 1, got {d}"));
        }
    }
    let w = WorkloadKind::parse(&a.workload).map_err(|e| anyhow!(e))?;
    let mut rows = Vec::new();
    let mut out: Vec<(Measured, serde_json::Value)> = Vec::new();
    for &bytes in &sizes {
        let mut sets = a.overrides.clone();
        sets.push(format!("metadata_cache.organization.unified.capacity_bytes={bytes}"));
        let cfg = load_preset(&a.scheme, &sets)?;
        if !spmsim::scheme::shape(&cfg).recovery_restores_dirty_lines {
            return Err(anyhow!("scheme `{}` restores no metadata at recovery; try star or anubis-sit", cfg.name));
        }
        let hash_ns = a.hash_ns.unwrap_or(cfg.security.mac_latency_cycles as f64 / cfg.core.frequency_ghz);
        let p = Prices { read_ns: a.read_ns, hash_ns };
        let ops = a.ops.unwrap_or((bytes / 64 / 2).max(2000));
        let m = measured(&cfg, &w, ops, a.seed, &bytes.to_string(), Counting::AsRecovered)?;
        let e = m.estimate(p);
        rows.push(vec![
            human(bytes),
            "measured".into(),
            format!("{:.2}", m.dirty_share),
            format!("{}", m.restored),
            format!("{}", m.reads.total()),
            format!("{}", m.hashes),
            format!("{:.4}", e.seconds),
        ]);
        let mut j = serde_json::json!({"measured": &m, "prices": p, "measured_seconds": e.seconds});
        if let Some(d) = a.dirty {
            let s = m.scaled(m.cache_lines, m.restored_at(m.cache_lines, d), p);
            rows.push(vec![
                human(bytes),
                format!("at {d:.2} dirty"),
                format!("{d:.2}"),
                format!("{:.0}", s.restored),
                format!("{:.0}", s.reads),
                format!("{:.0}", s.hashes),
                format!("{:.4}", s.seconds),
            ]);
            j["scaled"] = serde_json::json!({"dirty": d, "estimate": s});
        }
        if !m.ok {
            eprintln!("warning: {} recovery's own check failed on the untampered crash: a bug", cfg.name);
        }
        out.push((m, j));
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out.iter().map(|(_, j)| j).collect::<Vec<_>>())?);
    } else {
        println!("scheme {}  workload {}  {} ns per read, hashes at the MAC latency", a.scheme, a.workload, a.read_ns);
        print!(
            "{}",
            crate::table::render(&["metadata cache", "recovery", "dirty", "lines restored", "NVM reads", "hashes", "seconds"], &rows)
        );
    }
    Ok(if out.iter().all(|(m, _)| m.ok) { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// `--memory`: a real recovery on a machine of each size, its counted
/// blocks priced at `block_ns` each.
fn run_memory(a: RecoveryArgs) -> Result<ExitCode> {
    let sizes: Vec<u64> = a.memory.as_deref().unwrap_or_default().split(',').map(parse_size).collect::<Result<_>>()?;
    if !(a.persistent_share > 0.0 && a.persistent_share <= 1.0) {
        return Err(anyhow!("--persistent-share must be in (0, 1], got {}", a.persistent_share));
    }
    let w = WorkloadKind::parse(&a.workload).map_err(|e| anyhow!(e))?;
    let counting = if a.count_from_level_below { Counting::AlsoFromLevelBelow } else { Counting::AsRecovered };
    let mut rows = Vec::new();
    let mut out = Vec::new();
    for &bytes in &sizes {
        // The persistent region at the top of memory, on a 1 GiB boundary
        // (each root register of the Triad machines covers 1 GiB).
        let gib = 1u64 << 30;
        let size = ((bytes as f64 * a.persistent_share) as u64 / gib).max(1) * gib;
        let mut sets = vec![
            format!("memory.capacity_bytes={bytes}"),
            format!("memory.persistent_regions=[{{start_bytes={},size_bytes={size}}}]", bytes - size),
        ];
        sets.extend(a.overrides.iter().cloned());
        let cfg = load_preset(&a.scheme, &sets)?;
        let ops = a.ops.unwrap_or(2000);
        let m = measured(&cfg, &w, ops, a.seed, &human(bytes), counting)?;
        // Each block read and MACed, or computed and MACed, once: the
        // hashes and data MACs the recovery counted.
        let seconds = m.hashes as f64 * a.block_ns * 1e-9;
        let mut row = vec![
            human(bytes),
            human(size),
            format!("{}", m.reads.total()),
            format!("{}", m.hashes),
            format!("{}", m.writes.total()),
            format!("{seconds:.4}"),
            format!("{:.2}", seconds / 60.0),
        ];
        let mut j = serde_json::json!({"memory_bytes": bytes, "persistent_bytes": size, "block_ns": a.block_ns, "measured": &m, "seconds": seconds});
        if let Some(b) = &m.from_level_below {
            let below = b.hashes as f64 * a.block_ns * 1e-9;
            row.extend([format!("{}", b.reads.total()), format!("{}", b.hashes), format!("{below:.4}")]);
            j["seconds_from_level_below"] = serde_json::json!(below);
            if !b.ok {
                eprintln!("warning: {} rebuilt from level {} does not match its root registers: a bug", cfg.name, b.level);
            }
        }
        rows.push(row);
        if !m.ok {
            eprintln!("warning: {} recovery's own check failed on the untampered crash: a bug", cfg.name);
        }
        out.push(j);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!(
            "scheme {}  workload {} ({} ops) before the crash  {} ns per block read or computed, with its MAC",
            a.scheme,
            a.workload,
            a.ops.unwrap_or(2000),
            a.block_ns
        );
        let mut head = vec!["memory", "persistent", "NVM reads", "blocks MACed", "NVM writes", "seconds", "minutes"];
        if a.count_from_level_below {
            println!("counted from level N-1 too, as Triad-NVM's recovery figures count TriadNVM-N (V-B, III-C)");
            head.extend(["NVM reads from level N-1", "blocks MACed from level N-1", "seconds from level N-1"]);
        }
        print!("{}", crate::table::render(&head, &rows));
    }
    Ok(ExitCode::SUCCESS)
}

/// A real recovery after `ops` operations of `w`, counted as `counting`
/// asks, with a progress bar.
fn measured(cfg: &spmsim::config::SimConfig, w: &WorkloadKind, ops: u64, seed: u64, what: &str, counting: Counting) -> Result<Measured> {
    let bar = crate::progress::Progress::new(&format!("recovery {} {what}", cfg.name), "events", 0);
    let events = std::cell::Cell::new(0);
    let m = measure_counting(
        cfg,
        w,
        ops,
        seed,
        &|d, t| {
            events.set(t);
            bar.update(d, t, "")
        },
        counting,
    )
    .map_err(|e| anyhow!(e))?;
    bar.finish(events.get());
    Ok(m)
}

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 40 && b % (1 << 40) == 0 => format!("{}TiB", b >> 40),
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{}GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}KiB", b >> 10),
        b => format!("{b}B"),
    }
}
