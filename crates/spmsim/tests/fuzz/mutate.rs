//! A small seeded mutator in the style of libFuzzer's: bit flips, byte and
//! integer overwrites with boundary values, inserts, deletes, copies,
//! splices with another corpus input, and number-shaped text. Compressed
//! inputs and the zstd body of native traces are also mutated inside their
//! compression (then compressed again), so the parsers behind the
//! decompressor see damage too, not only the decompressor.

use spmsim::util::rng::SplitMix64;
use std::io::{Read, Write};

/// Values that sit on the edges readers and validators must handle.
/// (`u64::MAX - 63` opens the last 64 B block of the address space.)
const INTERESTING_U64: [u64; 14] =
    [0, 1, 7, 8, 63, 64, 4096, 0x7fff_ffff, 0xffff_ffff, 1 << 32, 1 << 63, u64::MAX - 63, u64::MAX - 8, u64::MAX];
/// The first [`NUMBERS`] are numbers, put where a number was.
const INTERESTING_TEXT: [&str; 18] = [
    "0",
    "-1",
    "4294967295",
    "4294967296",
    "1099511627776",
    "18446744073709551615",
    "1e300",
    "inf",
    "nan",
    "-0.0",
    "0xffffffffffffffff",
    "ffffffffffffffc0",
    "0x",
    "\"\"",
    "[]",
    "{}",
    "true",
    "\n",
];
const NUMBERS: usize = 12;

pub struct Mutator {
    rng: SplitMix64,
}

impl Mutator {
    pub fn new(seed: u64) -> Self {
        Mutator { rng: SplitMix64::new(seed) }
    }

    fn below(&mut self, n: usize) -> usize {
        self.rng.below(n.max(1) as u64) as usize
    }

    /// A new input from `corpus[i]`, sometimes spliced with another entry.
    pub fn mutate(&mut self, corpus: &[Vec<u8>]) -> Vec<u8> {
        let base = &corpus[self.below(corpus.len())];
        let other = &corpus[self.below(corpus.len())];
        if self.below(3) == 0 {
            if let Some(v) = self.mutate_inside(base) {
                return v;
            }
        }
        let mut v = base.clone();
        for _ in 0..1 + self.below(4) {
            self.one(&mut v, other);
        }
        v
    }

    fn one(&mut self, v: &mut Vec<u8>, other: &[u8]) {
        let at = self.below(v.len());
        match self.below(12) {
            0 | 1 if !v.is_empty() => v[at] ^= 1 << self.below(8),
            2 if !v.is_empty() => v[at] = self.rng.next_u64() as u8,
            3 => {
                let x = INTERESTING_U64[self.below(INTERESTING_U64.len())];
                let bytes = if self.below(2) == 0 { x.to_le_bytes().to_vec() } else { (x as u32).to_le_bytes().to_vec() };
                overwrite(v, at, &bytes);
            }
            4 => {
                let n = 1 + self.below(16);
                let fill: Vec<u8> = (0..n).map(|_| self.rng.next_u64() as u8).collect();
                v.splice(at..at, fill);
            }
            5 if !v.is_empty() => {
                let n = 1 + self.below(v.len().min(64));
                v.drain(at..(at + n).min(v.len()));
            }
            6 if !v.is_empty() => {
                // Repeat a stretch of the input in place (records, lines).
                let n = 1 + self.below(v.len().min(256));
                let from = self.below(v.len() - n.min(v.len()) + 1);
                let piece = v[from..from + n.min(v.len() - from)].to_vec();
                v.splice(at..at, piece);
            }
            7 if !other.is_empty() => {
                let from = self.below(other.len());
                let n = 1 + self.below((other.len() - from).min(512));
                v.truncate(at);
                v.extend_from_slice(&other[from..from + n]);
            }
            8 => {
                let word = INTERESTING_TEXT[self.below(INTERESTING_TEXT.len())].as_bytes();
                let n = v[at..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'.').count();
                v.splice(at..at + n, word.iter().copied());
            }
            9 => self.replace_number(v),
            10 => self.line_op(v, other),
            _ => v.truncate(at),
        }
    }

    /// Put a boundary value where a number was (a size, a count, an
    /// address, a latency), keeping the text around it valid.
    fn replace_number(&mut self, v: &mut Vec<u8>) {
        let from = self.below(v.len());
        let Some(start) = v[from..].iter().position(u8::is_ascii_digit).map(|i| from + i) else { return };
        let len = v[start..].iter().take_while(|c| c.is_ascii_hexdigit() || matches!(c, b'x' | b'.' | b'_')).count();
        let word = INTERESTING_TEXT[self.below(NUMBERS)].as_bytes();
        v.splice(start..start + len, word.iter().copied());
    }

