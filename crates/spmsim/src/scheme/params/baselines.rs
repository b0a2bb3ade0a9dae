//! The schemes whose description is all their rules: SecPB's six and its
//! baselines (SecPB IV, Table II), the write-through and write-back
//! baselines of STAR and Secon (STAR V-A; Secon 4.1), eADR, and the test
//! suite's toy schemes. Their runtimes keep nothing of their own.

use super::work::{Completion, Front, FrontDrain, MetadataPolicy, SchemeWork, Steps, TupleStep, WritePolicy};
use super::{in_range, one, yes, ParamError, SchemeParams, TREE_WRITTEN_BACK, WRITE_THROUGH};
use serde::{Deserialize, Serialize};

/// Which SecPB scheme: named by the steps it leaves late (C counter, O
/// OTP, B BMT root, C ciphertext, M MAC).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SecPbVariant {
    Nogap,
    M,
    Cm,
    Bcm,
    Obcm,
    #[default]
    Cobcm,
}

/// One row per variant: its name, the steps done early, and the extra
/// SecPB accesses of an allocation.
struct Row {
    variant: SecPbVariant,
    name: &'static str,
    early: Steps,
    allocate_extra_accesses: u32,
}

/// SecPB IV-A/IV-B. OBCM keeps its early counter in the entry's C field
/// and checks the counter valid bit on allocation: a second access.
const ROWS: [Row; 6] = {
    use TupleStep::*;
    [
        Row {
            variant: SecPbVariant::Nogap,
            name: "nogap",
            early: Steps::of(&[Counter, Otp, Ciphertext, Bmt, Mac]),
            allocate_extra_accesses: 0,
        },
        Row { variant: SecPbVariant::M, name: "m", early: Steps::of(&[Counter, Otp, Ciphertext, Bmt]), allocate_extra_accesses: 0 },
        Row { variant: SecPbVariant::Cm, name: "cm", early: Steps::of(&[Counter, Otp, Bmt]), allocate_extra_accesses: 0 },
        Row { variant: SecPbVariant::Bcm, name: "bcm", early: Steps::of(&[Counter, Otp]), allocate_extra_accesses: 0 },
        Row { variant: SecPbVariant::Obcm, name: "obcm", early: Steps::of(&[Counter]), allocate_extra_accesses: 1 },
        Row { variant: SecPbVariant::Cobcm, name: "cobcm", early: Steps::NONE, allocate_extra_accesses: 0 },
    ]
};

impl SecPbVariant {
    /// Table V's order (latest work first).
    pub const ALL: [SecPbVariant; 6] =
        [SecPbVariant::Cobcm, SecPbVariant::Obcm, SecPbVariant::Bcm, SecPbVariant::Cm, SecPbVariant::M, SecPbVariant::Nogap];

    fn row(self) -> &'static Row {
        ROWS.iter().find(|r| r.variant == self).expect("every variant has a row")
    }
    pub fn name(self) -> &'static str {
        self.row().name
    }
}

/// A SecPB scheme: a battery-backed persist buffer beside L1D whose
/// entries carry the metadata produced early; counters and MAC lines are
/// written through at the MC, BMT nodes written back and rebuilt from the
/// counters after a crash, as in the SP baseline (PLP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct SecPb {
    /// Absent: COBCM, the default SecPB design (SecPB VI).
    pub variant: SecPbVariant,
}

impl SchemeParams for SecPb {
    fn name(&self) -> &'static str {
        self.variant.name()
    }
    fn work(&self) -> SchemeWork {
        let row = self.variant.row();
        SchemeWork {
            allocate_extra_accesses: row.allocate_extra_accesses,
            ..SchemeWork::at_persist_buffer(true, row.early, TREE_WRITTEN_BACK, true)
        }
    }
}

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

/// Control: BBB's buffer beside a secure MC with the battery outside the
/// engine, so drained lines miss their counter, MAC and root update (the
/// recoverability gap of SecPB Fig. 1b).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct BbbGap {}

impl SchemeParams for BbbGap {
    fn name(&self) -> &'static str {
        "bbb-gap"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork { secure: true, ..Bbb {}.work() }
    }
}

/// SP, SecPB's strict-persistency baseline, as PLP builds it: each store's
/// tuple persists at the MC before the next store; BMT nodes are written
/// back and rebuilt from the persisted counters after a crash.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Sp {}

impl SchemeParams for Sp {
    fn name(&self) -> &'static str {
        "sp"
    }
    /// SecPB VI-A: SP's "(data, counter, MAC, root) persists before the
    /// next store": complete once the root is updated.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(TREE_WRITTEN_BACK, false, true).completing(Completion::Root)
    }
}

/// eADR and secure eADR (SecPB II-C): the data caches are in the
/// persistence domain; the battery drains every dirty line, through the
/// security engine for secure eADR, whose metadata caches flush too.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct Eadr {
    /// Secure eADR (s_eADR); false is the insecure eADR of Table V.
    pub secure: bool,
}

impl SchemeParams for Eadr {
    fn name(&self) -> &'static str {
        if self.secure {
            "s-eadr"
        } else {
            "eadr"
        }
    }
    fn work(&self) -> SchemeWork {
        SchemeWork {
            front: Front::CacheHierarchy,
            secure: self.secure,
            early: Steps::NONE,
            allocate_extra_accesses: 0,
            metadata: MetadataPolicy::uniform(WritePolicy::WriteBack),
            front_drain: if self.secure { FrontDrain::Secured } else { FrontDrain::Unsecured },
            battery_flushes_metadata: self.secure,
            recovery_rebuilds_tree: false,
            ideal_metadata: false,
            deferred_root_updates: 0,
            completion: Completion::Root,
        }
    }
}

