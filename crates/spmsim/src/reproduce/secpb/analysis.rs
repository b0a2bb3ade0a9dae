//! SecPB's tables from the grid's runs: Table IV, Figs. 6-9 and the VI-B
//! worked example, each cell beside the paper's where its text prints one
//! (`configs/reference/secpb-performance.toml`), and the claims the index
//! shows.
//!
//! ```text
//!  runs (one per scheme x workload x entries, points merged)
//!    cycles / bbb's --geomean over the suite--> Table IV, Fig. 6 (32 entries)
//!    cm at 8..512   --------------------------> Fig. 7 (overhead), Fig. 8 (root updates / sp's)
//!    BMF variants   --------------------------> Fig. 9
//!    nogap on the gamess-like profile --------> VI-B (IPC against 1000/(320 PPTI/NWPE + 40 PPTI))
//! ```

use super::suite::{SuiteEntry, GAMESS_LIKE};
use super::{secpb_presets, Results, RunRecord, BMF, SIZES};
use crate::reproduce::claims::{read_reference, Claim, ClaimResult, Disagreement, Kind, Rule};
use crate::reproduce::rule::{order_kept, Trend};
use crate::reproduce::{geomean, mean};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

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

/// `configs/reference/secpb-performance.toml`: the cells SecPB's text
/// prints, table by table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reference {
    pub table_iv: BTreeMap<String, toml::Value>,
    pub fig7: BTreeMap<String, toml::Value>,
    pub fig8: BTreeMap<String, toml::Value>,
    pub fig9: BTreeMap<String, toml::Value>,
    pub nogap_ipc: BTreeMap<String, toml::Value>,
    /// Figures the text gives for single benchmarks (VI-B, VI-D).
    #[serde(default)]
    pub per_benchmark: Vec<BenchmarkClaim>,
}

/// One figure SecPB's text gives for a single benchmark, compared when the
/// suite holds a program for it: what it is about, and the claim itself,
/// a reference file's claim like every other paper's
/// (`[per_benchmark.claim]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenchmarkClaim {
    /// The SPEC benchmark's short name (`povray`).
    pub benchmark: String,
    pub metric: BenchmarkMetric,
    pub claim: Claim,
}

/// What of ours a per-benchmark figure is compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BenchmarkMetric {
    /// Persists per thousand instructions, as CM counts them at 32 entries.
    Ppti,
    /// Writes per SecPB entry, CM at 32 entries.
    Nwpe,
    /// M's execution time against NoGap's, a change (-0.5 = half).
    MVsNogap,
    /// CM's execution time against M's, a change.
    CmVsM,
    /// COBCM's execution time against bbb's, a change.
    CobcmSlowdown,
    /// CM's overhead against bbb falls from 8 to 512 entries (Fig. 7's
    /// trend, [`Trend::Falls`]): 1 when it does.
    CmOverheadFalls,
    /// CM's BMT root updates do not fall from 8 to 512 entries (Fig. 8:
    /// "does not observe a reduction", [`Trend::DoesNotFall`]): 1 when
    /// they do not.
    RootUpdatesFlat,
}

/// A per-benchmark figure with ours beside it.
#[derive(Clone, Debug, Serialize)]
pub struct BenchmarkCell {
    pub benchmark: String,
    /// The suite's program that stands for the benchmark.
    pub program: String,
    pub metric: BenchmarkMetric,
    #[serde(flatten)]
    pub claim: Claim,
    pub ours: f64,
}

impl BenchmarkCell {
    /// Ours is within the claim's rule.
    pub fn reproduced(&self) -> bool {
        self.claim.rule().accepts(self.claim.paper, self.ours)
    }
}

/// The suite's program for `benchmark`: its label is the name itself or
/// ends in `-<name>` (453-povray).
pub fn program_for<'a>(labels: &[&'a str], benchmark: &str) -> Option<&'a str> {
    labels.iter().copied().find(|l| *l == benchmark || l.strip_suffix(benchmark).is_some_and(|head| head.ends_with('-')))
}

