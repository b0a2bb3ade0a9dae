//! A whole simulated machine for the functional model: a front end over a
//! secure memory controller, with crash, drain and recovery.
//!
//! ```text
//!  apply(event) -> front end -> memory controller -> NVM
//!  power_fail(): front end drains (battery) -> metadata flush (battery)
//!                -> WPQ drains (ADR) -> volatile state lost
//!  recover():    tree rebuild where needed, compared with the root registers
//! ```

use crate::config::{BatteryDomain, SimConfig, TreeRebuild, WritePolicy};
use crate::controller::MemoryController;
use crate::crypto::CryptoWork;
use crate::nvm::ByKind;
use crate::persist::FrontEnd;
use crate::store::CheckFailure;
use crate::tree::RebuildOutcome;
use crate::workload::{Event, Op};
use serde::Serialize;

#[derive(Clone, Debug)]
pub struct System {
    pub cfg: SimConfig,
    pub front: FrontEnd,
    pub mc: MemoryController,
    pub events: u64,
}

/// The work a battery pays for after power fails (SecPB V, Table III
/// prices each kind).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DrainWork {
    /// Data lines moved out of the persist buffer or caches.
    pub front_lines: u64,
    /// Dirty metadata lines written back.
    pub metadata_lines: u64,
    /// WPQ entries drained (ADR).
    pub wpq_entries: u64,
    pub crypto: CryptoWork,
    pub nvm_reads: ByKind,
    pub nvm_writes: ByKind,
    /// An integrity failure met while draining (it would also be met later).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RecoveryReport {
    pub tree_rebuilt: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<RebuildOutcome>,
    pub root_registers_lost: bool,
    pub crypto: CryptoWork,
    pub nvm_reads: ByKind,
    pub nvm_writes: ByKind,
}

impl RecoveryReport {
    pub fn ok(&self) -> bool {
        !self.root_registers_lost && self.rebuild.as_ref().is_none_or(|r| r.mismatched_roots.is_empty())
    }
}

impl System {
    pub fn new(cfg: &SimConfig, seed: u64) -> Self {
        System::with_controller(cfg, MemoryController::new(cfg, seed))
    }

    /// A machine around an existing memory controller (one powered on from
    /// a saved image), with an empty front end.
    pub fn with_controller(cfg: &SimConfig, mc: MemoryController) -> Self {
        System { cfg: cfg.clone(), front: FrontEnd::new(&cfg.persistence.point), mc, events: 0 }
    }

    pub fn apply(&mut self, ev: &Event) -> Result<(), CheckFailure> {
        self.events += 1;
        match ev.op {
            Op::Store => {
                let bytes = ev.value.to_le_bytes();
                self.front.store(&mut self.mc, ev.block(), (ev.addr % 64) as usize, &bytes[..ev.size as usize])
            }
            Op::Load => self.front.load(&mut self.mc, ev.block()).map(|_| ()),
            // Strict persistency with a persist point at or before the MC
            // needs no extra action at a fence in the functional model.
            Op::Fence | Op::Epoch | Op::TxBegin | Op::TxCommit | Op::Compute => Ok(()),
        }
    }

    pub fn read(&mut self, block: u64) -> Result<[u8; 64], CheckFailure> {
        self.front.load(&mut self.mc, block)
    }

    fn snapshot(&self) -> (CryptoWork, ByKind, ByKind) {
        (self.mc.st.crypto.work, self.mc.st.nvm.reads, self.mc.st.nvm.writes)
    }

    /// Power fails: volatile state is lost, battery-backed state drains.
    pub fn power_fail(&mut self) -> DrainWork {
        let battery: BatteryDomain = self.cfg.persistence.battery.clone();
        let (c0, r0, w0) = self.snapshot();
        let mut work = DrainWork::default();
        let fail = |e: CheckFailure, w: &mut DrainWork| {
            if w.failure.is_none() {
                w.failure = Some(e.to_string());
            }
        };
        match self.front.crash_drain(&mut self.mc, &battery) {
            Ok(n) => work.front_lines = n,
            Err(e) => fail(e, &mut work),
        }
        if battery.metadata_caches {
            match self.mc.flush_metadata() {
                Ok(n) => work.metadata_lines = n,
                Err(e) => fail(e, &mut work),
            }
        }
        self.mc.drop_volatile();
        if battery.wpq {
            work.wpq_entries = self.mc.st.nvm.drain_wpq(&self.mc.st.layout);
        } else {
            self.mc.st.nvm.discard_wpq();
        }
        if !battery.nv_registers {
            self.mc.st.chip.roots.clear();
        }
        self.mc.st.chip.crashed = true;
        let (c1, r1, w1) = self.snapshot();
        work.crypto = c1.since(&c0);
        work.nvm_reads = r1.since(&r0);
        work.nvm_writes = w1.since(&w0);
        work
    }

    /// Orderly shutdown: every buffered line is secured and written.
    pub fn shutdown_clean(&mut self) -> Result<(), CheckFailure> {
        self.front.flush_clean(&mut self.mc)?;
        self.mc.flush_metadata()?;
        self.mc.drop_volatile();
        self.mc.st.nvm.drain_wpq(&self.mc.st.layout);
        self.mc.st.chip.crashed = false;
        Ok(())
    }

    /// Whether recovery must rebuild the tree: its nodes may be stale in NVM.
    pub fn needs_rebuild(&self) -> bool {
        match self.cfg.recovery.rebuild_tree {
            TreeRebuild::Always => true,
            TreeRebuild::Never => false,
            TreeRebuild::Auto => {
                self.cfg.metadata_cache.tree_policy() == WritePolicy::WriteBack && !self.cfg.persistence.battery.metadata_caches
            }
        }
    }

    /// The scheme's recovery procedure, after `power_fail`.
    pub fn recover(&mut self) -> RecoveryReport {
        let (c0, r0, w0) = self.snapshot();
        let mut rep = RecoveryReport { root_registers_lost: !self.cfg.persistence.battery.nv_registers, ..Default::default() };
        if self.mc.secure && self.needs_rebuild() {
            if let Some(out) = self.mc.tree.rebuild(&mut self.mc.st) {
                rep.tree_rebuilt = out.mismatched_roots.is_empty();
                rep.rebuild = Some(out);
            }
        }
        let (c1, r1, w1) = self.snapshot();
        rep.crypto = c1.since(&c0);
        rep.nvm_reads = r1.since(&r0);
        rep.nvm_writes = w1.since(&w0);
        rep
    }
}
