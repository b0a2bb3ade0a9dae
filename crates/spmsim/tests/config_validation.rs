//! Every number of every preset's configuration has bounds that `load_preset`
//! enforces, and every error names the leaf key and where the value came
//! from (the preset file or a `--set`).

use spmsim::config::{list_presets, load_preset, load_str};
use toml::Value;

/// The dotted paths and values of every number in a table, recursively.
fn numeric_leaves(t: &toml::Table, prefix: &str, out: &mut Vec<(String, Value)>) {
    for (k, v) in t {
        let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match v {
            Value::Table(sub) => numeric_leaves(sub, &path, out),
            Value::Integer(_) | Value::Float(_) => out.push((path, v.clone())),
            _ => {}
        }
    }
}

fn resolved_table(preset: &str) -> toml::Table {
    let cfg = load_preset(preset, &[]).unwrap_or_else(|e| panic!("preset {preset}: {e}"));
    match Value::try_from(&cfg).unwrap() {
        Value::Table(t) => t,
        _ => unreachable!(),
    }
}

/// The float keys for which 0 is a value, not an error.
const ZERO_ALLOWED: &[&str] = &["memory_controller.frontend_latency_ns", "memory_controller.backend_latency_ns"];

#[test]
fn every_number_of_every_preset_is_bounded_and_named() {
    let presets = list_presets();
    assert!(!presets.is_empty(), "no presets found");
    let mut seen = std::collections::BTreeSet::new();
    for preset in &presets {
        let mut leaves = Vec::new();
        numeric_leaves(&resolved_table(preset), "", &mut leaves);
        for (key, value) in leaves {
            seen.insert(key.clone());
            // The walk is over real keys: the leaf's own value loads.
            let same = format!("{key}={value}");
            load_preset(preset, std::slice::from_ref(&same)).unwrap_or_else(|e| panic!("{preset}: {same}: {e}"));
            // A latency that may be nothing (NVMain has no gem5 front or
            // back end) takes 0.
            let zero_allowed = ZERO_ALLOWED.contains(&key.as_str());
            let hostile: &[&str] = match value {
                Value::Float(_) if zero_allowed => &["inf", "-inf", "nan", "1e300", "-1.0"],
                Value::Float(_) => &["inf", "-inf", "nan", "1e300", "-1.0", "0.0"],
                _ => &["4294967295", "4611686018427387904", "-1", "inf", "nan", "1e300", "\"many\""],
            };
            for bad in hostile {
                let set = format!("{key}={bad}");
                let e = match load_preset(preset, std::slice::from_ref(&set)) {
                    Ok(_) => panic!("{preset}: --set {set} was accepted"),
                    Err(e) => e.to_string(),
                };
                assert!(e.starts_with(&format!("--set `{set}`: key `{key}`: ")), "{preset}: --set {set}: {e}");
            }
        }
    }
    // Every tagged variant's numbers were among them.
    for key in [
        "persistence.point.entries",
        "persistence.point.cache.capacity_bytes",
        "metadata_cache.organization.unified.ways",
        "metadata_cache.organization.tree.capacity_bytes",
        "nvm.burst_ns",
        "core.frequency_ghz",
        "tree.arity",
    ] {
        assert!(seen.contains(key), "no preset has {key}; seen {seen:?}");
    }
}

#[test]
fn the_sizes_of_issue_11_are_errors_naming_their_key() {
    for (set, key) in [
        ("caches.l1d.capacity_bytes=1099511627776", "caches.l1d.capacity_bytes"),
        ("metadata_cache.organization.counter.capacity_bytes=1099511627776", "metadata_cache.organization.counter.capacity_bytes"),
        ("nvm.banks=4294967296", "nvm.banks"),
        ("nvm.banks=4294967295", "nvm.banks"),
        ("nvm.read_latency_ns=inf", "nvm.read_latency_ns"),
        ("nvm.read_latency_ns=1e300", "nvm.read_latency_ns"),
        ("nvm.write_latency_ns=nan", "nvm.write_latency_ns"),
    ] {
        let e = load_preset("cobcm", &[set.into()]).unwrap_err().to_string();
        assert!(e.starts_with(&format!("--set `{set}`: key `{key}`: ")), "{e}");
    }
}

