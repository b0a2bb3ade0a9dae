//! Timing model checks against what can be worked out by hand.

use spmsim::config::load_preset;
use spmsim::timing::{simulate, RunStats};
use spmsim::workload::WorkloadKind;

fn run(preset: &str, workload: &str, instructions: u64, extra: &[&str]) -> RunStats {
    let o: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let cfg = load_preset(preset, &o).unwrap();
    simulate(&cfg, &WorkloadKind::parse(workload).unwrap(), instructions, 7).unwrap()
}

const GAMESS_LIKE: &str = "synthetic:ppti=47.4,nwpe=2.1,footprint_mib=1";

#[test]
fn nogap_ipc_is_near_the_papers_formula() {
    // VI-B: IPC = 1000 / (320 x PPTI/NWPE + 40 x PPTI) when every new entry
    // pays a non-pipelined 8-level root update and every store a MAC.
    let s = run("nogap", GAMESS_LIKE, 400_000, &[]);
    let r = &s.roi;
    assert!(
        (r.core.ppti - 47.4).abs() < 0.5 && (r.persist_path.buffer.as_ref().unwrap().nwpe - 2.1).abs() < 0.1,
        "ppti {} nwpe {}",
        r.core.ppti,
        r.persist_path.buffer.as_ref().unwrap().nwpe
    );
    let formula = 1000.0 / (320.0 * r.core.ppti / r.persist_path.buffer.as_ref().unwrap().nwpe + 40.0 * r.core.ppti);
    assert!((r.core.ipc - formula).abs() / formula < 0.15, "ipc {} formula {}", r.core.ipc, formula);
}

#[test]
fn root_updates_count_allocations_under_cm_and_stores_under_sp() {
    let cm = run("cm", "synthetic:ppti=20,nwpe=4,footprint_mib=1", 200_000, &[]);
    assert_eq!(
        cm.roi.tree.root_updates,
        cm.roi.persist_path.buffer.as_ref().unwrap().allocations,
        "IV-A: one root update per dirty residency"
    );
    let no_coalescing = run("cm", "synthetic:ppti=20,nwpe=4,footprint_mib=1", 200_000, &["persistence.point.coalesce_metadata=false"]);
    assert_eq!(no_coalescing.roi.tree.root_updates, no_coalescing.roi.core.stores);
    let sp = run("sp", "synthetic:ppti=20,nwpe=4,footprint_mib=1", 200_000, &[]);
    assert_eq!(sp.roi.tree.root_updates, sp.roi.core.stores, "strict persistency updates the root on every store");
    assert!(cm.roi.tree.root_updates * 3 < sp.roi.tree.root_updates);
}

#[test]
fn timing_only_crypto_gives_identical_timing() {
    for p in ["cobcm", "cm", "sp"] {
        let real = run(p, "random-writes", 100_000, &[]);
        let fast = run(p, "random-writes", 100_000, &["security.crypto=\"timing-only\""]);
        assert_eq!(real.roi.core.cycles, fast.roi.core.cycles, "{p}");
        assert_eq!(real.roi.memory.writes, fast.roi.memory.writes, "{p}");
        assert_eq!(real.roi.tree.root_updates, fast.roi.tree.root_updates, "{p}");
    }
}

#[test]
fn a_run_is_deterministic_for_a_seed() {
    let a = run("obcm", "array-swap", 100_000, &[]);
    let b = run("obcm", "array-swap", 100_000, &[]);
    assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
}

#[test]
fn slowdown_order_follows_eagerness_on_a_persist_heavy_workload() {
    let c = |p: &str| run(p, "array-swap", 300_000, &[]).roi.core.cycles;
    let (bbb, cobcm, obcm, bcm, cm, m, nogap) = (c("bbb"), c("cobcm"), c("obcm"), c("bcm"), c("cm"), c("m"), c("nogap"));
    assert!(bbb <= cobcm && cobcm <= obcm && obcm < bcm && bcm < cm && cm <= m && m < nogap, "{bbb} {cobcm} {obcm} {bcm} {cm} {m} {nogap}");
}

