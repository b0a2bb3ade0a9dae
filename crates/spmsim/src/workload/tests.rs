//! The workloads' names and streams: parsing, determinism, exact
//! instruction limits, warm-ups, persistence policies and notes.

use super::*;

#[test]
fn generators_are_deterministic_and_stores_stay_in_a_block() {
    for name in ["random-writes", "seq-writes", "array-swap", "synthetic:ppti=20,nwpe=3"] {
        let w = WorkloadKind::parse(name).unwrap();
        let a = w.generate(200, 5).unwrap();
        assert_eq!(a, w.generate(200, 5).unwrap(), "{name}");
        assert!(a.iter().any(|e| e.op == Op::Store));
        for e in a.iter().filter(|e| e.op == Op::Store) {
            assert!(e.addr % 64 + e.size as u64 <= 64);
        }
        let n: u64 = w.stream(5, 10_000, u64::MAX).unwrap().map(|e| e.instructions()).sum();
        assert_eq!(n, 10_000, "{name}: exactly the instructions asked for");
    }
    let r = WorkloadKind::RandomWrites;
    assert_ne!(r.generate(50, 1).unwrap(), r.generate(50, 2).unwrap());
}

/// A fresh folder for a test's files, named after the test and the
/// process (created; the test removes it).
pub(crate) fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("spmsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub(crate) const SMALL: [&str; 9] = [
    "array:size_mib=1",
    "queue:size_mib=1",
    "btree:size_mib=1",
    "hash:size_mib=1",
    "rbtree:size_mib=1",
    "ycsb:size_mib=1",
    "tpcc:warehouses=1,orders_per_district=4096",
    "daxbench:size_mib=1",
    "daxbench-128-2",
];

#[test]
fn every_generator_parses_names_itself_and_round_trips() {
    for spec in SMALL {
        let w = WorkloadKind::parse(spec).unwrap();
        let name = w.name();
        assert_eq!(WorkloadKind::parse(&name).unwrap(), w, "{spec} -> {name}");
        let a = w.generate(20, 3).unwrap();
        assert_eq!(a, w.generate(20, 3).unwrap(), "{spec}");
        assert_ne!(a, w.generate(20, 4).unwrap(), "{spec}: the seed matters");
        let n: u64 = w.stream(5, 50_000, 8 << 30).unwrap().map(|e| e.instructions()).sum();
        assert_eq!(n, 50_000, "{spec}: exactly the instructions asked for");
    }
    // Bare kinds take the papers' defaults.
    for (kind, w) in [("btree", WorkloadKind::Btree(BtreeParams::default())), ("ycsb", WorkloadKind::Ycsb(YcsbParams::default()))] {
        assert_eq!(WorkloadKind::parse(kind).unwrap(), w);
    }
    let d = WorkloadKind::parse("daxbench-256-1:1").unwrap();
    assert_eq!(d, WorkloadKind::Daxbench(DaxParams { stride: 256, ..DaxParams::default() }));
    assert!(d.name().starts_with("daxbench:") && d.name().contains("rw=1:1") && d.name().contains("stride=256"));
    let b = WorkloadKind::parse("btree:value_bytes=64,ops_per_tx=2-4,style=static").unwrap();
    match &b {
        WorkloadKind::Btree(p) => {
            assert_eq!((p.value_bytes, p.ops_per_tx, p.style), (64, OpsPerTx { min: 2, max: 4 }, TxStyle::Static))
        }
        _ => unreachable!(),
    }
}

