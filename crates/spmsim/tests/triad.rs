//! Triad-NVM: what each write persists by region, what a
//! recovery rebuilds and counts, what non-persistent memory loses, and
//! that a lost counter never brings a one-time pad back under two keys.

use spmsim::config::load_preset;
use spmsim::machine::System;
use spmsim::workload::Event;

/// A 64 MiB machine, its last 16 MiB persistent: each of the 4 root
/// registers (tree.levels = 5: level 4 has 4 nodes of 16 MiB) covers one
/// kind.
fn small(preset: &str, extra: &[&str]) -> spmsim::config::SimConfig {
    let mut o: Vec<String> = vec![
        "memory.capacity_bytes=67108864".into(),
        "tree.levels=5".into(),
        "memory.persistent_regions=[{start_bytes=50331648,size_bytes=16777216}]".into(),
    ];
    o.extend(extra.iter().map(|s| s.to_string()));
    load_preset(preset, &o).unwrap()
}

const P: u64 = 50331648 / 64;

fn store(block: u64, v: u64, volatile: bool) -> Event {
    Event { volatile, ..Event::store(block * 64, 8, v, false) }
}

#[test]
fn a_persistent_write_persists_its_counter_mac_and_n_levels_and_a_volatile_one_nothing() {
    for n in 1..=3u64 {
        let mut s = System::new(&small(&format!("triad-{n}"), &[]), 1);
        s.apply(&store(P + 5, 1, false)).unwrap();
        let w = s.mc.st.nvm.enqueued;
        assert_eq!((w.data, w.counter, w.mac, w.tree), (1, 1, 1, n), "triad-{n}");
        s.apply(&store(7, 1, true)).unwrap();
        let v = s.mc.st.nvm.enqueued;
        assert_eq!(
            (v.data - w.data, v.counter - w.counter, v.mac - w.mac, v.tree - w.tree),
            (1, 0, 0, 0),
            "triad-{n}: non-persistent metadata stays in the caches"
        );
    }
    let mut s = System::new(&small("triad-strict", &[]), 1);
    s.apply(&store(7, 1, true)).unwrap();
    let levels = s.mc.layout().levels() as u64 - 1;
    assert_eq!(s.mc.st.nvm.enqueued.tree, levels, "strict persistence writes every level, non-persistent data too");
}

#[test]
fn recovery_reads_level_n_of_the_persistent_region_and_resets_the_rest() {
    for n in 1..=3u32 {
        let mut s = System::new(&small(&format!("triad-{n}"), &[]), 1);
        for i in 0..50u64 {
            s.apply(&store(P + i * 97, i + 1, false)).unwrap();
            s.apply(&store(i * 64, i + 1, true)).unwrap();
        }
        s.power_fail();
        let rep = s.recover();
        assert!(rep.ok(), "triad-{n}: {rep:?}");
        let l = s.mc.layout().clone();
        // 16 MiB persistent: 4096 counter blocks, 512 level-1 nodes, ...
        let persistent_at = |level: u32| 4096u64 >> (3 * level);
        assert_eq!(rep.nvm_reads.tree, persistent_at(n), "triad-{n}: every persistent level-{n} node is read, no more");
        let above: u64 = (n + 1..l.levels()).map(persistent_at).sum();
        let volatile: u64 = (1..l.levels()).map(|lv| 3 * persistent_at(lv)).sum();
        assert_eq!(
            rep.nvm_writes.tree,
            above + volatile,
            "triad-{n}: rebuilt nodes above level {n}, and every non-persistent node zeroed or rebuilt"
        );
        for i in 0..50u64 {
            let b = s.mc.read(P + i * 97).unwrap();
            assert_eq!(b[..8], (i + 1).to_le_bytes(), "triad-{n}: persistent data survives");
            assert!(s.mc.read(i * 64).is_err(), "triad-{n}: non-persistent data is refused after recovery");
        }
        // Written again, non-persistent memory works as before.
        s.apply(&store(64, 9, true)).unwrap();
        assert_eq!(s.mc.read(64).unwrap()[..8], 9u64.to_le_bytes());
    }
}

#[test]
fn a_page_reencrypted_after_recovery_takes_its_stale_blocks_as_free_memory() {
    let mut s = System::new(&small("triad-2", &[]), 1);
    for b in 0..4u64 {
        s.apply(&store(b, b + 1, true)).unwrap();
    }
    s.power_fail();
    s.recover();
    // 130 writes of block 0 overflow its 7-bit minor: the page is
    // re-encrypted while blocks 1-3 still hold ciphertexts of the last boot.
    for v in 0..130u64 {
        s.apply(&store(0, v, true)).unwrap();
    }
    assert_eq!(s.mc.read(0).unwrap()[..8], 129u64.to_le_bytes());
    assert_eq!(s.mc.read(1).unwrap(), [0; 64], "a stale block re-encrypted as free memory reads as zeros");
    assert_eq!(s.mc.block_counter(0).unwrap().0, 1, "the page moved to a new major counter");
}

#[test]
fn with_one_key_a_lost_counter_brings_a_pad_back_and_with_two_it_does_not() {
    for (preset, reused) in [("triad-2", false), ("triad-same-key", true)] {
        let mut s = System::new(&small(preset, &[]), 1);
        s.mc.st.crypto.ledger = Some(Default::default());
        for v in 1..=3u64 {
            s.apply(&store(10, v, true)).unwrap();
        }
        let ledger = s.mc.st.crypto.ledger.take();
        s.power_fail();
        s.recover();
        s.mc.st.crypto.ledger = ledger;
        let next = s.mc.peek_next_counter(10).unwrap().unwrap();
        assert_eq!(next, (0, 1), "{preset}: the lost counter starts again from zero");
        assert_eq!(s.mc.st.crypto.pad_used_before(10, next).is_some(), reused, "{preset}");
    }
}

#[test]
fn a_root_register_over_both_kinds_of_data_is_refused() {
    let e = spmsim::config::load_preset(
        "triad-2",
        &["memory.capacity_bytes=67108864".into(), "memory.persistent_regions=[{start_bytes=50331648,size_bytes=16777216}]".into()],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("memory.persistent_regions") && e.contains("one kind"), "{e}");
}
