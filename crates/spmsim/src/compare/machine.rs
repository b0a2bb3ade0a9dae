//! The common machine of `spmsim compare`, and the insecure baseline each
//! scheme's slowdown is taken against.
//!
//! ```text
//!  from the scheme's preset   scheme table, tree type and arity, on-chip tree
//!                             levels, MAC placement, metadata-cache kind
//!                             (separate or unified), persist point, battery
//!                             domain, WPQ coalescing, the multiset-hash latency
//!  from SecPB Table I         core, caches, PCM, 8 GB all persistent, 32-entry
//!                             WPQ, AES and MAC 40 cycles, metadata cache 2 cycles
//!  common rules               tree height derived from the capacity; metadata
//!                             caches of 128 KB and 8 ways per kind they hold;
//!                             strict persistency
//! ```

use crate::config::CacheGeometry;
use crate::config::{
    MacPlacement, MemoryConfig, MetadataCacheConfig, MetadataCacheOrganization, PersistPoint, PersistencyModel, SecurityConfig, SimConfig,
    TepConfig, TreeConfig,
};
use crate::scheme::params::Front;
use crate::scheme::SchemeKind;
use crate::scheme::Sp;

/// Bytes of metadata cache per kind of metadata line a cache holds.
pub const CACHE_BYTES_PER_KIND: u64 = 128 << 10;
/// Ways per kind held (SecPB Table I: 8-way).
pub const WAYS_PER_KIND: u32 = 8;

/// One paragraph saying what the common machine is, for the report.
pub const DESCRIPTION: &str = "SecPB's Table I machine for every scheme: one out-of-order core at 4 GHz \
(the interval core for the generated benchmarks, which have no instruction stream), 64 KB L1D, 512 KB L2, 4 MB L3, \
8 GB of PCM (55 ns reads, 150 ns writes, 16 banks) behind a memory controller like gem5's (read and write queues of 64 and \
128, the WPQ in front of the write queue), all of it persistent (Triad-NVM keeps its split into a \
persistent and a non-persistent region, scaled to the same shares), a 32-entry WPQ, AES and MAC at 40 cycles. \
From each scheme's preset: its scheme, tree type and arity, on-chip tree levels, MAC placement, persist point and battery \
domain. The same for all: the tree's height is derived from the 8 GB; every metadata cache has 128 KB and 8 ways per kind \
of line it holds (SecPB's three separate 128 KB caches; a unified cache of counters and tree nodes 256 KB, 16 ways); every \
store persists in program order (strict persistency) at the scheme's persist point.";

/// The common machine for the scheme of preset `p`.
pub fn common(p: &SimConfig) -> SimConfig {
    let d = SimConfig::default();
    let mut c = p.clone();
    c.core = d.core.clone();
    c.caches = d.caches.clone();
    c.nvm = d.nvm.clone();
    c.memory_controller = d.memory_controller.clone();
    c.memory = with_capacity(&p.memory, MemoryConfig::default().capacity_bytes);
    c.tree = match p.tree {
        TreeConfig::Bmt { arity, levels, onchip_levels } if onchip_levels > 0 => TreeConfig::Bmt { arity, levels, onchip_levels },
        TreeConfig::Bmt { arity, .. } => TreeConfig::Bmt { arity, levels: None, onchip_levels: 0 },
        TreeConfig::Sit { arity, .. } => TreeConfig::Sit { arity, levels: None },
    };
    fit_onchip_levels(&mut c);
    let s = &p.security;
    c.security = SecurityConfig {
        enabled: s.enabled,
        mac_placement: s.mac_placement,
        multiset_hash_latency_cycles: s.multiset_hash_latency_cycles,
        mc_bmt_pipelined: s.mc_bmt_pipelined,
        volatile_key: s.volatile_key,
        ..SecurityConfig::default()
    };
    c.metadata_cache = budget(p);
    c.persistence.wpq_entries = d.persistence.wpq_entries;
    c.persistence.model = PersistencyModel::Strict;
    c.persistence.tep = TepConfig::default();
    c
}

/// The common machine for the scheme of preset `p` under persistency
/// `model` instead of strict: TEP keeps the preset's own TEP settings
/// (the only preset that runs it, Secon's, is the only one whose paper
/// gives them).
pub fn common_under(p: &SimConfig, model: PersistencyModel) -> SimConfig {
    let mut c = common(p);
    c.persistence.model = model;
    if model == PersistencyModel::Tep {
        c.persistence.tep = p.persistence.tep.clone();
    }
    c
}