#[test]
fn a_larger_secpb_coalesces_more_root_updates() {
    let ru = |n: u32| run("cm", "random-writes", 200_000, &[&format!("persistence.point.entries={n}")]).roi.tree.root_updates;
    let (small, large) = (ru(8), ru(256));
    assert!(large < small, "8 entries: {small}, 256 entries: {large}");
}

/// Under the reads-first controller, posted writes hold a bank for a
/// burst and bank-serial ones for the whole write; the gem5 controller's
/// banks are busy for the whole write, as bank-serial ones are.
#[test]
fn posted_writes_give_more_write_bandwidth_than_bank_serial_ones() {
    // The PCM's write models alone: L1D's four MSHRs would bound this
    // profile's cold store misses as much as the banks do, so the caches'
    // misses are unbounded.
    let (unbounded, reads_first) = ("caches.mshrs=unbounded", "memory_controller.model=\"reads-first\"");
    let posted = run("cobcm", GAMESS_LIKE, 200_000, &[unbounded, reads_first]);
    let serial = run("cobcm", GAMESS_LIKE, 200_000, &[unbounded, reads_first, "nvm.write_model=\"bank-serial\""]);
    assert!(posted.roi.core.cycles < serial.roi.core.cycles);
    assert!(serial.roi.memory.write_utilisation > 0.8, "bank-serial PCM is the bottleneck here: {}", serial.roi.memory.write_utilisation);
    let gem5 = run("cobcm", GAMESS_LIKE, 200_000, &[unbounded]);
    assert!(gem5.roi.memory.write_utilisation > 0.8, "the gem5 controller's banks: {}", gem5.roi.memory.write_utilisation);
    assert!(posted.roi.core.cycles < gem5.roi.core.cycles, "posted {} gem5 {}", posted.roi.core.cycles, gem5.roi.core.cycles);
}

/// A 32-byte store split into four 8-byte pieces of one instruction is
/// one store and one SecPB persist; four 8-byte store instructions are
/// four. A piece in another block starts a store of its own.
#[test]
fn the_pieces_of_one_wide_store_persist_once() {
    use spmsim::timing::TimingSim;
    use spmsim::workload::Event;
    let cfg = load_preset("cm", &[]).unwrap();
    let wide = |same: bool| -> Vec<Event> {
        let mut v = Vec::new();
        for i in 0..200u64 {
            let base = 0x10_0000 + i * 128;
            for k in 0..4 {
                v.push(Event {
                    same_instruction: same && k > 0,
                    ..Event::store(base + 8 * k, 8, i * 4 + k, false).after(if k == 0 { 3 } else { 0 })
                });
            }
        }
        v
    };
    let stats = |events: Vec<Event>| {
        let mut sim = TimingSim::new(&cfg, 1).unwrap();
        sim.run(events).unwrap();
        sim.finish()
    };
    let one = stats(wide(true));
    let four = stats(wide(false));
    assert_eq!(one.roi.core.stores, 200, "one persist per wide store");
    assert_eq!(four.roi.core.stores, 800);
    assert_eq!(one.roi.core.instructions, 200 * 4);
    assert_eq!(four.roi.core.instructions, 200 * 7);
    assert!(
        one.roi.core.cycles < four.roi.core.cycles,
        "CM's early MAC work is paid once per store: {} vs {}",
        one.roi.core.cycles,
        four.roi.core.cycles
    );
    // Pieces that cross into the next block are a second persist.
    let crossing: Vec<Event> =
        (0..2u64).map(|k| Event { same_instruction: k > 0, ..Event::store(0x20_0038 + 8 * k, 8, 9, false) }).collect();
    assert_eq!(stats(crossing).roi.core.stores, 2);
}

