//! spmsim's native trace format, version 2 (documented in
//! `docs/trace-format.md`):
//!
//! ```text
//!  "SPMTRACE"  u16 version  u32 header length  header (JSON)  u32 CRC-32  -- plain
//!  chunk*: u32 compressed length  u32 record bytes  u32 CRC-32  zstd frame
//!  records (inside the chunks): record* end
//!  record: flags byte [varint gap] [zigzag varint addr delta] [varint size] [u64 value]
//!  end:    0x80 varint record-count
//! ```
//!
//! Every byte of the file is covered by a checksum that is verified before
//! anything it covers is used: the header's CRC-32 before the header is
//! parsed, a chunk's CRC-32 (over its length fields and its compressed
//! bytes) before it is decompressed, so damage anywhere is an error naming
//! the byte offset, and no damaged length can make the reader allocate or
//! loop without bound. Each zstd frame also carries zstd's own content
//! checksum.

use super::compress::{self, Compression, Stream};
use super::event::Op;
use super::{check_access_size, Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"SPMTRACE";
pub const VERSION: u16 = 2;

/// Record bytes per chunk at most (before compression). A chunk is held in
/// memory whole while its records are read.
pub const CHUNK_BYTES: usize = 1 << 20;
/// The header JSON is at most this long.
const MAX_HEADER: usize = 1 << 20;
/// Length fields and checksum in front of each chunk.
const CHUNK_HEAD: usize = 12;

const OP_MASK: u8 = 0x07;
const SAME_INSTRUCTION: u8 = 0x08;
const HAS_VALUE: u8 = 0x10;
const SIZE_8: u8 = 0x20;
const GAP_0: u8 = 0x40;
const END: u8 = 0x80;
const OP_COMPUTE: u8 = 7;
/// The longest record: flags, gap, address, size varints and a value.
const MAX_RECORD: usize = 1 + 5 + 10 + 5 + 8;

fn op_code(r: &TraceRecord) -> u8 {
    match (r.op, r.log) {
        (Op::Load, _) => 0,
        (Op::Store, false) => 1,
        (Op::Store, true) => 2,
        (Op::Fence, _) => 3,
        (Op::TxBegin, _) => 4,
        (Op::TxCommit, _) => 5,
        (Op::Epoch, _) => 6,
        (Op::Compute, _) => OP_COMPUTE,
    }
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

pub(crate) fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

fn crc32(parts: &[&[u8]]) -> u32 {
    let mut c = flate2::Crc::new();
    for p in parts {
        c.update(p);
    }
    c.sum()
}

/// The largest zstd frame a chunk of [`CHUNK_BYTES`] can compress to.
fn max_compressed() -> usize {
    zstd::zstd_safe::compress_bound(CHUNK_BYTES)
}

/// Why a record cannot be written (or was read wrongly), if it cannot.
fn invalid(r: &TraceRecord) -> Option<String> {
    if r.is_memory() {
        if let Err(e) = check_access_size(r.size as u64) {
            return Some(e);
        }
        if r.addr.checked_add(r.size as u64).is_none() {
            return Some(format!("access at {:#x} of {} bytes wraps the address space", r.addr, r.size));
        }
    }
    if r.value.is_some() && r.op != Op::Store {
        return Some(format!("a value on a {:?} record; only stores carry values", r.op));
    }
    if r.op == Op::Compute && (r.gap == 0 || r.same_instruction) {
        return Some("a compute record must carry instructions of its own (gap 1 or more, not same-instruction)".into());
    }
    None
}

/// Writes a native trace to a temporary beside PATH and renames it into
/// place on [`NativeWriter::finish`], so a trace that exists is complete;
/// dropped unfinished (an error), it removes the temporary
/// ([`crate::util::output::PendingFile`]).
pub struct NativeWriter {
    file: std::io::BufWriter<File>,
    zstd: zstd::bulk::Compressor<'static>,
    pending: crate::util::output::PendingFile,
    prev_addr: u64,
    records: u64,
    /// Encoded records of the chunk being filled.
    chunk: Vec<u8>,
    buf: Vec<u8>,
}

impl NativeWriter {
    pub fn create(path: &Path, header: &TraceHeader) -> std::io::Result<NativeWriter> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let h = serde_json::to_vec(header).map_err(std::io::Error::other)?;
        let mut fixed = Vec::with_capacity(14 + h.len());
        fixed.extend_from_slice(MAGIC);
        fixed.extend_from_slice(&VERSION.to_le_bytes());
        fixed.extend_from_slice(&(h.len() as u32).to_le_bytes());
        fixed.extend_from_slice(&h);
        let mut zstd = zstd::bulk::Compressor::new(3)?;
        zstd.set_parameter(zstd::zstd_safe::CParameter::ChecksumFlag(true))?;
        let (pending, f) = crate::util::output::PendingFile::create(path).map_err(|e| std::io::Error::other(e.message))?;
        let mut file = std::io::BufWriter::new(f);
        file.write_all(&fixed)?;
        file.write_all(&crc32(&[&fixed]).to_le_bytes())?;
        Ok(NativeWriter {
            file,
            zstd,
            pending,
            prev_addr: 0,
            records: 0,
            chunk: Vec::with_capacity(CHUNK_BYTES),
            buf: Vec::with_capacity(MAX_RECORD),
        })
    }

    /// Append one record; a record the format cannot hold (see the format
    /// document) is an `InvalidInput` error.
    pub fn write(&mut self, r: &TraceRecord) -> std::io::Result<()> {
        if let Some(m) = invalid(r) {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("record {}: {m}", self.records)));
        }
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
        self.append()
    }

    /// Move the encoded record in `buf` into the chunk, writing the chunk
    /// out first if the record would not fit.
    fn append(&mut self) -> std::io::Result<()> {
        if self.chunk.len() + self.buf.len() > CHUNK_BYTES {
            self.flush_chunk()?;
        }
        self.chunk.extend_from_slice(&self.buf);
        Ok(())
    }

    fn flush_chunk(&mut self) -> std::io::Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let z = self.zstd.compress(&self.chunk)?;
        let mut lengths = [0u8; 8];
        lengths[..4].copy_from_slice(&(z.len() as u32).to_le_bytes());
        lengths[4..].copy_from_slice(&(self.chunk.len() as u32).to_le_bytes());
        self.file.write_all(&lengths)?;
        self.file.write_all(&crc32(&[&lengths, &z]).to_le_bytes())?;
        self.file.write_all(&z)?;
        self.chunk.clear();
        Ok(())
    }

    /// Close the trace and move the file into place; returns the record
    /// count. An instruction stream beside it (of an earlier trace of the
    /// same name) is removed: this trace has none.
    pub fn finish(self) -> std::io::Result<u64> {
        let sealed = self.seal()?;
        let (records, dest) = (sealed.records, sealed.pending.dest().to_path_buf());
        sealed.publish()?;
        super::insn::remove_stale(&dest)?;
        Ok(records)
    }

    /// Close the trace and sync it under its temporary name, to be moved
    /// into place by [`SealedTrace::publish`] (after its instruction
    /// stream, which records the digest of its bytes).
    pub fn seal(mut self) -> std::io::Result<SealedTrace> {
        self.buf.clear();
        self.buf.push(END);
        put_varint(&mut self.buf, self.records);
        self.append()?;
        self.flush_chunk()?;
        self.file.flush()?;
        self.file.get_ref().sync_all()?;
        drop(self.file);
        Ok(SealedTrace { pending: self.pending, records: self.records })
    }
}

