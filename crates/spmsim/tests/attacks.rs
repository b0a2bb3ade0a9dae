//! The attack harness: every applicable attack is detected on every secure
//! preset, and the harness itself can report an undetected attack.

mod common;

use spmsim::workload::{Event, WorkloadKind};

#[test]
fn every_attack_is_detected_on_every_secure_preset() {
    for (name, cfg) in common::presets().into_iter().filter(|(_, c)| c.security.enabled && !c.expect_undetected_attacks) {
        for w in [WorkloadKind::RandomWrites, WorkloadKind::ArraySwap] {
            let ev = w.generate(300, 3).unwrap();
            let r = spmsim::verify::attack::run(&cfg, &w.name(), &ev, 3).unwrap();
            assert_eq!(r.undetected, 0, "{name} {}: {:?}", w.name(), r.attacks.iter().filter(|a| !a.detected).collect::<Vec<_>>());
            for n in [
                "ciphertext-bit-flip",
                "mac-bit-flip",
                "splice",
                "replay-data-mac",
                "replay-data-mac-counter",
                "tree-node-tamper",
                "counter-tamper",
                "rollback-page",
                "rollback-page-and-tree-path",
                "rollback-image",
            ] {
                let a = r.attacks.iter().find(|a| a.name == n).unwrap_or_else(|| panic!("{name}: {n} missing"));
                // Carried out (these workloads rewrite blocks, so the replays
                // have something to replay) and caught at a named address.
                assert!(a.applicable() && a.detected && a.where_.contains(" at 0x"), "{name} {}: {a:?}", w.name());
            }
            let ruled_out: Vec<&str> = r.attacks.iter().filter(|a| a.ruled_out.is_some()).map(|a| a.name.as_str()).collect();
            // The scheme's own on-chip state (its front end's battery domain,
            // Secon's ADR-resident counter track) is ruled out too, by the
            // scheme's own_state hook.
            let own = match (cfg.scheme.work().front, cfg.scheme.name()) {
                (spmsim::scheme::params::Front::PersistBuffer, _) => vec!["persist-buffer-tamper"],
                (spmsim::scheme::params::Front::CacheHierarchy, _) => vec!["data-cache-tamper"],
                (spmsim::scheme::params::Front::MemoryController, "secon") => vec!["counter-track-tamper"],
                (spmsim::scheme::params::Front::MemoryController, "star") => vec!["star-adr-bitmap-tamper"],
                (spmsim::scheme::params::Front::MemoryController, "triad") => vec!["persistent-registers-tamper"],
                (spmsim::scheme::params::Front::MemoryController, "mset") => vec!["multiset-registers-tamper"],
                (spmsim::scheme::params::Front::MemoryController, "assure") => vec!["hot-tree-register-tamper"],
                (spmsim::scheme::params::Front::MemoryController, "cachetree") => vec!["hnode-tree-register-tamper"],
                (spmsim::scheme::params::Front::MemoryController, _) => vec![],
            };
            let expected: Vec<&str> = ["root-register-tamper", "metadata-cache-tamper"].into_iter().chain(own).collect();
            assert_eq!(ruled_out, expected, "{name}: only on-chip targets are ruled out");
        }
    }
}

#[test]
fn an_insecure_memory_lets_attacks_through() {
    let cfg = common::small("secure-wt", &["security.enabled=false"]);
    let ev = WorkloadKind::RandomWrites.generate(200, 1).unwrap();
    let r = spmsim::verify::attack::run(&cfg, "random-writes", &ev, 1).unwrap();
    assert!(r.undetected > 0, "with no MACs or tree the harness must report undetected attacks");
}

#[test]
fn rollbacks_to_never_written_are_detected_for_bmt_and_sit() {
    for preset in ["secure-wt", "sit-strict", "sit-wb-battery", "cobcm", "cm-dbmf"] {
        let cfg = common::small(preset, &[]);
        let ev = WorkloadKind::RandomWrites.generate(200, 5).unwrap();
        let r = spmsim::verify::attack::run(&cfg, "random-writes", &ev, 5).unwrap();
        for n in ["rollback-page", "rollback-page-and-tree-path", "rollback-image"] {
            let a = r.attacks.iter().find(|a| a.name == n).unwrap();
            assert!(a.detected, "{preset}: {n} went undetected: {a:?}");
        }
    }
}

#[test]
fn an_attack_with_nothing_to_attack_is_skipped_not_undetected() {
    // Each store writes a block of its own, so no block changes between the
    // two snapshots and the replays have nothing to replay.
    let cfg = common::small("secure-wt", &[]);
    let ev: Vec<Event> = (0..40u64).map(|i| Event::store(i * 4096, 8, i + 1, false)).collect();
    let r = spmsim::verify::attack::run(&cfg, "one-store-per-block", &ev, 1).unwrap();
    for n in ["replay-data-mac", "replay-data-mac-counter"] {
        let a = r.attacks.iter().find(|a| a.name == n).unwrap();
        assert!(a.skipped.is_some() && !a.applicable(), "{n}: {a:?}");
    }
    assert_eq!(r.undetected, 0, "{:?}", r.attacks);
    assert!(r.as_expected(&cfg));
    let insecure = common::small("secure-wt", &["security.enabled=false"]);
    let r = spmsim::verify::attack::run(&insecure, "one-store-per-block", &ev, 1).unwrap();
    assert!(r.undetected > 0 && r.as_expected(&insecure), "an insecure control must let attacks through");
}

