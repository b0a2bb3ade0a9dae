//! gem5 protobuf packet traces (what gem5's `MemTraceProbe` / `CommMonitor`
//! write), read one message at a time.
//!
//! ```text
//!  "gem5"  (u32 0x356d6567, little-endian)       gem5 src/proto/protoio.cc
//!  varint32 length, PacketHeader message         gem5 src/proto/packet.proto
//!  (varint32 length, Packet message)*
//!
//!  PacketHeader: 1 obj_id string, 2 ver uint32, 3 tick_freq uint64,
//!                4 id_strings { 1 key uint32, 2 value string } repeated
//!  Packet:       1 tick uint64, 2 cmd uint32, 3 addr uint64, 4 size uint32,
//!                5 flags uint32, 6 pkt_id uint64, 7 pc uint64
//! ```
//! gem5 gzips the file when its name ends in `.gz`; [`super::compress`]
//! undoes that (and xz or zstd) by magic bytes.
//!
//! The protobuf wire format is decoded here by hand: varints, fixed64,
//! length-delimited and fixed32 fields; unknown fields are skipped, so
//! traces from gem5 versions or forks with more fields read too.
//!
//! Commands: `cmd` is gem5's `MemCmd::Command` as a number (src/mem/packet.hh).
//! Only two numbers have meant the same thing in every gem5 release that
//! writes these traces: 1 = `ReadReq` and 4 = `WriteReq` (the enum starts
//! `InvalidCmd, ReadReq, ReadResp, ReadRespWithInvalidate, WriteReq, ...`;
//! gem5's own util/encode_packet_trace.py and util/decode_packet_trace.py
//! use exactly these two). Later entries moved between releases
//! (`WriteCompleteResp`, `SoftPFExReq` and the `LockedRMW*` commands were
//! inserted), so e.g. 7 is `WritebackClean` in older releases and
//! `WritebackDirty` in newer ones, and the file does not say which release
//! wrote it. ReadReq becomes a load, WriteReq a store; every other packet
//! is skipped and counted (see [`Gem5Reader::skipped`]). The other
//! read/write requests are also mostly cache-generated (`ReadExReq`,
//! `ReadSharedReq`, writebacks), i.e. traffic below a cache, which spmsim
//! would filter through its own caches a second time. A trace of which no
//! packet is a ReadReq or WriteReq is an error rather than an empty
//! workload.
//!
//! Packet traces count no instructions: each access is one instruction
//! with gap 0. The packet's size is kept. Ticks are not used.

use super::compress::{self, read_record, Stream};
use super::event::Op;
use super::{AddressSpace, Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The first four bytes of the (decompressed) trace (gem5 src/proto/protoio.cc
/// writes the u32 0x356d6567 little-endian).
pub const MAGIC: &[u8; 4] = b"gem5";
/// `MemCmd::ReadReq` (gem5 src/mem/packet.hh).
pub const READ_REQ: u32 = 1;
/// `MemCmd::WriteReq` (gem5 src/mem/packet.hh).
pub const WRITE_REQ: u32 = 4;
/// A message longer than this is taken for damage, not allocated.
const MAX_MESSAGE: u64 = 16 << 20;

/// Names of the first commands in the numbering of recent gem5 releases
/// (src/mem/packet.hh with the `LockedRMW*` commands), used only to make
/// error messages readable; older releases number them differently.
const RECENT_NAMES: [&str; 36] = [
    "InvalidCmd",
    "ReadReq",
    "ReadResp",
    "ReadRespWithInvalidate",
    "WriteReq",
    "WriteResp",
    "WriteCompleteResp",
    "WritebackDirty",
    "WritebackClean",
    "WriteClean",
    "CleanEvict",
    "SoftPFReq",
    "SoftPFExReq",
    "HardPFReq",
    "SoftPFResp",
    "HardPFResp",
    "WriteLineReq",
    "UpgradeReq",
    "SCUpgradeReq",
    "UpgradeResp",
    "SCUpgradeFailReq",
    "UpgradeFailResp",
    "ReadExReq",
    "ReadExResp",
    "ReadCleanReq",
    "ReadSharedReq",
    "LoadLockedReq",
    "StoreCondReq",
    "StoreCondFailReq",
    "StoreCondResp",
    "LockedRMWReadReq",
    "LockedRMWReadResp",
    "LockedRMWWriteReq",
    "LockedRMWWriteResp",
    "SwapReq",
    "SwapResp",
];

// ---------------------------------------------------------------------------
// Protobuf wire format (https://protobuf.dev/programming-guides/encoding/).

/// A decoding problem at a byte offset inside one message.
#[derive(Debug, PartialEq, Eq)]
struct WireError {
    at: usize,
    msg: String,
}

#[derive(Debug, PartialEq, Eq)]
enum Value<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32(u32),
}

impl Value<'_> {
    fn kind(&self) -> &'static str {
        match self {
            Value::Varint(_) => "varint",
            Value::Fixed64(_) => "fixed64",
            Value::Bytes(_) => "length-delimited",
            Value::Fixed32(_) => "fixed32",
        }
    }
}

