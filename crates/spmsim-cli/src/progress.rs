//! Progress of the long checks (check-crash, check-all), always on stderr so
//! that stdout (and `--json`) holds the result alone.
//!
//! On a terminal: a bar with the elapsed time and an ETA. Elsewhere (logs,
//! CI, a pipe): a plain line at most every [`PLAIN_EVERY`], and one when the
//! work ends, so a log shows that the run is alive and how long it took.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often a plain progress line may be written.
pub const PLAIN_EVERY: Duration = Duration::from_secs(10);

/// Bar positions per unit, so that the part of a unit under way (a preset
/// half checked) moves the bar and the ETA.
const STEPS: u64 = 1000;

pub struct Progress {
    label: String,
    unit: String,
    started: Instant,
    bar: Option<ProgressBar>,
    /// When a plain line was last written.
    last_line: Mutex<Instant>,
}

impl Progress {
    /// `unit` names what is counted, plural ("crash points", "presets").
    pub fn new(label: &str, unit: &str, total: u64) -> Progress {
        let started = Instant::now();
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::with_draw_target(Some(total * STEPS), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template("{prefix} [{bar:30}] {msg} (elapsed {elapsed}, ETA {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            b.set_style(style);
            b.set_prefix(label.to_string());
            b
        });
        Progress { label: label.into(), unit: unit.into(), started, bar, last_line: Mutex::new(started) }
    }

    /// `done` of `total` finished; `note` says what is under way.
    pub fn update(&self, done: u64, total: u64, note: &str) {
        self.update_partial(done, 0.0, total, note)
    }

    /// `done` of `total` finished and `part` (0..1) of the next one.
    pub fn update_partial(&self, done: u64, part: f64, total: u64, note: &str) {
        let note = if note.is_empty() { String::new() } else { format!(" ({note})") };
        let at = done as f64 + part.clamp(0.0, 1.0);
        if let Some(b) = &self.bar {
            b.set_length(total * STEPS);
            b.set_position((at * STEPS as f64) as u64);
            b.set_message(format!("{done}/{total} {}{note}", self.unit));
            return;
        }
        let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < PLAIN_EVERY {
            return;
        }
        *last = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        let left = total as f64 - at;
        let eta = if at > 0.0 && left > 0.0 { format!(", ETA {}", secs(elapsed * left / at)) } else { String::new() };
        eprintln!("{}: {done}/{total} {}{note}, elapsed {}{eta}", self.label, self.unit, secs(elapsed));
    }

    /// The work ended: clear the bar, or write the closing plain line.
    pub fn finish(&self, done: u64) {
        match &self.bar {
            Some(b) => b.finish_and_clear(),
            None => eprintln!("{}: {done} {} done in {}", self.label, self.unit, secs(self.started.elapsed().as_secs_f64())),
        }
    }
}

fn secs(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else {
        format!("{}m{:02}s", (s / 60.0) as u64, (s % 60.0) as u64)
    }
}
