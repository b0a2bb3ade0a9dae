//! PCM device and write pending queue timing (SecPB Table I: read 55 ns,
//! write 150 ns; WPQ 32 entries in the ADR domain).
//!
//! ```text
//!  write -> WPQ slot (wait if all 32 are taken) -> bank free? -> bank busy for t_write
//!  read  ------------------------------------------> bank free? -> bank busy for t_read
//! ```
//! Banks are interleaved by a hash of the block address. Reads go ahead of
//! queued writes, as memory controllers schedule them: a read waits for the
//! other reads of its bank and for the write in service there (writes of a
//! bank are taken to run back to back), not for the whole write queue.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Debug)]
pub struct Pcm {
    /// When each bank's last scheduled write ends.
    bank_free: Vec<u64>,
    /// When each bank's current run of back-to-back writes began.
    run_start: Vec<u64>,
    /// When each bank's last read ends.
    read_free: Vec<u64>,
    read_cycles: u64,
    write_cycles: u64,
    /// Times at which each occupied WPQ slot is released (its write issues).
    wpq: BinaryHeap<Reverse<u64>>,
    wpq_entries: usize,
    pub wpq_full_waits: u64,
}

impl Pcm {
    pub fn new(banks: u32, read_cycles: u64, write_cycles: u64, wpq_entries: u32) -> Self {
        Pcm { bank_free: vec![0; banks as usize], run_start: vec![0; banks as usize], read_free: vec![0; banks as usize], read_cycles, write_cycles, wpq: BinaryHeap::new(), wpq_entries: wpq_entries as usize, wpq_full_waits: 0 }
    }

    fn bank(&self, addr: u64) -> usize {
        (addr.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 40) as usize % self.bank_free.len()
    }

    /// A read issued at `t`; returns when its data is back.
    pub fn read(&mut self, t: u64, addr: u64) -> u64 {
        let b = self.bank(addr);
        let mut start = t.max(self.read_free[b]);
        if self.run_start[b] <= start && start < self.bank_free[b] {
            // The rest of the write in service (writes not yet started wait
            // behind the read).
            let k = (start - self.run_start[b]) / self.write_cycles + 1;
            start = self.run_start[b] + k * self.write_cycles;
        }
        self.read_free[b] = start + self.read_cycles;
        start + self.read_cycles
    }

    /// A write offered to the WPQ at `t`; returns when it holds a slot
    /// (from then on it is persistent).
    pub fn write(&mut self, t: u64, addr: u64) -> u64 {
        let mut t = t;
        while let Some(&Reverse(r)) = self.wpq.peek() {
            if r <= t {
                self.wpq.pop();
            } else {
                break;
            }
        }
        if self.wpq.len() >= self.wpq_entries {
            let Reverse(r) = self.wpq.pop().unwrap();
            self.wpq_full_waits += 1;
            t = t.max(r);
        }
        let b = self.bank(addr);
        let issue = t.max(self.bank_free[b]);
        if issue > self.bank_free[b] {
            self.run_start[b] = issue;
        }
        self.bank_free[b] = issue + self.write_cycles;
        self.wpq.push(Reverse(issue));
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_wpq_makes_writers_wait() {
        let mut p = Pcm::new(1, 10, 100, 2);
        assert_eq!(p.write(0, 1), 0); // issues at 0
        assert_eq!(p.write(0, 2), 0); // issues at 100
        // Both slots are held until their writes issue; the third waits
        // for the first slot (released at issue time 0, i.e. now).
        assert_eq!(p.write(0, 3), 0);
        assert_eq!(p.write(0, 4), 100);
        assert!(p.wpq_full_waits >= 1);
        // A read waits for the write in service, not the whole queue.
        let r = p.read(0, 5);
        assert_eq!(r, 100 + 10, "writes at 0..100, 100..200, ...: the read goes after the first");
        let mut q = Pcm::new(1, 10, 100, 4);
        q.write(500, 9);
        assert_eq!(q.read(50, 8), 60, "a write that has not started does not delay a read");
        assert_eq!(p.read(0, 6), 210, "the next read starts at 110, inside the write at 100..200");
    }
}
