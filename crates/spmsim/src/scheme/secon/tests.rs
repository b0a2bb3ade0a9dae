//! Secon's rules, each on a small machine.

use super::*;
use crate::config::load_preset;
use crate::engine::hooks::RecoveryReport;
use crate::machine::System;
use crate::workload::{Event, Op};

/// The preset with each store going straight to the memory controller
/// (strict persistency): these tests watch each write's metadata; TEP's
/// own ordering is checked by the crash oracle's tests.
fn machine(preset: &str, sets: &[&str]) -> System {
    let mut o = vec!["memory.capacity_bytes=67108864".to_string(), "persistence.model=strict".to_string()];
    o.extend(sets.iter().map(|s| s.to_string()));
    System::new(&load_preset(preset, &o).unwrap(), 7)
}

/// Store `i + 1` into block `blocks[i]`, with no barrier after.
fn store_all(s: &mut System, blocks: &[u64]) {
    for (i, &b) in blocks.iter().enumerate() {
        s.apply(&Event::store(b * 64, 8, i as u64 + 1, false)).unwrap();
    }
}

fn reads_back(s: &mut System, blocks: &[u64]) -> bool {
    blocks.iter().enumerate().all(|(i, &b)| s.mc.read(b).is_ok_and(|v| v[..8] == (i as u64 + 1).to_le_bytes()))
}

/// Blocks of `n` different pages, so of `n` counter blocks.
fn pages(n: u64) -> Vec<u64> {
    (0..n).map(|p| p * 64 + 3).collect()
}

#[test]
fn a_write_defers_its_root_update_until_the_barrier() {
    let mut s = machine("secon", &[]);
    let blocks = pages(3);
    store_all(&mut s, &blocks);
    let track = &super::nv(&mut s.mc.st).track;
    assert_eq!((track.queue.len(), track.stats.deferred_writes), (3, 3));
    assert!(s.mc.st.chip.roots.is_empty(), "no root update yet");
    // Each write queued Secon's tuple: its data (the data MAC in the
    // line's ECC bits, no line of its own), counter block and level-1 node.
    let w = s.mc.st.nvm.enqueued;
    assert_eq!((w.data, w.mac, w.counter, w.tree), (3, 0, 3, 3));
    s.apply(&Event::marker(Op::Fence)).unwrap();
    let track = &super::nv(&mut s.mc.st).track;
    assert!(track.is_empty() && track.stats.settled_on_ack >= 1);
    assert!(!s.mc.st.chip.roots.is_empty(), "the barrier waited for the root update");
    // The settled level-1 node was written again, its spare bits clear.
    let l1 = s.mc.layout().meta_addr(1, 0);
    assert!(bmt_slots(&s.mc.st.nvm.peek(l1).unwrap()).iter().all(|e| e >> MAC_BITS == 0));
    assert!(reads_back(&mut s, &blocks));
}

#[test]
fn a_full_queue_settles_its_oldest_entry() {
    // 40 pages under 5 level-1 nodes: the 17th counter block finds the
    // 16 units taken and waits for the oldest node's update.
    let mut s = machine("secon", &[]);
    store_all(&mut s, &pages(40));
    let t = &super::nv(&mut s.mc.st).track;
    assert!(t.stats.settled_when_full > 0 && t.queue.len() <= 16, "{:?}", t.stats);
    let mut s2 = machine("secon", &["scheme.track_units=64"]);
    store_all(&mut s2, &pages(40));
    assert_eq!(super::nv(&mut s2.mc.st).track.stats.settled_when_full, 0, "64 units hold 40 blocks");
}

#[test]
fn a_second_increment_of_a_marked_minor_waits_for_the_first() {
    let mut s = machine("secon", &[]);
    store_all(&mut s, &[5, 5]);
    assert_eq!(super::nv(&mut s.mc.st).track.stats.settled_same_minor, 1);
    store_all(&mut s, &[6]);
    assert_eq!(super::nv(&mut s.mc.st).track.stats.settled_same_minor, 1, "another minor of the block is marked beside it");
}

