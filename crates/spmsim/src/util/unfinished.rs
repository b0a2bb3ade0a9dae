//! What a process ended by a signal (Ctrl-C) removes on its way out: the
//! temporaries of results not yet renamed into place, then the folders
//! made for those results, each only while empty (`util::output`).
//!
//! ```text
//!  PendingFile::create  -> file(tmp)            a slot of FILES
//!  ResultFiles::new     -> folder(dir, levels)  a slot of FOLDERS
//!  publish / commit / drop: the slot is taken back (the normal paths
//!  rename or remove the path themselves)
//!  signal handler -> remove_all: unlink every file left, then rmdir
//!  every folder left, leaf first, as many levels as were made
//! ```
//! A signal handler may only make async-signal-safe calls (POSIX.1-2008
//! 2.4.3: `unlink` and `rmdir` are), so the paths are C strings made when
//! they are registered, kept in fixed tables of atomic slots. Whoever
//! swaps a slot's pointer out owns it: the registration frees it, the
//! handler uses it and leaves it to the process's end. A path that finds
//! no free slot (more than [`SLOTS`] at once) is not removed on a signal.

use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

/// Paths of each kind kept at once.
pub const SLOTS: usize = 64;

/// A path as `unlink` and `rmdir` take it (NUL-terminated), and how many
/// folders to remove: 0 for a file, else the folder and the parents made
/// with it.
struct Entry {
    path: Vec<u8>,
    levels: usize,
}

type Table = [AtomicPtr<Entry>; SLOTS];

static FILES: Table = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];
static FOLDERS: Table = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// A path kept for removal until dropped.
#[derive(Debug)]
pub struct Registration {
    table: &'static Table,
    slot: Option<(usize, *mut Entry)>,
}

// The pointer is only dereferenced by whoever swaps it out of its slot.
unsafe impl Send for Registration {}
unsafe impl Sync for Registration {}

fn register(table: &'static Table, path: &Path, levels: usize) -> Registration {
    let mut bytes = path_bytes(path);
    if bytes.contains(&0) {
        return Registration { table, slot: None };
    }
    bytes.push(0);
    let entry = Box::into_raw(Box::new(Entry { path: bytes, levels }));
    for (i, s) in table.iter().enumerate() {
        if s.compare_exchange(std::ptr::null_mut(), entry, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return Registration { table, slot: Some((i, entry)) };
        }
    }
    // SAFETY: `entry` was made above and never published.
    drop(unsafe { Box::from_raw(entry) });
    Registration { table, slot: None }
}

#[cfg(unix)]
fn path_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    // Components drop a trailing slash and `.`, so that each level up is
    // the text before the last slash.
    let normal: std::path::PathBuf = path.components().collect();
    normal.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().as_bytes().to_vec()
}

/// Remove the temporary `path` if the process is ended by a signal.
pub fn file(path: &Path) -> Registration {
    register(&FILES, path, 0)
}

/// Remove folder `path`, and the `levels - 1` folders above it made with
/// it, each if empty, if the process is ended by a signal.
pub fn folder(path: &Path, levels: usize) -> Registration {
    register(&FOLDERS, path, levels.max(1))
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some((i, entry)) = self.slot.take() {
            if self.table[i].compare_exchange(entry, std::ptr::null_mut(), Ordering::AcqRel, Ordering::Acquire).is_ok() {
                // SAFETY: taken back from the slot, so no one else holds it.
                drop(unsafe { Box::from_raw(entry) });
            }
        }
    }
}

/// Remove every registered temporary, then every registered folder while
/// empty, leaf first; returns how many paths went. Async-signal-safe:
/// atomic swaps, `unlink`, `rmdir` and byte writes into buffers it owns;
/// no allocation, no lock.
pub fn remove_all() -> usize {
    let mut removed = 0;
    for table in [&FILES, &FOLDERS] {
        for s in table.iter() {
            let p = s.swap(std::ptr::null_mut(), Ordering::AcqRel);
            // SAFETY: swapped out, so this call owns the entry; it is left
            // allocated (the process is ending).
            if let Some(e) = unsafe { p.as_mut() } {
                removed += remove(e);
            }
        }
    }
    removed
}

#[cfg(unix)]
fn remove(e: &mut Entry) -> usize {
    let c = |b: &[u8]| b.as_ptr() as *const libc::c_char;
    if e.levels == 0 {
        // SAFETY: a NUL-terminated path.
        return usize::from(unsafe { libc::unlink(c(&e.path)) } == 0);
    }
    for level in 0..e.levels {
        // SAFETY: a NUL-terminated path.
        if unsafe { libc::rmdir(c(&e.path)) } != 0 {
            return level;
        }
        // One level up: end the text at its last slash.
        let end = e.path.iter().position(|&b| b == 0).unwrap_or(e.path.len());
        match e.path[..end].iter().rposition(|&b| b == b'/') {
            Some(0) | None => return level + 1,
            Some(i) => e.path[i] = 0,
        }
    }
    e.levels
}

#[cfg(not(unix))]
fn remove(_: &mut Entry) -> usize {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registration_taken_back_leaves_its_slot_free() {
        let d = std::env::temp_dir().join(format!("spmsim-unfinished-{}", std::process::id()));
        // Whatever other tests hold, no more than SLOTS are kept at once.
        let regs: Vec<Registration> = (0..SLOTS + 3).map(|i| file(&d.join(format!("t{i}")))).collect();
        let kept = regs.iter().filter(|r| r.slot.is_some()).count();
        assert!(kept <= SLOTS, "{kept}");
        drop(regs);
        let r = file(&d.join("again"));
        assert!(r.slot.is_some(), "slots are taken back when dropped");
    }
}
