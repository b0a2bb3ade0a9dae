//! The trace readers against traces written by an independent encoder:
//! Python 3's `struct`, `ctypes`, `lzma` and `gzip` modules, with the
//! protobuf bytes of the gem5 trace encoded by hand in the script. Each
//! trace is read back through `spmsim::trace::open(path, None)`, so the
//! format is detected as a user would have it, and every record is checked.

use spmsim::trace::{self, info, Format, Position, RecordReader, TraceError, TraceRecord};
use spmsim::workload::Op;
use std::path::{Path, PathBuf};
use std::process::Command;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spmsim-trace-formats-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run a Python 3 script; its stdout.
fn python(script: &str, args: &[&Path]) -> String {
    let out = Command::new("python3").arg("-c").arg(script).args(args).output().unwrap_or_else(|e| {
        panic!("this test needs python3 (it writes the traces with an encoder independent of spmsim), but `python3` could not be run: {e}")
    });
    assert!(out.status.success(), "the python3 trace writer failed:\n{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn read_all(r: &mut dyn RecordReader) -> Result<Vec<TraceRecord>, TraceError> {
    let mut v = Vec::new();
    while let Some(x) = r.next_record()? {
        v.push(x);
    }
    Ok(v)
}

/// Open with detection and read everything.
fn open_and_read(p: &Path) -> Result<Vec<TraceRecord>, TraceError> {
    read_all(&mut *trace::open(p, None)?)
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// ---------------------------------------------------------------------------
// ChampSim

const CHAMPSIM_WRITER: &str = r#"
import sys, struct, lzma, ctypes
src, plain, xz, cloud = sys.argv[1:5]
rows = [[int(x) for x in l.split()] for l in open(src) if l.strip()]
# ChampSim inc/trace_instruction.h, input_instr: u64 ip; u8 is_branch, branch_taken;
# u8 destination_registers[2]; u8 source_registers[4]; u64 destination_memory[2]; u64 source_memory[4]
with open(plain, 'wb') as f:
    for ip, d0, d1, d2, d3, s0, s1, s2, s3 in rows:
        f.write(struct.pack('<QBB2B4B2Q4Q', ip, ip & 1, 0, 7, 8, 1, 2, 3, 4, d0, d1, s0, s1, s2, s3))
with open(plain, 'rb') as f:
    data = f.read()
with open(xz, 'wb') as f:
    f.write(lzma.compress(data, format=lzma.FORMAT_XZ))
# cloudsuite_instr: 4 destination registers and memory operands and asid[2];
# ctypes lays the struct out with the C compiler's padding, as ChampSim's fwrite does.
class Cloud(ctypes.Structure):
    _fields_ = [('ip', ctypes.c_ulonglong), ('is_branch', ctypes.c_ubyte), ('branch_taken', ctypes.c_ubyte),
                ('destination_registers', ctypes.c_ubyte * 4), ('source_registers', ctypes.c_ubyte * 4),
                ('destination_memory', ctypes.c_ulonglong * 4), ('source_memory', ctypes.c_ulonglong * 4),
                ('asid', ctypes.c_ubyte * 2)]
with lzma.open(cloud, 'wb', format=lzma.FORMAT_XZ) as f:
    for ip, d0, d1, d2, d3, s0, s1, s2, s3 in rows:
        c = Cloud(ip, 0, 0, (ctypes.c_ubyte * 4)(1, 2, 3, 4), (ctypes.c_ubyte * 4)(5, 6, 7, 8),
                  (ctypes.c_ulonglong * 4)(d0, d1, d2, d3), (ctypes.c_ulonglong * 4)(s0, s1, s2, s3),
                  (ctypes.c_ubyte * 2)(3, 3))
        f.write(bytes(c))
print(ctypes.sizeof(Cloud))
"#;

struct Instr {
    ip: u64,
    dest: [u64; 4],
    src: [u64; 4],
}

/// A stack or heap address, as a Linux x86-64 process has them.
fn addr(rng: &mut Rng) -> u64 {
    if rng.below(2) == 0 {
        0x7ffd_0000_0000 + rng.below(1 << 20) * 8
    } else {
        0x5555_5000_0000 + rng.below(1 << 24)
    }
}

fn champsim_instrs(n: usize) -> Vec<Instr> {
    let mut rng = Rng(0x5eed_c4a3);
    let mut v = Vec::new();
    for i in 0..n {
        let mut dest = [0u64; 4];
        let mut src = [0u64; 4];
        match rng.below(10) {
            0..=3 => {} // no memory access
            4..=6 => src[rng.below(4) as usize] = addr(&mut rng),
            7 => dest[rng.below(4) as usize] = addr(&mut rng),
            _ => {
                for s in src.iter_mut() {
                    if rng.below(2) == 0 {
                        *s = addr(&mut rng);
                    }
                }
                for d in dest.iter_mut() {
                    if rng.below(3) == 0 {
                        *d = addr(&mut rng);
                    }
                }
            }
        }
        v.push(Instr { ip: 0x40_1000 + 4 * i as u64, dest, src });
    }
    // End with instructions without memory accesses.
    for i in 0..3 {
        v.push(Instr { ip: 0x50_0000 + 4 * i, dest: [0; 4], src: [0; 4] });
    }
    v
}

/// What the ChampSim reader must make of `instrs`, whose records have
/// `dests` destination memory operands.
fn champsim_expected(instrs: &[Instr], dests: usize) -> Vec<TraceRecord> {
    let mut out = Vec::new();
    let mut gap = 0;
    for i in instrs {
        let accesses: Vec<(Op, u64)> =
            i.src.iter().map(|&a| (Op::Load, a)).chain(i.dest[..dests].iter().map(|&a| (Op::Store, a))).filter(|x| x.1 != 0).collect();
        if accesses.is_empty() {
            gap += 1;
            continue;
        }
        for (k, (op, a)) in accesses.into_iter().enumerate() {
            // Each operand is its 64-byte block, as ChampSim's caches take it.
            let mut r = TraceRecord::mem(op, a & !63, 64);
            if k == 0 {
                r.gap = gap;
            } else {
                r.same_instruction = true;
            }
            out.push(r);
        }
        gap = 0;
    }
    // The instructions after the last access: one compute record.
    if gap > 0 {
        out.push(TraceRecord::compute(gap));
    }
    out
}

#[test]
fn champsim_traces_written_by_python_read_back_exactly() {
    let dir = temp_dir("champsim");
    let instrs = champsim_instrs(3000);
    let rows = dir.join("rows.txt");
    std::fs::write(
        &rows,
        instrs
            .iter()
            .map(|i| {
                format!(
                    "{} {} {} {} {} {} {} {} {}\n",
                    i.ip, i.dest[0], i.dest[1], i.dest[2], i.dest[3], i.src[0], i.src[1], i.src[2], i.src[3]
                )
            })
            .collect::<String>(),
    )
    .unwrap();
    let (plain, xz, cloud) = (dir.join("trace.champsim"), dir.join("trace.champsim.xz"), dir.join("trace.cloudsuite.xz"));
    let size = python(CHAMPSIM_WRITER, &[&rows, &plain, &xz, &cloud]);
    assert_eq!(size.trim(), "96", "C lays cloudsuite_instr out in 96 bytes");
    assert_eq!(std::fs::metadata(&plain).unwrap().len(), 64 * instrs.len() as u64);

    // input_instr, xz-compressed, format detected.
    assert_eq!(trace::detect(&xz).unwrap(), Format::Champsim);
    let mut r = trace::open(&xz, None).unwrap();
    assert_eq!(r.header().source_format, "champsim");
    let got = read_all(&mut *r).unwrap();
    let want = champsim_expected(&instrs, 2);
    assert!(want.len() > 2000 && want.iter().any(|r| r.same_instruction) && want.iter().any(|r| r.gap > 2));
    assert_eq!(got.len(), want.len());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "record {k}");
    }
    // The plain copy reads the same.
    assert_eq!(open_and_read(&plain).unwrap(), want);

    // info::scan counts the loads and stores.
    let loads = instrs.iter().flat_map(|i| i.src).filter(|&a| a != 0).count() as u64;
    let stores = instrs.iter().flat_map(|i| &i.dest[..2]).filter(|&&a| a != 0).count() as u64;
    let inf = info::scan("champsim", &mut *trace::open(&xz, None).unwrap()).unwrap();
    assert_eq!((inf.loads, inf.stores), (loads, stores));
    assert_eq!(inf.records, loads + stores + 1, "the loads, the stores and the trailing compute record");
    assert_eq!(inf.instructions, instrs.len() as u64, "every record is an instruction, the trailing ones without memory accesses too");
    assert_eq!(inf.values, "derived");

    // cloudsuite_instr: the name says so; the 3rd and 4th destinations count.
    assert_eq!(trace::detect(&cloud).unwrap(), Format::ChampsimCloudsuite);
    let mut r = trace::open(&cloud, None).unwrap();
    assert_eq!(r.header().source_format, "champsim-cloudsuite");
    assert_eq!(read_all(&mut *r).unwrap(), champsim_expected(&instrs, 4));

    // An uncompressed trace cut short: the error names the partial record's offset.
    let bytes = std::fs::read(&plain).unwrap();
    let cut = dir.join("cut.champsim");
    std::fs::write(&cut, &bytes[..bytes.len() - 5]).unwrap();
    let e = open_and_read(&cut).expect_err("a truncated trace must not read cleanly");
    assert_eq!(e.at, Position::Offset(64 * (instrs.len() as u64 - 1)), "{e}");
    assert!(e.msg.contains("truncated record: 59 of 64 bytes"), "{e}");
    assert!(e.to_string().contains(&format!("at byte {}", 64 * (instrs.len() - 1))), "{e}");

    // A cut .xz file: a clear error, not a panic and not a shorter trace.
    let z = std::fs::read(&xz).unwrap();
    let cutz = dir.join("cut.champsim.xz");
    std::fs::write(&cutz, &z[..z.len() - 40]).unwrap();
    let e = open_and_read(&cutz).expect_err("a truncated .xz must not read cleanly");
    assert!(e.msg.contains("damaged or truncated compressed data"), "{e}");
    assert!(matches!(e.at, Position::Offset(o) if o <= bytes.len() as u64), "{e}");

    std::fs::remove_dir_all(dir).ok();
}

