//! The trusted chip state: keys and on-chip non-volatile registers. It is
//! saved apart from the NVM image and never placed in it (threat model:
//! SecPB II-A, the chip is the trusted computing base).
//!
//! ```text
//!  ChipState { seed, keys, roots, crashed, boots,
//!              scheme: SchemeNv }   <- one field, whose type the scheme's
//!                                      runtime defines (its registers,
//!                                      queues, bitmap lines in ADR)
//! ```

use crate::config::SimConfig;
use crate::engine::crypto::KeySet;
use crate::engine::roots::RootRegisters;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use std::any::Any;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipState {
    pub seed: u64,
    pub keys: KeySet,
    /// Root registers: top-level node index -> hash (BMT) or counter (SIT).
    /// The only copy: the tree reads and writes them here (through the
    /// memory controller's store), and a chip file saves them as they are.
    pub roots: RootRegisters,
    /// The last power-off was a power failure, not an orderly shutdown: an
    /// on-chip flag (hardware knows which path it took), so that whoever
    /// powers the machine on knows the scheme's recovery must run first.
    /// Chip states saved before the flag existed read as clean.
    #[serde(default)]
    pub crashed: bool,
    /// Recoveries so far: the volatile key set of the non-persistent
    /// regions is the one of this boot (Triad-NVM III-B1), so a recovery
    /// moves it on and no one-time pad of an earlier boot comes back.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub boots: u64,
    /// The scheme's own non-volatile state (on chip or in its battery
    /// domain), as its runtime defines it.
    #[serde(default, skip_serializing_if = "SchemeNv::is_empty")]
    pub scheme: SchemeNv,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl ChipState {
    pub fn new(cfg: &SimConfig, seed: u64) -> Self {
        ChipState {
            seed,
            keys: KeySet::derive(seed, cfg.security.aes_key_bits),
            roots: RootRegisters::default(),
            crashed: false,
            boots: 0,
            scheme: SchemeNv::default(),
        }
    }
}

/// A scheme's non-volatile state: a value of the scheme's own type, which
/// the engine holds, clones, compares and saves without knowing it.
pub trait NvState: Any + Send + Sync + std::fmt::Debug {
    fn clone_box(&self) -> Box<dyn NvState>;
    fn eq_dyn(&self, other: &dyn NvState) -> bool;
    /// Its JSON text (128-bit registers included, which a JSON value
    /// tree cannot hold).
    fn to_json(&self) -> String;
    /// Whether it holds nothing (a chip file leaves it out).
    fn is_empty(&self) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T> NvState for T
where
    T: Any + Send + Sync + std::fmt::Debug + Clone + PartialEq + Default + Serialize,
{
    fn clone_box(&self) -> Box<dyn NvState> {
        Box::new(self.clone())
    }
    fn eq_dyn(&self, other: &dyn NvState) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
    fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a scheme's NV state serializes")
    }
    fn is_empty(&self) -> bool {
        *self == T::default()
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The chip state's scheme field: empty, as read from a chip file (its
/// JSON text, until the scheme's runtime adopts it), or held as the
/// runtime's own type.
#[derive(Debug, Default)]
pub enum SchemeNv {
    #[default]
    Empty,
    Loaded(Box<RawValue>),
    Held(Box<dyn NvState>),
}

impl SchemeNv {
    pub fn is_empty(&self) -> bool {
        match self {
            SchemeNv::Empty => true,
            SchemeNv::Loaded(v) => v.get() == "null",
            SchemeNv::Held(b) => b.is_empty(),
        }
    }

    /// The state as type `T`, if it holds one.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        match self {
            SchemeNv::Held(b) => b.as_any().downcast_ref(),
            _ => None,
        }
    }

    /// The state as type `T`, made (empty) if there is none yet. A state
    /// loaded from a chip file must have been adopted first.
    pub fn get_mut<T: NvState + Default>(&mut self) -> &mut T {
        if matches!(self, SchemeNv::Empty) {
            *self = SchemeNv::Held(Box::new(T::default()));
        }
        match self {
            SchemeNv::Held(b) => b.as_any_mut().downcast_mut().expect("the scheme's NV state is the runtime's own type"),
            _ => panic!("a loaded scheme NV state is used before its runtime adopted it"),
        }
    }

    /// Read a state loaded from a chip file as type `T` (the scheme's
    /// runtime does it when it is built on that chip).
    pub fn adopt<T: NvState + Default + serde::de::DeserializeOwned>(&mut self) -> Result<(), String> {
        if let SchemeNv::Loaded(v) = self {
            let t: T = serde_json::from_str(v.get()).map_err(|e| format!("chip state: the scheme's state: {e}"))?;
            *self = SchemeNv::Held(Box::new(t));
        }
        Ok(())
    }

    /// Its JSON text, compact ("null" when empty). A state loaded from a
    /// file keeps the text the file had, which this writer made compact.
    fn to_json(&self) -> String {
        match self {
            SchemeNv::Empty => "null".into(),
            SchemeNv::Loaded(v) => v.get().to_string(),
            SchemeNv::Held(b) if b.is_empty() => "null".into(),
            SchemeNv::Held(b) => b.to_json(),
        }
    }
}

impl Clone for SchemeNv {
    fn clone(&self) -> Self {
        match self {
            SchemeNv::Empty => SchemeNv::Empty,
            SchemeNv::Loaded(v) => SchemeNv::Loaded(v.clone()),
            SchemeNv::Held(b) => SchemeNv::Held(b.clone_box()),
        }
    }
}

impl PartialEq for SchemeNv {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (SchemeNv::Held(a), SchemeNv::Held(b)) => a.eq_dyn(&**b),
            _ => self.to_json() == other.to_json(),
        }
    }
}

impl Eq for SchemeNv {}

/// A chip state is written and read as JSON (`chip.json`): the scheme's
/// field goes through as its JSON text.
impl Serialize for SchemeNv {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        RawValue::from_string(self.to_json()).map_err(serde::ser::Error::custom)?.serialize(s)
    }
}

impl<'de> Deserialize<'de> for SchemeNv {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Box::<RawValue>::deserialize(d)?;
        Ok(if v.get() == "null" { SchemeNv::Empty } else { SchemeNv::Loaded(v) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
    struct Regs {
        a: u64,
        /// A 128-bit register (the multiset hashes are), which a JSON
        /// value tree cannot hold.
        wide: u128,
    }

    #[test]
    fn a_scheme_state_round_trips_through_a_chip_file_and_compares_by_value() {
        let mut nv = SchemeNv::default();
        assert!(nv.is_empty() && nv.get::<Regs>().is_none());
        nv.get_mut::<Regs>().a = 7;
        nv.get_mut::<Regs>().wide = u128::MAX - 1;
        let mut copy = nv.clone();
        assert_eq!(copy, nv);
        copy.get_mut::<Regs>().a = 8;
        assert_ne!(copy, nv, "a clone is deep");
        let json = serde_json::to_string(&nv).unwrap();
        let mut back: SchemeNv = serde_json::from_str(&json).unwrap();
        assert_eq!(back, nv, "a loaded state equals the held one by value");
        back.adopt::<Regs>().unwrap();
        assert_eq!(back.get::<Regs>(), Some(&Regs { a: 7, wide: u128::MAX - 1 }));
        // An all-default state is empty: a chip file leaves it out.
        let mut zero = SchemeNv::default();
        zero.get_mut::<Regs>();
        assert!(zero.is_empty() && zero == SchemeNv::Empty);
    }
}
