//! Transaction-specific epoch persistency (Secon 3.3) against the crash
//! oracle's transactional guarantee: tep holds it, its control without
//! the pair order does not, the check itself catches a data write that
//! persisted without its log, and strict configurations are checked as
//! they always were.

mod common;

use spmsim::verify::oracle::{CrashCheck, CrashPoints, CrashReport, Guarantee};
use spmsim::workload::{Event, Op, WorkloadKind};

fn check_events(
    cfg: &spmsim::config::SimConfig,
    events: Vec<Event>,
    points: CrashPoints,
    g: Option<Guarantee>,
) -> Result<CrashReport, String> {
    CrashCheck { cfg, workload_name: "unit".into(), events, ops: 0, seed: 7, points, max_listed: 20, guarantee: g }.run()
}

/// A preset at its own memory size (the workloads' structures lie above
/// `common::small`'s 64 MiB; storage is sparse).
fn preset(name: &str) -> spmsim::config::SimConfig {
    spmsim::config::load_preset(name, &[]).unwrap()
}

fn check(name: &str, workload: &str, ops: u64, points: CrashPoints, g: Option<Guarantee>) -> CrashReport {
    let cfg = preset(name);
    let w = WorkloadKind::parse(workload).unwrap();
    let events = w.generate(ops, 7).unwrap();
    CrashCheck { cfg: &cfg, workload_name: w.name(), events, ops, seed: 7, points, max_listed: 20, guarantee: g }.run().unwrap()
}

#[test]
fn tep_holds_the_transactional_guarantee_and_its_unordered_control_does_not() {
    for w in ["queue", "btree", "hash"] {
        let tep = check("tep", w, 8, CrashPoints::All, None);
        assert_eq!(tep.guarantee, Guarantee::Transactional, "tep's model gives the transactional guarantee");
        assert_eq!(
            (tep.violations, tep.recovery_failures, tep.log_replay_failures),
            (0, 0, Some(0)),
            "{w}: {:?}",
            tep.violation_list.first()
        );
        let t = tep.tep.expect("tep reports its manager's work");
        assert!(t.log_ack_waits > 0 && t.early_flushes > 0 && t.paired_epochs > t.regular_epochs, "{w}: {t:?}");
        assert_eq!(t.unordered_data_flushes, 0);

        let un = check("tep-unordered", w, 8, CrashPoints::All, None);
        assert!(un.violations > 0, "{w}: the control must fail");
        assert!(un.tep.unwrap().unordered_data_flushes > 0, "{w}: data went before its log");
        let cfg = preset("tep-unordered");
        assert!(cfg.expect_crash_violations && un.as_expected(&cfg));
    }
}

#[test]
fn tep_reaches_states_strict_persistency_never_shows() {
    // Lines wait in the volatile L1D and leave out of program order, so the
    // strict guarantee (every store persisted) fails on tep, while the
    // transactional one holds.
    let strict = check("tep", "queue", 8, CrashPoints::Sample(300), Some(Guarantee::Strict));
    assert!(strict.violations > 0, "tep keeps stores volatile past the next event");
    let tx = check("tep", "queue", 8, CrashPoints::Sample(300), None);
    assert_eq!(tx.violations, 0);
}

/// A hand-written transaction on `data` (a heap block): the log header, an
/// entry for the first word, then the data word; `data_first` writes the
/// data before its entry (a program without the log-before-data order).
fn transaction(data_first: bool) -> Vec<Event> {
    let data = 8 << 20;
    let mut log = vec![Event::store(64, 8, data | 1 << 48, true), Event::store(72, 8, 1, true), Event::store(80, 8, 0, true)];
    let fence = [Event::marker(Op::Fence), Event::marker(Op::Epoch)];
    let mut v = vec![Event::marker(Op::TxBegin), Event::store(0, 8, 1, true)];
    if data_first {
        v.push(Event::store(data, 8, 0x55, false));
        v.append(&mut log);
        v.extend(fence);
    } else {
        v.append(&mut log);
        v.extend(fence);
        v.push(Event::store(data, 8, 0x55, false));
    }
    v.extend(fence);
    v.push(Event::store(0, 8, 0, true));
    v.extend(fence);
    v.push(Event::marker(Op::TxCommit));
    v
}

