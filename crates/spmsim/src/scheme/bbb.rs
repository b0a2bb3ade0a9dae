//! BBB's battery-backed persist buffer, no security (SecPB's insecure
//! baseline, Table II): its rules are all data.

use super::params::{SchemeParams, SchemeWork, Steps, WRITE_THROUGH};
use super::{Composed, FrontChoice, MetadataChoice, Registered, Role, SecPbVariant};
use serde::{Deserialize, Serialize};

/// BBB's battery-backed persist buffer, no security: the battery drains
/// the plaintext buffer to NVM (SecPB Table II baseline).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Bbb {}

impl SchemeParams for Bbb {
    fn name(&self) -> &'static str {
        "bbb"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork::at_persist_buffer(false, Steps::NONE, WRITE_THROUGH, false)
    }
}

impl Registered for Bbb {
    fn role(&self) -> Role {
        // A persist buffer with every step late and no security engine.
        Role::Pair(Composed { front: FrontChoice::PersistBuffer(SecPbVariant::Cobcm), metadata: MetadataChoice::NONE })
    }
}
