//! The attack harness: every applicable attack is detected on every secure
//! preset, and the harness itself can report an undetected attack.

mod common;

use spmsim::workload::WorkloadKind;

#[test]
fn every_attack_is_detected_on_every_secure_preset() {
    for (name, cfg) in common::presets().into_iter().filter(|(_, c)| c.security.enabled) {
        for w in [WorkloadKind::RandomWrites, WorkloadKind::ArraySwap] {
            let ev = w.generate(300, 3).unwrap();
            let r = spmsim::attack::run(&cfg, &w.name(), &ev, 3).unwrap();
            assert_eq!(r.undetected, 0, "{name} {}: {:?}", w.name(), r.attacks.iter().filter(|a| !a.detected).collect::<Vec<_>>());
            let names: Vec<&str> = r.attacks.iter().map(|a| a.name.as_str()).collect();
            for n in ["ciphertext-bit-flip", "mac-bit-flip", "splice", "replay-data-mac", "replay-data-mac-counter", "tree-node-tamper", "counter-tamper"] {
                assert!(names.contains(&n), "{n} missing");
            }
            assert!(r.attacks.iter().filter(|a| a.ruled_out.is_some()).all(|a| !a.detected));
        }
    }
}

#[test]
fn an_insecure_memory_lets_attacks_through() {
    let cfg = common::small("secure-wt", &["security.enabled=false"]);
    let ev = WorkloadKind::RandomWrites.generate(200, 1).unwrap();
    let r = spmsim::attack::run(&cfg, "random-writes", &ev, 1).unwrap();
    assert!(r.undetected > 0, "with no MACs or tree the harness must report undetected attacks");
}
