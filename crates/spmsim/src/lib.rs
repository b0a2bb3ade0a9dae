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
pub mod attack;
pub mod battery;
pub mod chip;
pub mod compare;
pub mod config;
pub mod controller;
pub mod counter;
pub mod crypto;
pub mod event;
pub mod fuzz_targets;
pub mod image;
pub mod layout;
pub mod metacache;
pub mod nvm;
pub mod oracle;
pub mod output;
pub mod persist;
pub mod recovery;
pub mod reproduce;
pub mod rng;
pub mod roots;
pub mod scheme;
pub mod set_assoc;
pub mod stats_text;
pub mod store;
pub mod suite;
pub mod system;
pub mod timing;
pub mod trace;
pub mod tree;
pub mod workload;
