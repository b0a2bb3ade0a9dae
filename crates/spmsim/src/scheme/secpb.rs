//! SecPB's six schemes (SecPB IV, Table II): a battery-backed persist
//! buffer beside L1D whose entries carry the tuple steps each does early,
//! in front of SP's metadata rules. Their rules are all data: they run on
//! the default runtime.
//!
//! ```text
//!  store -> persist buffer entry (early steps: NoGap all .. COBCM none)
//!        -> memory controller: the late steps, SP's write policy
//! ```

use super::params::{SchemeParams, SchemeWork, Steps, TupleStep, TREE_WRITTEN_BACK};
use super::{Composed, FrontChoice, MetadataChoice, Registered, Role, SchemeKind, Sp};
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

impl Registered for SecPb {
    fn role(&self) -> Role {
        // SecPB IV: the buffer in front of SP's metadata rules (PLP).
        Role::Pair(Composed { front: FrontChoice::PersistBuffer(self.variant), metadata: MetadataChoice::rules(SchemeKind::Sp(Sp {})) })
    }
}
