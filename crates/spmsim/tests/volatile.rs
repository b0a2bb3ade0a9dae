//! Volatile and persistent memory: under `persistent=heap` a
//! program's stack stores take the ordinary write-back path. The timing
//! model gives them no persist-path work, and the crash oracle asks nothing
//! of them, while the heap stores keep every guarantee.

use spmsim::config::load_preset;
use spmsim::trace::event::Op;
use spmsim::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
use spmsim::verify::oracle::{CrashCheck, CrashPoints};
use spmsim::workload::WorkloadKind;

/// Stores after gaps of 10: every third to the heap (a new block each),
/// the others to a 1 KiB stack frame the program keeps rewriting.
fn program(dir: &std::path::Path) -> String {
    let p = dir.join("program.trace");
    let mut h = TraceHeader::new("test", AddressSpace::Physical, true);
    h.stack_range = Some((0x40_0000, 0x50_0000));
    let mut w = NativeWriter::create(&p, &h).unwrap();
    for i in 0..3000u64 {
        let addr = if i % 3 == 0 { 0x10_0000 + 64 * i } else { 0x4f_f000 + 8 * (i % 128) };
        w.write(&TraceRecord { value: Some(i), ..TraceRecord::mem(Op::Store, addr, 8).after(10) }).unwrap();
    }
    w.finish().unwrap();
    p.display().to_string()
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("spmsim-volatile-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn stack_stores_leave_the_persist_path_under_the_heap_policy() {
    let d = dir("timing");
    let trace = program(&d);
    for preset in ["sp", "cobcm", "nogap"] {
        let cfg = load_preset(preset, &[]).unwrap();
        let run = |policy: &str| {
            let w = WorkloadKind::parse(&format!("trace:{trace}#persistent={policy}")).unwrap();
            spmsim::timing::simulate(&cfg, &w, u64::MAX, 1).unwrap()
        };
        let (all, heap) = (run("all"), run("heap"));
        assert_eq!((all.roi.core.stores, all.roi.core.volatile_stores), (3000, 0), "{preset}");
        assert_eq!((heap.roi.core.stores, heap.roi.core.volatile_stores), (1000, 2000), "{preset}");
        assert_eq!(heap.roi.core.instructions, all.roi.core.instructions, "{preset}: the same program");
        assert!(
            heap.roi.memory.writes.data < all.roi.memory.writes.data,
            "{preset}: {:?} vs {:?}",
            heap.roi.memory.writes,
            all.roi.memory.writes
        );
        assert!(heap.roi.engine.hash.ops < all.roi.engine.hash.ops && heap.roi.tree.root_updates < all.roi.tree.root_updates, "{preset}");
        // Under strict persistency each persistent store waits for its
        // persist, so fewer of them is fewer cycles. COBCM's stores wait
        // only for a buffer entry; on this 8 k-cycle program its engine is
        // saturated (hash unit 97 %, PCM writes 93 % busy with every store
        // persistent) and how many counter and MAC writes merge in the WPQ
        // depends on timing: measured, one metadata-cache port against
        // eight moves the all-persistent run from 8,253 to 9,876 cycles
        // (399 against 377 counter writes reach the device), on either
        // side of the heap run's 9,545. Its cycles are not compared.
        if preset != "cobcm" {
            assert!(
                heap.roi.core.cycles < all.roi.core.cycles,
                "{preset}: heap {} vs all {} cycles",
                heap.roi.core.cycles,
                all.roi.core.cycles
            );
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn the_crash_oracle_checks_only_persistent_memory() {
    let d = dir("oracle");
    let trace = program(&d);
    for preset in ["cobcm", "sp"] {
        let cfg = load_preset(preset, &["memory.capacity_bytes=67108864".into()]).unwrap();
        let check = |policy: &str| {
            let w = WorkloadKind::parse(&format!("trace:{trace}#persistent={policy}")).unwrap();
            let events: Vec<_> = w.stream(1, u64::MAX, cfg.memory.capacity_bytes).unwrap().collect();
            CrashCheck {
                cfg: &cfg,
                workload_name: w.name(),
                events,
                ops: 0,
                seed: 1,
                points: CrashPoints::Sample(40),
                max_listed: 5,
                guarantee: None,
            }
            .run()
            .unwrap()
        };
        let (all, heap) = (check("all"), check("heap"));
        assert_eq!(all.violations + heap.violations, 0, "{preset}: {:?} {:?}", all.violation_list.first(), heap.violation_list.first());
        // 1000 heap blocks and the stack frame's 16 blocks, then the heap only.
        assert_eq!((all.blocks_checked_per_point, heap.blocks_checked_per_point), (1016, 1000), "{preset}");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `blocks` distinct blocks of non-persistent memory stored to twice over.
fn sweep(dir: &std::path::Path, blocks: u64) -> String {
    let p = dir.join(format!("sweep-{blocks}.trace"));
    let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Physical, true)).unwrap();
    for i in 0..2 * blocks {
        let addr = 0x10_0000 + 64 * (i % blocks);
        w.write(&TraceRecord { value: Some(i), ..TraceRecord::mem(Op::Store, addr, 8).after(10) }).unwrap();
    }
    w.finish().unwrap();
    p.display().to_string()
}

#[test]
fn dirty_volatile_lines_leaving_the_caches_are_written_back_under_the_regions_policy() {
    let d = dir("write-back");
    // Caches of 4, 8 and 16 KiB: 256 lines in all.
    let small = ["caches.l1d.capacity_bytes=4096", "caches.l2.capacity_bytes=8192", "caches.l3.capacity_bytes=16384"];
    let run = |preset: &str, blocks: u64| {
        let cfg = load_preset(preset, &small.map(String::from)).unwrap();
        let w = WorkloadKind::parse(&format!("trace:{}#persistent=none", sweep(&d, blocks))).unwrap();
        spmsim::timing::simulate(&cfg, &w, u64::MAX, 1).unwrap()
    };
    for preset in ["triad-2", "triad-strict"] {
        let fits = run(preset, 64);
        assert_eq!(fits.roi.core.volatile_stores, 128, "{preset}");
        assert_eq!(fits.roi.core.volatile_write_backs, 0, "{preset}: 64 lines stay in the caches");
        assert_eq!(fits.roi.memory.writes.data, 0, "{preset}");
        let spills = run(preset, 1024);
        // The first pass evicts all but the lines the L3 still holds; the
        // second evicts as many again.
        assert!(spills.roi.core.volatile_write_backs >= 1024, "{preset}: {}", spills.roi.core.volatile_write_backs);
        assert_eq!(spills.roi.memory.writes.data, spills.roi.core.volatile_write_backs, "{preset}: one data write each");
    }
    // Strict persistence writes each write-back's metadata through; the
    // lazy scheme keeps non-persistent metadata in its caches.
    let (lazy, strict) = (run("triad-2", 1024), run("triad-strict", 1024));
    // (Offered to the WPQ; a sequential sweep's counter and MAC lines
    // mostly merge there before the device writes them.)
    assert!(
        strict.roi.memory.writes.total() > 2 * lazy.roi.memory.writes.total(),
        "{:?} vs {:?}",
        strict.roi.memory.writes,
        lazy.roi.memory.writes
    );
    assert_eq!(lazy.roi.memory.writes.total(), lazy.roi.memory.writes.data, "the lazy scheme wrote no metadata back here");
    assert!(strict.roi.memory.device_writes.total() > lazy.roi.memory.device_writes.total());
    // Both do the same tree work per write-back (the lazy scheme updates
    // the cached path too) in the engine's background queue, which bounds
    // this sweep; strict's extra lines mostly merge in the WPQ, so its
    // write-through costs it device writes, and never makes it faster.
    assert_eq!(strict.roi.engine.hash.ops, lazy.roi.engine.hash.ops);
    assert!(strict.roi.memory.wpq_merged_writes > 0 && lazy.roi.memory.wpq_merged_writes == 0);
    assert!(strict.roi.core.cycles >= lazy.roi.core.cycles, "strict {} vs lazy {}", strict.roi.core.cycles, lazy.roi.core.cycles);
    std::fs::remove_dir_all(&d).ok();
}
