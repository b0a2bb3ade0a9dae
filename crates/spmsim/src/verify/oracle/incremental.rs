//! Incremental reads for the crash oracle: at each crash point only the
//! checked blocks whose read could differ from the previous point's are
//! read again, through the real secure read path; every other block keeps
//! its last result. A point then costs its drain, its recovery and a
//! handful of reads instead of a read of every checked block.
//!
//! ```text
//!  read(block) = f(view of its data line, MAC line and counter block,
//!                  whether its counter block is trusted)
//!  view(line)     = on chip (cache, victim buffer) | WPQ or image | absent
//!  trusted(line)  = on chip, or edge(line) holds and trusted(parent)
//!  edge(line)     = on chip | holds | fails   (hash vs the parent's slot,
//!                                              or the root register at the top)
//!  per point: lines whose view may have changed (the main run's writes,
//!    this and the last point's drain/recovery/replay journal, WPQ and
//!    on-chip lines)  --view differs-->  re-read the blocks that read them;
//!    their edges and their children's: an edge whose state changed
//!    re-reads every block under it
//! ```
//! A block none of whose inputs changed and under no changed edge reads as
//! before, since every edge on its path and every line it reads are as
//! before. The edge comparison is the tree's own
//! ([`BonsaiMerkleTree::edge_holds`], [`SgxIntegrityTree::edge_holds`]: the
//! one `verify` makes; a SIT edge is the node's MAC under its parent's
//! counter, so a parent whose view changes re-checks its children's edges).
//! Chip state other than the root registers and a scheme's recovery state
//! that differs after recovery re-reads everything.
//!
//! [`BonsaiMerkleTree::edge_holds`]: crate::engine::tree::BonsaiMerkleTree::edge_holds
//! [`SgxIntegrityTree::edge_holds`]: crate::engine::tree::SgxIntegrityTree::edge_holds

use crate::engine::chip::ChipState;
use crate::engine::hooks::NvChange;
use crate::engine::layout::Region;
use crate::engine::rules::Rules;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::IntegrityTree;
use crate::machine::System;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::BTreeMap;

/// How the crash oracle reads the checked blocks at each crash point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// Every checked block, at every point.
    Full,
    /// Only those whose read may have changed ([`IncrementalReads`]);
    /// full reads where the machine's tree is not a Bonsai Merkle tree.
    Incremental,
}

