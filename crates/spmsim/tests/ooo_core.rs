//! The `ooo` core model against schedules worked out by hand: a trace of
//! non-memory instructions with a hand-made instruction stream beside it.

use spmsim::config::load_preset;
use spmsim::timing::{simulate, RunStats};
use spmsim::trace::insn::{path_for, Insn, InsnWriter};
use spmsim::trace::vex::{BranchKind, FuClass};
use spmsim::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
use spmsim::workload::WorkloadKind;
use std::path::PathBuf;

const N: u64 = 20_000;

/// A trace of `N` instructions without memory accesses, and its stream.
fn trace(name: &str, insn: impl Fn(u64) -> Insn) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spmsim-ooo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.trace"));
    let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Virtual, false)).unwrap();
    w.write(&TraceRecord::compute(N as u32)).unwrap();
    w.finish().unwrap();
    let mut s = InsnWriter::create(&path_for(&p)).unwrap();
    for k in 0..N {
        s.write(&insn(k)).unwrap();
    }
    s.finish(0, &spmsim::util::digest::file_digest(&p).unwrap()).unwrap();
    p
}

fn run(p: &std::path::Path, extra: &[&str]) -> RunStats {
    let mut o = vec!["core.model=ooo".to_string()];
    o.extend(extra.iter().map(|s| s.to_string()));
    let cfg = load_preset("bbb", &o).unwrap();
    simulate(&cfg, &WorkloadKind::parse(&format!("trace:{}", p.display())).unwrap(), N, 1).unwrap()
}

fn chain(class: FuClass) -> impl Fn(u64) -> Insn {
    looped(move |k| Insn { class, nsrc: (k > 0) as u8, srcs: [1, 0, 0], ..Insn::default() })
}

/// The instructions `insn` makes as a loop of 16 in one 64-byte block:
/// every 16th a taken jump back (keeping its class and sources), so fetch
/// reads one block that stays in L1I, as a program's hot loop; a program
/// of `N` instructions in a row would miss in L1I every 16 instructions.
fn looped(insn: impl Fn(u64) -> Insn) -> impl Fn(u64) -> Insn {
    move |k| match k % 16 {
        15 => Insn { branch: BranchKind::DirectJump, taken: true, pc: 0x40_003c, ..insn(k) },
        _ => insn(k),
    }
}

#[test]
fn independent_instructions_run_at_the_issue_width() {
    // gem5's 8-wide dispatch feeds 6 integer ALUs: the ALUs bound it.
    // The constant front end: the widths and units alone (with fetch,
    // each new fetch buffer also costs an L1I access).
    let s = run(&trace("indep", |_| Insn::default()), &["core.ooo.front_end=constant"]);
    assert!((s.roi.core.ipc - 6.0).abs() < 0.05, "ipc {}", s.roi.core.ipc);
    let s = run(&trace("indep2", |_| Insn::default()), &["core.ooo.dispatch_width=2", "core.ooo.front_end=constant"]);
    assert!((s.roi.core.ipc - 2.0).abs() < 0.05, "ipc {}", s.roi.core.ipc);
    let s = run(&trace("indep3", |_| Insn::default()), &["core.ooo.commit_width=3", "core.ooo.front_end=constant"]);
    assert!((s.roi.core.ipc - 3.0).abs() < 0.05, "ipc {}", s.roi.core.ipc);
}

#[test]
fn a_dependence_chain_runs_at_one_over_its_latency() {
    let s = run(&trace("alu-chain", chain(FuClass::IntAlu)), &[]);
    assert!((s.roi.core.ipc - 1.0).abs() < 0.02, "ALU chain ipc {}", s.roi.core.ipc);
    let s = run(&trace("mul-chain", chain(FuClass::IntMult)), &[]);
    assert!((s.roi.core.ipc - 1.0 / 3.0).abs() < 0.01, "multiply chain ipc {}", s.roi.core.ipc);
    let s = run(&trace("fpmul-chain", chain(FuClass::FpMult)), &["core.ooo.fp_mult.latency=6"]);
    assert!((s.roi.core.ipc - 1.0 / 6.0).abs() < 0.01, "a configured latency: ipc {}", s.roi.core.ipc);
}