// ---------------------------------------------------------------------------
// gem5

const GEM5_WRITER: &str = r#"
import sys, struct, gzip, json
src, plain, gz = sys.argv[1:4]
def varint(n):
    out = bytearray()
    while True:
        low, n = n & 0x7f, n >> 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)
def key(num, wire):
    return varint(num << 3 | wire)
def vf(num, v):
    return key(num, 0) + varint(v)
def sf(num, b):
    b = b.encode() if isinstance(b, str) else b
    return key(num, 2) + varint(len(b)) + b
out = bytearray(struct.pack('<I', 0x356d6567))   # gem5 src/proto/protoio.cc magicNumber
offsets = []
def message(m):
    offsets.append(len(out))
    out.extend(varint(len(m)) + m)
# src/proto/packet.proto PacketHeader: obj_id=1, ver=2, tick_freq=3, id_strings=4 {key=1, value=2}
message(sf(1, 'system.monitor') + vf(2, 0) + vf(3, 10**12)
        + sf(4, vf(1, 0) + sf(2, 'system.cpu.dcache_port')) + sf(4, vf(1, 1) + sf(2, 'system.cpu.icache_port')))
# Packet: tick=1, cmd=2, addr=3, size=4, flags=5, pkt_id=6, pc=7; fields 8.. as a fork might add them
for pkt_id, line in enumerate(open(src)):
    tick, cmd, addr, size, pc = (int(x) for x in line.split())
    m = vf(1, tick) + vf(2, cmd) + vf(3, addr) + vf(4, size) + vf(5, 0x40) + vf(6, pkt_id)
    if pc:
        m += vf(7, pc)
    m += vf(8, 1) + key(9, 1) + struct.pack('<Q', addr) + key(10, 5) + struct.pack('<I', 7) + sf(11, b'x' * (pkt_id % 5))
    message(m)
