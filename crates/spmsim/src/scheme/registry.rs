//! The registry of schemes: what a scheme's file declares besides its
//! parameters (its runtime, its part in compositions), and the macro that
//! turns the one list of schemes in `scheme/mod.rs` into everything that
//! names them.
//!
//! ```text
//!  scheme/mod.rs   schemes! { .. Star(star::Star), .. }      one line a scheme
//!        |  this macro
//!        v
//!  pub mod star; pub use star::Star;
//!  SchemeKind::Star(Star)      serde: [scheme] type = "star" (tag, kebab-case)
//!  SchemeKind::registered()    -> &dyn Registered: params(), role(), build(), shape()
//!  MetadataChoice              `none` or a scheme whose role() is MetadataRules,
//!                              read and printed as `{ type = "star", .. }`
//! ```
//! Every match the macro writes names every scheme, so a scheme is either
//! registered whole or not at all; there is no arm for "the others".

use super::composed::{Composed, FrontChoice};
use super::params::SchemeParams;
use super::secpb::{SecPb, SecPbVariant};
use super::{Bbb, Described, Eadr, SchemeKind, SchemeWork};
use crate::config::SimConfig;
use crate::engine::hooks::Scheme;
use crate::engine::layout::Layout;
use crate::engine::shape::SchemeShape;

/// What a scheme is in a composition of a front end and metadata rules
/// (`composed.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Its rules are how a memory controller persists the security
    /// metadata: a `[compose]` table's `metadata` may name it, and at the
    /// memory controller it is its own composition.
    MetadataRules,
    /// It is this front end in front of these metadata rules (SecPB's
    /// schemes, BBB, eADR; a composed scheme is its own pair).
    Pair(Composed),
    /// No composition: a control whose gap is its whole point, or a test
    /// scheme.
    Alone,
}

/// What a scheme's file declares beside its parameters: its part in
/// compositions, the runtime it runs on and the engine's shape under it.
pub trait Registered: SchemeParams {
    /// Its part in compositions.
    fn role(&self) -> Role;
    /// Its runtime on `cfg`'s machine, of seed `seed`: [`Described`], every
    /// hook at its default, unless the scheme has state or hooks of its own.
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(Described)
    }
    /// What the engine is assembled with on `cfg`'s machine, whose tree
    /// (before any recovery area) is `tree`: the plain engine's shape,
    /// unless the scheme changes it.
    fn shape(&self, _tree: &Layout, _cfg: &SimConfig) -> SchemeShape {
        SchemeShape::default()
    }
    /// Why its metadata rules cannot run behind `front` (none by
    /// default): what a composition with it refuses.
    fn refuses_front(&self, _front: FrontChoice) -> Option<String> {
        None
    }
}

