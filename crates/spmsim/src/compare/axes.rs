//! The axes an exploration spans besides the presets: the persistency
//! models, the trees and the front ends each memory-controller scheme's
//! metadata rules are put behind. The exploration walks them; its
//! provenance records them.

use super::Options;
use crate::config::PersistencyModel;
use crate::scheme::{FrontChoice, SecPbVariant};

/// The persistency models explored.
pub const MODELS: [PersistencyModel; 3] = [PersistencyModel::Strict, PersistencyModel::Epoch, PersistencyModel::Tep];
/// The trees explored.
pub const TREES: [&str; 2] = ["bmt", "sit"];
/// The other front ends each memory-controller scheme's metadata rules are
/// put behind under `--quick` (set before any was run): SecPB's chosen
/// design (COBCM, everything late, SecPB VI), its opposite (NoGap,
/// everything early) and eADR's caches. Without `--quick`: all seven.
pub const QUICK_FRONTS: [FrontChoice; 3] =
    [FrontChoice::PersistBuffer(SecPbVariant::Cobcm), FrontChoice::PersistBuffer(SecPbVariant::Nogap), FrontChoice::CacheHierarchy];

/// The front ends `opts` explores besides each preset's own.
pub fn fronts(opts: &Options) -> Vec<FrontChoice> {
    match (&opts.fronts, opts.quick) {
        (Some(f), _) => f.clone(),
        (None, true) => QUICK_FRONTS.to_vec(),
        (None, false) => FrontChoice::ALL.into_iter().filter(|f| *f != FrontChoice::MemoryController).collect(),
    }
}
