//! The on-chip root registers: one non-volatile register per top-level
//! tree node, holding its hash (BMT) or its counter (SIT). They are the
//! trust anchor of the integrity tree (SecPB II-B; STAR II-C), inside the
//! trusted chip (SecPB II-A), and survive power loss only where the
//! scheme's battery backs them.
//!
//! One value of this type exists per machine, in the chip state
//! ([`crate::engine::chip::ChipState`]); the tree reads and writes it there, and a
//! saved chip file stores it as it is.

use rustc_hash::FxHashMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Root registers by top-level node index. An absent register holds the
/// tree's initial value for its node (what a never-written tree hashes or
/// counts to), which only the tree knows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RootRegisters(FxHashMap<u64, u64>);

impl RootRegisters {
    /// The register of top node `index`, if it was ever written.
    pub fn get(&self, index: u64) -> Option<u64> {
        self.0.get(&index).copied()
    }
    /// The register of top node `index`, or `initial` if never written.
    pub fn value_or(&self, index: u64, initial: u64) -> u64 {
        self.get(index).unwrap_or(initial)
    }
    pub fn set(&mut self, index: u64, value: u64) {
        self.0.insert(index, value);
    }
    /// Every written register as (top node index, value), in no order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0.iter().map(|(&i, &v)| (i, v))
    }
    /// The top nodes whose register reads differently here than in
    /// `before` (written in one and not the other, or written with other
    /// values), in no order.
    pub fn differing_from<'a>(&'a self, before: &'a RootRegisters) -> impl Iterator<Item = u64> + 'a {
        let changed = self.0.iter().filter(move |(i, v)| before.0.get(i) != Some(v)).map(|(&i, _)| i);
        let dropped = before.0.keys().filter(move |i| !self.0.contains_key(i)).copied();
        changed.chain(dropped)
    }
    /// Power lost with no battery behind the registers: every one reads
    /// as never written.
    pub fn clear(&mut self) {
        self.0.clear();
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The registers as written to chip files and shown by `image inspect`:
    /// decimal node index -> value as 0x and 16 hex digits.
    pub fn to_hex_map(&self) -> BTreeMap<String, String> {
        self.0.iter().map(|(k, v)| (k.to_string(), format!("{v:#018x}"))).collect()
    }
}

impl Serialize for RootRegisters {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_hex_map().serialize(s)
    }
}

impl<'de> Deserialize<'de> for RootRegisters {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let b: BTreeMap<String, String> = BTreeMap::deserialize(d)?;
        let mut m = FxHashMap::default();
        for (k, v) in b {
            let k: u64 = k.parse().map_err(|e| serde::de::Error::custom(format!("root register index {k:?}: {e}")))?;
            let v = u64::from_str_radix(v.trim_start_matches("0x"), 16)
                .map_err(|e| serde::de::Error::custom(format!("root register {k} value {v:?}: {e}")))?;
            m.insert(k, v);
        }
        Ok(RootRegisters(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registers_round_trip_through_their_file_form() {
        let mut r = RootRegisters::default();
        r.set(0, 0xdead_beef);
        r.set(12, u64::MAX);
        let json = serde_json::to_string(&r).unwrap();
        assert_eq!(json, r#"{"0":"0x00000000deadbeef","12":"0xffffffffffffffff"}"#);
        let back: RootRegisters = serde_json::from_str(&json).unwrap();
        assert_eq!(back, r);
        assert_eq!((back.value_or(12, 7), back.value_or(3, 7)), (u64::MAX, 7));
    }

    #[test]
    fn a_damaged_register_is_named() {
        let e = serde_json::from_str::<RootRegisters>(r#"{"4":"0xzz"}"#).unwrap_err().to_string();
        assert!(e.contains("root register 4") && e.contains("0xzz"), "{e}");
        let e = serde_json::from_str::<RootRegisters>(r#"{"top":"0x1"}"#).unwrap_err().to_string();
        assert!(e.contains("root register index \"top\""), "{e}");
    }
}