/// A native trace written in full, not yet under its final name.
pub struct SealedTrace {
    pending: crate::util::output::PendingFile,
    pub records: u64,
}

impl SealedTrace {
    /// The file as written, under its temporary name.
    pub fn written(&self) -> &Path {
        self.pending.written()
    }

    /// Move the trace into place.
    pub fn publish(self) -> std::io::Result<()> {
        self.pending.publish().map_err(|e| std::io::Error::other(e.message))
    }
}

/// Reads a native trace, plain or inside an xz, gzip or zstd file.
pub struct NativeReader {
    path: PathBuf,
    header: TraceHeader,
    s: Stream,
    /// Said after every offset when the file is compressed as a whole.
    offsets_in: &'static str,
    zstd: zstd::bulk::Decompressor<'static>,
    /// The records of the current chunk, checked and decompressed.
    chunk: Vec<u8>,
    pos: usize,
    /// Where the current chunk starts in the (decompressed) file.
    chunk_at: u64,
    prev_addr: u64,
    records: u64,
    ended: bool,
}

impl NativeReader {
    pub fn open(path: &Path) -> Result<NativeReader, TraceError> {
        let (mut s, kind) = compress::open_kind(path)?;
        let offsets_in = match kind {
            Compression::Plain => "",
            Compression::Gzip => " (offset in the file after gzip decompression)",
            Compression::Xz => " (offset in the file after xz decompression)",
            Compression::Zstd => " (offset in the file after zstd decompression)",
        };
        let err = |at: u64, m: String| TraceError::new(path, Position::Offset(at), format!("{m}{offsets_in}"));
        let mut fixed = [0u8; 14];
        if !read_full(&mut s, &mut fixed).map_err(|e| err(0, e))? {
            return Err(err(0, "file too short for a native trace header".into()));
        }
        if &fixed[..8] != MAGIC {
            return Err(err(0, "not a native spmsim trace (bad magic)".into()));
        }
        let version = u16::from_le_bytes([fixed[8], fixed[9]]);
        if version == 1 {
            return Err(err(
                8,
                "native trace version 1, written by an older spmsim without checksums; this spmsim reads version 2 only. Write it again from its source (`spmsim trace record`, `trace convert` or `trace generate`; `spmsim suite record` re-records suite traces by itself)".into(),
            ));
        }
        if version != VERSION {
            return Err(err(8, format!("native trace version {version}; this spmsim reads version {VERSION}")));
        }
        let hlen = u32::from_le_bytes(fixed[10..14].try_into().expect("4 bytes")) as usize;
        if hlen > MAX_HEADER {
            return Err(err(10, format!("header length {hlen} is more than the {MAX_HEADER} bytes a header may have (damaged length?)")));
        }
        let mut h = vec![0; hlen + 4];
        if !read_full(&mut s, &mut h).map_err(|e| err(14, e))? || s.offset != 14 + hlen as u64 + 4 {
            return Err(err(14, format!("truncated header: the file ends inside its {hlen} bytes and checksum")));
        }
        let sum = u32::from_le_bytes(h[hlen..].try_into().expect("4 bytes"));
        if crc32(&[&fixed, &h[..hlen]]) != sum {
            return Err(err(0, format!("header checksum mismatch over bytes 0..{}: the header is damaged", 14 + hlen)));
        }
        let header: TraceHeader = serde_json::from_slice(&h[..hlen]).map_err(|e| err(14, format!("bad header: {e}")))?;
        let zstd = zstd::bulk::Decompressor::new().map_err(|e| err(0, format!("cannot start zstd: {e}")))?;
        let at = s.offset;
        Ok(NativeReader {
            path: path.to_path_buf(),
            header,
            s,
            offsets_in,
            zstd,
            chunk: Vec::new(),
            pos: 0,
            chunk_at: at,
            prev_addr: 0,
            records: 0,
            ended: false,
        })
    }