/// Every metadata line written through: STAR's strict persistence and the
/// WT baseline of Secon. Each write persists its data, counter block, MAC
/// line and every changed tree node up to the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WriteThrough {}

impl SchemeParams for WriteThrough {
    fn name(&self) -> &'static str {
        "write-through"
    }
    /// STAR V-A's strict persistence persists the whole branch with each
    /// write: complete once the root is updated and every line is queued.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(WRITE_THROUGH, false, false).completing(Completion::Root)
    }
}

/// Metadata written through up to a level of the tree: Secon's WT
/// (Secon 4.1, 4.3: each write persists "ciphertext, counter, and the
/// first-level BMT blocks" after the root update). Nodes above the level
/// are written back and, under ADR only, lost at a crash; recovery
/// rebuilds the tree from the counters and compares it with the root.
/// Secon names no data MAC of its own: its presets keep one in the data
/// line's ECC bits (`security.mac_placement = "data-line"`, wt.toml), so
/// a write persists the three lines of Secon's tuple; with MAC lines it
/// would persist a fourth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LevelWriteThrough {
    /// Tree levels written with each write (1: the level above the
    /// counter blocks, Secon's WT; the default).
    #[serde(default = "one")]
    pub tree_levels: u32,
    /// Recovery rebuilds the levels above `tree_levels` (the default).
    /// false is the control `wt-no-rebuild`: the stale upper levels stay,
    /// and the oracle must find the data they no longer vouch for.
    #[serde(default = "yes")]
    pub rebuild: bool,
}

impl SchemeParams for LevelWriteThrough {
    fn name(&self) -> &'static str {
        "level-write-through"
    }
    /// Secon 2.3 on WT: "Each write in a transaction is stalled until the
    /// BMT root of the log entry is updated".
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(MetadataPolicy { tree_through_levels: self.tree_levels, ..TREE_WRITTEN_BACK }, false, self.rebuild)
            .completing(Completion::Root)
    }
    fn validate(&self) -> Result<(), ParamError> {
        // Level 1 is the lowest tree level; the tree has at most 32.
        in_range("scheme.tree_levels", self.tree_levels as u64, 1, 32)
    }
}

/// A write-back metadata cache: a store is persistent once its data and
/// MAC are in the WPQ and its counter is in the (battery-backed) cache; the
/// tree update runs in the background, finished under the battery at a
/// crash (STAR's and Secon's WB baselines; the control loses it).
fn write_back(battery_flushes_metadata: bool) -> SchemeWork {
    SchemeWork::at_memory_controller(MetadataPolicy::uniform(WritePolicy::WriteBack), battery_flushes_metadata, !battery_flushes_metadata)
        .completing(Completion::Tuple)
}

/// A write-back metadata cache the battery flushes at a power failure:
/// STAR's WB baseline, its tree updates and write-backs priced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct BatteryWriteBack {}

impl SchemeParams for BatteryWriteBack {
    fn name(&self) -> &'static str {
        "battery-write-back"
    }
    fn work(&self) -> SchemeWork {
        write_back(true)
    }
}

/// Control: a write-back metadata cache under ADR only; the dirty lines
/// die at a crash and recovery's BMT rebuild disagrees with the root.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct WriteBackNoBattery {}

impl SchemeParams for WriteBackNoBattery {
    fn name(&self) -> &'static str {
        "write-back-no-battery"
    }
    fn work(&self) -> SchemeWork {
        write_back(false)
    }
}

/// Secon's ideal WB (Secon 4.1): a battery-backed write-back metadata cache
/// "without the overheads of BMT updates and extra metadata writes". The
/// functional model is `BatteryWriteBack`'s; the timing model prices only
/// the data writes (`SchemeWork::ideal_metadata`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdealWriteBack {
    /// The battery flushes the dirty metadata on power loss (the default).
    /// false is the control `wb-nobattery`: the dirty counters and tree
    /// nodes die, and recovery's rebuild disagrees with the root register.
    #[serde(default = "yes")]
    pub battery: bool,
}

impl Default for IdealWriteBack {
    fn default() -> Self {
        IdealWriteBack { battery: true }
    }
}

impl SchemeParams for IdealWriteBack {
    fn name(&self) -> &'static str {
        "ideal-write-back"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork { ideal_metadata: true, ..write_back(self.battery) }
    }
}

/// A battery-backed persist buffer that does all its work late, counters
/// and MACs written through, tree nodes written back, and no recovery: a
/// crash loses the dirty tree nodes, which the oracle must find.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ToyLazyTree {}

impl SchemeParams for ToyLazyTree {
    fn name(&self) -> &'static str {
        "toy-lazy-tree"
    }
    fn work(&self) -> SchemeWork {
        SchemeWork::at_persist_buffer(true, Steps::NONE, TREE_WRITTEN_BACK, false)
    }
}

/// A scheme that remembers: SP's rules, plus a count of writes since the
/// last power-on in an on-chip register of its own and a volatile table of
/// the pages written since (see `scheme/toy_counting.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToyCounting {
    /// The register survives a power failure (false: the control, whose
    /// count a crash zeroes, so its recovery skips the rebuild it needs).
    #[serde(default = "yes")]
    pub nv_register: bool,
}

impl SchemeParams for ToyCounting {
    fn name(&self) -> &'static str {
        "toy-counting"
    }
    /// SP's rule (SecPB VI-A): complete once the root is updated.
    fn work(&self) -> SchemeWork {
        SchemeWork::at_memory_controller(TREE_WRITTEN_BACK, false, true).completing(Completion::Root)
    }
}