impl std::str::FromStr for Reads {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "full" => Ok(Reads::Full),
            "incremental" => Ok(Reads::Incremental),
            _ => Err(format!("--reads must be `full` or `incremental`, got `{s}`")),
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum View {
    Absent,
    Nvm([u8; 64]),
    Chip([u8; 64]),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Edge {
    Chip,
    Holds,
    Fails,
}

/// A checked block's last read.
pub(crate) type ReadResult = Result<[u8; 64], CheckFailure>;

pub(crate) struct IncrementalReads {
    /// Off: every block is read at every point.
    enabled: bool,
    /// The checked blocks, ascending.
    blocks: Vec<u64>,
    /// Line -> the checked blocks (indices) whose read takes it.
    readers: FxHashMap<u64, Vec<u32>>,
    views: FxHashMap<u64, View>,
    edges: FxHashMap<u64, Edge>,
    /// Lines the last point's drain, recovery and replay changed, or left
    /// on chip or in the WPQ.
    last_extra: Vec<u64>,
    last_chip: Option<ChipState>,
    /// Each checked block's last read.
    pub results: Vec<Option<ReadResult>>,
    /// Each checked block's failed check at the last point (None: it
    /// showed what it must), and the counts by check.
    failed: Vec<Option<String>>,
    pub by_check: BTreeMap<String, u64>,
    pub failing: u64,
}

impl IncrementalReads {
    pub fn new(sys: &System, blocks: Vec<u64>, reads: Reads) -> Self {
        let st = &sys.mc.st;
        let enabled = reads == Reads::Incremental;
        let mut readers: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        if enabled {
            for (j, &b) in blocks.iter().enumerate() {
                let mut lines = vec![b];
                if sys.mc.secure() {
                    lines.push(st.layout.mac_line_of(b).0);
                    lines.push(st.layout.meta_addr(0, st.layout.counter_of(b).0));
                }
                for l in lines {
                    readers.entry(l).or_default().push(j as u32);
                }
            }
        }
        let n = blocks.len();
        IncrementalReads {
            enabled,
            blocks,
            readers,
            views: FxHashMap::default(),
            edges: FxHashMap::default(),
            last_extra: Vec::new(),
            last_chip: None,
            results: vec![None; n],
            failed: vec![None; n],
            by_check: BTreeMap::new(),
            failing: 0,
        }
    }

    pub fn blocks(&self) -> &[u64] {
        &self.blocks
    }

    /// Read, on the crashed and recovered machine, every checked block
    /// whose read may have changed since the last point (`changes`: the
    /// blocks the main run wrote since then). Returns their indices,
    /// ascending.
    pub fn read(&mut self, sys: &mut System, changes: &[u64]) -> Vec<usize> {
        let idx = self.suspects(sys, changes);
        for &j in &idx {
            self.results[j] = Some(sys.mc.read(self.blocks[j]));
        }
        idx
    }

    /// Set block `j`'s verdict at this point: the check it failed, if any.
    pub fn judge(&mut self, j: usize, failed: Option<String>) {
        if let Some(old) = self.failed[j].take() {
            self.failing -= 1;
            let c = self.by_check.get_mut(&old).expect("a counted check");
            *c -= 1;
            if *c == 0 {
                self.by_check.remove(&old);
            }
        }
        if let Some(f) = failed {
            self.failing += 1;
            *self.by_check.entry(f.clone()).or_default() += 1;
            self.failed[j] = Some(f);
        }
    }

    /// The failing blocks' indices, ascending.
    pub fn failing_blocks(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.failed.len()).filter(|&j| self.failed[j].is_some())
    }

    fn suspects(&mut self, sys: &System, changes: &[u64]) -> Vec<usize> {
        let st = &sys.mc.st;
        let all: Vec<usize> = (0..self.blocks.len()).collect();
        let mut extra: Vec<u64> = st.nvm.image.journaled().collect();
        extra.extend(st.nvm.wpq_addrs());
        extra.extend(st.caches.resident_addrs());
        extra.extend(st.victims.iter().map(|(a, _)| *a));
        let last_extra = std::mem::replace(&mut self.last_extra, extra);
        let chip = st.chip.clone();
        let last_chip = self.last_chip.replace(chip.clone());
        if !self.enabled {
            return all;
        }
        let Some(last_chip) = last_chip else {
            // The first point reads everything; what it saw is learnt as
            // lines and edges are met from here on.
            return all;
        };
        let roots_changed = last_chip.roots != chip.roots;
        // What a change of the scheme's own state means for reads is the
        // scheme's to say: recovery state (STAR's bitmap lines, a register
        // over a cache) is read by its recovery alone, which has run, so
        // reads do not see it (what that recovery put on chip is met as
        // on-chip lines); a register that roots a subtree (ASSURE's hot
        // tree) names the edges to check again.
        let scheme_change = sys.mc.rules.scheme.nv_change(st, &last_chip.scheme, &chip.scheme);
        let rest_changed = ChipState { roots: chip.roots.clone(), scheme: chip.scheme.clone(), ..last_chip } != chip;
        if rest_changed || scheme_change == NvChange::Everything {
            self.views.clear();
            self.edges.clear();
            return all;
        }
        let mut read: FxHashSet<u32> = FxHashSet::default();
        let mut edges: Vec<u64> = Vec::new();
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        let layout = &st.layout;
        for &a in changes.iter().chain(&last_extra).chain(&self.last_extra) {
            if !seen.insert(a) {
                continue;
            }
            let v = view(st, a);
            // Compared in place: most lines are unchanged since the last point.
            match self.views.get_mut(&a) {
                Some(old) if *old == v => continue,
                Some(old) => *old = v,
                None => {
                    self.views.insert(a, v);
                }
            }
            if let Some(r) = self.readers.get(&a) {
                read.extend(r.iter().copied());
            }
            if !sys.mc.secure() {
                continue;
            }
            if let Some((level, index)) = layout.meta_pos(a) {
                edges.push(a);
                if level > 0 {
                    let below = layout.level_nodes[level as usize - 1];
                    let first = index * layout.arity;
                    edges.extend((first..(first + layout.arity).min(below)).map(|c| layout.meta_addr(level - 1, c)));
                }
            }
        }
        if let (NvChange::Edges(lines), true) = (scheme_change, sys.mc.secure()) {
            edges.extend(lines);
        }
        if roots_changed && sys.mc.secure() {
            // A top node's edge compares its hash with its own register
            // alone: only the nodes whose register changed are checked again
            // (a forest of many roots would otherwise check every top node).
            let top = layout.top_level();
            let nodes = layout.level_nodes[top as usize];
            edges.extend(chip.roots.differing_from(&last_chip.roots).filter(|&i| i < nodes).map(|i| layout.meta_addr(top, i)));
        }
        let mut flipped: Vec<u64> = Vec::new();
        let mut done: FxHashSet<u64> = FxHashSet::default();
        for c in edges {
            if !done.insert(c) {
                continue;
            }
            let e = edge(st, &sys.mc.rules, c);
            if self.edges.insert(c, e) != Some(e) {
                flipped.push(c);
            }
        }
        for c in flipped {
            let (lo, hi) = self.under(st, c);
            let (from, to) = (self.blocks.partition_point(|&b| b < lo), self.blocks.partition_point(|&b| b < hi));
            read.extend((from..to).map(|j| j as u32));
        }
        let mut out: Vec<usize> = read.into_iter().map(|j| j as usize).collect();
        out.sort_unstable();
        out
    }

    /// The data blocks `[lo, hi)` under metadata line `c`.
    fn under(&self, st: &MetaStore, c: u64) -> (u64, u64) {
        let layout = &st.layout;
        let (level, index) = layout.meta_pos(c).expect("a metadata line");
        let span = layout.arity.saturating_pow(level);
        let per = layout.blocks_per_counter_block();
        (index.saturating_mul(span).saturating_mul(per), (index + 1).saturating_mul(span).saturating_mul(per))
    }
}

/// What a secure read sees of a line: its on-chip copy (trusted), else
/// the WPQ's or the image's, else nothing.
fn view(st: &MetaStore, a: u64) -> View {
    if !matches!(st.layout.region(a), Some(Region::Data { .. })) {
        if let Some(b) = st.caches.peek(&st.layout, a) {
            return View::Chip(b);
        }
        if let Some((_, b)) = st.victims.iter().rev().find(|(x, _)| *x == a) {
            return View::Chip(*b);
        }
    }
    match st.nvm.peek(a) {
        Some(b) => View::Nvm(b),
        None => View::Absent,
    }
}

/// The state of metadata line `c`'s edge to its parent (or root register).
fn edge(st: &MetaStore, r: &Rules, c: u64) -> Edge {
    let tree = &r.tree;
    let layout = &st.layout;
    let (level, index) = layout.meta_pos(c).expect("a metadata line");
    let bytes = match view(st, c) {
        View::Chip(_) => return Edge::Chip,
        View::Nvm(b) => b,
        View::Absent => tree.default_block(level),
    };
    let parent = match layout.parent_of(level, index) {
        None => [0; 64],
        Some((pl, pi, _)) => match view(st, layout.meta_addr(pl, pi)) {
            View::Chip(b) | View::Nvm(b) => b,
            View::Absent => tree.default_block(pl),
        },
    };
    let holds = match tree {
        IntegrityTree::Bmt(bmt) => bmt.edge_holds(r, st, level, index, &bytes, &parent),
        IntegrityTree::Sit(sit) => sit.edge_holds(st, level, index, &bytes, &parent),
    };
    if holds {
        Edge::Holds
    } else {
        Edge::Fails
    }
}