with open(plain, 'wb') as f:
    f.write(out)
with gzip.open(gz, 'wb') as f:
    f.write(out)
print(json.dumps(offsets))
"#;

#[test]
fn gem5_packet_traces_written_by_python_read_back_exactly() {
    let dir = temp_dir("gem5");
    let mut rng = Rng(0x6e35);
    // (tick, cmd, addr, size, pc); 1 = ReadReq, 4 = WriteReq, others skipped.
    let mut pkts = Vec::new();
    for i in 0..2000u64 {
        let cmd = [1, 1, 4, 1, 4, 26, 7][rng.below(7) as usize];
        let size = [1, 2, 4, 8, 16, 64][rng.below(6) as usize];
        let addr = 0x8000_0000 + rng.below(1 << 28) / size * size;
        pkts.push((1000 * i, cmd, addr, size, if i % 3 == 0 { 0 } else { 0x40_0000 + i }));
    }
    let src = dir.join("packets.txt");
    std::fs::write(&src, pkts.iter().map(|p| format!("{} {} {} {} {}\n", p.0, p.1, p.2, p.3, p.4)).collect::<String>()).unwrap();
    let (plain, gz) = (dir.join("mem.trc"), dir.join("mem.trc.gz"));
    let offsets: Vec<u64> = serde_json::from_str(&python(GEM5_WRITER, &[&src, &plain, &gz])).unwrap();
    assert_eq!(offsets.len(), pkts.len() + 1);

    assert_eq!(trace::detect(&gz).unwrap(), Format::Gem5);
    let mut r = trace::open(&gz, None).unwrap();
    assert_eq!(r.header().source_format, "gem5");
    assert!(r.header().source.contains("system.monitor") && r.header().source.contains("tick_freq 1000000000000"), "{}", r.header().source);
    let got = read_all(&mut *r).unwrap();
    let want: Vec<TraceRecord> = pkts
        .iter()
        .filter_map(|&(_, cmd, addr, size, _)| match cmd {
            1 => Some(TraceRecord::mem(Op::Load, addr, size as u32)),
            4 => Some(TraceRecord::mem(Op::Store, addr, size as u32)),
            _ => None,
        })
        .collect();
    assert!(want.len() > 1000 && want.len() < pkts.len());
    assert_eq!(got, want);
    assert_eq!(open_and_read(&plain).unwrap(), want);

    let inf = info::scan("gem5", &mut *trace::open(&gz, None).unwrap()).unwrap();
    assert_eq!(inf.loads, pkts.iter().filter(|p| p.1 == 1).count() as u64);
    assert_eq!(inf.stores, pkts.iter().filter(|p| p.1 == 4).count() as u64);
    assert_eq!(inf.instructions, inf.loads + inf.stores, "one instruction per packet");

    // Cut inside the last packet message: the error names where it starts.
    let bytes = std::fs::read(&plain).unwrap();
    let cut = dir.join("cut.trc");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let e = open_and_read(&cut).expect_err("truncated");
    assert_eq!(e.at, Position::Offset(*offsets.last().unwrap()), "{e}");
    // Cut inside the header.
    std::fs::write(&cut, &bytes[..offsets[1] as usize - 2]).unwrap();
    let e = open_and_read(&cut).expect_err("truncated header");
    assert_eq!(e.at, Position::Offset(offsets[0]), "{e}");

    // A cut .gz: a clear error.
    let z = std::fs::read(&gz).unwrap();
    let cutz = dir.join("cut.trc.gz");
    std::fs::write(&cutz, &z[..z.len() - 30]).unwrap();
    let e = open_and_read(&cutz).expect_err("truncated gzip");
    assert!(e.msg.contains("damaged or truncated compressed data"), "{e}");
    std::fs::remove_dir_all(dir).ok();
}

