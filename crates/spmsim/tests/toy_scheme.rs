//! The test suite's toy scheme (`scheme/toy_lazy_tree.rs`, preset
//! `tests/presets/toy-lazy-tree.toml`): added as one file, one registry
//! line and one preset, it is timed, crash-checked and battery-sized by the
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

/// `preset` in 64 MiB with `sets`, crash-checked at `points` sampled
/// points of 300 random writes.
fn crash_check(preset: &str, sets: &[&str], points: u64) -> (spmsim::config::SimConfig, spmsim::verify::oracle::CrashReport) {
    let mut o: Vec<String> = vec!["memory.capacity_bytes=67108864".into()];
    o.extend(sets.iter().map(|s| s.to_string()));
    let cfg = load_preset(preset, &o).unwrap();
    let w = WorkloadKind::RandomWrites;
    let events = w.generate(300, 7).unwrap();
    let r = CrashCheck {
        cfg: &cfg,
        workload_name: w.name(),
        events,
        ops: 300,
        seed: 7,
        points: CrashPoints::Sample(points),
        max_listed: 50,
        guarantee: None,
    }
    .run()
    .unwrap();
    (cfg, r)
}

#[test]
fn the_toy_scheme_fails_the_crash_oracle_as_it_should() {
    let (cfg, r) = crash_check(&preset(), &[], 30);
    assert!(cfg.expect_crash_violations);
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

// The toy scheme that keeps state (`scheme/toy_counting.rs`, preset
// `tests/presets/toy-counting.toml`): a register of writes since power-on
// in its own field of the chip state, and a volatile table of pages in its
// runtime. Added as one file, one registry line and one preset.

fn counting_preset() -> String {
    format!("{}/../../tests/presets/toy-counting.toml", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_stateful_toy_is_timed_and_reports_its_state() {
    let cfg = load_preset(&counting_preset(), &[]).unwrap();
    let s = spmsim::timing::simulate(&cfg, &WorkloadKind::RandomWrites, 50_000, 1).unwrap();
    assert!(s.roi.core.cycles > 0 && s.roi.core.stores > 0);
    let own = s.roi.scheme.as_ref().expect("the toy's counters are under roi.scheme");
    let writes = own["writes_since_power_on"].as_u64().unwrap();
    let pages = own["pages_written"].as_u64().unwrap();
    // Every persistent store writes its counter block once (no page
    // re-encryption this early); the table holds each page once.
    assert_eq!(writes, s.roi.core.stores - s.roi.core.volatile_stores, "{own}");
    assert!(pages > 0 && pages <= writes, "{own}");
}

#[test]
fn the_stateful_toy_keeps_its_register_across_a_crash_and_its_table_not() {
    let cfg = load_preset(&counting_preset(), &["memory.capacity_bytes=67108864".into()]).unwrap();
    let mut s = spmsim::machine::System::new(&cfg, 3);
    for e in WorkloadKind::RandomWrites.generate(40, 3).unwrap() {
        s.apply(&e).unwrap();
    }
    let before = spmsim::scheme::toy_counting::ToyCountingRuntime::register(&s.mc.st.chip);
    assert!(before > 0);
    assert!(s.mc.rules.scheme.stats(&s.mc.st).unwrap()["pages_written"].as_u64().unwrap() > 0);
    s.power_fail();
    // Non-volatile: the register is still there for recovery; the table,
    // volatile, is gone.
    assert_eq!(spmsim::scheme::toy_counting::ToyCountingRuntime::register(&s.mc.st.chip), before);
    assert_eq!(s.mc.rules.scheme.stats(&s.mc.st).unwrap()["pages_written"], 0);
    let rep = s.recover();
    assert!(rep.ok() && rep.tree_rebuilt, "{rep:?}");
    assert_eq!(rep.count("writes_before_the_crash"), before);
    assert_eq!(spmsim::scheme::toy_counting::ToyCountingRuntime::register(&s.mc.st.chip), 0, "a new power-on");
    // A saved chip carries the register in the scheme's field.
    let json = serde_json::to_string(&s.mc.chip_state()).unwrap();
    assert!(!json.contains("writes_since_power_on"), "an empty register is left out: {json}");
}

#[test]
fn the_stateful_toy_passes_the_crash_oracle_and_its_control_fails_it() {
    let (cfg, r) = crash_check(&counting_preset(), &[], 40);
    assert_eq!(r.violations, 0, "{:?}", r.violations_by_check);
    assert!(r.as_expected(&cfg));
    // The register in SRAM: a crash zeroes it, recovery skips the rebuild,
    // and the tree nodes the crash lost leave reads the root refuses.
    let (cfg, r) = crash_check(&counting_preset(), &["scheme.nv_register=false", "expect_crash_violations=true"], 40);
    assert!(r.violations > 0, "the control must fail the oracle");
    assert!(r.violations_by_check.keys().any(|k| k == "root" || k == "tree"), "{:?}", r.violations_by_check);
    assert!(r.as_expected(&cfg));
}
