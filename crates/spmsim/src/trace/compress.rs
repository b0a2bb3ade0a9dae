//! Transparent decompression, chosen by magic bytes: xz, gzip, zstd or
//! plain. Readers see one byte stream and count offsets in it.

use super::{Position, TraceError};
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

const XZ: &[u8] = &[0xFD, b'7', b'z', b'X', b'Z', 0x00];
const GZIP: &[u8] = &[0x1F, 0x8B];
const ZSTD: &[u8] = &[0x28, 0xB5, 0x2F, 0xFD];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    Xz,
    Gzip,
    Zstd,
    Plain,
}

impl Compression {
    pub fn of(head: &[u8]) -> Compression {
        if head.starts_with(XZ) {
            Compression::Xz
        } else if head.starts_with(GZIP) {
            Compression::Gzip
        } else if head.starts_with(ZSTD) {
            Compression::Zstd
        } else {
            Compression::Plain
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Compression::Xz => "xz",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Plain => "plain",
        }
    }
}

/// A reader that counts the bytes it has handed out.
pub struct Counted<R> {
    pub inner: R,
    pub offset: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.offset += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.offset += amt as u64;
        self.inner.consume(amt)
    }
}

pub type Stream = Counted<Box<dyn BufRead + Send>>;

fn io_err(path: &Path, e: std::io::Error) -> TraceError {
    TraceError::new(path, Position::Unknown, e.to_string())
}

/// Wrap `raw` in the decompressor its first bytes call for.
pub fn decompress(path: &Path, raw: Box<dyn BufRead + Send>) -> Result<Stream, TraceError> {
    decompress_kind(path, raw).map(|(s, _)| s)
}

/// [`decompress`], also saying which compression the file had.
fn decompress_kind(path: &Path, raw: Box<dyn BufRead + Send>) -> Result<(Stream, Compression), TraceError> {
    let mut raw = raw;
    let kind = Compression::of(raw.fill_buf().map_err(|e| io_err(path, e))?);
    let inner: Box<dyn BufRead + Send> = match kind {
        Compression::Xz => Box::new(BufReader::with_capacity(1 << 16, xz2::read::XzDecoder::new_multi_decoder(raw))),
        Compression::Gzip => Box::new(BufReader::with_capacity(1 << 16, flate2::bufread::MultiGzDecoder::new(raw))),
        Compression::Zstd => {
            Box::new(BufReader::with_capacity(1 << 16, zstd::stream::read::Decoder::with_buffer(raw).map_err(|e| io_err(path, e))?))
        }
        Compression::Plain => raw,
    };
    Ok((Counted { inner, offset: 0 }, kind))
}

/// Open a file and decompress it as its magic bytes say.
pub fn open(path: &Path) -> Result<Stream, TraceError> {
    open_kind(path).map(|(s, _)| s)
}

/// [`open`], also saying which compression the file had.
pub fn open_kind(path: &Path) -> Result<(Stream, Compression), TraceError> {
    let f = File::open(path).map_err(|e| io_err(path, e))?;
    decompress_kind(path, Box::new(BufReader::with_capacity(1 << 16, f)))
}

/// Up to `n` bytes from the start of the decompressed stream (fewer if the
/// stream is shorter). Compressed data that cannot be decompressed that
/// far (damaged, or cut short) is an error naming the decompressed offset
/// where it failed, not a short or empty start.
pub fn peek(path: &Path, n: usize) -> Result<Vec<u8>, TraceError> {
    let (mut s, kind) = open_kind(path)?;
    let mut buf = vec![0; n];
    let mut got = 0;
    while got < n {
        match s.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let what = match kind {
                    Compression::Plain => "the file cannot be read here".to_string(),
                    k => format!("the {} data is damaged or cut short here (offset in the decompressed data)", k.name()),
                };
                return Err(TraceError::new(path, Position::Offset(got as u64), format!("{what}: {e}")));
            }
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// Read exactly `buf.len()` bytes; `Ok(false)` at a clean end of stream
/// (no byte read), an error naming the offset if the stream ends inside.
pub fn read_record(path: &Path, s: &mut Stream, buf: &mut [u8]) -> Result<bool, TraceError> {
    let start = s.offset;
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => {
                if got == 0 {
                    return Ok(false);
                }
                return Err(TraceError::new(
                    path,
                    Position::Offset(start),
                    format!("truncated record: {got} of {} bytes before the end of the file", buf.len()),
                ));
            }
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(TraceError::new(
                    path,
                    Position::Offset(start + got as u64),
                    format!("read error (damaged or truncated compressed data?): {e}"),
                ))
            }
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// `bytes` compressed each way.
    fn compressed(bytes: &[u8]) -> [(&'static str, Vec<u8>); 3] {
        let mut xz = xz2::write::XzEncoder::new(Vec::new(), 3);
        xz.write_all(bytes).unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(bytes).unwrap();
        [("xz", xz.finish().unwrap()), ("gzip", gz.finish().unwrap()), ("zstd", zstd::encode_all(bytes, 3).unwrap())]
    }

    /// `bytes` compressed each way with bytes near the start of the
    /// compressed data changed, and the first 2000 of them compressed and
    /// cut short: both fail within what format detection reads.
    fn damaged(bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
        let mut v = Vec::new();
        for ((name, z), (_, short)) in compressed(bytes).into_iter().zip(compressed(&bytes[..2000])) {
            let mut flipped = z.clone();
            for b in &mut flipped[20..60] {
                *b ^= 0x5A;
            }
            v.push((name, flipped));
            v.push((name, short[..short.len() - 10].to_vec()));
        }
        v
    }

    #[test]
    fn damaged_compressed_data_is_named_not_taken_for_an_empty_file() {
        let dir = std::env::temp_dir().join(format!("spmsim-compress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // ChampSim-like records: compressible, so damage reaches coded data.
        let bytes: Vec<u8> =
            (0..2000u64).flat_map(|i| [(0x40_1000 + 4 * i).to_le_bytes(), [0; 8], [0; 8], (i % 7 * 64).to_le_bytes()]).flatten().collect();
        for (name, z) in damaged(&bytes) {
            let p = dir.join(format!("d.{name}"));
            std::fs::write(&p, &z).unwrap();
            let e = peek(&p, 4096).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(&format!("the {name} data is damaged or cut short here")) && e.contains("at byte"), "{name}: {e}");
            let e = crate::trace::detect(&p).unwrap_err().to_string();
            assert!(!e.contains("empty") && e.contains(name), "{name}: {e}");
        }
        // Whole data, shorter than asked for: all of it, no error.
        let p = dir.join("short.zst");
        std::fs::write(&p, zstd::encode_all(&bytes[..100], 3).unwrap()).unwrap();
        assert_eq!(peek(&p, 4096).unwrap(), &bytes[..100]);
        std::fs::remove_dir_all(&dir).ok();
    }
}
