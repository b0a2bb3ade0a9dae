//! What a claim's number is (its kind) and when ours reproduces it (the
//! rule): one rule for every paper, set before any run is compared.
//!
//! ```text
//!  kind      the paper says            prints       on the index's log axis
//!  factor    "3x", "a slowdown of 3.43x" 3.00x      3.0
//!  change    "reduces by 51 %"          -51.0 %      0.49 (1 + change)
//!            "4.9 % overhead"           +4.9 %       1.049
//!  share     "46.65 % of instructions"  46.7 %       0.4665
//!  seconds, mm3, number (quantities)    30.6800 s    30.68
//!  order     "COBCM < OBCM < ... "      holds        not drawn
//!  trend     "falls as the SecPB grows" holds        not drawn
//!  a bound on any number ("less than 5 %") prints "< +5.0 %" and
//!  draws at 1.05, open below
//! ```
//!
//! The rule (why: a claim's number is a measurement of the paper's own
//! machine, and ours of a model of it; a fixed share of the number, not a
//! fixed width, treats a 1.3 % slowdown and a 118 % one alike, so that a
//! small overhead is judged as closely as a large one):
//! - a number is reproduced when ours lies within [`RELATIVE_TOLERANCE`]
//!   (25 %) of the paper's, in the claim's own kind: 25 % of a factor, of
//!   a share, of a quantity, and of a change itself (not of 1 + change:
//!   -51 % admits -38.25 % to -63.75 %);
//! - a change has a floor of [`CHANGE_FLOOR`], half a point, since the
//!   paper prints it to a tenth or a whole point (1.3 % admits 0.8-1.8 %);
//! - a bound ("less than 5 %", "under 9x", "within 4 seconds") is
//!   reproduced when ours is on its side, the bound itself included, and
//!   not beyond it by any amount: the paper states a limit, not a
//!   measurement, so there is no error of its to allow for;
//! - an order is reproduced when ours ranks every pair of its items as
//!   the paper's numbers do, except a pair whose numbers in the paper lie
//!   within the rule of each other, which the paper's own numbers cannot
//!   tell apart and which ours may rank either way;
//! - a trend is reproduced when ours follows it at every step of the swept
//!   parameter: "falls" when no step rises and the last value is below the
//!   first; "does not fall" when the last value is at least the first less
//!   the rule's 25 %;
//! - no paper has a tolerance of its own unless its text states one; the
//!   one exception is SecPB's Tables V and VI, judged by the battery
//!   model's match rule (both volumes within 5 % of the printed digits'
//!   interval, `battery::MATCH_RULE`), which is stricter than this rule.

use serde::{Deserialize, Serialize};

/// How far ours may be from the paper's number, as a share of that number
/// in the claim's own kind.
pub const RELATIVE_TOLERANCE: f64 = 0.25;

/// The least tolerance of a change: half a point (0.005), since the papers
/// print changes to a tenth or a whole point.
pub const CHANGE_FLOOR: f64 = 0.005;

/// The rule as one sentence, for the reports and the index.
pub const THE_RULE: &str = "a claim is reproduced when ours lies within 25 % of the paper's number in the claim's own kind (of a factor, a share or a quantity; of a change itself, at least half a point: 1.3 % admits 0.8-1.8 %); a bound when ours is on its side; an order when ours ranks every pair as the paper does (a pair the paper's own numbers put within 25 % of each other either way); a trend when ours follows it at every step. SecPB's Tables V and VI are judged by the battery model's rule (both volumes within 5 % of the printed digits). A claim that two of the paper's own statements make incompatible is never counted as reproduced: it is judged under each statement's reading and counted apart";

/// What a claim's number is: how it is printed, judged and drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A factor: 3.0 is "3.00x" (WT's latency is three times WB's).
    Factor,
    /// A change against a baseline, x / baseline - 1, signed: -0.51 is
    /// "-51.0 %" ("reduces by 51 %"), 0.049 is "+4.9 %" (an overhead).
    Change,
    /// A share of a whole: 0.4665 is 46.7 % of the instructions.
    Share,
    Seconds,
    /// A volume in cubic millimetres (SecPB's battery rows).
    Mm3,
    /// A plain figure of a workload (SecPB's PPTI, NWPE).
    Number,
    /// An order of several numbers: ours is 1 when it keeps it.
    Order,
    /// A trend over a swept parameter: ours is 1 when it follows it.
    Trend,
}

/// The side of a bound the paper states ("less than 5 %": at most).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bound {
    AtMost,
    AtLeast,
}

