//! A paper's claims: the numbers its text prints, each with the tolerance
//! set before looking, judged against ours.
//!
//! ```text
//!  configs/reference/<paper>.toml           the paper's analysis (its module)
//!    [[claim]] id, text, where,               found: [(id, (ours, ours by the
//!              paper, kind, tolerance)              other averaging))]
//!                 \                             /
//!                  ClaimResult::evaluate: each claim's Rule
//!                    within   |ours - paper| <= width   (ratio, change, share, ...)
//!                    at most  ours <= paper             ("less than 5 %")
//!                    holds    ours = 1                  (a rule, as SecPB's order)
//!                    judged   a verdict the battery model gives (SecPB Tables V, VI)
//!                  -> the report's table, the index (one log-log point each)
//! ```
//! A claim with no number of ours, or a number with no claim, is an error
//! rather than a row left out: either is a typo between a reference file
//! and its paper's analysis.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// What a claim's number is: how it is printed, and how the index draws it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A factor: 3.0 is "3x".
    Ratio,
    /// A relative change: -0.51 is "reduces by 51 %".
    Change,
    /// A share of a whole: 0.4665 is 46.65 % of the instructions.
    Share,
    /// A fraction: 0.92 is 92 % of the extra traffic removed.
    Fraction,
    Seconds,
    /// A bound the paper gives from above ("by less than 7 %"), printed as a factor.
    AtMost,
    /// The same in seconds ("within 4 seconds").
    AtMostSeconds,
    /// A value already in percent (SecPB's table cells).
    Percent,
    /// A rule that holds (ours 1) or not (0).
    Holds,
    /// A volume in cubic millimetres (SecPB's battery rows).
    Mm3,
    /// A plain figure of a workload (SecPB's PPTI, NWPE).
    Number,
}

impl Kind {
    /// A value of this kind as the reports and the index print it.
    pub fn show(self, x: f64) -> String {
        match self {
            Kind::Ratio | Kind::AtMost => format!("{x:.2}x"),
            Kind::Seconds | Kind::AtMostSeconds => format!("{x:.4} s"),
            Kind::Percent => format!("{x:.1} %"),
            Kind::Holds => (if x == 1.0 { "holds" } else { "does not hold" }).to_string(),
            Kind::Mm3 => format!("{x:.3} mm3"),
            Kind::Number => format!("{x:.1}"),
            Kind::Change | Kind::Share | Kind::Fraction => format!("{:.1} %", x * 100.0),
        }
    }

    /// Ours minus the paper's, in this kind's unit (a rule has none).
    pub fn show_difference(self, d: f64) -> String {
        match self {
            Kind::Holds => "-".into(),
            Kind::Ratio | Kind::AtMost => format!("{d:+.2}"),
            Kind::Percent => format!("{d:+.1} points"),
            Kind::Mm3 => format!("{d:+.3} mm3"),
            Kind::Number => format!("{d:+.1}"),
            Kind::Seconds | Kind::AtMostSeconds => format!("{d:+.4} s"),
            Kind::Change | Kind::Share | Kind::Fraction => format!("{:+.1} points", d * 100.0),
        }
    }

    /// Where a value of this kind sits on a log axis, before the check
    /// that it is positive: a change c as the factor 1 + c (a change
    /// runs from -100 % up, a factor from 0 up), a rule nowhere.
    fn on_log_axis(self, x: f64) -> Option<f64> {
        match self {
            Kind::Holds => None,
            Kind::Change => Some(1.0 + x),
            _ => Some(x),
        }
    }

    /// The printed bound of an `at-most` claim is the only kind of claim
    /// whose rule is one-sided.
    fn is_bound(self) -> bool {
        matches!(self, Kind::AtMost | Kind::AtMostSeconds)
    }
}

/// What counts as reproduced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// Ours within `width` of the paper's, either side (edges included).
    Within(f64),
    /// Ours no more than the paper's bound.
    AtMost,
    /// A rule of the paper's text: ours is 1 when it holds.
    Holds,
    /// Judged by a model's own rule (SecPB's battery rows: both volumes
    /// within 5 % of the interval the printed digits stand for); `low` and
    /// `high` are the range of this one number that rule would take.
    Judged { reproduced: bool, low: f64, high: f64 },
}

