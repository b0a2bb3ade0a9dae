//! BBB's battery-backed persist buffer (SecPB Table II baseline), and the
//! control that shows SecPB's recoverability gap (SecPB Fig. 1b).
//!
//! ```text
//!  store -> PB beside L1D (plaintext) --drain--> MC --> NVM
//!  Bbb:    no security anywhere; the battery drains the PB.
//!  BbbGap: security at the MC, but the battery drains the PB straight to
//!          NVM: drained lines miss their counter, MAC and root update.
//! ```

use super::{Front, FrontDrain, MetadataPolicy, Scheme, SchemeWork, Steps};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Bbb {}

impl Scheme for Bbb {
    fn name(&self) -> &'static str {
        "bbb"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork {
            front: Front::PersistBuffer,
            secure: false,
            early: Steps::NONE,
            allocate_extra_accesses: 0,
            metadata: MetadataPolicy::uniform(WritePolicy::WriteThrough),
            front_drain: FrontDrain::Unsecured,
            battery_flushes_metadata: false,
            recovery_rebuilds_tree: false,
            ideal_metadata: false,
            deferred_root_updates: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct BbbGap {}

impl Scheme for BbbGap {
    fn name(&self) -> &'static str {
        "bbb-gap"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork { secure: true, ..Bbb {}.work() }
    }
}
