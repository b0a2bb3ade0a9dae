//! Value checks that serde cannot express. Each error names its key path.
//!
//! Every number has both bounds (`limits.rs`).

use super::*;
use crate::engine::counter::CounterFormat;
use crate::engine::layout::{Cover, Layout};
use crate::scheme::params::{Front, Need, TreeType};

type Invalid = (String, String);

pub use super::limits::*;

fn bad(key: &str, msg: String) -> Result<(), Invalid> {
    Err((key.to_string(), msg))
}

/// An integer in `min..=max`.
fn in_range(key: &str, v: u64, min: u64, max: u64) -> Result<(), Invalid> {
    if v < min || v > max {
        return bad(key, format!("must be between {min} and {max}, got {v}"));
    }
    Ok(())
}

/// A finite float in `(0, max]`.
fn positive_finite(key: &str, v: f64, max: f64) -> Result<(), Invalid> {
    if !(v.is_finite() && v > 0.0 && v <= max) {
        return bad(key, format!("must be a finite number above 0 and at most {max}, got {}", short_float(v)));
    }
    Ok(())
}

/// A float as people write it: `1e300`, not three hundred digits.
fn short_float(v: f64) -> String {
    if v.is_finite() && v != 0.0 && !(1e-6..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

fn check_geometry(key: &str, capacity_bytes: u64, ways: u32, max_bytes: u64) -> Result<(), Invalid> {
    let cap_key = format!("{key}.capacity_bytes");
    if capacity_bytes == 0 {
        return bad(&cap_key, "a cache must hold at least one 64 B line, got 0".into());
    }
    if capacity_bytes > max_bytes {
        return bad(&cap_key, format!("{capacity_bytes} exceeds the largest cache the simulator builds, {max_bytes} B"));
    }
    if !capacity_bytes.is_multiple_of(64) {
        return bad(&cap_key, format!("{capacity_bytes} is not a multiple of the 64 B line"));
    }
    let ways_key = format!("{key}.ways");
    in_range(&ways_key, ways as u64, 1, MAX_WAYS as u64)?;
    if !(capacity_bytes / 64).is_multiple_of(ways as u64) {
        return bad(&ways_key, format!("{} lines do not divide into {} ways", capacity_bytes / 64, ways));
    }
    Ok(())
}

impl SimConfig {
    /// The row buffer and the gem5 controller's thresholds and latencies.
    fn validate_memory_controller(&self) -> Result<(), Invalid> {
        let n = &self.nvm;
        positive_finite("nvm.row_hit_latency_ns", n.row_hit_latency_ns, MAX_LATENCY_NS)?;
        if n.row_hit_latency_ns > n.read_latency_ns {
            return bad(
                "nvm.row_hit_latency_ns",
                format!(
                    "a read that hits the open row cannot take longer than one that misses it (nvm.read_latency_ns = {}), got {}",
                    short_float(n.read_latency_ns),
                    short_float(n.row_hit_latency_ns)
                ),
            );
        }
        let rb = n.row_buffer_bytes;
        if rb < 64 || !rb.is_power_of_two() || rb > 1 << 20 {
            return bad("nvm.row_buffer_bytes", format!("must be a power of two from 64 (one block) to 1048576, got {rb}"));
        }
        let c = &self.memory_controller;
        in_range("memory_controller.write_high_thresh_perc", c.write_high_thresh_perc as u64, 1, 100)?;
        in_range("memory_controller.write_low_thresh_perc", c.write_low_thresh_perc as u64, 0, 100)?;
        if c.write_low_thresh_perc >= c.write_high_thresh_perc {
            return bad(
                "memory_controller.write_low_thresh_perc",
                format!("must be below write_high_thresh_perc = {}, got {}", c.write_high_thresh_perc, c.write_low_thresh_perc),
            );
        }
        in_range("memory_controller.min_writes_per_switch", c.min_writes_per_switch as u64, 1, MAX_ENTRIES as u64)?;
        in_range("memory_controller.min_reads_per_switch", c.min_reads_per_switch as u64, 1, MAX_ENTRIES as u64)?;
        for (k, v) in [("frontend_latency_ns", c.frontend_latency_ns), ("backend_latency_ns", c.backend_latency_ns)] {
            if !(v.is_finite() && (0.0..=MAX_LATENCY_NS).contains(&v)) {
                return bad(
                    &format!("memory_controller.{k}"),
                    format!("must be a finite number from 0 to {MAX_LATENCY_NS}, got {}", short_float(v)),
                );
            }
        }
        Ok(())
    }

    pub fn validate(&self) -> Result<(), Invalid> {
        self.validate_memory()?;
        self.validate_security()?;
        self.validate_core()?;
        self.validate_caches()?;
        self.validate_nvm()?;
        self.validate_memory_controller()?;
        self.validate_persistence()?;
        self.check_scheme()?;
        Ok(())
    }

    /// The memory's size, its persistent regions and the transaction stack.
    fn validate_memory(&self) -> Result<(), Invalid> {
        let m = &self.memory;
        if m.page_bytes != 4096 {
            return bad(
                "memory.page_bytes",
                format!("split counters cover 64 blocks of 64 B, so the page must be 4096 B, got {}", m.page_bytes),
            );
        }
        if m.capacity_bytes == 0 || !m.capacity_bytes.is_multiple_of(m.page_bytes) {
            return bad(
                "memory.capacity_bytes",
                format!("{} is not a positive multiple of the page size {}", m.capacity_bytes, m.page_bytes),
            );
        }
        if m.capacity_bytes > MAX_MEMORY_BYTES {
            return bad("memory.capacity_bytes", format!("{} exceeds the 2^50 B the pad seed encodes", m.capacity_bytes));
        }
        let mut regions: Vec<(u64, u64)> = Vec::new();
        for (i, r) in m.persistent_regions.iter().enumerate() {
            let key = format!("memory.persistent_regions[{i}]");
            let end = r.start_bytes.saturating_add(r.size_bytes);
            if r.size_bytes == 0 || !r.start_bytes.is_multiple_of(m.page_bytes) || !r.size_bytes.is_multiple_of(m.page_bytes) {
                return bad(&key, format!("start_bytes and size_bytes must be positive multiples of the {} B page (one counter block covers one page, and it is persisted or not as a whole), got {} and {}", m.page_bytes, r.start_bytes, r.size_bytes));
            }
            if end > m.capacity_bytes {
                return bad(&key, format!("ends at {end} B, past memory.capacity_bytes = {}", m.capacity_bytes));
            }
            if let Some(&(s0, e0)) = regions.iter().find(|(s0, e0)| r.start_bytes < *e0 && *s0 < end) {
                return bad(&key, format!("[{}, {end}) overlaps an earlier region [{s0}, {e0})", r.start_bytes));
            }
            regions.push((r.start_bytes, end));
        }
        if m.tx_stack_bytes > 0 && (m.tx_stack_bytes > 65536 || !m.tx_stack_bytes.is_multiple_of(8)) {
            return bad("memory.tx_stack_bytes", format!("must be a multiple of 8 up to 65536, got {}", m.tx_stack_bytes));
        }
        if self.security.volatile_key && m.persistent_regions.is_empty() {
            return bad("security.volatile_key", "a volatile key covers the memory outside the persistent regions, and memory.persistent_regions declares none (all of memory is persistent)".into());
        }
        Ok(())
    }

    /// The tree's shape, the security engine's latencies and units, and the metadata caches.
    fn validate_security(&self) -> Result<(), Invalid> {
        if let TreeConfig::Bmt { onchip_levels, .. } = self.tree {
            in_range("tree.onchip_levels", onchip_levels as u64, 0, 8)?;
        }
        let s = &self.security;
        for (k, v) in [
            ("security.mac_latency_cycles", s.mac_latency_cycles),
            ("security.aes_latency_cycles", s.aes_latency_cycles),
            ("security.metadata_cache_latency_cycles", s.metadata_cache_latency_cycles),
        ] {
            in_range(k, v as u64, 0, MAX_LATENCY_CYCLES as u64)?;
        }
        if let Some(h) = s.multiset_hash_latency_cycles {
            in_range("security.multiset_hash_latency_cycles", h as u64, 0, MAX_LATENCY_CYCLES as u64)?;
        }
        if let Some(h) = s.tree_hash_latency_cycles {
            in_range("security.tree_hash_latency_cycles", h as u64, 0, MAX_LATENCY_CYCLES as u64)?;
        }
        in_range("security.hash_pipeline_interval_cycles", s.hash_pipeline_interval_cycles as u64, 1, MAX_LATENCY_CYCLES as u64)?;
        for (k, v) in [
            ("security.aes_units", s.aes_units),
            ("security.mac_units", s.mac_units),
            ("security.hash_units", s.hash_units),
            ("security.metadata_cache_ports", s.metadata_cache_ports),
            ("security.metadata_cache_mshrs", s.metadata_cache_mshrs),
        ] {
            in_range(k, v as u64, 1, MAX_UNITS as u64)?;
        }
        for (k, v) in [("security.aes_interval_cycles", s.aes_interval_cycles), ("security.mac_interval_cycles", s.mac_interval_cycles)] {
            in_range(k, v as u64, 1, MAX_LATENCY_CYCLES as u64)?;
        }
        if let Some(n) = s.background_queue_entries {
            in_range("security.background_queue_entries", n as u64, 1, MAX_ENTRIES as u64)?;
        }
        let arity = self.tree.arity();
        if arity < 2 || !arity.is_power_of_two() {
            return bad("tree.arity", format!("must be a power of two >= 2, got {arity}"));
        }
        if arity != 8 {
            return bad("tree.arity", format!("64 B nodes hold 8 hashes or 8 counters, so only 8 is supported, got {arity}"));
        }
        if let Some(l) = self.tree.levels() {
            in_range("tree.levels", l as u64, 1, 32)?;
        }
        match &self.metadata_cache.organization {
            MetadataCacheOrganization::Separate { counter, mac, tree } => {
                for (k, g) in [("counter", counter), ("mac", mac), ("tree", tree)] {
                    check_geometry(&format!("metadata_cache.organization.{k}"), g.capacity_bytes, g.ways, MAX_DATA_CACHE_BYTES)?;
                }
            }
            MetadataCacheOrganization::Unified { unified } => {
                check_geometry("metadata_cache.organization.unified", unified.capacity_bytes, unified.ways, MAX_DATA_CACHE_BYTES)?
            }
        }
        Ok(())
    }

    /// The core's widths, queues, front-end stages, units and branch predictor.
    fn validate_core(&self) -> Result<(), Invalid> {
        let c = &self.core;
        if !(c.frequency_ghz.is_finite() && c.frequency_ghz > 0.0 && c.frequency_ghz < 100.0) {
            return bad("core.frequency_ghz", format!("must be a finite number in (0, 100), got {}", short_float(c.frequency_ghz)));
        }
        in_range("core.count", c.count as u64, 1, MAX_CORES as u64)?;
        in_range("core.issue_width", c.issue_width as u64, 1, MAX_ISSUE_WIDTH as u64)?;
        in_range("core.rob_entries", c.rob_entries as u64, 1, MAX_ENTRIES as u64)?;
        in_range("core.store_buffer_entries", c.store_buffer_entries as u64, 1, MAX_ENTRIES as u64)?;
        if c.model != super::CoreModel::Interval {
            in_range("core.rob_entries", c.rob_entries as u64, 1, MAX_OOO_ROB_ENTRIES as u64)?;
        }
        let o = &c.ooo;
        in_range("core.ooo.load_queue_entries", o.load_queue_entries as u64, 1, MAX_ENTRIES as u64)?;
        in_range("core.ooo.dispatch_width", o.dispatch_width as u64, 1, MAX_ISSUE_WIDTH as u64)?;
        in_range("core.ooo.commit_width", o.commit_width as u64, 1, MAX_ISSUE_WIDTH as u64)?;
        in_range("core.ooo.iq_entries", o.iq_entries as u64, 1, MAX_ENTRIES as u64)?;
        in_range("core.ooo.fetch_width", o.fetch_width as u64, 1, MAX_ISSUE_WIDTH as u64)?;
        let fb = o.fetch_buffer_bytes;
        if !fb.is_power_of_two() || !(4..=64).contains(&fb) {
            return bad("core.ooo.fetch_buffer_bytes", format!("must be a power of two from 4 to 64 (a cache block), got {fb}"));
        }
        in_range("core.ooo.fetch_queue_entries", o.fetch_queue_entries as u64, 1, MAX_ENTRIES as u64)?;
        for (k, n) in [
            ("fetch_to_decode_cycles", o.fetch_to_decode_cycles),
            ("decode_to_rename_cycles", o.decode_to_rename_cycles),
            ("rename_to_iew_cycles", o.rename_to_iew_cycles),
            ("iew_to_fetch_cycles", o.iew_to_fetch_cycles),
        ] {
            in_range(&format!("core.ooo.{k}"), n as u64, 0, MAX_LATENCY_CYCLES as u64)?;
        }
        in_range("core.ooo.mispredict_refill_cycles", o.mispredict_refill_cycles as u64, 0, MAX_LATENCY_CYCLES as u64)?;
        for (k, p) in [
            ("int_alu", o.int_alu),
            ("int_mult", o.int_mult),
            ("int_div", o.int_div),
            ("fp_add", o.fp_add),
            ("fp_mult", o.fp_mult),
            ("fp_div", o.fp_div),
            ("fp_sqrt", o.fp_sqrt),
        ] {
            in_range(&format!("core.ooo.{k}.count"), p.count as u64, 1, 64)?;
            in_range(&format!("core.ooo.{k}.latency"), p.latency as u64, 1, MAX_LATENCY_CYCLES as u64)?;
            in_range(&format!("core.ooo.{k}.issue_interval"), p.issue_interval as u64, 1, MAX_LATENCY_CYCLES as u64)?;
        }
        for (k, n) in [
            ("local_history_entries", o.local_history_entries),
            ("local_counter_entries", o.local_counter_entries),
            ("global_counter_entries", o.global_counter_entries),
            ("btb_entries", o.btb_entries),
        ] {
            if !n.is_power_of_two() || n > 1 << 24 {
                return bad(&format!("core.ooo.{k}"), format!("must be a power of two up to {}, got {n}", 1 << 24));
            }
        }
        in_range("core.ooo.ras_entries", o.ras_entries as u64, 1, 1024)?;
        Ok(())
    }

    /// The data and instruction caches: geometry, latency, MSHRs and write buffers.
    fn validate_caches(&self) -> Result<(), Invalid> {
        let i = &self.caches.l1i;
        for (key, n) in [("mshrs", i.mshrs), ("targets_per_mshr", i.targets_per_mshr), ("write_buffers", i.write_buffers)] {
            in_range(&format!("caches.l1i.{key}"), n as u64, 1, MAX_CACHE_BUFFERS as u64)?;
        }
        check_geometry("caches.l1i", i.capacity_bytes, i.ways, MAX_TAG_CACHE_BYTES)?;
        in_range("caches.l1i.latency_cycles", i.latency_cycles as u64, 0, MAX_LATENCY_CYCLES as u64)?;
        for (k, l) in [("caches.l1d", &self.caches.l1d), ("caches.l2", &self.caches.l2), ("caches.l3", &self.caches.l3)] {
            for (key, n) in [("mshrs", l.mshrs), ("targets_per_mshr", l.targets_per_mshr), ("write_buffers", l.write_buffers)] {
                in_range(&format!("{k}.{key}"), n as u64, 1, MAX_CACHE_BUFFERS as u64)?;
            }
            // An L2 or L3 of no capacity is absent (L1-only machines).
            if k != "caches.l1d" && l.capacity_bytes == 0 {
                in_range(&format!("{k}.ways"), l.ways as u64, 1, MAX_WAYS as u64)?;
                in_range(&format!("{k}.latency_cycles"), l.latency_cycles as u64, 0, MAX_LATENCY_CYCLES as u64)?;
                continue;
            }
            check_geometry(k, l.capacity_bytes, l.ways, MAX_TAG_CACHE_BYTES)?;
            in_range(&format!("{k}.latency_cycles"), l.latency_cycles as u64, 0, MAX_LATENCY_CYCLES as u64)?;
        }
        Ok(())
    }

    /// The PCM's latencies, banks and queues.
    fn validate_nvm(&self) -> Result<(), Invalid> {
        let n = &self.nvm;
        positive_finite("nvm.read_latency_ns", n.read_latency_ns, MAX_LATENCY_NS)?;
        positive_finite("nvm.write_latency_ns", n.write_latency_ns, MAX_LATENCY_NS)?;
        positive_finite("nvm.burst_ns", n.burst_ns, MAX_LATENCY_NS)?;
        if n.burst_ns > n.write_latency_ns {
            return bad(
                "nvm.burst_ns",
                format!("must be at most nvm.write_latency_ns = {}, got {}", n.write_latency_ns, short_float(n.burst_ns)),
            );
        }
        in_range("nvm.banks", n.banks as u64, 1, MAX_BANKS as u64)?;
        in_range("nvm.write_queue_entries", n.write_queue_entries as u64, 1, MAX_ENTRIES as u64)?;
        in_range("nvm.read_queue_entries", n.read_queue_entries as u64, 1, MAX_ENTRIES as u64)?;
        Ok(())
    }

    /// The persist point and the persistency model.
    fn validate_persistence(&self) -> Result<(), Invalid> {
        let p = &self.persistence;
        in_range("persistence.wpq_entries", p.wpq_entries as u64, 1, MAX_ENTRIES as u64)?;
        match &p.point {
            PersistPoint::MemoryController => {}
            PersistPoint::PersistBuffer { entries, high_watermark_pct, low_watermark_pct, access_latency_cycles, .. } => {
                in_range("persistence.point.entries", *entries as u64, 1, MAX_ENTRIES as u64)?;
                in_range("persistence.point.high_watermark_pct", *high_watermark_pct as u64, 1, 100)?;
                if low_watermark_pct >= high_watermark_pct {
                    return bad(
                        "persistence.point.low_watermark_pct",
                        format!("must be below the high watermark {high_watermark_pct}, got {low_watermark_pct}"),
                    );
                }
                in_range("persistence.point.access_latency_cycles", *access_latency_cycles as u64, 0, MAX_LATENCY_CYCLES as u64)?;
            }
            PersistPoint::CacheHierarchy { cache } => {
                check_geometry("persistence.point.cache", cache.capacity_bytes, cache.ways, MAX_DATA_CACHE_BYTES)?
            }
        }
        // The numbers first, so a bad one is named by its own key whatever
        // the model.
        in_range("persistence.tep.buffer_lines", p.tep.buffer_lines as u64, 1, MAX_ENTRIES as u64)?;
        in_range("persistence.tep.early_flush_pct", p.tep.early_flush_pct as u64, 0, 100)?;
        match p.model {
            PersistencyModel::Tep => {
                // The TEP manager sits in the L1 cache controller and sends
                // lines to the MC (Secon 3.3, Fig. 4): a persist buffer or
                // battery-backed caches would be a second persist point.
                if p.point != PersistPoint::MemoryController {
                    return bad(
                        "persistence.model",
                        "`tep` orders the lines an L1 cache controller sends to the memory controller (Secon 3.3), so it needs persistence.point.type = \"memory-controller\"".into(),
                    );
                }
            }
            PersistencyModel::Strict | PersistencyModel::Epoch => {
                let d = TepConfig::default();
                for (key, differs) in [
                    ("persistence.tep.pair_order", p.tep.pair_order != d.pair_order),
                    ("persistence.tep.buffer_lines", p.tep.buffer_lines != d.buffer_lines),
                    ("persistence.tep.early_flush_pct", p.tep.early_flush_pct != d.early_flush_pct),
                ] {
                    if differs {
                        return bad(
                            key,
                            format!("applies only with persistence.model = \"tep\", got persistence.model = \"{}\"", p.model.name()),
                        );
                    }
                }
            }
        }
        Ok(())
    }
}

impl SimConfig {
    /// The scheme's own keys, then what its description and its needs ask
    /// of the rest of the configuration: one rule per kind of need, none
    /// per scheme (each scheme says what it needs in its own file,
    /// `SchemeParams::needs`).
    fn check_scheme(&self) -> Result<(), Invalid> {
        let params = self.scheme.params();
        params.validate().map_err(|e| (e.key.to_string(), e.message))?;
        let name = params.name();
        let w = params.work();
        let mismatch = |m: String| Err(("scheme.type".to_string(), m));
        // The persist point is the scheme's front end.
        let point = match &self.persistence.point {
            PersistPoint::MemoryController => Front::MemoryController,
            PersistPoint::PersistBuffer { .. } => Front::PersistBuffer,
            PersistPoint::CacheHierarchy { .. } => Front::CacheHierarchy,
        };
        if point != w.front {
            let t = w.front.point_type();
            return mismatch(format!("scheme `{name}` persists stores at the {t}; set persistence.point.type = \"{t}\""));
        }
        // A secure scheme may run with the security engine off (the same
        // mechanism, insecure, for comparison), but an insecure scheme has
        // no engine to turn on. The battery domain is left to the
        // configuration: taking a battery away is how the controls fail.
        if !w.secure && self.security.enabled {
            return mismatch(format!("scheme `{name}` has no security engine; set security.enabled = false"));
        }
        for need in params.needs() {
            match need {
                Need::Tree { tree, no_onchip_levels, why } => {
                    let ok = match (&self.tree, tree) {
                        (TreeConfig::Bmt { onchip_levels, .. }, TreeType::Bmt) => !no_onchip_levels || *onchip_levels == 0,
                        (TreeConfig::Sit { .. }, TreeType::Sit) => true,
                        _ => false,
                    };
                    if !ok {
                        let extra = if no_onchip_levels { " (no on-chip levels)" } else { "" };
                        return mismatch(format!("scheme `{name}` {why}; set tree.type = \"{}\"{extra}", tree.name()));
                    }
                }
                Need::UnifiedMetadataCache { why } => {
                    if !matches!(self.metadata_cache.organization, MetadataCacheOrganization::Unified { .. }) {
                        return mismatch(format!("scheme `{name}` {why}; set metadata_cache.organization.type = \"unified\""));
                    }
                }
                Need::MacInDataLine { why } => {
                    if self.security.mac_placement != MacPlacement::DataLine {
                        return mismatch(format!("scheme `{name}` {why}; set security.mac_placement = \"data-line\""));
                    }
                }
                Need::VolatileKey { why } => {
                    if !self.security.volatile_key {
                        return mismatch(format!("scheme `{name}` {why}; set security.volatile_key = true"));
                    }
                }
                Need::NodeLevel { key, level } => {
                    if let TreeConfig::Bmt { levels: Some(l), .. } = self.tree {
                        if level >= l {
                            return mismatch(format!("{key} ({level}) must name a node level of the tree (tree.levels = {l})"));
                        }
                    }
                }
                Need::RootsCoverOneKind => self.check_roots_cover_one_kind(name)?,
            }
        }
        Ok(())
    }

    /// Triad-NVM III-B2: each root register covers persistent or
    /// non-persistent data, not both (the ratios k:8-k at the root).
    fn check_roots_cover_one_kind(&self, name: &str) -> Result<(), Invalid> {
        let TreeConfig::Bmt { levels, .. } = self.tree else { return Ok(()) };
        let layout = Layout::new(self.memory.capacity_bytes, CounterFormat::Split, self.tree.arity(), levels)
            .with_persistent_regions(self.memory.persistent_regions.iter().map(|p| (p.start_bytes, p.size_bytes)));
        let top = layout.top_level();
        let Some(i) = (0..layout.level_nodes[top as usize]).find(|&i| layout.cover(top, i) == Cover::Mixed) else { return Ok(()) };
        let (lo, hi) = layout.blocks_under(top, i);
        bad(
            "memory.persistent_regions",
            format!(
                "scheme `{name}`: the root register of top node {i} covers [{:#x}, {:#x}), persistent and non-persistent data both; \
                 Triad-NVM III-B2 needs each to cover one kind: align the regions to {} B, or keep more levels on chip (a lower tree.levels, \
                 with tree.onchip_levels for the levels above)",
                lo * 64,
                hi * 64,
                (hi - lo) * 64
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::load_str;

    fn err(text: &str) -> String {
        load_str(text, "x.toml", &[]).unwrap_err().to_string()
    }

    #[test]
    fn arity_not_power_of_two() {
        let e = err("[tree]\ntype='bmt'\narity=6\n");
        assert!(e.contains("tree.arity") && e.contains("power of two"), "{e}");
    }

    #[test]
    fn capacity_not_multiple_of_page() {
        let e = err("[memory]\ncapacity_bytes=10000\n");
        assert!(e.contains("memory.capacity_bytes") && e.contains("multiple"), "{e}");
    }

    #[test]
    fn zero_sized_cache() {
        let e = err("[metadata_cache.organization]\ntype='unified'\n[metadata_cache.organization.unified]\ncapacity_bytes=0\n");
        assert!(e.contains("metadata_cache.organization.unified.capacity_bytes"), "{e}");
        let e = err("[persistence.point]\ntype='persist-buffer'\nentries=0\n");
        assert!(e.contains("persistence.point.entries"), "{e}");
    }

    #[test]
    fn a_data_caches_buffers_name_the_key() {
        let e = err("[caches]\nl2={mshrs=0}\n");
        assert!(e.contains("caches.l2.mshrs") && e.contains("between 1 and"), "{e}");
        let e = err("[caches.l1d]\ntargets_per_mshr=0\n");
        assert!(e.contains("caches.l1d.targets_per_mshr"), "{e}");
        let e = err("[caches.l3]\nwrite_buffers=100000\n");
        assert!(e.contains("caches.l3.write_buffers"), "{e}");
        let e = err("[caches]\nmshrs='sometimes'\n");
        assert!(e.contains("caches.mshrs") && e.contains("unbounded"), "{e}");
        // An inline level keeps the hierarchy's defaults for what it leaves out.
        let c = super::super::load_str("[caches]\nl2={capacity_bytes=262144}\n", "x.toml", &[]).unwrap();
        assert_eq!((c.caches.l2.mshrs, c.caches.l2.targets_per_mshr, c.caches.l1d.mshrs), (20, 12, 4));
    }

    #[test]
    fn the_front_end_and_the_instruction_cache_name_the_key() {
        for (toml, key) in [
            ("[core.ooo]\nfetch_queue_entries=0\n", "core.ooo.fetch_queue_entries"),
            ("[core.ooo]\nfetch_buffer_bytes=48\n", "core.ooo.fetch_buffer_bytes"),
            ("[core.ooo]\ndispatch_width=0\n", "core.ooo.dispatch_width"),
            ("[core.ooo]\niq_entries=0\n", "core.ooo.iq_entries"),
            ("[caches]\nl1i={mshrs=0}\n", "caches.l1i.mshrs"),
            ("[caches]\nl1i={capacity_bytes=0}\n", "caches.l1i"),
        ] {
            let e = err(toml);
            assert!(e.contains(key), "{toml}: {e}");
        }
        let e = err("[core.ooo]\nfront_end='none'\n");
        assert!(e.contains("front_end") && e.contains("constant"), "{e}");
        let e = err("[core.ooo]\nmicro_ops='risc'\n");
        assert!(e.contains("micro_ops") && e.contains("one-per-instruction"), "{e}");
    }

    #[test]
    fn persistency_model_combinations_name_the_key() {
        let e = err("[persistence]\nmodel='tep'\npoint={type='persist-buffer'}\n");
        assert!(e.contains("persistence.model") && e.contains("memory-controller"), "{e}");
        let e = err("[persistence]\nmodel='epoch'\ntep={pair_order=false}\n");
        assert!(e.contains("persistence.tep.pair_order") && e.contains("\"epoch\""), "{e}");
        let e = err("[persistence]\nmodel='tep'\ntep={buffer_lines=0}\n");
        assert!(e.contains("persistence.tep.buffer_lines"), "{e}");
        let e = err("[persistence]\nmodel='tep'\ntep={early_flush_pct=101}\n");
        assert!(e.contains("persistence.tep.early_flush_pct"), "{e}");
        let e = err("[persistence]\nmodel='relaxed'\n");
        assert!(e.contains("persistence.model"), "{e}");
        let e = err("[persistence]\nmodel='tep'\ntep={pair_ordr=false}\n");
        assert!(e.contains("pair_ordr"), "{e}");
    }

    #[test]
    fn bad_enum_value_names_key() {
        let e = err("[scheme]\ntype='secpb'\nvariant='sometimes'\n");
        assert!(e.contains("scheme.variant"), "{e}");
        // A scheme on a mechanism it cannot use names what to set.
        let e = err("[scheme]\ntype='secpb'\nvariant='cm'\n");
        assert!(e.contains("scheme.type") && e.contains("persistence.point.type = \"persist-buffer\""), "{e}");
    }
}
