#![allow(dead_code)]
use spmsim::config::{list_presets, load_preset, SimConfig};

pub fn presets() -> Vec<(String, SimConfig)> {
    let v: Vec<(String, SimConfig)> = list_presets().into_iter().map(|p| (p.clone(), load_preset(&p, &[]).unwrap())).collect();
    assert!(v.len() >= 5, "the five control presets exist: {:?}", v.iter().map(|x| &x.0).collect::<Vec<_>>());
    v
}

pub fn small(preset: &str, extra: &[&str]) -> SimConfig {
    let mut o: Vec<String> = vec!["memory.capacity_bytes=67108864".into()];
    if !load_preset(preset, &[]).unwrap().memory.persistent_regions.is_empty() {
        // Triad-NVM's machines: the top quarter persistent, each of the
        // four root registers over 16 MiB of one kind.
        o.push("memory.persistent_regions=[{start_bytes=50331648,size_bytes=16777216}]".into());
        o.push("tree.levels=5".into());
    }
    o.extend(extra.iter().map(|s| s.to_string()));
    load_preset(preset, &o).unwrap()
}
