//! The six SecPB schemes (SecPB IV, Table II): a battery-backed persist
//! buffer beside L1D whose entries carry the metadata produced early; the
//! rest of each memory tuple is produced when the entry drains to the MC.
//!
//! ```text
//!  store -> SecPB entry [Dp | C O B Dc M, as early] --drain--> MC: late steps -> WPQ
//!  name = the steps done late: C counter, O OTP, B BMT root, C ciphertext, M MAC
//! ```
//! Counters and MAC lines are written through at the MC; BMT nodes are
//! written back and rebuilt from the counters after a crash, as in the SP
//! baseline (PLP) the paper compares with.

use super::{Front, FrontDrain, MetadataPolicy, Scheme, SchemeWork, Steps, TupleStep};
use crate::config::WritePolicy;
use serde::{Deserialize, Serialize};
use TupleStep::*;

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
const ROWS: [Row; 6] = [
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
];

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

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct SecPb {
    /// Absent: COBCM, the default SecPB design (SecPB VI).
    pub variant: SecPbVariant,
}

impl Scheme for SecPb {
    fn name(&self) -> &'static str {
        self.variant.name()
    }
    fn work(&self) -> SchemeWork {
        let row = self.variant.row();
        SchemeWork {
            front: Front::PersistBuffer,
            secure: true,
            early: row.early,
            allocate_extra_accesses: row.allocate_extra_accesses,
            metadata: MetadataPolicy::uniform(WritePolicy::WriteThrough).with_tree(WritePolicy::WriteBack),
            front_drain: FrontDrain::Secured,
            battery_flushes_metadata: false,
            recovery_rebuilds_tree: true,
            ideal_metadata: false,
            deferred_root_updates: 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_lists_its_late_steps() {
        // The name spells the late steps: C(ounter) O(TP) B(MT) C(iphertext) M(AC).
        for v in SecPbVariant::ALL {
            let late = SecPb { variant: v }.work().late();
            let spelled: String = late
                .to_vec()
                .iter()
                .map(|s| match s {
                    Counter | Ciphertext => 'c',
                    Otp => 'o',
                    Bmt => 'b',
                    Mac => 'm',
                })
                .collect();
            let mut sorted_name: Vec<char> = if v == SecPbVariant::Nogap { vec![] } else { v.name().chars().collect() };
            let mut sorted_spelled: Vec<char> = spelled.chars().collect();
            sorted_name.sort_unstable();
            sorted_spelled.sort_unstable();
            assert_eq!(sorted_name, sorted_spelled, "{}", v.name());
        }
    }
}