/// Why a relaxed persistency `model` changes nothing on `c`'s front end
/// (None when it does): the timing model orders by epochs the lines an L1
/// controller sends to the memory controller; a persist buffer or
/// battery-backed caches hold each store persistent as it enters them,
/// so the core never waits for a barrier's flushes.
pub fn same_as_strict(c: &SimConfig, model: PersistencyModel) -> Option<String> {
    (model != PersistencyModel::Strict && c.persistence.point != PersistPoint::MemoryController).then(|| {
        format!(
            "the same as under strict persistency: its persist point ({}) holds each store persistent as it enters, so {} barriers flush nothing it waits for",
            c.scheme.work().front.point_type(),
            model.name()
        )
    })
}

/// `m` on a machine of `bytes`: a scheme that splits memory into
/// persistent regions (Triad-NVM) keeps its split, each region scaled to
/// the same share of the new size on 1 GiB boundaries (a root register of
/// its machines covers 1 GiB); without regions all of memory is persistent.
pub fn with_capacity(m: &MemoryConfig, bytes: u64) -> MemoryConfig {
    let gib = 1u64 << 30;
    let scale = |x: u64| ((x as u128 * bytes as u128 / m.capacity_bytes.max(1) as u128) as u64 / gib) * gib;
    let persistent_regions = m
        .persistent_regions
        .iter()
        .map(|r| crate::config::PersistentRegion { start_bytes: scale(r.start_bytes), size_bytes: scale(r.size_bytes).max(gib) })
        .collect();
    MemoryConfig { capacity_bytes: bytes, persistent_regions, tx_stack_bytes: m.tx_stack_bytes, ..MemoryConfig::default() }
}

/// A tree that keeps levels on chip above its top level (Triad-NVM
/// Observation 5) keeps the height of its preset, so that each root
/// register covers as much memory as there (its regions are aligned to
/// it); the levels on chip are then as many as it takes to reach one
/// root on `c`'s memory.
pub fn fit_onchip_levels(c: &mut SimConfig) {
    let capacity = c.memory.capacity_bytes;
    if let TreeConfig::Bmt { arity, levels: Some(levels), onchip_levels } = &mut c.tree {
        if *onchip_levels > 0 {
            let layout = crate::engine::layout::Layout::new(capacity, crate::engine::layout::CounterFormat::Split, *arity, Some(*levels));
            *onchip_levels = crate::scheme::tree_above(layout.level_nodes[layout.top_level() as usize], *arity).0.max(1);
        }
    }
}

/// The common budget in the organisation the scheme's preset uses.
fn budget(p: &SimConfig) -> MetadataCacheConfig {
    let geometry = |kinds: u64| CacheGeometry { capacity_bytes: CACHE_BYTES_PER_KIND * kinds, ways: WAYS_PER_KIND * kinds as u32 };
    let organization = match p.metadata_cache.organization {
        MetadataCacheOrganization::Separate { .. } => {
            MetadataCacheOrganization::Separate { counter: geometry(1), mac: geometry(1), tree: geometry(1) }
        }
        MetadataCacheOrganization::Unified { .. } => {
            // Counters and tree nodes, and MAC lines unless MACs ride in the data line.
            let kinds = if p.security.mac_placement == MacPlacement::DataLine { 2 } else { 3 };
            MetadataCacheOrganization::Unified { unified: geometry(kinds) }
        }
    };
    MetadataCacheConfig { organization }
}

/// The insecure machine a scheme's slowdown is taken against: the same
/// configuration with security off and the insecure scheme of its front
/// end (BBB's persist buffer, eADR's caches, a flush per store at the MC).
///
/// With security off the metadata sections do nothing, so they are reset
/// to their defaults: every scheme of one front end and persistency then
/// shares one baseline.
pub fn insecure(c: &SimConfig) -> SimConfig {
    let d = SimConfig::default();
    let mut b = c.clone();
    b.security = SecurityConfig { enabled: false, ..SecurityConfig::default() };
    b.tree = d.tree.clone();
    b.metadata_cache = d.metadata_cache.clone();
    b.persistence.wpq_coalesce = d.persistence.wpq_coalesce.clone();
    if c.scheme.work().front == Front::MemoryController {
        b.persistence.battery = d.persistence.battery.clone();
    }
    b.description = format!("the insecure baseline of {}", c.name);
    b.scheme = match c.scheme.work().front {
        Front::PersistBuffer => SchemeKind::BBB,
        Front::CacheHierarchy => SchemeKind::EADR,
        Front::MemoryController => SchemeKind::Sp(Sp {}),
    };
    b.name = insecure_name(c);
    b
}

