//! SimPoint-style phase analysis of a recorded program: the
//! basic-block vectors of its whole run (spmsim's valgrind tool `spmtrace`,
//! in `exp-bbv`'s format, one vector per interval of instructions), projected to 15 dimensions, clustered by
//! k-means for k = 1..max with the Bayesian information criterion choosing
//! k (the smallest whose BIC reaches 90 % of the range, as SimPoint 3.0
//! does, after Pelleg and Moore's X-means), and one simulation point per
//! cluster: the interval nearest its centre, weighted by the cluster's
//! share of the run. It also says where the suite's recorded window falls.

use serde::Serialize;

/// Dimensions of the random projection (SimPoint's default).
pub const DIMS: usize = 15;

/// One interval's basic-block counts: (block id, instructions executed in it).
pub type Bbv = Vec<(u32, u64)>;

/// Parse an `exp-bbv` output file: one line per interval, `T:id:count
/// :id:count ...`.
pub fn parse_bbv(text: &str) -> Result<Vec<Bbv>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let Some(rest) = line.strip_prefix('T') else { continue };
        let mut v = Bbv::new();
        for item in rest.split_whitespace() {
            let item = item.strip_prefix(':').ok_or_else(|| format!("bbv line {}: expected `:ID:COUNT`, got `{item}`", n + 1))?;
            let (id, count) = item.split_once(':').ok_or_else(|| format!("bbv line {}: expected `:ID:COUNT`, got `:{item}`", n + 1))?;
            let id = id.parse::<u32>().map_err(|_| format!("bbv line {}: bad block id `{id}`", n + 1))?;
            let count = count.parse::<u64>().map_err(|_| format!("bbv line {}: bad count `{count}`", n + 1))?;
            v.push((id, count));
        }
        out.push(v);
    }
    Ok(out)
}