/// Stores of every shape the timing model folds or splits: 8-byte and
/// narrower stores, the pieces of wide stores (`same_instruction`), loads
/// between them, over a 1 MiB range, plus 200 rounds over the eight blocks
/// of one counter page's first line so that minor counters overflow and
/// pages are re-encrypted while entries sit in the SecPB.
fn store_mix() -> Vec<spmsim::workload::Event> {
    use spmsim::workload::Event;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut ev = Vec::new();
    for round in 0..200u64 {
        for b in 0..8u64 {
            let mut e = Event::store(b * 64 + (round % 8) * 8, 8, round * 1000 + b, false);
            e.gap = 3;
            ev.push(e);
        }
        for _ in 0..40 {
            let r = next();
            let block = r % (1 << 14);
            match r >> 60 {
                0..=2 => ev.push(Event::load(block * 64, 8)),
                3..=5 => {
                    // A 32-byte store as four 8-byte pieces of one instruction.
                    let off = (r >> 20) % 2 * 32;
                    for k in 0..4 {
                        let mut e = Event::store(block * 64 + off + k * 8, 8, next(), false);
                        e.same_instruction = k > 0;
                        ev.push(e);
                    }
                }
                _ => {
                    let size = [1u8, 2, 4, 8][(r >> 30) as usize % 4];
                    let off = (r >> 34) % (64 / size as u64) * size as u64;
                    ev.push(Event::store(block * 64 + off, size, next(), false));
                }
            }
        }
    }
    ev
}

#[test]
fn after_a_timed_run_memory_holds_every_stored_value() {
    use spmsim::workload::Op;
    let events = store_mix();
    let mut model: std::collections::BTreeMap<u64, [u8; 64]> = Default::default();
    for e in events.iter().filter(|e| e.op == Op::Store) {
        let b = model.entry(e.addr / 64).or_insert([0; 64]);
        let off = (e.addr % 64) as usize;
        b[off..off + e.size as usize].copy_from_slice(&e.value.to_le_bytes()[..e.size as usize]);
    }
    for preset in ["bbb", "sp", "nogap", "m", "cm", "bcm", "obcm", "cobcm", "cm-sbmf", "sit-strict", "secure-wb-battery"] {
        for crypto in ["real", "timing-only"] {
            let cfg = load_preset(preset, &[format!("security.crypto=\"{crypto}\"")]).unwrap();
            let mut sim = spmsim::timing::TimingSim::new(&cfg, 7).unwrap();
            sim.run(events.iter().copied()).unwrap();
            for (&block, want) in &model {
                let got = sim.sys.read(block).unwrap_or_else(|e| panic!("{preset} {crypto}: block {block:#x}: {e}"));
                assert_eq!(&got, want, "{preset} {crypto}: block {block:#x}");
            }
            if sim.sys.mc.secure() {
                let (major, _) = sim.sys.mc.block_counter(0).unwrap();
                assert!(major >= 1, "{preset} {crypto}: the hot page's minor counters overflowed at least once");
            }
        }
    }
}

/// The timing model prices only what it has rules for; everything else is
/// refused by name, never timed as another scheme.
#[test]
fn presets_the_timing_model_cannot_price_are_refused() {
    for preset in ["secure-eadr", "eadr"] {
        let cfg = load_preset(preset, &[]).unwrap();
        let e = spmsim::timing::TimingSim::new(&cfg, 1).err().unwrap_or_else(|| panic!("{preset} was timed"));
        assert!(e.contains("data cache hierarchy") && e.contains("does not time"), "{preset}: {e}");
    }
    // Every other preset is timed.
    for preset in spmsim::config::list_presets() {
        let cfg = load_preset(&preset, &[]).unwrap();
        if matches!(cfg.persistence.point, spmsim::config::PersistPoint::CacheHierarchy { .. }) {
            continue;
        }
        assert!(spmsim::timing::TimingSim::new(&cfg, 1).is_ok(), "{preset} was refused");
    }
}