#[test]
fn recovery_rolls_forward_every_pending_write() {
    let mut s = machine("secon", &[]);
    let blocks = pages(12);
    store_all(&mut s, &blocks);
    s.power_fail();
    let rep = s.recover();
    assert!(rep.ok(), "{rep:?}");
    assert_eq!((rep.count("counters_rolled_back"), rep.count("counter_track_mismatches")), (12, 0));
    // The scan read every first-level node of the layout.
    assert!(rep.nvm_reads.tree >= s.mc.layout().level_nodes[1]);
    assert!(reads_back(&mut s, &blocks), "nothing pre-persisted is lost");
    // The counters persisted with the tuples, so the root register now
    // vouches for them: a second crash recovers with nothing pending.
    s.power_fail();
    let again = s.recover();
    assert!(again.ok() && again.count("counters_rolled_back") == 0, "{again:?}");
    assert!(reads_back(&mut s, &blocks));
}

#[test]
fn the_papers_roll_back_leaves_the_pending_lines_unreadable() {
    let mut s = machine("secon-paper-rollback", &[]);
    let blocks = pages(4);
    store_all(&mut s, &blocks[..2]);
    s.apply(&Event::marker(Op::Fence)).unwrap();
    let first = blocks[..2].to_vec();
    for (i, &b) in blocks[2..].iter().enumerate() {
        s.apply(&Event::store(b * 64, 8, i as u64 + 3, false)).unwrap();
    }
    s.power_fail();
    let rep = s.recover();
    assert!(rep.ok() && rep.count("counters_rolled_back") == 2, "{rep:?}");
    assert!(reads_back(&mut s, &first), "writes ACKed before the crash are kept");
    // Their first writes: rolled back to "never written", over a
    // ciphertext and MAC that are there.
    for &b in &blocks[2..] {
        assert_eq!(s.mc.read(b), Err(CheckFailure::Unwritten { block: b }), "a rolled-back line is refused");
    }
    // A second write rolls back to the first's counter, under which the
    // second's ciphertext fails its MAC.
    let mut s = machine("secon-paper-rollback", &[]);
    store_all(&mut s, &[9]);
    s.apply(&Event::marker(Op::Fence)).unwrap();
    store_all(&mut s, &[9]);
    s.power_fail();
    assert!(s.recover().ok());
    assert_eq!(s.mc.read(9), Err(CheckFailure::Mac { block: 9 }));
}

#[test]
fn without_the_bitmap_recovery_cannot_roll_back() {
    let mut s = machine("secon-no-bitmap", &[]);
    store_all(&mut s, &pages(3));
    s.power_fail();
    let rep = s.recover();
    assert!(!rep.ok());
    assert_eq!(rep.count("counter_track_mismatches"), 3, "three marks, no unit for any");
    assert!(rep.rebuild.is_some_and(|r| !r.mismatched_roots.is_empty()));
}

/// After a crash with pending writes: flip the spare bits of one
/// first-level entry in NVM and recover.
fn tampered(slot_of: impl Fn(&System) -> (u64, usize), f: impl Fn(u64) -> u64) -> RecoveryReport {
    let mut s = machine("secon", &[]);
    store_all(&mut s, &[3]);
    s.power_fail();
    let (addr, slot) = slot_of(&s);
    let mut line = s.mc.st.nvm.peek(addr).unwrap_or_else(|| s.mc.tree().default_block(1));
    let e = f(bmt_slots(&line)[slot]);
    bmt_set_slot(&mut line, slot, e);
    s.mc.st.nvm.image.put(addr, line);
    s.recover()
}

#[test]
fn tampering_with_the_spare_bits_is_detected_at_recovery() {
    let l1 = |s: &System| (s.mc.layout().meta_addr(1, 0), 0usize);
    // The untampered image recovers.
    assert!(tampered(l1, |e| e).ok());
    // Marks cleared on the marked CMAC: the unit has no mark.
    let rep = tampered(l1, |e| e & MAC_MASK);
    assert!(!rep.ok() && rep.count("counter_track_mismatches") == 1, "{rep:?}");
    // A mark set on a clean CMAC (counter block 1, never written).
    let rep = tampered(|s| (s.mc.layout().meta_addr(1, 0), 1), |e| e | 1 << MAC_BITS);
    assert!(!rep.ok() && rep.count("counter_track_mismatches") == 1, "{rep:?}");
    // A mark naming another unit than the block's.
    let rep = tampered(l1, |e| (e & MAC_MASK) | 2 << MAC_BITS);
    assert!(!rep.ok() && rep.count("counter_track_mismatches") >= 1, "{rep:?}");
}

