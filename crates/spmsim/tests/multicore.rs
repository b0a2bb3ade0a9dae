//! The multi-core timing model on hand-built event streams:
//! per-core counts that add up, determinism, SecPB coherence between
//! cores, and the ticket lock of shared data.

use spmsim::config::load_preset;
use spmsim::timing::{RunStats, SimError, TimingSim};
use spmsim::workload::{Event, Op};
use std::sync::atomic::AtomicBool;

fn cfg(preset: &str, cores: u32) -> spmsim::config::SimConfig {
    load_preset(preset, &["memory.capacity_bytes=268435456".into(), format!("core.count={cores}")]).unwrap()
}

/// Thread `t`: `n` stores, each to its own block of the thread's region
/// (or of one region all threads share), 20 instructions apart.
fn stores(t: u8, n: u64, shared: bool) -> Vec<Event> {
    let base = if shared { 1 << 20 } else { (1 + t as u64) << 24 };
    (0..n).map(|i| Event::store(base + (i % 64) * 64, 8, i, false).after(20).on_thread(t)).collect()
}

fn run(preset: &str, streams: Vec<Vec<Event>>) -> Result<RunStats, SimError> {
    let mut sim = TimingSim::new(&cfg(preset, streams.len() as u32), 7).unwrap();
    let mut its: Vec<_> = streams.into_iter().map(|s| s.into_iter()).collect();
    sim.run_threads(&mut its, &AtomicBool::new(false))?;
    Ok(sim.finish())
}

#[test]
fn per_core_counts_add_up_to_the_total() {
    let s = run("cobcm", vec![stores(0, 3000, false), stores(1, 1000, false)]).unwrap();
    let r = &s.roi;
    assert_eq!(r.cores.len(), 2);
    assert_eq!(r.cores.iter().map(|c| c.instructions).sum::<u64>(), r.core.instructions);
    assert_eq!(r.cores.iter().map(|c| c.stores).sum::<u64>(), r.core.stores);
    assert_eq!((r.cores[0].stores, r.cores[1].stores), (3000, 1000));
    // The machine's cycles are its slowest core's.
    assert_eq!(r.core.cycles, r.cores.iter().map(|c| c.cycles).max().unwrap());
    assert!(
        r.cores[0].cycles > r.cores[1].cycles,
        "three times the work takes longer: {:?}",
        r.cores.iter().map(|c| c.cycles).collect::<Vec<_>>()
    );
    let m = r.multicore.as_ref().expect("multi-core stats");
    assert_eq!(m.cores, 2);
    assert_eq!(m.coherence.migrations, 0, "partitioned data moves no entry");
}

#[test]
fn a_run_depends_only_on_its_inputs() {
    let a = serde_json::to_string(&run("cm", vec![stores(0, 500, true), stores(1, 500, true), stores(2, 500, false)]).unwrap()).unwrap();
    let b = serde_json::to_string(&run("cm", vec![stores(0, 500, true), stores(1, 500, true), stores(2, 500, false)]).unwrap()).unwrap();
    assert_eq!(a, b);
}

#[test]
fn writes_to_blocks_in_another_cores_secpb_migrate_the_entry() {
    // Both cores write the same 64 blocks: each write to a block the other
    // core's SecPB holds moves the entry (SecPB IV-C c).
    let s = run("cm", vec![stores(0, 2000, true), stores(1, 2000, true)]).unwrap();
    let m = s.roi.multicore.unwrap();
    assert!(m.coherence.migrations > 100, "{:?}", m.coherence);
    let moved_in: u64 = s.roi.cores.iter().map(|c| c.persist_path.buffer.as_ref().map_or(0, |b| b.migrated_in)).sum();
    assert_eq!(moved_in, m.coherence.migrations);
    // A read of a block another core's SecPB holds flushes the entry
    // (the reads are spread over the time the writer runs).
    let reader: Vec<Event> = (0..64).map(|i| Event::load((1 << 20) + i * 64, 8).after(4000).on_thread(1)).collect();
    let s = run("cm", vec![stores(0, 64, true), reader]).unwrap();
    assert!(s.roi.multicore.unwrap().coherence.flushes > 0);
}