    /// Delete, repeat or borrow (from another input) one line.
    fn line_op(&mut self, v: &mut Vec<u8>, other: &[u8]) {
        let line = |b: &[u8], at: usize| {
            let s = b[..at].iter().rposition(|&c| c == b'\n').map_or(0, |i| i + 1);
            let e = b[at..].iter().position(|&c| c == b'\n').map_or(b.len(), |i| at + i + 1);
            (s, e)
        };
        let at = self.below(v.len());
        let (s, e) = line(v, at);
        match self.below(3) {
            0 => drop(v.drain(s..e)),
            1 => {
                let l = v[s..e].to_vec();
                v.splice(e..e, l);
            }
            _ if !other.is_empty() => {
                let (os, oe) = line(other, self.below(other.len()));
                v.splice(e..e, other[os..oe].iter().copied());
            }
            _ => {}
        }
    }

    /// Mutate the bytes under a compression layer (a whole compressed
    /// file, or a native trace's zstd body) and compress them again.
    fn mutate_inside(&mut self, input: &[u8]) -> Option<Vec<u8>> {
        let (prefix, codec, body) = layer(input)?;
        let mut inner = body;
        for _ in 0..1 + self.below(3) {
            self.one(&mut inner, &[]);
        }
        let mut out = prefix.to_vec();
        out.extend(codec.compress(&inner));
        Some(out)
    }
}

fn overwrite(v: &mut Vec<u8>, at: usize, bytes: &[u8]) {
    if v.len() < at + bytes.len() {
        v.resize(at + bytes.len(), 0);
    }
    v[at..at + bytes.len()].copy_from_slice(bytes);
}

#[derive(Clone, Copy)]
enum Codec {
    Gzip,
    Xz,
    Zstd,
}

impl Codec {
    fn of(b: &[u8]) -> Option<Codec> {
        if b.starts_with(&[0x1f, 0x8b]) {
            Some(Codec::Gzip)
        } else if b.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
            Some(Codec::Xz)
        } else if b.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Codec::Zstd)
        } else {
            None
        }
    }

    /// At most 1 MiB out: a corpus input is small, and a damaged one must
    /// not make the mutator itself unbounded.
    fn decompress(self, b: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let r: Box<dyn Read + '_> = match self {
            Codec::Gzip => Box::new(flate2::read::MultiGzDecoder::new(b)),
            Codec::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(b)),
            Codec::Zstd => Box::new(zstd::stream::read::Decoder::new(b).ok()?),
        };
        r.take(1 << 20).read_to_end(&mut out).ok()?;
        Some(out)
    }

    fn compress(self, b: &[u8]) -> Vec<u8> {
        match self {
            Codec::Gzip => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(b).unwrap();
                e.finish().unwrap()
            }
            Codec::Xz => {
                let mut e = xz2::write::XzEncoder::new(Vec::new(), 1);
                e.write_all(b).unwrap();
                e.finish().unwrap()
            }
            Codec::Zstd => zstd::encode_all(b, 1).unwrap(),
        }
    }
}

/// The bytes before a compressed part, its codec and its decompressed
/// content: a compressed file (nothing before it), or a native trace
/// (magic, version, header length, header, then a zstd frame).
fn layer(input: &[u8]) -> Option<(&[u8], Codec, Vec<u8>)> {
    if let Some(c) = Codec::of(input) {
        return Some((&[], c, c.decompress(input)?));
    }
    if input.starts_with(spmsim::trace::native::MAGIC) && input.len() >= 14 {
        let header_len = u32::from_le_bytes(input[10..14].try_into().unwrap()) as usize;
        let body_at = 14usize.checked_add(header_len).filter(|&b| b <= input.len())?;
        let codec = Codec::of(&input[body_at..])?;
        return Some((&input[..body_at], codec, codec.decompress(&input[body_at..])?));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_mutants() {
        let corpus = vec![b"LD 0x1000\nST 0x2000\n".to_vec(), vec![0u8; 64]];
        let (mut a, mut b) = (Mutator::new(9), Mutator::new(9));
        let ma: Vec<Vec<u8>> = (0..200).map(|_| a.mutate(&corpus)).collect();
        let mb: Vec<Vec<u8>> = (0..200).map(|_| b.mutate(&corpus)).collect();
        assert_eq!(ma, mb);
        assert!(ma.iter().filter(|m| !corpus.contains(m)).count() > 150, "most mutants differ from their seeds");
    }

    #[test]
    fn compressed_inputs_are_mutated_inside_and_stay_compressed() {
        let plain = b"LD 0x1000\nST 0x2000\nLD 0x3000\n".to_vec();
        let corpus = vec![Codec::Gzip.compress(&plain)];
        let mut m = Mutator::new(4);
        let inside = (0..300).map(|_| m.mutate(&corpus)).filter(|v| Codec::Gzip.decompress(v).is_some_and(|d| d != plain)).count();
        assert!(inside > 50, "{inside} of 300 mutants were valid gzip with changed content");
    }
}
