//! Every scheme's parameters, and what they say about the scheme, as plain
//! data: the registry the configuration names a scheme by.
//!
//! ```text
//!  configs/<preset>.toml  [scheme] type = "secon", track_units = 16
//!        |  serde (tag = "type"; unknown keys refused)
//!  SchemeKind::Secon(Secon { .. })          the registry (this file); the
//!                                           parameters in stateful.rs and
//!                                           baselines.rs, the words in work.rs
//!        |  .params(): &dyn SchemeParams
//!        |     name(), work(): SchemeWork   what every mechanism reads
//!        |     validate(): own keys' ranges
//!        |     needs(): what the rest of the configuration must give
//!        v
//!  scheme::build(cfg, seed)                 the runtime (its own file)
//! ```
//! The configuration imports this file and nothing else of `scheme/`; the
//! runtimes, which hold each scheme's behaviour and state, sit above the
//! engine they plug into. A stateless scheme (SecPB's six, BBB, SP, the
//! write-through and write-back baselines, eADR) is entirely its row here:
//! what it does differently is data its mechanisms read (`baselines.rs`).

mod baselines;
mod compose;
mod stateful;
mod work;

pub use baselines::*;
pub use compose::{Composed, FrontChoice, MetadataChoice};
pub use stateful::*;
pub use work::*;

use serde::{Deserialize, Serialize};

/// A scheme's parameters: what they say about the scheme before any
/// machine exists.
pub trait SchemeParams {
    /// The name the paper uses (and reports print).
    fn name(&self) -> &'static str;
    /// The scheme's rules, as data.
    fn work(&self) -> SchemeWork;
    /// The ranges of the scheme's own keys.
    fn validate(&self) -> Result<(), ParamError> {
        Ok(())
    }
    /// What the rest of the configuration must give the scheme's mechanism
    /// (beyond its front end and security, which [`Self::work`] says).
    fn needs(&self) -> Vec<Need> {
        Vec::new()
    }
    /// A crash of this configuration loses something only once the
    /// workload triggers it (a control whose gap needs a pattern).
    fn gap_needs_trigger(&self) -> bool {
        false
    }
    /// The hash registers the scheme adds to the security engine (none
    /// by default).
    fn hash_registers(&self) -> Option<HashRegisters> {
        None
    }
}

/// A scheme key out of its range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamError {
    pub key: &'static str,
    pub message: String,
}

fn in_range(key: &'static str, v: u64, lo: u64, hi: u64) -> Result<(), ParamError> {
    if v < lo || v > hi {
        return Err(ParamError { key, message: format!("must be in {lo}..={hi}, got {v}") });
    }
    Ok(())
}

/// The kind of integrity tree a scheme needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeType {
    Bmt,
    Sit,
}

impl TreeType {
    pub fn name(self) -> &'static str {
        match self {
            TreeType::Bmt => "bmt",
            TreeType::Sit => "sit",
        }
    }
}