impl Rule {
    /// Whether `ours` reproduces `paper`. NaN never does.
    pub fn accepts(&self, paper: f64, ours: f64) -> bool {
        match *self {
            // Written as the distance, not as two edges: p - w <= x can
            // round differently from |x - p| <= w at the very edge.
            Rule::Within(width) => (ours - paper).abs() <= width,
            Rule::AtMost => ours <= paper,
            Rule::Holds => ours == 1.0,
            Rule::Judged { reproduced, .. } => reproduced,
        }
    }

    /// The range of ours that counts (None: unbounded on that side, or no
    /// range at all for a rule).
    pub fn accepted(&self, paper: f64) -> Option<(Option<f64>, Option<f64>)> {
        match *self {
            Rule::Within(w) => Some((Some(paper - w), Some(paper + w))),
            Rule::AtMost => Some((None, Some(paper))),
            Rule::Holds => None,
            Rule::Judged { low, high, .. } => Some((Some(low), Some(high))),
        }
    }
}

/// A tolerance that grows with the paper's value: `relative` of it, and
/// at least `at_least` (SecPB's cells: a quarter, at least 5 points).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelativeTolerance {
    pub relative: f64,
    pub at_least: f64,
}

impl RelativeTolerance {
    pub fn rule(&self, paper: f64) -> Rule {
        Rule::Within((paper.abs() * self.relative).max(self.at_least))
    }
}

/// One claim of a reference file.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub id: String,
    pub text: String,
    #[serde(rename = "where")]
    pub where_: String,
    pub paper: f64,
    pub kind: Kind,
    /// How far ours may be from the paper's, in the claim's own unit
    /// (0 for a bound: ours may not pass it at all).
    pub tolerance: f64,
}

impl Claim {
    pub fn rule(&self) -> Rule {
        match self.kind {
            k if k.is_bound() => Rule::AtMost,
            Kind::Holds => Rule::Holds,
            _ => Rule::Within(self.tolerance),
        }
    }

    fn check(&self) -> Result<(), String> {
        if !self.paper.is_finite() {
            return Err("`paper` is not a finite number".into());
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 0.0) {
            return Err(format!("`tolerance` = {} must be a finite number, 0 or more", self.tolerance));
        }
        if (self.kind.is_bound() || self.kind == Kind::Holds) && self.tolerance != 0.0 {
            return Err(format!(
                "a claim of kind {:?} takes `tolerance = 0.0`: its rule has no slack (ours may not pass a bound; a rule holds or not)",
                self.kind
            ));
        }
        if self.kind == Kind::Holds && self.paper != 1.0 {
            return Err("a rule (kind holds) takes `paper = 1.0`: the paper says it holds".into());
        }
        Ok(())
    }
}