    fn file_err(&self, at: u64, m: String) -> TraceError {
        TraceError::new(&self.path, Position::Offset(at), format!("{m}{}", self.offsets_in))
    }

    /// Read, check and decompress the next chunk; `Ok(false)` at the end
    /// of the file.
    fn next_chunk(&mut self) -> Result<bool, TraceError> {
        let at = self.s.offset;
        let mut head = [0u8; CHUNK_HEAD];
        match read_full(&mut self.s, &mut head) {
            Ok(false) if self.s.offset == at => return Ok(false),
            Ok(false) => return Err(self.file_err(at, "the file ends inside a chunk header; it is truncated".into())),
            Err(e) => return Err(self.file_err(at, e)),
            Ok(true) => {}
        }
        let word = |i: usize| u32::from_le_bytes(head[i..i + 4].try_into().expect("4 bytes")) as usize;
        let (clen, ulen, sum) = (word(0), word(4), word(8) as u32);
        if clen == 0 || clen > max_compressed() {
            return Err(
                self.file_err(at, format!("chunk of {clen} compressed bytes; a chunk has 1 to {} (damaged length?)", max_compressed()))
            );
        }
        if ulen == 0 || ulen > CHUNK_BYTES {
            return Err(self.file_err(at + 4, format!("chunk of {ulen} record bytes; a chunk has 1 to {CHUNK_BYTES} (damaged length?)")));
        }
        let mut z = vec![0u8; clen];
        match read_full(&mut self.s, &mut z) {
            Ok(true) => {}
            Ok(false) => {
                return Err(self.file_err(
                    at,
                    format!("the file ends inside the chunk starting here ({clen} compressed bytes announced); it is truncated"),
                ))
            }
            Err(e) => return Err(self.file_err(at, e)),
        }
        if crc32(&[&head[..8], &z]) != sum {
            return Err(self.file_err(at, format!("checksum mismatch in the chunk at bytes {at}..{}: the trace is damaged", self.s.offset)));
        }
        self.chunk.clear();
        self.chunk.reserve(ulen);
        let got = self
            .zstd
            .decompress_to_buffer(&z[..], &mut self.chunk)
            .map_err(|e| self.file_err(at + CHUNK_HEAD as u64, format!("chunk does not decompress: {e}")))?;
        if got != ulen {
            return Err(self.file_err(at + CHUNK_HEAD as u64, format!("chunk decompresses to {got} bytes, its header says {ulen}")));
        }
        self.chunk_at = at;
        self.pos = 0;
        Ok(true)
    }

