//! The fixed place a suite program is run from, whatever the cache's path.
//!
//! ```text
//!  /tmp/spmsim-rec-UUUUUUUUUU/          one per user (uid, ten digits), mode 0700
//!      NAME.lock                        held while NAME's stage is in use
//!      NAME/work/                       working folder, HOME, PWD, {work}
//!      NAME/inputs -> <cache>/suite/inputs   {input:..} in the command line
//!      NAME/valgrind -> spmtrace's folder    VALGRIND_LIB (and so LD_PRELOAD)
//! ```
//!
//! The strings a program starts with (its arguments, its environment, the
//! auxiliary vector's file name) sit on its initial stack, and it spends
//! work reading them, so their lengths move every stack address and the
//! instruction count of its start-up. Valgrind adds its own: the
//! `VALGRIND_LIB` it was given, an `LD_PRELOAD` naming its preload library
//! in that folder, and (Debian's `valgrind` is a shell script) the working
//! folder as `PWD`; `getcwd` gives the working folder's physical path. So
//! none of them may name the cache: the working folder is a real folder at
//! this fixed path, and the inputs and the tool are reached through links
//! beside it. A stage is locked while in use (two recordings of the same
//! program, from two caches or two processes, take turns), and emptied when
//! left.

use std::fs::File;
use std::path::{Path, PathBuf};

/// A program's stage, entered: locked and laid out until dropped.
pub struct Stage {
    dir: PathBuf,
    _lock: File,
}

/// The folder of every stage of this user.
fn root() -> PathBuf {
    // SAFETY: getuid cannot fail and touches no memory.
    let uid = unsafe { libc::getuid() };
    PathBuf::from(format!("/tmp/spmsim-rec-{uid:010}"))
}

/// Make the stages' folder, private to this user; refuse one that another
/// user made or that others may write into, since the programs run there.
fn make_root(root: &Path) -> Result<(), String> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    match std::fs::DirBuilder::new().mode(0o700).create(root) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot make the recording folder {}: {e}", root.display())),
    }
    let m = std::fs::symlink_metadata(root).map_err(|e| format!("{}: {e}", root.display()))?;
    // SAFETY: as above.
    let uid = unsafe { libc::getuid() };
    if !m.is_dir() || m.uid() != uid || m.permissions().mode() & 0o022 != 0 {
        return Err(format!(
            "the recording folder {} is not a folder of this user (uid {uid}) closed to others; remove it and record again",
            root.display()
        ));
    }
    Ok(())
}

/// Hold `f`'s lock, waiting (and saying so) while another recording holds it.
fn lock(f: &File, what: &str) -> Result<(), String> {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a descriptor this process owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        return Ok(());
    }
    eprintln!("suite: {what} is in use by another recording of the same program; waiting for it to end");
    loop {
        // SAFETY: as above.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(format!("cannot lock {what}: {e}"));
        }
    }
}

impl Stage {
    /// Where program `name`'s stage is (entered or not).
    pub fn dir_of(name: &str) -> PathBuf {
        root().join(name)
    }

    /// Its working folder.
    pub fn work_of(name: &str) -> PathBuf {
        Self::dir_of(name).join("work")
    }

    /// Its link to the cache's inputs.
    pub fn inputs_of(name: &str) -> PathBuf {
        Self::dir_of(name).join("inputs")
    }

    /// Lock program `name`'s stage and lay it out afresh: an empty working
    /// folder and a link to `cache`'s inputs.
    pub fn enter(name: &str, cache: &Path) -> Result<Stage, String> {
        let root = root();
        make_root(&root)?;
        let lock_path = root.join(format!("{name}.lock"));
        let f = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| format!("{}: {e}", lock_path.display()))?;
        lock(&f, &lock_path.display().to_string())?;
        let dir = Self::dir_of(name);
        match std::fs::remove_dir_all(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("cannot empty the recording folder {}: {e}", dir.display())),
        }
        let work = Self::work_of(name);
        std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
        let inputs = super::inputs_dir(cache);
        std::fs::create_dir_all(&inputs).map_err(|e| format!("{}: {e}", inputs.display()))?;
        let target = inputs.canonicalize().map_err(|e| format!("{}: {e}", inputs.display()))?;
        std::os::unix::fs::symlink(&target, Self::inputs_of(name))
            .map_err(|e| format!("linking {} to {}: {e}", Self::inputs_of(name).display(), target.display()))?;
        Ok(Stage { dir, _lock: f })
    }

    /// The working folder.
    pub fn work(&self) -> PathBuf {
        self.dir.join("work")
    }

    /// The link to the cache's inputs.
    pub fn inputs(&self) -> PathBuf {
        self.dir.join("inputs")
    }

    /// Where spmtrace's folder is linked for a run from this stage.
    pub fn tool_link(&self) -> PathBuf {
        self.dir.join("valgrind")
    }
}

impl Drop for Stage {
    fn drop(&mut self) {
        // Emptied while still locked; the lock goes with the file.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `path` (a cache input, or any other path) as a program run from
/// `name`'s stage names it: a file of `cache`'s inputs through the stage's
/// link, anything else as it is.
pub fn staged(path: &str, name: &str, cache: &Path) -> String {
    match Path::new(path).strip_prefix(super::inputs_dir(cache)) {
        Ok(rest) => Stage::inputs_of(name).join(rest).display().to_string(),
        Err(_) => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stage_does_not_depend_on_the_cache_and_is_emptied_when_left() {
        let base = std::env::temp_dir().join(format!("spmsim-stage-{}", std::process::id()));
        let (a, b) = (base.join("c"), base.join("a-longer-cache"));
        let name = format!("stage-test-{}", std::process::id());
        for cache in [&a, &b] {
            std::fs::create_dir_all(super::super::inputs_dir(cache)).unwrap();
            std::fs::write(super::super::inputs_dir(cache).join("x.txt"), cache.display().to_string()).unwrap();
            let s = Stage::enter(&name, cache).unwrap();
            assert_eq!(s.work(), Stage::work_of(&name));
            assert!(s.work().is_dir() && std::fs::read_dir(s.work()).unwrap().next().is_none(), "an empty working folder");
            let p = staged(&super::super::inputs_dir(cache).join("x.txt").display().to_string(), &name, cache);
            assert_eq!(p, Stage::inputs_of(&name).join("x.txt").display().to_string(), "the same path from either cache");
            assert_eq!(std::fs::read_to_string(&p).unwrap(), cache.display().to_string(), "reaching this cache's file");
            assert_eq!(staged("/usr/bin/xz", &name, cache), "/usr/bin/xz");
            drop(s);
            assert!(!Stage::dir_of(&name).exists(), "emptied when left");
        }
        let _ = std::fs::remove_file(root().join(format!("{name}.lock")));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_stage_in_use_is_waited_for() {
        let base = std::env::temp_dir().join(format!("spmsim-stage-wait-{}", std::process::id()));
        let name = format!("stage-wait-{}", std::process::id());
        let first = Stage::enter(&name, &base).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let (n, b) = (name.clone(), base.clone());
        let t = std::thread::spawn(move || {
            let s = Stage::enter(&n, &b).unwrap();
            tx.send(()).unwrap();
            drop(s);
        });
        assert!(rx.recv_timeout(std::time::Duration::from_millis(300)).is_err(), "entered while another held it");
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(10)).expect("entered once the other left");
        t.join().unwrap();
        let _ = std::fs::remove_file(root().join(format!("{name}.lock")));
        let _ = std::fs::remove_dir_all(&base);
    }
}
