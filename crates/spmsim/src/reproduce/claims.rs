//! A paper's claims: the numbers its text prints, each of the kind its
//! sentence states, judged against ours by the one rule of [`super::rule`].
//!
//! ```text
//!  configs/reference/<paper>.toml           the paper's analysis (its module)
//!    [[claim]] id, text, where, paper,        found: [(id, (ours, ours by the
//!              kind, bound?,                        other averaging))]
//!              disagreement?                  other: [(id, ours under the
//!                 \                            other statement's reading)]
//!                  \                          /
//!                   ClaimResult: the kind's rule -> an outcome
//!                     reproduced   ours within the rule, the paper consistent
//!                     the paper disagrees with itself
//!                                  two statements of the paper incompatible
//!                                  by arithmetic, ours within the rule under
//!                                  the reading of one of them
//!                     missed       otherwise
//!                   -> the report's table, the index (one log-log point each)
//! ```
//! A claim with no number of ours, or a number with no claim, is an error
//! rather than a row left out: either is a typo between a reference file
//! and its paper's analysis.

pub use super::rule::{Bound, Kind, Rule, THE_RULE};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// Where a claim stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Ours within the rule, and the paper does not contradict the claim.
    Reproduced,
    /// Two of the paper's own statements are incompatible by arithmetic,
    /// and ours is within the rule under the reading of one of them. Never
    /// counted as reproduced.
    Disagrees,
    /// Ours outside the rule (under every reading, where there are two).
    Missed,
}

impl Outcome {
    pub const ALL: [Outcome; 3] = [Outcome::Reproduced, Outcome::Disagrees, Outcome::Missed];

    pub fn label(self) -> &'static str {
        match self {
            Outcome::Reproduced => "reproduced",
            Outcome::Disagrees => "the paper disagrees with itself",
            Outcome::Missed => "missed",
        }
    }

    /// How many of `claims` have this outcome.
    pub fn count(self, claims: &[ClaimResult]) -> usize {
        claims.iter().filter(|c| c.outcome == self).count()
    }
}

/// Another statement of the paper that the claim's number contradicts:
/// what it says, where, the arithmetic that shows the two incompatible,
/// and the claim's number under its reading.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Disagreement {
    /// The other statement, with where the paper makes it.
    pub statement: String,
    /// The arithmetic that shows it and the claim's number incompatible.
    pub arithmetic: String,
    /// The claim's number under the other statement's reading.
    pub paper: f64,
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
    /// The paper states a bound ("less than 5 %"), not a number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// Another statement of the paper that this number contradicts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<Disagreement>,
}

impl Claim {
    pub fn rule(&self) -> Rule {
        self.kind.rule(self.paper, self.bound)
    }