impl Bound {
    /// How a bound precedes its number in print ("< +5.0 %").
    pub fn sign(self) -> &'static str {
        match self {
            Bound::AtMost => "< ",
            Bound::AtLeast => "> ",
        }
    }
}

impl Kind {
    /// A value of this kind as the reports and the index print it.
    pub fn show(self, x: f64) -> String {
        match self {
            Kind::Factor => format!("{x:.2}x"),
            Kind::Change => format!("{:+.1} %", x * 100.0),
            Kind::Share => format!("{:.1} %", x * 100.0),
            Kind::Seconds => format!("{x:.4} s"),
            Kind::Mm3 => format!("{x:.3} mm3"),
            Kind::Number => format!("{x:.1}"),
            Kind::Order | Kind::Trend => (if x == 1.0 { "holds" } else { "does not hold" }).to_string(),
        }
    }

    /// Ours minus the paper's, in this kind's unit (an order or a trend
    /// has none).
    pub fn show_difference(self, d: f64) -> String {
        match self {
            Kind::Factor => format!("{d:+.2}"),
            Kind::Change | Kind::Share => format!("{:+.1} points", d * 100.0),
            Kind::Seconds => format!("{d:+.4} s"),
            Kind::Mm3 => format!("{d:+.3} mm3"),
            Kind::Number => format!("{d:+.1}"),
            Kind::Order | Kind::Trend => "-".into(),
        }
    }

    /// Whether ours is 1 or 0 (it holds or not) rather than a number.
    pub fn is_rule(self) -> bool {
        matches!(self, Kind::Order | Kind::Trend)
    }

    /// Where a value of this kind sits on a log axis, before the check
    /// that it is positive: a change c as the factor 1 + c (a change runs
    /// from -100 % up, a factor from 0 up), an order or trend nowhere.
    pub fn on_log_axis(self, x: f64) -> Option<f64> {
        match self {
            Kind::Order | Kind::Trend => None,
            Kind::Change => Some(1.0 + x),
            _ => Some(x),
        }
    }

    /// How far ours may be from `paper` (the rule, in this kind's unit).
    pub fn tolerance(self, paper: f64) -> f64 {
        let t = paper.abs() * RELATIVE_TOLERANCE;
        match self {
            Kind::Change => t.max(CHANGE_FLOOR),
            _ => t,
        }
    }

    /// The rule of a claim of this kind about `paper`, bounded or not.
    pub fn rule(self, paper: f64, bound: Option<Bound>) -> Rule {
        match (bound, self.is_rule()) {
            (_, true) => Rule::Holds,
            (Some(Bound::AtMost), _) => Rule::AtMost,
            (Some(Bound::AtLeast), _) => Rule::AtLeast,
            (None, false) => Rule::Within(self.tolerance(paper)),
        }
    }
}

/// What counts as reproduced.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rule {
    /// Ours within `width` of the paper's, either side (edges included).
    Within(f64),
    /// Ours no more than the paper's bound.
    AtMost,
    /// Ours no less than the paper's bound.
    AtLeast,
    /// An order or a trend: ours is 1 when it holds.
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
            Rule::AtLeast => ours >= paper,
            Rule::Holds => ours == 1.0,
            Rule::Judged { reproduced, .. } => reproduced,
        }
    }

    /// The range of ours that counts (None: unbounded on that side, or no
    /// range at all for an order or a trend).
    pub fn accepted(&self, paper: f64) -> Option<(Option<f64>, Option<f64>)> {
        match *self {
            Rule::Within(w) => Some((Some(paper - w), Some(paper + w))),
            Rule::AtMost => Some((None, Some(paper))),
            Rule::AtLeast => Some((Some(paper), None)),
            Rule::Holds => None,
            Rule::Judged { low, high, .. } => Some((Some(low), Some(high))),
        }
    }
}

/// Whether `ours` keeps the order of `paper`, the same items in the same
/// places, both of `kind`: every pair ranked as the paper ranks it, but a
/// pair whose numbers in the paper lie within the rule of each other may
/// come either way.
pub fn order_kept(kind: Kind, paper: &[f64], ours: &[f64]) -> bool {
    if paper.len() != ours.len() || ours.iter().any(|x| x.is_nan()) {
        return false;
    }
    let apart = |a: f64, b: f64| !(kind.rule(a, None).accepts(a, b) || kind.rule(b, None).accepts(b, a));
    (0..paper.len()).all(|i| {
        (i + 1..paper.len()).all(|j| {
            let (p, q) = (paper[i], paper[j]);
            !apart(p, q) || ((p < q) == (ours[i] < ours[j]) && ours[i] != ours[j])
        })
    })
}

