//! `queue`: a persistent FIFO ring of fixed-size entries; each operation
//! enqueues or dequeues (Secon 4.1 "Queue: enqueue/dequeue random entries
//! in a 1GB queue", 256 B values; STAR V-A; Triad-NVM IV, PMDK queue).
//!
//! ```text
//!  ROOT_BASE: [head][tail][capacity]       head, tail: running counts
//!  HEAP_BASE: slot 0 | slot 1 | ... | slot cap-1     (value_bytes each)
//!  enqueue: load head, tail; log slot[tail % cap]; fence; slot <- value;
//!           log tail; fence; tail <- tail + 1
//!  dequeue: load head, tail; read slot[head % cap];
//!           log head; fence; head <- head + 1
//! ```
//!
//! Each operation is an enqueue or a dequeue with equal odds (a dequeue of
//! an empty queue becomes an enqueue, an enqueue into a full one a
//! dequeue). The queue starts half full: slots `0..cap/2` hold the implicit
//! initial entries, `head = 0`, `tail = cap/2`.

use super::params::structure_params;
use super::pheap::{check_plan, mix, transaction, Layout, NewValues, PHeap, HEAP_BASE, ROOT_BASE};
use super::{Event, Generator};
use crate::util::rng::SplitMix64;

structure_params! {
    /// The ring of entries (Secon: 256 B entries, 1 GB).
    QueueParams, kind = "queue", gap = 6, max_size_mib = 8184
}

impl QueueParams {
    pub fn validate(&self) -> Result<(), String> {
        self.check_keys()?;
        let l = QueueLayout::new(self, 0);
        if l.cap < 2 {
            return Err("queue workload: size_mib holds fewer than two entries".into());
        }
        check_plan("queue", HEAP_BASE + l.cap * l.stride, l.cap / 2 * l.stride + 64, self.populate)
    }
}

const HEAD: u64 = ROOT_BASE;
const TAIL: u64 = ROOT_BASE + 8;

pub struct QueueLayout {
    pub cap: u64,
    pub stride: u64,
    seed: u64,
}

impl QueueLayout {
    fn new(p: &QueueParams, seed: u64) -> Self {
        QueueLayout { cap: (p.size_mib << 20) / p.value_bytes, stride: p.value_bytes, seed: mix(seed, 0x0EE0E) }
    }
    pub fn slot(&self, i: u64) -> u64 {
        HEAP_BASE + (i % self.cap) * self.stride
    }
    /// Word `w` of the initial entry in slot `i`.
    pub fn initial_word(&self, i: u64, w: u64) -> u64 {
        mix(mix(self.seed, i), w)
    }
}

impl Layout for QueueLayout {
    fn initial(&self, b: u64) -> [u64; 8] {
        if b == ROOT_BASE {
            return [0, self.cap / 2, self.cap, 0, 0, 0, 0, 0];
        }
        let end = HEAP_BASE + self.cap / 2 * self.stride;
        std::array::from_fn(|w| {
            let a = b + 8 * w as u64;
            if a < HEAP_BASE || a >= end {
                return 0;
            }
            let off = a - HEAP_BASE;
            self.initial_word(off / self.stride, off % self.stride / 8)
        })
    }
    fn extents(&self) -> Vec<(u64, u64)> {
        vec![(ROOT_BASE, ROOT_BASE + 24), (HEAP_BASE, HEAP_BASE + self.cap / 2 * self.stride)]
    }
}

pub struct Queue {
    pub h: PHeap<QueueLayout>,
    r: SplitMix64,
    p: QueueParams,
    populate: bool,
    values: NewValues,
}

/// What one queue operation did, with the entry's words.
#[derive(Debug, PartialEq)]
pub enum QueueOp {
    Enqueued(Vec<u64>),
    Dequeued(Vec<u64>),
}

