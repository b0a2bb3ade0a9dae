//! Property tests: encryption round trips, counter-overflow re-encryption,
//! and tree update/verify under random writes and random tampering.

mod common;

use proptest::prelude::*;
use spmsim::engine::controller::MemoryController;

fn cold(mc: &mut MemoryController) {
    mc.flush_metadata().unwrap();
    mc.drop_volatile();
    let l = mc.layout().clone();
    mc.st.nvm.drain_wpq(&l);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn encrypt_decrypt_round_trip(writes in proptest::collection::vec((0u64..4096, any::<[u8; 32]>()), 1..60),
                                  tree in prop_oneof![Just("secure-wt"), Just("sit-wb-battery"), Just("secure-wb-battery")]) {
        let cfg = common::small(tree, &[]);
        let mut mc = spmsim::scheme::controller(&cfg, 5);
        let mut model = std::collections::HashMap::new();
        for (b, half) in &writes {
            let mut pt = [0u8; 64];
            pt[..32].copy_from_slice(half);
            pt[32..].copy_from_slice(half);
            mc.write(*b, &pt).unwrap();
            model.insert(*b, pt);
        }
        cold(&mut mc);
        for (b, pt) in &model {
            prop_assert_eq!(&mc.read(*b).unwrap(), pt);
            if *pt != [0u8; 64] {
                prop_assert_ne!(mc.st.nvm.image.get(*b).unwrap(), pt, "stored as ciphertext");
            }
        }
    }

    #[test]
    fn overflow_reencrypts_every_block_of_the_page(hot in 0u64..64, extra in 1u32..40, seed in any::<u64>()) {
        let cfg = common::small("secure-wt", &[]);
        let mut mc = spmsim::scheme::controller(&cfg, seed);
        let page = 3u64;
        for j in 0..64 {
            mc.write(page * 64 + j, &[j as u8 + 1; 64]).unwrap();
        }
        for i in 0..(126 + extra) {
            mc.write(page * 64 + hot, &[(i % 200) as u8; 64]).unwrap();
        }
        prop_assert_eq!(mc.block_counter(page * 64 + hot).unwrap().0, 1, "one overflow");
        cold(&mut mc);
        for j in 0..64 {
            let expect = if j == hot { [((126 + extra - 1) % 200) as u8; 64] } else { [j as u8 + 1; 64] };
            prop_assert_eq!(mc.read(page * 64 + j).unwrap(), expect);
        }
    }

    #[test]
    fn any_tampered_metadata_bit_is_detected(writes in proptest::collection::vec(0u64..20000, 5..40), pick in any::<usize>(), bit in 0usize..512,
                                             preset in prop_oneof![Just("secure-wt"), Just("sit-strict")]) {
        let cfg = common::small(preset, &[]);
        let mut mc = spmsim::scheme::controller(&cfg, 9);
        for (i, b) in writes.iter().enumerate() {
            mc.write(*b, &[i as u8 ^ 0x5a; 64]).unwrap();
        }
        cold(&mut mc);
        let layout = mc.layout().clone();
        let meta: Vec<u64> = mc.st.nvm.image.sorted_addrs().into_iter().filter(|a| layout.meta_pos(*a).is_some()).collect();
        let target = meta[pick % meta.len()];
        let mut blk = *mc.st.nvm.image.get(target).unwrap();
        blk[bit / 8] ^= 1 << (bit % 8);
        mc.st.nvm.image.put(target, blk);
        let r = spmsim::verify::image::verify(&mut mc);
        prop_assert!(!r.ok, "tampering {target:#x} bit {bit} went unnoticed");
        prop_assert!(r.failures.iter().all(|f| ["tree", "root"].contains(&f.check.as_str())), "{:?}", r.failures);
    }
}

#[test]
fn verification_stops_at_the_first_cached_node() {
    let cfg = common::small("secure-wt", &[]);
    let mut mc = spmsim::scheme::controller(&cfg, 1);
    mc.write(0, &[1; 64]).unwrap();
    cold(&mut mc);
    let h0 = mc.st.crypto.work.tree_hashes;
    mc.read(0).unwrap();
    let cold_hashes = mc.st.crypto.work.tree_hashes - h0;
    assert_eq!(cold_hashes as u32, mc.layout().levels(), "a cold read verifies every level up to the root");
    let h1 = mc.st.crypto.work.tree_hashes;
    mc.read(64).unwrap(); // next page: its counter block's parent is cached
    assert_eq!(mc.st.crypto.work.tree_hashes - h1, 1, "only the counter block itself is hashed");
}