#[test]
fn a_type_error_inside_a_tagged_table_names_the_leaf() {
    for (text, key) in [
        ("[persistence.point]\ntype='persist-buffer'\nentries='x'\n", "persistence.point.entries"),
        ("[persistence.point]\ntype='cache-hierarchy'\ncache={ways='x'}\n", "persistence.point.cache.ways"),
        ("[tree]\ntype='sit'\narity=-3\n", "tree.arity"),
        ("[tree]\ntype='bmt'\nlevels=1.5\n", "tree.levels"),
        (
            "[metadata_cache.organization]\ntype='unified'\nunified={capacity_bytes=true}\n",
            "metadata_cache.organization.unified.capacity_bytes",
        ),
        ("[metadata_cache.organization]\ntype='separate'\nmac={wayz=2}\n", "metadata_cache.organization.mac.wayz"),
        ("[tree]\ntype='avl'\n", "tree.type"),
    ] {
        let e = load_str(text, "p.toml", &[]).unwrap_err().to_string();
        assert!(e.starts_with(&format!("p.toml: key `{key}`: ")), "{text}: {e}");
    }
}

#[test]
fn a_key_the_selected_variant_lacks_is_an_error() {
    // sp's point is the memory controller, which has no entries.
    let e = load_preset("sp", &["persistence.point.entries=64".into()]).unwrap_err().to_string();
    assert!(
        e.starts_with("--set `persistence.point.entries=64`: key `persistence.point.entries`: ") && e.contains("memory-controller"),
        "{e}"
    );
    // The same in a preset file.
    let e = load_str("[persistence.point]\ntype='memory-controller'\nentries=64\n", "p.toml", &[]).unwrap_err().to_string();
    assert!(e.starts_with("p.toml: key `persistence.point.entries`: "), "{e}");
    // A separate organization has no `unified` cache.
    let e = load_str("", "p.toml", &["metadata_cache.organization.unified.ways=4".into()]).unwrap_err().to_string();
    assert!(e.starts_with("--set `metadata_cache.organization.unified.ways=4`: key `metadata_cache.organization.unified`: "), "{e}");
    // A variant change through --set starts from the new variant's keys.
    let c = load_preset(
        "sp",
        &["scheme.type=\"secpb\"".into(), "persistence.point.type=\"persist-buffer\"".into(), "persistence.point.entries=64".into()],
    )
    .unwrap();
    assert!(matches!(c.persistence.point, spmsim::config::PersistPoint::PersistBuffer { entries: 64, .. }));
}

#[test]
fn an_error_is_blamed_on_the_setting_that_made_it() {
    // A bad value in the file names the file, even with unrelated --set.
    let e = load_str("[nvm]\nbanks=0\n", "p.toml", &["core.issue_width=2".into()]).unwrap_err().to_string();
    assert!(e.starts_with("p.toml: key `nvm.banks`: "), "{e}");
    // The second of two --set is the bad one, and is named.
    let e = load_str("", "p.toml", &["nvm.banks=8".into(), "core.rob_entries=0".into()]).unwrap_err().to_string();
    assert!(e.starts_with("--set `core.rob_entries=0`: key `core.rob_entries`: "), "{e}");
    // A --set of a whole table is blamed for a key inside it.
    let e = load_str("", "p.toml", &["caches.l2={capacity_bytes=100, ways=1}".into()]).unwrap_err().to_string();
    assert!(e.starts_with("--set `caches.l2={capacity_bytes=100, ways=1}`: key `caches.l2.capacity_bytes`: "), "{e}");
}

#[test]
fn the_memory_controller_refuses_thresholds_and_latencies_that_contradict_each_other() {
    for (set, key, says) in [
        ("memory_controller.write_low_thresh_perc=85", "memory_controller.write_low_thresh_perc", "below write_high_thresh_perc = 85"),
        ("nvm.row_hit_latency_ns=60", "nvm.row_hit_latency_ns", "cannot take longer than one that misses it"),
        ("nvm.row_buffer_bytes=96", "nvm.row_buffer_bytes", "power of two"),
        ("memory_controller.model=\"fcfs\"", "memory_controller.model", "unknown variant"),
        ("memory_controller.wpq=\"elsewhere\"", "memory_controller.wpq", "unknown variant"),
        ("nvm.bank_map=\"random\"", "nvm.bank_map", "unknown variant"),
    ] {
        let e = load_preset("cobcm", &[set.into()]).unwrap_err().to_string();
        assert!(e.contains(&format!("key `{key}`")) && e.contains(says), "--set {set}: {e}");
    }
    let ok = load_preset("wt", &[]).unwrap();
    assert_eq!((ok.memory_controller.frontend_latency_ns, ok.nvm.row_hit_latency_ns), (0.0, 15.0), "Secon's NVMain machine");
}
