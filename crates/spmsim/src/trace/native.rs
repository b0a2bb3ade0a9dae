//! spmsim's native trace format, version 1 (documented in
//! `docs/trace-format.md`):
//!
//! ```text
//!  "SPMTRACE"  u16 version  u32 header length  header (JSON)   -- plain
//!  zstd frame: record* end                                    -- compressed
//!  record: flags byte [varint gap] [zigzag varint addr delta] [varint size] [u64 value]
//!  end:    0x07 varint record-count
//! ```

use super::compress::{read_record, Counted, Stream};
use super::{Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use crate::workload::Op;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"SPMTRACE";
pub const VERSION: u16 = 1;

const OP_MASK: u8 = 0x07;
const SAME_INSTRUCTION: u8 = 0x08;
const HAS_VALUE: u8 = 0x10;
const SIZE_8: u8 = 0x20;
const GAP_0: u8 = 0x40;
const END: u8 = 0x07;

fn op_code(r: &TraceRecord) -> u8 {
    match (r.op, r.log) {
        (Op::Load, _) => 0,
        (Op::Store, false) => 1,
        (Op::Store, true) => 2,
        (Op::Fence, _) => 3,
        (Op::TxBegin, _) => 4,
        (Op::TxCommit, _) => 5,
        (Op::Epoch, _) => 6,
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Writes a native trace to a temporary beside PATH and renames it into
/// place on [`NativeWriter::finish`], so a trace that exists is complete;
/// dropped unfinished (an error), it removes the temporary
/// ([`crate::output::PendingFile`]).
pub struct NativeWriter {
    enc: zstd::stream::write::Encoder<'static, std::io::BufWriter<File>>,
    pending: crate::output::PendingFile,
    prev_addr: u64,
    records: u64,
    buf: Vec<u8>,
}

impl NativeWriter {
    pub fn create(path: &Path, header: &TraceHeader) -> std::io::Result<NativeWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let (pending, f) = crate::output::PendingFile::create(path).map_err(|e| std::io::Error::other(e.message))?;
        let mut f = std::io::BufWriter::new(f);
        let h = serde_json::to_vec(header).map_err(std::io::Error::other)?;
        f.write_all(MAGIC)?;
        f.write_all(&VERSION.to_le_bytes())?;
        f.write_all(&(h.len() as u32).to_le_bytes())?;
        f.write_all(&h)?;
        let enc = zstd::stream::write::Encoder::new(f, 3)?;
        Ok(NativeWriter { enc, pending, prev_addr: 0, records: 0, buf: Vec::with_capacity(32) })
    }

    pub fn write(&mut self, r: &TraceRecord) -> std::io::Result<()> {
        let b = &mut self.buf;
        b.clear();
        let mut flags = op_code(r);
        if r.same_instruction {
            flags |= SAME_INSTRUCTION;
        }
        if r.value.is_some() {
            flags |= HAS_VALUE;
        }
        let mem = r.is_memory();
        if mem && r.size == 8 {
            flags |= SIZE_8;
        }
        if r.gap == 0 {
            flags |= GAP_0;
        }
        b.push(flags);
        if r.gap != 0 {
            put_varint(b, r.gap as u64);
        }
        if mem {
            put_varint(b, zigzag(r.addr.wrapping_sub(self.prev_addr) as i64));
            self.prev_addr = r.addr;
            if r.size != 8 {
                put_varint(b, r.size as u64);
            }
        }
        if let Some(v) = r.value {
            b.extend_from_slice(&v.to_le_bytes());
        }
        self.records += 1;
        self.enc.write_all(b)
    }

    /// Close the stream and move the file into place; returns the record count.
    pub fn finish(mut self) -> std::io::Result<u64> {
        self.buf.clear();
        self.buf.push(END);
        put_varint(&mut self.buf, self.records);
        self.enc.write_all(&self.buf)?;
        let mut f = self.enc.finish()?;
        f.flush()?;
        f.get_ref().sync_all()?;
        drop(f);
        self.pending.publish().map_err(|e| std::io::Error::other(e.message))?;
        Ok(self.records)
    }
}

pub struct NativeReader {
    path: PathBuf,
    header: TraceHeader,
    s: Stream,
    prev_addr: u64,
    records: u64,
    ended: bool,
}

impl NativeReader {
    pub fn open(path: &Path) -> Result<NativeReader, TraceError> {
        let err = |at: u64, m: String| TraceError::new(path, Position::Offset(at), m);
        let mut f = BufReader::with_capacity(1 << 16, File::open(path).map_err(|e| TraceError::new(path, Position::Unknown, e.to_string()))?);
        let mut fixed = [0u8; 14];
        f.read_exact(&mut fixed).map_err(|_| err(0, "file too short for a native trace header".into()))?;
        if &fixed[..8] != MAGIC {
            return Err(err(0, "not a native spmsim trace (bad magic)".into()));
        }
        let version = u16::from_le_bytes([fixed[8], fixed[9]]);
        if version != VERSION {
            return Err(err(8, format!("native trace version {version}; this spmsim reads version {VERSION}")));
        }
        let hlen = u32::from_le_bytes(fixed[10..14].try_into().unwrap()) as usize;
        if hlen > 1 << 20 {
            return Err(err(10, format!("header length {hlen} is implausible")));
        }
        let mut h = vec![0; hlen];
        f.read_exact(&mut h).map_err(|_| err(14, "truncated header".into()))?;
        let header: TraceHeader = serde_json::from_slice(&h).map_err(|e| err(14, format!("bad header: {e}")))?;
        let body: Box<dyn BufRead + Send> = Box::new(f);
        let dec = zstd::stream::read::Decoder::with_buffer(body).map_err(|e| err(14 + hlen as u64, e.to_string()))?;
        let s = Counted { inner: Box::new(BufReader::with_capacity(1 << 16, dec)) as Box<dyn BufRead + Send>, offset: 0 };
        Ok(NativeReader { path: path.to_path_buf(), header, s, prev_addr: 0, records: 0, ended: false })
    }

    fn byte(&mut self, what: &str) -> Result<u8, TraceError> {
        let mut b = [0u8; 1];
        if !read_record(&self.path, &mut self.s, &mut b)? {
            return Err(self.err(format!("trace ends inside a record (reading {what}); the file is truncated")));
        }
        Ok(b[0])
    }

    fn varint(&mut self, what: &str) -> Result<u64, TraceError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte(what)?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.err(format!("varint too long in {what}")))
    }

    fn err(&self, m: String) -> TraceError {
        TraceError::new(&self.path, Position::Offset(self.s.offset), format!("{m} (offset in the decompressed record stream)"))
    }
}