    fn check(&self) -> Result<(), String> {
        if !self.paper.is_finite() {
            return Err("`paper` is not a finite number".into());
        }
        if self.kind.is_rule() && self.paper != 1.0 {
            return Err(format!("a claim of kind {:?} takes `paper = 1.0`: the paper says it holds", self.kind));
        }
        if self.kind.is_rule() && (self.bound.is_some() || self.disagreement.is_some()) {
            return Err(format!("a claim of kind {:?} holds or not: it takes no `bound` and no `disagreement`", self.kind));
        }
        if let Some(d) = &self.disagreement {
            if !d.paper.is_finite() || d.statement.trim().is_empty() || d.arithmetic.trim().is_empty() {
                return Err("a `disagreement` needs the other `statement`, the `arithmetic` that shows the two incompatible, and the claim's finite `paper` number under the statement's reading".into());
            }
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
    pub readings: Vec<super::open_statement::OpenStatement>,
    /// The file, as the reports name it.
    #[serde(skip)]
    pub file: String,
}

/// Ours for each claim: (id, (ours, ours by the other averaging)).
pub type Found<'a> = [(&'a str, (f64, f64))];

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

    /// Each claim judged against our number in `found`, in the file's order.
    pub fn evaluate(&self, found: &Found) -> Result<Vec<ClaimResult>, String> {
        self.evaluate_with(found, &[])
    }

    /// The same, with ours under a disagreement's other reading where it
    /// differs from ours under the claim's own (`other`: (id, ours)); a
    /// claim with a disagreement and no entry in `other` is judged under
    /// both readings with the same number of ours.
    pub fn evaluate_with(&self, found: &Found, other: &[(&str, f64)]) -> Result<Vec<ClaimResult>, String> {
        let ids: Vec<&str> = found.iter().map(|f| f.0).collect();
        unique_and_known(self, &ids, "measures")?;
        let other_ids: Vec<&str> = other.iter().map(|f| f.0).collect();
        unique_and_known(self, &other_ids, "measures under another reading")?;
        if let Some(id) = other_ids.iter().find(|id| self.claim.iter().any(|c| c.id == **id && c.disagreement.is_none())) {
            return Err(format!("the analysis gives `{id}` a number under another reading, but {} gives it no disagreement", self.file));
        }
        self.claim
            .iter()
            .map(|c| {
                let &(_, ours) = found
                    .iter()
                    .find(|(id, _)| *id == c.id)
                    .ok_or_else(|| format!("claim `{}` of {} has no number of ours: the analysis does not measure it", c.id, self.file))?;
                let mut r = ClaimResult::new(&c.id, &c.text, &c.where_, c.kind, c.paper, ours, c.rule());
                r.bound = c.bound;
                if let Some(d) = &c.disagreement {
                    let theirs = other.iter().find(|(id, _)| *id == c.id).map_or(ours.0, |o| o.1);
                    r = r.disagreeing(d, theirs, c.kind.rule(d.paper, c.bound));
                }
                Ok(r)
            })
            .collect()
    }
}

/// Every id in `ids` names a claim of `rf`, once.
fn unique_and_known(rf: &Reference, ids: &[&str], what: &str) -> Result<(), String> {
    for (i, id) in ids.iter().enumerate() {
        if !rf.claim.iter().any(|c| c.id == *id) {
            return Err(format!("the analysis {what} `{id}`, which {} has no claim for", rf.file));
        }
        if ids[..i].contains(id) {
            return Err(format!("the analysis {what} `{id}` twice"));
        }
    }
    Ok(())
}

/// A claim judged under the reading of the paper's other statement.
#[derive(Clone, Debug, Serialize)]
pub struct OtherReading {
    pub statement: String,
    pub arithmetic: String,
    /// The claim's number under that reading.
    pub paper: f64,
    /// Ours under that reading.
    pub ours: f64,
    /// Ours within the rule of that number.
    pub within: bool,
}

/// A claim with our number beside the paper's.
#[derive(Clone, Debug, Serialize)]
pub struct ClaimResult {
    pub id: String,
    pub text: String,
    #[serde(rename = "where")]
    pub where_: String,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    pub paper: f64,
    /// Ours: a geometric mean over workloads where there are several.
    pub ours: f64,
    /// The same by the other averaging (arithmetic, or pooled), for the
    /// paper's unstated one.
    pub ours_arithmetic: f64,
    pub difference: f64,
    /// Ours within the rule of the paper's number as the claim states it.
    pub within: bool,
    pub outcome: Outcome,
    /// The outcome is [`Outcome::Reproduced`].
    pub reproduced: bool,
    /// Where another statement of the paper contradicts the claim: the
    /// claim under that statement's reading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_reading: Option<OtherReading>,
    /// The rule `within` came from (the index draws its range).
    #[serde(skip)]
    pub rule: Rule,
}

impl ClaimResult {
    /// `ours` is (ours, ours by the other averaging).
    pub fn new(id: &str, text: &str, where_: &str, kind: Kind, paper: f64, ours: (f64, f64), rule: Rule) -> Self {
        let within = rule.accepts(paper, ours.0);
        ClaimResult {
            id: id.into(),
            text: text.into(),
            where_: where_.into(),
            kind,
            bound: None,
            paper,
            ours: ours.0,
            ours_arithmetic: ours.1,
            difference: ours.0 - paper,
            within,
            outcome: if within { Outcome::Reproduced } else { Outcome::Missed },
            reproduced: within,
            other_reading: None,
            rule,
        }
    }

