//! Attacks on what Secon's recovery trusts from NVM (Secon 3.2, 3.4.1):
//! the marks in first-level CMACs, the marked counter blocks, and the
//! minors log lines carry in their MACs' spare bits.

use super::SeconRuntime;
use crate::engine::counter::{bmt_set_slot, bmt_slots, SplitCounterBlock};
use crate::engine::crypto::{MAC_BITS, MAC_MASK};
use crate::engine::hooks::RecoveryAttack;
use crate::engine::nvm::NvmImage;
use crate::engine::rules::Rules;
use crate::engine::store::MetaStore;

/// The attacks, in the order the harness reports them.
pub(super) const NAMES: &[&str] = &[
    "secon-mark-clean-cmac",
    "secon-clear-marked-cmac",
    "secon-tamper-marked-counter",
    "secon-replay-marked-counter",
    "secon-tamper-log-mctr",
    "secon-replay-log-region",
];

impl SeconRuntime {
    /// Attacks on what recovery reads from the log (Secon 3.4.1): a log
    /// line's minor raised in its MAC's spare bits, and the whole log
    /// region (lines, MAC lines, counter blocks) replayed from `earlier`.
    fn log_attacks(&self, st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        let layout = &st.layout;
        let img = &st.nvm.image;
        let mut out = Vec::new();
        let Some(nv) = super::nv_ref(st).filter(|n| self.p.colocate_counters && !n.log_regions.is_empty()) else { return out };
        let in_log = |b: u64| b < layout.data_blocks && nv.in_log_region(b);
        let logged: Vec<u64> = img.sorted_addrs().into_iter().filter(|&b| in_log(b)).collect();
        if let Some(&b) = logged.last() {
            let (la, slot) = layout.mac_line_of(b);
            let mut line = *img.get(la).unwrap_or(&[0; 64]);
            let v = u64::from_le_bytes(line[slot * 8..slot * 8 + 8].try_into().unwrap());
            let mctr = (v >> MAC_BITS) & 0x7f;
            let raised = ((mctr + 3) & 0x7f).max(1);
            line[slot * 8..slot * 8 + 8].copy_from_slice(&((v & MAC_MASK) | raised << MAC_BITS).to_le_bytes());
            let mut i = img.clone();
            i.put(la, line);
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-tamper-log-mctr",
                target: format!("the minor carried by log line {:#x} set from {mctr} to {raised}", b * 64),
                image: i,
            });
        }
        // Every record of the log pages as the earlier image had them.
        let per = layout.blocks_per_counter_block();
        let of_log = |a: u64| a < layout.data_blocks && in_log(a);
        let pages: std::collections::BTreeSet<u64> = logged.iter().map(|b| b / per).collect();
        let mut i = img.clone();
        let mut changed = false;
        let mut replace = |i: &mut NvmImage, a: u64| {
            let old = earlier.get(a).copied();
            if old != i.get(a).copied() {
                changed = true;
                match old {
                    Some(b) => i.put(a, b),
                    None => i.retain(|x| x != a),
                }
            }
        };
        for a in img.sorted_addrs().into_iter().chain(earlier.sorted_addrs()) {
            if of_log(a) {
                replace(&mut i, a);
            }
        }
        for &p in &pages {
            replace(&mut i, layout.meta_addr(0, p));
            for j in (0..per).step_by(8) {
                replace(&mut i, layout.mac_line_of(p * per + j).0);
            }
        }
        if changed {
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-replay-log-region",
                target: format!("the log region's {} pages (lines, MAC lines, counter blocks) replayed from an earlier image", pages.len()),
                image: i,
            });
        }
        out
    }

    /// Tampering with what Secon's recovery trusts from NVM (Secon 3.2):
    /// the marks in first-level CMACs and the marked counter blocks.
    pub(super) fn attacks(&self, r: &Rules, st: &MetaStore, earlier: &NvmImage) -> Vec<RecoveryAttack> {
        let layout = &st.layout;
        let img = &st.nvm.image;
        let mut out = self.log_attacks(st, earlier);
        let entries: Vec<(u64, usize, u64)> = img
            .sorted_addrs()
            .into_iter()
            .filter(|&a| matches!(layout.meta_pos(a), Some((1, _))))
            .flat_map(|a| bmt_slots(img.get(a).expect("listed")).into_iter().enumerate().map(move |(s, e)| (a, s, e)))
            .collect();
        // A marked CMAC whose counter block NVM alone holds: a log page's
        // minors are also carried by its log lines (the log attacks above
        // aim at those), so a stale copy of its counter block is repaired
        // from them, not trusted.
        let outside_log = |a: u64, slot: usize| {
            let (_, node) = layout.meta_pos(a).expect("a tree node");
            !self.colocated(st, node * layout.arity + slot as u64)
        };
        let Some(&(ma, ms, me)) = entries.iter().find(|(a, s, e)| e >> MAC_BITS != 0 && outside_log(*a, *s)) else { return out };
        let (_, node) = layout.meta_pos(ma).expect("a tree node");
        let marked = node * layout.arity + ms as u64;
        let set = |a: u64, slot: usize, e: u64| {
            let mut i = img.clone();
            let mut line = *i.get(a).unwrap_or(&r.tree.default_block(1));
            bmt_set_slot(&mut line, slot, e);
            i.put(a, line);
            i
        };
        // A clean CMAC beside the marked one, given its unit's id.
        if let Some(cs) = (0..layout.arity as usize).find(|&s| s != ms && bmt_slots(img.get(ma).unwrap())[s] >> MAC_BITS == 0) {
            let e = bmt_slots(img.get(ma).unwrap())[cs] | (me >> MAC_BITS) << MAC_BITS;
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-mark-clean-cmac",
                target: format!(
                    "spare bits of the clean CMAC of counter block {:#x} set to unit {}",
                    node * layout.arity + cs as u64,
                    me >> MAC_BITS
                ),
                image: set(ma, cs, e),
            });
        }
        out.push(RecoveryAttack {
            after_recovery: Vec::new(),
            focus: None,
            name: "secon-clear-marked-cmac",
            target: format!("spare bits of the marked CMAC of counter block {marked:#x} cleared"),
            image: set(ma, ms, me & MAC_MASK),
        });
        let ca = layout.meta_addr(0, marked);
        if let Some(cb) = img.get(ca) {
            let mut i = img.clone();
            let mut b = *cb;
            b[12] ^= 0x04;
            i.put(ca, b);
            out.push(RecoveryAttack {
                after_recovery: Vec::new(),
                focus: None,
                name: "secon-tamper-marked-counter",
                target: format!("a minor of marked counter block {ca:#x}"),
                image: i,
            });
            // The block as it was before its pending increments: what an
            // attacker replaying the last persisted copy would write.
            let unit = (me >> MAC_BITS) as usize - 1;
            if let Some(u) = super::nv_ref(st).and_then(|n| n.track.units.get(unit).copied().flatten()) {
                let mut c = SplitCounterBlock::decode(cb);
                for m in 0..64 {
                    if u.minors >> m & 1 == 1 {
                        c.minors[m] = c.minors[m].saturating_sub(1);
                    }
                }
                let mut i = img.clone();
                i.put(ca, c.encode());
                out.push(RecoveryAttack {
                    after_recovery: Vec::new(),
                    focus: None,
                    name: "secon-replay-marked-counter",
                    target: format!("marked counter block {ca:#x} replayed to its value before the pending increments"),
                    image: i,
                });
            }
        }
        out
    }
}
