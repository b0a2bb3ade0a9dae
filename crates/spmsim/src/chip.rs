//! The trusted chip state: keys and on-chip non-volatile registers. It is
//! saved apart from the NVM image and never placed in it (threat model:
//! SecPB II-A, the chip is the trusted computing base).

use crate::config::SimConfig;
use crate::crypto::KeySet;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipState {
    pub seed: u64,
    pub keys: KeySet,
    /// Root registers: top-level node index -> hash (BMT) or counter (SIT).
    /// Absent entries hold the tree's initial value.
    #[serde(with = "roots_serde")]
    pub roots: FxHashMap<u64, u64>,
    /// The last power-off was a power failure, not an orderly shutdown: an
    /// on-chip flag (hardware knows which path it took), so that whoever
    /// powers the machine on knows the scheme's recovery must run first.
    /// Chip states saved before the flag existed read as clean.
    #[serde(default)]
    pub crashed: bool,
}

impl ChipState {
    pub fn new(cfg: &SimConfig, seed: u64) -> Self {
        ChipState { seed, keys: KeySet::derive(seed, cfg.security.aes_key_bits), roots: FxHashMap::default(), crashed: false }
    }
}

mod roots_serde {
    use rustc_hash::FxHashMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<S: Serializer>(m: &FxHashMap<u64, u64>, s: S) -> Result<S::Ok, S::Error> {
        let b: BTreeMap<String, String> = m.iter().map(|(k, v)| (k.to_string(), format!("{v:#018x}"))).collect();
        b.serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<FxHashMap<u64, u64>, D::Error> {
        let b: BTreeMap<String, String> = BTreeMap::deserialize(d)?;
        let mut m = FxHashMap::default();
        for (k, v) in b {
            let k: u64 = k.parse().map_err(serde::de::Error::custom)?;
            let v = u64::from_str_radix(v.trim_start_matches("0x"), 16).map_err(serde::de::Error::custom)?;
            m.insert(k, v);
        }
        Ok(m)
    }
}
