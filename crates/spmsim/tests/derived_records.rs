//! A run through a program's derived records (`trace/records/`) is the
//! run through its trace and instruction stream, statistic for
//! statistic: a recorded program and a ChampSim trace, several schemes,
//! policies, seeds and warm-ups; the records are derived by the first run
//! and read as they are by the next.
//!
//! One test, because it sets the process's environment (`SPMSIM_RECORDS`,
//! and `SPMSIM_CACHE` for the ChampSim trace's derived stream).

use spmsim::config::load_preset;
use spmsim::timing::simulate_after_warmup;
use spmsim::trace::champsim_insn::{REG_FLAGS, REG_INSTRUCTION_POINTER};
use spmsim::trace::event::Op;
use spmsim::trace::insn::{path_for, Insn, InsnWriter};
use spmsim::trace::vex::{BranchKind, FuClass};
use spmsim::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};
use spmsim::workload::WorkloadKind;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

const STACK: (u64, u64) = (0x7ffe_0000, 0x7fff_0000);

/// A recorded program: a virtual trace of loads and stores (wide ones,
/// block-straddling ones, the stack's, a few with values) and its
/// instruction stream with loops of branches.
fn recorded(dir: &Path) -> PathBuf {
    let p = dir.join("prog.trace");
    let mut h = TraceHeader::new("test", AddressSpace::Virtual, false);
    h.stack_range = Some(STACK);
    let mut w = NativeWriter::create(&p, &h).unwrap();
    let mut instructions = 0;
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for k in 0..30_000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let addr = match x % 4 {
            0 => STACK.0 + (x >> 8) % 0x1_0000,
            1 => 0x60_0000 + (x >> 8) % 0x4000,
            _ => 0x1000_0000 + (x >> 8) % (1 << 24),
        };
        let r = match (x >> 40) % 5 {
            0 | 1 => TraceRecord::mem(Op::Load, addr, 8),
            2 => TraceRecord::mem(Op::Load, addr | 56, 16),
            3 => TraceRecord { value: (k % 3 == 0).then_some(k), ..TraceRecord::mem(Op::Store, addr & !7, 8) },
            _ => TraceRecord::mem(Op::Store, addr, 24),
        }
        .after(((x >> 20) % 6) as u32);
        instructions += r.instructions();
        w.write(&r).unwrap();
    }
    w.write(&TraceRecord::compute(7)).unwrap();
    instructions += 7;
    w.finish().unwrap();
    let mut s = InsnWriter::create(&path_for(&p)).unwrap();
    for k in 0..instructions {
        let mut i = Insn { class: [FuClass::IntAlu, FuClass::IntMult, FuClass::FpAdd][(k % 3) as usize], ..Insn::default() };
        i.nsrc = (k % 3) as u8;
        i.srcs = [1, 3, 7];
        if k % 11 == 10 {
            i.branch = BranchKind::Conditional;
            i.taken = k % 4 != 0;
            i.pc = 0x40_0000 + (k % 97) * 40;
        }
        s.write(&i).unwrap();
    }
    s.finish(0, &spmsim::util::digest::file_digest(&p).unwrap()).unwrap();
    p
}

/// A ChampSim `input_instr` trace with register fields and branches.
fn champsim(dir: &Path) -> PathBuf {
    let p = dir.join("prog.champsim");
    let mut bytes = Vec::new();
    for k in 0..20_000u64 {
        let mut r = [0u8; 64];
        r[..8].copy_from_slice(&(0x40_1000 + 4 * (k % 500)).to_le_bytes());
        let branch = k % 9 == 8;
        if branch {
            r[8] = 1;
            r[9] = (k % 3 != 0) as u8;
            r[10] = REG_INSTRUCTION_POINTER;
            r[12] = REG_INSTRUCTION_POINTER;
            r[13] = REG_FLAGS;
        } else {
            r[10] = (k % 13) as u8 + 1;
            r[12] = ((k + 5) % 13) as u8 + 1;
        }
        match k % 5 {
            1 => r[32..40].copy_from_slice(&(0x7000_0000 + (k * 72) % (1 << 20)).to_le_bytes()),
            3 => r[16..24].copy_from_slice(&(0x7100_0000 + (k * 4104) % (1 << 22)).to_le_bytes()),
            _ => {}
        }
        bytes.extend_from_slice(&r);
    }
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The stats JSON of one run.
fn run(scheme: &str, workload: &str, warmup: u64, instructions: u64, seed: u64) -> String {
    let cfg = load_preset(scheme, &["core.model=ooo".to_string()]).unwrap();
    let w = WorkloadKind::parse(workload).unwrap();
    let s = simulate_after_warmup(&cfg, &w, warmup, instructions, seed, &AtomicBool::new(false)).unwrap();
    serde_json::to_string(&s).unwrap()
}

#[test]
fn runs_through_the_derived_records_are_the_runs_through_the_trace_and_its_stream() {
    let dir = std::env::temp_dir().join(format!("spmsim-derived-records-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::env::set_var("SPMSIM_CACHE", dir.join("cache"));
    let prog = recorded(&dir);
    let cs = champsim(&dir);
    let cases = [
        ("bbb", format!("trace:{}", prog.display()), 0, 20_000, 1),
        ("cobcm", format!("trace:{}#persistent=heap", prog.display()), 5_000, 30_000, 7),
        ("sp", format!("trace:{}", prog.display()), 0, 1_000_000, 3),
        ("bbb", format!("trace:{}#format=champsim", cs.display()), 0, 15_000, 1),
        ("cobcm", format!("trace:{}#format=champsim", cs.display()), 2_000, 1_000_000, 2),
    ];
    for (scheme, workload, warmup, n, seed) in &cases {
        std::env::remove_var("SPMSIM_RECORDS");
        let old = run(scheme, workload, *warmup, *n, *seed);
        std::env::set_var("SPMSIM_RECORDS", "on");
        let derived = run(scheme, workload, *warmup, *n, *seed);
        assert_eq!(old, derived, "{scheme} {workload}: the run that derived the records");
        let again = run(scheme, workload, *warmup, *n, *seed);
        assert_eq!(old, again, "{scheme} {workload}: a run from the records as they are");
    }
    assert!(dir.join("prog.trace.rec").exists(), "the recorded program's records beside it");
    let cached: Vec<_> = std::fs::read_dir(dir.join("cache").join("champsim-insn"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "rec"))
        .collect();
    assert_eq!(cached.len(), 1, "the ChampSim trace's records beside its derived stream: {cached:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
