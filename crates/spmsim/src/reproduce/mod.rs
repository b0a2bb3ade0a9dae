//! Reproductions of the papers' evaluations: run the grid of simulations a
//! paper's tables and figures need, then put our numbers beside theirs.

pub mod index;
pub mod mset;
pub mod published_ipc;
pub mod secon;
pub mod secpb;
pub mod star;
pub mod triad;

use serde::Serialize;

/// One cell of a comparison: the paper's number (if the text gives one)
/// and ours.
#[derive(Clone, Debug, Serialize)]
pub struct Cell {
    pub row: String,
    pub column: String,
    pub paper: Option<f64>,
    pub ours: f64,
}

impl Cell {
    pub fn diff(&self) -> Option<f64> {
        self.paper.map(|p| self.ours - p)
    }
}

/// Geometric mean of positive values.
pub fn geomean(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// Smallest and largest of the values ((inf, 0) for none).
pub fn range(v: &[f64]) -> (f64, f64) {
    v.iter().fold((f64::INFINITY, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)))
}

pub fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Write a reproduction's files into `dir`: all of them or none.
pub fn write_files(dir: &std::path::Path, files: &[(String, String)]) -> Result<(), String> {
    let mut out = crate::util::output::ResultFiles::new(dir).map_err(|e| e.to_string())?;
    for (name, text) in files {
        out.add(name, text.as_bytes()).map_err(|e| e.to_string())?;
    }
    out.commit().map_err(|e| e.to_string())
}

/// A report's head: its title, the paper, and how the runs were made
/// (`method`, one paragraph).
pub fn report_head(paper: &str, source: &str, method: &str) -> String {
    format!("# {paper} reproduction\n\nPaper: {source}.\n\n{method}\n\n")
}

/// A report's list of what the paper has and these runs leave out, each
/// with why, under `heading`.
pub fn not_run_section(heading: &str, items: &[(String, String)]) -> String {
    use std::fmt::Write as _;
    if items.is_empty() {
        return String::new();
    }
    let mut s = format!("\n## {heading}\n\n");
    for (w, why) in items {
        let _ = writeln!(s, "- {w}: {why}.");
    }
    s
}

/// Write a reproduction's results.json (`results`), runs.csv and
/// report.md into `dir`: all of them or none.
pub fn write_results<T: Serialize>(results: &T, csv: String, report: String, dir: &std::path::Path) -> Result<(), String> {
    let json = serde_json::to_string_pretty(results).map_err(|e| e.to_string())?;
    write_files(dir, &[("results.json".into(), json), ("runs.csv".into(), csv), ("report.md".into(), report)])
}

/// A report's "causes of the gaps" section, then its figures' cells.
pub fn causes_and_figures(causes: &[String], between: &str, figures: &[secon::Figure]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    let _ = writeln!(s, "\n## Causes of the gaps (measured)\n");
    for c in causes {
        let _ = writeln!(s, "- {c}");
    }
    s.push_str(between);
    let _ = writeln!(s, "\n## Figures\n");
    for f in figures {
        s.push_str(&f.markdown(4));
    }
    s
}