#[test]
fn an_unpipelined_unit_limits_independent_work() {
    // Independent divides on two units that take one every 19 cycles.
    let s = run(&trace("div", looped(|_| Insn { class: FuClass::IntDiv, ..Insn::default() })), &[]);
    assert!((s.roi.core.ipc - 2.0 / 19.0).abs() < 0.005, "ipc {}", s.roi.core.ipc);
}

#[test]
fn mispredicted_branches_cost_the_refill() {
    // A conditional branch every 10th instruction, with outcomes from a
    // hash the predictor cannot learn: about half mispredict.
    let random = |k: u64| {
        let mut z = k.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) & 1 == 1
    };
    let br = |k: u64, taken: bool| {
        if k % 10 == 9 {
            Insn { branch: BranchKind::Conditional, taken, pc: 0x4000 + (k % 100), ..Insn::default() }
        } else {
            Insn::default()
        }
    };
    let s = run(&trace("random-branches", move |k| br(k, random(k))), &["core.ooo.front_end=constant"]);
    let o = s.roi.core.ooo.unwrap();
    assert_eq!(o.conditional_branches, N / 10);
    let rate = o.conditional_mispredicts as f64 / o.conditional_branches as f64;
    assert!((0.35..0.65).contains(&rate), "misprediction rate {rate}");
    // Each misprediction: the branch executes a cycle after dispatch, then
    // 7 cycles of refill before the next dispatch; between them the six
    // ALUs bound the rate.
    let expected = N as f64 / 6.0 + o.mispredicts as f64 * 7.0;
    let cycles = s.roi.core.cycles as f64;
    assert!((cycles - expected).abs() / expected < 0.15, "cycles {cycles}, about {expected} expected");
    // Fetched through L1I: a misprediction costs the squash (1), the
    // refetch's L1I hit (2) and the stages to dispatch (4), at least the
    // constant's 7 cycles.
    let f = run(&trace("random-branches-fetch", move |k| br(k, random(k))), &[]);
    let fo = f.roi.core.ooo.unwrap();
    assert_eq!(fo.mispredicts, o.mispredicts, "the same predictor on the same stream");
    assert_eq!(fo.front_end.unwrap().redirects, fo.mispredicts);
    assert!(f.roi.core.cycles >= s.roi.core.cycles, "fetch {} cycles, constant {}", f.roi.core.cycles, s.roi.core.cycles);
    // Always taken: learnt, nearly free.
    let s = run(&trace("taken-branches", move |k| br(k, true)), &["core.ooo.front_end=constant"]);
    assert!(s.roi.core.ooo.unwrap().mispredicts < 50);
    assert!(s.roi.core.ipc > 3.8, "ipc {}", s.roi.core.ipc);
}

#[test]
fn a_missing_stream_or_a_generated_workload_is_a_clear_error() {
    let cfg = load_preset("bbb", &["core.model=ooo".to_string()]).unwrap();
    let e = simulate(&cfg, &WorkloadKind::parse("array-swap").unwrap(), 1000, 1).unwrap_err();
    assert!(e.contains("core.model") && e.contains("array-swap"), "{e}");
    let p = trace("no-stream", |_| Insn::default());
    std::fs::remove_file(path_for(&p)).unwrap();
    let e = simulate(&cfg, &WorkloadKind::parse(&format!("trace:{}", p.display())).unwrap(), 1000, 1).unwrap_err();
    assert!(e.contains(".insn") && e.contains("trace record"), "{e}");
    let e = load_preset("bbb", &["core.model=ooo".to_string(), "core.rob_entries=4096".to_string()]).unwrap_err().to_string();
    assert!(e.contains("core.rob_entries"), "{e}");
}