/// Reads the fields of one message, front to back.
struct Wire<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Wire<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Wire { buf, pos: 0 }
    }

    fn err(&self, at: usize, msg: impl Into<String>) -> WireError {
        WireError { at, msg: msg.into() }
    }

    fn varint(&mut self) -> Result<u64, WireError> {
        let start = self.pos;
        let mut v = 0u64;
        for i in 0..10 {
            let b = *self.buf.get(self.pos).ok_or_else(|| self.err(start, "message ends inside a varint"))?;
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.err(start, "varint does not fit 64 bits"));
            }
            v |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err(start, "varint longer than 10 bytes"))
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], WireError> {
        let start = self.pos;
        let end = start
            .checked_add(n)
            .filter(|&e| e <= self.buf.len())
            .ok_or_else(|| self.err(start, format!("message ends inside {what} ({n} bytes announced, {} left)", self.buf.len() - start)))?;
        self.pos = end;
        Ok(&self.buf[start..end])
    }

    /// The next field: (its offset in the message, number, value); `None`
    /// at the end of the message.
    fn field(&mut self) -> Result<Option<(usize, u32, Value<'a>)>, WireError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let at = self.pos;
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 || number > (1 << 29) - 1 {
            return Err(self.err(at, format!("bad field number {number}")));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => Value::Fixed64(u64::from_le_bytes(self.take(8, "a fixed64 field")?.try_into().map_err(|_| self.err(at, "fixed64"))?)),
            2 => {
                let n = self.varint()?;
                let n = usize::try_from(n).map_err(|_| self.err(at, format!("length {n} too large")))?;
                Value::Bytes(self.take(n, "a length-delimited field")?)
            }
            5 => Value::Fixed32(u32::from_le_bytes(self.take(4, "a fixed32 field")?.try_into().map_err(|_| self.err(at, "fixed32"))?)),
            t => {
                return Err(
                    self.err(at, format!("field {number} has wire type {t}, which gem5 traces do not use (groups are not supported)"))
                )
            }
        };
        Ok(Some((at, number as u32, value)))
    }
}

fn want_u64(at: usize, name: &str, v: &Value) -> Result<u64, WireError> {
    match v {
        Value::Varint(x) => Ok(*x),
        other => Err(WireError { at, msg: format!("field {name} is {}, expected a varint", other.kind()) }),
    }
}

fn want_u32(at: usize, name: &str, v: &Value) -> Result<u32, WireError> {
    let x = want_u64(at, name, v)?;
    u32::try_from(x).map_err(|_| WireError { at, msg: format!("field {name} = {x} does not fit uint32") })
}

fn want_string(at: usize, name: &str, v: &Value) -> Result<String, WireError> {
    match v {
        Value::Bytes(b) => Ok(String::from_utf8_lossy(b).into_owned()),
        other => Err(WireError { at, msg: format!("field {name} is {}, expected a string", other.kind()) }),
    }
}

