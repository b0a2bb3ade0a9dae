//! What a scheme's parameters say about it, as plain data: the trait
//! every scheme's parameters answer, what a scheme may need of the rest of
//! the configuration, and the description every mechanism reads
//! (`work.rs`).
//!
//! ```text
//!  scheme/<name>.rs   struct Star { bitmap_lines, .. }   (serde: its keys)
//!        |  impl SchemeParams (this file)
//!        |     name(), work(): SchemeWork   what every mechanism reads
//!        |     validate(): own keys' ranges
//!        |     needs(): what the rest of the configuration must give
//!        v
//!  config validation, front ends, timing, battery: read the answers,
//!  never the scheme's name
//! ```
//! The engine imports this folder (the description, its policies) and
//! nothing else of `scheme/`; the registry that names the schemes
//! (`SchemeKind`) and their runtimes sit above it (`scheme/mod.rs`).

mod work;

pub use work::*;

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

pub fn in_range(key: &'static str, v: u64, lo: u64, hi: u64) -> Result<(), ParamError> {
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

/// A serde default: true.
pub fn yes() -> bool {
    true
}

/// A serde default: 1.
pub fn one() -> u32 {
    1
}

/// Every metadata line written through.
pub const WRITE_THROUGH: MetadataPolicy = MetadataPolicy::uniform(WritePolicy::WriteThrough);
/// Counters and MAC lines written through, tree nodes written back.
pub const TREE_WRITTEN_BACK: MetadataPolicy = WRITE_THROUGH.with_tree(WritePolicy::WriteBack);

/// A write-back metadata cache: a store is persistent once its data and
/// MAC are in the WPQ and its counter is in the (battery-backed) cache; the
/// tree update runs in the background, finished under the battery at a
/// crash (STAR's and Secon's WB baselines; the control loses it).
pub fn write_back(battery_flushes_metadata: bool) -> SchemeWork {
    SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), battery_flushes_metadata, !battery_flushes_metadata)
        .completing(Completion::Tuple)
}

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
}
