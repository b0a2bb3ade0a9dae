//! What a scheme answers once, when the engine is assembled: plain data
//! the engine builds its parts from, not hooks it calls.
//!
//! ```text
//!  Registered::shape(tree layout, cfg) --> SchemeShape     (scheme::shape(cfg))
//!        |  MemoryController::assemble
//!        v
//!  layout     reserved_recovery_lines after the tree
//!  crypto     volatile_key_covers_all_memory (and at every new boot)
//!  BMT        level1_entry_hash_bits, zero_level1_entry_marks_unwritten
//!  SIT        sit_mac_carries_parent_lsbs
//!  caches     extra_level_cache
//!  store      calls_cache_hooks
//!  Rules      the whole shape, kept: write_back_hashes_into_parent (a
//!             flush's order), recovery_restores_dirty_lines (the oracle)
//! ```
//! Every field's default is the plain engine's, so a scheme sets only what
//! its paper changes.

use super::metacache::LevelCacheGeometry;

/// A scheme's answers to the engine's questions at assembly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchemeShape {
    /// Bits of a counter block's hash its level-1 BMT entry keeps (64; a
    /// scheme that takes spare bits there says fewer).
    pub level1_entry_hash_bits: u32,
    /// A zero level-1 BMT entry marks a counter block as not written since
    /// the last recovery, which then starts again from zero (Triad-NVM
    /// III-C's lazy recovery of the non-persistent subtree).
    pub zero_level1_entry_marks_unwritten: bool,
    /// A SIT node written back carries the 10 LSBs of its parent's counter
    /// in the spare bits of its MAC field (STAR III-B).
    pub sit_mac_carries_parent_lsbs: bool,
    /// The volatile key set covers all of memory, persistent regions too
    /// (Triad-NVM's no-persistence baseline). Default: the non-persistent
    /// regions only.
    pub volatile_key_covers_all_memory: bool,
    /// The tree is updated lazily: a change stops at its cached line, and a
    /// dirty line hashes into its parent only when it is written back (the
    /// multiset-hash scheme, Kubo et al. 4.3). A flush then writes lines
    /// back lowest level first, through `Scheme::on_metadata_evict`, and
    /// the battery pays a hash for each line it flushes.
    pub write_back_hashes_into_parent: bool,
    /// A cache of the scheme's own for the nodes of one tree level, which
    /// the engine builds beside the metadata caches (CacheTree's HNode
    /// cache).
    pub extra_level_cache: Option<LevelCacheGeometry>,
    /// Blocks of NVM the engine reserves after the tree for the scheme's
    /// own recovery state (STAR's recovery area of bitmap lines, Anubis's
    /// shadow table, a tracking table); 0: none.
    pub reserved_recovery_lines: u64,
    /// The engine tells the scheme of every line entering, changing in or
    /// leaving a metadata cache (`Scheme::on_cache_install` and the rest);
    /// schemes that do not ask pay nothing for it.
    pub calls_cache_hooks: bool,
    /// Recovery restores the dirty metadata lines the crash lost (STAR,
    /// Anubis): the crash oracle then checks each against the cache's copy.
    pub recovery_restores_dirty_lines: bool,
}

impl Default for SchemeShape {
    /// The plain engine: whole level-1 hashes, no lazy tree, no cache or
    /// recovery area of the scheme's own, no cache hooks.
    fn default() -> Self {
        SchemeShape {
            level1_entry_hash_bits: 64,
            zero_level1_entry_marks_unwritten: false,
            sit_mac_carries_parent_lsbs: false,
            volatile_key_covers_all_memory: false,
            write_back_hashes_into_parent: false,
            extra_level_cache: None,
            reserved_recovery_lines: 0,
            calls_cache_hooks: false,
            recovery_restores_dirty_lines: false,
        }
    }
}
