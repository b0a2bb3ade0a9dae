//! spmsim: a simulator of secure persistent memory.
//!
//! ```text
//!  workload events -> System { front end (direct | persist buffer | eADR caches)
//!                              -> MemoryController { crypto, metadata caches, tree, WPQ }
//!                              -> NVM image }
//!  crash -> battery drain -> recovery -> oracle / attack checks
//! ```
//! See `docs/architecture.md` for the architecture and the papers for the
//! rules each module cites.

pub mod api;

/// A digest of the library's source (see `build.rs`): records kept to
/// resume work carry it, so a build of other code does not reuse them.
pub const MODEL_DIGEST: &str = env!("SPMSIM_MODEL_DIGEST");

pub mod battery;
pub mod compare;
pub mod config;
pub mod engine;
pub mod machine;
pub mod persist;
pub mod reproduce;
pub mod scheme;
pub mod suite;
pub mod timing;
pub mod trace;
pub mod util;
pub mod verify;
pub mod workload;
