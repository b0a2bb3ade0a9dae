//! ChampSim instruction traces, read one record at a time.
//!
//! Two record layouts exist, both plain C structs written with `fwrite`
//! by ChampSim's tracers, little-endian, with the padding the C compiler
//! puts in on x86-64 (layouts from ChampSim `inc/trace_instruction.h`,
//! structs `input_instr` and `cloudsuite_instr`; the sizes and offsets
//! below follow from the C alignment rules and were checked against
//! Python's `ctypes`, which applies the same rules):
//!
//! ```text
//!  input_instr (64 bytes)               cloudsuite_instr (96 bytes)
//!   0  u64 ip                             0  u64 ip
//!   8  u8  is_branch                      8  u8  is_branch
//!   9  u8  branch_taken                   9  u8  branch_taken
//!  10  u8  destination_registers[2]     10  u8  destination_registers[4]
//!  12  u8  source_registers[4]          14  u8  source_registers[4]
//!                                        18  (6 bytes padding)
//!  16  u64 destination_memory[2]        24  u64 destination_memory[4]
//!  32  u64 source_memory[4]             56  u64 source_memory[4]
//!                                        88  u8  asid[2]
//!                                        90  (6 bytes padding)
//! ```
//!
//! Each instruction becomes its nonzero `source_memory` entries as loads,
//! then its nonzero `destination_memory` entries as stores. The first
//! access carries as its gap the instructions without memory accesses
//! since the previous access; the others are flagged `same_instruction`.
//! ChampSim records no access sizes: its caches take each memory operand
//! as the 64-byte block that holds its address, and so does this reader
//! (the access is that block, aligned; before it, 8 bytes at the
//! address). The registers and branch fields are read for the `ooo` core
//! by `champsim_insn`.
//! Instructions after the last memory access of the file become a
//! `compute` record, so every instruction is counted. A record no ChampSim
//! tracer writes (a zero instruction pointer, an address beyond the 57-bit
//! address space or in its last 64-byte block, branch flags other than 0
//! and 1, another format's magic at the start) is an error naming the
//! record and its offset, the same check for every record.

use super::compress::{self, read_record, Stream};
use super::event::Op;
use super::{AddressSpace, Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// The size every ChampSim access is given: the trace has none, and
/// ChampSim's caches take each operand as its block (`BLOCK_SIZE`).
pub const ACCESS_SIZE: u32 = 64;

/// Where the memory operands of one record layout are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub name: &'static str,
    pub record_bytes: usize,
    pub dest_memory_at: usize,
    pub dest_memory_count: usize,
    pub src_memory_at: usize,
    pub src_memory_count: usize,
}

/// ChampSim `input_instr` (`inc/trace_instruction.h`: 2 destination and
/// 4 source memory operands, no padding).
pub const INPUT_INSTR: Layout =
    Layout { name: "input_instr", record_bytes: 64, dest_memory_at: 16, dest_memory_count: 2, src_memory_at: 32, src_memory_count: 4 };

/// ChampSim `cloudsuite_instr` (`inc/trace_instruction.h`: 4 destination
/// and 4 source memory operands, 2 ASID bytes; 6 padding bytes before the
/// first u64 array and 6 at the end round it to 96 bytes).
pub const CLOUDSUITE_INSTR: Layout =
    Layout { name: "cloudsuite_instr", record_bytes: 96, dest_memory_at: 24, dest_memory_count: 4, src_memory_at: 56, src_memory_count: 4 };

pub struct ChampsimReader {
    path: PathBuf,
    header: TraceHeader,
    layout: Layout,
    s: Stream,
    buf: Vec<u8>,
    /// Accesses of the current instruction not handed out yet.
    pending: VecDeque<TraceRecord>,
    /// Instructions without a memory access since the last access.
    gap: u64,
    /// Records (instructions) read so far.
    instructions: u64,
}

pub fn open(path: &Path, cloudsuite: bool) -> Result<Box<dyn RecordReader>, TraceError> {
    Ok(Box::new(ChampsimReader::open(path, if cloudsuite { CLOUDSUITE_INSTR } else { INPUT_INSTR })?))
}