#[test]
fn secons_recovery_state_is_attacked_at_recovery_and_every_attack_is_caught() {
    // random-writes has no barrier, so its last writes' root updates are
    // still pending when the harness cuts the power.
    let ev = WorkloadKind::RandomWrites.generate(300, 4).unwrap();
    let cfg = common::small("secon", &[]);
    let r = spmsim::verify::attack::run(&cfg, "random-writes", &ev, 4).unwrap();
    for n in ["secon-mark-clean-cmac", "secon-clear-marked-cmac", "secon-tamper-marked-counter", "secon-replay-marked-counter"] {
        let a = r.attacks.iter().find(|a| a.name == n).unwrap_or_else(|| panic!("{n} missing"));
        assert!(a.applicable() && a.detected, "{n}: {a:?}");
    }
    assert_eq!((r.undetected, r.false_alarms), (0, 0), "{:?}", r.false_alarm);
    assert!(r.as_expected(&cfg));
    // The paper's roll-back leaves the pending lines unreadable: the
    // untampered crash image is refused, which a crash control may do.
    let paper = common::small("secon-paper-rollback", &[]);
    let r = spmsim::verify::attack::run(&paper, "random-writes", &ev, 4).unwrap();
    assert_eq!(r.false_alarms, 1);
    assert!(r.false_alarm.as_deref().is_some_and(|f| f.starts_with("mac") || f.starts_with("unwritten")), "{:?}", r.false_alarm);
    assert!(paper.expect_crash_violations && r.as_expected(&paper));
}

/// STAR's recovery inputs (STAR III-F): a stale node's MSBs, a child's
/// LSBs, a bitmap line and the index, tampered with and replayed, are all
/// caught by the cache-tree root; without the root check
/// (`star-no-cache-tree`) some replay goes through recovery unseen.
#[test]
fn stars_recovery_inputs_are_attacked_and_the_cache_tree_catches_them() {
    let w = WorkloadKind::parse("btree:size_mib=16").unwrap();
    let ev = w.generate(120, 4).unwrap();
    // 256 MiB: enough metadata lines for a layer-2 index line in NVM.
    let big = ["memory.capacity_bytes=268435456"];
    let cfg = common::small("star", &big);
    let r = spmsim::verify::attack::run(&cfg, &w.name(), &ev, 4).unwrap();
    let names = ["star-tamper-stale-msbs", "star-tamper-child-lsbs", "star-tamper-bitmap-line", "star-tamper-index"];
    for n in names {
        let a = r.attacks.iter().find(|a| a.name == n).unwrap_or_else(|| panic!("{n} missing"));
        assert!(a.applicable() && a.detected, "{n}: {a:?}");
    }
    assert_eq!((r.undetected, r.false_alarms), (0, 0), "{:?}", r.false_alarm);
    let open = common::small("star-no-cache-tree", &big);
    let r = spmsim::verify::attack::run(&open, &w.name(), &ev, 4).unwrap();
    assert_eq!(r.false_alarms, 0);
    assert!(r.undetected > 0, "with no cache-tree check some attack on recovery's inputs must pass: {:?}", r.attacks);
    assert!(open.expect_undetected_attacks && r.as_expected(&open));
}

/// The multiset-hash scheme's recovery inputs (Kubo et al. 4.5): a
/// written-back line under a cached parent, a tracking entry and a data
/// block whose counter Osiris recovers, each tampered with and replayed,
/// are all caught; the untampered image recovers (no false alarm).
#[test]
fn msets_recovery_inputs_are_attacked_and_the_registers_catch_them() {
    let w = WorkloadKind::parse("btree:size_mib=16").unwrap();
    let ev = w.generate(120, 4).unwrap();
    // A 4 KiB metadata cache, so that lines are written back under cached
    // parents within the run.
    let cfg = common::small("mset", &["metadata_cache.organization.unified.capacity_bytes=4096"]);
    let r = spmsim::verify::attack::run(&cfg, &w.name(), &ev, 4).unwrap();
    for n in [
        "mset-tamper-written-back-line",
        "mset-replay-written-back-line",
        "mset-tamper-tracking-entry",
        "mset-replay-tracking-entry",
        "mset-tamper-recovered-data",
        "mset-replay-recovered-data",
    ] {
        let a = r.attacks.iter().find(|a| a.name == n).unwrap_or_else(|| panic!("{n} missing"));
        assert!(a.applicable() && a.detected, "{n}: {a:?}");
    }
    assert_eq!((r.undetected, r.false_alarms), (0, 0), "{:?}", r.false_alarm);
}

/// CacheTree's recovery inputs: a counter block written through under a
/// listed HNode and a tracking entry, each tampered with and replayed, are
/// all caught by the HNodeTree register; the untampered image recovers.
#[test]
fn cachetrees_recovery_inputs_are_attacked_and_the_hnode_tree_catches_them() {
    let w = WorkloadKind::parse("btree:size_mib=16").unwrap();
    let ev = w.generate(120, 4).unwrap();
    // Eight HNodes, so that they are evicted and refilled within the run.
    let cfg = common::small("cachetree", &["scheme.hnodes=8", "scheme.hnode_ways=4"]);
    let r = spmsim::verify::attack::run(&cfg, &w.name(), &ev, 4).unwrap();
    for n in [
        "cachetree-tamper-written-back-line",
        "cachetree-replay-written-back-line",
        "cachetree-tamper-tracking-entry",
        "cachetree-replay-tracking-entry",
    ] {
        let a = r.attacks.iter().find(|a| a.name == n).unwrap_or_else(|| panic!("{n} missing"));
        assert!(a.applicable() && a.detected, "{n}: {a:?}");
    }
    assert_eq!((r.undetected, r.false_alarms), (0, 0), "{:?}", r.false_alarm);
}