/// gem5's `ProtoMessage::PacketHeader`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PacketHeader {
    pub obj_id: String,
    pub ver: u32,
    pub tick_freq: u64,
    pub id_strings: Vec<(u32, String)>,
}

/// gem5's `ProtoMessage::Packet` (the fields spmsim looks at).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Packet {
    pub tick: Option<u64>,
    pub cmd: u32,
    pub addr: u64,
    pub size: u32,
    pub flags: Option<u32>,
    pub pkt_id: Option<u64>,
    pub pc: Option<u64>,
}

fn decode_header(buf: &[u8]) -> Result<PacketHeader, WireError> {
    let mut h = PacketHeader::default();
    let mut w = Wire::new(buf);
    while let Some((at, n, v)) = w.field()? {
        match n {
            1 => h.obj_id = want_string(at, "obj_id", &v)?,
            2 => h.ver = want_u32(at, "ver", &v)?,
            3 => h.tick_freq = want_u64(at, "tick_freq", &v)?,
            4 => {
                let Value::Bytes(entry) = v else {
                    return Err(WireError { at, msg: format!("field id_strings is {}, expected a message", v.kind()) });
                };
                // The entry's bytes end where the reader stands.
                let base = w.pos - entry.len();
                let mut e = Wire::new(entry);
                let (mut key, mut value) = (0, String::new());
                while let Some((eat, en, ev)) = e.field().map_err(|x| WireError { at: base + x.at, msg: x.msg })? {
                    match en {
                        1 => key = want_u32(base + eat, "id_strings.key", &ev)?,
                        2 => value = want_string(base + eat, "id_strings.value", &ev)?,
                        _ => {}
                    }
                }
                h.id_strings.push((key, value));
            }
            _ => {}
        }
    }
    Ok(h)
}

fn decode_packet(buf: &[u8]) -> Result<Packet, WireError> {
    let mut p = Packet::default();
    let (mut cmd, mut addr, mut size) = (None, None, None);
    let mut w = Wire::new(buf);
    while let Some((at, n, v)) = w.field()? {
        match n {
            1 => p.tick = Some(want_u64(at, "tick", &v)?),
            2 => cmd = Some(want_u32(at, "cmd", &v)?),
            3 => addr = Some(want_u64(at, "addr", &v)?),
            4 => size = Some(want_u32(at, "size", &v)?),
            5 => p.flags = Some(want_u32(at, "flags", &v)?),
            6 => p.pkt_id = Some(want_u64(at, "pkt_id", &v)?),
            7 => p.pc = Some(want_u64(at, "pc", &v)?),
            _ => {}
        }
    }
    let missing: Vec<&str> =
        [("cmd", cmd.is_none()), ("addr", addr.is_none()), ("size", size.is_none())].iter().filter(|x| x.1).map(|x| x.0).collect();
    if !missing.is_empty() {
        return Err(WireError { at: 0, msg: format!("packet lacks its required field(s) {}", missing.join(", ")) });
    }
    p.cmd = cmd.unwrap_or_default();
    p.addr = addr.unwrap_or_default();
    p.size = size.unwrap_or_default();
    Ok(p)
}

/// A command number with its name in recent gem5 releases, for messages.
pub fn describe_cmd(cmd: u32) -> String {
    match RECENT_NAMES.get(cmd as usize) {
        Some(name) => format!("{cmd} ({name} in recent gem5 numbering)"),
        None => format!("{cmd}"),
    }
}

// ---------------------------------------------------------------------------

pub struct Gem5Reader {
    path: PathBuf,
    header: TraceHeader,
    pub packet_header: PacketHeader,
    s: Stream,
    msg: Vec<u8>,
    packets: u64,
    records: u64,
    skipped: BTreeMap<u32, u64>,
    done: bool,
}

