//! The crash oracle's account of non-persistent memory (Triad-NVM III-B):
//! what a crash may lose there, said per region instead of ignored, and
//! the one thing it must never do, reuse a one-time pad (II-A4).
//!
//! ```text
//!  before the crash: the blocks volatile stores wrote, with their values;
//!                    the ledger of pads used so far (taken from the copy)
//!  after recovery:   each block read back: intact, lost (refused by a
//!                    check), or a stale value accepted (a violation);
//!                    the counter its next write would take, under the key
//!                    it would take it with: a pad used before (a violation)
//! ```

use crate::engine::crypto::PadLedger;
use crate::machine::System;
use serde::Serialize;

/// What was there before the crash.
pub(crate) struct Before {
    blocks: Vec<(u64, [u8; 64])>,
    ledger: Option<PadLedger>,
}

/// One finding in non-persistent memory.
pub(crate) struct Finding {
    pub block: u64,
    pub check: &'static str,
    pub expected: [u8; 64],
    pub actual: Option<[u8; 64]>,
    pub detail: String,
}

/// What one crash point found in non-persistent memory.
#[derive(Default)]
pub(crate) struct Point {
    pub intact: u64,
    pub lost: u64,
    pub findings: Vec<Finding>,
}

/// Over the whole check (`CrashReport::non_persistent`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct NonPersistentSummary {
    /// Reads of non-persistent blocks after recovery that returned the
    /// last value stored (summed over crash points).
    pub intact_reads: u64,
    /// Reads a check refused: the data is lost, which non-persistent
    /// memory is allowed (Triad-NVM Observation 2).
    pub lost_reads: u64,
    /// Reads that returned another value as valid (violations).
    pub stale_accepted: u64,
    /// Blocks whose next write would use a one-time pad an earlier write
    /// used (violations).
    pub pad_reuses: u64,
}

impl NonPersistentSummary {
    pub(crate) fn add(&mut self, p: &Point) {
        self.intact_reads += p.intact;
        self.lost_reads += p.lost;
        for f in &p.findings {
            match f.check {
                "pad-reuse" => self.pad_reuses += 1,
                _ => self.stale_accepted += 1,
            }
        }
    }
}

/// Take note of non-persistent memory on a machine about to crash (a copy:
/// its pad ledger is taken, so nothing the copy does after is recorded).
/// None when memory has no non-persistent region.
pub(crate) fn before_crash(sys: &mut System) -> Option<Before> {
    if !sys.mc.layout().has_regions() || !sys.mc.secure() {
        return None;
    }
    let layout = sys.mc.layout();
    let mut blocks: Vec<(u64, [u8; 64])> = sys.volatile.iter().filter(|(b, _)| !layout.is_persistent(**b)).map(|(b, v)| (*b, *v)).collect();
    blocks.sort_unstable_by_key(|(b, _)| *b);
    Some(Before { blocks, ledger: sys.mc.st.crypto.ledger.take() })
}

/// Judge non-persistent memory after the recovery.
pub(crate) fn after_recovery(sys: &mut System, before: Before) -> Point {
    let mut p = Point::default();
    // The pads of the run before the crash, with nothing of this copy's.
    sys.mc.st.crypto.ledger = before.ledger;
    for (block, expected) in before.blocks {
        match sys.mc.read(block) {
            Ok(v) if v == expected => p.intact += 1,
            Ok(v) => p.findings.push(Finding {
                block,
                check: "stale-accepted",
                expected,
                actual: Some(v),
                detail: "non-persistent data read back after recovery as valid, but it is not the last value stored".into(),
            }),
            Err(_) => p.lost += 1,
        }
        // A page re-encryption or a refused counter block: no pad to check.
        let Ok(Some(next)) = sys.mc.peek_next_counter(block) else { continue };
        if sys.mc.st.crypto.pad_used_before(block, next).is_some() {
            p.findings.push(Finding {
                block,
                check: "pad-reuse",
                expected,
                actual: None,
                detail: format!(
                    "the next write of this block would use counter ({}, {}) under key set {}, whose one-time pad an earlier write used",
                    next.0,
                    next.1,
                    sys.mc.st.crypto.key_of(block)
                ),
            });
        }
    }
    sys.mc.st.crypto.ledger = None;
    p
}
