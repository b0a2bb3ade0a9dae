//! Saving, loading, inspecting and verifying an NVM image and a chip state.
//!
//! A saved machine is a directory:
//! - `nvm.img`: the untrusted NVM, everything off chip. A 40-byte header
//!   (magic `SPMSIMG1`, version u32, flags u32 = 0, capacity u64, tree kind
//!   u8, levels u8, arity u8, reserved u8 = 0, reserved u32 = 0, record count
//!   u64), then records of (block address u64, 64 bytes), sorted by address,
//!   all little-endian. Absent blocks hold their initial value. Every header
//!   byte is checked, and every record byte is data the security engine
//!   checks, so no byte can change unnoticed.
//! - `chip.json`: the trusted chip state (seed, keys, root registers) and
//!   the resolved configuration. It stands for on-chip storage and is never
//!   part of the image.
//! - `config.toml`: the resolved configuration, for people.

use crate::config::{SimConfig, TreeConfig};
use crate::engine::chip::ChipState;
use crate::engine::controller::MemoryController;
use crate::engine::layout::Region;
use crate::engine::nvm::{Nvm, NvmImage};
use crate::machine::System;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::Path;

pub const MAGIC: &[u8; 8] = b"SPMSIMG1";
pub const VERSION: u32 = 1;
pub const HEADER_BYTES: usize = 40;
pub const RECORD_BYTES: usize = 72;

#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct ImageError {
    pub file: String,
    pub message: String,
}

fn ierr(file: &Path, message: impl Into<String>) -> ImageError {
    ImageError { file: file.display().to_string(), message: message.into() }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ChipFile {
    pub format: String,
    pub version: u32,
    pub config: SimConfig,
    pub chip: ChipState,
}

fn tree_code(cfg: &SimConfig) -> u8 {
    match cfg.tree {
        TreeConfig::Bmt { .. } => 0,
        TreeConfig::Sit { .. } => 1,
    }
}

/// Write the image and chip state of a powered-off machine into `dir`.
/// All three files or none (see [`crate::util::output`]).
pub fn save(dir: &Path, cfg: &SimConfig, mc: &MemoryController) -> Result<(), ImageError> {
    let out_err = |e: crate::util::output::OutputError| ImageError { file: e.path, message: e.message };
    let mut files = crate::util::output::ResultFiles::new(dir).map_err(out_err)?;
    let layout = mc.layout();
    let addrs = mc.st.nvm.image.sorted_addrs();
    let mut out = Vec::with_capacity(HEADER_BYTES + addrs.len() * RECORD_BYTES);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&cfg.memory.capacity_bytes.to_le_bytes());
    out.extend_from_slice(&[tree_code(cfg), layout.levels() as u8, layout.arity as u8, 0]);
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&(addrs.len() as u64).to_le_bytes());
    for a in addrs {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(mc.st.nvm.image.get(a).unwrap());
    }
    files.add("nvm.img", &out).map_err(out_err)?;
    let chip = ChipFile { format: "spmsim-chip".into(), version: VERSION, config: cfg.clone(), chip: mc.chip_state() };
    files.add("chip.json", serde_json::to_string_pretty(&chip).unwrap().as_bytes()).map_err(out_err)?;
    files.add("config.toml", cfg.to_toml().as_bytes()).map_err(out_err)?;
    files.commit().map_err(out_err)
}

pub fn load_chip(dir: &Path) -> Result<ChipFile, ImageError> {
    let p = dir.join("chip.json");
    let text = std::fs::read_to_string(&p).map_err(|e| ierr(&p, e.to_string()))?;
    let c: ChipFile = serde_json::from_str(&text).map_err(|e| ierr(&p, format!("not a chip state: {e}")))?;
    if c.format != "spmsim-chip" || c.version != VERSION {
        return Err(ierr(&p, format!("unsupported chip state format {} version {}", c.format, c.version)));
    }
    c.config.validate().map_err(|(k, m)| ierr(&p, format!("config key `{k}`: {m}")))?;
    Ok(c)
}

