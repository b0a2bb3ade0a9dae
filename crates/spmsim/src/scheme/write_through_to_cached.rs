//! The write-through-to-cached reading of the multiset-hash paper's
//! unstated baseline (Kubo et al. 5.1; the readings of
//! `configs/reference/mset.toml`): a write-through metadata cache whose
//! updates stop at the first line of their path the cache held before
//! them, which acts as a root (4.3 names the optimisation as the
//! conventional one).
//!
//! ```text
//!  write: counter block changed and written through; if it was cached
//!         before the write, it takes the change (its parent lacks it,
//!         marked by the line's dirty bit); else its hash goes into its
//!         parent, written through, and so on up to the first line cached
//!         before the write (which takes it, dirty) or the root register
//!  evict: a dirty line (its parent lacks its change; NVM has it) is
//!         hashed into its path the same way, up to the next line cached
//!         before the eviction
//!  crash: the battery flushes the dirty lines, lowest level first, each
//!         hashed into its parent, up to the root register
//! ```
//! "Cached before" is a line the cache held when the step began (an
//! operation, or the handling of one victim): a line the step fetched, to
//! verify the path, is not one. The invariant: a line's parent entry is its
//! hash in NVM unless the line is on chip and dirty; every line's NVM copy
//! is current (every change is written through).

use super::params::{yes, Completion, Need, SchemeParams, SchemeWork, TreeType, WRITE_THROUGH};
use super::{Registered, Role};
use crate::engine::counter::bmt_set_slot;
use crate::engine::hooks::Scheme;
use crate::engine::layout::Layout;
use crate::engine::rules::Rules;
use crate::engine::shape::SchemeShape;
use crate::engine::store::{CheckFailure, MetaStore};
use crate::engine::tree::{BonsaiMerkleTree, IntegrityTree};
use std::cell::RefCell;
use crate::config::SimConfig;
use serde::{Deserialize, Serialize};

/// The write-through-to-cached reading of the multiset-hash paper's
/// unstated baseline (5.1; configs/reference/mset.toml's readings): every
/// change is written through, but a write changes its counter block and
/// the tree only up to the first line of its path the metadata cache held
/// before it, which takes the change as a root (4.3's "conventional"
/// optimisation; the counter block itself when it was cached). A line
/// whose parent lacks its change is hashed into its path, up to the next
/// line cached before, when it leaves the cache; a battery finishes those
/// changes at a power failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteThroughToCached {
    /// The battery flushes the metadata cache at a power failure (false:
    /// the control `mset-baseline-cached-no-battery`, which loses the
    /// changes that cached lines hold for their parents).
    #[serde(default = "yes")]
    pub battery: bool,
}

impl Default for WriteThroughToCached {
    fn default() -> Self {
        WriteThroughToCached { battery: true }
    }
}

impl SchemeParams for WriteThroughToCached {
    fn name(&self) -> &'static str {
        "write-through-to-cached"
    }
    /// Written through up to the first line cached before the write, which
    /// takes the change on chip: complete once the update reaches it, as
    /// CacheTree's (Kubo et al. 3.2).
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, self.battery, false).completing(Completion::Root)
    }
    fn needs(&self) -> Vec<Need> {
        vec![Need::Tree { tree: TreeType::Bmt, no_onchip_levels: true, why: "stops a Bonsai Merkle tree's updates at cached nodes" }]
    }
}

impl Registered for WriteThroughToCached {
    fn role(&self) -> Role {
        Role::MetadataRules
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(WriteThroughToCachedRuntime::default())
    }
    /// A flush hashes each dirty line into its parent, lowest level first.
    fn shape(&self, _tree: &Layout, _cfg: &SimConfig) -> SchemeShape {
        SchemeShape { write_back_hashes_into_parent: true, ..SchemeShape::default() }
    }
}

/// The runtime: the lines fetched from NVM in the current step (the
/// step's number and their addresses).
#[derive(Clone, Debug, Default)]
pub struct WriteThroughToCachedRuntime {
    fetched: RefCell<(u64, Vec<u64>)>,
}

fn bmt(tree: &IntegrityTree) -> &BonsaiMerkleTree {
    tree.as_bmt().expect("write-through-to-cached requires a BMT")
}

impl WriteThroughToCachedRuntime {
    /// Whether line `addr` was on chip when the current step began.
    fn cached_before(&self, st: &MetaStore, addr: u64) -> bool {
        let f = self.fetched.borrow();
        st.is_on_chip(addr) && !(f.0 == st.steps && f.1.contains(&addr))
    }

    /// Line (level, index), now `bytes` and written through, is hashed
    /// into its parent, and each changed parent into its own: every line
    /// changed is written through; the first one cached before the step
    /// takes the change and stays dirty (its parent lacks it), or the root
    /// register does.
    fn hash_up(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let t = bmt(&r.tree);
        let (mut level, mut index, mut cur) = (level, index, bytes);
        loop {
            let h = st.crypto.bmt_hash(&cur);
            let Some((pl, pi, slot)) = st.layout.parent_of(level, index) else {
                st.chip.roots.set(index, h);
                st.root_updates += 1;
                return Ok(());
            };
            let pa = st.layout.meta_addr(pl, pi);
            let stops = self.cached_before(st, pa);
            let e = t.entry_for(level, h);
            let p = st.update(r, pa, |p| bmt_set_slot(p, slot, e))?;
            if stops {
                st.nvm.write(&st.layout, pa, p);
                return Ok(());
            }
            st.write_line_through(pa);
            (level, index, cur) = (pl, pi, p);
        }
    }
}