/// Our side of every per-benchmark figure whose benchmark the suite holds.
fn per_benchmark(labels: &[&str], runs: &[RunRecord], rf: &Reference) -> Vec<BenchmarkCell> {
    let cycles = |s: &str, w: &str, n: u32| find(runs, s, w, n).cycles as f64;
    let change = |a: &str, b: &str, w: &str| cycles(a, w, 32) / cycles(b, w, 32) - 1.0;
    let holds = |ok: bool| if ok { 1.0 } else { 0.0 };
    rf.per_benchmark
        .iter()
        .filter_map(|c| {
            let w = program_for(labels, &c.benchmark)?;
            let ours = match c.metric {
                BenchmarkMetric::Ppti => find(runs, "cm", w, 32).ppti,
                BenchmarkMetric::Nwpe => find(runs, "cm", w, 32).nwpe,
                BenchmarkMetric::MVsNogap => change("m", "nogap", w),
                BenchmarkMetric::CmVsM => change("cm", "m", w),
                BenchmarkMetric::CobcmSlowdown => change("cobcm", "bbb", w),
                BenchmarkMetric::CmOverheadFalls => {
                    let v: Vec<f64> = SIZES.iter().map(|&n| cycles("cm", w, n) / cycles("bbb", w, n)).collect();
                    holds(Trend::Falls.holds(&v))
                }
                BenchmarkMetric::RootUpdatesFlat => {
                    let v: Vec<f64> = SIZES.iter().map(|&n| find(runs, "cm", w, n).bmt_root_updates as f64).collect();
                    holds(Trend::DoesNotFall.holds(&v))
                }
            };
            Some(BenchmarkCell { benchmark: c.benchmark.clone(), program: w.to_string(), metric: c.metric, claim: c.claim.clone(), ours })
        })
        .collect()
}

