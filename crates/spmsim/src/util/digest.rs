//! Content digests of files: what a side file (an instruction stream, a
//! cached derivation) records of the file it was made from, so that it is
//! used with those very bytes and no others. A digest of the content, not
//! of a name, size or modification time: a file written over with other
//! bytes of the same size, its time set back, has another digest.

use sha2::{Digest as _, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The SHA-256 of a file's bytes.
pub type FileDigest = [u8; 32];

/// A file that could not be read for its digest.
#[derive(Debug, thiserror::Error)]
#[error("{}: cannot read it for its digest: {source}", path.display())]
pub struct DigestError {
    pub path: PathBuf,
    /// Its kind tells a missing file (`NotFound`) from others.
    pub source: std::io::Error,
}

/// The SHA-256 of the bytes of the file at `path`, read in pieces.
pub fn file_digest(path: &Path) -> Result<FileDigest, DigestError> {
    let named = |source: std::io::Error| DigestError { path: path.to_path_buf(), source };
    let mut f = std::fs::File::open(path).map_err(named)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => h.update(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(named(e)),
        }
    }
    Ok(h.finalize().into())
}

/// A digest as messages show it: its first 8 bytes in hex.
pub fn short_hex(d: &FileDigest) -> String {
    hex::encode(&d[..8])
}

/// The SHA-256 of `bytes`, its first 12 bytes in hex: what a kept record
/// (a reproduction's point, an exploration's shard) names its inputs by.
pub fn hex_digest(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().take(12).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_of_the_bytes_and_a_missing_file_is_named() {
        let dir = std::env::temp_dir().join(format!("spmsim-digest-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("f");
        std::fs::write(&p, b"abc").unwrap();
        // FIPS 180-2's example: SHA-256("abc").
        assert_eq!(hex::encode(file_digest(&p).unwrap()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        assert_eq!(short_hex(&file_digest(&p).unwrap()), "ba7816bf8f01cfea");
        // A large file, read in several pieces, gives the digest of the whole.
        let big: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&p, &big).unwrap();
        assert_eq!(file_digest(&p).unwrap(), <[u8; 32]>::from(Sha256::digest(&big)));
        let e = file_digest(&dir.join("missing")).unwrap_err();
        assert_eq!(e.source.kind(), std::io::ErrorKind::NotFound);
        assert!(e.to_string().contains("missing"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