#[test]
fn bad_parameters_name_the_key_and_the_valid_ones() {
    let e = WorkloadKind::parse("btree:valu_bytes=8").unwrap_err();
    assert!(e.contains("valu_bytes") && e.contains("value_bytes") && e.contains("ops_per_tx"), "{e}");
    let e = WorkloadKind::parse("hash:value_bytes=12").unwrap_err();
    assert!(e.contains("value_bytes") && e.contains("multiple of 8"), "{e}");
    let e = WorkloadKind::parse("queue:ops_per_tx=0").unwrap_err();
    assert!(e.contains("ops_per_tx"), "{e}");
    let e = WorkloadKind::parse("rbtree:style=lazy").unwrap_err();
    assert!(e.contains("style") && e.contains("dynamic"), "{e}");
    let e = WorkloadKind::parse("array:size_mib=100000").unwrap_err();
    assert!(e.contains("size_mib"), "{e}");
    let e = WorkloadKind::parse("tpcc:warehouses=80").unwrap_err();
    assert!(e.contains("8 GiB"), "{e}");
    let e = WorkloadKind::parse("ycsb:theta=1.5").unwrap_err();
    assert!(e.contains("theta"), "{e}");
    let e = WorkloadKind::parse("btree:populate=true").unwrap_err();
    assert!(e.contains("populate"), "{e}");
    let e = WorkloadKind::parse("array-swap:elements=5").unwrap_err();
    assert!(e.contains("array:"), "{e}");
    let e = WorkloadKind::parse("bptree").unwrap_err();
    assert!(e.contains("unknown workload") && e.contains("btree["), "{e}");
    assert!(WorkloadKind::parse("daxbench-64").unwrap_err().contains("daxbench-STRIDE-RW"));
}

