//! Random sequences of bookings (back to back, or anywhere free), moves
//! of writes behind a read and prunes, with every query asked of both
//! `Slots` and the reference model of one sorted list: the answers must be
//! the same.

use super::reference;
use super::{first_free_of_both, Access, Slots};
use crate::util::rng::SplitMix64;

/// How often the sequences met the cases worth testing: a wait for a gap,
/// a gap free of one list but not the other, writes over many blocks,
/// several writes moved back at once.
#[derive(Default, Debug)]
struct Seen {
    waits: u64,
    rounds: u64,
    many_blocks: u64,
    chains: u64,
}

/// A bank's reads and writes, in `Slots` and in the reference lists.
#[derive(Default)]
struct Bank {
    reads: Slots,
    writes: Slots,
    slow_reads: Vec<Access>,
    slow_writes: Vec<Access>,
}

fn access(start: u64, len: u64, block: u64) -> Access {
    Access { start, end: start + len, row: block / 4, block, queued: start.saturating_sub(block % 7) }
}

impl Bank {
    /// Book `len` cycles in the reads (`read`) or the writes at the first
    /// time from `from` free of that list.
    fn book(&mut self, read: bool, from: u64, len: u64, block: u64) {
        let (fast, slow) = if read { (&mut self.reads, &mut self.slow_reads) } else { (&mut self.writes, &mut self.slow_writes) };
        let a = access(reference::gap(slow, from, len), len, block);
        fast.insert(a);
        reference::book(slow, a);
    }

    /// Move the writes booked to start in `[s, e)`, and those back to back
    /// behind them, to start from `e` on, as a read going ahead of them
    /// does; `w` is every write's length.
    fn push_writes(&mut self, s: u64, e: u64, w: u64) -> usize {
        let from = self.writes.first_starting_from(s);
        let first = self.slow_writes.partition_point(|x| x.start < s);
        let mut moves = Vec::new();
        let mut cur = e;
        for (k, (pos, x)) in self.writes.all_from(from).into_iter().enumerate() {
            assert_eq!(x, self.slow_writes[first + k], "the write at {pos:?}");
            let to = x.start.max(cur);
            if to == x.start {
                break;
            }
            moves.push((pos, to));
            cur = to + w;
        }
        for (k, &(_, to)) in moves.iter().enumerate() {
            let x = &mut self.slow_writes[first + k];
            x.start = to;
            x.end = to + w;
        }
        self.writes.reschedule(&moves, w);
        moves.len()
    }

    fn prune(&mut self, h: u64) {
        assert_eq!(self.reads.prune(h), reference::prune(&mut self.slow_reads, h), "reads pruned by {h}");
        assert_eq!(self.writes.prune(h), reference::prune(&mut self.slow_writes, h), "writes pruned by {h}");
    }

    /// Ask both every query at `t` for `len` cycles.
    fn check(&self, t: u64, len: u64, seen: &mut Seen) {
        for (fast, slow) in [(&self.reads, &self.slow_reads), (&self.writes, &self.slow_writes)] {
            assert_eq!(fast.gap(t, len), reference::gap(slow, t, len), "gap of {len} from {t}");
            assert_eq!(fast.last_started(t), reference::last_started(slow, t), "last started by {t}");
            let first = slow.partition_point(|x| x.start < t);
            let from: Vec<Access> = fast.all_from(fast.first_starting_from(t)).into_iter().map(|(_, a)| a).collect();
            assert_eq!(from, slow[first..], "accesses from {t}");
        }
        let fast = first_free_of_both(&self.writes, &self.reads, t, len);
        assert_eq!(fast, reference::free_for(&self.slow_reads, &self.slow_writes, t, len), "free for {len} from {t}");
        assert!(self.writes.iter().eq(self.slow_writes.iter()), "the writes");
        assert!((&self.reads).into_iter().eq(self.slow_reads.iter()), "the reads");
        assert!(self.reads.measures_hold() && self.writes.measures_hold(), "the blocks' measures");
        seen.waits += (fast > t) as u64;
        seen.rounds += (fast > self.reads.gap(t, len).max(self.writes.gap(t, len))) as u64;
        seen.many_blocks += (self.writes.blocks.len() > 3) as u64;
    }
}

/// One random sequence of `ops` operations over times in `[0, span)` from
/// the horizon; writes of `w` cycles, reads of `hit` or `miss`.
fn run(seed: u64, ops: usize, span: u64, seen: &mut Seen) {
    let mut rng = SplitMix64::new(seed);
    let (w, hit, miss) = (1 + rng.below(30), 1 + rng.below(3), 1 + rng.below(10));
    let mut bank = Bank::default();
    let mut horizon = 0;
    for n in 0..ops {
        let t = horizon + rng.below(span);
        match rng.below(10) {
            // Writes crowd back to back from near the horizon.
            0..=3 => bank.book(false, horizon + rng.below(span / 8 + 1), w, n as u64),
            4..=5 => bank.book(true, t, if rng.below(2) == 0 { hit } else { miss }, n as u64),
            6 => {
                let s = bank.writes.iter().nth(rng.below(8) as usize).map_or(t, |x| x.start.saturating_sub(rng.below(3)));
                seen.chains += (bank.push_writes(s, s + 1 + rng.below(miss), w) > 1) as u64;
            }
            7 if rng.below(3) == 0 => {
                horizon += rng.below(span / 4 + 1);
                bank.prune(horizon);
            }
            _ => {}
        }
        for len in [1, hit, miss, w, w + rng.below(2 * w)] {
            bank.check(horizon.saturating_sub(rng.below(w + 1)) + rng.below(span), len, seen);
        }
    }
}

#[test]
fn every_query_answers_as_the_reference_model_does() {
    let mut seen = Seen::default();
    for seed in 0..3000 {
        run(seed, 200, [20, 200, 2000][seed as usize % 3], &mut seen);
    }
    // Five checks an operation; one push in ten operations.
    let checks = 3000 * 200 * 5;
    let Seen { waits, rounds, many_blocks, chains } = seen;
    assert!(waits > checks / 10 && rounds > checks / 1000 && many_blocks > checks / 10, "{seen:?} of {checks}");
    assert!(chains > 3000 * 200 / 10 / 20, "{seen:?}");
}
