//! Schemes as compositions of orthogonal choices: where a store
//! becomes persistent (the front end) and how the security metadata
//! persists behind it (the memory controller's rules). The tree, the
//! persistency model and the battery domain are keys of the configuration
//! already; `config/compose.rs` turns a `[compose]` table into all five.
//!
//! ```text
//!  front     memory-controller | persist-buffer:<secpb variant> | cache-hierarchy
//!  metadata  none | sp | write-through | level-write-through | battery-write-back
//!            | ideal-write-back | write-back-no-battery | secon | star | anubis-sit
//!            | triad | triad-no-persist | osiris | mset | assure | cachetree
//!      |  Composed { front, metadata }
//!      v
//!  a paper's pair (a role) -> that paper's scheme, unchanged (cobcm = persist-buffer:cobcm + sp)
//!  any other pair          -> SchemeKind::Composed: the metadata scheme's runtime and
//!                             rules, its work taken at the chosen front end
//!  a pair no mechanism can build -> refused, naming both choices (`conflict`)
//! ```
//! Which scheme is which is each scheme's own word (`Registered::role`):
//! metadata rules, a front end's pair, or alone; the metadata choices are
//! the schemes whose role is metadata rules.

use super::params::{Front, FrontDrain, HashRegisters, Need, ParamError, SchemeParams, SchemeWork, Steps, TupleStep};
use super::secpb::{SecPb, SecPbVariant};
use super::{MetadataForm, Registered, Role, SchemeKind};
use crate::config::SimConfig;
use crate::engine::hooks::Scheme;
use crate::engine::layout::Layout;
use crate::engine::shape::SchemeShape;
use serde::{Deserialize, Serialize};

/// The front-end axis: where a store becomes persistent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FrontChoice {
    /// A flush per store; persistent at the WPQ (PLP's SP, STAR, Secon, ...).
    MemoryController,
    /// A battery-backed persist buffer beside L1D whose entries carry the
    /// tuple steps the SecPB variant does early (SecPB IV).
    PersistBuffer(SecPbVariant),
    /// The data caches are in the persistence domain (eADR, SecPB II-C).
    CacheHierarchy,
}

impl FrontChoice {
    /// Every front end: the memory controller, SecPB's six persist
    /// buffers (latest work first), eADR's caches.
    pub const ALL: [FrontChoice; 8] = [
        FrontChoice::MemoryController,
        FrontChoice::PersistBuffer(SecPbVariant::Cobcm),
        FrontChoice::PersistBuffer(SecPbVariant::Obcm),
        FrontChoice::PersistBuffer(SecPbVariant::Bcm),
        FrontChoice::PersistBuffer(SecPbVariant::Cm),
        FrontChoice::PersistBuffer(SecPbVariant::M),
        FrontChoice::PersistBuffer(SecPbVariant::Nogap),
        FrontChoice::CacheHierarchy,
    ];

    /// `memory-controller`, `persist-buffer:cobcm`, `cache-hierarchy`.
    pub fn name(self) -> String {
        match self {
            FrontChoice::PersistBuffer(v) => format!("persist-buffer:{}", v.name()),
            f => f.front().point_type().to_string(),
        }
    }