#[test]
fn transactions_are_counted_and_take_no_lock_without_shared_data() {
    // Without a shared-data workload there is no lock: two transactions
    // overlap and no core waits.
    let tx = |t: u8, len: u64| {
        let mut v = vec![Event::marker(Op::TxBegin).on_thread(t)];
        v.extend(stores(t, len, false));
        v.push(Event::marker(Op::TxCommit).on_thread(t));
        v
    };
    let s = run("cobcm", vec![tx(0, 500), tx(1, 500)]).unwrap();
    let m = s.roi.multicore.unwrap();
    assert_eq!((m.transactions, m.lock_wait_cycles), (2, None));
}

#[test]
fn streams_must_match_the_cores() {
    let mut sim = TimingSim::new(&cfg("cobcm", 2), 7).unwrap();
    let mut its = vec![stores(0, 10, false).into_iter()];
    let e = sim.run_threads(&mut its, &AtomicBool::new(false)).unwrap_err();
    assert!(matches!(e, SimError::Invalid(_)), "{e}");
    // An event of a thread beyond the cores is bad input, not a panic.
    let mut sim = TimingSim::new(&cfg("cobcm", 2), 7).unwrap();
    let mut its = vec![stores(0, 10, false).into_iter(), stores(5, 10, false).into_iter()];
    let e = sim.run_threads(&mut its, &AtomicBool::new(false)).unwrap_err();
    assert!(matches!(e, SimError::Invalid(_)) && e.to_string().contains("thread 5"), "{e}");
}

fn simulate(preset: &str, workload: &str, instructions: u64) -> RunStats {
    let cfg = load_preset(preset, &["memory.capacity_bytes=1073741824".into()]).unwrap();
    let w = spmsim::workload::WorkloadKind::parse(workload).unwrap();
    spmsim::timing::simulate(&cfg, &w, instructions, 3).unwrap()
}

#[test]
fn shared_data_takes_turns_on_the_ticket_lock_and_partitioned_data_does_not() {
    let shared = simulate("cobcm", "hash:threads=2,data=shared,size_mib=16", 200_000);
    let m = shared.roi.multicore.as_ref().unwrap();
    assert!(m.lock_wait_cycles.unwrap() > 0, "the threads' transactions wait for each other: {m:?}");
    let per: Vec<u64> = shared.roi.cores.iter().map(|c| c.transactions).collect();
    // Tickets alternate, so neither thread gets far ahead while both run.
    assert!(per[0].abs_diff(per[1]) <= per[0].max(per[1]) / 4 + 1, "{per:?}");
    let parted = simulate("cobcm", "hash:threads=2,size_mib=16", 200_000);
    assert_eq!(parted.roi.multicore.as_ref().unwrap().lock_wait_cycles, None);
    // Each core ran its own instruction limit.
    assert!(
        parted.roi.cores.iter().all(|c| c.instructions >= 200_000),
        "{:?}",
        parted.roi.cores.iter().map(|c| c.instructions).collect::<Vec<_>>()
    );
}

#[test]
fn one_thread_is_the_single_core_run() {
    let a = serde_json::to_string(&simulate("cm", "btree:size_mib=16", 100_000)).unwrap();
    let b = serde_json::to_string(&simulate("cm", "btree:size_mib=16,threads=1", 100_000)).unwrap();
    assert_eq!(a, b);
    assert!(!a.contains("multicore"));
}

#[test]
fn strict_persistency_scales_until_a_shared_unit_saturates() {
    // secure-wt: each core waits for its own stores' whole tuples, so two
    // cores far from the PCM's write bandwidth double the throughput.
    // (Ordered by dispatch clocks alone, a core's store path, a store
    // buffer ahead, booked the shared units into the future and two cores
    // gave the throughput of one.)
    let tps = |n: usize| {
        let cfg = load_preset("secure-wt", &["memory.capacity_bytes=1073741824".into(), "core.multicore_stats=true".into()]).unwrap();
        let w = spmsim::workload::WorkloadKind::parse(&format!("tpcc:warehouses=1,threads={n}")).unwrap();
        let s = spmsim::timing::simulate(&cfg, &w, 150_000, 3).unwrap();
        let m = s.roi.multicore.unwrap();
        assert_eq!(m.cores, n);
        m.transactions_per_second
    };
    let (one, two) = (tps(1), tps(2));
    assert!(two > 1.8 * one, "1 core {one:.0} tx/s, 2 cores {two:.0} tx/s");
}