#[test]
fn the_transactional_check_catches_a_data_write_persisted_without_its_log() {
    // Strict persistency persists every store at once, so the program's own
    // order is what reaches NVM.
    let cfg = common::small("sp", &[]);
    let good = check_events(&cfg, transaction(false), CrashPoints::All, Some(Guarantee::Transactional)).unwrap();
    assert_eq!(good.violations, 0, "{:?}", good.violation_list.first());
    let bad = check_events(&cfg, transaction(true), CrashPoints::All, Some(Guarantee::Transactional)).unwrap();
    // Crashes after the data store and before the entry is whole: the
    // header says transaction 1 is open, but no entry rolls the word back.
    // (after the data store, the entry's head and its tx id; once its old
    // word is stored the entry is whole and rolls the word back).
    assert_eq!(bad.violating_crash_points, 3, "{:?}", bad.violation_list);
    let v = &bad.violation_list[0];
    assert_eq!((v.crash_point, v.address.as_str(), v.check.as_str()), (3, "0x800000", "plaintext"), "{v:?}");
    assert_eq!(v.actual.as_deref().map(|a| &a[..2]), Some("55"), "the uncommitted word persisted");
}

#[test]
fn a_torn_or_stale_log_entry_is_not_replayed() {
    // Two transactions log the same word at the same place of the log.
    // Crash right after the second one's tx id, before its old word: NVM
    // holds the first transaction's old word (0) there, and replaying it
    // would overwrite the committed 7. The entry is not whole, so it is not
    // replayed, at every crash point.
    let cfg = common::small("sp", &[]);
    let data = 8 << 20;
    let mut ev = Vec::new();
    for (tx, old, new) in [(1u64, 0u64, 7u64), (2, 7, 9)] {
        ev.extend([
            Event::marker(Op::TxBegin),
            Event::store(0, 8, tx, true),
            Event::store(64, 8, data | 1 << 48, true),
            Event::store(72, 8, tx, true),
            Event::store(80, 8, old, true),
            Event::marker(Op::Fence),
            Event::store(data, 8, new, false),
            Event::marker(Op::Fence),
            Event::store(0, 8, 0, true),
            Event::marker(Op::Fence),
            Event::marker(Op::TxCommit),
        ]);
    }
    let r = check_events(&cfg, ev, CrashPoints::All, Some(Guarantee::Transactional)).unwrap();
    assert_eq!((r.crash_points, r.violations), (23, 0), "{:?}", r.violation_list.first());
}

#[test]
fn strict_presets_are_checked_as_before() {
    for name in ["sp", "cobcm", "secure-wt"] {
        let cfg = preset(name);
        let w = WorkloadKind::parse("btree").unwrap();
        let events = w.generate(20, 7).unwrap();
        let run = |g| {
            CrashCheck {
                cfg: &cfg,
                workload_name: w.name(),
                events: events.clone(),
                ops: 20,
                seed: 7,
                points: CrashPoints::Sample(40),
                max_listed: 5,
                guarantee: g,
            }
            .run()
            .unwrap()
        };
        let default = run(None);
        assert_eq!(default.guarantee, Guarantee::Strict, "{name}: a strict model gives the strict guarantee");
        let json = serde_json::to_string(&default).unwrap();
        assert_eq!(json, serde_json::to_string(&run(Some(Guarantee::Strict))).unwrap());
        for key in ["guarantee", "log_replay_failures", "\"tep\""] {
            assert!(!json.contains(key), "{name}: a strict report keeps its fields: {key}");
        }
        assert_eq!((default.violations, default.blocks_checked_per_point > 0), (0, true));
        // The transactional guarantee holds on them as well.
        let tx = run(Some(Guarantee::Transactional));
        assert_eq!((tx.violations, tx.log_replay_failures, tx.tep.is_none()), (0, Some(0), true), "{name}");
    }
}

#[test]
fn bbb_gap_fails_the_transactional_guarantee_too() {
    let r = check("bbb-gap", "queue", 8, CrashPoints::Sample(200), Some(Guarantee::Transactional));
    assert!(r.violations > 0);
}

#[test]
fn a_multi_threaded_workload_is_refused_with_what_is_missing() {
    let cfg = preset("tep");
    let w = WorkloadKind::parse("btree:threads=2").unwrap();
    let cfg = cfg.with_cores_for(2).unwrap();
    let events = w.generate(4, 7).unwrap();
    let e = CrashCheck {
        cfg: &cfg,
        workload_name: w.name(),
        events,
        ops: 4,
        seed: 7,
        points: CrashPoints::Sample(5),
        max_listed: 5,
        guarantee: None,
    }
    .run()
    .unwrap_err();
    assert!(e.contains("multi-threaded") && e.contains("undo-log entries") && e.contains("--guarantee strict"), "{e}");
}

#[test]
fn log_flags_that_disagree_with_the_log_region_are_an_error() {
    let cfg = common::small("tep", &[]);
    let mut ev = transaction(false);
    // A store inside the log region not flagged `log`.
    ev.insert(3, Event::store(128, 8, 5, false));
    let e = check_events(&cfg, ev, CrashPoints::Sample(3), None).unwrap_err();
    assert!(e.contains("not flagged `log`") && e.contains("log region"), "{e}");
}