    /// The short name a composition's name starts with: the SecPB
    /// variant for a persist buffer, `mc` and `eadr` for the others.
    pub fn short(self) -> &'static str {
        match self {
            FrontChoice::MemoryController => "mc",
            FrontChoice::PersistBuffer(v) => v.name(),
            FrontChoice::CacheHierarchy => "eadr",
        }
    }

    /// A front end by its name; `persist-buffer` alone is COBCM's (every
    /// step late, SecPB VI's design).
    pub fn parse(s: &str) -> Result<FrontChoice, String> {
        let s = s.trim();
        if s == "persist-buffer" {
            return Ok(FrontChoice::PersistBuffer(SecPbVariant::Cobcm));
        }
        FrontChoice::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| {
            format!("unknown front end `{s}`; known: {}", FrontChoice::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "))
        })
    }

    pub fn front(self) -> Front {
        match self {
            FrontChoice::MemoryController => Front::MemoryController,
            FrontChoice::PersistBuffer(_) => Front::PersistBuffer,
            FrontChoice::CacheHierarchy => Front::CacheHierarchy,
        }
    }

    /// The persist buffer's SecPB variant when it makes the data MAC
    /// early, before the store reaches the memory controller.
    pub fn early_mac(self) -> Option<SecPbVariant> {
        match self {
            FrontChoice::PersistBuffer(v) if SecPb { variant: v }.work().early.contains(TupleStep::Mac) => Some(v),
            FrontChoice::PersistBuffer(_) | FrontChoice::MemoryController | FrontChoice::CacheHierarchy => None,
        }
    }

    /// The front end of a scheme's description.
    pub fn of(w: &SchemeWork) -> FrontChoice {
        match w.front {
            Front::MemoryController => FrontChoice::MemoryController,
            Front::CacheHierarchy => FrontChoice::CacheHierarchy,
            Front::PersistBuffer => {
                let v = SecPbVariant::ALL.into_iter().find(|v| SecPb { variant: *v }.work().early == w.early);
                FrontChoice::PersistBuffer(v.unwrap_or_default())
            }
        }
    }

    /// `w`, a memory controller's rules, with stores persisting here: the
    /// front end's fields of the description replaced, the metadata's
    /// kept. The battery drains the buffer or the caches through the
    /// security engine (SecPB's late strategy; secure eADR).
    pub fn apply(self, w: SchemeWork) -> SchemeWork {
        let (early, allocate_extra_accesses) = match self {
            FrontChoice::PersistBuffer(v) => {
                let secpb = SecPb { variant: v }.work();
                (secpb.early, secpb.allocate_extra_accesses)
            }
            _ => (Steps::NONE, 0),
        };
        SchemeWork {
            front: self.front(),
            early,
            allocate_extra_accesses,
            front_drain: if w.secure { FrontDrain::Secured } else { FrontDrain::Unsecured },
            ..w
        }
    }
}

impl Serialize for FrontChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for FrontChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        FrontChoice::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// The metadata-persistence axis: the rules a memory controller follows
/// for the security metadata, each the scheme of a paper (or a baseline)
/// that persists stores at the memory controller, with its parameters
/// (a scheme whose role is [`Role::MetadataRules`]), or none: no security
/// engine (BBB, eADR). Read and written as `[scheme]` writes the scheme
/// (`{ type = "star", bitmap_lines = 16, .. }`), or `{ type = "none" }`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MetadataChoice(MetadataForm);

impl MetadataChoice {
    /// No security engine.
    pub const NONE: MetadataChoice = MetadataChoice(MetadataForm::None);

    /// The scheme whose memory-controller rules these are (`None`: none).
    pub fn kind(self) -> Option<SchemeKind> {
        self.0.kind()
    }

    /// The metadata rules of a memory-controller scheme (`None` for a
    /// scheme whose role is not [`Role::MetadataRules`]).
    pub fn of_kind(k: SchemeKind) -> Option<MetadataChoice> {
        if k.role() != Role::MetadataRules {
            return None;
        }
        MetadataForm::of(k).map(MetadataChoice)
    }

    /// The metadata rules of `k`, whose role says it has them.
    pub fn rules(k: SchemeKind) -> MetadataChoice {
        Self::of_kind(k).unwrap_or_else(|| panic!("scheme `{k}` is not metadata rules"))
    }

    /// The name the composition uses (`none`, `sp`, `star`, ...).
    pub fn name(self) -> &'static str {
        self.kind().map_or("none", |k| k.name())
    }
}

impl std::fmt::Debug for MetadataChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl Serialize for MetadataChoice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for MetadataChoice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let form = MetadataForm::deserialize(d)?;
        match form.kind() {
            None => Ok(MetadataChoice::NONE),
            Some(k) => MetadataChoice::of_kind(k).ok_or_else(|| {
                serde::de::Error::custom(format!(
                    "scheme `{}` is not metadata rules a front end composes with (a front end of its own, a control or a test scheme)",
                    k.name()
                ))
            }),
        }
    }
}

/// A scheme composed of a front end and another scheme's metadata rules
/// (`scheme = { type = "composed", front = "persist-buffer:cobcm",
/// metadata = { type = "star" } }`). Its runtime is the metadata scheme's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Composed {
    pub front: FrontChoice,
    pub metadata: MetadataChoice,
}

