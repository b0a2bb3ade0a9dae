//! One time of a queue's timeline: the entries that arrive and leave then.

/// The entries that arrive and leave at one time (both at once when one
/// leaves as another arrives).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Event {
    pub t: u64,
    pub arrivals: u32,
    pub departures: u32,
}

impl Event {
    /// The change in entries held from just before `t` to `t`.
    pub fn change(&self) -> i64 {
        self.arrivals as i64 - self.departures as i64
    }
}
