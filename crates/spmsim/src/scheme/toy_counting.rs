//! A toy scheme for the test suite that remembers: SP's rules (PLP's strict
//! persistency, tree nodes written back and rebuilt at recovery), plus a
//! count of writes since the last power-on in an on-chip non-volatile
//! register of its own, and a volatile table of the pages written since.
//! It shows what adding a scheme with state costs (docs/architecture.md):
//! this file (its parameters, runtime and role), its registry line, and a
//! preset.
//!
//! ```text
//!  write:    register += 1; table <- page          (then SP's tree update)
//!  crash:    the table is lost; the register survives (nv_register)
//!  recover:  register == 0 ? nothing was written since power-on: the
//!            tree NVM holds is whole, no rebuild : SP's rebuild
//!            then register = 0 (a new power-on)
//! ```
//! The control (`scheme.nv_register = false`) keeps the register in SRAM:
//! a power failure zeroes it, recovery skips the rebuild, and the tree
//! nodes the crash lost leave data the root register no longer vouches
//! for, which the crash oracle must find.

use super::params::{yes, Completion, SchemeParams, SchemeWork, TREE_WRITTEN_BACK};
use super::{Registered, Role};
use crate::engine::chip::{ChipState, SchemeNv};
use crate::engine::hooks::{DrainWork, NvChange, NvRegister, OwnState, RecoveryReport, Scheme};
use crate::engine::rules::Rules;
use crate::engine::store::{CheckFailure, MetaStore};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeSet;
use crate::config::SimConfig;

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

impl Default for ToyCounting {
    fn default() -> Self {
        ToyCounting { nv_register: yes() }
    }
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

impl Registered for ToyCounting {
    fn role(&self) -> Role {
        // A test scheme: no paper composes it.
        Role::Alone
    }
    fn build(&self, _cfg: &SimConfig, _seed: u64) -> Box<dyn Scheme> {
        Box::new(ToyCountingRuntime::new(*self))
    }
}

/// The register: writes since the last power-on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToyCountingNv {
    pub writes_since_power_on: u64,
}

/// The runtime: its parameters and the volatile table of pages written
/// since power-on.
#[derive(Clone, Debug)]
pub struct ToyCountingRuntime {
    p: ToyCounting,
    pages: RefCell<BTreeSet<u64>>,
}

impl ToyCountingRuntime {
    pub fn new(p: ToyCounting) -> Self {
        ToyCountingRuntime { p, pages: RefCell::default() }
    }

    /// The register of `chip` (0 when never written).
    pub fn register(chip: &ChipState) -> u64 {
        chip.scheme.get::<ToyCountingNv>().map_or(0, |n| n.writes_since_power_on)
    }
}

impl Scheme for ToyCountingRuntime {
    fn adopt(&self, chip: &mut ChipState) -> Result<(), String> {
        chip.scheme.adopt::<ToyCountingNv>()
    }

    fn on_counter_update(&self, r: &Rules, st: &mut MetaStore, index: u64, bytes: [u8; 64]) -> Result<(), CheckFailure> {
        st.chip.scheme.get_mut::<ToyCountingNv>().writes_since_power_on += 1;
        self.pages.borrow_mut().insert(index);
        r.counter_updated(st, index, bytes)
    }

    fn on_power_fail(&self, _r: &Rules, st: &mut MetaStore, _work: &mut DrainWork) {
        if !self.p.nv_register {
            // The control: the register is SRAM.
            st.chip.scheme.get_mut::<ToyCountingNv>().writes_since_power_on = 0;
        }
    }

    fn on_power_lost(&self) {
        self.pages.borrow_mut().clear();
    }

    fn recover(&self, r: &Rules, st: &mut MetaStore, rep: &mut RecoveryReport) {
        let written = Self::register(&st.chip);
        if written > 0 && r.secure {
            if let Some(out) = r.rebuild(st) {
                rep.tree_rebuilt = out.mismatched_roots.is_empty();
                rep.rebuild = Some(out);
            }
        }
        rep.add_count("writes_before_the_crash", written);
        st.chip.scheme.get_mut::<ToyCountingNv>().writes_since_power_on = 0;
    }

    fn on_shutdown(&self, st: &mut MetaStore) {
        st.chip.scheme.get_mut::<ToyCountingNv>().writes_since_power_on = 0;
    }

    fn own_state(&self) -> Vec<OwnState> {
        vec![OwnState::OnChip { name: "toy-register-tamper", why: "the toy's write counter is an on-chip register" }]
    }

    fn onchip_nv_registers(&self) -> Vec<NvRegister> {
        vec![NvRegister { what: "writes since power-on", bytes: 8 }]
    }

    /// Reads never look at the register.
    fn nv_change(&self, _st: &MetaStore, _before: &SchemeNv, _after: &SchemeNv) -> NvChange {
        NvChange::Unseen
    }

    fn stats(&self, st: &MetaStore) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "writes_since_power_on": Self::register(&st.chip),
            "pages_written": self.pages.borrow().len(),
        }))
    }
}