/// A lazy SIT with write-back metadata is timed by the same rules as the
/// eager trees: its tree work is the node MACs of the write-backs it
/// counted, so with more tree write-backs it does more tree work. The
/// write-through SIT persists the whole changed path on every write.
#[test]
fn a_lazy_sit_is_priced_by_its_counted_write_backs() {
    // Stores spread over 1 GiB with a 64 KiB metadata cache: dirty nodes
    // are evicted all the time.
    let small = ["metadata_cache.organization.unified.capacity_bytes=65536"];
    let w = "synthetic:ppti=50,nwpe=1,footprint_mib=1024";
    let (lazy, strict) = (run("sit-wb-battery", w, 200_000, &small), run("sit-strict", w, 200_000, &small));
    let (l, s) = (&lazy.roi, &strict.roi);
    assert!(l.memory.writes.tree > 0, "evicted dirty SIT nodes were written back: {:?}", l.memory.writes);
    assert!(l.memory.writes.tree < s.memory.writes.tree, "lazy {:?} vs strict {:?}", l.memory.writes, s.memory.writes);
    assert!(l.crypto.tree_hashes < s.crypto.tree_hashes, "lazy {:?} vs strict {:?}", l.crypto, s.crypto);
    // Its tree work occupies the engine's hash unit less. (Its cycles are
    // not lower here: the strict SIT MACs a path's levels side by side
    // (STAR IV), while every dirty node the lazy one evicts bumps its
    // parent's counter, which must be fetched and verified first, so with
    // this small metadata cache it reads more tree nodes on the stores'
    // path.)
    assert!(l.engine.hash.busy_cycles < s.engine.hash.busy_cycles, "lazy {:?} vs strict {:?}", l.engine.hash, s.engine.hash);
    assert!(l.memory.reads.tree > s.memory.reads.tree, "lazy {:?} vs strict {:?}", l.memory.reads, s.memory.reads);
}

/// Every integer counter of a stats tree, by its path (`roi.memory.writes.data`).
fn integer_counters(prefix: &str, v: &serde_json::Value, out: &mut std::collections::BTreeMap<String, u64>) {
    match v {
        serde_json::Value::Object(m) => m.iter().for_each(|(k, v)| integer_counters(&format!("{prefix}.{k}"), v, out)),
        serde_json::Value::Number(n) if n.is_u64() => {
            out.insert(prefix.to_string(), n.as_u64().unwrap());
        }
        _ => {}
    }
}

