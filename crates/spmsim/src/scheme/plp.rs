//! SP, SecPB's strict-persistency baseline, as PLP builds it: every store
//! is flushed and its memory tuple (data, counter, MAC, BMT root) persists
//! at the MC before the next store; BMT nodes are written back and rebuilt
//! from the persisted counters after a crash (SecPB VI-A; PLP).
//!
//! ```text
//!  store --flush--> MC: counter++, OTP, ct, MAC, root update --> WPQ (ADR)
//!  recovery: rebuild the BMT from counter blocks, compare with the root register
//! ```

use super::{MetadataPolicy, Scheme, SchemeWork};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Plp {}

impl Scheme for Plp {
    fn name(&self) -> &'static str {
        "sp"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteThrough).with_tree(WritePolicy::WriteBack), false, true)
    }
}