    /// The claim contradicted by the paper's statement `d`: judged under
    /// its reading too, with ours `theirs` under it and that reading's
    /// `rule`; the paper disagrees with itself if ours is within either
    /// reading's rule, and it is missed otherwise. Never reproduced.
    pub fn disagreeing(mut self, d: &Disagreement, theirs: f64, rule: Rule) -> Self {
        let within = rule.accepts(d.paper, theirs);
        self.outcome = if self.within || within { Outcome::Disagrees } else { Outcome::Missed };
        self.reproduced = false;
        self.other_reading =
            Some(OtherReading { statement: d.statement.clone(), arithmetic: d.arithmetic.clone(), paper: d.paper, ours: theirs, within });
        self
    }

    /// A value of this claim's kind as the reports print it.
    pub fn show(&self, x: f64) -> String {
        self.kind.show(x)
    }

    /// The paper's number as the claim states it ("< +5.0 %" for a bound).
    pub fn show_paper(&self) -> String {
        format!("{}{}", self.bound.map_or("", Bound::sign), self.kind.show(self.paper))
    }

    /// The claims as a report's Markdown: the count, the table, and every
    /// claim the paper contradicts under both readings.
    pub fn markdown(claims: &[ClaimResult], reference: &str) -> String {
        let mut s = Self::heading(claims, reference);
        let _ = writeln!(s, "| claim | where | paper | ours | ours (arith/pooled) | difference | outcome |\n|---|---|---|---|---|---|---|");
        for c in claims {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} |",
                c.text,
                c.where_,
                c.show_paper(),
                c.show(c.ours),
                c.show(c.ours_arithmetic),
                c.kind.show_difference(c.difference),
                c.outcome.label()
            );
        }
        s.push_str(&Self::disagreements(claims));
        s
    }

    /// The claims section's heading, its count and the rule, before a
    /// paper's table.
    pub fn heading(claims: &[ClaimResult], reference: &str) -> String {
        format!("## The paper's claims\n\n{} ({reference}). The rule: {THE_RULE}.\n\n", counts(claims))
    }

    /// Each claim the paper contradicts: the two statements, the
    /// arithmetic, and ours under each reading (empty when there is none).
    pub fn disagreements(claims: &[ClaimResult]) -> String {
        let mut s = String::new();
        for c in claims {
            let Some(o) = &c.other_reading else { continue };
            if s.is_empty() {
                s.push_str("\n### Where the paper disagrees with itself\n\nEach claim below is judged under both statements' readings and counted apart, never as reproduced.\n\n");
            }
            let yes = |b: bool| if b { "within the rule" } else { "outside it" };
            let _ = writeln!(
                s,
                "- **{}** ({}): the paper's {} against ours {} ({}). But {}: {}. Under that reading, {} against ours {} ({}). Outcome: {}.",
                c.text,
                c.where_,
                c.show_paper(),
                c.show(c.ours),
                yes(c.within),
                o.statement,
                o.arithmetic,
                format_args!("{}{}", c.bound.map_or("", Bound::sign), c.show(o.paper)),
                c.show(o.ours),
                yes(o.within),
                c.outcome.label()
            );
        }
        s
    }

    /// Where the index's log-log plot draws this claim, or why it cannot.
    pub fn on_log_axes(&self) -> Result<LogPoint, String> {
        let Some(paper) = self.kind.on_log_axis(self.paper) else {
            return Err(format!("{} {}, which holds or not: no number to draw", article(self.kind), kind_name(self.kind)));
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
        let positive = |x: Option<f64>| x.filter(|&x| x > 0.0 && x.is_finite());
        let other = self.other_reading.as_ref().and_then(|o| {
            Some(OtherPoint { paper: positive(self.kind.on_log_axis(o.paper))?, ours: positive(self.kind.on_log_axis(o.ours))? })
        });
        Ok(LogPoint { id: self.id.clone(), paper, ours, low, high, outcome: self.outcome, reproduced: self.reproduced, other })
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Order => "order",
        _ => "trend",
    }
}