// ---------------------------------------------------------------------------
// Ramulator 2 and DRAMsim3

const TEXT_WRITER: &str = r#"
import sys, gzip, lzma
src, ram_gz, ram_plain, dram_xz = sys.argv[1:5]
rows = [l.split() for l in open(src) if l.strip()]
ram = ['# Ramulator 2 LoadStoreTrace, written by Python', '']
dram = ['# DRAMsim3 trace: address operation cycle']
for i, (op, addr, cycle) in enumerate(rows):
    addr = int(addr)
    # Ramulator 2 loadstore_trace.cpp: hex with a 0x prefix, else decimal
    ram.append(('LD' if op == 'R' else 'ST') + ' ' + (str(addr) if i % 3 == 0 else ('0x%x' if i % 2 else '0X%X') % addr))
    if i % 50 == 49:
        ram.append('')
    # DRAMsim3 common.cc: std::hex address (0x optional), operation, decimal cycle
    dram.append(('%x' if i % 4 == 0 else '0x%x') % addr + ' ' + ('READ' if op == 'R' else 'WRITE') + ' ' + cycle)
text = '\n'.join(ram) + '\n'
with gzip.open(ram_gz, 'wt') as f:
    f.write(text)
with open(ram_plain, 'w') as f:
    f.write(text)
with lzma.open(dram_xz, 'wt') as f:
    f.write('\r\n'.join(dram) + '\r\n')
print(len(ram))
"#;