/// The registry: one line per scheme, `Variant(module::Params)`, with the
/// variant's serde attributes above it; `composed: ..;` first names the
/// composed scheme, which is a variant of `SchemeKind` but never a
/// metadata choice (it holds one).
macro_rules! schemes {
    (
        composed: $CVariant:ident($cmodule:ident::$CParams:ident);
        $( $(#[$attr:meta])* $Variant:ident($module:ident::$Params:ident) ),+ $(,)?
    ) => {
        pub mod $cmodule;
        pub use $cmodule::$CParams;
        $( pub mod $module; pub use $module::$Params; )+

        /// Every scheme, chosen by the `[scheme]` table's `type` (each
        /// variant's parameters are documented in its own file).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "type", rename_all = "kebab-case")]
        pub enum SchemeKind {
            $( $(#[$attr])* $Variant($Params), )+
            $CVariant($CParams),
        }

        impl SchemeKind {
            /// The registry entry: its parameters, role and runtime.
            pub fn registered(&self) -> &dyn registry::Registered {
                match self {
                    $( SchemeKind::$Variant(p) => p, )+
                    SchemeKind::$CVariant(p) => p,
                }
            }

            /// Every scheme with its parameters at their defaults, in the
            /// registry's order.
            #[cfg(test)]
            pub(crate) fn every_default() -> Vec<SchemeKind> {
                vec![$( SchemeKind::$Variant(<$Params>::default()), )+]
            }
        }

        /// The serde form of a metadata choice: `none`, or a scheme by its
        /// `type` and keys, as in `[scheme]`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        #[serde(tag = "type", rename_all = "kebab-case")]
        enum MetadataForm {
            None,
            $( $(#[$attr])* $Variant($Params), )+
        }

        impl MetadataForm {
            fn kind(self) -> Option<SchemeKind> {
                match self {
                    MetadataForm::None => None,
                    $( MetadataForm::$Variant(p) => Some(SchemeKind::$Variant(p)), )+
                }
            }

            fn of(k: SchemeKind) -> Option<MetadataForm> {
                match k {
                    $( SchemeKind::$Variant(p) => Some(MetadataForm::$Variant(p)), )+
                    SchemeKind::$CVariant(_) => None,
                }
            }
        }
    };
}

pub(crate) use schemes;

impl Default for SchemeKind {
    fn default() -> Self {
        SchemeKind::WriteThrough(super::WriteThrough {})
    }
}

impl SchemeKind {
    /// The parameters behind the registry entry.
    pub fn params(&self) -> &dyn SchemeParams {
        self.registered()
    }
    /// Its part in compositions.
    pub fn role(&self) -> Role {
        self.registered().role()
    }
    pub fn name(&self) -> &'static str {
        self.params().name()
    }
    pub fn work(&self) -> SchemeWork {
        self.params().work()
    }

    pub const fn secpb(variant: SecPbVariant) -> SchemeKind {
        SchemeKind::Secpb(SecPb { variant })
    }
    pub const BBB: SchemeKind = SchemeKind::Bbb(Bbb {});
    pub const EADR: SchemeKind = SchemeKind::Eadr(Eadr { secure: false });
    pub const SECURE_EADR: SchemeKind = SchemeKind::Eadr(Eadr { secure: true });

    /// The rows of SecPB Table V, in its order: the six SecPB schemes,
    /// secure eADR, BBB and eADR.
    pub fn table_v() -> Vec<SchemeKind> {
        let mut v: Vec<SchemeKind> = SecPbVariant::ALL.iter().map(|&variant| SchemeKind::Secpb(SecPb { variant })).collect();
        v.push(SchemeKind::Eadr(Eadr { secure: true }));
        v.push(SchemeKind::Bbb(Bbb {}));
        v.push(SchemeKind::Eadr(Eadr { secure: false }));
        v
    }

    /// A scheme of [`Self::table_v`] by its name (`cm`, `s-eadr`, ...).
    pub fn from_name(name: &str) -> Result<SchemeKind, String> {
        let n = name.trim().to_ascii_lowercase();
        let all = Self::table_v();
        all.iter()
            .copied()
            .find(|s| s.name() == n || (n == "s_eadr" && s.name() == "s-eadr"))
            .ok_or_else(|| format!("unknown scheme `{n}`; known: {}", all.iter().map(|s| s.name()).collect::<Vec<_>>().join(", ")))
    }
}

impl std::fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Serde by name (`"cm"`, `"s-eadr"`), for tables that list schemes
/// rather than configure one: `#[serde(with = "crate::scheme::by_name")]`.
pub mod by_name {
    use crate::scheme::SchemeKind;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(k: &SchemeKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.name())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SchemeKind, D::Error> {
        let name = String::deserialize(d)?;
        SchemeKind::from_name(&name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::super::params::{Steps, TupleStep};
    use super::super::{MetadataChoice, Sp};
    use super::*;
    use serde::{Deserialize, Serialize};

    #[derive(Debug, Deserialize, Serialize)]
    struct Config {
        scheme: SchemeKind,
    }

    #[derive(Debug, Deserialize, Serialize)]
    struct Compose {
        metadata: MetadataChoice,
    }

    /// Every registered scheme is written as `[scheme] type = "..."` and
    /// read back as itself, each under a `type` of its own.
    #[test]
    fn every_scheme_round_trips_through_its_type() {
        let all = SchemeKind::every_default();
        let mut types = std::collections::BTreeSet::new();
        for k in &all {
            let text = toml::to_string(&Config { scheme: *k }).unwrap();
            let ty = text.lines().find_map(|l| l.strip_prefix("type = ")).unwrap_or_else(|| panic!("{k}: no type in {text}"));
            assert!(types.insert(ty.to_string()), "{k}: type {ty} twice");
            let back: Config = toml::from_str(&text).unwrap_or_else(|e| panic!("{k}: {text}: {e}"));
            assert_eq!(back.scheme, *k, "{text}");
            assert_eq!(back.scheme.name(), k.name());
        }
        assert_eq!(types.len(), all.len());
        assert!(types.contains("\"cachetree\"") && types.contains("\"sp\""), "{types:?}");
        // A `type` alone is the scheme with its keys at their defaults,
        // save eADR's, which must say whether it is secure.
        let mut need_keys = vec![];
        for k in &all {
            let ty = toml::to_string(&Config { scheme: *k })
                .unwrap()
                .lines()
                .find_map(|l| l.strip_prefix("type = ").map(str::to_string))
                .unwrap();
            match toml::from_str::<Config>(&format!("[scheme]\ntype = {ty}\n")) {
                Ok(alone) => assert_eq!(alone.scheme, *k, "{ty}: Default is not its serde defaults"),
                Err(_) => need_keys.push(ty),
            }
        }
        assert_eq!(need_keys, ["\"eadr\""]);
    }

    /// Every scheme whose role is metadata rules is a metadata choice,
    /// read and written in the form `[scheme]` uses; no other scheme is.
    #[test]
    fn every_metadata_role_round_trips_through_the_metadata_choice() {
        let mut rules = 0;
        for k in SchemeKind::every_default() {
            let as_scheme = toml::to_string(&Config { scheme: k }).unwrap();
            let ty = as_scheme.lines().find_map(|l| l.strip_prefix("type = ")).unwrap();
            let read: Result<Compose, _> = toml::from_str(&as_scheme.replace("[scheme]", "[metadata]"));
            match MetadataChoice::of_kind(k) {
                Some(m) => {
                    rules += 1;
                    assert_eq!(k.role(), Role::MetadataRules, "{k}");
                    assert_eq!(m.kind(), Some(k));
                    assert_eq!(m.name(), k.name());
                    let text = toml::to_string(&Compose { metadata: m }).unwrap();
                    assert_eq!(text.replace("[metadata]", "[scheme]"), as_scheme, "{k}: the same form as [scheme]");
                    assert_eq!(read.unwrap().metadata, m, "{text}");
                    let alone: Compose = toml::from_str(&format!("[metadata]\ntype = {ty}\n")).unwrap();
                    assert_eq!(alone.metadata, m, "{k}: its type alone, its keys at their defaults");
                }
                None => {
                    assert_ne!(k.role(), Role::MetadataRules, "{k}");
                    let e = read.unwrap_err().to_string();
                    assert!(e.contains("not metadata rules"), "{k}: {e}");
                }
            }
        }
        assert_eq!(rules, 16);
        let none: Compose = toml::from_str("[metadata]\ntype = \"none\"\n").unwrap();
        assert_eq!((none.metadata, none.metadata.kind(), none.metadata.name()), (MetadataChoice::NONE, None, "none"));
        assert_eq!(toml::to_string(&none).unwrap(), "[metadata]\ntype = \"none\"\n");
        let plp: Compose = toml::from_str("[metadata]\ntype = \"plp\"\n").unwrap();
        assert_eq!(plp.metadata.kind(), Some(SchemeKind::Sp(Sp {})));
    }

    #[test]
    fn table_v_names_round_trip() {
        for s in SchemeKind::table_v() {
            assert_eq!(SchemeKind::from_name(s.name()).unwrap(), s);
        }
        assert!(SchemeKind::from_name("nope").unwrap_err().contains("cobcm"));
    }

    #[test]
    fn sp_is_named_sp_and_read_under_its_earlier_name() {
        let now: Config = toml::from_str("scheme = { type = \"sp\" }").unwrap();
        let before: Config = toml::from_str("scheme = { type = \"plp\" }").unwrap();
        assert_eq!(now.scheme, SchemeKind::Sp(Sp {}));
        assert_eq!(before.scheme, now.scheme);
        assert_eq!(now.scheme.params().name(), "sp");
        assert!(toml::to_string(&now).unwrap().contains("type = \"sp\""));
    }

    #[test]
    fn insecure_schemes_have_no_late_work() {
        for s in SchemeKind::table_v() {
            let w = s.work();
            assert_eq!(w.late().is_empty(), !w.secure || w.early == Steps::ALL, "{s}");
        }
    }

    #[test]
    fn each_secpb_name_lists_its_late_steps() {
        // The name spells the late steps: C(ounter) O(TP) B(MT) C(iphertext) M(AC).
        for v in SecPbVariant::ALL {
            let late = SecPb { variant: v }.work().late();
            let mut spelled: Vec<char> = late
                .to_vec()
                .iter()
                .map(|s| match s {
                    TupleStep::Counter | TupleStep::Ciphertext => 'c',
                    TupleStep::Otp => 'o',
                    TupleStep::Bmt => 'b',
                    TupleStep::Mac => 'm',
                })
                .collect();
            let mut name: Vec<char> = if v == SecPbVariant::Nogap { vec![] } else { v.name().chars().collect() };
            name.sort_unstable();
            spelled.sort_unstable();
            assert_eq!(name, spelled, "{}", v.name());
        }
    }
}