/// A trace of `N` independent 8-byte loads at `addr` (always the same
/// line, so every one after the first hits in L1), and its stream.
fn loads(name: &str, addr: u64) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("spmsim-ooo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.trace"));
    let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Virtual, false)).unwrap();
    for _ in 0..N {
        w.write(&TraceRecord::mem(spmsim::workload::Op::Load, addr, 8)).unwrap();
    }
    w.finish().unwrap();
    let mut s = InsnWriter::create(&path_for(&p)).unwrap();
    for _ in 0..N {
        s.write(&Insn { class: FuClass::Load, ..Insn::default() }).unwrap();
    }
    s.finish(0, &spmsim::util::digest::file_digest(&p).unwrap()).unwrap();
    p
}

#[test]
fn a_load_split_at_a_block_boundary_retires_once() {
    // The same loads, whole (at 0) and straddling two blocks (at 60, two
    // pieces): both run at nearly the issue width, at the same rate, since
    // one instruction takes one retire slot and one load-queue entry
    // however many blocks it touches (two slots each would halve it).
    let whole = run(&loads("whole-loads", 0), &["core.ooo.front_end=constant"]);
    let split = run(&loads("split-loads", 60), &["core.ooo.front_end=constant"]);
    assert_eq!(whole.roi.core.instructions, N);
    assert_eq!(split.roi.core.instructions, N);
    assert_eq!(split.roi.core.loads, 2 * N, "the split loads are two block accesses each");
    assert!(whole.roi.core.ipc > 3.5, "whole loads: ipc {}", whole.roi.core.ipc);
    let (w, s) = (whole.roi.core.ipc, split.roi.core.ipc);
    assert!((s - w).abs() / w < 0.02, "split loads: ipc {s}, whole loads {w}");
}

#[test]
fn a_synthetic_profile_runs_on_a_borrowed_instruction_stream() {
    // The profile's stores on a dependence chain: the chain, not the issue
    // width, sets bbb's IPC; on independent instructions it is near the width.
    // (Its cold store misses would be bound by L1D's four MSHRs, at 1.6
    // instructions a cycle: the caches' misses are unbounded here, as the
    // scheduling is what this test looks at.)
    let cfg = load_preset("bbb", &["core.model=ooo".to_string(), "caches.mshrs=unbounded".to_string()]).unwrap();
    let on = |p: &std::path::Path| {
        let w = WorkloadKind::parse(&format!("synthetic:ppti=20,nwpe=2,footprint_mib=1,insns={}", p.display())).unwrap();
        simulate(&cfg, &w, N, 1).unwrap()
    };
    let chained = on(&trace("borrowed-chain", chain(FuClass::IntAlu)));
    assert!(chained.roi.core.ooo.is_some(), "the ooo model scheduled it");
    assert!(chained.roi.core.ipc < 1.2, "a chain: ipc {}", chained.roi.core.ipc);
    let free = on(&trace("borrowed-indep", looped(|_| Insn::default())));
    assert!(free.roi.core.ipc > 3.0, "independent: ipc {}", free.roi.core.ipc);
    // A borrowed stream shorter than the run ends the run, with a note.
    let p = trace("borrowed-short", |_| Insn::default());
    let w = WorkloadKind::parse(&format!("synthetic:ppti=20,nwpe=2,footprint_mib=1,insns={}", p.display())).unwrap();
    let s = simulate(&cfg, &w, 2 * N, 1).unwrap();
    // It stops with the event in which the stream ran out (a store and
    // its gap of about 50 instructions at this PPTI).
    assert!((N..N + 100).contains(&s.roi.core.instructions), "{} instructions", s.roi.core.instructions);
    assert!(s.workload_notes.iter().any(|n| n.contains("insns=") && n.contains("stopped")), "{:?}", s.workload_notes);
    // Without a stream the profile cannot run on the ooo core, and says how.
    let e = simulate(&cfg, &WorkloadKind::parse("synthetic:ppti=20").unwrap(), 1000, 1).unwrap_err();
    assert!(e.contains("core.model") && e.contains("insns="), "{e}");
}

