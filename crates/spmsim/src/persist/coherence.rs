//! Front ends of several cores kept coherent (SecPB IV-C c).
//!
//! Each core has its own front end (a SecPB, an eADR cache). A block's
//! persisted state may sit in one of them only, never replicated:
//! ```text
//!  core c writes b, held by core o's SecPB -> o's entry migrates to c's SecPB
//!       (its early counter, pad and BMT update come with it)
//!  core c reads b, held by core o's SecPB  -> o's entry is flushed to memory
//!       (complete tuple) while the data is served
//!  eADR: core c touches b, dirty in o's cache -> o writes the line back
//! ```
//! The directory that the paper keeps beside the metadata caches says
//! which core's front end may hold a block; it is checked against the
//! front end itself, so an entry drained since costs nothing. With one
//! core the directory is never consulted.

use super::{DataCache, FrontEnd};
use crate::controller::MemoryController;
use crate::store::CheckFailure;
use rustc_hash::FxHashMap;
use serde::Serialize;

/// What the coherence of the front ends did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CoherenceStats {
    /// SecPB entries moved to the core that wrote their block.
    pub migrations: u64,
    /// SecPB entries flushed to memory because another core read them.
    pub flushes: u64,
    /// Dirty eADR lines written back because another core took them.
    pub write_backs: u64,
}

/// What happened to a block held by another core, for the timing model
/// to price.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handover {
    /// No other core held it.
    None,
    /// Another core's entry moved here.
    Migrated,
    /// Another core's entry (or dirty line) went to memory.
    Flushed,
}

#[derive(Clone, Debug, Default)]
pub struct Coherence {
    /// Which core's front end may hold a block (may be stale: checked).
    owner: FxHashMap<u64, u8>,
    pub stats: CoherenceStats,
}

impl Coherence {
    /// Core `core` is about to store to `block`: take the block from any
    /// other core that holds it, and note `core` as its holder.
    pub fn before_store(
        &mut self,
        fronts: &mut [FrontEnd],
        mc: &mut MemoryController,
        core: usize,
        block: u64,
    ) -> Result<Handover, CheckFailure> {
        let prev = self.owner.insert(block, core as u8);
        let Some(o) = prev.map(usize::from).filter(|&o| o != core) else { return Ok(Handover::None) };
        let (from, to) = pair(fronts, o, core);
        match (from, to) {
            (FrontEnd::PersistBuffer(src), FrontEnd::PersistBuffer(dst)) => match src.take_entry(block) {
                Some(e) => {
                    dst.insert_entry(block, e);
                    self.stats.migrations += 1;
                    Ok(Handover::Migrated)
                }
                None => Ok(Handover::None),
            },
            (FrontEnd::CacheHierarchy(src), _) => self.write_back(src, mc, block),
            _ => Ok(Handover::None),
        }
    }

    /// Core `core` is about to load `block`: if another core's front end
    /// holds it, that core's copy goes to memory first, which then serves
    /// the data (SecPB IV-C c: flushed while the request is serviced).
    pub fn before_load(
        &mut self,
        fronts: &mut [FrontEnd],
        mc: &mut MemoryController,
        core: usize,
        block: u64,
    ) -> Result<Handover, CheckFailure> {
        let Some(o) = self.owner.get(&block).map(|&o| usize::from(o)).filter(|&o| o != core) else { return Ok(Handover::None) };
        self.owner.remove(&block);
        match &mut fronts[o] {
            FrontEnd::PersistBuffer(src) => match src.flush_entry(mc, block)? {
                Some(_) => {
                    self.stats.flushes += 1;
                    Ok(Handover::Flushed)
                }
                None => Ok(Handover::None),
            },
            FrontEnd::CacheHierarchy(src) => self.write_back(src, mc, block),
            FrontEnd::Direct => Ok(Handover::None),
        }
    }
}

impl Coherence {
    /// Another core's dirty eADR line for `block` goes to memory.
    fn write_back(&mut self, src: &mut DataCache, mc: &mut MemoryController, block: u64) -> Result<Handover, CheckFailure> {
        let wrote = src.write_back(mc, block)?;
        self.stats.write_backs += wrote as u64;
        Ok(if wrote { Handover::Flushed } else { Handover::None })
    }
}

/// Two distinct elements of `v`, mutably.
fn pair<T>(v: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b);
    if a < b {
        let (x, y) = v.split_at_mut(b);
        (&mut x[a], &mut y[0])
    } else {
        let (x, y) = v.split_at_mut(a);
        (&mut y[0], &mut x[b])
    }
}
