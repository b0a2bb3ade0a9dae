//! Osiris (Ye, Hughes, Awad, MICRO 2018): encryption counters written back
//! lazily, recovered after a crash by trying candidates against each data
//! block's MAC; the baseline counter recovery of the multiset-hash scheme
//! (Kubo et al. 2.6, 4.5).
//!
//! ```text
//!  write: counter updated in the cache (dirty), the BMT eagerly to the
//!         root register; the data's MAC written with the data (write-through)
//!         stop-loss: a write whose minor counter reaches a multiple of N
//!         writes its counter block through, so NVM's minor is at most
//!         N - 1 behind the true one
//!  crash: the dirty counters and tree nodes are lost (ADR drains the WPQ)
//!  recover: for each written data block, counter = NVM's + k, k = 0..N-1,
//!         the first whose MAC matches the stored one (real MACs, counted);
//!         then the tree is rebuilt over the recovered counters and checked
//!         against the root register
//! ```
//! Osiris checks its candidates with the ECC bits beside the data; spmsim
//! has no ECC model and uses the data MAC, which the paper also allows (its
//! "MAC-based" variant). `stop_loss = 0` is the control
//! `osiris-no-stop-loss`: counters reach NVM only when evicted, so a crash
//! can lose more updates than the trials cover.

use super::params::{in_range, Completion, MetadataPolicy, Need, ParamError, SchemeParams, SchemeWork, TreeType, WritePolicy};
use super::{Registered, Role};
use crate::engine::counter::{CounterFormat, SplitCounterBlock};
use crate::engine::crypto::{MAC_BITS, MAC_MASK};
use crate::engine::hooks::{RecoveryReport, Scheme};
use crate::engine::rules::Rules;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::config::SimConfig;
use serde::{Deserialize, Serialize};

/// Osiris (Ye et al., MICRO 2018): counters written back, with a
/// stop-loss; recovery finds each lost minor by MAC trials.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Osiris {
    /// N: a counter block is written through when a write takes a minor
    /// counter of it to a multiple of N (Osiris's stop-loss); 0: never.
    #[serde(default = "default_stop_loss")]
    pub stop_loss: u32,
}

pub(super) fn default_stop_loss() -> u32 {
    4
}

impl Default for Osiris {
    fn default() -> Self {
        Osiris { stop_loss: default_stop_loss() }
    }
}

pub(super) fn stop_loss_in_range(n: u32) -> Result<(), ParamError> {
    // 0: no stop-loss (the control); at most the 7-bit minor's range.
    in_range("scheme.stop_loss", n as u64, 0, crate::engine::counter::MINOR_MAX as u64)
}

impl SchemeParams for Osiris {
    fn name(&self) -> &'static str {
        "osiris"
    }
    /// Counters and tree nodes written back, MACs with their data; the
    /// tree is rebuilt at recovery from the recovered counters.
    fn work(&self) -> SchemeWork {
        let metadata = MetadataPolicy { mac: WritePolicy::WriteThrough, ..MetadataPolicy::uniform(WritePolicy::WriteBack) };
        // Complete with the data and its MAC (the ECC bits Osiris checks):
        // the counters and the tree are recovered, not persisted.
        SchemeWork::at_memory_controller(metadata, false, true).completing(Completion::Tuple)
    }
    fn validate(&self) -> Result<(), ParamError> {
        stop_loss_in_range(self.stop_loss)
    }
    fn needs(&self) -> Vec<Need> {
        vec![Need::Tree { tree: TreeType::Bmt, no_onchip_levels: false, why: "keeps split counters (Osiris's setting)" }]
    }
    /// Without a stop-loss a crash loses a counter only once a block is
    /// written more often than the trials search.
    fn gap_needs_trigger(&self) -> bool {
        self.stop_loss == 0
    }
}

impl Registered for Osiris {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(OsirisRuntime::new(*self))
    }
}

/// Osiris's runtime: its parameters; it keeps nothing of its own.
#[derive(Clone, Copy, Debug)]
pub struct OsirisRuntime {
    p: Osiris,
}

