//! The multiset-hash registers (Kubo et al. 4.2): with the
//! metadata caches logged into Read Hash and Write Hash, every cached line
//! added to Write Hash gives Read Hash after any run, and a line changed
//! behind the logging breaks the equality.

mod common;
use common::small;
use spmsim::engine::chip::ChipState;
use spmsim::engine::controller::MemoryController;
use spmsim::engine::nvm::Nvm;
use spmsim::engine::shape::SchemeShape;
use spmsim::machine::System;
use spmsim::scheme::mset::{registers, registers_consistent, MultisetLog};
use spmsim::workload::WorkloadKind;

/// `cfg`'s machine with the multiset log as its scheme's runtime: the
/// registers over the caches, and otherwise the configuration's rules
/// (write-back metadata, whose own runtime keeps nothing) on its shape,
/// with the cache hooks called.
fn logged(cfg: &spmsim::config::SimConfig, seed: u64) -> System {
    let chip = ChipState::new(cfg, seed);
    let log = Box::new(MultisetLog::new(seed, true, false));
    let shape = SchemeShape { calls_cache_hooks: true, ..spmsim::scheme::shape(cfg) };
    let mc = MemoryController::assemble(cfg, chip, Nvm::new(cfg.persistence.wpq_entries as usize), log, shape);
    System::with_controller(cfg, mc)
}

#[test]
fn write_hash_plus_the_cached_lines_is_read_hash() {
    // Write-back metadata on a BMT and on an SGX tree; small caches so
    // that lines are evicted, clean and dirty.
    for preset in ["secure-wb-battery", "sit-wb"] {
        let cfg = small(preset, &["metadata_cache.organization={type=\"unified\",unified={capacity_bytes=4096,ways=4}}"]);
        let mut s = logged(&cfg, 7);
        assert_eq!(registers_consistent(&s.mc.st), Some(true), "{preset}: empty");
        let events = WorkloadKind::parse("hash:size_mib=16").unwrap().generate(300, 7).unwrap();
        for (i, e) in events.iter().enumerate() {
            s.apply(e).unwrap();
            if i % 97 == 0 {
                assert_eq!(registers_consistent(&s.mc.st), Some(true), "{preset}: after event {i}");
            }
        }
        assert_eq!(registers_consistent(&s.mc.st), Some(true), "{preset}: at the end");
        let r = registers(&s.mc.st.chip).unwrap();
        assert_ne!(r.write, spmsim::engine::crypto::MultisetHash::EMPTY, "{preset}: lines left the small caches");
        // A cached line that changes without the registers knowing (what
        // an attacker's stale copy would be) is caught.
        let layout = s.mc.st.layout.clone();
        let addr = s.mc.st.caches.resident_addrs()[0];
        let line = s.mc.st.caches.for_addr(&layout, addr).payload_mut(addr).unwrap();
        line.bytes[5] ^= 1;
        assert_eq!(registers_consistent(&s.mc.st), Some(false), "{preset}: a changed line");
    }
}

#[test]
fn untracked_caches_have_no_registers() {
    let s = System::new(&small("secure-wb-battery", &[]), 1);
    assert_eq!(registers_consistent(&s.mc.st), None);
    assert!(registers(&s.mc.st.chip).is_none());
}