/// ChampSim's warm-up: the first instructions run through the whole model
/// and the statistics cover the ones after. So a run of warm-up W and count
/// N reports N instructions, and each of its counters is that of one run of
/// everything less that of a run of the warm-up alone (the model does not
/// know it is warming up; only the statistics restart).
#[test]
fn a_warmup_leaves_its_work_out_of_the_region_of_interest() {
    use spmsim::timing::simulate_after_warmup;
    use std::sync::atomic::AtomicBool;
    let (warm_for, n) = (30_000, 50_000);
    for (preset, workload) in [("cobcm", "btree:size_mib=1"), ("sp", "random-writes"), ("cm", GAMESS_LIKE), ("bbb", "array-swap")] {
        let cfg = load_preset(preset, &[]).unwrap();
        let w = WorkloadKind::parse(workload).unwrap();
        let warm = simulate_after_warmup(&cfg, &w, warm_for, n, 7, &AtomicBool::new(false)).unwrap();
        let head = warm.warmup.expect("a warm-up is reported");
        assert_eq!(warm.roi.core.instructions, n, "{preset}: the region of interest is the count asked for");
        assert!((warm_for..warm_for + 1000).contains(&head.instructions), "{preset}: {head:?}");
        assert!(warm.roi.core.ipc == n as f64 / warm.roi.core.cycles as f64);
        let only_head = simulate(&cfg, &w, head.instructions, 7).unwrap();
        let all = simulate(&cfg, &w, head.instructions + n, 7).unwrap();
        assert_eq!(head.cycles, only_head.roi.core.cycles, "{preset}: the region of interest starts where the warm-up alone ends");
        let counters = |s: &RunStats| {
            let mut m = std::collections::BTreeMap::new();
            integer_counters("roi", &serde_json::to_value(&s.roi).unwrap(), &mut m);
            m
        };
        let (roi, before, total) = (counters(&warm), counters(&only_head), counters(&all));
        assert!(roi.len() >= 20 && roi.keys().eq(total.keys()), "{preset}: {roi:?}");
        for (k, v) in &roi {
            // A unit's server count, a queue's size and an MSHR's targets
            // are the machine's, not counts; a queue's peak is the most it
            // held over the whole run; a unit's backlog and a queue's jobs
            // held are what the run's end leaves: none of them adds up.
            if [".servers", ".entries", ".targets_per_mshr", ".peak_occupancy", ".backlog_cycles", ".held_at_end"]
                .iter()
                .any(|s| k.ends_with(s))
            {
                assert_eq!(*v, total[k], "{preset}: {k} is the whole run's");
                continue;
            }
            assert_eq!(*v, total[k] - before[k], "{preset}: {k}");
        }
        assert!(roi["roi.memory.writes.data"] > 0 && before["roi.memory.writes.data"] > 0, "{preset}: both parts write");
        assert!(serde_json::to_string(&all).unwrap().find("warmup").is_none(), "no warm-up, no entry");
    }
}

#[test]
fn a_workload_that_ends_inside_the_warmup_is_refused() {
    use spmsim::timing::{simulate_after_warmup, SimError};
    let dir = std::env::temp_dir().join(format!("spmsim-warmup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("short.trace");
    WorkloadKind::RandomWrites.write_trace(1, 3000, &trace).unwrap();
    let w = WorkloadKind::parse(&format!("trace:{}", trace.display())).unwrap();
    let cfg = load_preset("cobcm", &[]).unwrap();
    let e = simulate_after_warmup(&cfg, &w, 5000, 100, 1, &std::sync::atomic::AtomicBool::new(false)).unwrap_err();
    assert!(matches!(&e, SimError::Invalid(m) if m.contains("ended after 3000 instructions, within the warm-up of 5000")), "{e:?}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn secons_ideal_wb_prices_no_metadata_work_but_does_it() {
    // wb and the same machine with the priced battery-backed write-back.
    let ideal = run("wb", "tpcc:warehouses=1", 200_000, &[]);
    let priced = run("wb", "tpcc:warehouses=1", 200_000, &["scheme.type=\"battery-write-back\""]);
    let w = &ideal.roi.memory.writes;
    // The functional model did the same metadata writes; only their
    // pricing differs, and every one left out is counted.
    assert_eq!(ideal.roi.persist_path.unpriced_metadata_writes, w.counter + w.mac + w.tree);
    assert!(ideal.roi.persist_path.unpriced_metadata_writes > 0);
    assert_eq!(priced.roi.persist_path.unpriced_metadata_writes, 0);
    assert_eq!(ideal.roi.tree.root_updates, priced.roi.tree.root_updates, "the tree is updated all the same");
    // The ideal machine's engine hashes nothing; the priced one's tree
    // updates run in the background (a write-back scheme's persist is
    // complete once its tuple is in the battery-backed domain), so they
    // occupy the hash unit and the background queue, never shorten the
    // run.
    let (i, p) = (&ideal.roi.engine, &priced.roi.engine);
    assert_eq!((i.hash.ops, i.background_queue.jobs), (0, 0), "{i:?}");
    assert!(p.hash.ops >= priced.roi.tree.root_updates && p.background_queue.jobs > 0, "{p:?}");
    assert!(ideal.roi.core.cycles <= priced.roi.core.cycles, "{} vs {}", ideal.roi.core.cycles, priced.roi.core.cycles);
}
