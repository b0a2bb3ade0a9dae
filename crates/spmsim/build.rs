//! The model's digest: SHA-256 of every source file of the library, by
//! path and contents, as `SPMSIM_MODEL_DIGEST` (16 hex digits). A record
//! kept to resume a run (a reproduction's points, an exploration's
//! shards) carries it, so a build whose model differs in any line
//! computes the record again rather than reusing it.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).expect("the source folder reads").map(|e| e.expect("an entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn main() {
    let src = Path::new("src");
    println!("cargo:rerun-if-changed=src");
    let mut files = Vec::new();
    sources(src, &mut files);
    let mut h = Sha256::new();
    for f in &files {
        let name = f.strip_prefix(src).expect("under src").to_string_lossy().replace('\\', "/");
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        let bytes = std::fs::read(f).expect("a source file reads");
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    let d = h.finalize();
    let hex: String = d.iter().take(8).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=SPMSIM_MODEL_DIGEST={hex}");
}