/// Parse `nvm.img`, checking it against the chip's configuration.
pub fn load_image(dir: &Path, chip: &ChipFile) -> Result<NvmImage, ImageError> {
    let p = dir.join("nvm.img");
    let b = std::fs::read(&p).map_err(|e| ierr(&p, e.to_string()))?;
    if b.len() < HEADER_BYTES {
        return Err(ierr(&p, format!("{} bytes is shorter than the {HEADER_BYTES}-byte header", b.len())));
    }
    let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    if &b[0..8] != MAGIC {
        return Err(ierr(&p, "header offset 0: bad magic, not an spmsim NVM image"));
    }
    if u32_at(8) != VERSION {
        return Err(ierr(&p, format!("header offset 8: unsupported version {}", u32_at(8))));
    }
    if u32_at(12) != 0 {
        return Err(ierr(&p, format!("header offset 12: flags must be 0, found {:#x}", u32_at(12))));
    }
    let mc = crate::scheme::controller(&chip.config, chip.chip.seed);
    let layout = mc.layout().clone();
    if u64_at(16) != chip.config.memory.capacity_bytes {
        return Err(ierr(
            &p,
            format!(
                "header offset 16: capacity {} does not match the chip's configuration ({})",
                u64_at(16),
                chip.config.memory.capacity_bytes
            ),
        ));
    }
    let geometry = [tree_code(&chip.config), layout.levels() as u8, layout.arity as u8, 0];
    if b[24..28] != geometry {
        return Err(ierr(
            &p,
            format!("header offset 24: tree geometry {:?} does not match the chip's configuration {:?}", &b[24..28], geometry),
        ));
    }
    if u32_at(28) != 0 {
        return Err(ierr(&p, "header offset 28: reserved field must be 0"));
    }
    let n = u64_at(32);
    let body = (b.len() - HEADER_BYTES) as u64;
    if !body.is_multiple_of(RECORD_BYTES as u64) || body / RECORD_BYTES as u64 != n {
        return Err(ierr(
            &p,
            format!("header offset 32: {n} records declared but the file holds {body} bytes of records ({RECORD_BYTES} B each)"),
        ));
    }
    let mut img = NvmImage::default();
    let mut prev: Option<u64> = None;
    for i in 0..n as usize {
        let o = HEADER_BYTES + i * RECORD_BYTES;
        let a = u64_at(o);
        if a >= layout.end {
            return Err(ierr(
                &p,
                format!("record {i} (offset {o}): block address {a:#x} is outside the NVM layout (end {:#x})", layout.end),
            ));
        }
        if prev.is_some_and(|q| q >= a) {
            return Err(ierr(
                &p,
                format!(
                    "record {i} (offset {o}): block address {a:#x} is not above the previous record's; records must be sorted and unique"
                ),
            ));
        }
        prev = Some(a);
        img.put(a, b[o + 8..o + RECORD_BYTES].try_into().unwrap());
    }
    Ok(img)
}

/// A saved machine, powered back on: no caches, empty WPQ.
pub fn open(dir: &Path) -> Result<(ChipFile, MemoryController), ImageError> {
    let chip = load_chip(dir)?;
    let image = load_image(dir, &chip)?;
    let mut nvm = Nvm::new(chip.config.persistence.wpq_entries as usize);
    nvm.image = image;
    let mc = crate::scheme::controller_on_chip(&chip.config, chip.chip.clone(), nvm);
    Ok((chip, mc))
}

#[derive(Clone, Debug, Serialize)]
pub struct VerifyFailure {
    /// Byte address of the data block, or block address of the metadata.
    pub address: String,
    pub region: String,
    pub check: String,
    pub detail: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct VerifyReport {
    pub ok: bool,
    /// Set when the image is a crash image and the scheme's recovery ran on
    /// the in-memory copy before the checks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryApplied>,
    pub metadata_blocks_checked: u64,
    pub data_blocks_checked: u64,
    /// Non-persistent data blocks a recovery started afresh and no write
    /// has reached since (Triad-NVM III-C: their counter blocks' level-1
    /// entries are zero): free memory, whose old contents no read accepts,
    /// so not read.
    #[serde(skip_serializing_if = "is_zero")]
    pub non_persistent_reset: u64,
    pub failures: Vec<VerifyFailure>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Clone, Debug, Serialize)]
pub struct RecoveryApplied {
    /// What the recovery did, in words.
    pub action: String,
    pub tree_nodes_rebuilt: u64,
    /// Top nodes whose rebuilt hash disagrees with the root register.
    pub mismatched_roots: Vec<u64>,
}