/// Candidates a recovery tries per block when there is no stop-loss: a
/// bound on the search, not a parameter of the scheme (it finds what it
/// can within the minor counter's range).
const TRIALS_WITHOUT_STOP_LOSS: u64 = 4;

impl OsirisRuntime {
    pub fn new(p: Osiris) -> Self {
        OsirisRuntime { p }
    }

    /// Candidates tried per block.
    pub fn trials(&self) -> u64 {
        match self.p.stop_loss {
            0 => TRIALS_WITHOUT_STOP_LOSS,
            n => n as u64,
        }
    }
}

impl Scheme for OsirisRuntime {
    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        r.counter_updated(st, index, bytes)?;
        // The stop-loss (Osiris 4.2): a minor that reached a multiple of N
        // since NVM's copy was written sends the block through now. A page
        // re-encryption (minors back to 0) always does.
        let n = self.p.stop_loss as u64;
        if n == 0 {
            return Ok(());
        }
        let addr = st.layout.meta_addr(0, index);
        if stop_loss_due(st, addr, &bytes, n) {
            st.write_line_through(addr);
        }
        Ok(())
    }

    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        if !r.secure {
            return;
        }
        let Some(overlay) = recover_counters(st, self.trials(), rep) else { return };
        let Some(out) = r.tree.as_bmt().and_then(|bmt| bmt.rebuild_over(st, &overlay)) else { return };
        rep.tree_rebuilt = out.mismatched_roots.is_empty();
        rep.rebuild = Some(out);
        if rep.tree_rebuilt {
            let layout = st.layout.clone();
            for (c, b) in overlay {
                st.nvm.write(&layout, layout.meta_addr(0, c), b);
            }
        }
    }
}

/// Osiris's stop-loss rule (4.2), shared by every scheme that recovers
/// counters by trials: the counter block at `addr`, now `bytes`, must go to
/// NVM when one of its minors crossed a multiple of `n` since the copy NVM
/// holds, or its major moved on (a page re-encryption). NVM then never
/// lags a minor by `n` or more, the trials' reach.
pub(super) fn stop_loss_due(st: &MetaStore, addr: u64, bytes: &[u8; 64], n: u64) -> bool {
    let nvm = st.nvm.peek(addr).map(|b| SplitCounterBlock::decode(&b));
    let now = SplitCounterBlock::decode(bytes);
    match nvm {
        Some(old) if old.major == now.major => old.minors.iter().zip(&now.minors).any(|(&o, &m)| m != o && (m as u64 / n) > (o as u64 / n)),
        _ => now.major > 0 || now.minors.iter().any(|&m| m as u64 >= n),
    }
}

/// Osiris's trials for one data block in NVM: the first minor from
/// `from` (at most `trials` of them, within the minor's range) under which
/// the block's ciphertext matches its stored MAC. Every read and MAC is
/// counted.
pub(super) fn trial_minor(st: &mut MetaStore, block: u64, major: u64, from: u64, trials: u64) -> Option<u64> {
    let layout = &st.layout;
    st.nvm.reads.data += 1;
    let ct = st.nvm.image.get(block).copied().unwrap_or([0; 64]);
    let (line, mslot) = layout.mac_line_of(block);
    st.nvm.reads.mac += 1;
    let stored = st.nvm.image.get(line).map_or(0, |l| u64::from_le_bytes(l[mslot * 8..mslot * 8 + 8].try_into().unwrap()));
    let spare = (stored >> MAC_BITS) as u16;
    (0..trials).map(|k| from + k).take_while(|&m| m <= crate::engine::counter::MINOR_MAX as u64).find(|&m| {
        // (0, 0) is "never written": no MAC vouches for it.
        (major, m) != (0, 0) && st.crypto.data_mac(&ct, block, major, m, spare) == stored & MAC_MASK
    })
}

