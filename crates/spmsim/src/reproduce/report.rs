//! What every reproduction writes: its report's common parts (head,
//! causes, what is not run, figures as tables) and its files, all of them
//! or none.
//!
//! ```text
//!  # <Paper> reproduction          report_head (source, how the runs were made)
//!  ## The paper's claims           claims::ClaimResult::markdown (or the paper's own table)
//!  ## Causes of the gaps           causes_and_figures: one line per measured cause,
//!  ## <what is not run>              not_run_section between them,
//!  ## Figures / ### Fig. N           Figure::markdown, one table per figure
//!  results.json runs.csv report.md  -> write_files (util::output: all or none)
//! ```

use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// One figure as rows (workload, scheme) by columns (x values), each cell
/// normalised as the figure is.
#[derive(Clone, Debug, Serialize)]
pub struct Figure {
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub xs: Vec<u64>,
    pub rows: Vec<(String, String, Vec<f64>)>,
}

impl Figure {
    /// A figure of one column (its y label) for a bar chart's values.
    pub fn bars(name: &str, title: &str, y_label: &str, rows: Vec<(String, String, Vec<f64>)>) -> Figure {
        Figure { name: name.into(), title: title.into(), x_label: "".into(), y_label: y_label.into(), xs: vec![0], rows }
    }

    /// The figure as a Markdown table with `digits` decimals; a figure
    /// with no x label has one column, headed by its y label.
    pub fn markdown(&self, digits: usize) -> String {
        let mut s = format!("### {}\n\n", self.title);
        let head = |x: &u64| if self.x_label.is_empty() { self.y_label.clone() } else { format!("{} {x}", self.x_label) };
        let _ = writeln!(s, "| workload | scheme | {} |", self.xs.iter().map(head).collect::<Vec<_>>().join(" | "));
        let _ = writeln!(s, "|---|---|{}", "---|".repeat(self.xs.len()));
        for (l, sc, v) in &self.rows {
            let _ = writeln!(s, "| {l} | {sc} | {} |", v.iter().map(|x| format!("{x:.digits$}")).collect::<Vec<_>>().join(" | "));
        }
        s.push('\n');
        s
    }

    /// The figure as CSV: a row per (workload, scheme), a column per x.
    pub fn csv(&self) -> String {
        let mut s = format!("workload,scheme,{}\n", self.xs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(","));
        for (l, sc, v) in &self.rows {
            let _ = writeln!(s, "{l},{sc},{}", v.iter().map(|x| format!("{x:.4}")).collect::<Vec<_>>().join(","));
        }
        s
    }
}

/// Write a reproduction's files into `dir`: all of them or none.
pub fn write_files(dir: &Path, files: &[(String, String)]) -> Result<(), String> {
    let mut out = crate::util::output::ResultFiles::new(dir).map_err(|e| e.to_string())?;
    for (name, text) in files {
        out.add(name, text.as_bytes()).map_err(|e| e.to_string())?;
    }
    out.commit().map_err(|e| e.to_string())
}

/// results.json of `results`, then `rest`: the files of most reports.
pub fn with_results_json<T: Serialize>(results: &T, rest: Vec<(String, String)>) -> Result<Vec<(String, String)>, String> {
    let json = serde_json::to_string_pretty(results).map_err(|e| e.to_string())?;
    Ok(std::iter::once(("results.json".to_string(), json)).chain(rest).collect())
}

/// A report's head: its title, the paper, and how the runs were made
/// (`method`, one paragraph).
pub fn report_head(paper: &str, source: &str, method: &str) -> String {
    format!("# {paper} reproduction\n\nPaper: {source}.\n\n{method}\n\n")
}

/// A report's list of what the paper has and these runs leave out, each
/// with why, under `heading`.
pub fn not_run_section(heading: &str, items: &[(String, String)]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut s = format!("\n## {heading}\n\n");
    for (w, why) in items {
        let _ = writeln!(s, "- {w}: {why}.");
    }
    s
}

/// A report's "causes of the gaps" section, then `between` (what is not
/// run), then its figures' cells with `digits` decimals.
pub fn causes_and_figures(causes: &[String], between: &str, figures: &[Figure], digits: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "\n## Causes of the gaps (measured)\n");
    for c in causes {
        let _ = writeln!(s, "- {c}");
    }
    s.push_str(between);
    let _ = writeln!(s, "\n## Figures\n");
    for f in figures {
        s.push_str(&f.markdown(digits));
    }
    s
}

/// A CSV field, quoted when it holds a comma or a quote (a mix's spelled
/// out workload does).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_figure_is_a_table_and_a_csv() {
        let f = Figure {
            name: "fig9".into(),
            title: "Fig. 9: latency".into(),
            x_label: "ops".into(),
            y_label: "latency / WB".into(),
            xs: vec![1, 16],
            rows: vec![("Hash".into(), "wt".into(), vec![3.0, 2.5])],
        };
        assert_eq!(
            f.markdown(2),
            "### Fig. 9: latency\n\n| workload | scheme | ops 1 | ops 16 |\n|---|---|---|---|\n| Hash | wt | 3.00 | 2.50 |\n\n"
        );
        assert_eq!(f.csv(), "workload,scheme,1,16\nHash,wt,3.0000,2.5000\n");
        let b = Figure::bars("fig11", "Fig. 11", "writes / WB", vec![("Array".into(), "STAR".into(), vec![1.5])]);
        assert!(b.markdown(1).contains("| workload | scheme | writes / WB |\n|---|---|---|\n| Array | STAR | 1.5 |"));
    }

    #[test]
    fn the_common_sections() {
        assert_eq!(not_run_section("Not run", &[]), "");
        assert_eq!(not_run_section("Not run", &[("X".into(), "no trace".into())]), "\n## Not run\n\n- X: no trace.\n");
        let s = causes_and_figures(&["a cause".into()], "BETWEEN", &[], 3);
        assert_eq!(s, "\n## Causes of the gaps (measured)\n\n- a cause\nBETWEEN\n## Figures\n\n");
        assert_eq!(csv_field("mix:a=x,b=y"), "\"mix:a=x,b=y\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }

    #[test]
    fn files_are_written_all_or_none() {
        let dir = std::env::temp_dir().join(format!("spmsim-report-files-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let files = with_results_json(&serde_json::json!({"a": 1}), vec![("report.md".into(), "# R\n".into())]).unwrap();
        assert_eq!(files.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["results.json", "report.md"]);
        write_files(&dir, &files).unwrap();
        assert_eq!(std::fs::read_to_string(dir.join("report.md")).unwrap(), "# R\n");
        assert!(std::fs::read_to_string(dir.join("results.json")).unwrap().contains("\"a\": 1"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