/// Verify a saved machine as it powers on. A crash image (the chip's flag
/// says the last power-off was a failure) of a scheme whose recovery
/// rebuilds the tree holds stale tree nodes by design; the scheme's own
/// recovery runs first, on this in-memory copy only, and the report says
/// so. The rebuilt tree must match the root registers, and everything is
/// then checked as for any image, so tampering with the counters, MACs or
/// data of a crash image is still caught; the stored tree nodes themselves
/// are what that recovery discards, so they vouch for nothing there.
pub fn verify_saved(cfg: &SimConfig, mc: MemoryController) -> VerifyReport {
    verify_saved_with(cfg, mc, |_| {}).0
}

/// [`verify_saved`], with `between` run on the machine after its recovery
/// and before the checks (the attack harness tampers there with what a
/// recovery left for later: Triad-NVM's zeroed nodes), and the machine
/// given back after them.
pub fn verify_saved_with(
    cfg: &SimConfig,
    mc: MemoryController,
    between: impl FnOnce(&mut MemoryController),
) -> (VerifyReport, MemoryController) {
    let mut sys = System::with_controller(cfg, mc);
    let mut applied = None;
    let mut track_mismatches = 0;
    let mut scheme_failure = None;
    // The scheme's own recovery hook decides whether it rebuilds.
    if let Some(rec) = (sys.mc.chip().crashed && sys.mc.secure()).then(|| sys.recover()) {
        track_mismatches = rec.count("counter_track_mismatches");
        scheme_failure = rec.scheme_failure;
        if let Some(out) = rec.rebuild {
            applied = Some(RecoveryApplied {
                action: format!("crash image: the scheme's recovery rebuilt {} tree nodes from the stored counter blocks and compared them with the root registers", out.nodes_rebuilt),
                tree_nodes_rebuilt: out.nodes_rebuilt,
                mismatched_roots: out.mismatched_roots,
            });
        }
    }
    between(&mut sys.mc);
    let mut rep = verify(&mut sys.mc);
    if let Some(why) = scheme_failure {
        rep.failures.insert(
            0,
            VerifyFailure {
                address: "recovery area".into(),
                region: "scheme recovery".into(),
                check: "recovery".into(),
                detail: format!("recovery: {why}"),
            },
        );
        rep.ok = false;
    }
    if track_mismatches > 0 {
        // Secon 3.2: the marks in first-level CMACs and the ADR bitmap
        // must agree before any counter is rolled back.
        rep.failures.insert(
            0,
            VerifyFailure {
                address: "first-level BMT nodes".into(),
                region: "counter track".into(),
                check: "counter-track".into(),
                detail: format!("recovery: {track_mismatches} mark(s) in first-level CMACs disagree with the counter track bitmap"),
            },
        );
        rep.ok = false;
    }
    if let Some(a) = &applied {
        let top = sys.mc.layout().top_level();
        let failed: Vec<VerifyFailure> = a
            .mismatched_roots
            .iter()
            .map(|&i| VerifyFailure {
                address: format!("{:#x}", sys.mc.layout().meta_addr(top, i)),
                region: format!("tree level {top} node {i:#x}"),
                check: "root".into(),
                detail: format!(
                    "recovery: the tree rebuilt from the stored counter blocks disagrees with the root register of top node {i:#x}"
                ),
            })
            .collect();
        rep.failures.splice(0..0, failed);
        rep.ok = rep.failures.is_empty();
    }
    rep.recovery = applied;
    (rep, sys.mc)
}