#[test]
fn a_pending_first_level_node_leaving_the_cache_settles_first() {
    // A 1-set, 2-way BMT cache: each new node evicts an older one.
    let mut s = machine("secon", &["metadata_cache.organization.tree.capacity_bytes=128", "metadata_cache.organization.tree.ways=2"]);
    let blocks: Vec<u64> = (0..6).map(|n| n * 8 * 64 * 64 + 1).collect();
    store_all(&mut s, &blocks);
    assert!(super::nv(&mut s.mc.st).track.stats.settled_on_eviction > 0, "{:?}", super::nv(&mut s.mc.st).track.stats);
    assert!(reads_back(&mut s, &blocks));
    s.power_fail();
    assert!(s.recover().ok());
    assert!(reads_back(&mut s, &blocks));
}

/// A machine with the first 4 KiB pages 0..4 declared the log region.
fn logged(preset: &str, sets: &[&str]) -> System {
    let mut s = machine(preset, sets);
    s.mc.note_log_store(0, 4 * 4096);
    s
}

#[test]
fn a_log_write_carries_its_minor_and_leaves_its_counter_block_cached() {
    // Blocks 0..6 of page 0 (log) and one block of page 9 (data).
    let blocks = [0u64, 1, 2, 3, 4, 5, 9 * 64];
    let mut s = logged("secon", &[]);
    store_all(&mut s, &blocks);
    s.apply(&Event::marker(Op::Fence)).unwrap();
    let w = s.mc.st.nvm.enqueued;
    assert_eq!(w.counter, 1, "only the data page's counter block is written");
    assert_eq!(super::nv(&mut s.mc.st).track.stats.colocated_counters, 6);
    // Block 3's MAC slot holds its minor (1) in its spare bits.
    let (la, slot) = s.mc.layout().mac_line_of(3);
    let line = s.mc.st.peek_line(la).unwrap();
    assert_eq!(u64::from_le_bytes(line[slot * 8..slot * 8 + 8].try_into().unwrap()) >> MAC_BITS, 1);
    // Without colocation every write persists its counter block.
    let mut n = logged("secon", &["scheme.colocate_counters=false"]);
    store_all(&mut n, &blocks);
    assert_eq!(n.mc.st.nvm.enqueued.counter, 7);
    // A crash loses the cached counter block; recovery reads the minors
    // back from the log and everything decrypts, pending or settled.
    for fenced in [true, false] {
        let mut s = logged("secon", &[]);
        store_all(&mut s, &blocks);
        if fenced {
            s.apply(&Event::marker(Op::Fence)).unwrap();
        }
        s.power_fail();
        let rep = s.recover();
        assert!(rep.ok(), "{rep:?}");
        assert!(reads_back(&mut s, &blocks), "fenced {fenced}");
        // The minors ride in the log lines' ECC bits: the lines are read.
        assert!(rep.nvm_reads.data >= 4 * 64, "the log pages' lines were read: {:?}", rep.nvm_reads);
    }
}

#[test]
fn a_tampered_or_replayed_log_minor_is_detected() {
    let blocks = [0u64, 1, 2];
    let crashed = || {
        let mut s = logged("secon", &[]);
        store_all(&mut s, &blocks);
        s.apply(&Event::marker(Op::Fence)).unwrap();
        store_all(&mut s, &blocks);
        s.apply(&Event::marker(Op::Fence)).unwrap();
        s.power_fail();
        s
    };
    let (la, slot) = crashed().mc.layout().mac_line_of(1);
    for (what, spare) in [("raised", 5u64), ("lowered", 1)] {
        let mut s = crashed();
        let mut line = *s.mc.st.nvm.image.get(la).unwrap();
        let v = u64::from_le_bytes(line[slot * 8..slot * 8 + 8].try_into().unwrap());
        line[slot * 8..slot * 8 + 8].copy_from_slice(&((v & MAC_MASK) | spare << MAC_BITS).to_le_bytes());
        s.mc.st.nvm.image.put(la, line);
        let rep = s.recover();
        // A minor above the true one breaks the rebuilt root; one below
        // it is not newer, and block 1's MAC (over its spare bits) fails.
        let caught = !rep.ok() || s.mc.read(1).is_err();
        assert!(caught, "{what}: {rep:?}");
    }
}

#[test]
fn secon_refuses_a_tree_without_first_level_cmacs() {
    let e = load_preset("secon", &["tree.type=sit".into()]).unwrap_err().to_string();
    assert!(e.contains("tree.type"), "{e}");
    let e = load_preset("secon", &["scheme.track_units=2000".into()]).unwrap_err().to_string();
    assert!(e.contains("scheme.track_units") && e.contains("1023"), "{e}");
}
