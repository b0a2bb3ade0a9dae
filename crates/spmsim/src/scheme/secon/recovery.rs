//! Secon's recovery (Secon 3.2): the marks in first-level CMACs and the
//! counter track say which counters NVM holds ahead of the root register;
//! the tree rebuilt over them rolled back must match the register. With
//! counter-log colocation (3.4.1) the log lines carry newer minors.
//!
//! ```text
//!  level 1 scanned -> CMAC spare bits = unit id -> unit's marked minors - 1
//!  log pages' data MACs -> newer minors
//!  rebuild over the overlay == root register ? -> roll forward (or back)
//! ```

use super::{bmt, SeconRuntime};
use crate::engine::counter::{bmt_slots, SplitCounterBlock};
use crate::engine::crypto::MAC_BITS;
use crate::engine::hooks::RecoveryReport;
use crate::engine::rules::Rules;
use crate::engine::store::MetaStore;
use crate::engine::tree::IntegrityTree;
use super::SeconRecovery;

impl SeconRuntime {
    /// Secon 3.2's recovery: every first-level CMAC with a unit id names
    /// counters ahead of the root; rolled back, the tree rebuilt over them
    /// must match the root register; then they are rolled forward again
    /// (or left back, as the paper writes it).
    pub(super) fn recover_counters(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        let tree = &r.tree;
        let track = std::mem::take(&mut super::nv(st).track);
        let layout = st.layout.clone();
        // Secon 3.2: traverse every first-level block of the BMT (a node
        // never written reads as the default block, with no spare bits).
        st.nvm.reads.tree += layout.level_nodes[1];
        let from_log = self.counters_from_log(tree, st);
        let counter_at = |st: &MetaStore, c: u64| {
            from_log.iter().find(|(p, _)| *p == c).map(|(_, b)| *b).or_else(|| st.nvm.image.get(layout.meta_addr(0, c)).copied())
        };
        let mut overlay: Vec<(u64, [u8; 64])> = Vec::new();
        let mut claimed = vec![false; track.units.len()];
        let (first, end) = layout.level_range(1);
        for a in st.nvm.image.addrs_in(first, end) {
            let node = a - first;
            let line = *st.nvm.image.get(a).expect("listed");
            for (slot, entry) in bmt_slots(&line).into_iter().enumerate() {
                let id = entry >> MAC_BITS;
                if id == 0 {
                    continue;
                }
                let c = node * layout.arity + slot as u64;
                let unit = track.units.get(id as usize - 1).copied().flatten().filter(|u| u.counter_block == c);
                let Some(u) = unit else {
                    // Spare bits no unit vouches for: tampered, or the
                    // bitmap was lost.
                    rep.add_count("counter_track_mismatches", 1);
                    continue;
                };
                claimed[id as usize - 1] = true;
                st.nvm.reads.counter += 1;
                let mut b = counter_at(st, c).unwrap_or_else(|| tree.default_block(0));
                let mut ctr = SplitCounterBlock::decode(&b);
                for i in 0..64 {
                    if u.minors >> i & 1 == 1 {
                        if ctr.minors[i] == 0 {
                            rep.add_count("counter_track_mismatches", 1);
                        }
                        ctr.minors[i] = ctr.minors[i].wrapping_sub(1) & 0x7f;
                    }
                }
                b = ctr.encode();
                overlay.push((c, b));
            }
        }
        // A unit whose CMAC shows no mark: its spare bits were cleared.
        rep.add_count("counter_track_mismatches", track.units.iter().zip(&claimed).filter(|(u, c)| u.is_some() && !**c).count() as u64);
        rep.add_count("counters_rolled_back", overlay.len() as u64);
        // The log's newer counters the roll-back did not replace.
        let rolled: Vec<u64> = overlay.iter().map(|(c, _)| *c).collect();
        let from_log_only: Vec<(u64, [u8; 64])> = from_log.iter().filter(|(p, _)| !rolled.contains(p)).copied().collect();
        overlay.extend(from_log_only.iter().copied());
        let Some(out) = bmt(tree).rebuild_over(st, &overlay) else { return };
        let matched = out.mismatched_roots.is_empty();
        rep.tree_rebuilt = matched;
        rep.rebuild = Some(out);
        if !matched || rep.count("counter_track_mismatches") > 0 {
            return;
        }
        // The counters the log vouched for are now checked: NVM gets them.
        for &(c, b) in &from_log_only {
            st.nvm.write(&layout, layout.meta_addr(0, c), b);
        }
        for &c in &rolled {
            let (_, b) = *overlay.iter().find(|(x, _)| *x == c).expect("rolled back");
            match self.p.recovery {
                SeconRecovery::RollBack => st.nvm.write(&layout, layout.meta_addr(0, c), b),
                SeconRecovery::RollForward => {
                    let forward = counter_at(st, c).unwrap_or_else(|| tree.default_block(0));
                    if bmt(tree).counter_updated(r, st, c, forward).is_err() {
                        rep.add_count("counter_track_mismatches", 1);
                    }
                }
            }
        }
    }

    /// The log pages' counter blocks with the newer minors their log lines
    /// carry (Secon 3.4.1: "Recovery reads counters back from the log"):
    /// each page's counter block and MACs are read, counted.
    fn counters_from_log(&self, tree: &IntegrityTree, st: &mut MetaStore) -> Vec<(u64, [u8; 64])> {
        let mut out = Vec::new();
        if !self.p.colocate_counters {
            return out;
        }
        let per = st.layout.blocks_per_counter_block();
        let regions = super::nv_ref(st).map(|n| n.log_regions.clone()).unwrap_or_default();
        for (start, end) in regions {
            let first = (start / 64).div_ceil(per);
            let last = (end / 64) / per;
            if first >= last {
                continue;
            }
            // Every page's counter block and MACs are read (with the MACs
            // in the data lines' ECC bits, the log's lines themselves);
            // only a page with a MAC ever written can hold a newer minor.
            let (first_line, _) = st.layout.mac_line_of(first * per);
            let (end_line, _) = st.layout.mac_line_of(last * per - 1);
            st.nvm.reads.counter += last - first;
            match st.mac_in_data_line {
                true => st.nvm.reads.data += (last - first) * per,
                false => st.nvm.reads.mac += end_line + 1 - first_line,
            }
            let mut pages: Vec<u64> = Vec::new();
            for la in st.nvm.image.addrs_in(first_line, end_line + 1) {
                let page = (la - st.layout.mac_base) * crate::engine::layout::MACS_PER_LINE / per;
                if pages.last() != Some(&page) {
                    pages.push(page);
                }
            }
            for page in pages {
                let ca = st.layout.meta_addr(0, page);
                let stored = st.nvm.image.get(ca).copied().unwrap_or_else(|| tree.default_block(0));
                let mut ctr = SplitCounterBlock::decode(&stored);
                // The page's MAC lines, each read once; a line never
                // written holds no minor.
                let mut line: (u64, Option<[u8; 64]>) = (u64::MAX, None);
                for j in 0..per {
                    let (la, slot) = st.layout.mac_line_of(page * per + j);
                    if line.0 != la {
                        line = (la, st.nvm.image.get(la).copied());
                    }
                    let Some(bytes) = &line.1 else { continue };
                    let mctr = (u64::from_le_bytes(bytes[slot * 8..slot * 8 + 8].try_into().unwrap()) >> MAC_BITS) as u8 & 0x7f;
                    if mctr > ctr.minors[j as usize] {
                        ctr.minors[j as usize] = mctr;
                    }
                }
                let newer = ctr.encode();
                if newer != stored {
                    out.push((page, newer));
                }
            }
        }
        out
    }
}
