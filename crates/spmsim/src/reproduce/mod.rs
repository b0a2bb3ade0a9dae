//! Reproductions of the papers' evaluations: run the grid of simulations a
//! paper's tables and figures need, then put our numbers beside theirs.

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
