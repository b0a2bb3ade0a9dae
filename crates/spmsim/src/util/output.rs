//! Writing a result whole or not at all.
//!
//! A result is one or more files: a run's `stats.json` and `config.toml`,
//! a saved machine's `nvm.img`, `chip.json` and `config.toml`, a trace.
//! Each file is first written in full, and synced, to a temporary beside its
//! final name; only when every file of the result is written are they
//! renamed into place. An error before that (a full disk, a read-only
//! folder) removes every temporary, and a rename that fails removes the
//! files of this result already renamed, so a folder never holds part of a
//! result and no temporary outlives the process that wrote it.
//!
//! Why files and not a temporary folder renamed into place: `--out` may
//! name a folder that exists and holds other things (an earlier result, the
//! user's files), and a folder cannot be renamed over a non-empty one. The
//! temporaries live in the target folder itself, so the renames never cross
//! a file system and need no space: the writes are where a full disk fails.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct OutputError {
    pub path: String,
    pub message: String,
}

fn oerr(path: &Path, e: impl std::fmt::Display) -> OutputError {
    OutputError { path: path.display().to_string(), message: e.to_string() }
}

/// A file being written under a temporary name. It is renamed to its final
/// name by [`PendingFile::publish`]; dropped before that, it is removed.
#[derive(Debug)]
pub struct PendingFile {
    tmp: PathBuf,
    dest: PathBuf,
    published: bool,
    /// The temporary, removed should a signal end the process first.
    _on_signal: super::unfinished::Registration,
}

impl PendingFile {
    /// Create the temporary for `dest` (in `dest`'s folder, which must exist).
    pub fn create(dest: &Path) -> Result<(PendingFile, File), OutputError> {
        // A name of its own per process and call, so two writers of the same
        // file (runs started side by side) never rename each other's.
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut name = dest.file_name().unwrap_or_default().to_os_string();
        name.push(format!(".{}.{n}.tmp", std::process::id()));
        let tmp = dest.with_file_name(name);
        let on_signal = super::unfinished::file(&tmp);
        let f = File::create(&tmp).map_err(|e| oerr(&tmp, e))?;
        Ok((PendingFile { tmp, dest: dest.to_path_buf(), published: false, _on_signal: on_signal }, f))
    }

    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// The file being written, under its temporary name.
    pub fn written(&self) -> &Path {
        &self.tmp
    }

    /// Rename the temporary to the final name.
    pub fn publish(mut self) -> Result<(), OutputError> {
        std::fs::rename(&self.tmp, &self.dest).map_err(|e| oerr(&self.dest, e))?;
        self.published = true;
        Ok(())
    }
}

impl Drop for PendingFile {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

/// Write all of `bytes` and sync them to the device: a full disk shows here,
/// not later when the kernel writes back.
fn write_synced(f: &mut File, path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    fault::check(bytes.len()).map_err(|e| oerr(path, e))?;
    f.write_all(bytes).and_then(|_| f.sync_all()).map_err(|e| oerr(path, e))
}

/// Create `dir` and check that a file can be made in it, before any work
/// whose result would go there.
pub fn check_writable(dir: &Path) -> Result<(), OutputError> {
    std::fs::create_dir_all(dir).map_err(|e| oerr(dir, format!("cannot create the output folder: {e}")))?;
    let (probe, _) = PendingFile::create(&dir.join(".spmsim-write-check"))
        .map_err(|e| OutputError { message: format!("the output folder is not writable: {}", e.message), ..e })?;
    drop(probe);
    Ok(())
}

/// The files of one result in one folder, written whole or not at all.
/// Dropped without [`ResultFiles::commit`] (an error, in writing or in the
/// work before), it removes its temporaries, and the folders it made (the
/// result's, and those above it that did not exist), each while empty; a
/// signal that ends the process does the same (`util::unfinished`).
#[derive(Debug)]
pub struct ResultFiles {
    dir: PathBuf,
    staged: Vec<PendingFile>,
    /// How many folders this result made: `dir` and the `made - 1` above it.
    made: usize,
    committed: bool,
    _on_signal: Option<super::unfinished::Registration>,
}

impl ResultFiles {
    /// Creates `dir` if needed and checks that it is writable.
    pub fn new(dir: &Path) -> Result<ResultFiles, OutputError> {
        let made = dir.ancestors().take_while(|a| !a.as_os_str().is_empty() && !a.exists()).count();
        check_writable(dir)?;
        let on_signal = (made > 0).then(|| super::unfinished::folder(dir, made));
        Ok(ResultFiles { dir: dir.to_path_buf(), staged: Vec::new(), made, committed: false, _on_signal: on_signal })
    }

    /// Write `name`'s temporary. On an error every temporary of this result
    /// is removed (by dropping `self`).
    pub fn add(&mut self, name: &str, bytes: &[u8]) -> Result<(), OutputError> {
        let (pending, mut f) = PendingFile::create(&self.dir.join(name))?;
        write_synced(&mut f, &pending.tmp, bytes)?;
        self.staged.push(pending);
        Ok(())
    }

