//! Compositions of a front end with another scheme's metadata rules:
//! they run, the crash oracle and the attack harness judge
//! them like any preset, and taking the front end's battery away is found.

use spmsim::config::{load_str, SimConfig};
use spmsim::verify::oracle::{CrashCheck, CrashPoints, CrashReport};
use spmsim::workload::WorkloadKind;

fn composed(base: &str, front: &str, metadata: &str, extra: &str) -> SimConfig {
    let text = format!(
        "{base}\nname = 'c'\n[compose]\nfront = '{front}'\nmetadata = '{metadata}'\n{extra}\n[memory]\ncapacity_bytes = 67108864\n"
    );
    load_str(&text, "c.toml", &[]).unwrap_or_else(|e| panic!("{front} + {metadata}: {e}"))
}

fn crash(cfg: &SimConfig) -> CrashReport {
    let w = WorkloadKind::RandomWrites;
    let events = w.generate_placed(300, 5, spmsim::workload::Placement::of(cfg)).unwrap();
    CrashCheck { cfg, workload_name: w.name(), events, ops: 300, seed: 5, points: CrashPoints::Sample(40), max_listed: 5, guarantee: None }
        .run()
        .unwrap()
}

fn attacks_as_expected(cfg: &SimConfig) -> bool {
    let w = WorkloadKind::RandomWrites;
    let events = w.generate_placed(300, 5, spmsim::workload::Placement::of(cfg)).unwrap();
    let rep = spmsim::verify::attack::run(cfg, &w.name(), &events, 5).unwrap();
    rep.attacks.iter().any(|a| a.applicable()) && rep.as_expected(cfg)
}

/// A persist buffer before STAR's, Anubis's, Osiris's and the multiset
/// hash's metadata caches, and eADR's caches before STAR's: every store
/// the buffer held at the crash is drained through the engine, and the
/// scheme's recovery restores what the drain left dirty.
#[test]
fn persist_buffers_before_other_papers_metadata_recover_and_detect_attacks() {
    for (base, front, metadata) in [
        ("extends = 'sit-wb'", "persist-buffer:cobcm", "star"),
        // OBCM's counter is taken early; the controller makes the MAC late
        // with STAR's spare bits.
        ("extends = 'sit-wb'", "persist-buffer:obcm", "star"),
        ("extends = 'sit-wb'", "cache-hierarchy", "star"),
        ("extends = 'anubis-sit'", "persist-buffer:cobcm", "anubis-sit"),
        ("extends = 'osiris'", "persist-buffer:cobcm", "osiris"),
        ("extends = 'mset'", "persist-buffer:bcm", "mset"),
        ("", "persist-buffer:nogap", "write-through"),
    ] {
        let cfg = composed(base, front, metadata, "");
        assert!(matches!(cfg.scheme, spmsim::scheme::SchemeKind::Composed(_)), "{front} + {metadata}");
        let r = crash(&cfg);
        assert_eq!(r.crash_points, 40);
        assert_eq!((r.violations, r.recovery_failures), (0, 0), "{front} + {metadata}: {:?}", r.violation_list.first());
        assert!(attacks_as_expected(&cfg), "{front} + {metadata}");
    }
}

/// The battery axis: the buffer outside the battery domain loses the
/// stores it held, and the oracle finds them (the negative control).
#[test]
fn a_persist_buffer_without_its_battery_loses_stores() {
    let cfg = composed("extends = 'sit-wb'", "persist-buffer:cobcm", "star", "battery = 'adr'");
    let r = crash(&cfg);
    assert!(r.violations > 0, "the buffer's stores must be lost");
    assert!(r.violation_list.iter().any(|v| v.check == "plaintext" || v.check == "unwritten"), "{:?}", r.violation_list.first());
}

/// A composition is timed like any scheme: its persist buffer hides the
/// metadata work the memory controller front end waits for.
#[test]
fn a_composition_runs_on_the_timing_model() {
    let run = |cfg: &SimConfig| {
        let w = WorkloadKind::parse("random-writes").unwrap();
        spmsim::timing::simulate(cfg, &w, 20_000, 3).unwrap().roi.core.cycles
    };
    let mc = run(&composed("extends = 'sit-wb'", "memory-controller", "star", ""));
    let pb = run(&composed("extends = 'sit-wb'", "persist-buffer:cobcm", "star", ""));
    assert!(pb < mc, "cobcm+star {pb} cycles against star's {mc}");
}

/// An attack that recovery undoes is no attack: behind COBCM's buffer,
/// STAR's recovery rebuilds the stale node the attacker replayed from its
/// children, and the recovered memory equals the untampered one's byte for
/// byte. The harness says so instead of counting it undetected.
#[test]
fn an_attack_recovery_undoes_is_skipped_with_why() {
    let mut cfg = load_str(
        "extends = 'sit-wb'\nname = 'c'\n[compose]\nfront = 'persist-buffer:cobcm'\nmetadata = 'star'\n",
        "c.toml",
        &["memory.capacity_bytes=8589934592".into(), "security.crypto=real".into()],
    )
    .unwrap();
    cfg.name = "cobcm+star".into();
    let w = WorkloadKind::parse("btree").unwrap();
    let events = w.generate_placed(300, 1, spmsim::workload::Placement::of(&cfg)).unwrap();
    let rep = spmsim::verify::attack::run(&cfg, &w.name(), &events, 1).unwrap();
    let replay = rep.attacks.iter().find(|a| a.name == "star-replay-stale-node").unwrap();
    assert!(replay.skipped.as_deref().is_some_and(|s| s.contains("recovery rewrote")), "{replay:?}");
    assert_eq!(rep.undetected, 0);
    assert!(rep.as_expected(&cfg));
}
