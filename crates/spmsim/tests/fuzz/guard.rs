//! Running fuzz inputs so that every way an entry can misbehave is caught
//! and leaves the input behind: a panic (caught, with its message and
//! place), a hang (a watchdog sees no input finish within [`HANG_SECONDS`])
//! and unbounded allocation (the heap of the whole test binary is capped at
//! [`HEAP_LIMIT`]; past it the allocation fails and the process aborts,
//! after naming the file that holds the input).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::{Cell, RefCell};
use std::io::Write;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// One input may run this long. Corpus inputs take milliseconds; the bound
/// leaves room for a loaded CI machine.
pub const HANG_SECONDS: u64 = 20;
/// Live heap of the whole test binary, all targets together. The readers
/// stream and hold one record at a time, so anything near this is a bug.
pub const HEAP_LIMIT: usize = 1 << 30;

struct CappedHeap;

static LIVE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Where the input this thread is running was saved (set by [`Run`]).
    static CURRENT: RefCell<Option<PathBuf>> = const { RefCell::new(None) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    static REPORTING: Cell<bool> = const { Cell::new(false) };
}

unsafe impl GlobalAlloc for CappedHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size() > HEAP_LIMIT {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
            report_heap_limit(layout.size());
            return std::ptr::null_mut();
        }
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // Count the growth as an allocation of its own (the cap applies),
        // then let the system allocator move or extend the block.
        let grow = new_size.saturating_sub(layout.size());
        if grow > 0 && LIVE.fetch_add(grow, Ordering::Relaxed) + grow > HEAP_LIMIT {
            LIVE.fetch_sub(grow, Ordering::Relaxed);
            report_heap_limit(new_size);
            return std::ptr::null_mut();
        }
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            LIVE.fetch_sub(grow, Ordering::Relaxed);
        } else if new_size < layout.size() {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static HEAP: CappedHeap = CappedHeap;

/// Name the input before the allocation failure aborts the process.
fn report_heap_limit(size: usize) {
    // The report itself may allocate a little; never report from inside it.
    if REPORTING.with(|r| r.replace(true)) {
        return;
    }
    let file = CURRENT.with(|c| c.borrow().as_ref().map(|p| p.display().to_string()));
    // Straight to the process's stderr: the test harness captures
    // `eprintln!`, and the abort that follows would lose it.
    let _ = writeln!(
        std::io::stderr(),
        "fuzz: an allocation of {size} bytes would take the heap past {HEAP_LIMIT} bytes: unbounded allocation; the input is {}",
        file.as_deref().unwrap_or("(not a fuzz input)")
    );
    REPORTING.with(|r| r.set(false));
}

/// Keep the message and place of each panic inside an entry for the
/// report, instead of letting the default hook print every caught panic;
/// any other panic (a failed assertion of a test) goes to the default hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if CURRENT.with(|c| c.borrow().is_none()) {
                return default(info);
            }
            let msg = info
                .payload()
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| info.payload().downcast_ref::<String>().cloned())
                .unwrap_or_default();
            let place = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{msg} (at {place})")));
        }));
    });
}

/// What went wrong with one input.
#[derive(Debug)]
pub struct Failure {
    pub kind: &'static str,
    pub message: String,
    pub input: PathBuf,
}

/// Progress that the watchdog reads while a worker runs inputs.
pub struct Run {
    /// Where each input is saved before it runs (`.../TARGET/current`).
    pub dir: PathBuf,
    started: AtomicU64,
    finished: AtomicU64,
    stop: AtomicBool,
    current: Mutex<Vec<u8>>,
    hang: Duration,
}

impl Run {
    pub fn new(dir: PathBuf) -> Arc<Run> {
        Run::with_hang_limit(dir, Duration::from_secs(HANG_SECONDS))
    }

