//! The write's placement as it was first written: each try moves on past
//! the first moment its span finds a queue full, one full stretch at a
//! time. The tests hold `place_write`, which moves on past the last, to
//! the same answers.

use super::{Gem5, Params};
use crate::config::BankMap;
use crate::util::rng::SplitMix64;

impl Gem5 {
    /// `place_write`, stepping; with the tries it took.
    fn place_write_stepwise(&self, t: u64, ready: u64, b: usize) -> ((u64, u64, u64), u64) {
        let mut a = t;
        let mut tries = 0;
        loop {
            tries += 1;
            let from = a.max(ready);
            let (e, s, q) = match &self.wpq {
                Some(wpq) => {
                    let ((e, s), n) = self.enter_write_queue_stepwise(self.write_queue_from(a, ready), b);
                    tries += n;
                    (e, s, wpq.first_full(a, e).map(|x| wpq.free_after(x)))
                }
                None => {
                    let s = self.banks[b].free_for(from, self.p.write);
                    (a, s, self.write_queue.first_full(a, s).map(|x| self.write_queue.free_after(x)))
                }
            };
            match q {
                Some(later) => a = later,
                None => return ((a, e, s), tries),
            }
        }
    }

    /// `try_push_writes`, asking the queue whether each move fits and
    /// counting each towards the peak on its own.
    fn try_push_writes_stepwise(&mut self, b: usize, s: u64, e: u64) -> bool {
        let w = self.p.write;
        let moves = self.planned_pushes(b, s, e);
        let queue = &mut self.write_queue;
        for (k, &(i, old, new)) in moves.iter().enumerate() {
            if queue.first_full(old, new).is_some() {
                for &(j, old, new) in moves[..k].iter().rev() {
                    queue.move_departure(self.banks[b].writes.get(j).queued, new, old);
                }
                return false;
            }
            queue.move_departure(self.banks[b].writes.get(i).queued, old, new);
        }
        for &(i, old, new) in &moves {
            self.write_queue.note_peak(old, new);
            self.queued.reissue(self.banks[b].writes.get(i).block, old, new);
            self.last_write_done = self.last_write_done.max(new + w);
        }
        let starts: Vec<_> = moves.iter().map(|&(i, _, new)| (i, new)).collect();
        self.banks[b].writes.reschedule(&starts, w);
        true
    }

    /// What the write-side state of bank `b` and the write queue is.
    #[allow(clippy::type_complexity)]
    fn write_side(&self, b: usize) -> (Vec<(u64, u64, u64)>, (Vec<(u64, u32, u32)>, usize), Vec<(u64, Vec<(u64, u64)>)>, u64) {
        let writes = self.banks[b].writes.iter().map(|a| (a.start, a.end, a.queued)).collect();
        (writes, self.write_queue.snapshot(), self.queued.snapshot(), self.last_write_done)
    }

    /// `enter_write_queue`, stepping; with the tries it took.
    fn enter_write_queue_stepwise(&self, from: u64, b: usize) -> ((u64, u64), u64) {
        let mut e = from;
        let mut tries = 0;
        loop {
            tries += 1;
            let s = self.banks[b].free_for(e, self.p.write);
            match self.write_queue.first_full(e, s) {
                Some(x) => e = self.write_queue.free_after(x),
                None => return ((e, s), tries),
            }
        }
    }
}

/// A small controller of random shape: few banks, short queues (up to
/// `longest` entries), long writes, so that writes pile up in its queues.
fn controller(rng: &mut SplitMix64, longest: u64) -> Gem5 {
    let write_queue = 1 + rng.below(longest) as usize;
    Gem5::new(Params {
        banks: 1 + rng.below(3) as usize,
        bank_map: BankMap::BitSlice,
        row_blocks: 4,
        read_miss: 50 + rng.below(100),
        read_hit: 10,
        burst: 5,
        write: 100 + rng.below(400),
        frontend: rng.below(3) * 10,
        backend: 0,
        read_queue: 1 + rng.below(8) as usize,
        write_queue,
        wpq: (rng.below(2) == 0).then(|| 1 + rng.below(longest + 4) as usize),
        high: write_queue * 85 / 100,
        low: write_queue / 2,
        min_writes: 1 + rng.below(4) as usize,
        min_reads: 1 + rng.below(4) as usize,
    })
}

#[test]
fn moving_writes_back_behind_a_read_checks_and_counts_as_moving_each_did() {
    let (mut moved, mut refused, mut chains) = (0, 0, 0);
    for seed in 0..400 {
        let mut rng = SplitMix64::new(seed);
        let mut p = controller(&mut rng, [12, 64][seed as usize % 2]);
        let mut now = 0;
        for _ in 0..300 {
            now += rng.below(60);
            p.set_horizon(now.saturating_sub(rng.below(200)));
            // Writes crowd onto the first bank, back to back.
            let block = if rng.below(4) > 0 { 4 * p.banks.len() as u64 * rng.below(8) } else { rng.below(64) };
            let (b, _) = p.map(block);
            p.prune(b);
            // A read over part of a booked write of the bank, or anywhere.
            let s = match p.banks[b].writes.iter().nth(rng.below(6) as usize) {
                Some(x) if rng.below(4) > 0 => x.start.max(now) + rng.below(p.p.write),
                _ => now + rng.below(1000),
            };
            let e = s + if rng.below(2) == 0 { p.p.burst } else { p.p.read_miss };
            let mut q = p.clone();
            let before: Vec<u64> = p.banks[b].writes.iter().map(|x| x.start).collect();
            let fast = p.try_push_writes(b, s, e);
            assert_eq!(fast, q.try_push_writes_stepwise(b, s, e), "seed {seed}: a read over [{s}, {e})");
            assert_eq!(p.write_side(b), q.write_side(b), "seed {seed}: a read over [{s}, {e})");
            let n = p.banks[b].writes.iter().zip(&before).filter(|(x, &s)| x.start != s).count();
            moved += (n > 0) as u64;
            chains += (n > 2) as u64;
            refused += !fast as u64;
            for _ in 0..1 + rng.below(3) {
                p.write_when_ready(now, now + rng.below(4) * rng.below(500), block);
            }
        }
    }
    assert!(moved > 5_000 && refused > 5_000 && chains > 3_000, "{moved} moved ({chains} more than two writes), {refused} refused");
}

#[test]
fn placing_a_write_past_the_last_full_moment_finds_what_stepping_finds() {
    let (mut placements, mut long) = (0, 0);
    for seed in 0..400 {
        let mut rng = SplitMix64::new(seed);
        let mut p = controller(&mut rng, 12);
        let mut now = 0;
        for _ in 0..300 {
            now += rng.below(60);
            p.set_horizon(now.saturating_sub(rng.below(200)));
            let block = rng.below(64);
            let (b, _) = p.map(block);
            let ready = now + rng.below(4) * rng.below(500);
            for t in [now, now + rng.below(300)] {
                let (stepped, tries) = p.place_write_stepwise(t, ready, b);
                assert_eq!(p.place_write(t, ready, b), stepped, "seed {seed}: a write at {t} ready at {ready}");
                if p.wpq.is_some() {
                    let from = p.write_queue_from(t, ready);
                    assert_eq!(p.enter_write_queue(from, b), p.enter_write_queue_stepwise(from, b).0, "seed {seed}");
                }
                placements += 1;
                long += (tries > 3) as u64;
            }
            if rng.below(4) == 0 {
                p.read(now, rng.below(64));
            } else {
                p.write_when_ready(now, ready, block);
            }
        }
    }
    assert!(long * 20 > placements, "{long} of {placements} placements took more than three tries");
}