#[test]
fn ramulator_and_dramsim3_traces_written_by_python_read_back_exactly() {
    let dir = temp_dir("text");
    let mut rng = Rng(0x7e47);
    let rows: Vec<(bool, u64, u64)> = (0..1500).map(|i| (rng.below(3) == 0, rng.below(1 << 34) & !63, 10 * i)).collect();
    let src = dir.join("rows.txt");
    std::fs::write(&src, rows.iter().map(|r| format!("{} {} {}\n", if r.0 { "W" } else { "R" }, r.1, r.2)).collect::<String>()).unwrap();
    let (ram_gz, ram_plain, dram_xz) = (dir.join("ram.trace.gz"), dir.join("ram.trace"), dir.join("dram.trace.xz"));
    let lines: u64 = python(TEXT_WRITER, &[&src, &ram_gz, &ram_plain, &dram_xz]).trim().parse().unwrap();
    let want: Vec<TraceRecord> = rows.iter().map(|&(w, a, _)| TraceRecord::mem(if w { Op::Store } else { Op::Load }, a, 8)).collect();

    assert_eq!(trace::detect(&ram_gz).unwrap(), Format::Ramulator);
    assert_eq!(open_and_read(&ram_gz).unwrap(), want);
    assert_eq!(trace::detect(&dram_xz).unwrap(), Format::Dramsim3);
    assert_eq!(open_and_read(&dram_xz).unwrap(), want);
    let inf = info::scan("dramsim3", &mut *trace::open(&dram_xz, None).unwrap()).unwrap();
    assert_eq!(inf.stores, rows.iter().filter(|r| r.0).count() as u64);
    assert_eq!(inf.loads, rows.iter().filter(|r| !r.0).count() as u64);

    // A malformed line after the good ones: its number and text in the error.
    let mut text = std::fs::read_to_string(&ram_plain).unwrap();
    text.push_str("LD 0xfoo\n");
    let bad = dir.join("bad.trace");
    std::fs::write(&bad, &text).unwrap();
    let e = open_and_read(&bad).expect_err("malformed");
    assert_eq!(e.at, Position::Line(lines + 1), "{e}");
    assert!(e.msg.contains("LD 0xfoo"), "{e}");
    assert!(e.to_string().contains(&format!("bad.trace:{}:", lines + 1)), "{e}");

    // A cut .gz: an error with a line number, not a silently shorter trace.
    let z = std::fs::read(&ram_gz).unwrap();
    let cutz = dir.join("cut.trace.gz");
    std::fs::write(&cutz, &z[..z.len() - 25]).unwrap();
    let e = open_and_read(&cutz).expect_err("truncated gzip");
    assert!(matches!(e.at, Position::Line(n) if n > 1), "{e}");
    assert!(e.msg.contains("damaged or truncated compressed data"), "{e}");
    std::fs::remove_dir_all(dir).ok();
}

// ---------------------------------------------------------------------------
// Native traces: integrity and detection

/// Read a whole trace on a worker thread; `None` if it takes longer than
/// `limit` (a hang), else whether it read cleanly.
fn read_with_limit(p: &Path, format: Option<Format>, limit: std::time::Duration) -> Option<Result<usize, TraceError>> {
    let (tx, rx) = std::sync::mpsc::channel();
    let p = p.to_path_buf();
    std::thread::spawn(move || {
        let res = trace::open(&p, format).and_then(|mut r| read_all(&mut *r)).map(|v| v.len());
        let _ = tx.send(res);
    });
    rx.recv_timeout(limit).ok()
}

