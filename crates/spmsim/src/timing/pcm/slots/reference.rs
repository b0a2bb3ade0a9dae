//! A bank's accesses as they were first kept: one sorted list, every query
//! a walk of it. The tests hold `Slots` to the same answers.

use super::Access;

/// The first start at or after `start` of `len` cycles that overlaps none
/// of `slots` (sorted, disjoint).
pub fn gap(slots: &[Access], mut start: u64, len: u64) -> u64 {
    let mut i = slots.partition_point(|a| a.end <= start);
    while i < slots.len() && slots[i].start < start + len {
        start = start.max(slots[i].end);
        i += 1;
    }
    start
}

/// The last of `slots` to start at or before `t`.
pub fn last_started(slots: &[Access], t: u64) -> Option<&Access> {
    slots.partition_point(|a| a.start <= t).checked_sub(1).map(|i| &slots[i])
}

/// The first start at or after `from` at which `len` cycles overlap none
/// of `reads` and `writes`.
pub fn free_for(reads: &[Access], writes: &[Access], mut from: u64, len: u64) -> u64 {
    loop {
        let s = gap(reads, gap(writes, from, len), len);
        if s == from {
            return s;
        }
        from = s;
    }
}

pub fn book(list: &mut Vec<Access>, a: Access) {
    let at = list.partition_point(|x| x.start < a.start);
    list.insert(at, a);
}

/// Forget the accesses that ended by `horizon`; returns the last of them.
pub fn prune(list: &mut Vec<Access>, horizon: u64) -> Option<Access> {
    let k = list.partition_point(|a| a.end <= horizon);
    let last = k.checked_sub(1).map(|i| list[i]);
    list.drain(..k);
    last
}