    /// An error in the record that starts at `rec` in the current chunk.
    fn rec_err(&self, rec: usize, m: String) -> TraceError {
        self.file_err(
            self.chunk_at,
            format!("record {} (byte {rec} of the {} record bytes of the chunk starting here): {m}", self.records, self.chunk.len()),
        )
    }

    fn byte(&mut self, rec: usize, what: &str) -> Result<u8, TraceError> {
        let b = *self.chunk.get(self.pos).ok_or_else(|| self.rec_err(rec, format!("the chunk ends inside the record (reading {what})")))?;
        self.pos += 1;
        Ok(b)
    }

    #[inline(always)]
    fn varint(&mut self, rec: usize, what: &str) -> Result<u64, TraceError> {
        // Most varints (gaps, sizes, near addresses) are one byte.
        if let Some(&b) = self.chunk.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(b as u64);
            }
        }
        self.varint_long(rec, what)
    }

    #[inline(never)]
    fn varint_long(&mut self, rec: usize, what: &str) -> Result<u64, TraceError> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte(rec, what)?;
            v |= ((b & 0x7f) as u64) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(self.rec_err(rec, format!("varint too long in {what}")))
    }

    /// After the end record: nothing may follow, in its chunk or after it.
    fn check_end(&mut self, rec: usize) -> Result<(), TraceError> {
        if self.pos != self.chunk.len() {
            return Err(self.rec_err(rec, format!("{} bytes follow the end record", self.chunk.len() - self.pos)));
        }
        let at = self.s.offset;
        let mut one = [0u8; 1];
        match self.s.read(&mut one) {
            Ok(0) => Ok(()),
            Ok(_) => Err(self.file_err(at, "data after the end of the trace".into())),
            Err(e) => Err(self.file_err(at, format!("read error after the end of the trace (damaged compressed file?): {e}"))),
        }
    }
}

/// Fill `buf`; `Ok(false)` if the stream ends first (how far it got is in
/// the stream's offset), `Err` with the reason on a read error.
fn read_full(s: &mut Stream, buf: &mut [u8]) -> Result<bool, String> {
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => return Ok(false),
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("read error (damaged or truncated compressed file?): {e}")),
        }
    }
    Ok(true)
}

