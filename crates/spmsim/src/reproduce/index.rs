//! `spmsim reproduce all`: every paper's reproduction in one run, and one
//! index of what each reproduced.
//!
//! ```text
//!  results/secpb/  results/secon/  results/star/  results/triad/  results/mset/
//!        each: report.md, results.json, runs.csv (the paper's own command)
//!  results/index.md, results/index.html
//!        per paper: its claims (the paper's number, ours, the difference,
//!        the outcome), a link to its report, its wall time; a summary of
//!        the outcomes (reproduced / the paper disagrees with itself /
//!        missed)
//! ```
//! A paper whose reproduction fails is listed with its error; the others'
//! results stand. index.json also gives each paper's claims as points of
//! a log-log plot (the paper's number against ours, the range of ours that
//! counts): `spmsim report` draws them into index.html, one plot per
//! paper, when the Python package is there.

use super::claims::{ClaimResult, Kind, LogPoint, Outcome, THE_RULE};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// The papers, in the order `reproduce all` runs them: (id, title).
pub const PAPERS: [(&str, &str); 5] = [
    ("secpb", "SecPB (Freij, Zhou, Solihin): battery-backed secure persist buffers"),
    ("secon", "Secon: write-through metadata made cheap, with transaction-specific epochs"),
    ("star", "STAR (Huang and Hua): a write-back metadata cache made recoverable"),
    ("triad", "Triad-NVM (Awad et al.): persistent and non-persistent regions, level-N persistence"),
    ("mset", "Multiset-hash integrity (Kubo, Koike, Takamaeda-Yamazaki): a write-back metadata cache under two hash registers"),
];

/// One paper's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct PaperSummary {
    pub paper: String,
    pub title: String,
    /// The report, relative to the index.
    pub report: String,
    /// The report with its plots, when the Python package drew one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_html: Option<String>,
    pub seconds: f64,
    pub claims: Vec<ClaimResult>,
    /// Why the reproduction did not finish (its claims are then empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The claims as the index's plot draws them.
    pub plot: ClaimPlot,
}

impl PaperSummary {
    /// Paper `id` of [`PAPERS`] (its report at `<id>/report.md`): its
    /// claims, or why it failed.
    pub fn new(id: &str, title: &str, seconds: f64, outcome: Result<Vec<ClaimResult>, String>) -> Self {
        let (claims, error) = match outcome {
            Ok(c) => (c, None),
            Err(e) => (Vec::new(), Some(e)),
        };
        PaperSummary {
            paper: id.into(),
            title: title.into(),
            report: format!("{id}/report.md"),
            report_html: None,
            seconds,
            plot: ClaimPlot::of(&claims),
            claims,
            error,
        }
    }

    pub fn reproduced(&self) -> usize {
        Outcome::Reproduced.count(&self.claims)
    }

    /// The claims of each outcome, in [`Outcome::ALL`]'s order.
    pub fn outcomes(&self) -> [usize; 3] {
        Outcome::ALL.map(|o| o.count(&self.claims))
    }
}

/// The whole run: each paper, and how it was made.
#[derive(Clone, Debug, Serialize)]
pub struct Index {
    pub quick: bool,
    pub seed: u64,
    pub seconds: f64,
    pub papers: Vec<PaperSummary>,
}

/// A paper's claims on a log-log plot: those that can be drawn, those
/// that cannot and why, and how any are drawn other than as printed.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClaimPlot {
    pub points: Vec<LogPoint>,
    pub not_drawn: Vec<NotDrawn>,
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct NotDrawn {
    pub id: String,
    pub text: String,
    pub why: String,
}

impl ClaimPlot {
    pub fn of(claims: &[ClaimResult]) -> Self {
        let mut plot = ClaimPlot::default();
        for c in claims {
            match c.on_log_axes() {
                Ok(p) => plot.points.push(p),
                Err(why) => plot.not_drawn.push(NotDrawn { id: c.id.clone(), text: c.text.clone(), why }),
            }
        }
        let changes: Vec<&str> =
            claims.iter().filter(|c| c.kind == Kind::Change && plot.points.iter().any(|p| p.id == c.id)).map(|c| c.id.as_str()).collect();
        if !changes.is_empty() {
            plot.notes.push(format!("A change c is drawn as the factor 1 + c (-51 % as 0.49): {}.", changes.join(", ")));
        }
        let other: Vec<&str> = plot.points.iter().filter(|p| p.other.is_some()).map(|p| p.id.as_str()).collect();
        if !other.is_empty() {
            plot.notes.push(format!(
                "Where the paper disagrees with itself, a hollow point joined to the claim's shows it under the reading of the paper's other statement: {}.",
                other.join(", ")
            ));
        }
        plot
    }
}

