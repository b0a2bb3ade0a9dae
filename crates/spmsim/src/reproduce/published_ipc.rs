//! Published IPC figures for SPEC CPU2006 counterparts of the suite's
//! programs (`configs/reference/published-ipc.toml`), set beside the bbb
//! baseline core's IPC in the SecPB report. They are there to
//! be read against, never to calibrate anything: no simulation reads them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Source {
    /// The column heading.
    pub short: String,
    pub citation: String,
}

/// One suite program's counterpart and its figures.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Counterpart {
    pub name: String,
    pub benchmark: String,
    pub kinship: String,
    /// CPI as `cod5` prints it.
    pub cod5_cpi: Option<f64>,
    /// IPC as `gem5` prints it.
    pub gem5_ipc: Option<f64>,
}

impl Counterpart {
    /// IPC per source key.
    fn ipc(&self, source: &str) -> Option<f64> {
        match source {
            "cod5" => self.cod5_cpi.map(|c| 1.0 / c),
            "gem5" => self.gem5_ipc,
            _ => None,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct PublishedIpc {
    pub sources: BTreeMap<String, Source>,
    pub program: Vec<Counterpart>,
}

impl PublishedIpc {
    pub fn load() -> Result<Self, String> {
        let r: PublishedIpc = super::claims::read_reference("published-ipc")?;
        if let Some(k) = r.sources.keys().find(|k| !matches!(k.as_str(), "cod5" | "gem5")) {
            return Err(format!("configs/reference/published-ipc.toml: source `{k}` has no column (cod5 and gem5 have)"));
        }
        Ok(r)
    }

    /// The report's section: `ours` maps a program to its bbb IPC.
    pub fn markdown(&self, ours: &BTreeMap<String, f64>) -> String {
        let mut o = String::new();
        let keys: Vec<&String> = self.sources.keys().collect();
        let _ = writeln!(o, "\n**The baseline core beside published IPC** (bbb, 32 entries; the SPEC CPU2006 counterpart of each program, IPC = 1/CPI where the source prints CPI):\n");
        let heads: Vec<String> = keys.iter().map(|k| self.sources[*k].short.clone()).collect();
        let _ = writeln!(o, "| program | ours | SPEC counterpart | {} | ours / {} | kinship |", heads.join(" | "), heads[0]);
        let _ = writeln!(o, "|---|---|---|{}---|---|", "---|".repeat(keys.len()));
        let mut ratios = Vec::new();
        for c in &self.program {
            let Some(&mine) = ours.get(&c.name) else { continue };
            let cols: Vec<String> = keys.iter().map(|k| c.ipc(k).map_or("-".into(), |v| format!("{v:.2}"))).collect();
            let ratio = c.ipc(keys[0]).map(|v| mine / v);
            ratios.extend(ratio);
            let _ = writeln!(
                o,
                "| {} | {mine:.2} | {} | {} | {} | {} |",
                c.name,
                c.benchmark,
                cols.join(" | "),
                ratio.map_or("-".into(), |r| format!("{r:.2}")),
                c.kinship
            );
        }
        if !ratios.is_empty() {
            let g = super::geomean(&ratios);
            let (lo, hi) = super::range(&ratios);
            let _ = writeln!(
                o,
                "\nOver these {} programs our baseline runs at {g:.2} times the {} IPC (geometric mean; {lo:.2} to {hi:.2}).",
                ratios.len(),
                heads[0]
            );
        }
        let _ = writeln!(o, "\nSources:\n");
        for k in keys {
            let _ = writeln!(o, "- {}: {}", self.sources[k].short, self.sources[k].citation);
        }
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_file_loads_and_its_table_uses_our_figures() {
        let p = PublishedIpc::load().unwrap();
        assert!(p.program.iter().any(|c| c.name == "gcc"));
        let ours: BTreeMap<String, f64> = [("gcc".to_string(), 1.2), ("xz".to_string(), 0.8)].into();
        let md = p.markdown(&ours);
        // gcc's row: ours 1.20 against CPI 1.20 (IPC 0.83), ratio 1.44.
        let row = md.lines().find(|l| l.starts_with("| gcc |")).expect("a gcc row");
        assert!(row.contains("| 1.20 | 403.gcc | 0.83 |") && row.contains("| 1.44 |"), "{row}");
        assert!(!md.contains("| bzip2 |"), "a program that did not run has no row");
        assert!(md.contains("Over these 1 programs"), "{md}");
    }
}