#[test]
fn every_single_bit_flip_of_a_native_trace_is_rejected() {
    let dir = temp_dir("flips");
    let good = dir.join("good.trace");
    let w = spmsim::workload::WorkloadKind::parse("btree:size_mib=1").unwrap();
    let n = w.write_trace(7, 2000, &good).unwrap();
    assert_eq!(n.instructions, 2000);
    let bytes = std::fs::read(&good).unwrap();
    let records = read_with_limit(&good, None, std::time::Duration::from_secs(30)).expect("the good trace reads").unwrap();
    assert_eq!(records as u64, n.records);
    let hlen = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
    let body_at = 14 + hlen + 4;
    let flipped = dir.join("flipped.trace");
    let (mut tried, mut rejected, mut header_flips) = (0u64, 0u64, 0u64);
    let mut accepted = Vec::new();
    for bit in 0..bytes.len() * 8 {
        let mut b = bytes.clone();
        b[bit / 8] ^= 1 << (bit % 8);
        std::fs::write(&flipped, &b).unwrap();
        // Read as the user would: detected, and named as native.
        for format in [None, Some(Format::Native)] {
            tried += 1;
            header_flips += (bit / 8 < body_at) as u64;
            match read_with_limit(&flipped, format, std::time::Duration::from_secs(10)) {
                None => panic!("flipping bit {bit} (byte {}) makes the reader hang", bit / 8),
                Some(Err(e)) => {
                    rejected += 1;
                    assert!(matches!(e.at, Position::Offset(_)), "bit {bit}: {e}");
                }
                Some(Ok(n)) => accepted.push((bit, format, n)),
            }
        }
    }
    println!("single-bit flips of a {}-byte native trace of 2000 instructions ({} header bytes, {} body bytes): {tried} reads of flipped files ({header_flips} in the header), {rejected} rejected, {} accepted", bytes.len(), body_at, bytes.len() - body_at, accepted.len());
    assert!(accepted.is_empty(), "flips read as a trace (bit, format, records): {accepted:?}");
    assert_eq!(tried, 2 * 8 * bytes.len() as u64);
    assert_eq!(rejected, tried);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn detection_refuses_what_it_cannot_recognise() {
    let dir = temp_dir("detect");
    let mut rng = Rng(0xdead_5eed);
    let random: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
    let p = dir.join("random.bin");
    std::fs::write(&p, &random).unwrap();
    let e = trace::detect(&p).unwrap_err();
    assert!(
        e.msg.contains("cannot tell the trace format")
            && e.msg.contains("tried native")
            && e.msg.contains("champsim")
            && e.msg.contains("#format="),
        "{e}"
    );
    // Named as ChampSim, random bytes are impossible records, not a workload.
    let e = open_and_read_as(&p, Format::Champsim).unwrap_err();
    assert!(e.msg.contains("not a ChampSim trace"), "{e}");

    // A native trace compressed twice: the inner compression is named.
    let native = dir.join("n.trace");
    let w = spmsim::workload::WorkloadKind::parse("random-writes").unwrap();
    w.write_trace(1, 500, &native).unwrap();
    let twice = python("import sys, gzip, lzma\nd = open(sys.argv[1], 'rb').read()\nopen(sys.argv[2], 'wb').write(lzma.compress(gzip.compress(d), format=lzma.FORMAT_XZ))\n", &[&native, &dir.join("n.trace.gz.xz")]);
    assert!(twice.is_empty());
    let e = trace::detect(&dir.join("n.trace.gz.xz")).unwrap_err();
    assert!(e.msg.contains("gzip compressed") && e.msg.contains("twice"), "{e}");

    // A native trace named as ChampSim is refused, saying what it is.
    let e = open_and_read_as(&native, Format::Champsim).unwrap_err();
    assert!(e.msg.contains("native spmsim trace"), "{e}");
    assert_eq!(e.at, Position::Offset(0));

    // Text that is no known trace, and an empty file.
    std::fs::write(&p, "hello world\n").unwrap();
    assert!(trace::detect(&p).unwrap_err().msg.contains("`hello world`"));
    std::fs::write(&p, "").unwrap();
    assert!(trace::detect(&p).unwrap_err().msg.contains("empty"));
    std::fs::remove_dir_all(dir).ok();
}

fn open_and_read_as(p: &Path, f: Format) -> Result<Vec<TraceRecord>, TraceError> {
    read_all(&mut *trace::open(p, Some(f))?)
}

#[test]
fn oversized_accesses_are_errors_naming_the_line_in_lackey() {
    let dir = temp_dir("oversized");
    let p = dir.join("big.lackey");
    for (size, ok) in [("4096", true), ("4097", false), ("4294967295", false)] {
        std::fs::write(&p, format!("==1== lackey\nI  0400,3\n L 1000,{size}\nI  0403,2\n")).unwrap();
        match open_and_read(&p) {
            Ok(v) => assert!(ok && v[0].size == 4096, "{size}: {v:?}"),
            Err(e) => {
                assert!(!ok, "{size}: {e}");
                assert_eq!(e.at, Position::Line(3), "{e}");
                assert!(e.msg.contains(&format!("access of {size} bytes")) && e.msg.contains("4096"), "{e}");
            }
        }
    }
    std::fs::remove_dir_all(dir).ok();
}
