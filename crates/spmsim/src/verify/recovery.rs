//! The recovery-time model (DESIGN.md's counted recovery): run a workload
//! on the scheme's machine, cut the power, run the scheme's own recovery,
//! and price what it counted, every NVM read at the paper's 100 ns (STAR
//! IV-F, after Anubis and Osiris: "fetching and updating one metadata ...
//! consume 100ns") and every hash at the hash latency. Larger caches are
//! measured the same way; the extrapolation to a dirty share the run did
//! not reach scales the counts per restored line, never a formula of its
//! own.
//!
//! ```text
//!  workload -> crash -> recover(): reads by kind, hashes, writes, lines restored
//!    measured time  = reads x read_ns + hashes x hash_ns
//!    at dirty share d (STAR: the stale lines are d x lines):
//!      scaled = fixed + per_line x (d x lines)
//!      fixed  = the reads that cover the whole cache whatever its dirt
//!               (Anubis's shadow table), per_line = the rest / restored
//!  a scheme that persists the tree up to level N (Triad-NVM), counted as
//!  its paper's recovery figures count (from level N-1):
//!    after the recovery, the persistent subtrees rebuilt again from level
//!    N and from level N-1, each counted; the recovery's counts with the
//!    first rebuild's replaced by the second's
//! ```

use crate::config::SimConfig;
use crate::engine::hooks::RecoveryCost;
use crate::engine::layout::Cover;
use crate::engine::layout::RegionKind;
use crate::engine::nvm::ByKind;
use crate::machine::System;
use crate::scheme::SchemeKind;
use crate::workload::WorkloadKind;
use serde::{Deserialize, Serialize};

/// What one real recovery did.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Measured {
    pub scheme: String,
    pub workload: String,
    pub ops: u64,
    pub metadata_cache_bytes: u64,
    pub cache_lines: u64,
    /// Dirty metadata lines when the power failed.
    pub dirty_lines: u64,
    pub dirty_share: f64,
    /// Lines the recovery restored.
    pub restored: u64,
    pub reads: ByKind,
    pub writes: ByKind,
    /// Tree hashes and MACs the recovery computed.
    pub hashes: u64,
    /// The scheme's own check passed.
    pub ok: bool,
    /// How the scheme's recovery scales with its cache (its runtime's).
    /// Not serialized: a reproduction's point file restores it as the
    /// default, and only the run that measured reads it.
    #[serde(skip)]
    pub cost: RecoveryCost,
    /// The same recovery counted from the level below the one the scheme
    /// persists, when asked for ([`measure_counting`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_level_below: Option<LevelBelow>,
}

/// A rebuilding recovery counted from level N-1 of a scheme that persists
/// the tree up to level N, as Triad-NVM's recovery figures count it
/// (V-B: 30.68 s for 1 TB under TriadNVM-1 is (2^28 + 2^25 + ... + 1) x
/// 100 ns, a rebuild that re-reads every counter block, although V-A has
/// TriadNVM-1 persist level 1 with the counter block).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LevelBelow {
    /// The level the rebuild reads: N - 1.
    pub level: u32,
    /// The recovery's reads with its rebuild's replaced by one from `level`.
    pub reads: ByKind,
    /// Its tree hashes and MACs, likewise.
    pub hashes: u64,
    /// Both rebuilds matched the root registers.
    pub ok: bool,
}

/// How a rebuilding scheme's recovery is counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Counting {
    /// As the scheme recovers: from the level it persists.
    AsRecovered,
    /// Also from the level below it, as Triad-NVM's figures count.
    AlsoFromLevelBelow,
}

/// Prices for the counts.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Prices {
    pub read_ns: f64,
    pub hash_ns: f64,
}

/// A recovery's time, by part.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Estimate {
    pub restored: f64,
    pub reads: f64,
    pub hashes: f64,
    pub seconds: f64,
}

impl Measured {
    /// Reads that cover the whole cache whatever is dirty: Anubis reads
    /// its whole shadow table (one line per cache way); STAR reads only
    /// non-zero bitmap lines, which scale with the stale lines.
    fn fixed_reads(&self) -> u64 {
        match self.cost.reads_whole_recovery_area {
            true => self.reads.of(RegionKind::Recovery),
            false => 0,
        }
    }

    /// The time of this recovery.
    pub fn estimate(&self, p: Prices) -> Estimate {
        let (r, h) = (self.reads.total() as f64, self.hashes as f64);
        Estimate { restored: self.restored as f64, reads: r, hashes: h, seconds: (r * p.read_ns + h * p.hash_ns) * 1e-9 }
    }

