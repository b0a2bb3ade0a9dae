//! The state the security engine works on: NVM (untrusted), metadata caches
//! and the chip state with its root registers (trusted), the crypto engine,
//! and a victim buffer for dirty lines evicted in the middle of an operation.
//!
//! ```text
//!   fetch(addr): cache hit -> trusted
//!                victim buffer hit -> trusted
//!                miss -> NVM (or the tree's default block) -> scheme's verify hook
//!                        (default: against the parent) -> install
//!   a line made dirty -> scheme's on_metadata_dirty (default: its policy)
//! ```
//! Verification walks up only until the first line already on chip (SecPB
//! II-B: verification stops at the first verified cached node).

use crate::engine::chip::ChipState;
use crate::engine::crypto::CryptoEngine;
use crate::engine::hooks::CacheInstall;
use crate::engine::layout::{Layout, Region};
use crate::engine::metacache::MetaCaches;
use crate::engine::nvm::Nvm;
use crate::engine::rules::Rules;
use crate::scheme::params::{MetadataPolicy, WritePolicy};
use serde::Serialize;
use std::collections::VecDeque;

/// Which integrity check failed, and where.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "check", rename_all = "kebab-case")]
pub enum CheckFailure {
    /// A data block's MAC does not match (ciphertext, address, counter, spare bits).
    Mac { block: u64 },
    /// A counter block or tree node does not match its parent.
    Tree { level: u32, index: u64 },
    /// A top-level node does not match the on-chip root register.
    Root { index: u64 },
    /// A block whose verified counter says "never written" holds data or a MAC.
    Unwritten { block: u64 },
    /// A counter would overflow its field (a 56-bit SIT counter).
    CounterOverflow { level: u32, index: u64 },
    /// An event of a thread the machine has no core for (not an integrity
    /// failure: a workload run with fewer cores than threads).
    NoCore { thread: u8, cores: usize },
}

impl CheckFailure {
    pub fn name(&self) -> &'static str {
        match self {
            CheckFailure::Mac { .. } => "mac",
            CheckFailure::Tree { .. } => "tree",
            CheckFailure::Root { .. } => "root",
            CheckFailure::Unwritten { .. } => "unwritten",
            CheckFailure::CounterOverflow { .. } => "counter-overflow",
            CheckFailure::NoCore { .. } => "no-core",
        }
    }
}