impl Composed {
    /// The composition a scheme is (a paper's, or one composed), if any:
    /// a memory-controller scheme is its own metadata choice, a front
    /// end's scheme the pair its role names.
    pub fn of(k: SchemeKind) -> Option<Composed> {
        match k.role() {
            Role::MetadataRules => Some(Composed { front: FrontChoice::MemoryController, metadata: MetadataChoice::of_kind(k)? }),
            Role::Pair(c) => Some(c),
            Role::Alone => None,
        }
    }

    /// Why the mechanisms cannot build this pair, naming both choices.
    pub fn conflict(&self) -> Option<String> {
        let (front, meta) = (self.front.name(), self.metadata.name());
        let both = format!("front end `{front}` with metadata `{meta}`");
        match (self.front, self.metadata.kind()) {
            (FrontChoice::MemoryController, None) => {
                Some(format!("{both}: an insecure memory controller is `sp` with security.enabled = false, not a composition"))
            }
            (FrontChoice::PersistBuffer(v), None) if v != SecPbVariant::Cobcm => {
                Some(format!("{both}: without a security engine there are no tuple steps to do early (use persist-buffer:cobcm, BBB)"))
            }
            (FrontChoice::PersistBuffer(_) | FrontChoice::CacheHierarchy, None) => None,
            (front, Some(k)) => k.registered().refuses_front(front).map(|why| format!("{both}: {why}")),
        }
    }

    /// The scheme this composition is: a paper's own when the pair is
    /// one (so its results are that scheme's, byte for byte), else the
    /// composed scheme. Refused pairs are errors naming both choices.
    pub fn resolve(self) -> Result<SchemeKind, String> {
        if let Some(why) = self.conflict() {
            return Err(why);
        }
        let inner = self.metadata.kind();
        if self.front == FrontChoice::MemoryController {
            // A memory-controller scheme is its own metadata choice.
            return inner.ok_or_else(|| "no scheme".into());
        }
        // The papers' schemes with another front end: SecPB's, BBB, eADR.
        if let Some(k) = SchemeKind::table_v().into_iter().find(|k| Composed::of(*k) == Some(self)) {
            return Ok(k);
        }
        Ok(SchemeKind::Composed(self))
    }

    /// The metadata scheme, whose runtime a composed scheme runs.
    pub fn metadata_kind(&self) -> SchemeKind {
        self.metadata.kind().expect("a composed scheme has a security engine (Composed::conflict)")
    }
}

/// `a+b` names, made once each and kept for the run (`name()` is
/// `&'static str` across the crate; there are at most 8 x 16 of them).
fn intern(s: String) -> &'static str {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut set = NAMES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = set.get(s.as_str()) {
        return n;
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    set.insert(leaked);
    leaked
}

impl SchemeParams for Composed {
    /// `cobcm+star`: COBCM's persist buffer before STAR's metadata rules.
    fn name(&self) -> &'static str {
        intern(format!("{}+{}", self.front.short(), self.metadata.name()))
    }
    fn work(&self) -> SchemeWork {
        self.front.apply(self.metadata_kind().work())
    }
    fn validate(&self) -> Result<(), ParamError> {
        if let Some(why) = self.conflict() {
            return Err(ParamError { key: "scheme.front", message: why });
        }
        self.metadata_kind().params().validate()
    }
    fn needs(&self) -> Vec<Need> {
        self.metadata_kind().params().needs()
    }
    fn gap_needs_trigger(&self) -> bool {
        self.metadata_kind().params().gap_needs_trigger()
    }
    fn hash_registers(&self) -> Option<HashRegisters> {
        self.metadata_kind().params().hash_registers()
    }
}