    /// The same recovery on a cache of `cache_lines` lines with `restored`
    /// lines to restore, from this one's counts per restored line (and
    /// its fixed reads scaled to the cache).
    pub fn scaled(&self, cache_lines: u64, restored: f64, p: Prices) -> Estimate {
        let per = |x: f64| x / self.restored.max(1) as f64;
        let fixed = self.fixed_reads() as f64 * cache_lines as f64 / self.cache_lines.max(1) as f64;
        let reads = fixed + per((self.reads.total() - self.fixed_reads()) as f64) * restored;
        let hashes = per(self.hashes as f64) * restored;
        Estimate { restored, reads, hashes, seconds: (reads * p.read_ns + hashes * p.hash_ns) * 1e-9 }
    }

    /// Lines this scheme restores on a cache of `lines` lines whose share
    /// `dirty` is dirty: STAR the stale (dirty) ones, Anubis every line its
    /// table shadows (all of them once the cache has filled).
    pub fn restored_at(&self, lines: u64, dirty: f64) -> f64 {
        match self.cost.restores_every_line {
            true => lines as f64,
            false => dirty * lines as f64,
        }
    }
}

/// Run `ops` operations of `workload` on `cfg`, crash, recover, count.
pub fn measure(cfg: &SimConfig, workload: &WorkloadKind, ops: u64, seed: u64, progress: &dyn Fn(u64, u64)) -> Result<Measured, String> {
    measure_counting(cfg, workload, ops, seed, progress, Counting::AsRecovered)
}

/// [`measure`], and with [`Counting::AlsoFromLevelBelow`] the recovery
/// counted from the level below the one the scheme persists too (an
/// error for a scheme that persists no tree level).
pub fn measure_counting(
    cfg: &SimConfig,
    workload: &WorkloadKind,
    ops: u64,
    seed: u64,
    progress: &dyn Fn(u64, u64),
    counting: Counting,
) -> Result<Measured, String> {
    let level = match (counting, &cfg.scheme) {
        (Counting::AsRecovered, _) => None,
        (Counting::AlsoFromLevelBelow, SchemeKind::Triad(p)) => Some(p.level()),
        (Counting::AlsoFromLevelBelow, s) => {
            return Err(format!(
            "scheme `{}` persists no tree level N to count its recovery from level N-1 (Triad-NVM's schemes do: triad-1, triad-2, triad-3)",
            s.name()
        ))
        }
    };
    let events = workload.generate_placed(ops, seed, crate::workload::Placement::of(cfg))?;
    let mut sys = System::new(cfg, seed);
    let n = events.len() as u64;
    for (i, e) in events.iter().enumerate() {
        sys.apply(e).map_err(|err| format!("event {}: {err}", i + 1))?;
        if i % 65536 == 0 {
            progress(i as u64, n);
        }
    }
    progress(n, n);
    let layout = sys.mc.st.layout.clone();
    let dirty_lines = sys.mc.st.caches.dirty_lines().iter().filter(|(a, _)| layout.meta_pos(*a).is_some()).count() as u64;
    let cache_lines: u64 = sys.mc.st.caches.all().iter().map(|(_, c)| c.sets() * c.ways() as u64).sum();
    sys.power_fail();
    let rep = sys.recover();
    let hashes = rep.crypto.tree_hashes + rep.crypto.macs;
    let from_level_below = match level {
        Some(n) => Some(from_level_below(&mut sys, n, rep.nvm_reads, hashes)?),
        None => None,
    };
    Ok(Measured {
        scheme: cfg.scheme.name().to_string(),
        workload: workload.name(),
        ops,
        metadata_cache_bytes: cache_lines * 64,
        cache_lines,
        dirty_lines,
        dirty_share: dirty_lines as f64 / cache_lines.max(1) as f64,
        restored: rep.count("stale_restored"),
        reads: rep.nvm_reads,
        writes: rep.nvm_writes,
        hashes,
        ok: rep.ok(),
        cost: sys.mc.rules.scheme.recovery_cost(),
        from_level_below,
    })
}

