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
//! The paper keeps a directory beside the metadata caches saying which
//! core's SecPB holds a block; the model asks the front ends themselves,
//! which gives the same answer. With one core nothing is asked.

use super::{DataCache, FrontEnd};
use crate::engine::controller::MemoryController;
use crate::engine::store::CheckFailure;
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
    pub stats: CoherenceStats,
}

/// The core other than `core` whose front end holds `block`, if any. The
/// paper's directory beside the metadata caches answers this; here the
/// front ends themselves are asked (each holds a few dozen entries), so
/// the answer is never stale and costs no memory per block.
fn holder(fronts: &[FrontEnd], core: usize, block: u64) -> Option<usize> {
    fronts.iter().enumerate().position(|(i, f)| {
        i != core
            && match f {
                FrontEnd::PersistBuffer(pb) => pb.contains(block),
                FrontEnd::CacheHierarchy(c) => c.holds_dirty(block),
                FrontEnd::Tep(t) => t.contains(block),
                FrontEnd::Direct => false,
            }
    })
}

impl Coherence {
    /// Core `core` is about to write (`write`) or read `block`: another
    /// core's SecPB entry for it migrates here on a write and is flushed
    /// to memory on a read (SecPB IV-C c: the data is served while the
    /// tuple completes); another core's dirty eADR line is written back.
    pub fn claim(
        &mut self,
        fronts: &mut [FrontEnd],
        mc: &mut MemoryController,
        core: usize,
        block: u64,
        write: bool,
    ) -> Result<Handover, CheckFailure> {
        let Some(o) = holder(fronts, core, block) else { return Ok(Handover::None) };
        match pair(fronts, o, core) {
            (FrontEnd::PersistBuffer(src), FrontEnd::PersistBuffer(dst)) if write => {
                let e = src.take_entry(block).expect("the holder holds the block");
                dst.insert_entry(block, e);
                self.stats.migrations += 1;
                Ok(Handover::Migrated)
            }
            (FrontEnd::PersistBuffer(src), _) => {
                src.flush_entry(mc, block)?;
                self.stats.flushes += 1;
                Ok(Handover::Flushed)
            }
            (FrontEnd::CacheHierarchy(src), _) => self.write_back(src, mc, block),
            (FrontEnd::Tep(src), _) => {
                // Another core's L1D line goes to memory by TEP's own order
                // (its log first) before this core sees or overwrites it.
                src.flush_block(mc, block)?;
                self.stats.flushes += 1;
                Ok(Handover::Flushed)
            }
            (FrontEnd::Direct, _) => Ok(Handover::None),
        }
    }

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
