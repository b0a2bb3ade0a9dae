use super::*;
use crate::config::load_str;

/// A small machine with the given tree and metadata write policy (as the
/// write-through and battery-backed write-back schemes set it).
fn small(tree: &str, policy: &str) -> SimConfig {
    let scheme = if policy == "write-back" { "battery-write-back" } else { "write-through" };
    load_str(
        &format!("[scheme]\ntype = '{scheme}'\n[memory]\ncapacity_bytes = 16777216\n[tree]\ntype = '{tree}'\n[metadata_cache]\n[metadata_cache.organization]\ntype='unified'\n[metadata_cache.organization.unified]\ncapacity_bytes = 4096\nways = 4\n"),
        "test",
        &[],
    )
    .unwrap()
}

#[test]
fn write_then_read_round_trips_for_every_tree_and_policy() {
    for tree in ["bmt", "sit"] {
        for policy in ["write-through", "write-back"] {
            let cfg = small(tree, policy);
            let mut mc = crate::scheme::controller(&cfg, 1);
            for i in 0..300u64 {
                let b = (i * 37) % 2000;
                mc.write(b, &[i as u8; 64]).unwrap();
                assert_eq!(mc.read(b).unwrap(), [i as u8; 64], "{tree} {policy}");
            }
            // Ciphertext in NVM is not the plaintext.
            mc.flush_metadata().unwrap();
            mc.st.nvm.drain_wpq(&mc.st.layout.clone());
            let ct = mc.st.nvm.image.get(37 * 299 % 2000).copied().unwrap();
            assert_ne!(ct, [43u8; 64]);
        }
    }
}

#[test]
fn minor_overflow_bumps_major_and_reencrypts_page() {
    let cfg = small("bmt", "write-through");
    let mut mc = crate::scheme::controller(&cfg, 2);
    mc.write(1, &[9; 64]).unwrap();
    for i in 0..200u32 {
        mc.write(0, &[(i % 250) as u8; 64]).unwrap();
    }
    assert_eq!(mc.block_counter(0).unwrap().0, 1, "128th write overflows the 7-bit minor");
    assert_eq!(mc.read(1).unwrap(), [9; 64], "neighbour re-encrypted under the new major");
    assert_eq!(mc.block_counter(1).unwrap(), (1, 0));
    assert_eq!(mc.read(0).unwrap(), [199u8; 64]);
}

#[test]
fn tampering_is_detected_after_a_cold_start() {
    for tree in ["bmt", "sit"] {
        let cfg = small(tree, "write-back");
        let mut mc = crate::scheme::controller(&cfg, 3);
        for b in 0..100u64 {
            mc.write(b, &[b as u8; 64]).unwrap();
        }
        mc.flush_metadata().unwrap();
        mc.drop_volatile();
        let layout = mc.st.layout.clone();
        mc.st.nvm.drain_wpq(&layout);
        let mut ct = *mc.st.nvm.image.get(5).unwrap();
        ct[0] ^= 1;
        mc.st.nvm.image.put(5, ct);
        assert_eq!(mc.read(5), Err(CheckFailure::Mac { block: 5 }), "{tree}");
        let ca = layout.meta_addr(0, layout.counter_of(70).0);
        let mut c = *mc.st.nvm.image.get(ca).unwrap();
        c[20] ^= 4;
        mc.st.nvm.image.put(ca, c);
        assert!(matches!(mc.read(70), Err(CheckFailure::Tree { level: 0, .. })), "{tree}: {:?}", mc.read(70));
    }
}