impl RecordReader for NativeReader {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        if self.ended {
            return Ok(None);
        }
        if self.pos == self.chunk.len() && !self.next_chunk()? {
            return Err(self.file_err(self.s.offset, "the trace ends without its end record; the file is truncated".into()));
        }
        let rec = self.pos;
        let flags = self.byte(rec, "the flags")?;
        if flags == END {
            let n = self.varint(rec, "the record count")?;
            if n != self.records {
                return Err(self.rec_err(rec, format!("the end record says {n} records, {} were read", self.records)));
            }
            self.check_end(rec)?;
            self.ended = true;
            return Ok(None);
        }
        if flags & END != 0 {
            return Err(self.rec_err(rec, format!("bad record flags {flags:#04x}")));
        }
        let (op, log) = match flags & OP_MASK {
            0 => (Op::Load, false),
            1 => (Op::Store, false),
            2 => (Op::Store, true),
            3 => (Op::Fence, false),
            4 => (Op::TxBegin, false),
            5 => (Op::TxCommit, false),
            6 => (Op::Epoch, false),
            _ => (Op::Compute, false),
        };
        let gap = if flags & GAP_0 != 0 { 0 } else { self.varint(rec, "a gap")? };
        let gap = u32::try_from(gap).map_err(|_| self.rec_err(rec, format!("gap {gap} does not fit 32 bits")))?;
        let mut r = TraceRecord::marker(op).after(gap);
        r.log = log;
        r.same_instruction = flags & SAME_INSTRUCTION != 0;
        if r.is_memory() {
            let d = unzigzag(self.varint(rec, "an address")?);
            r.addr = self.prev_addr.wrapping_add(d as u64);
            self.prev_addr = r.addr;
            r.size = if flags & SIZE_8 != 0 {
                8
            } else {
                let size = self.varint(rec, "a size")?;
                u32::try_from(size).map_err(|_| self.rec_err(rec, format!("access of {size} bytes")))?
            };
        } else if flags & SIZE_8 != 0 {
            return Err(self.rec_err(rec, format!("bad record flags {flags:#04x}: a size on a record that is not a load or store")));
        }
        if flags & HAS_VALUE != 0 {
            let mut v = [0u8; 8];
            for b in &mut v {
                *b = self.byte(rec, "a value")?;
            }
            r.value = Some(u64::from_le_bytes(v));
        }
        if let Some(m) = invalid(&r) {
            return Err(self.rec_err(rec, m));
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
        v.push(TraceRecord::compute(7));
        v
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spmsim-native-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    fn write(p: &Path, h: &TraceHeader, recs: &[TraceRecord]) {
        let mut w = NativeWriter::create(p, h).unwrap();
        for r in recs {
            w.write(r).unwrap();
        }
        assert_eq!(w.finish().unwrap(), recs.len() as u64);
    }

    #[test]
    fn a_trace_written_without_a_stream_removes_the_stream_of_an_earlier_one() {
        let p = temp("over.trace");
        let stream = crate::trace::insn::path_for(&p);
        let h = TraceHeader::new("test", AddressSpace::Virtual, false);
        write(&p, &h, &sample());
        std::fs::write(&stream, b"the stream of the earlier trace").unwrap();
        // Sealed, not yet in place: the earlier trace and its stream stand.
        let mut w = NativeWriter::create(&p, &h).unwrap();
        w.write(&TraceRecord::compute(3)).unwrap();
        let sealed = w.seal().unwrap();
        assert!(stream.exists() && sealed.written() != p && sealed.written().exists());
        drop(sealed);
        assert!(stream.exists(), "an unfinished trace changes nothing");
        write(&p, &h, &sample());
        assert!(!stream.exists(), "the new trace has no stream");
    }

    fn read_all(p: &Path) -> Result<(TraceHeader, Vec<TraceRecord>), TraceError> {
        let mut r = NativeReader::open(p)?;
        let mut got = Vec::new();
        while let Some(x) = r.next_record()? {
            got.push(x);
        }
        Ok((r.header().clone(), got))
    }

    #[test]
    fn records_round_trip_and_truncation_is_reported() {
        let p = temp("t.trace");
        let mut h = TraceHeader::new("native", AddressSpace::Physical, true);
        h.persistent_ranges = vec![(0, 4096)];
        write(&p, &h, &sample());
        assert_eq!(read_all(&p).unwrap(), (h, sample()));
        // Cut the file short anywhere: the reader must fail with an offset, not panic.
        let bytes = std::fs::read(&p).unwrap();
        for cut in 0..bytes.len() {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let e = read_all(&p).expect_err("truncated trace must not read cleanly");
            assert!(matches!(e.at, Position::Offset(_)), "{e}");
        }
        // Bytes after the end of the trace are damage too.
        std::fs::write(&p, [&bytes[..], &[0]].concat()).unwrap();
        let e = read_all(&p).unwrap_err();
        assert!(e.msg.contains("after the end"), "{e}");
    }

    #[test]
    fn records_the_format_cannot_hold_are_refused_by_the_writer() {
        let p = temp("bad.trace");
        let h = TraceHeader::new("native", AddressSpace::Physical, true);
        let bad = [
            TraceRecord::mem(Op::Load, 0x1000, super::super::MAX_ACCESS_BYTES + 1),
            TraceRecord::mem(Op::Store, 0x1000, 0),
            TraceRecord::mem(Op::Load, u64::MAX - 3, 8),
            TraceRecord { value: Some(1), ..TraceRecord::marker(Op::Fence) },
            TraceRecord::compute(0),
        ];
        for r in bad {
            let mut w = NativeWriter::create(&p, &h).unwrap();
            let e = w.write(&r).expect_err("an invalid record must be refused");
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{r:?}: {e}");
        }
        // The largest access is fine.
        write(&p, &h, &[TraceRecord::mem(Op::Store, 0x1000, super::super::MAX_ACCESS_BYTES)]);
        assert_eq!(read_all(&p).unwrap().1.len(), 1);
    }

    #[test]
    fn many_chunks_read_back_and_a_damaged_chunk_names_its_offset() {
        let p = temp("big.trace");
        let h = TraceHeader::new("native", AddressSpace::Physical, true);
        // Values defeat compression, so the records span several chunks.
        let recs: Vec<TraceRecord> = (0..200_000u64)
            .map(|i| TraceRecord {
                value: Some(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                ..TraceRecord::mem(Op::Store, i * 8 % (1 << 30), 8).after((i % 5) as u32)
            })
            .collect();
        write(&p, &h, &recs);
        assert_eq!(read_all(&p).unwrap().1, recs);
        let mut bytes = std::fs::read(&p).unwrap();
        let hlen = u32::from_le_bytes(bytes[10..14].try_into().unwrap()) as usize;
        let first = 14 + hlen + 4;
        let clen = u32::from_le_bytes(bytes[first..first + 4].try_into().unwrap()) as usize;
        let second = first + CHUNK_HEAD + clen;
        assert!(second < bytes.len(), "the trace must have a second chunk");
        bytes[second + CHUNK_HEAD + 100] ^= 0x10;
        std::fs::write(&p, &bytes).unwrap();
        let mut r = NativeReader::open(&p).unwrap();
        let e = loop {
            match r.next_record() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("a damaged chunk must not read cleanly"),
                Err(e) => break e,
            }
        };
        assert_eq!(e.at, Position::Offset(second as u64), "{e}");
        assert!(e.msg.contains("checksum mismatch"), "{e}");
    }

    #[test]
    fn a_native_trace_inside_gzip_xz_or_zstd_reads_like_the_plain_file() {
        let p = temp("w.trace");
        let h = TraceHeader::new("native", AddressSpace::Physical, true);
        write(&p, &h, &sample());
        let plain = std::fs::read(&p).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&plain).unwrap();
        let mut xz = xz2::write::XzEncoder::new(Vec::new(), 6);
        xz.write_all(&plain).unwrap();
        let wrapped = [("gz", gz.finish().unwrap()), ("xz", xz.finish().unwrap()), ("zst", zstd::encode_all(&plain[..], 3).unwrap())];
        for (ext, bytes) in wrapped {
            let w = temp(&format!("w.trace.{ext}"));
            std::fs::write(&w, &bytes).unwrap();
            assert_eq!(crate::trace::detect(&w).unwrap(), crate::trace::Format::Native, "{ext}");
            assert_eq!(read_all(&w).unwrap(), (h.clone(), sample()), "{ext}");
            // Damage inside the wrapped trace is still found, and the offset says where it counts.
            let mut inner = plain.clone();
            let last = inner.len() - 2;
            inner[last] ^= 1;
            let rewrapped = zstd::encode_all(&inner[..], 3).unwrap();
            std::fs::write(&w, rewrapped).unwrap();
            let e = read_all(&w).unwrap_err();
            assert!(e.msg.contains("after zstd decompression"), "{e}");
        }
    }

