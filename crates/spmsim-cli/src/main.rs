//! `spmsim`: the command-line front of the simulator (the commands live in
//! the library, `spmsim_cli`, which the Python package runs too).

use std::process::ExitCode;

fn main() -> ExitCode {
    // Output piped into `head` or a closed pager must end the process
    // quietly, as other command-line tools do, not panic on a write error.
    #[cfg(unix)]
    // SAFETY: restoring the default disposition of SIGPIPE before any
    // thread starts has no other effect on the process.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let code = spmsim_cli::main_with_os_args(std::env::args_os());
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}
