//! The battery model over any scheme's battery domain (`spmsim compare`):
//! what each structure the configuration keeps under the battery costs to
//! drain and secure at a power failure, priced with the same Table III
//! constants as SecPB's Tables V and VI, in the worst case (every entry
//! full, every line dirty).
//!
//! ```text
//!  battery.wpq               WPQ entries x 64 B moved MC->PM (every scheme alike)
//!  persist buffer / caches   SecPB's own model (`estimate`): entries or lines,
//!                            the fields they hold, the late tuple work
//!  battery_flushes_metadata  every metadata-cache line moved MC->PM, plus a
//!                            hash into its parent when the tree is lazy
//!  Scheme::battery_duties    the scheme's own state (STAR's bitmap lines and
//!                            cache-tree root, Secon's queue, CacheTree's HNodeTree)
//! ```
//! SecPB's Tables V and VI leave the WPQ and the metadata caches out (its
//! rule 5: the WPQ is ADR's and SP's caches are written through); here they
//! are charged, so that schemes whose battery holds only those compare.

use super::EnergyConfig;
use super::{estimate, Term, TermBytes};
use crate::config::SimConfig;
use crate::scheme::params::Front;
use serde::Serialize;

/// One structure the battery drains or secures, and its energy.
#[derive(Clone, Debug, Serialize)]
pub struct DomainPart {
    pub what: String,
    pub energy_uj: f64,
}

/// The battery a configuration needs.
#[derive(Clone, Debug, Serialize)]
pub struct DomainEstimate {
    pub parts: Vec<DomainPart>,
    pub energy_uj: f64,
    pub supercap_mm3: f64,
    pub li_thin_mm3: f64,
}

/// The battery `cfg` needs, part by part.
pub fn domain_estimate(ecfg: &EnergyConfig, cfg: &SimConfig) -> DomainEstimate {
    let block = ecfg.structure.block_bytes as f64;
    let mut parts = Vec::new();
    let battery = &cfg.persistence.battery;
    let scheme = crate::scheme::describe(cfg);
    let work = cfg.scheme.work();
    let moved = |lines: u64, hashes: u64| {
        let mut t = TermBytes::default();
        // A line leaving the MC for PM costs what a fetch the other way does (V-B).
        t.add(Term::CounterFetch, lines as f64 * block);
        t.add(Term::ShaBmt, hashes as f64 * block);
        t.energy_uj(ecfg)
    };
    if battery.wpq {
        let n = cfg.persistence.wpq_entries as u64;
        parts.push(DomainPart { what: format!("WPQ ({n} lines, ADR)"), energy_uj: moved(n, 0) });
    }
    match work.front {
        Front::PersistBuffer if battery.persist_buffer => {
            let entries = match &cfg.persistence.point {
                crate::config::PersistPoint::PersistBuffer { entries, .. } => *entries as u64,
                _ => ecfg.structure.secpb_entries,
            };
            let e = estimate(ecfg, cfg.scheme, entries);
            parts.push(DomainPart {
                what: format!("persist buffer ({entries} entries + the pending store; SecPB V-B)"),
                energy_uj: e.energy_uj,
            });
        }
        Front::CacheHierarchy if battery.caches => {
            let e = estimate(ecfg, cfg.scheme, 0);
            parts.push(DomainPart { what: format!("data caches ({} lines; SecPB V-B)", e.units), energy_uj: e.energy_uj });
        }
        _ => {}
    }
    if work.battery_flushes_metadata && cfg.security.enabled {
        let lines = crate::scheme::metadata_cache_lines(cfg);
        // A lazy tree's line hashes into its parent as it is written back.
        let lazy = crate::scheme::shape(cfg).write_back_hashes_into_parent || matches!(cfg.tree, crate::config::TreeConfig::Sit { .. });
        let hashes = if lazy { lines } else { 0 };
        parts.push(DomainPart { what: format!("metadata caches ({lines} lines, all dirty)"), energy_uj: moved(lines, hashes) });
    }
    if cfg.security.enabled {
        for d in scheme.battery_duties(cfg) {
            parts.push(DomainPart {
                what: format!("{} ({} lines, {} hashes)", d.what, d.lines_moved, d.hashes),
                energy_uj: moved(d.lines_moved, d.hashes),
            });
        }
    }
    let energy_uj: f64 = parts.iter().map(|p| p.energy_uj).sum();
    DomainEstimate {
        parts,
        energy_uj,
        supercap_mm3: super::volume_mm3(energy_uj * 1e-6, ecfg.storage.supercap_wh_per_cm3),
        li_thin_mm3: super::volume_mm3(energy_uj * 1e-6, ecfg.storage.li_thin_wh_per_cm3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;

    fn of(preset: &str) -> DomainEstimate {
        let ecfg = EnergyConfig::load(&super::super::default_energy_path()).unwrap();
        domain_estimate(&ecfg, &load_preset(preset, &[]).unwrap())
    }

    /// A SecPB scheme's persist buffer costs what Table V's model says,
    /// and the WPQ comes on top of it; a write-through scheme at the MC
    /// needs the WPQ alone, a battery-backed write-back cache far more.
    #[test]
    fn each_structure_in_the_domain_is_charged_once() {
        let ecfg = EnergyConfig::load(&super::super::default_energy_path()).unwrap();
        let cobcm = of("cobcm");
        let table_v = estimate(&ecfg, crate::scheme::SchemeKind::secpb(crate::scheme::SecPbVariant::Cobcm), 32).energy_uj;
        assert_eq!(cobcm.parts.len(), 2, "{cobcm:?}");
        assert!((cobcm.parts[1].energy_uj - table_v).abs() < 1e-9);
        let wt = of("secure-wt");
        assert_eq!(wt.parts.len(), 1, "{wt:?}");
        assert!((wt.energy_uj - cobcm.parts[0].energy_uj).abs() < 1e-9, "the same 32-entry WPQ");
        let wb = of("secure-wb-battery");
        assert!(wb.energy_uj > 100.0 * wt.energy_uj, "{wb:?}");
        let star = of("star");
        assert!(star.parts.iter().any(|p| p.what.starts_with("bitmap lines")), "{star:?}");
    }
}