impl RecordReader for NativeReader {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.ended {
            return Ok(None);
        }
        let mut b = [0u8; 1];
        if !read_record(&self.path, &mut self.s, &mut b)? {
            return Err(self.err("trace ends without its end record; the file is truncated".into()));
        }
        let flags = b[0];
        if flags & 0x80 != 0 {
            return Err(self.err(format!("bad record flags {flags:#04x}")));
        }
        let op = match flags & OP_MASK {
            0 => (Op::Load, false),
            1 => (Op::Store, false),
            2 => (Op::Store, true),
            3 => (Op::Fence, false),
            4 => (Op::TxBegin, false),
            5 => (Op::TxCommit, false),
            6 => (Op::Epoch, false),
            _ => {
                if flags != END {
                    return Err(self.err(format!("bad end record flags {flags:#04x}")));
                }
                let n = self.varint("the record count")?;
                if n != self.records {
                    return Err(self.err(format!("end record says {n} records, read {}", self.records)));
                }
                self.ended = true;
                return Ok(None);
            }
        };
        let gap = if flags & GAP_0 != 0 { 0 } else { self.varint("a gap")? };
        let gap = u32::try_from(gap).map_err(|_| self.err(format!("gap {gap} does not fit 32 bits")))?;
        let mut r = TraceRecord::marker(op.0).after(gap);
        r.log = op.1;
        r.same_instruction = flags & SAME_INSTRUCTION != 0;
        if r.is_memory() {
            let d = unzigzag(self.varint("an address")?);
            r.addr = self.prev_addr.wrapping_add(d as u64);
            self.prev_addr = r.addr;
            r.size = if flags & SIZE_8 != 0 { 8 } else { self.varint("a size")? as u32 };
            if r.size == 0 {
                return Err(self.err("memory record of size 0".into()));
            }
        }
        if flags & HAS_VALUE != 0 {
            let mut v = [0u8; 8];
            if !read_record(&self.path, &mut self.s, &mut v)? {
                return Err(self.err("trace ends inside a value; the file is truncated".into()));
            }
            r.value = Some(u64::from_le_bytes(v));
        }
        self.records += 1;
        Ok(Some(r))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::AddressSpace;

    fn sample() -> Vec<TraceRecord> {
        let mut v = vec![
            TraceRecord::marker(Op::TxBegin),
            TraceRecord::mem(Op::Load, 0x7fff_0000_1000, 8).after(12),
            TraceRecord { value: Some(0xdead_beef), log: true, ..TraceRecord::mem(Op::Store, 0x40, 8) },
            TraceRecord { same_instruction: true, ..TraceRecord::mem(Op::Store, 0x10, 32) },
            TraceRecord::marker(Op::Fence).after(3),
            TraceRecord::marker(Op::Epoch),
            TraceRecord::marker(Op::TxCommit).after(u32::MAX),
        ];
        v.push(TraceRecord::mem(Op::Load, 0, 1));
        v
    }

    #[test]
    fn records_round_trip_and_truncation_is_reported() {
        let dir = std::env::temp_dir().join(format!("spmsim-native-{}", std::process::id()));
        let p = dir.join("t.trace");
        let mut h = TraceHeader::new("native", AddressSpace::Physical, true);
        h.persistent_ranges = vec![(0, 4096)];
        let mut w = NativeWriter::create(&p, &h).unwrap();
        for r in sample() {
            w.write(&r).unwrap();
        }
        assert_eq!(w.finish().unwrap(), 8);
        let mut r = NativeReader::open(&p).unwrap();
        assert_eq!(r.header(), &h);
        let mut got = Vec::new();
        while let Some(x) = r.next_record().unwrap() {
            got.push(x);
        }
        assert_eq!(got, sample());
        // Cut the file short: the reader must fail with an offset, not panic.
        let bytes = std::fs::read(&p).unwrap();
        for cut in [bytes.len() - 3, 20, 10] {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let res = NativeReader::open(&p).and_then(|mut r| loop {
                if r.next_record()?.is_none() {
                    break Ok(());
                }
            });
            let e = res.expect_err("truncated trace must not read cleanly");
            assert!(matches!(e.at, Position::Offset(_)), "{e}");
        }
        std::fs::remove_dir_all(dir).ok();
    }
}