/// Check everything the root registers vouch for, then everything else the
/// image holds:
/// 1. Walk down from every root register that is not at its initial value:
///    fetch each node through the secure path (so it is checked against its
///    parent), and descend into every child whose entry is not the initial
///    one. A block absent from the image is read as the tree's initial
///    block, so a removed or rolled-back counter block or node fails against
///    the entry its parent still holds. Each counter block reached puts all
///    its data blocks on the list to read.
/// 2. Fetch every stored counter block and tree node the walk did not reach.
/// 3. Read every listed data block, and every stored data block or MAC line
///    (with its neighbours in the line), through the secure read path: a
///    block whose verified counter is non-zero must carry a matching MAC,
///    one whose counter is zero must be absent or zero with a zero MAC.
///
/// Skipping a child whose entry is initial is sound because that entry
/// vouches for an all-initial subtree. BMT: the entry is the keyed hash of
/// the never-written child block, so (hash collisions aside) the child is
/// that block, whose own entries are all initial, and so on down. SIT: a
/// parent counter of 0 means the child was never written back (every
/// write-back increments it first, and counters only grow), so the child is
/// the all-zero node, whose counters are 0 too. In both cases a stored
/// block below that differs from the initial one disagrees with its parent's
/// entry, and step 2 fetches it, so it is reported, not skipped. The walk
/// therefore costs the written part of the tree, not the capacity.
pub fn verify(mc: &mut MemoryController) -> VerifyReport {
    let layout = mc.layout().clone();
    let mut failures = Vec::new();
    let mut data: BTreeSet<u64> = BTreeSet::new();
    let mut checked: BTreeSet<u64> = BTreeSet::new();
    let mut stored_meta = 0u64;
    let per = layout.blocks_per_counter_block();
    let data_of_counter = |index: u64| index * per..((index + 1) * per).min(layout.data_blocks);
    let fail = |a: u64, level: u32, index: u64, e: crate::engine::store::CheckFailure| {
        let region = if level == 0 { "counter".to_string() } else { format!("tree level {level}") };
        VerifyFailure {
            address: format!("{a:#x}"),
            region: format!("{region} node {index:#x}"),
            check: e.name().into(),
            detail: e.to_string(),
        }
    };
    if mc.secure() {
        let top = layout.top_level();
        let mut frontier: Vec<u64> = mc
            .chip()
            .roots
            .iter()
            .filter(|&(i, v)| i < layout.level_nodes[top as usize] && !mc.rules.tree.root_is_initial(i, v))
            .map(|(i, _)| i)
            .collect();
        frontier.sort_unstable();
        // A node the scheme keeps in a register of its own (ASSURE's hot
        // tree) is a root of its own: its parent's entry for it may be
        // initial, so its walk starts at its register.
        let registered = mc.rules.scheme.subtree_registers(&mc.st);
        for level in (0..=top).rev() {
            for &(l, index) in &registered {
                if l == level && !frontier.contains(&index) {
                    frontier.push(index);
                }
            }
            let mut next = Vec::new();
            for index in frontier {
                let a = layout.meta_addr(level, index);
                checked.insert(a);
                let node = match mc.st.fetch(&mc.rules, a) {
                    Ok(b) => b,
                    Err(e) => {
                        failures.push(fail(a, level, index, e));
                        continue;
                    }
                };
                if level == 0 {
                    data.extend(data_of_counter(index));
                    continue;
                }
                let children = layout.level_nodes[level as usize - 1];
                for slot in 0..layout.arity as usize {
                    let child = index * layout.arity + slot as u64;
                    if child < children && !mc.rules.tree.child_entry_is_initial(level, &node, slot) {
                        next.push(child);
                    }
                }
            }
            frontier = next;
        }
    }
    for a in mc.st.nvm.image.sorted_addrs() {
        match layout.region(a) {
            Some(Region::Data { block }) => {
                data.insert(block);
            }
            Some(Region::MacLine { index }) => data.extend((index * 8..index * 8 + 8).filter(|b| *b < layout.data_blocks)),
            Some(Region::Counter { index }) => data.extend(data_of_counter(index)),
            _ => {}
        }
        if let Some((level, index)) = layout.meta_pos(a) {
            stored_meta += 1;
            if !mc.secure() || !checked.insert(a) {
                continue;
            }
            if let Err(e) = mc.st.fetch(&mc.rules, a) {
                failures.push(fail(a, level, index, e));
            }
        }
    }
    let mut reset = 0u64;
    for &b in &data {
        if mc.secure() && !layout.is_persistent(b) && mc.rules.marks_unwritten(&mut mc.st, layout.counter_of(b).0).unwrap_or(false) {
            reset += 1;
            continue;
        }
        if let Err(e) = mc.read(b) {
            failures.push(VerifyFailure {
                address: format!("{:#x}", b * 64),
                region: "data".into(),
                check: e.name().into(),
                detail: e.to_string(),
            });
        }
    }
    let meta = if mc.secure() { checked.len() as u64 } else { stored_meta };
    VerifyReport {
        ok: failures.is_empty(),
        recovery: None,
        metadata_blocks_checked: meta,
        data_blocks_checked: data.len() as u64 - reset,
        non_persistent_reset: reset,
        failures,
    }
}

