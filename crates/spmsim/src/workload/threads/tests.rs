//! Threads and mixes: parsing, naming, partitions, shared data's ticket
//! order, determinism, and the crash oracle on the merged stream.

use super::*;
use crate::workload::{Event, EventStream, HashParams, Op};

/// The generators' small sizes (the workload tests' list, without its
/// `daxbench-S-RW` alias).
const SMALL: [&str; 8] = {
    let all = crate::workload::tests::SMALL;
    [all[0], all[1], all[2], all[3], all[4], all[5], all[6], all[7]]
};

fn parse(s: &str) -> WorkloadKind {
    WorkloadKind::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn take(s: &mut EventStream, n: usize) -> Vec<Event> {
    let v: Vec<Event> = s.by_ref().take(n).collect();
    assert_eq!(v.len(), n);
    s.finish().unwrap();
    v
}

#[test]
fn one_thread_is_the_plain_workload() {
    for spec in SMALL.iter().copied().chain(["daxbench-128-2"]) {
        let plain = parse(spec);
        for extra in ["threads=1", "threads=1,data=shared", "data=partitioned,threads=1"] {
            let sep = if spec.contains(':') { "," } else { ":" };
            let w = parse(&format!("{spec}{sep}{extra}"));
            assert_eq!(w, plain, "{spec} {extra}");
            assert_eq!(w.name(), plain.name());
            assert_eq!(w.threads(), 1);
            assert!(!w.shared_lock());
            assert_eq!(w.generate(20, 3).unwrap(), plain.generate(20, 3).unwrap());
        }
        let s = plain.thread_streams(3, 100, 5000, 8 << 30).unwrap();
        assert_eq!(s.len(), 1);
    }
}

#[test]
fn bad_thread_keys_are_named() {
    for (spec, want) in [
        ("btree:threads=0", "threads"),
        ("btree:threads=65", "1 to 64"),
        ("hash:threads=two", "threads"),
        ("queue:threads=2,data=both", "`data` must be `partitioned` or `shared`"),
        ("daxbench-64-2:threads=99", "threads"),
        ("mix:a=btree:threads=2,b=queue", "multi-threaded"),
        ("mix:size_mib=3,queue", "neither a workload"),
        ("mix:a=queue,a=hash", "label `a` given twice"),
        ("mix:a=queue,b=nosuch:x=1", "nosuch"),
        ("mix:", "no programs"),
        ("mix:trace:a.trace,b.trace", "`b.trace` is neither a workload"),
    ] {
        let e = WorkloadKind::parse(spec).unwrap_err();
        assert!(e.contains(want), "{spec}: {e}");
    }
    // The generator still rejects its own unknown keys.
    let e = WorkloadKind::parse("btree:threads=2,valu_bytes=8").unwrap_err();
    assert!(e.contains("valu_bytes"), "{e}");
}

#[test]
fn names_parse_back_to_the_same_workload() {
    for spec in [
        "btree:size_mib=1,threads=4",
        "hash:threads=8,data=shared,size_mib=2,gap=3",
        "daxbench-256-1:1:size_mib=4,threads=2",
        "ycsb:threads=64,data=partitioned,size_mib=1",
        "mix:a=array-swap,b=queue:size_mib=1,gap=3,c=hash,d=daxbench-64-2",
        "mix:array-swap,random-writes,synthetic:ppti=20,nwpe=3",
        "mix1",
        "MIX4",
    ] {
        let w = parse(spec);
        let name = w.name();
        assert_eq!(parse(&name), w, "{spec} -> {name}");
        assert!(w.threads() > 1, "{spec}");
    }
    let w = parse("hash:threads=8,data=shared,size_mib=2,gap=3");
    assert!(w.name().starts_with("hash:threads=8,data=shared,") && w.name().contains("gap=3"), "{}", w.name());
    assert!(w.shared_lock() && w.threads() == 8);
    assert!(!parse("hash:threads=8").shared_lock());
}

/// A mix part's `warmup=N` is its own warm-up, not a key of its
/// generator; its stream takes it, the other parts the run's.
#[test]
fn a_mix_part_may_have_its_own_warmup() {
    let w = parse("mix:a=seq-writes,warmup=500,b=queue:size_mib=1,warmup=0,gap=3,c=hash");
    let WorkloadKind::Threads(t) = &w else { panic!("{w:?}") };
    assert_eq!(t.parts, vec![parse("seq-writes"), parse("queue:size_mib=1,gap=3"), parse("hash")]);
    assert_eq!(t.part_warmups, vec![Some(500), Some(0), None]);
    assert_eq!(parse(&w.name()), w, "{}", w.name());
    let asked: Vec<u64> = w.thread_streams(1, 1_000, 10, 1 << 30).unwrap().iter().map(|s| s.warmup_asked()).collect();
    assert_eq!(asked, [500, 0, 1_000]);
    // Without any, the spec and its name are as before.
    let WorkloadKind::Threads(t) = parse("mix:a=hash,b=queue") else { panic!() };
    assert!(t.part_warmups.is_empty());
    for (bad, says) in [("mix:a=hash,warmup=x,b=queue", "warmup=`x`"), ("mix:a=hash,warmup=1,warmup=2,b=queue", "given twice")] {
        let e = WorkloadKind::parse(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
}

#[test]
fn mixes_parse_in_both_forms() {
    let w = parse("mix:a=array-swap,b=queue:size_mib=1,gap=3,c=hash,d=daxbench-64-2");
    let WorkloadKind::Threads(t) = &w else { panic!("{w:?}") };
    assert_eq!(t.threads, 4);
    assert_eq!(t.part_labels, ["a", "b", "c", "d"].map(|l| Some(l.to_string())));
    assert_eq!(t.parts, vec![parse("array-swap"), parse("queue:size_mib=1,gap=3"), parse("hash"), parse("daxbench-64-2")]);
    assert_eq!((t.mode, t.form), (DataMode::Partitioned, ThreadForm::Mix));
    // Unlabelled: every segment naming a workload starts a program.
    let w = parse("mix:array-swap,hash:size_mib=2,value_bytes=64,seq-writes");
    let WorkloadKind::Threads(t) = &w else { panic!("{w:?}") };
    assert_eq!(t.part_labels, vec![None, None, None]);
    assert_eq!(t.parts[1], WorkloadKind::Hash(HashParams { size_mib: 2, value_bytes: 64, ..HashParams::default() }));
    // suite: starts a program too (none recorded here: its own error).
    let e = WorkloadKind::parse("mix:suite:no-such-program,suite:gcc").unwrap_err();
    assert!(e.contains("suite program `no-such-program`"), "{e}");
    // The presets of Triad-NVM Table II.
    let m1 = parse("Mix1");
    let WorkloadKind::Threads(t) = &m1 else { panic!() };
    assert_eq!(t.parts, vec![parse("array-swap"), parse("queue"), parse("hash"), parse("daxbench-64-2")]);
    assert_eq!(m1.name(), "mix1");
    let WorkloadKind::Threads(t) = parse("mix4") else { panic!() };
    assert_eq!(t.parts, vec![parse("array-swap"), parse("hash"), parse("hash"), parse("daxbench-1024-2")]);
    for (p, d) in [
        ("daxbench1", "daxbench-128-2"),
        ("DAXBENCH2", "daxbench-1024-2"),
        ("daxbench3", "daxbench-256-2"),
        ("daxbench4", "daxbench-512-3"),
    ] {
        assert_eq!(parse(p), parse(d), "{p}");
    }
}

#[test]
fn the_spec_cpu_mixes_run_the_stand_ins_or_say_how_to_record_them() {
    for (mix, first, second) in
        [("MIX2", "suite:mcf#persistent=none", "queue"), ("mix3", "suite:mcf#persistent=none", "suite:lbm#persistent=none")]
    {
        match WorkloadKind::parse(mix) {
            Ok(WorkloadKind::Threads(t)) => {
                assert_eq!(t.parts.len(), 4, "{mix}");
                assert_eq!(t.parts[0].name(), first, "{mix}");
                assert!(t.parts[1].name().starts_with(second), "{mix}: {}", t.parts[1].name());
            }
            Ok(w) => panic!("{mix}: {}", w.name()),
            // The cache lacks the stand-ins' traces: the error says how
            // to record them.
            Err(e) => assert!(e.contains("memory-intensive.toml") && e.contains("suite record"), "{mix}: {e}"),
        }
    }
}

#[test]
fn partitioned_threads_stay_in_their_own_range() {
    let cap = 64 << 20;
    let span = partition_span(cap, 4).unwrap();
    assert_eq!(span, 16 << 20);
    for spec in [
        "btree:size_mib=1,threads=4",
        "queue:size_mib=1,threads=4",
        "mix:a=array-swap,b=queue:size_mib=1,c=hash:size_mib=1,d=daxbench-64-2:size_mib=1",
    ] {
        let w = parse(spec);
        let streams = w.thread_streams(9, 1000, 20_000, cap).unwrap();
        assert_eq!(streams.len(), 4);
        for (t, mut s) in streams.into_iter().enumerate() {
            let ev: Vec<Event> = s.by_ref().collect();
            s.finish().unwrap();
            assert!(ev.iter().filter(|e| e.op == Op::Store).count() > 10, "{spec} thread {t}");
            let warm = ev.iter().map(|e| e.instructions()).sum::<u64>();
            assert!(warm >= 21_000, "{spec} thread {t}: warm-up and limit per thread, got {warm}");
            for e in &ev {
                assert_eq!(e.thread as usize, t, "{spec}");
                if matches!(e.op, Op::Load | Op::Store) {
                    let lo = t as u64 * span;
                    assert!(e.addr >= lo && e.addr + e.size as u64 <= lo + span, "{spec} thread {t}: {:#x}", e.addr);
                }
            }
        }
    }
    // Thread 0 keeps the run seed; thread 1 runs its own instance.
    let w = parse("btree:size_mib=1,threads=2");
    let mut s = w.thread_streams(9, 0, 10_000, cap).unwrap();
    let plain: Vec<Event> = parse("btree:size_mib=1").stream(9, 10_000, cap).unwrap().collect();
    let t0: Vec<Event> = s[0].by_ref().collect();
    assert_eq!(t0, plain);
    let t1: Vec<Event> = s[1]
        .by_ref()
        .map(|mut e| {
            e.addr -= if matches!(e.op, Op::Load | Op::Store) { 32 << 20 } else { 0 };
            e.thread = 0;
            e
        })
        .collect();
    assert_ne!(t1, plain, "thread 1 has its own seed");
}

#[test]
fn a_thread_beyond_its_partition_says_so() {
    let w = parse("btree:size_mib=64,threads=4");
    let mut s = w.thread_streams(1, 0, 1_000_000, 64 << 20).unwrap().remove(0);
    assert!(s.by_ref().count() < 1_000_000);
    let e = s.finish().unwrap_err();
    assert!(e.contains("thread 0") && e.contains("partition of 16777216 bytes") && e.contains("/ 4 threads"), "{e}");
    let e = WorkloadKind::parse("queue:size_mib=1,threads=64").unwrap().thread_streams(1, 0, 10, 4096 * 10).err().unwrap();
    assert!(e.contains("too small"), "{e}");
}

/// The shared generator's events without the lock and moved back.
fn unshare(ev: &[Event], n: usize) -> Vec<Event> {
    ev.iter()
        .filter(|e| !e.volatile)
        .map(|e| {
            let mut e = *e;
            if matches!(e.op, Op::Load | Op::Store) {
                let t = e.thread as u64;
                let lo = t * pheap::LOG_BYTES;
                e.addr = if e.addr >= lo && e.addr < lo + pheap::LOG_BYTES && e.addr < n as u64 * pheap::LOG_BYTES {
                    e.addr - lo
                } else {
                    e.addr - (n as u64 - 1) * pheap::LOG_BYTES
                };
            }
            e.thread = 0;
            e
        })
        .collect()
}

#[test]
fn shared_data_deals_transactions_in_ticket_order_under_a_lock() {
    let n = 3;
    let w = parse("hash:size_mib=1,threads=3,data=shared");
    let plain = parse("hash:size_mib=1");
    let merged = w.generate(30, 4).unwrap();
    let ours = plain.generate(30, 4).unwrap();
    assert_eq!(unshare(&merged, n), ours, "the generator's own order, moved and locked");
    let lock = shared_address(LOCK_WORD, 0, n);
    assert_eq!(lock, (8 << 20) - 64 + 2 * (4 << 20));
    // Every transaction: lock (load, store ticket+1), tx-begin .. tx-commit, release; the k-th on thread k mod n.
    let mut k = 0u64;
    let mut i = 0;
    while i < merged.len() {
        let t = (k % n as u64) as u8;
        let e = &merged[i];
        assert!(e.op == Op::Load && e.volatile && e.addr == lock && e.thread == t, "unit {k} at {i}: {e:?}");
        let s = &merged[i + 1];
        assert!(s.op == Op::Store && s.volatile && s.addr == lock && s.value == k + 1 && s.same_instruction);
        assert_eq!(merged[i + 2].op, Op::TxBegin);
        let end = i + merged[i..].iter().position(|e| e.op == Op::TxCommit).unwrap();
        for e in &merged[i..=end + 1] {
            assert_eq!(e.thread, t);
            if e.op == Op::Store && e.log {
                assert!(e.addr / pheap::LOG_BYTES == t as u64, "thread {t}'s log: {:#x}", e.addr);
            } else if matches!(e.op, Op::Load | Op::Store) && !e.volatile {
                assert!(e.addr >= n as u64 * pheap::LOG_BYTES, "shared data above the logs: {:#x}", e.addr);
            }
        }
        let r = &merged[end + 1];
        assert!(r.op == Op::Store && r.volatile && r.addr == lock && r.value == 0, "release: {r:?}");
        i = end + 2;
        k += 1;
    }
    assert_eq!(k, 30);
    // Each thread's stream is the merged stream's events of that thread.
    let mut streams = w.thread_streams(4, 0, u64::MAX, 8 << 30).unwrap();
    for (t, s) in streams.iter_mut().enumerate() {
        let want: Vec<Event> = merged.iter().filter(|e| e.thread as usize == t).copied().collect();
        assert_eq!(take(s, want.len()), want, "thread {t}");
    }
    let notes = w.notes();
    assert!(notes.iter().any(|n| n.contains("ticket") && n.contains("lock") && n.contains("undo log")), "{notes:?}");
}

#[test]
fn the_merged_stream_takes_operations_round_robin() {
    let w = parse("array:size_mib=1,threads=3");
    let merged = w.generate(12, 2).unwrap();
    let mut runs: Vec<u8> = Vec::new();
    for e in &merged {
        if runs.last() != Some(&e.thread) {
            runs.push(e.thread);
        }
    }
    assert_eq!(runs, [0, 1, 2].repeat(4));
    // The same events each thread's own stream gives, partitioned as
    // for the default memory.
    let mut streams = w.thread_streams(2, 0, u64::MAX, GENERATE_CAPACITY).unwrap();
    for (t, s) in streams.iter_mut().enumerate() {
        let want: Vec<Event> = merged.iter().filter(|e| e.thread as usize == t).copied().collect();
        assert_eq!(take(s, want.len()), want, "thread {t}");
    }
    // stream(): the instruction limit is the total.
    let n: u64 = w.stream(2, 30_000, 8 << 30).unwrap().map(|e| e.instructions()).sum();
    assert_eq!(n, 30_000);
}

#[test]
fn runs_are_deterministic_and_seeded() {
    for spec in ["rbtree:size_mib=1,threads=2", "ycsb:size_mib=1,threads=2,data=shared", "mix1"] {
        let w = parse(spec);
        let run =
            |seed| -> Vec<Vec<Event>> { w.thread_streams(seed, 0, 5_000, 8 << 30).unwrap().into_iter().map(|s| s.collect()).collect() };
        assert_eq!(run(7), run(7), "{spec}");
        assert_ne!(run(7), run(8), "{spec}");
        assert_eq!(w.generate(10, 7).unwrap(), w.generate(10, 7).unwrap());
        for (t, s) in w.thread_streams(7, 0, 5_000, 8 << 30).unwrap().into_iter().enumerate() {
            assert_eq!(s.map(|e| e.instructions()).sum::<u64>(), 5_000, "{spec} thread {t}: its own limit");
        }
    }
}

#[test]
fn traces_run_one_per_core() {
    use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
    let dir = crate::workload::tests::scratch_dir("threads");
    let mk = |name: &str, addr: u64| {
        let p = dir.join(name);
        let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Physical, true)).unwrap();
        for i in 0..4 {
            w.write(&TraceRecord::mem(Op::Store, addr + 64 * i, 8).after(1)).unwrap();
        }
        w.finish().unwrap();
        p.display().to_string()
    };
    let (a, b) = (mk("a.trace", 0x1000), mk("b.trace", 0x2000));
    let w = parse(&format!("trace:{a},{b}"));
    assert_eq!(w.threads(), 2);
    assert_eq!(parse(&w.name()), w);
    // A thread without its stream refuses the mix, as it refuses itself.
    let (mix, alone) = (w.instruction_streams().unwrap_err(), parse(&format!("trace:{a}")).instruction_stream().unwrap_err());
    assert!(matches!((&mix, &alone), (crate::workload::NoStream::Refused(_), crate::workload::NoStream::Refused(_))));
    assert!(mix.to_string().starts_with("thread 0 of the mix") && mix.to_string().contains(&alone.to_string()), "{mix}");
    let span = partition_span(1 << 30, 2).unwrap();
    let streams = w.thread_streams(1, 0, u64::MAX, 1 << 30).unwrap();
    for (t, s) in streams.into_iter().enumerate() {
        let addrs: Vec<u64> = s.map(|e| e.addr).collect();
        let base = if t == 0 { 0x1000 } else { 0x2000 + span };
        assert_eq!(addrs, (0..4).map(|i| base + 64 * i).collect::<Vec<_>>(), "thread {t}");
    }
    // Merged: alternating until both end.
    let m: Vec<u8> = w.stream(1, u64::MAX, 1 << 30).unwrap().map(|e| e.thread).collect();
    assert_eq!(m, [0, 1, 0, 1, 0, 1, 0, 1]);
    // The unlabelled mix form takes traces too; one path stays one trace.
    assert_eq!(parse(&format!("mix:trace:{a},trace:{b}")).threads(), 2);
    assert!(matches!(parse(&format!("trace:{a}")), WorkloadKind::Trace(_)));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn workload_files_take_threads_and_mixes() {
    let dir = crate::workload::tests::scratch_dir("threads-toml");
    let f = dir.join("w.toml");
    std::fs::write(&f, "kind = \"hash\"\nthreads = 4\ndata = \"shared\"\nsize_mib = 2\n").unwrap();
    assert_eq!(parse(f.to_str().unwrap()), parse("hash:threads=4,data=shared,size_mib=2"));
    std::fs::write(&f, "kind = \"mix\"\nparts = [\"a=array-swap\", \"b=queue:size_mib=1,gap=3\"]\n").unwrap();
    assert_eq!(parse(f.to_str().unwrap()), parse("mix:a=array-swap,b=queue:size_mib=1,gap=3"));
    std::fs::write(&f, "kind = \"btree\"\nthreads = 100\n").unwrap();
    let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
    assert!(e.contains("w.toml") && e.contains("threads"), "{e}");
    std::fs::write(&f, "kind = \"synthetic\"\nthreads = 2\n").unwrap();
    let e = WorkloadKind::parse(f.to_str().unwrap()).unwrap_err();
    assert!(e.contains("threads") && e.contains("persistent generators"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_merged_stream_passes_the_crash_oracle() {
    use crate::verify::oracle::{CrashCheck, CrashPoints};
    let one = crate::config::load_preset("cobcm", &[]).unwrap();
    for spec in ["hash:size_mib=1,threads=3,data=shared", "queue:size_mib=1,threads=2", "mix:a=array-swap,b=btree:size_mib=1"] {
        let w = parse(spec);
        // One core per thread, each with its own SecPB.
        let cfg = one.with_cores_for(w.threads()).unwrap();
        let events = w.generate(40, 7).unwrap();
        assert!(events.iter().any(|e| e.thread > 0), "{spec}");
        let r = CrashCheck {
            cfg: &cfg,
            workload_name: w.name(),
            events,
            ops: 40,
            seed: 7,
            points: CrashPoints::Sample(40),
            max_listed: 5,
            guarantee: None,
        }
        .run()
        .unwrap();
        assert_eq!(r.crash_points, 40, "{spec}");
        assert_eq!(r.violations, 0, "{spec}: {:?}", r.violation_list.first());
        let m = r.multicore.as_ref().unwrap_or_else(|| panic!("{spec}: no multi-core report"));
        assert_eq!((m.cores, m.undrained_points), (w.threads(), 0), "{spec}");
    }
}

#[test]
fn notes_say_how_memory_is_shared_or_partitioned() {
    let n = parse("btree:size_mib=1,threads=2").stream(1, 1000, 8 << 30).unwrap().notes();
    assert!(n.iter().any(|x| x.contains("partitioned") && x.contains("mix(seed, t)")), "{n:?}");
    assert!(n.iter().any(|x| x.contains("undo log") && x.contains("span")), "{n:?}");
    assert!(n.iter().any(|x| x.contains("implicit")), "the part's own notes: {n:?}");
    let n = parse("mix1").notes();
    assert!(n.iter().any(|x| x.contains("multi-programmed")), "{n:?}");
    assert!(n.iter().any(|x| x.contains("thread 3") && x.contains("synthetic")), "{n:?}");
}