fn num(m: &BTreeMap<String, toml::Value>, k: &str) -> Option<f64> {
    m.get(k).and_then(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
}

impl Reference {
    pub fn load() -> Result<Self, String> {
        read_reference("secpb-performance")
    }
}

/// Table IV's schemes in the order of their overheads (VI-B: "The
/// performance overheads of each model coincided with the eagerness of
/// security metadata updates").
pub const ORDER: [&str; 6] = ["cobcm", "obcm", "bcm", "cm", "m", "nogap"];

/// The cells a table's `printed_as_factor` names: the text states them as
/// factors ("a slowdown of 3.43x"), the table in percent.
fn printed_as_factor(m: &BTreeMap<String, toml::Value>) -> Vec<String> {
    m.get("printed_as_factor")
        .and_then(|v| v.as_array())
        .map_or(Vec::new(), |a| a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect())
}

/// The paper's numbers with ours as claims, for `reproduce all`'s index:
/// Table IV's, Fig. 7's and Fig. 9's cells (changes against bbb, or a
/// factor where the text prints one), Fig. 8's (shares of sp's root
/// updates), Table IV's order (VI-B) and Fig. 8's fall (VI-D), the text's
/// single benchmarks, and Tables V and VI (each row's SuperCap volume,
/// judged by the battery model's match rule; a row the text prints
/// otherwise judged under both).
pub fn claims(r: &Results, rf: &Reference) -> Vec<ClaimResult> {
    let mut out = Vec::new();
    let cells = [
        ("Table IV", "slowdown against bbb", &r.table4, Kind::Change, &rf.table_iv),
        ("Fig. 7", "CM overhead at", &r.fig7, Kind::Change, &rf.fig7),
        ("Fig. 8", "CM root updates (share of sp's) at", &r.fig8, Kind::Share, &rf.fig8),
        ("Fig. 9", "overhead with BMF", &r.fig9, Kind::Change, &rf.fig9),
    ];
    for (where_, what, cells, kind, table) in cells {
        let factors = printed_as_factor(table);
        for c in cells.iter() {
            let Some(paper) = c.paper else { continue };
            let id = format!("{}_{}", where_.to_lowercase().replace([' ', '.'], ""), c.row.replace(' ', "_"));
            let (kind, paper, ours, text) = match factors.contains(&c.row.replace('-', "_")) {
                true => (Kind::Factor, 1.0 + paper / 100.0, 1.0 + c.ours / 100.0, format!("slowdown with BMF {}", c.row)),
                false => (kind, paper / 100.0, c.ours / 100.0, format!("{what} {}", c.row)),
            };
            out.push(ClaimResult::new(&id, &text, where_, kind, paper, (ours, ours), kind.rule(paper, None)));
        }
    }
    let holds = |id: &str, text: &str, where_: &str, kind: Kind, ok: bool| {
        let ours = if ok { 1.0 } else { 0.0 };
        ClaimResult::new(id, text, where_, kind, 1.0, (ours, ours), Rule::Holds)
    };
    out.push(holds(
        "order",
        "overheads in the order of the metadata updates' eagerness: COBCM < OBCM < BCM < CM < M < NoGap (pairs within 25 % of each other in Table IV either way)",
        "VI-B, Table IV",
        Kind::Order,
        r.order_holds,
    ));
    out.push(holds("root_updates_fall", "BMT root updates fall as the SecPB grows", "VI-D, Fig. 8", Kind::Trend, r.root_updates_fall));
    for c in &r.per_benchmark {
        let k = &c.claim;
        let text = format!("{} ({})", k.text, c.program);
        out.push(ClaimResult::new(&k.id, &text, &k.where_, k.kind, k.paper, (c.ours, c.ours), k.rule()));
    }
    for row in &r.battery_rows {
        out.push(battery_claim(row));
    }
    out
}

/// A row of Table V or VI as a claim: its SuperCap volume, judged by the
/// battery model's rule on both volumes; a row whose volumes the text
/// prints otherwise judged under the text's too.
fn battery_claim(row: &crate::battery::TableRow) -> ClaimResult {
    let entries = row.entries.map(|n| format!(", {n} entries")).unwrap_or_default();
    let id = format!("table{}_{}{}", row.table.to_lowercase(), row.scheme, row.entries.map(|n| format!("_{n}")).unwrap_or_default());
    // The battery model's rule judges both volumes; the range drawn is
    // SuperCap's alone, 5 % either side of the printed number.
    let t = crate::battery::TOLERANCE_PCT / 100.0;
    let judged = |paper: f64, reproduced: bool| Rule::Judged { reproduced, low: paper * (1.0 - t), high: paper * (1.0 + t) };
    let (paper, ours) = (row.supercap_paper_mm3, row.supercap_mm3);
    let text = format!("SuperCap volume, {}{entries}", row.scheme);
    let c = ClaimResult::new(&id, &text, &format!("Table {}", row.table), Kind::Mm3, paper, (ours, ours), judged(paper, row.matches));
    match &row.text_reading {
        None => c,
        Some(x) => {
            let d = Disagreement { statement: x.statement.clone(), arithmetic: x.arithmetic.clone(), paper: x.supercap_paper_mm3 };
            c.disagreeing(&d, ours, judged(x.supercap_paper_mm3, x.matches))
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct NogapCheck {
    pub ppti: f64,
    pub nwpe: f64,
    pub ipc: f64,
    /// 1000 / (levels x MAC x PPTI/NWPE + MAC x PPTI) with our PPTI, NWPE.
    pub formula_ipc: f64,
    pub paper_estimate: Option<f64>,
    pub paper_actual: Option<f64>,
    pub paper_ppti: Option<f64>,
    pub paper_nwpe: Option<f64>,
}

pub(super) fn find<'a>(runs: &'a [RunRecord], scheme: &str, w: &str, entries: u32) -> &'a RunRecord {
    runs.iter()
        .find(|r| r.scheme == scheme && r.workload == w && r.entries == entries && !r.all_persistent && r.setting.is_none())
        .expect("every grid point ran")
}

/// Every table from the merged runs (the crypto parity, the published IPC
/// and the battery rows are the caller's).
pub(super) fn analyse(suite: &[SuiteEntry], instructions: u64, seed: u64, quick: bool, runs: Vec<RunRecord>, rf: &Reference) -> Results {
    let labels: Vec<&str> = suite.iter().map(|s| s.label.as_str()).collect();
    let norm = |scheme: &str, entries: u32, base_entries: u32, w: &str| {
        find(&runs, scheme, w, entries).cycles as f64 / find(&runs, "bbb", w, base_entries).cycles as f64
    };

    let mut table4 = Vec::new();
    let mut table4_arith = BTreeMap::new();
    let mut fig6 = Vec::new();
    for s in secpb_presets().iter().chain(["sp"].iter()) {
        let v: Vec<f64> = labels.iter().map(|w| norm(s, 32, 32, w)).collect();
        for (w, x) in labels.iter().zip(&v) {
            fig6.push(Cell { row: w.to_string(), column: s.to_string(), paper: None, ours: *x });
        }
        table4.push(Cell {
            row: s.to_string(),
            column: "slowdown %".into(),
            paper: num(&rf.table_iv, s),
            ours: (geomean(&v) - 1.0) * 100.0,
        });
        table4_arith.insert(s.to_string(), mean(&v.iter().map(|x| (x - 1.0) * 100.0).collect::<Vec<_>>()));
    }
    // Table IV again with every store persistent (recorded programs).
    let mut table4_all = BTreeMap::new();
    if runs.iter().any(|r| r.all_persistent) {
        let find_all = |scheme: &str, w: &str| {
            runs.iter().find(|r| r.all_persistent && r.scheme == scheme && r.workload == w).expect("every all-persistent run ran").cycles
                as f64
        };
        for s in secpb_presets().iter().chain(["sp"].iter()) {
            let v: Vec<f64> = labels.iter().map(|w| find_all(s, w) / find_all("bbb", w)).collect();
            table4_all.insert(s.to_string(), (geomean(&v) - 1.0) * 100.0);
        }
    }
    let mut fig7 = Vec::new();
    let mut fig8 = Vec::new();
    let sp_updates: u64 = labels.iter().map(|w| find(&runs, "sp", w, 32).bmt_root_updates).sum();
    for &n in &SIZES {
        let v: Vec<f64> = labels.iter().map(|w| norm("cm", n, n, w)).collect();
        fig7.push(Cell {
            row: format!("{n} entries"),
            column: "CM overhead %".into(),
            paper: num(&rf.fig7, &format!("entries_{n}")),
            ours: (geomean(&v) - 1.0) * 100.0,
        });
        let cm: u64 = labels.iter().map(|w| find(&runs, "cm", w, n).bmt_root_updates).sum();
        fig8.push(Cell {
            row: format!("{n} entries"),
            column: "CM root updates % of sp".into(),
            paper: num(&rf.fig8, &format!("entries_{n}")),
            ours: 100.0 * cm as f64 / sp_updates.max(1) as f64,
        });
    }
    let fig9 = BMF
        .iter()
        .map(|s| {
            let v: Vec<f64> = labels.iter().map(|w| norm(s, 32, 32, w)).collect();
            Cell {
                row: s.to_string(),
                column: "overhead %".into(),
                paper: num(&rf.fig9, &s.replace('-', "_")),
                ours: (geomean(&v) - 1.0) * 100.0,
            }
        })
        .collect();
    let g = runs.iter().find(|r| r.scheme == "nogap" && r.workload == GAMESS_LIKE && r.entries == 32);
    let nogap = match g {
        Some(r) => NogapCheck {
            ppti: r.ppti,
            nwpe: r.nwpe,
            ipc: r.ipc,
            formula_ipc: 1000.0 / (8.0 * 40.0 * r.ppti / r.nwpe + 40.0 * r.ppti),
            paper_estimate: num(&rf.nogap_ipc, "estimate"),
            paper_actual: num(&rf.nogap_ipc, "actual"),
            paper_ppti: num(&rf.nogap_ipc, "ppti"),
            paper_nwpe: num(&rf.nogap_ipc, "nwpe"),
        },
        None => NogapCheck {
            ppti: f64::NAN,
            nwpe: f64::NAN,
            ipc: f64::NAN,
            formula_ipc: f64::NAN,
            paper_estimate: None,
            paper_actual: None,
            paper_ppti: None,
            paper_nwpe: None,
        },
    };
    let t = |s: &str| table4.iter().find(|c| c.row == s).unwrap().ours / 100.0;
    let paper_order: Option<Vec<f64>> = ORDER.iter().map(|s| num(&rf.table_iv, s).map(|x| x / 100.0)).collect();
    let order_holds = paper_order.is_some_and(|p| order_kept(Kind::Change, &p, &ORDER.map(t)));
    let root_updates_fall = Trend::Falls.holds(&fig8.iter().map(|c| c.ours).collect::<Vec<_>>());
    let per_benchmark = per_benchmark(&labels, &runs, rf);
    let mut benchmarks_absent: Vec<String> =
        rf.per_benchmark.iter().filter(|c| program_for(&labels, &c.benchmark).is_none()).map(|c| c.benchmark.clone()).collect();
    benchmarks_absent.dedup();
    Results {
        per_benchmark,
        benchmarks_absent,
        left_out: Vec::new(),
        published_ipc: None,
        suite: suite.to_vec(),
        instructions,
        seed,
        quick,
        runs,
        table4,
        table4_arith,
        table4_all,
        fig6,
        fig7,
        fig8,
        fig9,
        nogap,
        order_holds,
        root_updates_fall,
        battery_markdown: None,
        battery_rows: Vec::new(),
        crypto_parity: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_benchmark_is_found_by_its_name_or_its_spec_number() {
        let labels = ["453-povray", "gnugo", "xalan", "astar"];
        assert_eq!(program_for(&labels, "povray"), Some("453-povray"));
        assert_eq!(program_for(&labels, "astar"), Some("astar"));
        assert_eq!(program_for(&labels, "gobmk"), None);
        // A longer name that merely ends in the benchmark's is not it.
        assert_eq!(program_for(&["megapovray"], "povray"), None);
    }

    #[test]
    fn a_per_benchmark_claim_with_an_unknown_key_is_refused() {
        let good = "benchmark = \"povray\"\nmetric = \"ppti\"\n[claim]\nid = \"x\"\ntext = \"t\"\nwhere = \"VI-B\"\npaper = 38.8\nkind = \"number\"\n";
        let c: BenchmarkClaim = toml::from_str(good).expect("a well-formed claim parses");
        assert_eq!((c.claim.id.as_str(), c.metric, c.claim.paper), ("x", BenchmarkMetric::Ppti, 38.8));
        let extra = format!("{good}units = \"per kI\"\n");
        let e = toml::from_str::<BenchmarkClaim>(&extra).expect_err("a key no claim has is an error");
        assert!(e.to_string().contains("units"), "{e}");
        let typo = good.replace("kind", "kinds");
        let e = toml::from_str::<BenchmarkClaim>(&typo).expect_err("a misspelt key is an error");
        assert!(e.to_string().contains("kinds"), "{e}");
        let tolerance = format!("{good}tolerance = 9.7\n");
        let e = toml::from_str::<BenchmarkClaim>(&tolerance).expect_err("one rule for every claim: no tolerance of its own");
        assert!(e.to_string().contains("tolerance"), "{e}");
        let outer = good.replace("metric", "metrics");
        let e = toml::from_str::<BenchmarkClaim>(&outer).expect_err("a misspelt key outside the claim is an error");
        assert!(e.to_string().contains("metrics"), "{e}");
    }

    #[test]
    fn the_reference_file_names_known_metrics_and_benchmarks() {
        let rf = Reference::load().expect("configs/reference/secpb-performance.toml parses");
        assert!(rf.per_benchmark.iter().any(|c| c.benchmark == "povray" && c.metric == BenchmarkMetric::MVsNogap));
        for c in rf.per_benchmark.iter().map(|c| &c.claim) {
            assert!(c.paper.is_finite(), "{}", c.id);
            assert_eq!(c.kind == Kind::Trend, c.paper == 1.0, "{}: a trend has paper 1", c.id);
            // A change is a fraction: no sentence of VI-B states one over 100 %.
            assert!(c.kind != Kind::Change || c.paper.abs() < 1.0, "{}", c.id);
        }
        assert_eq!(printed_as_factor(&rf.fig9), ["sp_sbmf"]);
        assert!(ORDER.iter().all(|s| num(&rf.table_iv, s).is_some()));
    }
}
