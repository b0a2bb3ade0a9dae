use super::*;
use crate::trace::event::Event;
use crate::trace::events::VolatileMemory;
use crate::trace::insn::{Insn, InsnReader, InsnWriter};
use crate::trace::vex::{BranchKind, FuClass};
use crate::trace::{AddressSpace, NativeWriter, RecordEvents, TraceHeader, TraceRecord};

const STACK: (u64, u64) = (0x7fff_0000, 0x7fff_8000);

/// A fresh folder of this test's own.
fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spmsim-records-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A virtual trace of `n` accesses (wide and block-straddling ones among
/// them, some on the stack, a value recorded for some stores) and its
/// instruction stream (a branch every seventh instruction); `salt`
/// changes the addresses. Returns the trace's and the stream's paths.
fn fixture(d: &Path, n: u64, salt: u64) -> (PathBuf, PathBuf) {
    let trace = d.join("t.trace");
    let mut h = TraceHeader::new("test", AddressSpace::Virtual, true);
    h.stack_range = Some(STACK);
    h.persistent_ranges = vec![(0x40_0000, 0x40_2000)];
    let mut w = NativeWriter::create(&trace, &h).unwrap();
    let mut instructions = 0;
    for k in 0..n {
        let addr = match k % 5 {
            0 => STACK.0 + (k * 24 + salt) % 0x8000,
            1 => 0x40_0000 + (k * 40 + salt) % 0x3000,
            _ => 0x1000_0000 + (k * 4100 + salt) % (1 << 22),
        };
        let mut r = match k % 4 {
            0 => TraceRecord::mem(Op::Load, addr, 8),
            1 => TraceRecord::mem(Op::Store, addr, if k % 3 == 0 { 32 } else { 8 }),
            2 => TraceRecord::mem(Op::Load, addr | 60, 16),
            _ => TraceRecord::mem(Op::Store, addr, 4),
        }
        .after((k % 9) as u32);
        if k % 8 == 3 {
            r.value = Some(k * 77);
        }
        if k % 50 == 49 {
            w.write(&TraceRecord::marker(Op::Fence).after(2)).unwrap();
            instructions += 3;
        }
        instructions += r.instructions();
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
    let stream = crate::trace::insn::path_for(&trace);
    let mut iw = InsnWriter::create(&stream).unwrap();
    let mut pc = 0x40_1000;
    for k in 0..instructions {
        let mut i = Insn { class: FuClass::ALL[(k % 3) as usize], nsrc: (k % 3) as u8, srcs: [1, 2, 3], ..Insn::default() };
        if k % 7 == 6 {
            pc += 64 + k % 13;
            i = Insn { branch: BranchKind::Conditional, taken: k % 2 == 0, pc, ..i };
        }
        iw.write(&i).unwrap();
    }
    iw.finish(0, &file_digest(&trace).unwrap()).unwrap();
    (trace, stream)
}

fn sources<'a>(trace: &'a Path, stream: &'a Path) -> Sources<'a> {
    Sources { trace, format: Format::Native, stream }
}

/// The events of the trace itself and of its records, both as a run of
/// `seed` under `persistent=heap` takes them.
fn both_events(trace: &Path, rec: &Records, seed: u64) -> (Vec<Event>, Vec<Event>) {
    let reader = crate::trace::open(trace, None).unwrap();
    let header = reader.header().clone();
    let mut old = RecordEvents::new(trace, reader, seed, u64::MAX).with_volatile(VolatileMemory::Inside(header.stacks()));
    let mut a = Vec::new();
    while old.next_op(&mut a).unwrap() {}
    let mut new = EventRecords::open(rec, header, Volatility::InsideStack, seed).unwrap();
    let mut b = Vec::new();
    while new.next_block(&mut b).unwrap() {}
    assert_eq!(old.derived_values, new.derived_values());
    (a, b)
}

fn placed(mut r: impl FnMut(&mut Vec<Insn>) -> Result<(), crate::trace::TraceError>) -> Vec<Insn> {
    let (mut all, mut batch) = (Vec::new(), Vec::new());
    loop {
        batch.clear();
        r(&mut batch).unwrap();
        if batch.is_empty() {
            return all;
        }
        all.append(&mut batch);
    }
}

#[test]
fn the_records_hold_the_trace_s_events_and_the_stream_s_placed_instructions() {
    let d = dir("same");
    let (trace, stream) = fixture(&d, 6000, 0);
    let rec = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    assert!(rec.head.events > BLOCK_RECORDS as u64, "several blocks");
    for seed in [1, 9] {
        let (a, b) = both_events(&trace, &rec, seed);
        assert_eq!(a, b, "seed {seed}");
        assert!(a.iter().any(|e| e.volatile) && a.iter().any(|e| !e.volatile && e.op == Op::Store));
        assert!(a.iter().any(|e| e.piece));
    }
    let mut s = InsnReader::open(&stream).unwrap();
    let want = placed(|b| s.next_placed_batch(b, PLACED_BATCH));
    let mut r = InsnRecords::open(&rec).unwrap();
    let got = placed(|b| r.next_placed_batch(b, PLACED_BATCH));
    assert_eq!(want.len() as u64, rec.head.insns);
    assert_eq!(want, got);
    let mut again = r.reopen().unwrap();
    assert_eq!(placed(|b| again.next_placed_batch(b, 100)), want);
}

#[test]
fn a_record_s_pieces_stay_in_one_block_and_one_op() {
    let d = dir("ops");
    let (trace, stream) = fixture(&d, 3000, 5);
    let rec = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    let header = crate::trace::open(&trace, None).unwrap().header().clone();
    let mut old = RecordEvents::new(&trace, crate::trace::open(&trace, None).unwrap(), 3, u64::MAX);
    let mut new = EventRecords::open(&rec, header.clone(), Volatility::Never, 3).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    loop {
        a.clear();
        b.clear();
        let more = old.next_op(&mut a).unwrap();
        assert_eq!(more, new.next_op(&mut b).unwrap());
        assert_eq!(a, b);
        if !more {
            break;
        }
    }
    // Each block begins with a record's first event.
    let mut blocks = EventRecords::open(&rec, header, Volatility::Never, 3).unwrap();
    let mut v = Vec::new();
    let mut n = 0;
    while blocks.next_block(&mut v).unwrap() {
        assert!(!v[0].piece, "block {n} begins inside an access");
        n += 1;
        v.clear();
    }
    assert!(n > 1);
}

#[test]
fn a_file_made_once_is_used_as_it_is() {
    let d = dir("reuse");
    let (trace, stream) = fixture(&d, 500, 0);
    let first = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    let made = std::fs::metadata(&first.path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    let second = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    assert_eq!(first.head, second.head);
    assert_eq!(std::fs::metadata(&second.path).unwrap().modified().unwrap(), made, "not derived again");
    assert_eq!(first.path, d.join("t.trace.rec"));
}

/// Damage the file of records as `damage` does: it is found unusable for
/// the reason `why` names, and a new open derives it again, whole.
fn rebuilt_after(name: &str, damage: impl Fn(&mut Vec<u8>), why: &str) {
    let d = dir(name);
    let (trace, stream) = fixture(&d, 800, 0);
    let good = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    let bytes = std::fs::read(&good.path).unwrap();
    let mut bad = bytes.clone();
    damage(&mut bad);
    std::fs::write(&good.path, &bad).unwrap();
    let digests = (file_digest(&trace).unwrap(), file_digest(&stream).unwrap());
    match Records::check(&good.path, sources(&trace, &stream), &digests) {
        Err(Unusable::Bad(m)) => assert!(m.contains(why), "{name}: {m}"),
        other => panic!("{name}: a damaged file passed: {other:?}"),
    }
    let again = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    assert_eq!(again.head, good.head);
    assert_eq!(std::fs::read(&again.path).unwrap(), bytes, "{name}: derived again, the same bytes");
}

#[test]
fn a_truncated_file_is_derived_again() {
    rebuilt_after("truncated", |b| b.truncate(b.len() - 100), "cut short");
    rebuilt_after("headless", |b| b.truncate(HEAD - 1), "shorter than its head");
}

#[test]
fn a_file_of_another_magic_or_version_is_derived_again() {
    rebuilt_after("magic", |b| b[..8].copy_from_slice(b"SPMSIMXX"), "no SPMSIMRC magic");
    rebuilt_after("version", |b| b[8] = VERSION as u8 + 1, "format version");
}

#[test]
fn a_file_whose_head_fails_its_check_is_derived_again() {
    // The count of events, changed in the head alone.
    rebuilt_after("head", |b| b[96] ^= 1, "fails its check");
}

#[test]
fn a_stale_file_is_derived_again() {
    let d = dir("stale");
    let (trace, stream) = fixture(&d, 700, 0);
    let old = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    let old_bytes = std::fs::read(&old.path).unwrap();
    // The program recorded again, differently: a new trace and stream,
    // and the old records put back beside them (the files copied over
    // by hand; a writer of traces removes them).
    let (trace, stream) = fixture(&d, 700, 8);
    std::fs::write(&old.path, &old_bytes).unwrap();
    let digests = (file_digest(&trace).unwrap(), file_digest(&stream).unwrap());
    match Records::check(&old.path, sources(&trace, &stream), &digests) {
        Err(Unusable::Bad(m)) => assert!(m.contains("stale"), "{m}"),
        other => panic!("a stale file passed: {other:?}"),
    }
    let new = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    assert_ne!(new.head.trace, old.head.trace);
    assert_eq!(new.head.trace, digests.0);
    let (a, b) = both_events(&trace, &new, 2);
    assert_eq!(a, b);
    // Another format named for the same bytes is another derivation.
    let other = Sources { format: Format::Lackey, ..sources(&trace, &stream) };
    assert!(matches!(Records::check(&new.path, other, &digests), Err(Unusable::Bad(_))));
}

#[test]
fn a_damaged_block_fails_the_read_and_the_file_is_removed() {
    let d = dir("block");
    let (trace, stream) = fixture(&d, 6000, 0);
    let rec = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    let mut bytes = std::fs::read(&rec.path).unwrap();
    // A byte of the second event block's records.
    let second = HEAD + 8 + BLOCK_RECORDS * EVENT_BYTES + 8 + 8 + 5;
    bytes[second] ^= 0x10;
    std::fs::write(&rec.path, &bytes).unwrap();
    let header = crate::trace::open(&trace, None).unwrap().header().clone();
    let mut r = EventRecords::open(&rec, header, Volatility::Never, 1).unwrap();
    let mut v = Vec::new();
    let mut err = None;
    for _ in 0..4 {
        if let Err(e) = r.next_block(&mut v) {
            err = Some(e.to_string());
            break;
        }
    }
    let err = err.expect("the damaged block is found");
    assert!(err.contains("block 1") && err.contains("fails its check") && err.contains("removed"), "{err}");
    assert!(!rec.path.exists());
    let again = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    assert_eq!(again.head, rec.head);
}

#[test]
fn the_check_sees_any_changed_word_and_a_block_out_of_place() {
    let block: Vec<u8> = (0..4096u32).map(|k| (k * 7 % 251) as u8).collect();
    let c = checksum(&block, 3);
    assert_ne!(c, checksum(&block, 4));
    for at in (0..block.len()).step_by(61) {
        for bit in [0, 3, 7] {
            let mut b = block.clone();
            b[at] ^= 1 << bit;
            assert_ne!(checksum(&b, 3), c, "byte {at} bit {bit}");
        }
    }
}

#[test]
fn a_record_made_to_be_no_event_is_an_error_not_a_panic() {
    let d = dir("crafted");
    let (trace, stream) = fixture(&d, 300, 0);
    let rec = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    let mut bytes = std::fs::read(&rec.path).unwrap();
    let n = u32::from_le_bytes(bytes[HEAD..HEAD + 4].try_into().unwrap()) as usize;
    // The first load's size: 65 bytes, the block's check made to match.
    let recs = HEAD + 8;
    let k = (0..n).find(|&k| bytes[recs + k * EVENT_BYTES + 20] == 0).unwrap();
    bytes[recs + k * EVENT_BYTES + 21] = 65;
    let c = checksum(&bytes[HEAD..recs + n * EVENT_BYTES], 0);
    bytes[recs + n * EVENT_BYTES..recs + n * EVENT_BYTES + 8].copy_from_slice(&c.to_le_bytes());
    std::fs::write(&rec.path, &bytes).unwrap();
    let header = crate::trace::open(&trace, None).unwrap().header().clone();
    let mut r = EventRecords::open(&rec, header, Volatility::Never, 1).unwrap();
    let mut v = Vec::new();
    let e = r.next_block(&mut v).unwrap_err().to_string();
    assert!(e.contains(&format!("record {k} of block 0 is no event")), "{e}");
    assert_eq!(v.len(), k, "the events before it");
}

#[test]
fn a_trace_written_without_a_stream_leaves_no_records_of_an_earlier_one() {
    let d = dir("stale-files");
    let (trace, stream) = fixture(&d, 200, 0);
    let rec = Records::open_or_derive(sources(&trace, &stream)).unwrap();
    assert!(rec.path.exists());
    crate::trace::insn::remove_stale(&trace).unwrap();
    assert!(!rec.path.exists() && !stream.exists());
    crate::trace::insn::remove_stale(&trace).unwrap();
}