fn minutes(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.0} s")
    } else {
        format!("{}m{:02.0}s", (s / 60.0).floor(), s % 60.0)
    }
}

fn status(p: &PaperSummary) -> String {
    match &p.error {
        Some(_) => "failed".into(),
        None => super::claims::counts(&p.claims),
    }
}

/// The summary's cells of a paper: each outcome's count, or "failed".
fn outcome_cells(p: &PaperSummary) -> [String; 3] {
    match &p.error {
        Some(_) => ["failed".into(), "-".into(), "-".into()],
        None => p.outcomes().map(|n| format!("{n} of {}", p.claims.len())),
    }
}

const INTRO: &str = "Each paper's claims are the numbers its text prints, each of the kind its sentence states (a factor, a change, a share, a quantity, a bound on one of them, an order or a trend), against ours from this run. The rule, the same for every paper (`crates/spmsim/src/reproduce/rule.rs`)";

impl Index {
    pub fn markdown(&self) -> String {
        let mut s = String::from("# spmsim: every paper's reproduction\n\n");
        let _ = writeln!(
            s,
            "One run of `spmsim reproduce all{}` (seed {}), {} in all. {INTRO}: {THE_RULE}. Each report says what caused every gap.\n",
            if self.quick { " --quick" } else { "" },
            self.seed,
            minutes(self.seconds)
        );
        let _ = writeln!(
            s,
            "## Summary\n\n| paper | reproduced | the paper disagrees with itself | missed | wall time | report |\n|---|---|---|---|---|---|"
        );
        for p in &self.papers {
            let [r, d, m] = outcome_cells(p);
            let _ = writeln!(s, "| {} | {r} | {d} | {m} | {} | {} |", p.title, minutes(p.seconds), markdown_links(p));
        }
        for p in &self.papers {
            let _ = writeln!(s, "\n## {}\n\nReport: {}. {} in {}.\n", p.title, markdown_links(p), status(p), minutes(p.seconds));
            if let Some(e) = &p.error {
                let _ = writeln!(s, "The reproduction failed: {e}\n");
                continue;
            }
            let _ = writeln!(s, "| claim | where | paper | ours | difference | outcome |\n|---|---|---|---|---|---|");
            for c in &p.claims {
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} |",
                    c.text,
                    c.where_,
                    c.show_paper(),
                    c.show(c.ours),
                    difference(c),
                    c.outcome.label()
                );
            }
            s.push_str(&ClaimResult::disagreements(&p.claims));
        }
        s
    }

    pub fn html(&self) -> String {
        let mut s = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>spmsim: every paper's reproduction</title>\n<style>body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.25em .6em;text-align:left}td.missed{background:#fde2e2}td.reproduced{background:#e2f5e2}td.disagrees{background:#fdf0d5}</style></head><body>\n<h1>spmsim: every paper's reproduction</h1>\n",
        );
        let _ = writeln!(
            s,
            "<p>One run of <code>spmsim reproduce all{}</code> (seed {}), {} in all. {}: {}. Each report says what caused every gap.</p>",
            if self.quick { " --quick" } else { "" },
            self.seed,
            minutes(self.seconds),
            esc(INTRO),
            esc(THE_RULE)
        );
        s.push_str(
            "<h2>Summary</h2>\n<table id=\"summary\"><tr><th>paper</th><th>reproduced</th><th>the paper disagrees with itself</th><th>missed</th><th>wall time</th><th>report</th></tr>\n",
        );
        for p in &self.papers {
            let [r, d, m] = outcome_cells(p);
            let _ = writeln!(
                s,
                "<tr><td>{}</td><td>{r}</td><td>{d}</td><td>{m}</td><td>{}</td><td>{}</td></tr>",
                esc(&p.title),
                minutes(p.seconds),
                report_links(p)
            );
        }
        s.push_str("</table>\n");
        for p in &self.papers {
            let _ = writeln!(
                s,
                "<h2 id=\"{}\">{}</h2>\n<p>Report: {}. {} in {}.</p>",
                p.paper,
                esc(&p.title),
                report_links(p),
                status(p),
                minutes(p.seconds)
            );
            if let Some(e) = &p.error {
                let _ = writeln!(s, "<p>The reproduction failed: {}</p>", esc(e));
                continue;
            }
            s.push_str("<table><tr><th>claim</th><th>where</th><th>paper</th><th>ours</th><th>difference</th><th>outcome</th></tr>\n");
            for c in &p.claims {
                let class = match c.outcome {
                    Outcome::Reproduced => "reproduced",
                    Outcome::Disagrees => "disagrees",
                    Outcome::Missed => "missed",
                };
                let _ = writeln!(
                    s,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"{class}\">{}</td></tr>",
                    esc(&c.text),
                    esc(&c.where_),
                    esc(&c.show_paper()),
                    esc(&c.show(c.ours)),
                    esc(&difference(c)),
                    c.outcome.label()
                );
            }
            s.push_str("</table>\n");
            let list: Vec<String> = ClaimResult::disagreements(&p.claims)
                .lines()
                .filter_map(|l| l.strip_prefix("- "))
                .map(|l| format!("<li>{}</li>", esc(l).replace("**", "")))
                .collect();
            if !list.is_empty() {
                let _ = writeln!(
                    s,
                    "<p>Where the paper disagrees with itself (each judged under both readings):</p><ul>{}</ul>",
                    list.join("")
                );
            }
        }
        s.push_str("</body></html>\n");
        s
    }

    /// index.md, index.html and index.json into `dir`, all or none.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let json = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        super::report::write_files(
            dir,
            &[("index.md".into(), self.markdown()), ("index.html".into(), self.html()), ("index.json".into(), json)],
        )
    }
}

