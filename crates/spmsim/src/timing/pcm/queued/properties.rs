//! Random adds, reissues and sweeps, with every merge question asked of
//! both `QueuedWrites` and the reference of one unsorted list a block:
//! the answers and the writes held must be the same.

use super::QueuedWrites;
use crate::util::rng::SplitMix64;
use rustc_hash::FxHashMap;

/// The writes as they were first kept: `(arrival, issue)` in the order
/// added, every question a walk of a block's list.
#[derive(Default)]
struct Reference {
    blocks: FxHashMap<u64, Vec<(u64, u64)>>,
    sweep_at: usize,
}

impl Reference {
    fn merges_at(&self, block: u64, t: u64, ready: u64) -> bool {
        self.blocks.get(&block).is_some_and(|v| v.iter().any(|&(a, i)| a <= t && t < i && i >= ready))
    }

    fn reissue(&mut self, block: u64, old: u64, new: u64) {
        if let Some(v) = self.blocks.get_mut(&block) {
            for q in v.iter_mut().filter(|q| q.1 == old) {
                q.1 = new;
            }
        }
    }

    fn sweep(&mut self, h: u64) {
        if self.blocks.len() > self.sweep_at {
            self.blocks.retain(|_, v| {
                v.retain(|&(_, i)| i > h);
                !v.is_empty()
            });
            self.sweep_at = 2 * self.blocks.len().max(1024);
        }
    }
}

/// A block's writes as `(issue, arrival)`, sorted.
fn held(v: Option<&Vec<(u64, u64)>>, swap: bool) -> Vec<(u64, u64)> {
    let mut v: Vec<(u64, u64)> = v.into_iter().flatten().map(|&(x, y)| if swap { (y, x) } else { (x, y) }).collect();
    v.sort_unstable();
    v
}

#[test]
fn every_merge_question_answers_as_the_reference_does() {
    let mut merges = 0;
    for seed in 0..300 {
        let mut rng = SplitMix64::new(seed);
        let (mut fast, mut slow) = (QueuedWrites::default(), Reference { sweep_at: 1024, ..Default::default() });
        let blocks = [4, 40, 3000][seed as usize % 3];
        let mut horizon = 0;
        for _ in 0..3000 {
            let block = rng.below(blocks);
            let t = horizon + rng.below(200);
            match rng.below(6) {
                0 | 1 => {
                    let issue = t + rng.below(100);
                    fast.add(block, t, issue);
                    slow.blocks.entry(block).or_default().push((t, issue));
                }
                2 => {
                    // A write's issue, or a time none issues at.
                    let v = held(slow.blocks.get(&block), true);
                    let old = if v.is_empty() || rng.below(4) == 0 { t } else { v[rng.below(v.len() as u64) as usize].0 };
                    let new = old.saturating_sub(rng.below(20)) + rng.below(60);
                    fast.reissue(block, old, new);
                    slow.reissue(block, old, new);
                }
                3 => {
                    horizon += rng.below(30);
                    fast.sweep(horizon);
                    slow.sweep(horizon);
                }
                _ => {}
            }
            let ready = t.saturating_sub(50) + rng.below(150);
            let answer = fast.merges_at(block, t, ready);
            assert_eq!(answer, slow.merges_at(block, t, ready), "seed {seed}: block {block} at {t} ready at {ready}");
            merges += answer as u64;
            assert_eq!(held(fast.blocks.get(&block), false), held(slow.blocks.get(&block), true), "seed {seed}: block {block}");
            assert_eq!(fast.blocks.len(), slow.blocks.len());
        }
    }
    assert!(merges > 300 * 3000 / 20, "{merges} merges");
}