/// Osiris's trials over every data block NVM holds: each counter block
/// with the minors that make its blocks' MACs match, for those that
/// differ from NVM's. None (and the report's `scheme_failure`) when a
/// block matches no candidate.
fn recover_counters(st: &mut MetaStore, trials: u64, rep: &mut RecoveryReport) -> Option<Vec<(u64, [u8; 64])>> {
    let layout = st.layout.clone();
    debug_assert_eq!(layout.counter_format, CounterFormat::Split);
    let per = layout.blocks_per_counter_block();
    let data_end = layout.level_nodes[0] * per;
    let mut overlay: Vec<(u64, [u8; 64])> = Vec::new();
    let mut unrecovered: Vec<u64> = Vec::new();
    // Osiris 4.3: recovery cannot know which blocks were written, so it
    // reads every counter block once and every data block with its MAC.
    // The simulator visits the stored blocks (the rest are the
    // never-written block, which no trial can match) and counts the others.
    let blocks = st.nvm.image.addrs_in(0, data_end);
    let stored = blocks.len() as u64;
    st.nvm.reads.counter += layout.level_nodes[0];
    st.nvm.reads.data += layout.data_blocks.min(data_end) - stored;
    st.nvm.reads.mac += layout.data_blocks.min(data_end) - stored;
    for block in blocks {
        let (c, slot) = layout.counter_of(block);
        let caddr = layout.meta_addr(0, c);
        let pos = overlay.iter().position(|(x, _)| *x == c);
        let base = match pos {
            Some(i) => overlay[i].1,
            None => st.nvm.image.get(caddr).copied().unwrap_or([0; 64]),
        };
        let ctr = SplitCounterBlock::decode(&base);
        let from = ctr.minors[slot] as u64;
        match trial_minor(st, block, ctr.major, from, trials) {
            Some(m) if m == from => {}
            Some(m) => {
                let mut b = base;
                SplitCounterBlock::set_minor(&mut b, slot, m as u8);
                match pos {
                    Some(i) => overlay[i].1 = b,
                    None => overlay.push((c, b)),
                }
            }
            None => unrecovered.push(block),
        }
    }
    rep.add_count("counters_rolled_back", overlay.len() as u64);
    if let Some(&b) = unrecovered.first() {
        rep.scheme_failure = Some(format!(
            "Osiris: {} data block(s) match no counter candidate within {trials} trials (first: block {b:#x}); their counters were lost beyond the stop-loss",
            unrecovered.len()
        ));
        return None;
    }
    Some(overlay)
}

#[cfg(test)]
mod tests {
    use crate::config::load_preset;
    use crate::machine::System;
    use crate::workload::Event;

    fn machine(preset: &str) -> System {
        System::new(&load_preset(preset, &["memory.capacity_bytes=67108864".into()]).unwrap(), 3)
    }

    #[test]
    fn lost_counters_within_the_stop_loss_are_found_by_trials() {
        let mut s = machine("osiris");
        // Block 5 written 6 times: its counter block went through at minor
        // 4 (N = 4), so NVM is two updates behind when power fails.
        for v in 1..=6u64 {
            s.apply(&Event::store(5 * 64, 8, v, false)).unwrap();
        }
        s.power_fail();
        let r = s.recover();
        assert!(r.ok(), "{r:?}");
        assert_eq!(r.count("counters_rolled_back"), 1, "one counter block corrected");
        assert!(r.crypto.macs >= 3, "the trials are real MACs: {:?}", r.crypto);
        assert_eq!(s.mc.read(5).unwrap()[..8], 6u64.to_le_bytes());
    }

    #[test]
    fn without_a_stop_loss_a_counter_lost_beyond_the_trials_fails_recovery() {
        let mut s = machine("osiris-no-stop-loss");
        for v in 1..=9u64 {
            s.apply(&Event::store(5 * 64, 8, v, false)).unwrap();
        }
        s.power_fail();
        let r = s.recover();
        assert!(!r.ok());
        assert!(r.scheme_failure.as_deref().is_some_and(|f| f.contains("Osiris")), "{r:?}");
    }
}
