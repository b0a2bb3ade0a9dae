//! Value checks that serde cannot express. Each error names its key path.

use super::*;

type Invalid = (String, String);

fn bad(key: &str, msg: String) -> Result<(), Invalid> {
    Err((key.to_string(), msg))
}

fn check_geometry(key: &str, g: &CacheGeometry) -> Result<(), Invalid> {
    if g.capacity_bytes == 0 {
        return bad(&format!("{key}.capacity_bytes"), "a cache must hold at least one 64 B line, got 0".into());
    }
    if g.capacity_bytes % 64 != 0 {
        return bad(&format!("{key}.capacity_bytes"), format!("{} is not a multiple of the 64 B line", g.capacity_bytes));
    }
    if g.ways == 0 {
        return bad(&format!("{key}.ways"), "must be at least 1".into());
    }
    if (g.capacity_bytes / 64) % g.ways as u64 != 0 {
        return bad(&format!("{key}.ways"), format!("{} lines do not divide into {} ways", g.capacity_bytes / 64, g.ways));
    }
    Ok(())
}

impl SimConfig {
    pub fn validate(&self) -> Result<(), Invalid> {
        let m = &self.memory;
        if m.page_bytes != 4096 {
            return bad("memory.page_bytes", format!("split counters cover 64 blocks of 64 B, so the page must be 4096 B, got {}", m.page_bytes));
        }
        if m.capacity_bytes == 0 || m.capacity_bytes % m.page_bytes != 0 {
            return bad("memory.capacity_bytes", format!("{} is not a positive multiple of the page size {}", m.capacity_bytes, m.page_bytes));
        }
        if m.capacity_bytes > 1 << 50 {
            return bad("memory.capacity_bytes", format!("{} exceeds the 2^50 B the pad seed encodes", m.capacity_bytes));
        }
        let arity = self.tree.arity();
        if arity < 2 || !arity.is_power_of_two() {
            return bad("tree.arity", format!("must be a power of two >= 2, got {arity}"));
        }
        if arity != 8 {
            return bad("tree.arity", format!("64 B nodes hold 8 hashes or 8 counters, so only 8 is supported, got {arity}"));
        }
        if let Some(l) = self.tree.levels() {
            if !(1..=32).contains(&l) {
                return bad("tree.levels", format!("must be between 1 and 32, got {l}"));
            }
        }
        match &self.metadata_cache.organization {
            MetadataCacheOrganization::Separate { counter, mac, tree } => {
                check_geometry("metadata_cache.organization.counter", counter)?;
                check_geometry("metadata_cache.organization.mac", mac)?;
                check_geometry("metadata_cache.organization.tree", tree)?;
            }
            MetadataCacheOrganization::Unified { unified } => check_geometry("metadata_cache.organization.unified", unified)?,
        }
        let c = &self.core;
        if !(c.frequency_ghz > 0.0 && c.frequency_ghz < 100.0) {
            return bad("core.frequency_ghz", format!("must be in (0, 100), got {}", c.frequency_ghz));
        }
        for (k, v) in [("core.issue_width", c.issue_width), ("core.rob_entries", c.rob_entries), ("core.store_buffer_entries", c.store_buffer_entries)] {
            if v == 0 {
                return bad(k, "must be at least 1".into());
            }
        }
        for (k, l) in [("caches.l1d", &self.caches.l1d), ("caches.l2", &self.caches.l2), ("caches.l3", &self.caches.l3)] {
            check_geometry(k, &CacheGeometry { capacity_bytes: l.capacity_bytes, ways: l.ways })?;
        }
        if self.security.hash_pipeline_interval_cycles == 0 {
            return bad("security.hash_pipeline_interval_cycles", "must be at least 1".into());
        }
        let n = &self.nvm;
        if !(n.read_latency_ns > 0.0 && n.write_latency_ns > 0.0) {
            return bad("nvm.read_latency_ns", "NVM latencies must be positive".into());
        }
        if !(n.burst_ns > 0.0 && n.burst_ns <= n.write_latency_ns) {
            return bad("nvm.burst_ns", format!("must be positive and at most nvm.write_latency_ns = {}", n.write_latency_ns));
        }
        for (k, v) in [("nvm.banks", n.banks), ("nvm.write_queue_entries", n.write_queue_entries), ("nvm.read_queue_entries", n.read_queue_entries)] {
            if v == 0 {
                return bad(k, "must be at least 1".into());
            }
        }
        let p = &self.persistence;
        if p.wpq_entries == 0 {
            return bad("persistence.wpq_entries", "must be at least 1".into());
        }
        match &p.point {
            PersistPoint::MemoryController => {}
            PersistPoint::PersistBuffer { entries, high_watermark_pct, low_watermark_pct, .. } => {
                if *entries == 0 {
                    return bad("persistence.point.entries", "a persist buffer needs at least one entry".into());
                }
                if *high_watermark_pct == 0 || *high_watermark_pct > 100 {
                    return bad("persistence.point.high_watermark_pct", format!("must be in 1..=100, got {high_watermark_pct}"));
                }
                if low_watermark_pct >= high_watermark_pct {
                    return bad("persistence.point.low_watermark_pct", format!("must be below the high watermark {high_watermark_pct}, got {low_watermark_pct}"));
                }
            }
            PersistPoint::CacheHierarchy { cache } => check_geometry(
                "persistence.point.cache",
                &CacheGeometry { capacity_bytes: cache.capacity_bytes, ways: cache.ways },
            )?,
        }
        Ok(())
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
    fn bad_enum_value_names_key() {
        let e = err("[metadata_cache]\nwrite_policy='sometimes'\n");
        assert!(e.contains("metadata_cache.write_policy"), "{e}");
    }
}