/// Whether `a` and `b` are the same machine, whatever their names and
/// descriptions say.
pub fn same_machine(a: &SimConfig, b: &SimConfig) -> bool {
    let unnamed = |c: &SimConfig| SimConfig { name: String::new(), description: String::new(), ..c.clone() };
    unnamed(a) == unnamed(b)
}

/// The insecure baseline of preset `p` on its own paper's machine, named
/// after the preset (each paper machine has its own).
pub fn paper_insecure(p: &SimConfig) -> SimConfig {
    let mut b = insecure(p);
    b.name = format!("{}@{}", b.name, p.name);
    b
}

/// The name of the insecure baseline of `c`.
pub fn insecure_name(c: &SimConfig) -> String {
    let base = match c.scheme.work().front {
        Front::PersistBuffer => "bbb",
        Front::CacheHierarchy => "eadr",
        Front::MemoryController => "insecure-mc",
    };
    // A machine split into persistent regions (Triad-NVM's) has its own.
    match c.memory.persistent_regions.is_empty() {
        true => base.into(),
        false => format!("{base}-split"),
    }
}

/// Where the common machine differs from the preset's own, one line per
/// key (`nvm.read_latency_ns: 60 -> 55`). Name and description are left out.
pub fn differences(paper: &SimConfig, common: &SimConfig) -> Vec<String> {
    let flat = |c: &SimConfig| {
        let mut out = std::collections::BTreeMap::new();
        if let Ok(v) = toml::Value::try_from(c) {
            flatten("", &v, &mut out);
        }
        out.remove("name");
        out.remove("description");
        out
    };
    let (a, b) = (flat(paper), flat(common));
    let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    keys.into_iter()
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| {
            let v = |m: &std::collections::BTreeMap<String, String>| m.get(k).cloned().unwrap_or_else(|| "(unset)".into());
            format!("{k}: {} -> {}", v(&a), v(&b))
        })
        .collect()
}

fn flatten(prefix: &str, v: &toml::Value, out: &mut std::collections::BTreeMap<String, String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, x) in t {
                let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                flatten(&key, x, out);
            }
        }
        other => {
            out.insert(prefix.to_string(), other.to_string());
        }
    }
}

/// Whether the timing model can price a configuration: it has no rules
/// for the data-cache front end (eADR), which `compare` still sizes and
/// attacks.
pub fn timed(c: &SimConfig) -> bool {
    !matches!(c.persistence.point, PersistPoint::CacheHierarchy { .. })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::load_preset;

    /// The common machine keeps the scheme and its mechanism and takes the
    /// rest from Table I; the differences name what moved.
    #[test]
    fn the_common_machine_keeps_the_scheme_and_replaces_the_machine() {
        let mset = load_preset("mset", &[]).unwrap();
        let c = common(&mset);
        assert_eq!(c.scheme, mset.scheme);
        assert_eq!(c.security.mac_placement, MacPlacement::DataLine);
        assert_eq!(c.core, SimConfig::default().core);
        assert_eq!(c.tree.levels(), None);
        match &c.metadata_cache.organization {
            MetadataCacheOrganization::Unified { unified } => assert_eq!((unified.capacity_bytes, unified.ways), (256 << 10, 16)),
            o => panic!("{o:?}"),
        }
        c.validate().unwrap();
        let d = differences(&mset, &c);
        assert!(d.iter().any(|l| l.starts_with("core.frequency_ghz: 2")), "{d:?}");
        assert!(!d.iter().any(|l| l.starts_with("scheme")), "{d:?}");
        // SecPB's own machine is the common one but for the tree's stated height.
        let cobcm = load_preset("cobcm", &[]).unwrap();
        assert!(
            differences(&cobcm, &common(&cobcm)).iter().all(|l| l.starts_with("tree.levels")),
            "{:?}",
            differences(&cobcm, &common(&cobcm))
        );
    }

    #[test]
    fn each_front_end_has_its_insecure_baseline() {
        for (preset, base) in [("cobcm", "bbb"), ("secure-eadr", "eadr"), ("star", "insecure-mc")] {
            let c = common(&load_preset(preset, &[]).unwrap());
            let b = insecure(&c);
            assert!(!b.security.enabled);
            assert_eq!(b.name, base);
            b.validate().unwrap();
        }
    }
}
