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

use crate::config::WritePolicy;
use crate::engine::chip::ChipState;
use crate::engine::crypto::CryptoEngine;
use crate::engine::layout::{Layout, Region};
use crate::engine::metacache::MetaCaches;
use crate::engine::nvm::Nvm;
use crate::engine::tree::IntegrityTree;
use crate::scheme::{MetadataPolicy, SchemeKind};
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
    /// The trusted chip state: keys, the crash flag and the root registers
    /// (`chip.roots`, one per top-level node), which the tree keeps here.
    pub chip: ChipState,
    /// The scheme whose hooks the mechanism calls (crate::scheme).
    pub scheme: SchemeKind,
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
    /// Anubis's shadow-tree updates (one per shadow-table write).
    pub shadow_tree_updates: u64,
    /// A verification is under way (its parents' nested ones are counted
    /// with it).
    verifying: bool,
    /// When set, every line that enters, changes in or leaves a metadata
    /// cache is added to the chip's Read Hash or Write Hash
    /// (`chip.mset`, Kubo et al. 4.2) under this hasher.
    pub mset: Option<crate::engine::crypto::MsetHasher>,
    /// Lines leaving a cache are added to Write Hash (false: the control
    /// `mset-no-write-hash`, whose evictions skip it).
    pub mset_log_evictions: bool,
    /// Anubis tracking (AGIT, Zubair and Awad ISCA 2019): a line that fills
    /// a way of the metadata cache (with the multiset registers) or of the
    /// level cache (without) writes its address to that way's entry of the
    /// recovery area, so a recovery knows what the cache held.
    pub track_fills: bool,
    /// ASSURE's writes per node of its hot tree's level in the current
    /// epoch: the controller's volatile bookkeeping.
    pub epoch_counts: crate::scheme::EpochCounts,
}

impl MetaStore {
    /// A store over these parts, with no work counted yet.
    pub fn new(layout: Layout, crypto: CryptoEngine, nvm: Nvm, caches: MetaCaches, chip: ChipState, scheme: SchemeKind) -> Self {
        let mut st = Self::untracked(layout, crypto, nvm, caches, chip, scheme);
        // The multiset-hash scheme logs its cache from the start.
        match scheme {
            SchemeKind::Mset(m) => {
                st.track_multiset();
                st.track_fills = true;
                st.mset_log_evictions = m.write_hash;
            }
            // CacheTree lists its HNode cache's lines the same way.
            SchemeKind::CacheTree(_) => st.track_fills = true,
            _ => {}
        }
        st
    }

    fn untracked(layout: Layout, crypto: CryptoEngine, nvm: Nvm, caches: MetaCaches, chip: ChipState, scheme: SchemeKind) -> Self {
        MetaStore {
            layout,
            crypto,
            nvm,
            caches,
            victims: VecDeque::new(),
            chip,
            scheme,
            policy: scheme.work().metadata,
            root_updates: 0,
            verify_hashes: 0,
            mac_in_data_line: false,
            shadow_tree_updates: 0,
            verifying: false,
            mset: None,
            mset_log_evictions: true,
            track_fills: false,
            epoch_counts: Default::default(),
        }
    }

    /// Start logging the metadata caches into the chip's Read Hash and
    /// Write Hash, from empty caches and registers (a machine just
    /// started: nothing is cached yet).
    pub fn track_multiset(&mut self) {
        self.mset = Some(crate::engine::crypto::MsetHasher::derive(self.chip.seed));
        // A chip state loaded from a saved machine keeps its registers.
        self.chip.mset.get_or_insert_with(Default::default);
    }

    /// Stop logging into Read Hash and Write Hash (the registers keep what
    /// they hold). For a harness whose reads no recovery will follow.
    pub fn stop_multiset_logging(&mut self) {
        self.mset = None;
    }

    /// A line entered a cache or a cached line took a new value.
    fn log_read(&mut self, addr: u64, bytes: &[u8; 64]) {
        if let (Some(h), Some(r)) = (&self.mset, &mut self.chip.mset) {
            h.add(&mut r.read, addr, bytes);
            self.crypto.work.read_hash_adds += 1;
        }
    }

    /// A line left a cache or a cached line gave up this value.
    pub fn log_write(&mut self, addr: u64, bytes: &[u8; 64]) {
        if let (Some(h), Some(r)) = (&self.mset, &mut self.chip.mset) {
            h.add(&mut r.write, addr, bytes);
            self.crypto.work.write_hash_adds += 1;
        }
    }

