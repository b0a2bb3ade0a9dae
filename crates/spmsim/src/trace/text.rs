//! Text traces of DRAM simulators, read one line at a time:
//!
//! * Ramulator 2 `LoadStoreTrace`: `LD ADDR` or `ST ADDR` per line; the
//!   address is hex with a `0x`/`0X` prefix, else decimal (Ramulator 2
//!   src/frontend/impl/memory_trace/loadstore_trace.cpp).
//! * DRAMsim3: `ADDR OP CYCLE` per line; the address is always hex, with or
//!   without `0x` (DRAMsim3 reads it with `std::hex`), the cycle decimal
//!   (DRAMsim3 src/common.cc, `operator>>` for `Transaction`). DRAMsim3
//!   takes `WRITE`, `write`, `P_MEM_WR` and `BOFF` for writes; we accept
//!   those, and `READ`, `read` and DRAMSim2's read names `P_MEM_RD`,
//!   `P_FETCH`, `P_LOCK_RD`, `P_LOCK_WR` for reads, and reject any other
//!   word (DRAMsim3 would silently take it for a read).
//!
//! Blank lines and lines starting with `#` are skipped. Neither format has
//! access sizes or instruction counts: every access is 8 bytes and one
//! instruction with gap 0 (see `docs/trace-readers.md` for why the
//! DRAMsim3 cycle is not turned into a gap).

use super::compress::{self, Stream};
use super::event::Op;
use super::{AddressSpace, Position, RecordReader, TraceError, TraceHeader, TraceRecord};
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

/// The size given to every access: the traces have none.
pub const ACCESS_SIZE: u32 = 8;
/// A longer line is taken for binary data, not buffered.
const MAX_LINE: usize = 4096;

type Parse = fn(&str) -> Result<TraceRecord, String>;

pub struct TextReader {
    path: PathBuf,
    header: TraceHeader,
    s: Stream,
    buf: Vec<u8>,
    line: u64,
    parse: Parse,
}

pub fn open_ramulator(path: &Path) -> Result<Box<dyn RecordReader>, TraceError> {
    let mut h = TraceHeader::new("ramulator", AddressSpace::Virtual, false);
    h.source = format!(
        "Ramulator 2 load/store trace {} (no sizes: {ACCESS_SIZE}-byte accesses; no instruction counts: one instruction per access)",
        file_name(path)
    );
    Ok(Box::new(TextReader::open(path, h, parse_ramulator)?))
}

pub fn open_dramsim3(path: &Path) -> Result<Box<dyn RecordReader>, TraceError> {
    let mut h = TraceHeader::new("dramsim3", AddressSpace::Virtual, false);
    h.source =
        format!("DRAMsim3 trace {} (no sizes: {ACCESS_SIZE}-byte accesses; cycles ignored: one instruction per access)", file_name(path));
    Ok(Box::new(TextReader::open(path, h, parse_dramsim3)?))
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()
}

fn parse_hex(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("`{s}` is not a hex number"));
    }
    u64::from_str_radix(s, 16).map_err(|_| format!("`{s}` does not fit 64 bits"))
}

