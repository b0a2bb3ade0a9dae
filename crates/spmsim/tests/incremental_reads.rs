//! The crash oracle's incremental reads (oracle::incremental) give the
//! report full reads give, byte for byte: for every preset, controls among
//! them, on the persistent workloads, at every crash point.

mod common;

use spmsim::verify::oracle::{CrashCheck, CrashPoints, Reads};
use spmsim::workload::WorkloadKind;

fn report(cfg: &spmsim::config::SimConfig, spec: &str, ops: u64, reads: Reads) -> String {
    let w = WorkloadKind::parse(spec).unwrap();
    let events = w.generate(ops, 3).unwrap();
    let check =
        CrashCheck { cfg, workload_name: w.name(), events, ops, seed: 3, points: CrashPoints::All, max_listed: 40, guarantee: None };
    serde_json::to_string(&check.run_reads(reads, &|_, _| {}).unwrap()).unwrap()
}

/// Every preset on one workload; returns how many showed violations.
fn same_reports(spec: &str, ops: u64) -> usize {
    let mut violating = 0;
    for (name, cfg) in common::presets() {
        let full = report(&cfg, spec, ops, Reads::Full);
        let incremental = report(&cfg, spec, ops, Reads::Incremental);
        assert_eq!(incremental, full, "{name} on {spec}");
        violating += usize::from(!full.contains("\"violations\":0,"));
    }
    violating
}

#[test]
fn the_same_report_on_array_swap() {
    assert!(same_reports("array-swap", 4) > 0, "some control showed violations, so failing reads were compared too");
}

#[test]
fn the_same_report_on_hash() {
    same_reports("hash:size_mib=1,ops_per_tx=1-3", 2);
}

#[test]
fn the_same_report_on_btree() {
    same_reports("btree:size_mib=1,ops_per_tx=1-3", 2);
}

#[test]
fn the_same_report_on_queue() {
    same_reports("queue:size_mib=1,ops_per_tx=1-3", 2);
}

#[test]
fn the_same_report_on_rbtree() {
    same_reports("rbtree:size_mib=1,ops_per_tx=1-3", 2);
}