/// `configs/reference/<name>.toml`, parsed as `T` (under `$SPMSIM_CONFIGS`
/// if set); an error names the file.
pub fn read_reference<T: DeserializeOwned>(name: &str) -> Result<T, String> {
    let path = crate::config::presets_dir().join(format!("reference/{name}.toml"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// A paper's reference file of claims.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub source: String,
    pub claim: Vec<Claim>,
    /// The statements the paper leaves open, each with its readings
    /// (`readings.rs`).
    #[serde(default)]
    pub readings: Vec<super::readings::OpenStatement>,
    /// The file, as the reports name it.
    #[serde(skip)]
    pub file: String,
}

impl Reference {
    /// `configs/reference/<paper>.toml`, every claim checked.
    pub fn load(paper: &str) -> Result<Self, String> {
        let mut r: Reference = read_reference(paper)?;
        r.file = format!("configs/reference/{paper}.toml");
        r.check()?;
        Ok(r)
    }

    fn check(&self) -> Result<(), String> {
        for (i, c) in self.claim.iter().enumerate() {
            c.check().map_err(|e| format!("{}: claim `{}`: {e}", self.file, c.id))?;
            if self.claim[..i].iter().any(|d| d.id == c.id) {
                return Err(format!("{}: claim `{}` is given twice", self.file, c.id));
            }
        }
        Ok(())
    }

    /// The paper's number of claim `id`.
    pub fn paper(&self, id: &str) -> Option<f64> {
        self.claim.iter().find(|c| c.id == id).map(|c| c.paper)
    }

    /// Each claim judged against our number in `found` (id, (ours, ours by
    /// the other averaging)), in the file's order.
    pub fn evaluate(&self, found: &[(&str, (f64, f64))]) -> Result<Vec<ClaimResult>, String> {
        for (i, (id, _)) in found.iter().enumerate() {
            if !self.claim.iter().any(|c| c.id == *id) {
                return Err(format!("the analysis measures `{id}`, which {} has no claim for", self.file));
            }
            if found[..i].iter().any(|(d, _)| d == id) {
                return Err(format!("the analysis measures `{id}` twice"));
            }
        }
        self.claim
            .iter()
            .map(|c| {
                let &(_, ours) = found
                    .iter()
                    .find(|(id, _)| *id == c.id)
                    .ok_or_else(|| format!("claim `{}` of {} has no number of ours: the analysis does not measure it", c.id, self.file))?;
                Ok(ClaimResult::new(&c.id, &c.text, &c.where_, c.kind, c.paper, ours, c.rule()))
            })
            .collect()
    }
}

/// A claim with our number beside the paper's.
#[derive(Clone, Debug, Serialize)]
pub struct ClaimResult {
    pub id: String,
    pub text: String,
    #[serde(rename = "where")]
    pub where_: String,
    pub kind: Kind,
    pub paper: f64,
    /// Ours: a geometric mean over workloads where there are several.
    pub ours: f64,
    /// The same by the other averaging (arithmetic, or pooled), for the
    /// paper's unstated one.
    pub ours_arithmetic: f64,
    pub difference: f64,
    pub reproduced: bool,
    /// The rule `reproduced` came from (the index draws its range).
    #[serde(skip)]
    pub rule: Rule,
}

impl ClaimResult {
    /// `ours` is (ours, ours by the other averaging).
    pub fn new(id: &str, text: &str, where_: &str, kind: Kind, paper: f64, ours: (f64, f64), rule: Rule) -> Self {
        ClaimResult {
            id: id.into(),
            text: text.into(),
            where_: where_.into(),
            kind,
            paper,
            ours: ours.0,
            ours_arithmetic: ours.1,
            difference: ours.0 - paper,
            reproduced: rule.accepts(paper, ours.0),
            rule,
        }
    }

    /// A value of this claim's kind as the reports print it.
    pub fn show(&self, x: f64) -> String {
        self.kind.show(x)
    }

    /// The claims as a report's Markdown table, headed by how many were
    /// reproduced against `reference` (the file they come from).
    pub fn markdown(claims: &[ClaimResult], reference: &str) -> String {
        let mut s = Self::heading(claims, reference);
        let _ = writeln!(s, "| claim | where | paper | ours | ours (arith/pooled) | reproduced |\n|---|---|---|---|---|---|");
        for c in claims {
            let _ = writeln!(
                s,
                "| {} | {} | {}{} | {} | {} | {} |",
                c.text,
                c.where_,
                if c.kind.is_bound() { "< " } else { "" },
                c.show(c.paper),
                c.show(c.ours),
                c.show(c.ours_arithmetic),
                yes_no(c.reproduced)
            );
        }
        s
    }

    /// The claims section's heading and count, before a paper's table.
    pub fn heading(claims: &[ClaimResult], reference: &str) -> String {
        let n = claims.iter().filter(|c| c.reproduced).count();
        format!("## The paper's claims\n\n{n} of {} reproduced within their tolerance ({reference}).\n\n", claims.len())
    }

    /// Where the index's log-log plot draws this claim, or why it cannot.
    pub fn on_log_axes(&self) -> Result<LogPoint, String> {
        let Some(paper) = self.kind.on_log_axis(self.paper) else {
            return Err("a rule, which holds or not: no number to draw".into());
        };
        let ours = self.kind.on_log_axis(self.ours).unwrap_or(f64::NAN);
        let not_drawn = |who: &str, x: f64| format!("{who} {} cannot sit on a log axis", self.kind.show(x));
        if !(paper > 0.0 && paper.is_finite()) {
            return Err(not_drawn("the paper's", self.paper));
        }
        if !(ours > 0.0 && ours.is_finite()) {
            return Err(not_drawn("ours,", self.ours));
        }
        // An edge at or below zero leaves the band open downwards.
        let edge = |x: Option<f64>| x.and_then(|x| self.kind.on_log_axis(x)).filter(|&x| x > 0.0);
        let (low, high) = self.rule.accepted(self.paper).map_or((None, None), |(l, h)| (edge(l), edge(h)));
        Ok(LogPoint { id: self.id.clone(), paper, ours, low, high, reproduced: self.reproduced })
    }
}

/// One claim on the index's log-log plot, in the plot's units (a change
/// as 1 + change): the paper's number, ours, and the range of ours that
/// counts as reproduced (None: open on that side).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogPoint {
    pub id: String,
    pub paper: f64,
    pub ours: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub reproduced: bool,
}

pub fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(kind: Kind, paper: f64, tolerance: f64) -> Claim {
        Claim { id: "c".into(), text: "t".into(), where_: "w".into(), paper, kind, tolerance }
    }

    fn reference(claims: Vec<Claim>) -> Reference {
        Reference { source: "s".into(), claim: claims, readings: Vec::new(), file: "ref.toml".into() }
    }

    fn judged(kind: Kind, paper: f64, tolerance: f64, ours: f64) -> bool {
        let c = claim(kind, paper, tolerance);
        reference(vec![c]).evaluate(&[("c", (ours, ours))]).unwrap()[0].reproduced
    }

    #[test]
    fn a_tolerance_takes_both_of_its_edges_and_nothing_past_them() {
        // Values exact in binary, so that the edges are the edges.
        for kind in [Kind::Ratio, Kind::Seconds, Kind::Share, Kind::Fraction] {
            assert!(judged(kind, 3.0, 0.5, 3.5) && judged(kind, 3.0, 0.5, 2.5), "{kind:?}");
            assert!(judged(kind, 3.0, 0.5, 3.0));
            assert!(!judged(kind, 3.0, 0.5, 3.5 + 1e-12) && !judged(kind, 3.0, 0.5, 2.5 - 1e-12), "{kind:?}");
        }
        // The numbers the files hold: 0.41 from -0.51 is 0.1 only up to
        // rounding, as it was before the framework.
        assert_eq!(judged(Kind::Change, -0.51, 0.10, -0.41), (-0.41f64 - -0.51f64).abs() <= 0.10);
    }

    #[test]
    fn negative_changes_and_zero_are_judged_by_their_distance() {
        // A change of -50 % +- 25 points: -25 % and -75 % count, -20 % not.
        assert!(judged(Kind::Change, -0.5, 0.25, -0.25) && judged(Kind::Change, -0.5, 0.25, -0.75));
        assert!(!judged(Kind::Change, -0.5, 0.25, -0.2) && !judged(Kind::Change, -0.5, 0.25, 0.5));
        // Zero tolerance: the paper's number alone.
        assert!(judged(Kind::Change, 0.0, 0.0, 0.0) && judged(Kind::Change, 0.0, 0.0, -0.0));
        assert!(!judged(Kind::Change, 0.0, 0.0, 1e-300));
        // Not a number never counts, whatever the rule.
        for kind in [Kind::Ratio, Kind::AtMost, Kind::Holds] {
            let t = if kind == Kind::Ratio { 1e9 } else { 0.0 };
            assert!(!judged(kind, 1.0, t, f64::NAN), "{kind:?}");
        }
    }

    #[test]
    fn a_bound_takes_anything_up_to_it() {
        assert!(judged(Kind::AtMost, 0.05, 0.0, 0.05) && judged(Kind::AtMost, 0.05, 0.0, -3.0));
        assert!(!judged(Kind::AtMost, 0.05, 0.0, 0.050001));
        assert!(judged(Kind::AtMostSeconds, 4.0, 0.0, 0.0) && !judged(Kind::AtMostSeconds, 4.0, 0.0, 4.5));
        assert!(judged(Kind::AtMost, 0.0, 0.0, 0.0) && !judged(Kind::AtMost, 0.0, 0.0, 1e-300));
    }

    #[test]
    fn a_rule_holds_at_one_only() {
        assert!(judged(Kind::Holds, 1.0, 0.0, 1.0));
        assert!(!judged(Kind::Holds, 1.0, 0.0, 0.0) && !judged(Kind::Holds, 1.0, 0.0, 0.999));
        let r = ClaimResult::new("order", "an order", "issue 3", Kind::Holds, 1.0, (0.0, 0.0), Rule::Holds);
        assert_eq!((r.difference, r.show(r.ours), r.kind.show_difference(r.difference)), (-1.0, "does not hold".into(), "-".into()));
    }

    #[test]
    fn a_relative_tolerance_has_a_floor() {
        let t = RelativeTolerance { relative: 0.25, at_least: 5.0 };
        // 25 % of 100 is 25 points; 25 % of 1.3 is under the 5-point floor.
        assert_eq!(t.rule(100.0), Rule::Within(25.0));
        assert_eq!(t.rule(1.3), Rule::Within(5.0));
        assert_eq!(t.rule(-100.0), Rule::Within(25.0));
        assert!(t.rule(1.3).accepts(1.3, 6.3) && !t.rule(1.3).accepts(1.3, 6.31));
    }

    #[test]
    fn the_accepted_range_is_what_the_rule_takes() {
        assert_eq!(Rule::Within(0.5).accepted(3.0), Some((Some(2.5), Some(3.5))));
        assert_eq!(Rule::AtMost.accepted(4.0), Some((None, Some(4.0))));
        assert_eq!(Rule::Holds.accepted(1.0), None);
        let j = Rule::Judged { reproduced: false, low: 0.9, high: 1.1 };
        assert_eq!(j.accepted(1.0), Some((Some(0.9), Some(1.1))));
        assert!(!j.accepts(1.0, 1.0), "a judged claim keeps its model's verdict");
    }

    #[test]
    fn evaluate_keeps_the_file_order_and_refuses_a_mismatch() {
        let mut a = claim(Kind::Ratio, 3.0, 0.6);
        a.id = "a".into();
        let mut b = claim(Kind::Change, -0.26, 0.1);
        b.id = "b".into();
        let rf = reference(vec![a, b]);
        let r = rf.evaluate(&[("b", (-0.2, -0.1)), ("a", (3.5, 3.7))]).unwrap();
        assert_eq!(r.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!((r[0].ours, r[0].ours_arithmetic, r[0].reproduced), (3.5, 3.7, true));
        assert!((r[1].difference - 0.06).abs() < 1e-12 && r[1].reproduced);
        let e = rf.evaluate(&[("a", (3.0, 3.0))]).unwrap_err();
        assert!(e.contains("`b`") && e.contains("ref.toml"), "{e}");
        let e = rf.evaluate(&[("a", (3.0, 3.0)), ("b", (0.0, 0.0)), ("typo", (1.0, 1.0))]).unwrap_err();
        assert!(e.contains("`typo`"), "{e}");
        let e = rf.evaluate(&[("a", (3.0, 3.0)), ("a", (3.0, 3.0)), ("b", (0.0, 0.0))]).unwrap_err();
        assert!(e.contains("twice"), "{e}");
    }

    #[test]
    fn a_reference_file_is_checked_as_it_loads() {
        let parse = |text: &str| -> Result<Reference, String> {
            let mut r: Reference = toml::from_str(text).map_err(|e| e.to_string())?;
            r.file = "x.toml".into();
            r.check().map(|_| r)
        };
        let one = |kind: &str, tol: &str| {
            format!(
                "source = \"s\"\n[[claim]]\nid = \"a\"\ntext = \"t\"\nwhere = \"w\"\npaper = 0.5\nkind = \"{kind}\"\ntolerance = {tol}\n"
            )
        };
        assert_eq!(parse(&one("at-most", "0.0")).unwrap().claim[0].rule(), Rule::AtMost);
        assert!(parse(&one("at-most", "0.1")).unwrap_err().contains("takes `tolerance = 0.0`"));
        assert!(parse(&one("ratio", "-0.1")).unwrap_err().contains("0 or more"));
        assert!(parse(&one("holds", "0.0")).unwrap_err().contains("paper = 1.0"));
        assert!(parse(&one("speed", "0.1")).unwrap_err().contains("unknown variant `speed`"));
        assert!(parse(&format!("{}unit = \"x\"\n", one("ratio", "0.1"))).unwrap_err().contains("unknown field `unit`"));
        let twice = format!("{}{}", one("ratio", "0.1"), one("ratio", "0.1").replace("source = \"s\"\n", ""));
        assert!(parse(&twice).unwrap_err().contains("given twice"));
    }

    #[test]
    fn every_shipped_reference_loads() {
        for paper in ["secon", "star", "triad", "mset"] {
            let r = Reference::load(paper).unwrap();
            assert!(!r.claim.is_empty(), "{paper}");
            assert_eq!(r.file, format!("configs/reference/{paper}.toml"));
        }
    }

    #[test]
    fn a_claim_sits_on_log_axes_as_a_positive_number() {
        let c = ClaimResult::new("x", "t", "w", Kind::Ratio, 3.0, (2.0, 2.0), Rule::Within(0.6));
        let p = c.on_log_axes().unwrap();
        assert_eq!((p.paper, p.ours, p.reproduced), (3.0, 2.0, false));
        assert!((p.low.unwrap() - 2.4).abs() < 1e-12 && (p.high.unwrap() - 3.6).abs() < 1e-12);
        // A change as the factor 1 + c; the band's lower edge at -100 % or
        // below leaves it open.
        let c = ClaimResult::new("y", "t", "w", Kind::Change, -0.51, (-0.95, -0.95), Rule::Within(0.6));
        let p = c.on_log_axes().unwrap();
        assert!((p.paper - 0.49).abs() < 1e-12 && (p.ours - 0.05).abs() < 1e-12);
        assert_eq!(p.low, None);
        assert!((p.high.unwrap() - 1.09).abs() < 1e-12);
        // A bound is open below.
        let c = ClaimResult::new("z", "t", "w", Kind::AtMostSeconds, 4.0, (1.0, 1.0), Rule::AtMost);
        assert_eq!(c.on_log_axes().unwrap().low, None);
        assert_eq!(c.on_log_axes().unwrap().high, Some(4.0));
        // What cannot be drawn says why.
        let rule = ClaimResult::new("o", "t", "w", Kind::Holds, 1.0, (1.0, 1.0), Rule::Holds);
        assert!(rule.on_log_axes().unwrap_err().contains("a rule"));
        let neg = ClaimResult::new("n", "t", "w", Kind::Percent, 1.3, (-0.4, -0.4), Rule::Within(5.0));
        assert!(neg.on_log_axes().unwrap_err().contains("-0.4 %"), "{:?}", neg.on_log_axes());
        let nan = ClaimResult::new("m", "t", "w", Kind::Seconds, 1.0, (f64::NAN, f64::NAN), Rule::Within(1.0));
        assert!(nan.on_log_axes().is_err());
    }

    #[test]
    fn kinds_print_as_the_reports_always_did() {
        let cases = [
            (Kind::Ratio, 3.0, "3.00x", "+3.00"),
            (Kind::AtMost, 0.05, "0.05x", "+0.05"),
            (Kind::Change, -0.51, "-51.0 %", "-51.0 points"),
            (Kind::Share, 0.4665, "46.7 %", "+46.7 points"),
            (Kind::Seconds, 30.68, "30.6800 s", "+30.6800 s"),
            (Kind::AtMostSeconds, 4.0, "4.0000 s", "+4.0000 s"),
            (Kind::Percent, 71.3, "71.3 %", "+71.3 points"),
            (Kind::Mm3, 4.89, "4.890 mm3", "+4.890 mm3"),
            (Kind::Holds, 1.0, "holds", "-"),
        ];
        for (k, x, shown, diff) in cases {
            assert_eq!((k.show(x), k.show_difference(x)), (shown.to_string(), diff.to_string()), "{k:?}");
        }
        // The files' spelling of each kind.
        let kinds: Vec<Kind> = serde_json::from_str(r#"["at-most", "at-most-seconds", "mm3", "holds"]"#).unwrap();
        assert_eq!(kinds, [Kind::AtMost, Kind::AtMostSeconds, Kind::Mm3, Kind::Holds]);
    }
}
