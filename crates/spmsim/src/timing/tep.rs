//! What the timing of transaction-specific epoch persistency did (Secon
//! 3.3); the rules themselves are `timing::epoch`'s, priced per line.

use serde::Serialize;

/// What TEP's timing did (absent from the stats under another model).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TepTimingStats {
    /// Barriers between paired epochs, which made the core wait for nothing.
    pub paired_barriers: u64,
    /// Barriers at a regular epoch, which waited for every earlier ACK.
    pub regular_barriers: u64,
    /// Data stores held back for their log's ACK, and the cycles they waited.
    pub log_ack_waits: u64,
    pub log_ack_wait_cycles: u64,
}

impl TepTimingStats {
    pub(super) fn add(&mut self, o: &TepTimingStats) {
        self.paired_barriers += o.paired_barriers;
        self.regular_barriers += o.regular_barriers;
        self.log_ack_waits += o.log_ack_waits;
        self.log_ack_wait_cycles += o.log_ack_wait_cycles;
    }
}