impl Registered for Composed {
    fn role(&self) -> Role {
        Role::Pair(*self)
    }
    /// The metadata scheme's runtime; its rules read the composed
    /// description from `cfg`.
    fn build(&self, cfg: &SimConfig, seed: u64) -> Box<dyn Scheme> {
        self.metadata_kind().registered().build(cfg, seed)
    }
    /// The metadata scheme's shape.
    fn shape(&self, tree: &Layout, cfg: &SimConfig) -> SchemeShape {
        self.metadata_kind().registered().shape(tree, cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Star;
    use super::*;

    /// Each paper's scheme is a named composition whose composed
    /// description is the scheme's own: the front end's fields from the
    /// front choice and everything else from the metadata choice.
    #[test]
    fn every_papers_scheme_is_the_composition_of_its_two_choices() {
        let presets = crate::config::list_presets();
        assert!(presets.len() > 40);
        let mut kinds: Vec<SchemeKind> = presets.iter().map(|p| crate::config::load_preset(p, &[]).unwrap().scheme).collect();
        kinds.extend(SchemeKind::table_v());
        let mut composed = 0;
        for k in kinds {
            if matches!(k, SchemeKind::BbbGap(_) | SchemeKind::ToyLazyTree(_) | SchemeKind::ToyCounting(_)) {
                // Controls and test schemes: no paper's composition.
                assert_eq!(k.role(), Role::Alone, "{k}");
                assert!(Composed::of(k).is_none(), "{k}");
                continue;
            }
            composed += 1;
            let c = Composed::of(k).unwrap_or_else(|| panic!("{k} has no composition"));
            assert_eq!(c.resolve(), Ok(k), "{k}");
            assert_eq!(FrontChoice::of(&k.work()), c.front, "{k}");
            let Some(inner) = c.metadata.kind() else { continue };
            let composed_work = SchemeKind::Composed(c).work();
            let mut own = k.work();
            // When a store persisted at the controller is complete is a rule
            // of the controller's front end only (timing/persist.rs,
            // mc_store): s-eADR's Root and a write-back cache's Tuple
            // describe the same machine behind eADR's caches.
            if c.front != FrontChoice::MemoryController {
                own.completion = composed_work.completion;
            }
            assert_eq!(composed_work, own, "{k} = {} + {}", c.front.name(), inner);
        }
        assert!(composed > 40, "{composed}");
    }

    #[test]
    fn a_new_pair_is_composed_and_named_by_both_choices() {
        let c = Composed { front: FrontChoice::PersistBuffer(SecPbVariant::Cobcm), metadata: MetadataChoice::rules(SchemeKind::Star(Star::default())) };
        let k = c.resolve().unwrap();
        assert_eq!(k.name(), "cobcm+star");
        let w = k.work();
        assert_eq!((w.front, w.early, w.metadata), (Front::PersistBuffer, Steps::NONE, Star::default().work().metadata));
        assert_eq!(k.params().needs(), Star::default().needs());
    }

    #[test]
    fn conflicting_choices_are_refused_naming_both() {
        let e = Composed { front: FrontChoice::PersistBuffer(SecPbVariant::Nogap), metadata: MetadataChoice::rules(SchemeKind::Star(Star::default())) }
            .resolve()
            .unwrap_err();
        assert!(e.contains("persist-buffer:nogap") && e.contains("metadata `star`"), "{e}");
        let e = Composed { front: FrontChoice::MemoryController, metadata: MetadataChoice::NONE }.resolve().unwrap_err();
        assert!(e.contains("memory-controller") && e.contains("`none`"), "{e}");
        // A buffer that does only counters early keeps STAR's MAC rule.
        assert!(Composed { front: FrontChoice::PersistBuffer(SecPbVariant::Obcm), metadata: MetadataChoice::rules(SchemeKind::Star(Star::default())) }
            .resolve()
            .is_ok());
    }

    /// A composition's engine has its metadata scheme's shape, behind any
    /// front end: STAR's recovery area, synergized SIT and restored lines
    /// behind a persist buffer as at the memory controller.
    #[test]
    fn a_composed_schemes_shape_is_its_metadata_schemes() {
        let mut cfg = crate::config::load_preset("star", &[]).unwrap();
        let star = crate::scheme::shape(&cfg);
        assert!(star.reserved_recovery_lines > 0 && star.sit_mac_carries_parent_lsbs && star.recovery_restores_dirty_lines, "{star:?}");
        for k in SchemeKind::every_default() {
            let Some(metadata) = MetadataChoice::of_kind(k) else { continue };
            cfg.scheme = k;
            let alone = crate::scheme::shape(&cfg);
            for front in FrontChoice::ALL {
                cfg.scheme = SchemeKind::Composed(Composed { front, metadata });
                assert_eq!(crate::scheme::shape(&cfg), alone, "{k} behind {}", front.name());
            }
        }
    }

    #[test]
    fn front_names_round_trip() {
        for f in FrontChoice::ALL {
            assert_eq!(FrontChoice::parse(&f.name()), Ok(f));
        }
        assert_eq!(FrontChoice::parse("persist-buffer"), Ok(FrontChoice::PersistBuffer(SecPbVariant::Cobcm)));
        assert!(FrontChoice::parse("l2").unwrap_err().contains("persist-buffer:obcm"));
    }
}