/// A trend a paper states over a swept parameter, smallest value first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trend {
    /// No step rises, and the last value is below the first ("continued
    /// reduction").
    Falls,
    /// The last value is at least the first less the rule's 25 % ("does
    /// not observe a reduction").
    DoesNotFall,
}

impl Trend {
    pub fn holds(self, series: &[f64]) -> bool {
        let (Some(&first), Some(&last)) = (series.first(), series.last()) else { return false };
        if series.iter().any(|x| x.is_nan()) {
            return false;
        }
        match self {
            Trend::Falls => series.windows(2).all(|w| w[1] <= w[0]) && last < first,
            Trend::DoesNotFall => last >= first * (1.0 - RELATIVE_TOLERANCE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn within(kind: Kind, paper: f64, ours: f64) -> bool {
        kind.rule(paper, None).accepts(paper, ours)
    }

    #[test]
    fn a_number_is_reproduced_within_a_quarter_of_itself() {
        // Values exact in binary, so that the edges are the edges.
        for kind in [Kind::Factor, Kind::Share, Kind::Seconds, Kind::Mm3, Kind::Number] {
            assert_eq!(kind.tolerance(4.0), 1.0, "{kind:?}");
            assert!(within(kind, 4.0, 5.0) && within(kind, 4.0, 3.0) && within(kind, 4.0, 4.0), "{kind:?}");
            assert!(!within(kind, 4.0, 5.0 + 1e-12) && !within(kind, 4.0, 3.0 - 1e-12), "{kind:?}");
        }
        // A share of 2.35 % admits 1.76-2.94 %, not the 7.35 % a 5-point
        // window took.
        assert!(within(Kind::Share, 0.0235, 0.029) && !within(Kind::Share, 0.0235, 0.0295) && !within(Kind::Share, 0.0235, 0.0735));
    }

    #[test]
    fn a_change_is_judged_by_a_quarter_of_the_change_itself_at_least_half_a_point() {
        // -51 % admits -38.25 % to -63.75 %, whichever side.
        assert_eq!(Kind::Change.tolerance(-0.51), 0.51 * 0.25);
        assert!(within(Kind::Change, -0.5, -0.375) && within(Kind::Change, -0.5, -0.625));
        assert!(!within(Kind::Change, -0.5, -0.37) && !within(Kind::Change, -0.5, 0.5));
        // 1.3 % admits 0.8-1.8 %: the floor of half a point.
        assert_eq!(Kind::Change.tolerance(0.013), CHANGE_FLOOR);
        assert!(within(Kind::Change, 0.013, 0.0179) && within(Kind::Change, 0.013, 0.0081));
        assert!(!within(Kind::Change, 0.013, 0.0181) && !within(Kind::Change, 0.013, 0.058), "COBCM's 5.8 % is a miss");
        // Above 2 %, a quarter of the change is wider than the floor.
        assert_eq!(Kind::Change.tolerance(0.04), 0.01);
        assert_eq!(Kind::Change.tolerance(0.0), CHANGE_FLOOR);
        // Not a number never counts, whatever the kind.
        for kind in [Kind::Factor, Kind::Change, Kind::Seconds] {
            assert!(!within(kind, 1.0, f64::NAN), "{kind:?}");
        }
    }

    #[test]
    fn a_bound_takes_anything_on_its_side_and_nothing_past_it() {
        let at_most = Kind::Change.rule(0.05, Some(Bound::AtMost));
        assert_eq!(at_most, Rule::AtMost);
        assert!(at_most.accepts(0.05, 0.05) && at_most.accepts(0.05, -3.0) && !at_most.accepts(0.05, 0.050001));
        let at_least = Kind::Change.rule(-0.07, Some(Bound::AtLeast));
        assert!(at_least.accepts(-0.07, -0.07) && at_least.accepts(-0.07, 0.2) && !at_least.accepts(-0.07, -0.0701));
        assert!(!at_most.accepts(0.05, f64::NAN) && !at_least.accepts(-0.07, f64::NAN));
        assert_eq!(at_most.accepted(0.05), Some((None, Some(0.05))));
        assert_eq!(at_least.accepted(-0.07), Some((Some(-0.07), None)));
        // A factor's bound stays a factor ("under 9x").
        assert_eq!(Kind::Factor.rule(9.0, Some(Bound::AtMost)), Rule::AtMost);
    }

    #[test]
    fn an_order_is_kept_but_for_the_pairs_the_paper_cannot_tell_apart() {
        // SecPB's Table IV: COBCM 1.3 and OBCM 1.5 within half a point,
        // CM 71.3 and M 73.8 within a quarter: either way round.
        let paper = [0.013, 0.015, 0.148, 0.713, 0.738, 1.184];
        assert!(order_kept(Kind::Change, &paper, &[0.058, 0.075, 0.633, 4.889, 4.939, 6.99]));
        assert!(order_kept(Kind::Change, &paper, &[0.075, 0.058, 0.633, 4.939, 4.889, 6.99]), "ties the paper cannot tell apart");
        assert!(!order_kept(Kind::Change, &paper, &[0.058, 0.075, 0.633, 4.889, 4.939, 4.0]), "NoGap below M");
        // A pair kept apart only through a third item is still a pair.
        assert!(!order_kept(Kind::Change, &paper, &[0.7, 0.075, 0.633, 4.889, 4.939, 6.99]), "COBCM above BCM");
        assert!(!order_kept(Kind::Change, &paper, &[0.058, 0.075, 0.075, 4.889, 4.939, 6.99]), "a tie the paper tells apart");
        assert!(!order_kept(Kind::Change, &paper, &[0.0; 5]) && !order_kept(Kind::Change, &paper[..2], &[0.1, f64::NAN]));
    }

    #[test]
    fn a_trend_holds_at_every_step() {
        assert!(Trend::Falls.holds(&[5.0, 3.0, 3.0, 1.0]));
        assert!(!Trend::Falls.holds(&[5.0, 3.0, 3.5, 1.0]) && !Trend::Falls.holds(&[2.0, 2.0]) && !Trend::Falls.holds(&[]));
        assert!(Trend::DoesNotFall.holds(&[4.0, 1.0, 3.0]) && Trend::DoesNotFall.holds(&[4.0, 9.0]));
        assert!(!Trend::DoesNotFall.holds(&[4.0, 2.999]) && !Trend::DoesNotFall.holds(&[4.0, f64::NAN]));
    }

    #[test]
    fn each_kind_prints_in_its_own_form() {
        let cases = [
            (Kind::Factor, 3.0, "3.00x", "+3.00"),
            (Kind::Change, -0.51, "-51.0 %", "-51.0 points"),
            (Kind::Change, 0.049, "+4.9 %", "+4.9 points"),
            (Kind::Share, 0.4665, "46.7 %", "+46.7 points"),
            (Kind::Seconds, 30.68, "30.6800 s", "+30.6800 s"),
            (Kind::Mm3, 4.89, "4.890 mm3", "+4.890 mm3"),
            (Kind::Number, 38.8, "38.8", "+38.8"),
            (Kind::Order, 1.0, "holds", "-"),
            (Kind::Trend, 0.0, "does not hold", "-"),
        ];
        for (k, x, shown, diff) in cases {
            assert_eq!((k.show(x), k.show_difference(x)), (shown.to_string(), diff.to_string()), "{k:?}");
        }
        assert_eq!(format!("{}{}", Bound::AtMost.sign(), Kind::Change.show(0.05)), "< +5.0 %");
        assert_eq!(format!("{}{}", Bound::AtLeast.sign(), Kind::Change.show(-0.07)), "> -7.0 %");
        // The files' spelling of each kind and bound.
        let kinds: Vec<Kind> = serde_json::from_str(r#"["factor", "change", "share", "mm3", "order", "trend"]"#).unwrap();
        assert_eq!(kinds, [Kind::Factor, Kind::Change, Kind::Share, Kind::Mm3, Kind::Order, Kind::Trend]);
        let bounds: Vec<Bound> = serde_json::from_str(r#"["at-most", "at-least"]"#).unwrap();
        assert_eq!(bounds, [Bound::AtMost, Bound::AtLeast]);
    }

    #[test]
    fn each_kind_sits_on_the_log_axis_at_the_value_a_reader_compares() {
        assert_eq!(Kind::Change.on_log_axis(0.43), Some(1.43));
        assert_eq!(Kind::Change.on_log_axis(0.05), Some(1.05));
        assert_eq!(Kind::Change.on_log_axis(-0.51), Some(1.0 - 0.51));
        assert_eq!(Kind::Factor.on_log_axis(9.0), Some(9.0));
        assert_eq!(Kind::Share.on_log_axis(0.127), Some(0.127));
        assert_eq!(Kind::Order.on_log_axis(1.0), None);
        assert_eq!(Kind::Trend.on_log_axis(1.0), None);
    }
}