#[test]
fn toml_files_describe_generators_and_errors_name_file_and_key() {
    let dir = scratch_dir("workload");
    let f = dir.join("bt.toml");
    std::fs::write(&f, "kind = \"btree\"\nvalue_bytes = 64\nsize_mib = 2\nops_per_tx = \"1-4\"\n").unwrap();
    let w = WorkloadKind::parse(f.to_str().unwrap()).unwrap();
    assert_eq!(w, WorkloadKind::parse("btree:value_bytes=64,size_mib=2,ops_per_tx=1-4").unwrap());
    std::fs::write(&f, "kind = \"daxbench\"\nstride = 128\nrw = 2\n").unwrap();
    assert_eq!(WorkloadKind::parse(f.to_str().unwrap()).unwrap(), WorkloadKind::parse("daxbench-128-2").unwrap());
    std::fs::write(&f, "kind = \"synthetic\"\nppti = 20\nnwpe = 2.5\nstride = 4096\n").unwrap();
    assert_eq!(WorkloadKind::parse(f.to_str().unwrap()).unwrap(), WorkloadKind::parse("synthetic:ppti=20,nwpe=2.5,stride=4096").unwrap());
    std::fs::write(&f, "kind = \"rbtree\"\nvalue_byte = 64\n").unwrap();
    let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
    assert!(e.contains("bt.toml") && e.contains("value_byte") && e.contains("value_bytes"), "{e}");
    std::fs::write(&f, "kind = \"queue\"\nsize_mib = \"big\"\n").unwrap();
    let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
    assert!(e.contains("bt.toml") && e.contains("size_mib"), "{e}");
    std::fs::write(&f, "value_bytes = 64\n").unwrap();
    assert!(WorkloadKind::parse(f.to_str().unwrap()).unwrap_err().contains("no `kind`"));
    std::fs::write(&f, "kind = \"nope\"\n").unwrap();
    assert!(WorkloadKind::parse(f.to_str().unwrap()).unwrap_err().contains("unknown workload kind"));
    let missing = dir.join("missing.toml");
    assert!(WorkloadKind::parse(missing.to_str().unwrap()).unwrap_err().contains("cannot read"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace of a load after a gap of 5, a 16-byte store (two pieces, one
/// instruction) after a gap of 2, then 4 instructions without access.
fn small_trace(dir: &std::path::Path) -> WorkloadKind {
    use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
    let p = dir.join("small.trace");
    let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Physical, true)).unwrap();
    for r in [
        TraceRecord::mem(Op::Load, 0x40, 8).after(5),
        TraceRecord { value: None, ..TraceRecord::mem(Op::Store, 0x80, 16).after(2) },
        TraceRecord::compute(4),
    ] {
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
    WorkloadKind::parse(&format!("trace:{}", p.display())).unwrap()
}

#[test]
fn a_stream_stops_at_exactly_the_instructions_asked_for() {
    let dir = scratch_dir("exact");
    let w = small_trace(&dir);
    let run = |n: u64| -> Vec<Event> { w.stream(1, n, 1 << 30).unwrap().collect() };
    for n in 1..=14 {
        let ev = run(n);
        let total: u64 = ev.iter().map(|e| e.instructions()).sum();
        assert_eq!(total, n.min(13), "--instructions {n}: {ev:?}");
    }
    // Inside the first gap: only the gap's instructions, no load.
    assert_eq!(run(1), vec![Event::marker(Op::Compute).after(1)]);
    // The store that reaches the limit is simulated whole, both pieces.
    let ev = run(9);
    assert_eq!(ev.iter().filter(|e| e.op == Op::Store).count(), 2, "{ev:?}");
    assert_eq!(ev.last().map(|e| e.same_instruction), Some(true));
    // The whole trace: 13 instructions, the last 4 in a compute event.
    assert_eq!(run(u64::MAX).last(), Some(&Event::marker(Op::Compute).after(4)));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_warmup_comes_before_the_instructions_asked_for() {
    let dir = scratch_dir("warm-stream");
    let w = small_trace(&dir);
    // A warm-up of 4 takes the load and its gap (6 instructions); the
    // 3 asked for are then the store's gap and the store, both pieces.
    let ev: Vec<Event> = w.stream_after_warmup(1, 4, 3, 1 << 30).unwrap().collect();
    assert_eq!(ev.iter().map(|e| e.instructions()).sum::<u64>(), 9, "{ev:?}");
    assert_eq!(ev.iter().map(|e| e.op).collect::<Vec<_>>(), [Op::Load, Op::Store, Op::Store]);
    let plain: Vec<Event> = w.stream(1, 9, 1 << 30).unwrap().collect();
    assert_eq!(ev, plain, "the same events as a run of both without a warm-up");
    std::fs::remove_dir_all(&dir).ok();
}

/// A program's trace with a stack: stores to the heap at 0x1000 and to
/// the stack at 0x8000, and a header naming the stack range and, when
/// `ranges`, the heap page as the only persistent range.
fn stack_trace(dir: &std::path::Path, ranges: bool) -> std::path::PathBuf {
    use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
    let p = dir.join(format!("stack-{ranges}.trace"));
    let mut h = TraceHeader::new("test", AddressSpace::Physical, true);
    h.stack_range = Some((0x8000, 0x9000));
    if ranges {
        h.persistent_ranges = vec![(0x1000, 0x2000)];
    }
    let mut w = NativeWriter::create(&p, &h).unwrap();
    for r in [TraceRecord::mem(Op::Store, 0x1000, 8), TraceRecord::mem(Op::Store, 0x8040, 8), TraceRecord::mem(Op::Store, 0x4000, 8)] {
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
    p
}

#[test]
fn the_persistence_policy_flags_volatile_accesses() {
    let dir = scratch_dir("volatile");
    let flags = |spec: String| -> Vec<bool> {
        WorkloadKind::parse(&spec).unwrap().stream(1, 100, 1 << 30).unwrap().filter(|e| e.op == Op::Store).map(|e| e.volatile).collect()
    };
    let plain = stack_trace(&dir, false).display().to_string();
    let ranged = stack_trace(&dir, true).display().to_string();
    // heap, stack, other: the header's ranges (none: all persistent),
    // everything, everything but the stack.
    assert_eq!(flags(format!("trace:{plain}")), [false, false, false]);
    assert_eq!(flags(format!("trace:{ranged}")), [false, true, true]);
    assert_eq!(flags(format!("trace:{ranged}#persistent=all")), [false, false, false]);
    assert_eq!(flags(format!("trace:{plain}#persistent=heap")), [false, true, false]);
    assert_eq!(flags(format!("trace:{plain}#format=native#persistent=heap")), [false, true, false]);
    assert_eq!(flags(format!("trace:{ranged}#persistent=none")), [true, true, true]);
    let w = WorkloadKind::parse(&format!("trace:{plain}#persistent=heap")).unwrap();
    assert!(w.name().ends_with("#persistent=heap"), "{}", w.name());
    let e = WorkloadKind::parse(&format!("trace:{plain}#persistent=stack")).unwrap_err();
    assert!(e.contains("persistent=`stack`") && e.contains("heap"), "{e}");
    let e = WorkloadKind::parse(&format!("trace:{plain}#colour=red")).unwrap_err();
    assert!(e.contains("#colour="), "{e}");
    // A trace without a recorded stack cannot say what `heap` leaves out.
    let mut h = crate::trace::TraceHeader::new("test", crate::trace::AddressSpace::Physical, true);
    h.stack_range = None;
    let bare = dir.join("bare.trace");
    let mut wr = crate::trace::NativeWriter::create(&bare, &h).unwrap();
    wr.write(&crate::trace::TraceRecord::mem(Op::Store, 0x40, 8)).unwrap();
    wr.finish().unwrap();
    let e = WorkloadKind::parse(&format!("trace:{}#persistent=heap", bare.display())).unwrap().stream(1, 10, 1 << 30).err().unwrap();
    assert!(e.contains("stack range"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn reports_learn_what_is_synthetic_or_implicit() {
    let notes = |s: &str| WorkloadKind::parse(s).unwrap().stream(1, 1000, 8 << 30).unwrap().notes();
    assert!(notes("synthetic:ppti=10").iter().any(|n| n.starts_with("synthetic stream")));
    assert!(notes("daxbench-64-2").iter().any(|n| n.contains("synthetic")));
    assert!(notes("btree:size_mib=1").iter().any(|n| n.contains("implicit")));
    assert!(notes("btree:size_mib=1,populate=true").is_empty());
    assert!(notes("array-swap").is_empty());
}

#[test]
fn a_stream_runs_on_past_its_limit_and_starts_its_trace_again() {
    let dir = scratch_dir("run-on");
    let w = small_trace(&dir);
    let WorkloadKind::Trace(t) = &w else { unreachable!() };
    let two = WorkloadKind::parse(&format!("trace:{},{}", t.path.display(), t.path.display())).unwrap();
    let mut s = two.thread_streams(1, 0, 3, 1 << 30).unwrap().remove(0);
    // The limit falls inside the load's gap of 5.
    let roi: Vec<Event> = s.by_ref().collect();
    assert_eq!(roi, vec![Event::marker(Op::Compute).after(3)]);
    assert!(s.run_on());
    // The rest of the cut event, the rest of the trace, then the trace again.
    let on: Vec<Event> = s.by_ref().take(8).collect();
    let ops: Vec<(Op, u32)> = on.iter().map(|e| (e.op, e.gap)).collect();
    assert_eq!(
        ops,
        [(Op::Load, 2), (Op::Store, 2), (Op::Store, 0), (Op::Compute, 4), (Op::Load, 5), (Op::Store, 2), (Op::Store, 0), (Op::Compute, 4)]
    );
    assert_eq!(roi.iter().chain(&on[..4]).map(|e| e.instructions()).sum::<u64>(), 13, "the first pass is the whole trace");
    assert!(s.notes().iter().any(|n| n.contains("started again 1 time(s)")), "{:?}", s.notes());
    // One program alone cannot run on (it has no other core to wait for),
    // nor can a stream inside its warm-up.
    let mut alone = w.stream(1, 3, 1 << 30).unwrap();
    alone.by_ref().count();
    assert!(!alone.run_on());
    let mut warming = two.thread_streams(1, 100, 3, 1 << 30).unwrap().remove(0);
    warming.by_ref().count();
    assert!(!warming.run_on());
    std::fs::remove_dir_all(&dir).ok();
}