fn article(k: Kind) -> &'static str {
    match k {
        Kind::Order => "an",
        _ => "a",
    }
}

/// "3 reproduced, 1 where the paper disagrees with itself, 2 missed, of 6".
pub fn counts(claims: &[ClaimResult]) -> String {
    let [r, d, m] = Outcome::ALL.map(|o| o.count(claims));
    format!("{r} reproduced, {d} where the paper disagrees with itself, {m} missed, of {}", claims.len())
}

/// One claim on the index's log-log plot, in the plot's units (a change
/// as 1 + change): the paper's number, ours, the range of ours that
/// counts (None: open on that side), its outcome, and where the claim
/// sits under the paper's other statement, if one contradicts it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LogPoint {
    pub id: String,
    pub paper: f64,
    pub ours: f64,
    pub low: Option<f64>,
    pub high: Option<f64>,
    pub outcome: Outcome,
    pub reproduced: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other: Option<OtherPoint>,
}

/// A claim under its other reading, in the plot's units.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct OtherPoint {
    pub paper: f64,
    pub ours: f64,
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

    fn claim(kind: Kind, paper: f64) -> Claim {
        Claim { id: "c".into(), text: "t".into(), where_: "w".into(), paper, kind, bound: None, disagreement: None }
    }

    fn reference(claims: Vec<Claim>) -> Reference {
        Reference { source: "s".into(), claim: claims, readings: Vec::new(), file: "ref.toml".into() }
    }

    fn judged(c: Claim, ours: f64) -> ClaimResult {
        reference(vec![c]).evaluate(&[("c", (ours, ours))]).unwrap().remove(0)
    }

    fn disagreement(paper: f64) -> Disagreement {
        Disagreement { statement: "4.2.1 says otherwise".into(), arithmetic: "0.74 x 0.59 = 0.4366".into(), paper }
    }

    #[test]
    fn a_claim_is_judged_by_its_kinds_rule() {
        assert_eq!(judged(claim(Kind::Factor, 3.0), 3.75).outcome, Outcome::Reproduced);
        assert_eq!(judged(claim(Kind::Factor, 3.0), 3.76).outcome, Outcome::Missed);
        // SecPB's COBCM: 1.3 % against 5.8 % is a miss, 1.8 % is not.
        assert_eq!(judged(claim(Kind::Change, 0.013), 0.058).outcome, Outcome::Missed);
        assert_eq!(judged(claim(Kind::Change, 0.013), 0.018).outcome, Outcome::Reproduced);
        let order = judged(claim(Kind::Order, 1.0), 0.0);
        assert_eq!(
            (order.outcome, order.show(order.ours), order.kind.show_difference(order.difference)),
            (Outcome::Missed, "does not hold".into(), "-".into())
        );
        assert!(judged(claim(Kind::Trend, 1.0), 1.0).reproduced);
    }

    #[test]
    fn a_bound_prints_with_its_side_and_takes_anything_up_to_it() {
        // Secon 4.4.1: "increases the execution latency by less than 5 %".
        let mut c = claim(Kind::Change, 0.05);
        c.bound = Some(Bound::AtMost);
        let r = judged(c.clone(), 0.43);
        assert_eq!((r.show_paper(), r.show(r.ours), r.outcome), ("< +5.0 %".into(), "+43.0 %".into(), Outcome::Missed));
        assert_eq!(judged(c.clone(), 0.05).outcome, Outcome::Reproduced);
        assert_eq!(judged(c, -0.2).outcome, Outcome::Reproduced);
        // "decreases the throughput by less than 7 %": at least -7 %.
        let mut c = claim(Kind::Change, -0.07);
        c.bound = Some(Bound::AtLeast);
        let r = judged(c, -0.59);
        assert_eq!((r.show_paper(), r.outcome), ("> -7.0 %".into(), Outcome::Missed));
    }

    #[test]
    fn a_claim_the_paper_contradicts_is_never_reproduced() {
        let mut c = claim(Kind::Change, -0.51);
        c.disagreement = Some(disagreement(-0.5634));
        // Within both readings, within one, within none.
        let both = judged(c.clone(), -0.55);
        assert_eq!((both.outcome, both.reproduced, both.within), (Outcome::Disagrees, false, true));
        assert!(both.other_reading.as_ref().unwrap().within);
        let one = judged(c.clone(), -0.39);
        assert_eq!(one.outcome, Outcome::Disagrees);
        assert!(one.within && !one.other_reading.as_ref().unwrap().within);
        let none = judged(c.clone(), -0.1);
        assert_eq!((none.outcome, none.reproduced), (Outcome::Missed, false));
        // Ours under the other reading, where the analysis gives one.
        let rf = reference(vec![c]);
        let r = rf.evaluate_with(&[("c", (-0.1, -0.1))], &[("c", -0.56)]).unwrap().remove(0);
        assert_eq!((r.outcome, r.other_reading.as_ref().unwrap().ours), (Outcome::Disagrees, -0.56));
        // The report prints both readings.
        let md = ClaimResult::markdown(&[r], "ref.toml");
        assert!(md.contains("0 reproduced, 1 where the paper disagrees with itself, 0 missed, of 1"), "{md}");
        assert!(md.contains("| t | w | -51.0 % | -10.0 % | -10.0 % | +41.0 points | the paper disagrees with itself |"), "{md}");
        assert!(
            md.contains(
                "But 4.2.1 says otherwise: 0.74 x 0.59 = 0.4366. Under that reading, -56.3 % against ours -56.0 % (within the rule)."
            ),
            "{md}"
        );
    }

    #[test]
    fn evaluate_keeps_the_file_order_and_refuses_a_mismatch() {
        let mut a = claim(Kind::Factor, 3.0);
        a.id = "a".into();
        let mut b = claim(Kind::Change, -0.26);
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
        let e = rf.evaluate_with(&[("a", (3.0, 3.0)), ("b", (0.0, 0.0))], &[("a", 1.0)]).unwrap_err();
        assert!(e.contains("no disagreement"), "{e}");
    }

    #[test]
    fn a_reference_file_is_checked_as_it_loads() {
        let parse = |text: &str| -> Result<Reference, String> {
            let mut r: Reference = toml::from_str(text).map_err(|e| e.to_string())?;
            r.file = "x.toml".into();
            r.check().map(|_| r)
        };
        let one = |kind: &str, paper: &str, extra: &str| {
            format!("source = \"s\"\n[[claim]]\nid = \"a\"\ntext = \"t\"\nwhere = \"w\"\npaper = {paper}\nkind = \"{kind}\"\n{extra}")
        };
        assert_eq!(parse(&one("change", "0.05", "bound = \"at-most\"\n")).unwrap().claim[0].rule(), Rule::AtMost);
        assert_eq!(parse(&one("change", "0.5", "")).unwrap().claim[0].rule(), Rule::Within(0.125));
        assert!(parse(&one("order", "0.5", "")).unwrap_err().contains("paper = 1.0"));
        assert!(parse(&one("trend", "1.0", "bound = \"at-most\"\n")).unwrap_err().contains("no `bound`"));
        assert!(parse(&one("speed", "0.1", "")).unwrap_err().contains("unknown variant `speed`"));
        assert!(
            parse(&one("change", "0.1", "tolerance = 0.1\n")).unwrap_err().contains("unknown field `tolerance`"),
            "one rule for every claim"
        );
        let empty = "[claim.disagreement]\nstatement = \"\"\narithmetic = \"x\"\npaper = 0.3\n";
        assert!(parse(&one("change", "0.1", empty)).unwrap_err().contains("needs the other `statement`"));
        let good = "[claim.disagreement]\nstatement = \"V-A\"\narithmetic = \"x\"\npaper = 0.3\n";
        assert_eq!(parse(&one("change", "0.1", good)).unwrap().claim[0].disagreement.as_ref().unwrap().paper, 0.3);
        let twice = format!("{}{}", one("factor", "2.0", ""), one("factor", "2.0", "").replace("source = \"s\"\n", ""));
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
    fn a_claim_sits_on_log_axes_at_the_value_a_reader_compares() {
        let c = ClaimResult::new("x", "t", "w", Kind::Factor, 3.0, (2.0, 2.0), Kind::Factor.rule(3.0, None));
        let p = c.on_log_axes().unwrap();
        assert_eq!((p.paper, p.ours, p.reproduced, p.outcome), (3.0, 2.0, false, Outcome::Missed));
        assert!((p.low.unwrap() - 2.25).abs() < 1e-12 && (p.high.unwrap() - 3.75).abs() < 1e-12);
        // A change as the factor 1 + c; the band's lower edge at -100 % or
        // below leaves it open.
        let c = ClaimResult::new("y", "t", "w", Kind::Change, -0.51, (-0.95, -0.95), Rule::Within(0.6));
        let p = c.on_log_axes().unwrap();
        assert!((p.paper - 0.49).abs() < 1e-12 && (p.ours - 0.05).abs() < 1e-12);
        assert_eq!(p.low, None);
        assert!((p.high.unwrap() - 1.09).abs() < 1e-12);
        // A bound on a change: Secon's "less than 5 %" at 1.05, ours +43 %
        // at 1.43, open below.
        let c = ClaimResult::new("z", "t", "w", Kind::Change, 0.05, (0.43, 0.43), Rule::AtMost);
        let p = c.on_log_axes().unwrap();
        assert!((p.paper - 1.05).abs() < 1e-12 && (p.ours - 1.43).abs() < 1e-12);
        assert_eq!((p.low, p.high.map(|h| (h * 100.0).round())), (None, Some(105.0)));
        // A bound on a factor stays a factor, open below; at least, open above.
        let c = ClaimResult::new("f", "t", "w", Kind::Factor, 9.0, (2.14, 2.14), Rule::AtMost);
        assert_eq!((c.on_log_axes().unwrap().paper, c.on_log_axes().unwrap().high), (9.0, Some(9.0)));
        let c = ClaimResult::new("g", "t", "w", Kind::Change, -0.07, (-0.5, -0.5), Rule::AtLeast);
        let p = c.on_log_axes().unwrap();
        assert!((p.low.unwrap() - 0.93).abs() < 1e-12 && p.high.is_none());
        // A claim the paper contradicts carries its other reading.
        let c = ClaimResult::new("d", "t", "w", Kind::Seconds, 30.68, (30.7, 30.7), Kind::Seconds.rule(30.68, None)).disagreeing(
            &disagreement(3.8348),
            3.83,
            Kind::Seconds.rule(3.8348, None),
        );
        let p = c.on_log_axes().unwrap();
        assert_eq!((p.outcome, p.other), (Outcome::Disagrees, Some(OtherPoint { paper: 3.8348, ours: 3.83 })));
        // What cannot be drawn says why.
        let rule = ClaimResult::new("o", "t", "w", Kind::Order, 1.0, (1.0, 1.0), Rule::Holds);
        assert!(rule.on_log_axes().unwrap_err().contains("an order, which holds or not"));
        let neg = ClaimResult::new("n", "t", "w", Kind::Share, 0.013, (-0.4, -0.4), Rule::Within(5.0));
        assert!(neg.on_log_axes().unwrap_err().contains("-40.0 %"), "{:?}", neg.on_log_axes());
        let nan = ClaimResult::new("m", "t", "w", Kind::Seconds, 1.0, (f64::NAN, f64::NAN), Rule::Within(1.0));
        assert!(nan.on_log_axes().is_err());
    }
}
