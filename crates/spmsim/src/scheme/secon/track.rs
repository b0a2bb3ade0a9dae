//! Secon's ADR-resident state (Secon 3.2, Fig. 5): the pending BMT update
//! queue and the counter track bitmap, battery-backed so that they survive
//! a power failure with the chip; and which minors a write marks.
//!
//! ```text
//!  queue: [c3, c9, c4 ...]            counter blocks whose level-1 CMAC awaits its root update
//!  units: [Some{c3, minors 0b101}, ..] one 64-bit unit per block; unit i has id i + 1,
//!                                      the value in its CMAC's 10 spare bits
//! ```

use crate::engine::counter::SplitCounterBlock;
use serde::{Deserialize, Serialize};

/// One unit of the counter track bitmap: a counter block and its minors
/// persisted ahead of the root register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackUnit {
    pub counter_block: u64,
    pub minors: u64,
}

/// What the counter track did (functional counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrackStats {
    /// Writes whose root update was deferred.
    pub deferred_writes: u64,
    /// Level-1 nodes whose background update ran because the persistency
    /// model waited for an ACK.
    pub settled_on_ack: u64,
    /// ... because the queue or the bitmap was full (the write stalled).
    pub settled_when_full: u64,
    /// ... because a marked minor was incremented again.
    pub settled_same_minor: u64,
    /// ... because a minor overflowed (the root then updated at once).
    pub settled_on_overflow: u64,
    /// ... because the node left the BMT cache.
    pub settled_on_eviction: u64,
    /// Log writes whose counter block stayed in the counter cache, its
    /// minor carried by the log line (Secon 3.4.1).
    #[serde(default)]
    pub colocated_counters: u64,
}

/// Secon's ADR-resident state: the pending BMT update queue and the
/// counter track bitmap. Battery-backed, so it survives a power failure
/// with the chip (unless the control takes the bitmap away).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterTrack {
    /// Counter blocks whose level-1 CMAC waits for its root update,
    /// oldest first (the queue holds the CMACs' addresses: one per block).
    pub queue: Vec<u64>,
    /// Unit `i` has id `i + 1`, the value in its CMAC's spare bits.
    pub units: Vec<Option<TrackUnit>>,
    #[serde(default)]
    pub stats: TrackStats,
}

impl CounterTrack {
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    pub(super) fn unit_of(&self, counter_block: u64) -> Option<usize> {
        self.units.iter().position(|u| u.is_some_and(|u| u.counter_block == counter_block))
    }

    /// A free unit for `counter_block` (sizing the bitmap to `cap` units).
    pub(super) fn allocate(&mut self, counter_block: u64, cap: usize) -> Option<usize> {
        if self.queue.len() >= cap {
            return None;
        }
        if self.units.len() < cap {
            self.units.resize(cap, None);
        }
        let i = self.units.iter().position(|u| u.is_none())?;
        self.units[i] = Some(TrackUnit { counter_block, minors: 0 });
        self.queue.push(counter_block);
        Some(i)
    }

    pub(super) fn free(&mut self, counter_block: u64) {
        if let Some(i) = self.unit_of(counter_block) {
            self.units[i] = None;
        }
        self.queue.retain(|&c| c != counter_block);
    }

    /// Bytes of ADR the structures take: 48-bit queue entries and 64-bit
    /// units (Secon 3.2: 224 B for 16 of each).
    pub fn adr_bytes(units: u32) -> u64 {
        units as u64 * (6 + 8)
    }
}

/// The minors of `new` one ahead of `old`, as a mask; None when the major
/// moved (a page re-encryption) or a minor moved otherwise.
pub(super) fn marked_minors(old: &[u8; 64], new: &[u8; 64]) -> Option<u64> {
    let (o, n) = (SplitCounterBlock::decode(old), SplitCounterBlock::decode(new));
    if o.major != n.major {
        return None;
    }
    let mut mask = 0u64;
    for i in 0..64 {
        if n.minors[i] == o.minors[i] {
            continue;
        }
        if n.minors[i] != o.minors[i] + 1 {
            return None;
        }
        mask |= 1 << i;
    }
    Some(mask)
}