/// Each core's region of interest is its own instructions after its own
/// warm-up, however much longer one core's warm-up takes than another's;
/// the machine's is the union of the cores', so its cycles cover each
/// core's and the shared components' counters (begun with the first
/// core's region) cover the same span. With the shared counters begun at
/// the last core's region, a fast core's region outlasted the machine's.
#[test]
fn the_machines_region_of_interest_covers_every_cores() {
    // Core 0 loads from 64 blocks (fast once they are cached); core 1
    // persists a store every 20 instructions under strict persistence.
    let fast: Vec<Event> = (0..4000u64).map(|i| Event::load((1 << 24) + (i % 64) * 64, 8).after(20).on_thread(0)).collect();
    let slow = stores(1, 4000, false);
    let warm = 40_000;
    let mut sim = TimingSim::new(&cfg("sp", 2), 7).unwrap().with_warmup(warm);
    let mut its = vec![fast.clone().into_iter(), slow.clone().into_iter()];
    sim.run_threads(&mut its, &AtomicBool::new(false)).unwrap();
    let s = sim.finish();
    let (r, w) = (&s.roi, s.warmup.expect("a warm-up"));
    let cycles: Vec<u64> = r.cores.iter().map(|c| c.cycles).collect();
    assert!(cycles[1] > 2 * cycles[0], "the persisting core is the slow one: {cycles:?}");
    assert!(cycles.iter().all(|&c| c <= r.core.cycles), "a core's region is within the machine's {}: {cycles:?}", r.core.cycles);
    // The model does not know it warms up: the warm-up and the region of
    // interest split the whole run's cycles and instructions.
    let whole = run("sp", vec![fast, slow]).unwrap();
    assert_eq!(w.cycles + r.core.cycles, whole.roi.core.cycles);
    assert_eq!(w.instructions + r.core.instructions, whole.roi.core.instructions);
    // The slow core's region ends the run; the fast core's began first,
    // with the machine's, so the machine's region is longer than the slow
    // core's by the time the slow core was still warming up.
    assert!(r.core.cycles > cycles[1], "{} against {cycles:?}", r.core.cycles);
    // Every core ran the instructions after its own warm-up.
    let per: Vec<u64> = r.cores.iter().map(|c| c.instructions).collect();
    let total: Vec<u64> = whole.roi.cores.iter().map(|c| c.instructions).collect();
    for c in 0..2 {
        assert!(total[c] - per[c] >= warm && total[c] - per[c] <= warm + 21, "core {c}: {per:?} of {total:?}");
    }
    // The shared components were counted over the machine's region: the
    // engine's hash unit was busy no longer than it lasted.
    assert!(r.engine.hash.busy_cycles <= r.core.cycles, "{} busy in {} cycles", r.engine.hash.busy_cycles, r.core.cycles);
}

/// A mix whose parts warm up as each does alone (a recorded program for
/// its cache warm-up, a generator not at all): the core with no warm-up
/// begins the machine's region at cycle 0, so the shared counts cover the
/// whole run, the other core's warm-up included, and say how many of the
/// warm-up's instructions fall inside the region.
#[test]
fn a_core_without_a_warmup_begins_the_machines_region_at_cycle_0() {
    let fast: Vec<Event> = (0..4000u64).map(|i| Event::load((1 << 24) + (i % 64) * 64, 8).after(20).on_thread(0)).collect();
    let slow = stores(1, 4000, false);
    let warm = 40_000;
    let mut sim = TimingSim::new(&cfg("sp", 2), 7).unwrap().with_warmups(&[0, warm]);
    let mut its = vec![fast.clone().into_iter(), slow.clone().into_iter()];
    sim.run_threads(&mut its, &AtomicBool::new(false)).unwrap();
    let s = sim.finish();
    let (r, w) = (&s.roi, s.warmup.expect("core 1 warmed up"));
    assert_eq!(w.cycles, 0, "the machine's region began with core 0's");
    assert!(w.instructions >= warm && w.instructions <= warm + 21, "{w:?}");
    assert_eq!(w.instructions_in_region, w.instructions, "all of core 1's warm-up ran inside the machine's region");
    let whole = run("sp", vec![fast, slow]).unwrap();
    // The machine's region is the whole run: its cycles and the shared
    // components' counts are the run's without a warm-up.
    assert_eq!(r.core.cycles, whole.roi.core.cycles);
    assert_eq!(serde_json::to_string(&r.memory).unwrap(), serde_json::to_string(&whole.roi.memory).unwrap());
    // Core 0's region is all of it; core 1's is what followed its warm-up.
    let (per, total): (Vec<u64>, Vec<u64>) = r.cores.iter().zip(&whole.roi.cores).map(|(a, b)| (a.instructions, b.instructions)).unzip();
    assert_eq!(per[0], total[0]);
    assert_eq!(per[1], total[1] - w.instructions);
    // The same through a mix's own `warmup=`: each stream and core takes
    // its part's warm-up, the others the run's.
    let mix = spmsim::workload::WorkloadKind::parse("mix:a=random-writes,warmup=0,b=seq-writes").unwrap();
    let s = spmsim::timing::simulate_after_warmup(&cfg("sp", 2), &mix, 3_000, 10_000, 3, &AtomicBool::new(false)).unwrap();
    let w = s.warmup.expect("core 1 warmed up");
    assert_eq!((w.cycles, w.instructions_in_region), (0, w.instructions));
    assert!((3_000..3_100).contains(&w.instructions), "only core 1 warmed up: {w:?}");
    assert_eq!(s.roi.cores.iter().map(|c| c.instructions).collect::<Vec<_>>(), vec![10_000, 10_000]);
}