impl std::fmt::Display for CheckFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CheckFailure::Mac { block } => write!(f, "MAC mismatch for data block {block:#x}"),
            CheckFailure::Tree { level, index } => write!(f, "tree mismatch at level {level} node {index:#x}"),
            CheckFailure::Root { index } => write!(f, "root register mismatch for top node {index:#x}"),
            CheckFailure::Unwritten { block } => write!(f, "never-written block {block:#x} holds data or a MAC"),
            CheckFailure::CounterOverflow { level, index } => write!(f, "counter overflow at level {level} node {index:#x}"),
            CheckFailure::NoCore { thread, cores } => {
                write!(f, "an event of thread {thread}, but the machine has {cores} core(s): a workload of N threads needs core.count = N")
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct MetaStore {
    pub layout: Layout,
    pub crypto: CryptoEngine,
    pub nvm: Nvm,
    pub caches: MetaCaches,
    pub victims: VecDeque<(u64, [u8; 64])>,
    /// The trusted chip state: keys, the crash flag, the root registers
    /// (`chip.roots`, one per top-level node), which the tree keeps here,
    /// and the scheme's own non-volatile state.
    pub chip: ChipState,
    /// How each kind of metadata line is written: the scheme's rule, kept
    /// here so the hot path need not ask the scheme each time.
    pub policy: MetadataPolicy,
    /// Root register updates so far (SecPB Fig. 8 counts them).
    pub root_updates: u64,
    /// Tree hashes computed to verify fetched lines so far (the timing
    /// model tells these from the hashes of updates).
    pub verify_hashes: u64,
    /// Data MACs live in the data line's ninth chip
    /// (`security.mac_placement = "data-line"`), not in MAC lines.
    pub mac_in_data_line: bool,
    /// The scheme hears of every line entering, changing in or leaving a
    /// metadata cache (`SchemeShape::calls_cache_hooks`).
    pub observed: bool,
    /// A verification is under way (its parents' nested ones are counted
    /// with it).
    verifying: bool,
    /// Steps of work the controller has finished: an operation's own work
    /// ends when its victims are handled, and each victim is a step of its
    /// own. A scheme that must know what the metadata cache held before a
    /// step began (a line it fetched in this step, or not) reads it.
    pub steps: u64,
}

impl MetaStore {
    /// A store over these parts, with no work counted yet.
    pub fn new(
        layout: Layout,
        crypto: CryptoEngine,
        nvm: Nvm,
        caches: MetaCaches,
        chip: ChipState,
        policy: MetadataPolicy,
        observed: bool,
    ) -> Self {
        MetaStore {
            layout,
            crypto,
            nvm,
            caches,
            victims: VecDeque::new(),
            chip,
            policy,
            root_updates: 0,
            verify_hashes: 0,
            mac_in_data_line: false,
            observed,
            verifying: false,
            steps: 0,
        }
    }

    fn victim(&self, addr: u64) -> Option<[u8; 64]> {
        self.victims.iter().rev().find(|(a, _)| *a == addr).map(|(_, b)| *b)
    }

    /// The trusted on-chip copy of a metadata line, if any.
    pub fn on_chip(&mut self, addr: u64) -> Option<[u8; 64]> {
        let layout = &self.layout;
        if let Some(b) = self.caches.for_addr(layout, addr).get(addr) {
            return Some(b);
        }
        self.victim(addr)
    }

    /// Whether a metadata line is on chip (in its cache or the victim
    /// buffer), with nothing counted or moved.
    pub fn is_on_chip(&self, addr: u64) -> bool {
        self.caches.peek(&self.layout, addr).is_some() || self.victim(addr).is_some()
    }

    /// The newest copy of a metadata line (cache, victim buffer, WPQ,
    /// image), with no access counted, no verification and no line moved:
    /// for the simulator's own bookkeeping, never for a secure read.
    pub fn peek_line(&self, addr: u64) -> Option<[u8; 64]> {
        self.caches.peek(&self.layout, addr).or_else(|| self.victim(addr)).or_else(|| self.nvm.peek(addr))
    }

    /// Fetch a counter block or tree node, verifying it if it comes from NVM.
    pub fn fetch(&mut self, r: &Rules, addr: u64) -> Result<[u8; 64], CheckFailure> {
        let layout = &self.layout;
        if let Some(b) = self.caches.for_addr(layout, addr).get(addr) {
            return Ok(b);
        }
        self.fetch_off_cache(r, addr)
    }

    /// Fetch a line and install it changed by `f` as dirty: a [`Self::fetch`]
    /// then an [`Self::install`], with one cache lookup when it hits.
    pub fn update(&mut self, r: &Rules, addr: u64, f: impl FnOnce(&mut [u8; 64])) -> Result<[u8; 64], CheckFailure> {
        let layout = &self.layout;
        if let Some(line) = self.caches.for_addr(layout, addr).update(addr) {
            let old = *line;
            f(line);
            let b = *line;
            if !self.victims.is_empty() {
                self.victims.retain(|(a, _)| *a != addr);
            }
            if self.observed {
                r.scheme.on_cache_update(self, addr, &old, &b);
            }
            return Ok(b);
        }
        let mut b = self.fetch_off_cache(r, addr)?;
        f(&mut b);
        self.install(r, addr, b, true);
        Ok(b)
    }

    /// The miss path of [`Self::fetch`] after the cache lookup: the victim
    /// buffer, else NVM (or the tree's default block), verified and installed.
    fn fetch_off_cache(&mut self, r: &Rules, addr: u64) -> Result<[u8; 64], CheckFailure> {
        if let Some(b) = self.victim(addr) {
            return Ok(b);
        }
        let (level, index) = self.layout.meta_pos(addr).expect("metadata address");
        let mut bytes = self.nvm.read(&self.layout, addr).unwrap_or_else(|| r.tree.default_block(level));
        let nested = self.verifying;
        let before = self.crypto.work.tree_hashes;
        self.verifying = true;
        let result = (|| {
            // Triad-NVM III-C: a counter block its level-1 node marks as
            // unwritten since the last recovery starts again from zero.
            if level == 0 && r.marks_unwritten(self, index)? {
                bytes = r.tree.default_block(0);
                return Ok(());
            }
            r.scheme.verify_on_fetch(r, self, level, index, &bytes)
        })();
        self.verifying = nested;
        if !nested {
            self.verify_hashes += self.crypto.work.tree_hashes - before;
        }
        result?;
        self.install(r, addr, bytes, false);
        Ok(bytes)
    }

    /// Fetch a MAC line. MAC lines are checked by recomputing the data MAC,
    /// not by the tree.
    pub fn fetch_mac_line(&mut self, r: &Rules, addr: u64) -> [u8; 64] {
        if let Some(b) = self.on_chip(addr) {
            return b;
        }
        let b = self.nvm.read(&self.layout, addr).unwrap_or([0; 64]);
        self.install(r, addr, b, false);
        b
    }

    /// Put a line in its cache; a dirty victim goes to the victim buffer.
    /// A scheme that observes the caches hears what entered, what it
    /// replaced and what it evicted.
    pub fn install(&mut self, r: &Rules, addr: u64, bytes: [u8; 64], dirty: bool) {
        if dirty {
            self.victims.retain(|(a, _)| *a != addr);
        }
        let layout = &self.layout;
        if !self.observed {
            if let Some(v) = self.caches.for_addr(layout, addr).put(addr, bytes, dirty) {
                self.victims.push_back(v);
            }
            return;
        }
        let in_level_cache = self.caches.in_level_cache(layout, addr);
        let cache = self.caches.for_addr(layout, addr);
        let replaced = cache.peek(addr).map(|(b, _)| b);
        let evicted = cache.put_any(addr, bytes, dirty);
        let filled_way = if replaced.is_none() { cache.way_of(addr) } else { None };
        if let Some((v, b, true)) = evicted {
            self.victims.push_back((v, b));
        }
        r.scheme.on_cache_install(self, &CacheInstall { addr, bytes, replaced, evicted, filled_way, in_level_cache });
    }

    /// A line was taken out of its cache (a SIT write-back takes its line
    /// out before it fetches the parent).
    pub fn removed_from_cache(&mut self, r: &Rules, addr: u64, bytes: &[u8; 64]) {
        if self.observed {
            r.scheme.on_cache_remove(self, addr, bytes);
        }
    }

    /// Write a resident dirty line to NVM now and mark it clean.
    pub fn write_line_through(&mut self, addr: u64) {
        let layout = &self.layout;
        if let Some(b) = self.caches.for_addr(layout, addr).take_dirty(addr) {
            self.nvm.write(&self.layout, addr, b);
        }
    }

    /// A metadata line in its cache was changed and is dirty: the scheme
    /// decides what follows (its policy: persist it now or at eviction).
    pub fn metadata_dirtied(&mut self, r: &Rules, addr: u64) -> Result<(), CheckFailure> {
        r.scheme.on_metadata_dirty(r, self, addr)
    }

    pub fn policy_for(&self, addr: u64) -> WritePolicy {
        match self.layout.region(addr) {
            Some(Region::Tree { level, .. }) if level <= self.policy.tree_through_levels => WritePolicy::WriteThrough,
            Some(Region::Tree { .. }) => self.policy.tree,
            Some(Region::MacLine { .. }) => self.policy.mac,
            _ => self.policy.counter,
        }
    }

    pub fn is_mac_line(&self, addr: u64) -> bool {
        matches!(self.layout.region(addr), Some(Region::MacLine { .. }))
    }
}
