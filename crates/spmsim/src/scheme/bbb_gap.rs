//! The control that shows SecPB's recoverability gap (Fig. 1b): BBB's
//! buffer beside a secure memory controller, the battery outside the
//! engine. Its rules are all data.

use super::params::{SchemeParams, SchemeWork};
use super::{Bbb, Registered, Role};
use serde::{Deserialize, Serialize};

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

impl Registered for BbbGap {
    fn role(&self) -> Role {
        // A control: its gap is the point, no paper composes it.
        Role::Alone
    }
}