/// Something a scheme needs of the rest of the configuration, with the
/// reason, which the error names when a configuration does not give it
/// ("scheme `X` {why}; set {key} = {value}").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Need {
    /// `tree.type`, and with `no_onchip_levels` no `tree.onchip_levels`.
    Tree { tree: TreeType, no_onchip_levels: bool, why: &'static str },
    /// `metadata_cache.organization.type = "unified"`.
    UnifiedMetadataCache { why: &'static str },
    /// `security.mac_placement = "data-line"`.
    MacInDataLine { why: &'static str },
    /// `security.volatile_key = true`.
    VolatileKey { why: &'static str },
    /// The scheme key `key` names a node level of the tree, below its top.
    NodeLevel { key: &'static str, level: u32 },
    /// Each root register covers persistent or non-persistent data, not
    /// both (Triad-NVM III-B2).
    RootsCoverOneKind,
}

/// Every scheme, chosen by the `[scheme]` table's `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum SchemeKind {
    /// The six SecPB schemes (SecPB IV), one table row each.
    Secpb(SecPb),
    /// BBB's persist buffer, no security (SecPB's insecure baseline).
    Bbb(Bbb),
    /// Control: BBB beside a secure MC, battery outside the engine.
    BbbGap(BbbGap),
    /// SP: PLP's strict persistency at the MC (SecPB's baseline); `plp`
    /// is its earlier name.
    #[serde(alias = "plp")]
    Sp(Sp),
    /// Every metadata line written through (STAR's strict persistence).
    WriteThrough(WriteThrough),
    /// Counters, MACs and the tree's lowest levels written through, the
    /// rest rebuilt at recovery (Secon's WT).
    LevelWriteThrough(LevelWriteThrough),
    /// Battery-backed write-back metadata cache, its tree updates and
    /// write-backs priced (STAR's WB, `secure-wb-battery`).
    BatteryWriteBack(BatteryWriteBack),
    /// Secon's ideal WB: the same, with no metadata work priced.
    IdealWriteBack(IdealWriteBack),
    /// Secon: pre-persisted write-through metadata, background root update.
    Secon(Secon),
    /// Control: a write-back metadata cache under ADR only.
    WriteBackNoBattery(WriteBackNoBattery),
    /// eADR and secure eADR (SecPB II-C).
    Eadr(Eadr),
    /// STAR: counter-MAC synergization, bitmap lines, cache-tree (STAR III).
    Star(Star),
    /// Anubis's shadow table for the SGX integrity tree (STAR's baseline).
    AnubisSit(AnubisSit),
    /// Triad-NVM: persistent regions, two key sets, level-N persistence.
    Triad(Triad),
    /// Triad-NVM's baseline that persists no metadata (recovery scans all).
    TriadNoPersist(TriadNoPersist),
    /// Osiris: lazy counters with a stop-loss, recovered by MAC trials.
    Osiris(Osiris),
    /// The multiset-hash scheme: Read/Write Hash registers over a
    /// write-back metadata cache (Kubo et al.).
    Mset(Mset),
    /// ASSURE's multi-root tree with one hot tree (the multiset-hash
    /// paper's configuration of it): write-through metadata, the hot
    /// tree's root in a second register.
    Assure(Assure),
    /// CacheTree (Chen et al.; the multiset-hash paper's baseline): an
    /// HNode cache of last-level tree nodes, written back, under a small
    /// tree whose root is an on-chip register.
    #[serde(rename = "cachetree")]
    CacheTree(CacheTree),
    /// The write-through-to-cached reading of the multiset-hash paper's
    /// baseline: written through up to the first line of the path the
    /// metadata cache held, which takes the change as a root.
    WriteThroughToCached(WriteThroughToCached),
    /// A front end composed with another scheme's metadata rules
    /// (`compose.rs`).
    Composed(Composed),
    /// Test-only: a write-back tree with nothing to recover it.
    ToyLazyTree(ToyLazyTree),
    /// Test-only: a scheme that keeps state of its own, volatile and not.
    ToyCounting(ToyCounting),
}

impl Default for SchemeKind {
    fn default() -> Self {
        SchemeKind::WriteThrough(WriteThrough {})
    }
}

impl SchemeKind {
    /// The parameters behind the registry entry.
    pub fn params(&self) -> &dyn SchemeParams {
        match self {
            SchemeKind::Secpb(s) => s,
            SchemeKind::Bbb(s) => s,
            SchemeKind::BbbGap(s) => s,
            SchemeKind::Sp(s) => s,
            SchemeKind::WriteThrough(s) => s,
            SchemeKind::LevelWriteThrough(s) => s,
            SchemeKind::BatteryWriteBack(s) => s,
            SchemeKind::IdealWriteBack(s) => s,
            SchemeKind::Secon(s) => s,
            SchemeKind::WriteBackNoBattery(s) => s,
            SchemeKind::Eadr(s) => s,
            SchemeKind::Star(s) => s,
            SchemeKind::AnubisSit(s) => s,
            SchemeKind::Triad(s) => s,
            SchemeKind::TriadNoPersist(s) => s,
            SchemeKind::Osiris(s) => s,
            SchemeKind::Mset(s) => s,
            SchemeKind::Assure(s) => s,
            SchemeKind::CacheTree(s) => s,
            SchemeKind::WriteThroughToCached(s) => s,
            SchemeKind::Composed(s) => s,
            SchemeKind::ToyLazyTree(s) => s,
            SchemeKind::ToyCounting(s) => s,
        }
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

/// Serde by name (`"cm"`, `"s-eadr"`), for tables that list schemes
/// rather than configure one: `#[serde(with = "crate::scheme::params::by_name")]`.
pub mod by_name {
    use crate::scheme::params::SchemeKind;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(k: &SchemeKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(k.name())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SchemeKind, D::Error> {
        let name = String::deserialize(d)?;
        SchemeKind::from_name(&name).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn yes() -> bool {
    true
}

fn one() -> u32 {
    1
}

const WRITE_THROUGH: MetadataPolicy = MetadataPolicy::uniform(WritePolicy::WriteThrough);
/// Counters and MAC lines written through, tree nodes written back.
const TREE_WRITTEN_BACK: MetadataPolicy = WRITE_THROUGH.with_tree(WritePolicy::WriteBack);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_hold_what_they_are_given() {
        let s = Steps::of(&[TupleStep::Counter, TupleStep::Bmt]);
        assert!(s.contains(TupleStep::Counter) && s.contains(TupleStep::Bmt));
        assert!(!s.contains(TupleStep::Mac));
        assert_eq!(s.complement().to_vec(), vec![TupleStep::Otp, TupleStep::Ciphertext, TupleStep::Mac]);
        assert_eq!(Steps::ALL.complement(), Steps::NONE);
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
        #[derive(Deserialize, Serialize)]
        struct Table {
            scheme: SchemeKind,
        }
        let now: Table = toml::from_str("scheme = { type = \"sp\" }").unwrap();
        let before: Table = toml::from_str("scheme = { type = \"plp\" }").unwrap();
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
