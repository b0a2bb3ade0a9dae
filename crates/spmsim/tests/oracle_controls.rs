//! The crash oracle over every preset: the consistent ones pass, the
//! controls fail, and each kind of failure can be produced.

mod common;

use spmsim::verify::oracle::{CrashCheck, CrashPoints, CrashReport};
use spmsim::workload::WorkloadKind;

fn check(cfg: &spmsim::config::SimConfig, w: &WorkloadKind, ops: u64, points: CrashPoints) -> CrashReport {
    let events = w.generate_placed(ops, 7, spmsim::workload::Placement::of(cfg)).unwrap();
    CrashCheck { cfg, workload_name: w.name(), events, ops, seed: 7, points, max_listed: 50, guarantee: None }.run().unwrap()
}

#[test]
fn every_preset_meets_its_expectation_on_array_swap() {
    for (name, cfg) in common::presets() {
        let r = check(&cfg, &WorkloadKind::ArraySwap, 60, CrashPoints::All);
        assert!(r.crash_points > r.events, "{name}: a crash point after every event and one before all");
        if cfg.expect_crash_violations {
            assert!(r.violations > 0, "{name} is a control and must fail the oracle");
            let v = &r.violation_list[0];
            if !cfg.memory.persistent_regions.is_empty() {
                // Triad-NVM's controls fail a check of their own: a pad
                // used twice, a rebuilt tree that misses the root.
                assert!(v.actual.is_none() && v.check != "plaintext", "{name}: {v:?}");
            } else if cfg.persistence.tep.pair_order {
                assert!(v.actual.is_none() && v.check != "plaintext" && !v.detail.is_empty(), "{name}: {v:?}");
            } else {
                // A control without TEP's pair order breaks the order of
                // data and log: every check passes, the values are wrong.
                assert!(v.actual.is_some() && v.check == "plaintext", "{name}: {v:?}");
            }
        } else {
            assert_eq!(r.violations, 0, "{name}: {:?}", r.violation_list.first());
            assert_eq!(r.recovery_failures, 0, "{name}");
        }
    }
}

#[test]
fn consistent_presets_hold_on_random_and_sequential_writes() {
    for (name, cfg) in common::presets().into_iter().filter(|(_, c)| !c.expect_crash_violations) {
        for w in [WorkloadKind::RandomWrites, WorkloadKind::SeqWrites] {
            let r = check(&cfg, &w, 400, CrashPoints::Sample(60));
            assert_eq!(r.crash_points, 60);
            assert_eq!(r.violations, 0, "{name} {}: {:?}", w.name(), r.violation_list.first());
        }
    }
}

#[test]
fn small_caches_force_evictions_and_stay_consistent() {
    // A 4 KB metadata cache evicts constantly, so write-back paths (and SIT's
    // lazy parent updates) run on every store.
    for p in ["secure-wb-battery", "sit-wb-battery", "secure-eadr"] {
        let cfg = common::small(
            p,
            &["metadata_cache.organization={type='unified', unified={capacity_bytes=4096, ways=4}}", "persistence.wpq_entries=4"],
        );
        let r = check(&cfg, &WorkloadKind::RandomWrites, 600, CrashPoints::Sample(80));
        assert_eq!(r.violations, 0, "{p}: {:?}", r.violation_list.first());
    }
}

#[test]
fn a_lost_persist_buffer_shows_up_as_wrong_plaintext() {
    // Same as bbb-gap, but the buffer is not battery-backed: the stores in it
    // vanish, memory stays self-consistent, and only the value is wrong.
    let cfg = common::small("bbb-gap", &["persistence.battery.persist_buffer=false"]);
    let r = check(&cfg, &WorkloadKind::ArraySwap, 40, CrashPoints::All);
    assert!(r.violations > 0);
    assert_eq!(r.violations_by_check.keys().collect::<Vec<_>>(), vec!["plaintext"]);
    assert!(r.violation_list[0].actual.is_some());
}

#[test]
fn lost_root_registers_fail_recovery() {
    let cfg = common::small("secure-wt", &["persistence.battery.nv_registers=false"]);
    let r = check(&cfg, &WorkloadKind::RandomWrites, 50, CrashPoints::Sample(10));
    assert!(r.violations > 0 && r.recovery_failures > 0);
}

#[test]
fn drain_work_is_counted() {
    let cfg = common::small("secure-eadr", &[]);
    let r = check(&cfg, &WorkloadKind::RandomWrites, 200, CrashPoints::Sample(20));
    // Every drained 64 B line is encrypted as four 16 B AES blocks, so the
    // crash point with the most lines needs at least four times as many
    // AES blocks (the maximum over points is at least that point's count).
    assert!(r.drain.max_front_lines > 0 && r.drain.max_tree_hashes > 0, "{:?}", r.drain);
    assert!(r.drain.max_aes_blocks >= 4 * r.drain.max_front_lines, "{:?}", r.drain);
    let cfg = common::small("secure-wt", &[]);
    let r = check(&cfg, &WorkloadKind::RandomWrites, 200, CrashPoints::Sample(20));
    assert_eq!(
        (r.drain.max_front_lines, r.drain.max_aes_blocks, r.drain.max_tree_hashes),
        (0, 0, 0),
        "SP leaves no security work to the battery"
    );
}

#[test]
fn crash_check_is_deterministic_across_thread_counts() {
    let cfg = common::small("bbb-gap", &[]);
    let run = |threads| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| serde_json::to_string(&check(&cfg, &WorkloadKind::ArraySwap, 30, CrashPoints::All)).unwrap())
    };
    assert_eq!(run(1), run(2));
}

#[test]
fn early_counters_survive_a_neighbours_minor_overflow() {
    // 9000 swaps overflow minor counters of the array's pages while other
    // blocks of the page sit in the SecPB with counters advanced early: the
    // page re-encryption must leave those blocks to their drain.
    for p in ["nogap", "cm", "bcm"] {
        let cfg = common::small(p, &[]);
        let r = check(&cfg, &WorkloadKind::ArraySwap, 9000, CrashPoints::Sample(40));
        assert_eq!(r.violations, 0, "{p}: {:?}", r.violation_list.first());
    }
}
