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
            let b = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(&format!("{{prefix}} [{{bar:30}}] {{pos}}/{{len}} {unit} {{msg}} (elapsed {{elapsed}}, ETA {{eta}})"))
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
        if let Some(b) = &self.bar {
            b.set_length(total);
            b.set_position(done);
            b.set_message(note.to_string());
            return;
        }
        let mut last = self.last_line.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < PLAIN_EVERY {
            return;
        }
        *last = Instant::now();
        let elapsed = self.started.elapsed().as_secs_f64();
        let eta = if done > 0 && done < total { format!(", ETA {}", secs(elapsed * (total - done) as f64 / done as f64)) } else { String::new() };
        let note = if note.is_empty() { String::new() } else { format!(" ({note})") };
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