/// Ours minus the paper's, in the claim's unit.
fn difference(c: &ClaimResult) -> String {
    c.kind.show_difference(c.difference)
}

/// Links to a paper's report, and to its page with plots when there is one.
/// A paper's report: its HTML page where one was drawn (with the
/// Markdown beside it), else the Markdown.
fn report_links(p: &PaperSummary) -> String {
    match &p.report_html {
        Some(h) => format!("<a href=\"{0}\">{0}</a> (<a href=\"{1}\">Markdown</a>)", esc(h), esc(&p.report)),
        None => format!("<a href=\"{0}\">{0}</a>", esc(&p.report)),
    }
}

/// The same in Markdown (the page `spmsim report` draws from index.md).
fn markdown_links(p: &PaperSummary) -> String {
    match &p.report_html {
        Some(h) => format!("[{h}]({h}) ([Markdown]({}))", p.report),
        None => format!("[{0}]({0})", p.report),
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::claims::{Disagreement, Rule};

    fn claim(id: &str, kind: Kind, paper: f64, ours: f64, width: f64) -> ClaimResult {
        ClaimResult::new(id, &format!("{id} <x>"), "Fig. 1", kind, paper, (ours, ours), Rule::Within(width))
    }

    fn index() -> Index {
        let d = Disagreement { statement: "V-A says level 1".into(), arithmetic: "2^25 x 100 ns".into(), paper: 3.0 };
        let mut a = PaperSummary::new(
            "a",
            "Paper A",
            65.0,
            Ok(vec![
                claim("one", Kind::Factor, 0.5, 0.52, 0.05),
                claim("two", Kind::Share, 0.1, 0.3, 0.025),
                claim("three", Kind::Change, -0.5, -0.25, 0.1),
                ClaimResult::new("order", "an order", "VI-B", Kind::Order, 1.0, (1.0, 1.0), Rule::Holds),
                claim("four", Kind::Seconds, 30.0, 30.5, 7.5).disagreeing(&d, 3.1, Rule::Within(0.75)),
            ]),
        );
        a.report_html = Some("a/report.html".into());
        let b = PaperSummary::new("b", "Paper B", 60.0, Err("no traces".into()));
        Index { quick: true, seed: 1, seconds: 125.0, papers: vec![a, b] }
    }

    #[test]
    fn the_index_counts_each_outcome_and_keeps_a_failed_paper() {
        let idx = index();
        let md = idx.markdown();
        assert!(md.contains("| paper | reproduced | the paper disagrees with itself | missed | wall time | report |"), "{md}");
        // The HTML report where one was drawn, the Markdown beside it.
        assert!(
            md.contains("| Paper A | 2 of 5 | 1 of 5 | 2 of 5 | 1m05s | [a/report.html](a/report.html) ([Markdown](a/report.md)) |"),
            "{md}"
        );
        assert!(md.contains("Report: [a/report.html](a/report.html) ([Markdown](a/report.md))."), "{md}");
        assert!(md.contains("| Paper B | failed | - | - |") && md.contains("| [b/report.md](b/report.md) |"), "{md}");
        assert!(md.contains("| Paper B | failed | - | - |"), "{md}");
        assert!(md.contains("The reproduction failed: no traces"), "{md}");
        assert!(md.contains("| two <x> | Fig. 1 | 10.0 % | 30.0 % | +20.0 points | missed |"), "{md}");
        assert!(md.contains("| an order | VI-B | holds | holds | - | reproduced |"), "{md}");
        assert!(md.contains("| four <x> | Fig. 1 | 30.0000 s | 30.5000 s | +0.5000 s | the paper disagrees with itself |"), "{md}");
        // Both readings printed, with the arithmetic.
        assert!(
            md.contains("But V-A says level 1: 2^25 x 100 ns. Under that reading, 3.0000 s against ours 3.1000 s (within the rule)."),
            "{md}"
        );
        assert!(md.contains("2 reproduced, 1 where the paper disagrees with itself, 2 missed, of 5 in 1m05s"), "{md}");
        assert!(md.contains("2m05s in all") && md.contains("within 25 %"), "{md}");
        let html = idx.html();
        assert!(html.contains("<a href=\"a/report.html\">a/report.html</a> (<a href=\"a/report.md\">Markdown</a>)"), "{html}");
        assert!(html.contains("<a href=\"b/report.md\">b/report.md</a>") && html.contains("two &lt;x&gt;"), "{html}");
        assert!(html.contains("<td class=\"missed\">missed</td>") && html.contains("<td class=\"reproduced\">reproduced</td>"));
        assert!(html.contains("<td class=\"disagrees\">the paper disagrees with itself</td>"), "{html}");
        assert!(html.contains("<td>2 of 5</td><td>1 of 5</td><td>2 of 5</td>"), "{html}");
        assert!(html.contains("<li>four &lt;x&gt; (Fig. 1): the paper's 30.0000 s"), "{html}");
        assert!(!md.contains("issue") && !html.contains("issue"), "the index names papers' sections, not the project's issues");
    }

    #[test]
    fn index_json_has_each_papers_plot() {
        let doc: serde_json::Value = serde_json::to_value(index()).unwrap();
        let plot = &doc["papers"][0]["plot"];
        let ids: Vec<&str> = plot["points"].as_array().unwrap().iter().map(|p| p["id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["one", "two", "three", "four"]);
        // The change drawn as 1 + c, with its band; the miss is marked.
        let three = &plot["points"][2];
        assert_eq!((three["paper"].as_f64(), three["ours"].as_f64(), three["outcome"].as_str()), (Some(0.5), Some(0.75), Some("missed")));
        assert!((three["low"].as_f64().unwrap() - 0.4).abs() < 1e-12 && (three["high"].as_f64().unwrap() - 0.6).abs() < 1e-12);
        // The claim the paper contradicts, with its other reading.
        let four = &plot["points"][3];
        assert_eq!((four["outcome"].as_str(), four["reproduced"].as_bool()), (Some("disagrees"), Some(false)));
        assert_eq!((four["other"]["paper"].as_f64(), four["other"]["ours"].as_f64()), (Some(3.0), Some(3.1)));
        assert_eq!(plot["not_drawn"][0]["id"], "order");
        assert!(plot["not_drawn"][0]["why"].as_str().unwrap().contains("an order"));
        assert!(plot["notes"][0].as_str().unwrap().contains("1 + c") && plot["notes"][0].as_str().unwrap().ends_with(": three."));
        assert!(plot["notes"][1].as_str().unwrap().ends_with("other statement: four."));
        // A failed paper has nothing to draw.
        assert_eq!(doc["papers"][1]["plot"]["points"].as_array().unwrap().len(), 0);
        assert_eq!(doc["papers"][1]["error"], "no traces");
        assert_eq!(doc["papers"][0]["claims"][4]["outcome"], "disagrees");
    }
}
