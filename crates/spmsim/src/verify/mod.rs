//! Verification: whether a scheme keeps its promises.
//!
//! - `oracle`: crash after every event (or sampled ones), drain, recover,
//!   and check every block against what the persistency model promises;
//! - `attack`: tamper with the persisted image as the threat model allows
//!   and check that the integrity checks notice;
//! - `image`: save, load and verify a machine's NVM image and chip state;
//! - `recovery`: price a real recovery's counted work;
//! - `fuzz_targets`: the inputs the outside world hands spmsim, for fuzzers.

pub mod attack;
pub mod fuzz_targets;
pub mod image;
pub mod oracle;
pub mod recovery;