    /// A trace whose one chunk holds `records` as given, checksums right:
    /// what a writer that skipped the record checks would produce.
    fn raw(records: &[u8]) -> Vec<u8> {
        let h = serde_json::to_vec(&TraceHeader::new("native", AddressSpace::Physical, true)).unwrap();
        let mut out = [&MAGIC[..], &VERSION.to_le_bytes(), &(h.len() as u32).to_le_bytes(), &h].concat();
        out.extend_from_slice(&crc32(&[&out]).to_le_bytes());
        let z = zstd::bulk::compress(records, 3).unwrap();
        let lengths = [(z.len() as u32).to_le_bytes(), (records.len() as u32).to_le_bytes()].concat();
        out.extend_from_slice(&lengths);
        out.extend_from_slice(&crc32(&[&lengths, &z]).to_le_bytes());
        out.extend_from_slice(&z);
        out
    }

    #[test]
    fn records_no_writer_makes_are_errors_naming_the_chunk() {
        let p = temp("raw.trace");
        let mut huge = vec![GAP_0, 0];
        put_varint(&mut huge, u32::MAX as u64);
        let mut over = vec![GAP_0 | 1, 0];
        put_varint(&mut over, 4097);
        let mut too_long = vec![GAP_0, 0];
        put_varint(&mut too_long, 1 << 40);
        let cases: [(Vec<u8>, &str); 7] = [
            (huge, "access of 4294967295 bytes"),
            (over, "access of 4097 bytes"),
            (too_long, "access of 1099511627776 bytes"),
            (vec![GAP_0 | 3 | HAS_VALUE, 1, 2, 3, 4, 5, 6, 7, 8], "only stores carry values"),
            (vec![GAP_0 | 3 | SIZE_8], "a size on a record"),
            (vec![GAP_0 | OP_COMPUTE], "compute record"),
            (vec![0x81], "bad record flags"),
        ];
        let header_len = raw(&[]).len() - CHUNK_HEAD - zstd::bulk::compress(&[], 3).unwrap().len();
        for (rec, what) in cases {
            let mut body = rec.clone();
            body.extend_from_slice(&[END, 1]);
            std::fs::write(&p, raw(&body)).unwrap();
            let e = read_all(&p).unwrap_err();
            assert_eq!(e.at, Position::Offset(header_len as u64), "{rec:02x?}: {e}");
            assert!(e.msg.contains(what) && e.msg.contains("record 0 (byte 0"), "{rec:02x?}: {e}");
        }
        // The same bytes with a sane size read.
        let mut ok = vec![GAP_0, 0];
        put_varint(&mut ok, 4096);
        ok.extend_from_slice(&[END, 1]);
        std::fs::write(&p, raw(&ok)).unwrap();
        assert_eq!(read_all(&p).unwrap().1, vec![TraceRecord::mem(Op::Load, 0, 4096)]);
    }

    #[test]
    fn version_1_traces_are_refused_with_what_to_do() {
        let p = temp("v1.trace");
        let h = TraceHeader::new("native", AddressSpace::Physical, true);
        write(&p, &h, &sample());
        let mut bytes = std::fs::read(&p).unwrap();
        bytes[8..10].copy_from_slice(&1u16.to_le_bytes());
        std::fs::write(&p, &bytes).unwrap();
        let e = read_all(&p).unwrap_err();
        assert_eq!(e.at, Position::Offset(8));
        assert!(e.msg.contains("version 1") && e.msg.contains("suite record"), "{e}");
    }
}