pub fn open(path: &Path) -> Result<Box<dyn RecordReader>, TraceError> {
    Ok(Box::new(Gem5Reader::open(path)?))
}

impl Gem5Reader {
    pub fn open(path: &Path) -> Result<Gem5Reader, TraceError> {
        let mut s = compress::open(path)?;
        let mut magic = [0u8; 4];
        let whole = read_record(path, &mut s, &mut magic)
            .map_err(|e| TraceError::new(path, Position::Offset(0), format!("not a gem5 packet trace: {}", e.msg)))?;
        if !whole || &magic != MAGIC {
            return Err(TraceError::new(
                path,
                Position::Offset(0),
                format!("not a gem5 packet trace: the file starts {magic:02x?}, not \"gem5\""),
            ));
        }
        let mut r = Gem5Reader {
            path: path.to_path_buf(),
            header: TraceHeader::new("gem5", AddressSpace::Virtual, false),
            packet_header: PacketHeader::default(),
            s,
            msg: Vec::new(),
            packets: 0,
            records: 0,
            skipped: BTreeMap::new(),
            done: false,
        };
        let Some((start, body)) = r.message()? else {
            return Err(TraceError::new(path, Position::Offset(4), "gem5 trace has no PacketHeader after its magic bytes"));
        };
        let h = decode_header(&r.msg).map_err(|e| r.wire_err(start, body, "the PacketHeader", e))?;
        let mut ids: Vec<String> = h.id_strings.iter().take(8).map(|(k, v)| format!("{k}={v}")).collect();
        if h.id_strings.len() > 8 {
            ids.push(format!("... {} more", h.id_strings.len() - 8));
        }
        r.header.source = format!(
            "gem5 packet trace by `{}`, tick_freq {} ticks/s, trace format version {}{}; ReadReq/WriteReq packets only, one instruction each",
            h.obj_id,
            h.tick_freq,
            h.ver,
            if ids.is_empty() { String::new() } else { format!(", id_strings {}", ids.join(", ")) }
        );
        r.packet_header = h;
        Ok(r)
    }

    /// Packets skipped, by command number.
    pub fn skipped(&self) -> &BTreeMap<u32, u64> {
        &self.skipped
    }

    /// Packets read so far, skipped ones included.
    pub fn packets(&self) -> u64 {
        self.packets
    }

    fn err(&self, at: u64, msg: impl Into<String>) -> TraceError {
        TraceError::new(&self.path, Position::Offset(at), msg)
    }

    fn wire_err(&self, start: u64, body: u64, what: &str, e: WireError) -> TraceError {
        self.err(body + e.at as u64, format!("{what} (message at byte {start}): {}", e.msg))
    }

    fn byte(&mut self) -> Result<Option<u8>, TraceError> {
        let mut b = [0u8; 1];
        Ok(read_record(&self.path, &mut self.s, &mut b)?.then_some(b[0]))
    }

    /// Read the next length-prefixed message into `self.msg`; returns the
    /// offsets of its length prefix and body, `None` at a clean end.
    fn message(&mut self) -> Result<Option<(u64, u64)>, TraceError> {
        let start = self.s.offset;
        let mut len = 0u64;
        for i in 0..10 {
            let b = match self.byte()? {
                Some(b) => b,
                None if i == 0 => return Ok(None),
                None => return Err(self.err(start, "the file ends inside a message's length prefix; the trace is truncated")),
            };
            len |= u64::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                break;
            }
            if i == 9 {
                return Err(self.err(start, "message length prefix longer than 10 bytes"));
            }
        }
        if len > MAX_MESSAGE {
            return Err(self.err(start, format!("message length {len} is implausible (damaged trace?)")));
        }
        let body = self.s.offset;
        self.msg.resize(len as usize, 0);
        if len > 0 {
            let whole = read_record(&self.path, &mut self.s, &mut self.msg).map_err(|e| {
                TraceError::new(&self.path, Position::Offset(start), format!("message at byte {start} of {len} bytes: {}", e.msg))
            })?;
            if !whole {
                return Err(self
                    .err(start, format!("message at byte {start} announces {len} bytes but the file ends there; the trace is truncated")));
            }
        }
        Ok(Some((start, body)))
    }
}