/// The configuration bounds an `ooo` reorder buffer by how far back the
/// instruction stream records a producer (config cannot import the trace
/// format, so the two limits are checked against each other here).
#[test]
fn the_rob_reaches_as_far_back_as_the_stream_records() {
    use spmsim::trace::insn::MAX_DISTANCE;
    let with_rob = |n: u32| load_preset("cobcm", &["core.model=\"ooo\"".into(), format!("core.rob_entries={n}")]);
    assert!(with_rob(MAX_DISTANCE).is_ok());
    let e = with_rob(MAX_DISTANCE + 1).unwrap_err().to_string();
    assert!(e.contains("core.rob_entries"), "{e}");
}

#[test]
fn a_trace_with_its_instruction_stream_runs_the_ooo_core_unless_the_user_names_another() {
    let w = |p: &std::path::Path| WorkloadKind::parse(&format!("trace:{}", p.display())).unwrap();
    let cfg = |o: &[&str]| load_preset("bbb", &o.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let p = trace("auto-chain", chain(FuClass::IntAlu));
    let s = simulate(&cfg(&[]), &w(&p), N, 1).unwrap();
    assert!(s.roi.core.ooo.is_some(), "unset: the ooo core ran it");
    assert!((s.roi.core.ipc - 1.0).abs() < 0.02, "the chain bounds it: ipc {}", s.roi.core.ipc);
    assert!(s.workload_notes.iter().any(|n| n.contains("the ooo core ran it") && n.contains("auto")), "{:?}", s.workload_notes);
    let s = simulate(&cfg(&["core.model=\"interval\""]), &w(&p), N, 1).unwrap();
    assert!(s.roi.core.ooo.is_none(), "core.model = interval is honoured");
    assert!(s.roi.core.ipc > 1.5, "the interval core ignores the chain: ipc {}", s.roi.core.ipc);
    assert!(!s.workload_notes.iter().any(|n| n.contains("core ran it")), "{:?}", s.workload_notes);
    // Without its stream the trace gets the interval core, and the notes say why.
    std::fs::remove_file(path_for(&p)).unwrap();
    let s = simulate(&cfg(&[]), &w(&p), N, 1).unwrap();
    assert!(s.roi.core.ooo.is_none());
    assert!(
        s.workload_notes.iter().any(|n| n.contains("the interval core ran it") && n.contains("no instruction stream")),
        "{:?}",
        s.workload_notes
    );
    // A generated workload runs the interval core, as before, with no note.
    let s = simulate(&cfg(&[]), &WorkloadKind::parse("array-swap").unwrap(), 2000, 1).unwrap();
    assert!(s.roi.core.ooo.is_none() && !s.workload_notes.iter().any(|n| n.contains("core ran it")), "{:?}", s.workload_notes);
}

/// A trace of `N` memory instructions and its stream: instruction `k`
/// is `insn(k)` with the accesses `accesses(k)` (a load and/or a store
/// of 8 bytes at an address; a store after a load is of the same
/// instruction).
fn memory_program(name: &str, accesses: impl Fn(u64) -> (Option<u64>, Option<u64>), insn: impl Fn(u64) -> Insn) -> PathBuf {
    use spmsim::workload::Op;
    let dir = std::env::temp_dir().join(format!("spmsim-ooo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.trace"));
    let mut w = NativeWriter::create(&p, &TraceHeader::new("test", AddressSpace::Virtual, false)).unwrap();
    for k in 0..N {
        let (load, store) = accesses(k);
        if let Some(a) = load {
            w.write(&TraceRecord::mem(Op::Load, a, 8)).unwrap();
        }
        if let Some(a) = store {
            w.write(&TraceRecord { same_instruction: load.is_some(), ..TraceRecord::mem(Op::Store, a, 8) }).unwrap();
        }
    }
    w.finish().unwrap();
    let mut s = InsnWriter::create(&path_for(&p)).unwrap();
    for k in 0..N {
        s.write(&insn(k)).unwrap();
    }
    s.finish(0, &spmsim::util::digest::file_digest(&p).unwrap()).unwrap();
    p
}

/// Every 8th instruction loads a line of its own (a miss to memory); the
/// others update one of 8 counters in one line (`add %rax,(counter)`: a
/// load and a store, three micro-ops) when `rmw`, else load it (one).
fn counters(name: &str, rmw: bool) -> PathBuf {
    let miss = |k: u64| k.is_multiple_of(8).then_some(0x100_0000 + k * 64);
    let counter = |k: u64| 0x1000 + (k % 8) * 8;
    memory_program(
        name,
        |k| (Some(miss(k).unwrap_or(counter(k))), (rmw && miss(k).is_none()).then(|| counter(k))),
        |k| Insn { class: if rmw && !k.is_multiple_of(8) { FuClass::Store } else { FuClass::Load }, ..Insn::default() },
    )
}

#[test]
fn read_modify_writes_fill_the_rob_with_fewer_instructions_than_plain_loads() {
    let (rmw, loads) = (counters("rmw-counters", true), counters("load-counters", false));
    let on = |p: &std::path::Path, rob: u32, micro_ops: &str| {
        run(p, &[&format!("core.rob_entries={rob}"), "core.ooo.front_end=constant", &format!("core.ooo.micro_ops=\"{micro_ops}\"")])
    };
    // A ROB of 24 holds 24 loads, but about 9 read-modify-writes cracked
    // into their micro-ops (2.75 an instruction): fewer misses overlap.
    let (cracked, whole, plain) = (on(&rmw, 24, "x86"), on(&rmw, 24, "one-per-instruction"), on(&loads, 24, "x86"));
    let (c, w, p) = (&cracked.roi.core, &whole.roi.core, &plain.roi.core);
    assert_eq!((c.instructions, w.instructions, p.instructions), (N, N, N), "instructions stay per instruction");
    assert_eq!(c.ooo.unwrap().micro_ops, Some(N / 8 + 3 * (N - N / 8)));
    assert_eq!(w.ooo.unwrap().micro_ops, None, "not counted uncracked");
    assert_eq!(p.ooo.unwrap().micro_ops, Some(N));
    assert!(c.ipc < 0.8 * p.ipc, "read-modify-writes: ipc {}, plain loads {}", c.ipc, p.ipc);
    assert!(c.ipc < 0.8 * w.ipc, "cracked: ipc {}, one micro-op an instruction {}", c.ipc, w.ipc);
    assert!(c.ooo.unwrap().rob_full_cycles > p.ooo.unwrap().rob_full_cycles);
    // Uncracked, the core is the one before micro-ops: these are the
    // counts spmsim at 87722e6 (no `core.ooo.micro_ops`) gave this run.
    let wo = w.ooo.unwrap();
    assert_eq!((w.cycles, wo.rob_full_cycles, wo.iq_full_cycles, wo.refill_cycles), (286_310, 283_442, 0, 0));
    // The ROB holds micro-ops: 66 entries hold as many of these
    // read-modify-writes as 24 hold loads, and overlap as many misses.
    let wide = on(&rmw, 66, "x86").roi.core.ipc;
    assert!((wide - p.ipc).abs() < 0.02 * p.ipc, "read-modify-writes in 66 entries: ipc {wide}, loads in 24: {}", p.ipc);
    // One micro-op an instruction, cracked or not: the same run.
    let mut x = serde_json::to_value(&plain.roi).unwrap();
    x["core"]["ooo"].as_object_mut().unwrap().remove("micro_ops");
    assert_eq!(x, serde_json::to_value(&on(&loads, 24, "one-per-instruction").roi).unwrap());
}