/// Run `events`, cut the power, and verify the crash image as `image save
/// --shutdown crash` then `image verify` would: the machine is powered on
/// from the image and the chip state alone.
pub fn verify_crash_image(cfg: &SimConfig, events: &[crate::workload::Event], seed: u64) -> Result<VerifyReport, String> {
    let mut sys = System::new(cfg, seed);
    for (i, e) in events.iter().enumerate() {
        sys.apply(e).map_err(|err| format!("event {}: {err}", i + 1))?;
    }
    sys.power_fail();
    let mut nvm = Nvm::new(cfg.persistence.wpq_entries as usize);
    nvm.image = sys.mc.st.nvm.image.clone();
    Ok(verify_saved(cfg, crate::scheme::controller_on_chip(cfg, sys.mc.chip_state(), nvm)))
}

/// The one rule for judging a crash image's verification (`check-all` and
/// the tests share it): intact, except on a control
/// (`expect_crash_violations = true`), whose crash leaves a real gap that
/// verification must report. Two kinds of control leave no gap in an
/// image, whose images verify: one that drops TEP's pair order
/// (`tep-unordered`, `secon-tep-unordered`: the order of data and log is
/// broken, not integrity; the transactional guarantee fails it), and one
/// that only reuses one-time pads (one key for both regions of a Triad-NVM
/// machine; the crash oracle's pad check fails it).
pub fn crash_image_as_expected(cfg: &SimConfig, rep: &VerifyReport) -> bool {
    if gap_needs_trigger(cfg) {
        // Whether the image's writes (random-writes) triggered the gap
        // depends on them: it verifies, or its recovery fails first.
        return rep.ok || rep.failures.first().is_some_and(|f| f.check == "recovery");
    }
    let gap_in_image = cfg.expect_crash_violations && cfg.persistence.tep.pair_order && !reuses_pads_only(cfg);
    rep.ok != gap_in_image
}

/// A control whose crash loses something only once the workload triggers
/// it (its parameters say: Osiris without a stop-loss loses a block
/// rewritten more often than the trials search). A few random writes may
/// not.
pub fn gap_needs_trigger(cfg: &SimConfig) -> bool {
    cfg.scheme.params().gap_needs_trigger()
}

/// A configuration whose crash can cost only one-time pads: persistent
/// regions under one key set.
pub fn reuses_pads_only(cfg: &SimConfig) -> bool {
    !cfg.memory.persistent_regions.is_empty() && !cfg.security.volatile_key
}

#[derive(Clone, Debug, Serialize)]
pub struct InspectReport {
    pub scheme: String,
    pub tree: String,
    pub capacity_bytes: u64,
    pub levels: u32,
    /// The last power-off was a power failure (a crash image).
    pub crashed: bool,
    pub records: u64,
    pub records_by_region: std::collections::BTreeMap<String, u64>,
    pub root_registers: std::collections::BTreeMap<String, String>,
    pub layout: LayoutSummary,
}

#[derive(Clone, Debug, Serialize)]
pub struct LayoutSummary {
    pub data_blocks: u64,
    pub counter_base: u64,
    pub mac_base: u64,
    pub level_base: Vec<u64>,
    pub level_nodes: Vec<u64>,
}

pub fn inspect(chip: &ChipFile, mc: &MemoryController) -> InspectReport {
    let layout = mc.layout();
    let mut by = std::collections::BTreeMap::new();
    for a in mc.st.nvm.image.sorted_addrs() {
        let k = match layout.region(a) {
            Some(Region::Tree { level, .. }) => format!("tree-level-{level}"),
            Some(r) => r.kind().name().to_string(),
            None => "outside".into(),
        };
        *by.entry(k).or_insert(0u64) += 1;
    }
    let roots = chip.chip.roots.to_hex_map();
    InspectReport {
        scheme: chip.config.name.clone(),
        tree: mc.rules.tree.name().into(),
        capacity_bytes: chip.config.memory.capacity_bytes,
        levels: layout.levels(),
        crashed: chip.chip.crashed,
        records: mc.st.nvm.image.len() as u64,
        records_by_region: by,
        root_registers: roots,
        layout: LayoutSummary {
            data_blocks: layout.data_blocks,
            counter_base: layout.level_base[0],
            mac_base: layout.mac_base,
            level_base: layout.level_base.clone(),
            level_nodes: layout.level_nodes.clone(),
        },
    }
}