/// A deterministic value in [-1, 1) for block `id` and dimension `d`.
fn projection(id: u32, d: usize) -> f64 {
    let mut z = (id as u64) << 8 ^ d as u64 ^ 0x5EED_5EED;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// Each vector normalised to sum 1, then projected to [`DIMS`] dimensions.
pub fn project(bbvs: &[Bbv]) -> Vec<[f64; DIMS]> {
    bbvs.iter()
        .map(|v| {
            let total: u64 = v.iter().map(|&(_, c)| c).sum();
            let mut p = [0.0; DIMS];
            for &(id, c) in v {
                let w = c as f64 / total.max(1) as f64;
                for (d, x) in p.iter_mut().enumerate() {
                    *x += w * projection(id, d);
                }
            }
            p
        })
        .collect()
}

fn dist2(a: &[f64; DIMS], b: &[f64; DIMS]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// k-means from a farthest-point start (deterministic): the assignment of
/// each point and the centres.
pub fn kmeans(points: &[[f64; DIMS]], k: usize) -> (Vec<usize>, Vec<[f64; DIMS]>) {
    let k = k.clamp(1, points.len().max(1));
    let mut centres = vec![points[0]];
    while centres.len() < k {
        let far = (0..points.len())
            .max_by(|&a, &b| {
                let da = centres.iter().map(|c| dist2(&points[a], c)).fold(f64::INFINITY, f64::min);
                let db = centres.iter().map(|c| dist2(&points[b], c)).fold(f64::INFINITY, f64::min);
                da.total_cmp(&db)
            })
            .expect("points");
        centres.push(points[far]);
    }
    let mut assign = vec![0; points.len()];
    for _ in 0..100 {
        let mut moved = false;
        for (i, p) in points.iter().enumerate() {
            let best = (0..k).min_by(|&a, &b| dist2(p, &centres[a]).total_cmp(&dist2(p, &centres[b]))).expect("k >= 1");
            moved |= best != assign[i];
            assign[i] = best;
        }
        for (c, centre) in centres.iter_mut().enumerate() {
            let members: Vec<&[f64; DIMS]> = points.iter().zip(&assign).filter(|(_, &a)| a == c).map(|(p, _)| p).collect();
            if !members.is_empty() {
                for d in 0..DIMS {
                    centre[d] = members.iter().map(|m| m[d]).sum::<f64>() / members.len() as f64;
                }
            }
        }
        if !moved {
            break;
        }
    }
    (assign, centres)
}

/// The Bayesian information criterion of a clustering (as SimPoint uses
/// it, after Pelleg and Moore's X-means, 2000): spherical Gaussians with
/// one shared per-dimension variance, their maximum-likelihood fit, less
/// half the free parameters times the log of the number of points. (The
/// fit's residual term is `(R - K) d / 2`, with the dimension that the
/// X-means paper's formula leaves out.)
pub fn bic(points: &[[f64; DIMS]], assign: &[usize], centres: &[[f64; DIMS]]) -> f64 {
    let (r, k, d) = (points.len() as f64, centres.len() as f64, DIMS as f64);
    if r <= k {
        return f64::NEG_INFINITY;
    }
    let sse: f64 = points.iter().zip(assign).map(|(p, &a)| dist2(p, &centres[a])).sum();
    let var = (sse / ((r - k) * d)).max(1e-300);
    let mut l = -(r * d / 2.0) * (2.0 * std::f64::consts::PI * var).ln() - (r - k) * d / 2.0;
    for c in 0..centres.len() {
        let rn = assign.iter().filter(|&&a| a == c).count() as f64;
        if rn > 0.0 {
            l += rn * (rn / r).ln();
        }
    }
    let params = (k - 1.0) + k * d + 1.0;
    l - params / 2.0 * r.ln()
}

#[derive(Clone, Debug, Serialize)]
pub struct SimPoint {
    /// Interval index (instructions from `interval * interval_size`).
    pub interval: usize,
    /// The cluster's share of the run's intervals.
    pub weight: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Phases {
    pub intervals: usize,
    pub interval_size: u64,
    pub k: usize,
    /// BIC per k = 1..max.
    pub bic: Vec<f64>,
    pub points: Vec<SimPoint>,
    /// The phase of each interval.
    pub phase_of: Vec<usize>,
    /// The single interval nearest the whole run's mean vector (the one
    /// cluster of k = 1): SimPoint's one-point choice (Sherwood et al.,
    /// ASPLOS 2002), used where one point per program must do.
    pub single: usize,
}

impl Phases {
    /// The share of the run spent in the phase of `interval`.
    pub fn weight_of_interval(&self, interval: usize) -> Option<f64> {
        let p = *self.phase_of.get(interval)?;
        Some(self.phase_of.iter().filter(|&&x| x == p).count() as f64 / self.intervals as f64)
    }
}

/// Cluster a run's vectors and choose its simulation points.
pub fn analyse(bbvs: &[Bbv], interval_size: u64, max_k: usize) -> Result<Phases, String> {
    if bbvs.is_empty() {
        return Err("no basic-block vectors (the program ran less than one interval?)".into());
    }
    let pts = project(bbvs);
    let runs: Vec<(Vec<usize>, Vec<[f64; DIMS]>)> = (1..=max_k.min(pts.len()).max(1)).map(|k| kmeans(&pts, k)).collect();
    let bics: Vec<f64> = runs.iter().map(|(a, c)| bic(&pts, a, c)).collect();
    let finite: Vec<f64> = bics.iter().copied().filter(|b| b.is_finite()).collect();
    let (lo, hi) = (finite.iter().copied().fold(f64::INFINITY, f64::min), finite.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    let pick = bics.iter().position(|&b| b.is_finite() && b >= lo + 0.9 * (hi - lo)).unwrap_or(0);
    let (assign, centres) = &runs[pick];
    let mean = &runs[0].1[0];
    let single = (0..pts.len()).min_by(|&a, &b| dist2(&pts[a], mean).total_cmp(&dist2(&pts[b], mean))).unwrap_or(0);
    let points = centres
        .iter()
        .enumerate()
        .filter_map(|(c, centre)| {
            let members: Vec<usize> = (0..pts.len()).filter(|&i| assign[i] == c).collect();
            let best = *members.iter().min_by(|&&a, &&b| dist2(&pts[a], centre).total_cmp(&dist2(&pts[b], centre)))?;
            Some(SimPoint { interval: best, weight: members.len() as f64 / pts.len() as f64 })
        })
        .collect();
    Ok(Phases { intervals: pts.len(), interval_size, k: centres.len(), bic: bics, points, phase_of: assign.clone(), single })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exp_bbv_lines_and_names_a_bad_one() {
        let v = parse_bbv("T:1:100 :2:50\nT:3:7\n").unwrap();
        assert_eq!(v, vec![vec![(1, 100), (2, 50)], vec![(3, 7)]]);
        let e = parse_bbv("T:1:100 2:50\n").unwrap_err();
        assert!(e.contains("line 1"), "{e}");
    }

    #[test]
    fn two_phases_are_found_and_weighted() {
        // 30 intervals in blocks 1-3, then 10 in blocks 7-9: two phases.
        let a: Bbv = vec![(1, 500), (2, 300), (3, 200)];
        let b: Bbv = vec![(7, 100), (8, 600), (9, 300)];
        let mut run: Vec<Bbv> = Vec::new();
        for i in 0..40 {
            let mut v = if i < 30 { a.clone() } else { b.clone() };
            // A little noise, different in every interval.
            v[0].1 += (i * 7 % 23) as u64;
            v[1].1 += (i * 5 % 17) as u64;
            run.push(v);
        }
        let p = analyse(&run, 1000, 6).unwrap();
        assert!(p.k >= 2, "the two phases are told apart: BIC {:?}", p.bic);
        // No cluster mixes the phases (BIC may split one by its noise).
        for c in 0..p.k {
            let members: Vec<usize> = (0..40).filter(|&i| p.phase_of[i] == c).collect();
            assert!(members.iter().all(|&i| i < 30) || members.iter().all(|&i| i >= 30), "cluster {c}: {members:?}");
        }
        let in_first: f64 = p.points.iter().filter(|s| s.interval < 30).map(|s| s.weight).sum();
        assert!((in_first - 0.75).abs() < 1e-9, "the first phase's points weigh {in_first}");
        let total: f64 = p.points.iter().map(|s| s.weight).sum();
        assert!((total - 1.0).abs() < 1e-9);
        // The single point is in the phase that holds most of the run (the
        // mean lies nearer it) and is that phase's least noisy interval.
        assert!(p.single < 30, "single point {}", p.single);
        // A run split evenly between the phases plus one interval that mixes
        // them half and half: that interval is nearest the mean.
        let mut even: Vec<Bbv> = (0..10).map(|i| if i < 5 { a.clone() } else { b.clone() }).collect();
        let mixed: Bbv = a.iter().chain(b.iter()).map(|&(id, c)| (id, c / 2)).collect();
        even.push(mixed);
        assert_eq!(analyse(&even, 1000, 3).unwrap().single, 10);
        // One phase only: k = 1.
        let one = analyse(&vec![a.clone(); 20], 1000, 5).unwrap();
        assert_eq!(one.k, 1);
        assert_eq!(one.points[0].weight, 1.0);
    }
}