    /// The registers' check (Kubo et al. 4.2): every cached line added to
    /// Write Hash gives Read Hash. None when the caches are not tracked.
    pub fn multiset_consistent(&self) -> Option<bool> {
        let (h, r) = (self.mset.as_ref()?, self.chip.mset?);
        let mut cached = r.write;
        for (_, c) in self.caches.all() {
            for (a, l) in c.entries() {
                h.add(&mut cached, a, &l.bytes);
            }
        }
        Some(cached == r.read)
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

    /// The newest copy of a metadata line (cache, victim buffer, WPQ,
    /// image), with no access counted, no verification and no line moved:
    /// for the simulator's own bookkeeping, never for a secure read.
    pub fn peek_line(&self, addr: u64) -> Option<[u8; 64]> {
        self.caches.peek(&self.layout, addr).or_else(|| self.victim(addr)).or_else(|| self.nvm.peek(addr))
    }

    /// Fetch a counter block or tree node, verifying it if it comes from NVM.
    pub fn fetch(&mut self, tree: &IntegrityTree, addr: u64) -> Result<[u8; 64], CheckFailure> {
        let layout = &self.layout;
        if let Some(b) = self.caches.for_addr(layout, addr).get(addr) {
            return Ok(b);
        }
        self.fetch_off_cache(tree, addr)
    }

    /// Fetch a line and install it changed by `f` as dirty: a [`Self::fetch`]
    /// then an [`Self::install`], with one cache lookup when it hits.
    pub fn update(&mut self, tree: &IntegrityTree, addr: u64, f: impl FnOnce(&mut [u8; 64])) -> Result<[u8; 64], CheckFailure> {
        let layout = &self.layout;
        if let Some(line) = self.caches.for_addr(layout, addr).update(addr) {
            let old = *line;
            f(line);
            let b = *line;
            if !self.victims.is_empty() {
                self.victims.retain(|(a, _)| *a != addr);
            }
            if self.mset.is_some() {
                self.log_write(addr, &old);
                self.log_read(addr, &b);
            }
            return Ok(b);
        }
        let mut b = self.fetch_off_cache(tree, addr)?;
        f(&mut b);
        self.install(addr, b, true);
        Ok(b)
    }

    /// The miss path of [`Self::fetch`] after the cache lookup: the victim
    /// buffer, else NVM (or the tree's default block), verified and installed.
    fn fetch_off_cache(&mut self, tree: &IntegrityTree, addr: u64) -> Result<[u8; 64], CheckFailure> {
        if let Some(b) = self.victim(addr) {
            return Ok(b);
        }
        let (level, index) = self.layout.meta_pos(addr).expect("metadata address");
        let mut bytes = self.nvm.read(&self.layout, addr).unwrap_or_else(|| tree.default_block(level));
        let scheme = self.scheme;
        let nested = self.verifying;
        let before = self.crypto.work.tree_hashes;
        self.verifying = true;
        let r = (|| {
            // Triad-NVM III-C: a counter block its level-1 node marks as
            // unwritten since the last recovery starts again from zero.
            if level == 0 && tree.marks_unwritten(self, index)? {
                bytes = tree.default_block(0);
                return Ok(());
            }
            scheme.plugin().verify_on_fetch(tree, self, level, index, &bytes)
        })();
        self.verifying = nested;
        if !nested {
            self.verify_hashes += self.crypto.work.tree_hashes - before;
        }
        r?;
        self.install(addr, bytes, false);
        Ok(bytes)
    }

    /// Fetch a MAC line. MAC lines are checked by recomputing the data MAC,
    /// not by the tree.
    pub fn fetch_mac_line(&mut self, addr: u64) -> [u8; 64] {
        if let Some(b) = self.on_chip(addr) {
            return b;
        }
        let b = self.nvm.read(&self.layout, addr).unwrap_or([0; 64]);
        self.install(addr, b, false);
        b
    }

    /// Put a line in its cache; a dirty victim goes to the victim buffer.
    pub fn install(&mut self, addr: u64, bytes: [u8; 64], dirty: bool) {
        if dirty {
            self.victims.retain(|(a, _)| *a != addr);
        }
        let layout = &self.layout;
        if self.mset.is_some() {
            let cache = self.caches.for_addr(layout, addr);
            let old = cache.peek(addr);
            let left = cache.put_any(addr, bytes, dirty);
            let way = if old.is_none() && self.track_fills { cache.way_of(addr) } else { None };
            if let Some((old, _)) = old {
                self.log_write(addr, &old);
            }
            if let Some((v, b, was_dirty)) = left {
                if self.mset_log_evictions {
                    self.log_write(v, &b);
                }
                if was_dirty {
                    self.victims.push_back((v, b));
                }
            }
            self.log_read(addr, &bytes);
            if let Some(w) = way {
                self.write_tracking_entry(w, Some(addr));
            }
            return;
        }
        let cache = self.caches.for_addr(layout, addr);
        let fill = self.track_fills && !cache.contains(addr);
        if let Some(v) = cache.put(addr, bytes, dirty) {
            self.victims.push_back(v);
        }
        // Without the registers, only a level cache is tracked (CacheTree's
        // HNode cache).
        if let Some(w) = fill.then(|| self.caches.level_cache_way(&self.layout, addr)).flatten() {
            self.write_tracking_entry(w, Some(addr));
        }
    }

    /// Way `way`'s tracking entry in the recovery area now lists `addr`
    /// (None: the way is empty). Address + 1: an all-zero entry is an
    /// empty way.
    pub fn write_tracking_entry(&mut self, way: usize, addr: Option<u64>) {
        let mut entry = [0u8; 64];
        entry[..8].copy_from_slice(&addr.map_or(0, |a| a + 1).to_le_bytes());
        self.nvm.write(&self.layout, self.layout.recovery_addr(way as u64), entry);
    }

    /// The tracking table in NVM (Anubis's AGIT, as the multiset-hash
    /// scheme and CacheTree keep it): each way's entry and the metadata
    /// line it lists, read (and counted) as a recovery reads it.
    pub fn read_tracking_table(&mut self) -> Vec<(u64, u64)> {
        let layout = self.layout.clone();
        let Some((base, lines)) = layout.recovery else { return Vec::new() };
        (0..lines)
            .filter_map(|w| {
                let e = self.nvm.read(&layout, base + w)?;
                let a = u64::from_le_bytes(e[..8].try_into().expect("8 bytes")).checked_sub(1)?;
                layout.meta_pos(a).map(|_| (w, a))
            })
            .collect()
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
    pub fn metadata_dirtied(&mut self, tree: &IntegrityTree, addr: u64) -> Result<(), CheckFailure> {
        let scheme = self.scheme;
        scheme.plugin().on_metadata_dirty(tree, self, addr)
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