impl Scheme for WriteThroughToCachedRuntime {
    /// A line fetched in this step is not one the cache held before it.
    fn verify_on_fetch(&self, r: &Rules, st: &mut MetaStore, level: u32, index: u64, bytes: &[u8; 64]) -> Result<(), CheckFailure> {
        {
            let mut f = self.fetched.borrow_mut();
            if f.0 != st.steps {
                *f = (st.steps, Vec::new());
            }
            f.1.push(st.layout.meta_addr(level, index));
        }
        r.verify(st, level, index, bytes)
    }

    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        let addr = st.layout.meta_addr(0, index);
        let stops = self.cached_before(st, addr);
        st.install(r, addr, bytes, true);
        if stops {
            st.nvm.write(&st.layout, addr, bytes);
            return Ok(());
        }
        st.write_line_through(addr);
        self.hash_up(r, st, 0, index, bytes)
    }

    /// Its NVM copy is current; its parent takes its change now.
    fn on_metadata_evict(&self, r: &Rules, st: &mut MetaStore, addr: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        match st.layout.meta_pos(addr) {
            Some((level, index)) => self.hash_up(r, st, level, index, bytes),
            None => r.write_back(st, addr, bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::config::load_preset;
    use crate::machine::System;
    use crate::workload::Event;

    /// mset's machine in 64 MiB with the write-through-to-cached baseline
    /// and a metadata cache of `bytes`.
    fn machine(bytes: u64) -> System {
        let cache = format!("metadata_cache.organization={{type=\"unified\",unified={{capacity_bytes={bytes},ways=4}}}}");
        let sets = ["memory.capacity_bytes=67108864".to_string(), cache];
        System::new(&load_preset("mset-baseline-cached", &sets).unwrap(), 5)
    }

    fn store(s: &mut System, addr: u64, v: u64) {
        s.apply(&Event::store(addr, 8, v, false)).unwrap();
    }

    /// A write whose counter block the cache did not hold writes its path
    /// up to the root; a second write to the same counter block, cached
    /// now, writes that block alone, and its parent lacks the change.
    #[test]
    fn a_write_stops_at_the_first_line_its_cache_held() {
        let mut s = machine(128 << 10);
        let levels = s.mc.layout().levels() as u64;
        s.mc.write(0, &[1; 64]).unwrap();
        let first = s.mc.st.nvm.enqueued;
        assert_eq!((first.data, first.counter, first.tree), (1, 1, levels - 1), "a cold path is written through to the root");
        assert!(s.mc.st.caches.dirty_lines().is_empty(), "every parent holds its child's change");
        let roots = s.mc.st.root_updates;
        s.mc.write(1, &[2; 64]).unwrap();
        let second = s.mc.st.nvm.enqueued;
        assert_eq!((second.counter - first.counter, second.tree - first.tree), (1, 0), "the cached counter block takes the change");
        assert_eq!(s.mc.st.root_updates, roots, "no root update");
        assert_eq!(s.mc.st.caches.dirty_lines().len(), 1, "the counter block's parent lacks its change");
        // A counter block on another page under the same level-1 node:
        // fetched, so its change goes into that node, cached before it.
        s.mc.write(64, &[3; 64]).unwrap();
        let third = s.mc.st.nvm.enqueued;
        assert_eq!((third.counter - second.counter, third.tree - second.tree), (1, 1), "up to the cached level-1 node");
        assert_eq!(s.mc.st.root_updates, roots, "no root update");
        assert_eq!(s.mc.read(1).unwrap(), [2; 64]);
    }

    /// Through evictions and a power failure the tree stays sound: every
    /// value reads back after recovery, and a smaller cache writes more.
    #[test]
    fn evictions_and_a_crash_keep_the_tree_sound() {
        let mut writes = Vec::new();
        for bytes in [1 << 10, 64 << 10] {
            let mut s = machine(bytes);
            let blocks: Vec<u64> = (0..400u64).map(|i| (i * 7919 % 4096) * 4096 + (i % 3) * 64).collect();
            for (i, &a) in blocks.iter().enumerate() {
                store(&mut s, a, i as u64 + 1);
            }
            writes.push(s.mc.st.nvm.enqueued.tree + s.mc.st.nvm.enqueued.counter);
            s.power_fail();
            let rep = s.recover();
            assert!(rep.ok(), "{bytes} B: {rep:?}");
            for (i, &a) in blocks.iter().enumerate() {
                let last = blocks.iter().rposition(|&b| b == a).unwrap();
                if last == i {
                    assert_eq!(s.mc.read(a / 64).unwrap()[..8], (i as u64 + 1).to_le_bytes(), "{bytes} B: block {a:#x}");
                }
            }
        }
        assert!(writes[0] > writes[1], "a smaller cache writes more metadata: {writes:?}");
    }
}
