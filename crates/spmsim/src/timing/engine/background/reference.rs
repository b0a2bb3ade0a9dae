//! The background queue as a list of its jobs, every question a scan of
//! them: the model the calendar-backed queue must answer as.

pub struct Jobs {
    entries: usize,
    jobs: Vec<(u64, u64)>,
    pub peak: usize,
}

impl Jobs {
    pub fn new(entries: usize) -> Jobs {
        Jobs { entries, jobs: Vec::new(), peak: 0 }
    }

    pub fn held_at(&self, t: u64) -> usize {
        self.jobs.iter().filter(|&&(s, e)| s <= t && t < e).count()
    }

    /// The first time from `t` after which the jobs never hold every
    /// entry: walk their starts and ends from `t` in order (an end frees
    /// its entry for a start at the same time) and keep the last time the
    /// count fell from full.
    pub fn first_room(&self, t: u64) -> u64 {
        let mut events: Vec<(u64, bool)> = Vec::new();
        for &(s, e) in self.jobs.iter().filter(|&&(_, e)| e > t) {
            events.push((s.max(t), true));
            events.push((e, false));
        }
        events.sort_unstable();
        let (mut held, mut full, mut room) = (0usize, false, t);
        for (x, starts) in events {
            if starts {
                held += 1;
            } else {
                held -= 1;
            }
            if held >= self.entries {
                full = true;
            } else if full {
                full = false;
                room = x;
            }
        }
        room
    }

    pub fn push(&mut self, start: u64, end: u64) {
        if end <= start {
            return;
        }
        self.jobs.push((start, end));
        let most = std::iter::once(start)
            .chain(self.jobs.iter().map(|&(s, _)| s).filter(|&s| s > start && s < end))
            .map(|x| self.held_at(x))
            .max()
            .unwrap_or(0);
        self.peak = self.peak.max(most);
    }
}