/// After a recovery that read level `n` (and counted `reads` and
/// `hashes`), the persistent subtrees rebuilt again from level `n` and
/// from level `n - 1`, each counted: the recovery's counts with the first
/// rebuild's replaced by the second's. Every level up to `n` persists
/// with the counter blocks, so both rebuilds start from what NVM holds.
fn from_level_below(sys: &mut System, n: u32, reads: ByKind, hashes: u64) -> Result<LevelBelow, String> {
    let below = n.checked_sub(1).ok_or("a scheme that persists level 0 has no level below it")?;
    let mc = &mut sys.mc;
    let tree = mc.rules.tree.as_bmt().ok_or("counting from the level below needs a Bonsai Merkle tree")?;
    let mut counted = |level: u32| {
        let (h0, r0) = (mc.st.crypto.work.tree_hashes, mc.st.nvm.reads);
        let out = tree.rebuild_region(&mut mc.st, level, Cover::Persistent);
        (mc.st.crypto.work.tree_hashes - h0, mc.st.nvm.reads.since(&r0), out.mismatched_roots.is_empty())
    };
    let (h_n, r_n, ok_n) = counted(n);
    let (h_below, r_below, ok_below) = counted(below);
    // The recovery counted its rebuild from level n: never less than that
    // rebuild alone.
    let not_less = r_n.total() <= reads.total() && RegionKind::ALL.iter().all(|&k| r_n.of(k) <= reads.of(k)) && h_n <= hashes;
    if !not_less {
        return Err(format!("the recovery counted less than its own rebuild from level {n}: it does not rebuild from level {n}"));
    }
    let swap = |total: u64, out: u64, into: u64| total - out + into;
    Ok(LevelBelow {
        level: below,
        reads: ByKind {
            data: swap(reads.data, r_n.data, r_below.data),
            counter: swap(reads.counter, r_n.counter, r_below.counter),
            mac: swap(reads.mac, r_n.mac, r_below.mac),
            tree: swap(reads.tree, r_n.tree, r_below.tree),
            recovery: swap(reads.recovery, r_n.recovery, r_below.recovery),
        },
        hashes: swap(hashes, h_n, h_below),
        ok: ok_n && ok_below,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;

    fn run(preset: &str, cache: u64, ops: u64) -> Measured {
        let sets = vec![format!("metadata_cache.organization.unified.capacity_bytes={cache}")];
        let cfg = load_preset(preset, &sets).unwrap();
        measure(&cfg, &WorkloadKind::parse("hash").unwrap(), ops, 1, &|_, _| {}).unwrap()
    }

    /// STAR restores exactly the lines that were dirty, reads about ten
    /// lines for each (itself, its parent, its eight children: STAR IV-F),
    /// and the counts of a cache twice as large are predicted from a
    /// smaller one's to within a tenth.
    #[test]
    fn star_counts_scale_with_the_stale_lines() {
        let small = run("star", 32 << 10, 1500);
        assert!(small.ok && small.restored == small.dirty_lines && small.restored > 100, "{small:?}");
        let per = small.reads.total() as f64 / small.restored as f64;
        assert!((9.0..11.5).contains(&per), "{per} reads per stale line");
        let large = run("star", 64 << 10, 3000);
        assert!(large.ok, "{large:?}");
        let p = Prices { read_ns: 100.0, hash_ns: 20.0 };
        let predicted = small.scaled(large.cache_lines, large.restored as f64, p);
        let got = large.estimate(p);
        assert!((predicted.seconds / got.seconds - 1.0).abs() < 0.1, "{predicted:?} vs {got:?}");
    }

    /// Counted from the level below, TriadNVM-N's recovery reads level
    /// N-1 instead of level N and hashes level N-1's nodes too: for
    /// TriadNVM-1, every counter block (Triad-NVM V-B's counting); the
    /// recovery itself is counted as before.
    #[test]
    fn triad_counted_from_the_level_below_reads_one_level_lower() {
        let gib = 1u64 << 30;
        let sets = vec![
            format!("memory.capacity_bytes={}", 2 * gib),
            format!("memory.persistent_regions=[{{start_bytes={gib},size_bytes={gib}}}]"),
        ];
        let w = WorkloadKind::parse("hash:size_mib=64").unwrap();
        for (preset, below_nodes) in [("triad-1", gib / 4096), ("triad-2", gib / 4096 / 8)] {
            let cfg = load_preset(preset, &sets).unwrap();
            let plain = measure(&cfg, &w, 300, 1, &|_, _| {}).unwrap();
            let m = measure_counting(&cfg, &w, 300, 1, &|_, _| {}, Counting::AlsoFromLevelBelow).unwrap();
            assert!(plain.from_level_below.is_none() && plain.ok);
            assert_eq!(
                (m.hashes, m.reads.total()),
                (plain.hashes, plain.reads.total()),
                "{preset}: the recovery itself is counted as before"
            );
            let b = m.from_level_below.clone().unwrap();
            assert!(b.ok, "{preset}: {b:?}");
            assert_eq!(b.hashes - m.hashes, below_nodes, "{preset}: level N-1's nodes hashed too");
            // Level N-1's nodes read instead of level N's, an eighth as many.
            assert_eq!(b.reads.total() + below_nodes / 8, m.reads.total() + below_nodes, "{preset}: {b:?} {m:?}");
            let read_below =
                if preset == "triad-1" { b.reads.counter - m.reads.counter } else { b.reads.tree + below_nodes / 8 - m.reads.tree };
            assert_eq!(read_below, below_nodes, "{preset}");
        }
        let e = measure_counting(&load_preset("star", &[]).unwrap(), &w, 10, 1, &|_, _| {}, Counting::AlsoFromLevelBelow).unwrap_err();
        assert!(e.contains("`star` persists no tree level"), "{e}");
    }

    /// Anubis reads its whole shadow table, whatever is dirty.
    #[test]
    fn anubis_reads_its_whole_table() {
        let m = run("anubis-sit", 32 << 10, 1500);
        assert!(m.ok, "{m:?}");
        assert_eq!(m.reads.of(RegionKind::Recovery), m.cache_lines);
        assert!(m.restored >= m.dirty_lines);
    }
}