fn parse_dec(s: &str) -> Result<u64, String> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{s}` is not a decimal number"));
    }
    s.parse::<u64>().map_err(|_| format!("`{s}` does not fit 64 bits"))
}

fn strip_0x(s: &str) -> Option<&str> {
    s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))
}

/// `LD ADDR` / `ST ADDR` (Ramulator 2 `LoadStoreTrace`).
pub fn parse_ramulator(line: &str) -> Result<TraceRecord, String> {
    let mut w = line.split_whitespace();
    let (Some(op), Some(addr), None) = (w.next(), w.next(), w.next()) else {
        return Err("expected `LD ADDRESS` or `ST ADDRESS`".into());
    };
    let op = match op {
        "LD" => Op::Load,
        "ST" => Op::Store,
        other => return Err(format!("expected LD or ST, found `{other}`")),
    };
    let addr = match strip_0x(addr) {
        Some(hex) => parse_hex(hex),
        None => parse_dec(addr),
    }
    .map_err(|m| format!("bad address: {m} (hex needs a 0x prefix)"))?;
    Ok(TraceRecord::mem(op, addr, ACCESS_SIZE))
}

/// `ADDR OP CYCLE` (DRAMsim3).
pub fn parse_dramsim3(line: &str) -> Result<TraceRecord, String> {
    let mut w = line.split_whitespace();
    let (Some(addr), Some(op), Some(cycle), None) = (w.next(), w.next(), w.next(), w.next()) else {
        return Err("expected `ADDRESS READ|WRITE CYCLE`".into());
    };
    let addr = parse_hex(strip_0x(addr).unwrap_or(addr)).map_err(|m| format!("bad address: {m} (DRAMsim3 addresses are hex)"))?;
    let op = match op {
        "READ" | "read" | "P_MEM_RD" | "P_FETCH" | "P_LOCK_RD" | "P_LOCK_WR" => Op::Load,
        "WRITE" | "write" | "P_MEM_WR" | "BOFF" => Op::Store,
        other => return Err(format!("expected READ or WRITE, found `{other}`")),
    };
    parse_dec(cycle).map_err(|m| format!("bad cycle: {m}"))?;
    Ok(TraceRecord::mem(op, addr, ACCESS_SIZE))
}

impl TextReader {
    fn open(path: &Path, header: TraceHeader, parse: Parse) -> Result<TextReader, TraceError> {
        Ok(TextReader { path: path.to_path_buf(), header, s: compress::open(path)?, buf: Vec::with_capacity(128), line: 0, parse })
    }

    fn err(&self, msg: String) -> TraceError {
        TraceError::new(&self.path, Position::Line(self.line), msg)
    }
}

/// A line as it can be shown in a message.
fn snippet(s: &str) -> String {
    if s.chars().count() <= 80 {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(80).collect::<String>())
    }
}

impl RecordReader for TextReader {
    fn header(&self) -> &TraceHeader {
        &self.header
    }

    fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            self.buf.clear();
            let n = (&mut self.s).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut self.buf);
            self.line += 1;
            let n = n.map_err(|e| self.err(format!("read error (damaged or truncated compressed data?): {e}")))?;
            if n == 0 {
                self.line -= 1;
                return Ok(None);
            }
            if self.buf.last() == Some(&b'\n') {
                self.buf.pop();
                if self.buf.last() == Some(&b'\r') {
                    self.buf.pop();
                }
            } else if self.buf.len() > MAX_LINE {
                return Err(self.err(format!("line longer than {MAX_LINE} bytes: not a {} text trace", self.header.source_format)));
            }
            let text = std::str::from_utf8(&self.buf)
                .map_err(|_| self.err(format!("not UTF-8 text: not a {} text trace", self.header.source_format)))?;
            let t = text.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            return match (self.parse)(t) {
                Ok(r) => Ok(Some(r)),
                Err(m) => Err(self.err(format!("{m}, in `{}`", snippet(t)))),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn temp(name: &str, bytes: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("spmsim-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn read_all(r: Result<Box<dyn RecordReader>, TraceError>) -> Result<Vec<TraceRecord>, TraceError> {
        let mut r = r?;
        let mut v = Vec::new();
        while let Some(x) = r.next_record()? {
            v.push(x);
        }
        Ok(v)
    }

    fn gz(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn ramulator_lines_decode() {
        let text = b"# a comment\n\nLD 0x7fff0040\nST 4096\r\n  LD\t0XAbC  \nST 0x0\n# end";
        let want = vec![
            TraceRecord::mem(Op::Load, 0x7fff_0040, 8),
            TraceRecord::mem(Op::Store, 4096, 8),
            TraceRecord::mem(Op::Load, 0xabc, 8),
            TraceRecord::mem(Op::Store, 0, 8),
        ];
        assert_eq!(read_all(open_ramulator(&temp("r.txt", text))).unwrap(), want);
        assert_eq!(read_all(open_ramulator(&temp("r.txt.gz", &gz(text)))).unwrap(), want);
        let r = open_ramulator(&temp("r.txt", text)).unwrap();
        assert_eq!(r.header().source_format, "ramulator");
        assert!(read_all(open_ramulator(&temp("e.txt", b""))).unwrap().is_empty());
    }

    #[test]
    fn dramsim3_lines_decode() {
        let text = b"0x1000 READ 0\n# comment\n1040 WRITE 12\n0X2000 write 13\n0x3000 P_MEM_RD 14\n0x4000 BOFF 15";
        let want = vec![
            TraceRecord::mem(Op::Load, 0x1000, 8),
            TraceRecord::mem(Op::Store, 0x1040, 8), // hex even without 0x, as DRAMsim3 reads it
            TraceRecord::mem(Op::Store, 0x2000, 8),
            TraceRecord::mem(Op::Load, 0x3000, 8),
            TraceRecord::mem(Op::Store, 0x4000, 8),
        ];
        assert_eq!(read_all(open_dramsim3(&temp("d.txt", text))).unwrap(), want);
        assert_eq!(read_all(open_dramsim3(&temp("d.txt.gz", &gz(text)))).unwrap(), want);
    }

    fn line_error(r: Result<Box<dyn RecordReader>, TraceError>) -> (u64, String) {
        let e = read_all(r).expect_err("malformed input must not read cleanly");
        match e.at {
            Position::Line(l) => (l, e.msg),
            other => panic!("expected a line position, got {other:?}: {e}"),
        }
    }

    #[test]
    fn malformed_lines_name_their_line_and_text() {
        let cases: [(&[u8], u64, &str); 6] = [
            (b"LD 0x10\n\nLOAD 0x20\n", 3, "found `LOAD`"),
            (b"# c\nST 0xZZ\n", 2, "`ZZ` is not a hex number"),
            (b"ST 12ab\n", 1, "`12ab` is not a decimal number"),
            (b"LD 0x10 extra\n", 1, "`LD 0x10 extra`"),
            (b"LD 0x10\nST 0x1ffffffffffffffff\n", 2, "does not fit 64 bits"),
            (b"LD\n", 1, "expected `LD ADDRESS`"),
        ];
        for (text, line, needle) in cases {
            let (l, m) = line_error(open_ramulator(&temp("bad.txt", text)));
            assert_eq!(l, line, "{m}");
            assert!(m.contains(needle), "{m} should contain {needle}");
        }
        let cases: [(&[u8], u64, &str); 4] = [
            (b"0x10 READ 1\n0x20 FETCH 2\n", 2, "found `FETCH`"),
            (b"0x10 READ\n", 1, "expected `ADDRESS READ|WRITE CYCLE`"),
            (b"0x10 READ 1\n\n\n0x20 WRITE -3\n", 4, "bad cycle"),
            (b"0xg0 READ 1\n", 1, "bad address"),
        ];
        for (text, line, needle) in cases {
            let (l, m) = line_error(open_dramsim3(&temp("bad.txt", text)));
            assert_eq!(l, line, "{m}");
            assert!(m.contains(needle), "{m} should contain {needle}");
        }
        // Binary junk: not UTF-8, or one endless line.
        let (l, m) = line_error(open_ramulator(&temp("bin", b"LD 0x1\n\xff\xfe\x00\x01\n")));
        assert_eq!(l, 2, "{m}");
        assert!(m.contains("UTF-8"), "{m}");
        let (l, m) = line_error(open_dramsim3(&temp("long", &vec![b'a'; 10_000])));
        assert_eq!(l, 1, "{m}");
        assert!(m.contains("longer than"), "{m}");
    }

    #[test]
    fn truncated_compressed_text_is_an_error_with_a_line() {
        let mut text = String::new();
        for i in 0..5000u64 {
            text.push_str(&format!("{} {:#x}\n", if i % 3 == 0 { "ST" } else { "LD" }, i * 64 + (i * 7919 % 4096) * 4096));
        }
        let z = gz(text.as_bytes());
        let e = read_all(open_ramulator(&temp("cut.txt.gz", &z[..z.len() - 30]))).expect_err("truncated gzip");
        assert!(matches!(e.at, Position::Line(n) if n > 0), "{e}");
        assert!(e.msg.contains("read error"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]
        /// Any bytes are an error or a trace, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300), words in proptest::collection::vec("(LD|ST|READ|WRITE|0x[0-9a-f]{0,20}|[0-9]{1,22}| |\n|#|\r)", 0..30)) {
            let p = temp("fuzz.txt", &bytes);
            let _ = read_all(open_ramulator(&p));
            let _ = read_all(open_dramsim3(&p));
            let p = temp("fuzz2.txt", words.concat().as_bytes());
            let _ = read_all(open_ramulator(&p));
            let _ = read_all(open_dramsim3(&p));
        }
    }
}
