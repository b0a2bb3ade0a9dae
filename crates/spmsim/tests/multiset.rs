//! The multiset-hash registers (issue 18; Kubo et al. 4.2): with the
//! metadata caches logged into Read Hash and Write Hash, every cached line
//! added to Write Hash gives Read Hash after any run, and a line changed
//! behind the logging breaks the equality.

mod common;
use common::small;
use spmsim::machine::System;
use spmsim::workload::WorkloadKind;

#[test]
fn write_hash_plus_the_cached_lines_is_read_hash() {
    // Write-back metadata on a BMT and on an SGX tree; small caches so
    // that lines are evicted, clean and dirty.
    for preset in ["secure-wb-battery", "sit-wb"] {
        let cfg = small(preset, &["metadata_cache.organization={type=\"unified\",unified={capacity_bytes=4096,ways=4}}"]);
        let mut s = System::new(&cfg, 7);
        s.mc.st.track_multiset();
        assert_eq!(s.mc.st.multiset_consistent(), Some(true), "{preset}: empty");
        let events = WorkloadKind::parse("hash:size_mib=16").unwrap().generate(300, 7).unwrap();
        for (i, e) in events.iter().enumerate() {
            s.apply(e).unwrap();
            if i % 97 == 0 {
                assert_eq!(s.mc.st.multiset_consistent(), Some(true), "{preset}: after event {i}");
            }
        }
        assert_eq!(s.mc.st.multiset_consistent(), Some(true), "{preset}: at the end");
        let r = s.mc.st.chip.mset.unwrap();
        assert_ne!(r.write, spmsim::engine::crypto::MsetHash::EMPTY, "{preset}: lines left the small caches");
        // A cached line that changes without the registers knowing (what
        // an attacker's stale copy would be) is caught.
        let layout = s.mc.st.layout.clone();
        let addr = s.mc.st.caches.resident_addrs()[0];
        let line = s.mc.st.caches.for_addr(&layout, addr).payload_mut(addr).unwrap();
        line.bytes[5] ^= 1;
        assert_eq!(s.mc.st.multiset_consistent(), Some(false), "{preset}: a changed line");
    }
}

#[test]
fn untracked_caches_have_no_registers() {
    let s = System::new(&small("secure-wb-battery", &[]), 1);
    assert_eq!(s.mc.st.multiset_consistent(), None);
    assert!(s.mc.st.chip.mset.is_none());
}