impl Queue {
    pub fn new(seed: u64, p: QueueParams) -> Result<Self, String> {
        p.validate()?;
        let h = PHeap::new(QueueLayout::new(&p, seed), p.style, p.gap);
        Ok(Queue { h, r: SplitMix64::new(seed), populate: p.populate, p, values: NewValues::new(mix(seed, 0x0EE1)) })
    }

    /// Head and tail as the program last stored them.
    pub fn bounds(&self) -> (u64, u64) {
        (self.h.peek(HEAD), self.h.peek(TAIL))
    }

    pub fn step(&mut self, out: &mut Vec<Event>, want_enqueue: bool) -> QueueOp {
        let head = self.h.load(out, HEAD);
        let tail = self.h.load(out, TAIL);
        let cap = self.h.layout.cap;
        let enqueue = if head == tail {
            true
        } else if tail - head == cap {
            false
        } else {
            want_enqueue
        };
        let words = (self.p.value_bytes / 8) as usize;
        if enqueue {
            let v = self.values.next_value(words);
            let slot = self.h.layout.slot(tail);
            self.h.write(out, slot, v);
            self.h.write(out, TAIL, &[tail + 1]);
            QueueOp::Enqueued(v.to_vec())
        } else {
            let slot = self.h.layout.slot(head);
            self.h.copy_loads(out, slot, self.p.value_bytes);
            let mut v = vec![0; words];
            self.h.peek_words(slot, &mut v);
            self.h.write(out, HEAD, &[head + 1]);
            QueueOp::Dequeued(v)
        }
    }

    /// An operation of the stream: an enqueue or a dequeue, with equal odds.
    fn random_step(&mut self, out: &mut Vec<Event>) -> QueueOp {
        let enq = self.r.next_u64() & 1 == 0;
        self.step(out, enq)
    }
}

impl Generator for Queue {
    fn next_op(&mut self, out: &mut Vec<Event>) {
        let (populate, steps) = (std::mem::take(&mut self.populate), self.p.ops_per_tx.draw(&mut self.r));
        transaction(self, out, populate, steps, |g| &mut g.h, Self::random_step);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::pheap::tests::check_stream;
    use std::collections::VecDeque;

    #[test]
    fn the_queue_is_fifo_through_wraps_empty_and_full() {
        // 256 B entries in 1 MiB: 4096 slots; lean the walk so that it
        // wraps the ring and reaches both the full and the empty end.
        let p = QueueParams { value_bytes: 256, size_mib: 1, ..QueueParams::default() };
        let mut g = Queue::new(9, p).unwrap();
        let cap = g.h.layout.cap;
        let mut model: VecDeque<Vec<u64>> = (0..cap / 2).map(|i| (0..32).map(|w| g.h.layout.initial_word(i, w)).collect()).collect();
        let mut ev = Vec::new();
        let (mut fulls, mut empties) = (0, 0);
        let mut r = SplitMix64::new(4);
        for (tenths, ops) in [(9, 2 * cap), (1, 3 * cap), (9, 2 * cap)] {
            for _ in 0..ops {
                let enq = r.below(10) < tenths;
                let (head, tail) = g.bounds();
                fulls += (tail - head == cap) as u32;
                empties += (tail == head) as u32;
                let mut v = Vec::new();
                g.h.begin(&mut v);
                match g.step(&mut v, enq) {
                    QueueOp::Enqueued(x) => model.push_back(x),
                    QueueOp::Dequeued(x) => assert_eq!(Some(x), model.pop_front(), "FIFO order"),
                }
                g.h.commit(&mut v);
                ev.extend(v);
                let (head, tail) = g.bounds();
                assert_eq!(tail - head, model.len() as u64);
            }
        }
        assert!(fulls > 0 && empties > 0, "full {fulls} empty {empties}");
        check_stream(&ev, &g.h);
    }

    #[test]
    fn same_seed_same_events() {
        crate::workload::pheap::tests::deterministic(|seed| {
            Queue::new(seed, QueueParams { size_mib: 1, ..QueueParams::default() }).ok().unwrap()
        });
    }
}