impl RecordReader for Gem5Reader {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        while !self.done {
            let Some((start, body)) = self.message()? else {
                self.done = true;
                if self.records == 0 && self.packets > 0 {
                    let seen: Vec<String> = self.skipped.iter().map(|(c, n)| format!("{} x{n}", describe_cmd(*c))).collect();
                    return Err(self.err(
                        self.s.offset,
                        format!(
                            "none of the {} packets is a ReadReq ({READ_REQ}) or WriteReq ({WRITE_REQ}), the only gem5 commands spmsim reads; commands seen: {}. \
                             A trace taken below a cache holds cache traffic (fills, writebacks) rather than the program's accesses",
                            self.packets,
                            seen.join(", ")
                        ),
                    ));
                }
                return Ok(None);
            };
            let p = decode_packet(&self.msg).map_err(|e| self.wire_err(start, body, &format!("packet {}", self.packets), e))?;
            self.packets += 1;
            let op = match p.cmd {
                READ_REQ => Op::Load,
                WRITE_REQ => Op::Store,
                c => {
                    *self.skipped.entry(c).or_default() += 1;
                    continue;
                }
            };
            if let Err(m) = super::check_access_size(p.size as u64) {
                return Err(self.err(start, format!("packet {} (message at byte {start}): {m}", self.packets - 1)));
            }
            if p.addr.checked_add(p.size as u64).is_none() {
                return Err(self.err(
                    start,
                    format!(
                        "packet {} (message at byte {start}): access at {:#x} of {} bytes wraps the address space",
                        self.packets - 1,
                        p.addr,
                        p.size
                    ),
                ));
            }
            self.records += 1;
            return Ok(Some(TraceRecord::mem(op, p.addr, p.size)));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A small protobuf encoder for the tests.
    fn varint(out: &mut Vec<u8>, mut v: u64) {
        while v >= 0x80 {
            out.push(v as u8 | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }
    fn vfield(out: &mut Vec<u8>, n: u32, v: u64) {
        varint(out, (n as u64) << 3);
        varint(out, v);
    }
    fn bfield(out: &mut Vec<u8>, n: u32, b: &[u8]) {
        varint(out, (n as u64) << 3 | 2);
        varint(out, b.len() as u64);
        out.extend_from_slice(b);
    }
    fn delimited(out: &mut Vec<u8>, msg: &[u8]) -> usize {
        let at = out.len();
        varint(out, msg.len() as u64);
        out.extend_from_slice(msg);
        at
    }
    fn packet(cmd: u64, addr: u64, size: u64) -> Vec<u8> {
        let mut m = Vec::new();
        vfield(&mut m, 1, 5000);
        vfield(&mut m, 2, cmd);
        vfield(&mut m, 3, addr);
        vfield(&mut m, 4, size);
        m
    }
    fn header() -> Vec<u8> {
        let mut h = Vec::new();
        bfield(&mut h, 1, b"system.monitor");
        vfield(&mut h, 3, 1_000_000_000_000);
        let mut e = Vec::new();
        vfield(&mut e, 1, 3);
        bfield(&mut e, 2, b"cpu.data");
        bfield(&mut h, 4, &e);
        h
    }

    /// The trace bytes and the offset of each packet message.
    fn trace(packets: &[Vec<u8>]) -> (Vec<u8>, Vec<usize>) {
        let mut t = MAGIC.to_vec();
        delimited(&mut t, &header());
        let at = packets.iter().map(|p| delimited(&mut t, p)).collect();
        (t, at)
    }

    fn temp(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spmsim-gem5-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn read_all(p: &Path) -> Result<Vec<TraceRecord>, TraceError> {
        let mut r = Gem5Reader::open(p)?;
        let mut v = Vec::new();
        while let Some(x) = r.next_record()? {
            v.push(x);
        }
        Ok(v)
    }

    #[test]
    fn packets_decode_and_only_readreq_writereq_become_records() {
        // Fields out of order, unknown fields of every wire type, a skipped command.
        let mut odd = Vec::new();
        vfield(&mut odd, 4, 8);
        varint(&mut odd, 99 << 3 | 1);
        odd.extend_from_slice(&7u64.to_le_bytes());
        vfield(&mut odd, 3, 0x8000_1238);
        varint(&mut odd, 98 << 3 | 5);
        odd.extend_from_slice(&7u32.to_le_bytes());
        bfield(&mut odd, 97, b"extra");
        vfield(&mut odd, 96, u64::MAX);
        vfield(&mut odd, 2, 4);
        vfield(&mut odd, 7, 0x40_1000);
        let (t, _) = trace(&[packet(1, 0x8000_0000, 64), packet(7, 0x8000_0040, 64), odd, packet(4, 0x1_0000_0000, 4)]);
        let p = temp("ok.trc", &t);
        let mut r = Gem5Reader::open(&p).unwrap();
        assert_eq!(
            r.packet_header,
            PacketHeader {
                obj_id: "system.monitor".into(),
                ver: 0,
                tick_freq: 1_000_000_000_000,
                id_strings: vec![(3, "cpu.data".into())]
            }
        );
        assert!(r.header().source.contains("system.monitor") && r.header().source.contains("1000000000000"), "{}", r.header().source);
        let mut got = Vec::new();
        while let Some(x) = r.next_record().unwrap() {
            got.push(x);
        }
        assert_eq!(
            got,
            vec![
                TraceRecord::mem(Op::Load, 0x8000_0000, 64),
                TraceRecord::mem(Op::Store, 0x8000_1238, 8),
                TraceRecord::mem(Op::Store, 0x1_0000_0000, 4)
            ]
        );
        assert_eq!(r.packets(), 4);
        assert_eq!(r.skipped().iter().collect::<Vec<_>>(), vec![(&7, &1)]);
    }

    #[test]
    fn truncated_traces_name_the_message_offset() {
        let (t, at) = trace(&[packet(1, 0x1000, 8), packet(4, 0x2000, 8), packet(1, 0x3000, 8)]);
        let last = at[2];
        // Cut inside the body, and right after the length prefix.
        for cut in [t.len() - 1, t.len() - 5, last + 1] {
            let p = temp("cut.trc", &t[..cut]);
            let e = read_all(&p).expect_err("truncated");
            assert_eq!(e.at, Position::Offset(last as u64), "cut at {cut}: {e}");
            assert!(e.msg.contains("truncated") || e.msg.contains("before the end"), "{e}");
        }
        // Cut inside a two-byte length prefix.
        let mut big = packet(1, 0x1000, 8);
        bfield(&mut big, 90, &[0; 200]);
        let (t, at) = trace(&[big]);
        let p = temp("cut2.trc", &t[..at[0] + 1]);
        let e = read_all(&p).unwrap_err();
        assert_eq!(e.at, Position::Offset(at[0] as u64), "{e}");
        assert!(e.msg.contains("length prefix"), "{e}");
        // Only the magic: no header.
        let e = read_all(&temp("magic.trc", b"gem5")).unwrap_err();
        assert_eq!(e.at, Position::Offset(4), "{e}");
    }

    #[test]
    fn malformed_messages_are_errors_with_offsets() {
        // Bad magic.
        let e = read_all(&temp("bad.trc", b"gem6\x00")).unwrap_err();
        assert_eq!(e.at, Position::Offset(0), "{e}");
        // Wire type 3 (group) at the second field of the packet.
        let mut m = Vec::new();
        vfield(&mut m, 2, 1);
        let field_at = m.len();
        varint(&mut m, 5 << 3 | 3);
        let (t, at) = trace(&[m]);
        let e = read_all(&temp("wt.trc", &t)).unwrap_err();
        assert_eq!(e.at, Position::Offset((at[0] + 1 + field_at) as u64), "{e}");
        assert!(e.msg.contains("wire type 3"), "{e}");
        // A varint of 11 bytes.
        let mut m = vec![2 << 3];
        m.extend_from_slice(&[0xff; 10]);
        m.push(0);
        let (t, at) = trace(&[m]);
        let e = read_all(&temp("vi.trc", &t)).unwrap_err();
        assert_eq!(e.at, Position::Offset((at[0] + 2) as u64), "{e}");
        // A length-delimited field longer than its message.
        let mut m = packet(1, 0, 8);
        varint(&mut m, 9 << 3 | 2);
        varint(&mut m, 50);
        m.extend_from_slice(b"short");
        let (t, _) = trace(&[m]);
        let e = read_all(&temp("len.trc", &t)).unwrap_err();
        assert!(e.msg.contains("message ends inside a length-delimited field"), "{e}");
        // Required field missing, wrong wire type for cmd, size 0.
        let mut m = Vec::new();
        vfield(&mut m, 2, 1);
        vfield(&mut m, 3, 0x40);
        let (t, at) = trace(&[packet(1, 0, 8), m]);
        let e = read_all(&temp("req.trc", &t)).unwrap_err();
        assert_eq!(e.at, Position::Offset((at[1] + 1) as u64), "{e}");
        assert!(e.msg.contains("size") && !e.msg.contains("cmd"), "{e}");
        let mut m = Vec::new();
        bfield(&mut m, 2, b"x");
        let (t, _) = trace(&[m]);
        assert!(read_all(&temp("wt2.trc", &t)).unwrap_err().msg.contains("cmd is length-delimited"));
        let (t, at) = trace(&[packet(4, 0x40, 0)]);
        let e = read_all(&temp("zero.trc", &t)).unwrap_err();
        assert_eq!(e.at, Position::Offset(at[0] as u64), "{e}");
        // An access over the bound (4 GiB, or one byte more than 4096), and one at it.
        for size in [u32::MAX as u64, 4097] {
            let (t, at) = trace(&[packet(1, 0x40, 8), packet(1, 0x40, size)]);
            let e = read_all(&temp("big.trc", &t)).unwrap_err();
            assert_eq!(e.at, Position::Offset(at[1] as u64), "{e}");
            assert!(e.msg.contains(&format!("access of {size} bytes")), "{e}");
        }
        let (t, _) = trace(&[packet(4, 0x40, 4096)]);
        assert_eq!(read_all(&temp("page.trc", &t)).unwrap()[0].size, 4096);
        // An absurd message length.
        let mut t = MAGIC.to_vec();
        varint(&mut t, 1 << 40);
        let e = read_all(&temp("huge.trc", &t)).unwrap_err();
        assert_eq!(e.at, Position::Offset(4), "{e}");
    }

    #[test]
    fn a_trace_with_no_readreq_or_writereq_is_an_error_not_an_empty_workload() {
        let (t, _) = trace(&[packet(25, 0x40, 64), packet(7, 0x80, 64), packet(25, 0xc0, 64)]);
        let e = read_all(&temp("cache.trc", &t)).unwrap_err();
        assert!(e.msg.contains("none of the 3 packets") && e.msg.contains("25 (ReadSharedReq in recent gem5 numbering) x2"), "{e}");
        // A trace with a header and no packets at all is simply empty.
        let (t, _) = trace(&[]);
        assert_eq!(read_all(&temp("empty.trc", &t)).unwrap(), vec![]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Damaged input of any shape is an error or a trace, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), keep in 0usize..400) {
            let (mut t, _) = trace(&[packet(1, 0x40, 8), packet(4, 0x80, 8)]);
            t.truncate(keep.max(4));
            t.extend_from_slice(&body);
            let p = temp(&format!("fuzz-{keep}.trc"), &t);
            let _ = read_all(&p);
        }
    }
}