    /// Rename every file into place; if one rename fails, the files already
    /// renamed are removed with the temporaries.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let mut renamed: Vec<PathBuf> = Vec::new();
        for f in std::mem::take(&mut self.staged) {
            let dest = f.dest().to_path_buf();
            if let Err(e) = f.publish() {
                for d in &renamed {
                    let _ = std::fs::remove_file(d);
                }
                return Err(e);
            }
            renamed.push(dest);
        }
        self.committed = true;
        // Make the renames themselves durable (best effort: not every
        // platform can open a folder).
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for ResultFiles {
    fn drop(&mut self) {
        self.staged.clear();
        if !self.committed {
            // Only empty folders go: whatever else appeared stays.
            for d in self.dir.ancestors().take(self.made) {
                if std::fs::remove_dir(d).is_err() {
                    break;
                }
            }
        }
    }
}

/// Write one file whole or not at all.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let (pending, mut f) = PendingFile::create(path)?;
    write_synced(&mut f, &pending.tmp, bytes)?;
    pending.publish()
}

/// Tests stand for a full disk by failing a write once a budget of bytes is
/// spent; outside tests there is no budget.
mod fault {
    #[cfg(test)]
    thread_local! {
        pub static BUDGET: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
    }

    #[cfg(test)]
    pub fn check(len: usize) -> std::io::Result<()> {
        BUDGET.with(|b| match b.get() {
            Some(left) if len > left => {
                b.set(Some(0));
                Err(std::io::Error::other("No space left on device (simulated)"))
            }
            Some(left) => {
                b.set(Some(left - len));
                Ok(())
            }
            None => Ok(()),
        })
    }

    #[cfg(not(test))]
    pub fn check(_len: usize) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        v.sort();
        v
    }

    fn tempdir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("spmsim-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_result_is_written_whole() {
        let d = tempdir("whole");
        let mut r = ResultFiles::new(&d).unwrap();
        r.add("a.json", b"{}").unwrap();
        r.add("b.toml", b"x = 1").unwrap();
        let before = listing(&d);
        assert!(before.len() == 2 && before.iter().all(|n| n.ends_with(".tmp")), "only temporaries before the commit: {before:?}");
        r.commit().unwrap();
        assert_eq!(listing(&d), ["a.json", "b.toml"]);
        assert_eq!(std::fs::read(d.join("b.toml")).unwrap(), b"x = 1");
    }

    #[test]
    fn a_full_disk_leaves_nothing_and_keeps_the_earlier_result() {
        let d = tempdir("full");
        std::fs::write(d.join("a.json"), b"old").unwrap();
        let mut r = ResultFiles::new(&d).unwrap();
        // Room for the first file, not the second.
        fault::BUDGET.with(|b| b.set(Some(10)));
        r.add("a.json", b"new a").unwrap();
        let e = r.add("b.toml", b"new b, too long").unwrap_err();
        fault::BUDGET.with(|b| b.set(None));
        assert!(e.message.contains("No space left") && e.path.contains("b.toml"), "{e}");
        drop(r);
        assert_eq!(listing(&d), ["a.json"], "no temporary is left");
        assert_eq!(std::fs::read(d.join("a.json")).unwrap(), b"old", "the earlier result is untouched");
        // The same for one file.
        fault::BUDGET.with(|b| b.set(Some(0)));
        assert!(write_atomic(&d.join("c.bin"), b"data").is_err());
        fault::BUDGET.with(|b| b.set(None));
        assert_eq!(listing(&d), ["a.json"]);
    }

    #[test]
    fn a_failed_rename_takes_back_the_files_already_renamed() {
        let d = tempdir("rename");
        // The second file's name is taken by a non-empty folder, so its
        // rename fails after the first has been renamed.
        std::fs::create_dir_all(d.join("b.toml").join("inside")).unwrap();
        let mut r = ResultFiles::new(&d).unwrap();
        r.add("a.json", b"new a").unwrap();
        r.add("b.toml", b"new b").unwrap();
        let e = r.commit().unwrap_err();
        assert!(e.path.ends_with("b.toml"), "{e}");
        assert_eq!(listing(&d), ["b.toml"], "a.json is taken back and no temporary is left");
    }

    #[test]
    fn an_unwritable_folder_is_named_before_any_work() {
        let d = tempdir("unwritable");
        std::fs::write(d.join("file"), b"").unwrap();
        // A folder below a regular file cannot exist (even for root).
        let e = ResultFiles::new(&d.join("file").join("out")).unwrap_err();
        assert!(e.path.ends_with("out") && e.message.contains("cannot create the output folder"), "{e}");
        assert!(check_writable(&d).is_ok());
        assert_eq!(listing(&d), ["file"], "the check leaves nothing behind");
    }

    #[test]
    fn a_folder_made_for_a_result_that_failed_is_removed() {
        let d = tempdir("made");
        let r = ResultFiles::new(&d.join("new")).unwrap();
        assert_eq!(listing(&d), ["new"], "the folder exists while the work runs");
        drop(r);
        assert_eq!(listing(&d), Vec::<String>::new());
        // A folder that was there before stays.
        drop(ResultFiles::new(&d).unwrap());
        assert!(d.is_dir());
        // Folders made above it go too, down to the one that was there.
        drop(ResultFiles::new(&d.join("a").join("b").join("c/")).unwrap());
        assert_eq!(listing(&d), Vec::<String>::new());
        // A folder made above it that holds something else stays.
        let r = ResultFiles::new(&d.join("a").join("b")).unwrap();
        std::fs::write(d.join("a").join("other"), b"").unwrap();
        drop(r);
        assert_eq!(listing(&d.join("a")), ["other"]);
    }

    #[test]
    fn a_dropped_pending_file_is_removed() {
        let d = tempdir("dropped");
        let (p, mut f) = PendingFile::create(&d.join("t.zst")).unwrap();
        f.write_all(b"half a trace").unwrap();
        assert_eq!(listing(&d).len(), 1);
        drop(p);
        assert_eq!(listing(&d), Vec::<String>::new());
    }
}
