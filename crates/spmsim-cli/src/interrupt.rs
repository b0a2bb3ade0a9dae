//! Ctrl-C (SIGINT) and SIGTERM while a command runs: the process still
//! ends at once, as the signal's default action ends it, but first removes
//! what it left unfinished (the temporaries of a result not yet renamed
//! into place, and the folders made for it while empty:
//! `spmsim::util::unfinished`), so that an interrupted run on a fresh
//! `--out` leaves no empty folder and a folder that was there before stays.
//!
//! The handler is installed only over the default action (a host that
//! handles the signal itself, such as a Python thread that cannot reset
//! it, keeps its handler), with `SA_RESETHAND`, so the signal raised again
//! from the handler takes the default action when the handler returns and
//! the exit status is the signal's, as before.

/// The handlers installed for one command; dropped, the actions before it
/// are restored.
pub struct Guard {
    #[cfg(unix)]
    saved: Vec<(libc::c_int, libc::sigaction)>,
}

#[cfg(unix)]
const SIGNALS: [libc::c_int; 2] = [libc::SIGINT, libc::SIGTERM];

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    const SAID: &[u8] = b"spmsim: interrupted; removed the unfinished result's temporaries and the folders made for it\n";
    let removed = spmsim::util::unfinished::remove_all();
    // SAFETY: write and raise are async-signal-safe; the signal is blocked
    // while its handler runs, and its action is the default again
    // (SA_RESETHAND), so it ends the process when the handler returns.
    unsafe {
        if removed > 0 {
            libc::write(2, SAID.as_ptr().cast(), SAID.len());
        }
        libc::raise(sig);
    }
}

/// Install the handler for the command about to run.
#[cfg(unix)]
pub fn install() -> Guard {
    let mut saved = Vec::new();
    for sig in SIGNALS {
        // SAFETY: sigaction on zeroed structures, with a handler that makes
        // only async-signal-safe calls.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 || old.sa_sigaction != libc::SIG_DFL {
                continue;
            }
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            new.sa_flags = libc::SA_RESETHAND;
            libc::sigemptyset(&mut new.sa_mask);
            if libc::sigaction(sig, &new, std::ptr::null_mut()) == 0 {
                saved.push((sig, old));
            }
        }
    }
    Guard { saved }
}

#[cfg(not(unix))]
pub fn install() -> Guard {
    Guard {}
}

impl Drop for Guard {
    fn drop(&mut self) {
        #[cfg(unix)]
        for (sig, old) in &self.saved {
            // SAFETY: restores the action read before the command.
            unsafe {
                libc::sigaction(*sig, old, std::ptr::null_mut());
            }
        }
    }
}