    pub fn with_hang_limit(dir: PathBuf, hang: Duration) -> Arc<Run> {
        std::fs::create_dir_all(&dir).unwrap();
        install_panic_hook();
        Arc::new(Run {
            dir,
            started: AtomicU64::new(0),
            finished: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            current: Mutex::new(Vec::new()),
            hang,
        })
    }

    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Run one input on the calling (worker) thread: `Ok` with what the
    /// entry returned, or the panic with the input saved under a name of
    /// its own.
    pub fn one(&self, entry: fn(&[u8]) -> Result<(), String>, input: &[u8]) -> Result<Result<(), String>, Failure> {
        let current = self.dir.join("current");
        std::fs::write(&current, input).unwrap();
        *self.current.lock().unwrap() = input.to_vec();
        CURRENT.with(|c| *c.borrow_mut() = Some(current));
        self.started.fetch_add(1, Ordering::SeqCst);
        let out = catch_unwind(AssertUnwindSafe(|| entry(input)));
        self.finished.fetch_add(1, Ordering::SeqCst);
        CURRENT.with(|c| *c.borrow_mut() = None);
        match out {
            Ok(r) => Ok(r),
            Err(_) => {
                let message = LAST_PANIC.with(|p| p.borrow_mut().take()).unwrap_or_default();
                Err(Failure { kind: "panic", message, input: self.save(input) })
            }
        }
    }

    fn save(&self, input: &[u8]) -> PathBuf {
        let p = self.dir.join(format!("crash-{:016x}", fnv1a(input)));
        std::fs::write(&p, input).unwrap();
        p
    }

    /// Wait for `worker` while watching that each input finishes in time.
    /// A hang stops the wait (the stuck thread cannot be killed; it ends
    /// with the test process) and is returned as a failure.
    pub fn watch<T>(self: &Arc<Run>, worker: std::thread::JoinHandle<T>) -> Result<T, Failure> {
        let mut seen = (0, Instant::now());
        loop {
            if worker.is_finished() {
                return Ok(worker.join().expect("the fuzz worker catches every panic of an entry"));
            }
            std::thread::sleep(Duration::from_millis(20));
            let (started, finished) = (self.started.load(Ordering::SeqCst), self.finished.load(Ordering::SeqCst));
            if finished != seen.0 || started == finished {
                seen = (finished, Instant::now());
            } else if seen.1.elapsed() > self.hang {
                self.stop.store(true, Ordering::Relaxed);
                let input = self.current.lock().unwrap().clone();
                return Err(Failure { kind: "hang", message: format!("one input ran over {:?}", self.hang), input: self.save(&input) });
            }
        }
    }
}

/// FNV-1a, to name a saved input by its content.
pub fn fnv1a(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325, |h, &x| (h ^ x as u64).wrapping_mul(0x100_0000_01b3))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fuzz-self-test").join(name)
    }

    fn panics_on_x(data: &[u8]) -> Result<(), String> {
        if data.contains(&b'x') {
            panic!("found an x");
        }
        Err("no x".into())
    }

    #[test]
    fn a_panic_is_caught_with_its_place_and_the_input_saved() {
        let run = Run::new(dir("panic"));
        assert_eq!(run.one(panics_on_x, b"abc").unwrap(), Err("no x".to_string()));
        let f = run.one(panics_on_x, b"axc").unwrap_err();
        assert_eq!(f.kind, "panic");
        assert!(f.message.starts_with("found an x (at ") && f.message.contains("guard.rs"), "{}", f.message);
        assert_eq!(std::fs::read(&f.input).unwrap(), b"axc");
    }

    fn sleeps(_: &[u8]) -> Result<(), String> {
        std::thread::sleep(Duration::from_secs(3));
        Ok(())
    }

    #[test]
    fn a_hang_is_reported_with_its_input() {
        let run = Run::with_hang_limit(dir("hang"), Duration::from_millis(300));
        let worker = {
            let run = run.clone();
            std::thread::spawn(move || run.one(sleeps, b"slow input").is_ok())
        };
        let f = run.watch(worker).unwrap_err();
        assert_eq!(f.kind, "hang");
        assert_eq!(std::fs::read(&f.input).unwrap(), b"slow input");
        assert!(run.stopped());
    }
}
