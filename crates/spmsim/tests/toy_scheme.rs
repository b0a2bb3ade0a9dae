//! The test suite's toy scheme (`scheme/toy_lazy_tree.rs`, preset
//! `tests/presets/toy-lazy-tree.toml`): added as one file, one registry
//! arm and one preset, it is timed, crash-checked and battery-sized by the
//! same mechanism as every other scheme (docs/architecture.md).

use spmsim::battery::{estimate, EnergyConfig, SchemeKind, SecPbVariant};
use spmsim::config::load_preset;
use spmsim::verify::oracle::{CrashCheck, CrashPoints};
use spmsim::workload::WorkloadKind;

fn preset() -> String {
    format!("{}/../../tests/presets/toy-lazy-tree.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_toy_scheme_is_timed() {
    let cfg = load_preset(&preset(), &[]).unwrap();
    let s = spmsim::timing::simulate(&cfg, &WorkloadKind::RandomWrites, 50_000, 1).unwrap();
    assert!(s.roi.core.cycles > 0 && s.roi.core.stores > 0);
    // A persist buffer that does everything late: every drain completes
    // a whole tuple at the MC, so drains and allocations are counted.
    assert!(
        s.roi.persist_path.buffer.as_ref().unwrap().drains > 0 && s.roi.persist_path.buffer.as_ref().unwrap().allocations > 0,
        "{:?}",
        s.roi
    );
}

#[test]
fn the_toy_scheme_fails_the_crash_oracle_as_it_should() {
    let cfg = load_preset(&preset(), &["memory.capacity_bytes=67108864".into()]).unwrap();
    assert!(cfg.expect_crash_violations);
    let w = WorkloadKind::RandomWrites;
    let events = w.generate(300, 7).unwrap();
    let r = CrashCheck {
        cfg: &cfg,
        workload_name: w.name(),
        events,
        ops: 300,
        seed: 7,
        points: CrashPoints::Sample(30),
        max_listed: 50,
        guarantee: None,
    }
    .run()
    .unwrap();
    assert!(r.violations > 0, "stale tree nodes must be caught");
    // Stale nodes are found on the read path (no rebuild at recovery).
    assert!(r.violations_by_check.keys().any(|k| k == "root" || k == "tree"), "{:?}", r.violations_by_check);
    assert!(r.as_expected(&cfg));
}

#[test]
fn the_toy_scheme_is_battery_sized() {
    let energy = EnergyConfig::load(&spmsim::battery::default_energy_path()).unwrap();
    let cfg = load_preset(&preset(), &[]).unwrap();
    let toy = estimate(&energy, cfg.scheme, 32);
    assert!(toy.energy_uj > 0.0 && toy.supercap.volume_mm3 > 0.0);
    // Its battery does what COBCM's does (N + 1 entries, every step late),
    // so the model, reading the same description, gives the same energy.
    let cobcm = estimate(&energy, SchemeKind::secpb(SecPbVariant::Cobcm), 32);
    assert_eq!(toy.energy_uj, cobcm.energy_uj);
    assert_eq!(toy.late_work, cobcm.late_work);
}