fn u64_at(buf: &[u8], at: usize) -> Option<u64> {
    let bytes: [u8; 8] = buf.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// An address a 64-bit program can have: canonical x86-64 with up to 57
/// bits (five-level paging), so bits 63..56 all equal.
pub fn canonical(addr: u64) -> bool {
    matches!((addr as i64) >> 56, 0 | -1)
}

/// What makes record `index` (its bytes in `rec`) impossible in a ChampSim
/// trace, if anything: the start of another format, a zero or impossible
/// instruction pointer, branch flags that are not booleans, an operand
/// address no program can have or whose block wraps the address space.
pub fn impossible(rec: &[u8], l: Layout, index: u64) -> Option<String> {
    if index == 0 {
        let others: [(&[u8], &str); 5] = [
            (super::native::MAGIC, "a native spmsim trace (read it as `native`)"),
            (b"gem5", "a gem5 packet trace"),
            (&[0xFD, b'7', b'z', b'X', b'Z'], "xz data (compressed twice?)"),
            (&[0x1F, 0x8B], "gzip data (compressed twice?)"),
            (&[0x28, 0xB5, 0x2F, 0xFD], "zstd data (compressed twice?)"),
        ];
        if let Some((_, what)) = others.iter().find(|(m, _)| rec.starts_with(m)) {
            return Some(format!("the file starts like {what}"));
        }
    }
    let ip = u64_at(rec, 0)?;
    if ip == 0 {
        return Some("instruction pointer 0".into());
    }
    if !canonical(ip) {
        return Some(format!("instruction pointer {ip:#x} is not an address a program can have"));
    }
    // ChampSim's tracers write C++ bools: 0 or 1.
    if let [b, t] = *rec.get(8..10)? {
        if b > 1 || t > 1 {
            return Some(format!("branch flags is_branch {b} and branch_taken {t} (bytes 8 and 9) are not 0 or 1"));
        }
    }
    let operands =
        (0..l.src_memory_count).map(|i| l.src_memory_at + 8 * i).chain((0..l.dest_memory_count).map(|i| l.dest_memory_at + 8 * i));
    for at in operands {
        let a = u64_at(rec, at)?;
        if !canonical(a) {
            return Some(format!("memory operand {a:#x} (bytes {at}..{}) is not an address a program can have", at + 8));
        }
        if a | (ACCESS_SIZE as u64 - 1) == u64::MAX {
            return Some(format!(
                "memory operand {a:#x} (bytes {at}..{}): its {ACCESS_SIZE}-byte block ends past the top of the address space",
                at + 8
            ));
        }
    }
    None
}

impl ChampsimReader {
    pub fn open(path: &Path, layout: Layout) -> Result<ChampsimReader, TraceError> {
        let s = compress::open(path)?;
        let format = if layout == CLOUDSUITE_INSTR { "champsim-cloudsuite" } else { "champsim" };
        let mut header = TraceHeader::new(format, AddressSpace::Virtual, false);
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        header.source = format!(
            "ChampSim {} trace {file} ({}-byte records; access sizes not recorded: each operand is its {ACCESS_SIZE}-byte block, as ChampSim's caches take it)",
            layout.name, layout.record_bytes
        );
        Ok(ChampsimReader {
            path: path.to_path_buf(),
            header,
            layout,
            s,
            buf: vec![0; layout.record_bytes],
            pending: VecDeque::new(),
            gap: 0,
            instructions: 0,
        })
    }

    /// Instructions (records) read so far, with or without memory accesses.
    pub fn instructions(&self) -> u64 {
        self.instructions
    }

    /// Read instructions until one has a memory access; false at the end.
    fn fill(&mut self) -> Result<bool, TraceError> {
        loop {
            let start = self.s.offset;
            let got = read_record(&self.path, &mut self.s, &mut self.buf).map_err(|e| {
                TraceError::new(
                    &self.path,
                    e.at,
                    format!(
                        "ChampSim {} record {} (bytes {start}..{}): {}",
                        self.layout.name,
                        self.instructions,
                        start + self.layout.record_bytes as u64,
                        e.msg
                    ),
                )
            })?;
            if !got {
                // The instructions after the last access, as compute records.
                self.pending.extend(super::compute_records(std::mem::take(&mut self.gap)));
                return Ok(!self.pending.is_empty());
            }
            if let Some(m) = impossible(&self.buf, self.layout, self.instructions) {
                return Err(TraceError::new(
                    &self.path,
                    Position::Offset(start),
                    format!("ChampSim {} record {}: {m}; this is not a ChampSim trace of this layout", self.layout.name, self.instructions),
                ));
            }
            self.instructions += 1;
            let l = self.layout;
            let mut first = true;
            let operands = (0..l.src_memory_count)
                .map(|i| (Op::Load, l.src_memory_at + 8 * i))
                .chain((0..l.dest_memory_count).map(|i| (Op::Store, l.dest_memory_at + 8 * i)));
            for (op, at) in operands {
                let addr = u64_at(&self.buf, at)
                    .ok_or_else(|| TraceError::new(&self.path, Position::Offset(start), "record layout out of bounds (internal error)"))?;
                if addr == 0 {
                    continue;
                }
                let mut r = TraceRecord::mem(op, addr & !(ACCESS_SIZE as u64 - 1), ACCESS_SIZE);
                if first {
                    r.gap = u32::try_from(self.gap).map_err(|_| {
                        TraceError::new(
                            &self.path,
                            Position::Offset(start),
                            format!(
                                "{} instructions without a memory access before this record: more than a record's gap can hold (2^32 - 1)",
                                self.gap
                            ),
                        )
                    })?;
                    first = false;
                } else {
                    r.same_instruction = true;
                }
                self.pending.push_back(r);
            }
            if first {
                self.gap += 1;
            } else {
                self.gap = 0;
                return Ok(true);
            }
        }
    }
}

impl RecordReader for ChampsimReader {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.pending.is_empty() && !self.fill()? {
            return Ok(None);
        }
        Ok(self.pending.pop_front())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One instruction in ChampSim's layout, written field by field.
    struct Instr {
        ip: u64,
        dest: Vec<u64>,
        src: Vec<u64>,
    }

    fn encode(layout: Layout, instrs: &[Instr]) -> Vec<u8> {
        let mut out = Vec::new();
        for i in instrs {
            let mut rec = vec![0xAAu8; layout.record_bytes]; // padding bytes are garbage in real traces
            rec[..8].copy_from_slice(&i.ip.to_le_bytes());
            rec[8..10].copy_from_slice(&[0, 0]); // not a branch: the flags are booleans
            for k in 0..layout.dest_memory_count {
                let a = i.dest.get(k).copied().unwrap_or(0);
                rec[layout.dest_memory_at + 8 * k..][..8].copy_from_slice(&a.to_le_bytes());
            }
            for k in 0..layout.src_memory_count {
                let a = i.src.get(k).copied().unwrap_or(0);
                rec[layout.src_memory_at + 8 * k..][..8].copy_from_slice(&a.to_le_bytes());
            }
            out.extend_from_slice(&rec);
        }
        out
    }

    fn temp(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spmsim-champsim-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn read_all(p: &Path, layout: Layout) -> Result<Vec<TraceRecord>, TraceError> {
        let mut r = ChampsimReader::open(p, layout)?;
        let mut v = Vec::new();
        while let Some(x) = r.next_record()? {
            v.push(x);
        }
        Ok(v)
    }

    fn sample() -> Vec<Instr> {
        vec![
            Instr { ip: 0x400000, dest: vec![], src: vec![] },
            Instr { ip: 0x400004, dest: vec![], src: vec![] },
            // two loads (one in the third source slot) and a store: one instruction
            Instr { ip: 0x400008, dest: vec![0, 0x7fff_0010], src: vec![0x7fff_0000, 0, 0x6000_0040] },
            Instr { ip: 0x40000c, dest: vec![0x6000_1000], src: vec![] },
            Instr { ip: 0x400010, dest: vec![], src: vec![] },
            Instr { ip: 0x400014, dest: vec![], src: vec![0x6000_2000] },
            // trailing instructions without memory accesses
            Instr { ip: 0x400018, dest: vec![], src: vec![] },
        ]
    }

    fn expected() -> Vec<TraceRecord> {
        let m = TraceRecord::mem;
        vec![
            m(Op::Load, 0x7fff_0000, 64).after(2),
            TraceRecord { same_instruction: true, ..m(Op::Load, 0x6000_0040, 64) },
            TraceRecord { same_instruction: true, ..m(Op::Store, 0x7fff_0000, 64) },
            m(Op::Store, 0x6000_1000, 64),
            m(Op::Load, 0x6000_2000, 64).after(1),
            // the trailing instruction without memory access
            TraceRecord::compute(1),
        ]
    }

    #[test]
    fn input_instr_records_decode_to_loads_then_stores_with_gaps() {
        assert_eq!(encode(INPUT_INSTR, &sample()).len(), 7 * 64);
        let p = temp("t.champsim", &encode(INPUT_INSTR, &sample()));
        let got = read_all(&p, INPUT_INSTR).unwrap();
        assert_eq!(got, expected());
        // instructions: all 7 records, the trailing one in the compute record
        assert_eq!(got.iter().map(|r| r.instructions()).sum::<u64>(), 7);
        let mut r = ChampsimReader::open(&p, INPUT_INSTR).unwrap();
        while r.next_record().unwrap().is_some() {}
        assert_eq!(r.instructions(), 7);
        assert_eq!(r.header().source_format, "champsim");
        assert!(!r.header().values);
    }

    #[test]
    fn cloudsuite_records_use_their_own_layout() {
        let mut instrs = sample();
        instrs[3].dest = vec![0, 0, 0, 0x6000_3000]; // the fourth destination slot exists only here
        let p = temp("t.cloudsuite", &encode(CLOUDSUITE_INSTR, &instrs));
        let got = read_all(&p, CLOUDSUITE_INSTR).unwrap();
        let mut want = expected();
        want[3].addr = 0x6000_3000;
        assert_eq!(got, want);
        // Read with the wrong layout: a record that cannot be (padding read
        // as an instruction pointer), or 7 * 96 bytes are 10.5 records of 64.
        let e = read_all(&p, INPUT_INSTR).unwrap_err();
        assert!(matches!(e.at, Position::Offset(o) if o % 64 == 0 && o <= 640), "{e}");
    }

    #[test]
    fn a_partial_last_record_is_an_error_naming_its_offset() {
        let bytes = encode(INPUT_INSTR, &sample());
        for cut in [1, 13, 63] {
            let p = temp("cut.champsim", &bytes[..bytes.len() - cut]);
            let e = read_all(&p, INPUT_INSTR).expect_err("a truncated trace must not read cleanly");
            assert_eq!(e.at, Position::Offset(6 * 64), "{e}");
            assert!(e.msg.contains("truncated") && e.msg.contains(&format!("{} of 64 bytes", 64 - cut)), "{e}");
        }
        let bytes = encode(CLOUDSUITE_INSTR, &sample());
        let p = temp("cut.cloudsuite", &bytes[..bytes.len() - 96 - 40]);
        let e = read_all(&p, CLOUDSUITE_INSTR).unwrap_err();
        assert_eq!(e.at, Position::Offset(5 * 96), "{e}");
    }

    #[test]
    fn impossible_records_are_errors_naming_their_offset() {
        let mut zero_ip = sample();
        zero_ip[4].ip = 0;
        let mut wild = sample();
        wild[3].dest = vec![0x1234_5678_9abc_def0_u64];
        for (name, instrs, what) in [("zero-ip", zero_ip, "instruction pointer 0"), ("wild", wild, "0x123456789abcdef0")] {
            let p = temp(&format!("{name}.champsim"), &encode(INPUT_INSTR, &instrs));
            let e = read_all(&p, INPUT_INSTR).unwrap_err();
            let at = if name == "wild" { 3 * 64 } else { 4 * 64 };
            assert_eq!(e.at, Position::Offset(at), "{e}");
            assert!(e.msg.contains(what) && e.msg.contains("not a ChampSim trace"), "{e}");
        }
        // An operand in the top block, and branch flags that are not
        // booleans: refused the same in the first records and after the
        // ones format detection looks at.
        for at in [1, 100] {
            let mut top = sample();
            top.resize_with(120, || Instr { ip: 0x400020, dest: vec![], src: vec![] });
            top[at].src = vec![u64::MAX];
            let bytes = encode(INPUT_INSTR, &top);
            let e = read_all(&temp("top.champsim", &bytes), INPUT_INSTR).unwrap_err();
            assert_eq!(e.at, Position::Offset(at as u64 * 64), "{e}");
            assert!(
                e.msg.contains(&format!("record {at}:")) && e.msg.contains("0xffffffffffffffff") && e.msg.contains("past the top"),
                "{e}"
            );
            for (k, flag) in [(8, 7u8), (9, 9u8)] {
                let mut b = encode(INPUT_INSTR, &top[..at]);
                b.extend(encode(INPUT_INSTR, &sample()));
                b[at * 64 + k] = flag;
                let e = read_all(&temp("flags.champsim", &b), INPUT_INSTR).unwrap_err();
                assert_eq!(e.at, Position::Offset(at as u64 * 64), "{e}");
                assert!(
                    e.msg.contains(&format!("record {at}:")) && e.msg.contains(&format!(" {flag} ")) && e.msg.contains("not 0 or 1"),
                    "{e}"
                );
            }
        }
        // A native trace named as ChampSim says what it is.
        let mut native = crate::trace::native::MAGIC.to_vec();
        native.resize(128, 1);
        let p = temp("native.champsim", &native);
        let e = read_all(&p, INPUT_INSTR).unwrap_err();
        assert!(e.msg.contains("native spmsim trace"), "{e}");
    }

    #[test]
    fn empty_file_is_an_empty_trace() {
        let p = temp("empty.champsim", &[]);
        assert_eq!(read_all(&p, INPUT_INSTR).unwrap(), vec![]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(100))]
        /// Any bytes are records or an error naming an offset, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..400)) {
            for layout in [INPUT_INSTR, CLOUDSUITE_INSTR] {
                let p = temp(&format!("fuzz-{}", layout.record_bytes), &bytes);
                let res = read_all(&p, layout);
                if compress::Compression::of(&bytes) != compress::Compression::Plain {
                    continue; // taken for compressed data: any error will do
                }
                let whole = (bytes.len() / layout.record_bytes * layout.record_bytes) as u64;
                match res {
                    Ok(v) => proptest::prop_assert_eq!(bytes.len() % layout.record_bytes, 0, "{:?}", v.len()),
                    // A partial last record, or an impossible one: both at a record's start.
                    Err(e) => proptest::prop_assert!(matches!(e.at, Position::Offset(o) if o % layout.record_bytes as u64 == 0 && o <= whole), "{}", e),
                }
            }
        }
    }
}