/// ChampSim's rule for a multi-core run: a core whose region of interest
/// is over keeps its counts and runs on (its trace started again at its
/// end) until the last core's is over, so no core's region is timed
/// against a machine the others left quiet. A short trace of stores
/// persisted under strict persistence runs beside a slower program.
#[test]
fn a_core_that_finished_runs_on_until_the_last_does() {
    use spmsim::timing::simulate_after_warmup;
    use spmsim::workload::WorkloadKind;
    let dir = std::env::temp_dir().join(format!("spmsim-run-on-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (short, long) = (dir.join("short.trace"), dir.join("long.trace"));
    WorkloadKind::RandomWrites.write_trace(1, 30_000, &short).unwrap();
    WorkloadKind::SeqWrites.write_trace(2, 400_000, &long).unwrap();
    let w = WorkloadKind::parse(&format!("trace:{},{}", short.display(), long.display())).unwrap();
    let cfg = load_preset("sp", &["memory.capacity_bytes=268435456".into()]).unwrap();
    let (warm, n) = (5_000, 20_000);
    let go = || simulate_after_warmup(&cfg, &w, warm, n, 3, &AtomicBool::new(false)).unwrap();
    let s = go();
    let r = &s.roi;
    // Each core's counts are its region's: exactly the instructions asked
    // for, however long it ran on.
    assert_eq!(r.cores.iter().map(|c| c.instructions).collect::<Vec<_>>(), vec![n, n]);
    assert_eq!(r.core.instructions, 2 * n);
    let cycles: Vec<u64> = r.cores.iter().map(|c| c.cycles).collect();
    assert!(cycles.iter().all(|&c| c <= r.core.cycles), "a core's region is within the machine's {}: {cycles:?}", r.core.cycles);
    // The short trace's core ran on past its end: 25,000 of its 30,000
    // instructions before its region ended, the rest of the slow core's
    // region after it.
    let ran_on = s
        .workload_notes
        .iter()
        .find(|m| m.starts_with("ran on after its region of interest"))
        .unwrap_or_else(|| panic!("core 0 ran on: {:?} {:?}", s.workload_notes, r.cores));
    let restarts: u64 = ran_on.rsplit("started again ").next().unwrap().split(' ').next().unwrap().parse().unwrap();
    assert!(restarts >= 1, "{ran_on}");
    assert!(!s.workload_notes.iter().any(|m| m.starts_with("thread 1: ran on")), "the last core ends the run: {:?}", s.workload_notes);
    // Machine-wide work over the machine's region, cores running on
    // included: no unit busy longer than the region lasted.
    assert!(r.engine.hash.busy_cycles <= r.core.cycles, "{} busy in {} cycles", r.engine.hash.busy_cycles, r.core.cycles);
    let e = &r.multicore.as_ref().expect("multi-core stats").security_engine;
    assert!(e.busy_cycles <= r.core.cycles && e.utilisation <= 1.0, "{e:?} in {} cycles", r.core.cycles);
    // Running on is as deterministic as the rest.
    assert_eq!(serde_json::to_string(&s).unwrap(), serde_json::to_string(&go()).unwrap());
    std::fs::remove_dir_all(&dir).ok();
}
