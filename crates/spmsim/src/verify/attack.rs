//! The attack harness (threat model: SecPB II-A; STAR II-B). An attacker
//! with physical access rewrites the NVM image between power-off and
//! power-on; the chip (keys, root registers, caches) is out of reach.
//!
//! ```text
//!  run half the workload -> clean shutdown -> old image -> power on
//!  run the rest          -> clean shutdown -> final image + chip
//!  for each attack: mutate a copy of the final image -> power on -> verify
//! ```
//! An attack this run offers nothing for (a replay when no block changed
//! between the two snapshots) is reported as skipped, not as undetected.

use crate::config::SimConfig;
use crate::engine::hooks::OwnState;
use crate::engine::layout::Layout;
use crate::engine::nvm::{Nvm, NvmImage};
use crate::machine::System;
use crate::scheme::params::Front;
use crate::util::rng::SplitMix64;
use crate::verify::image;
use crate::workload::Event;
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct AttackResult {
    pub name: String,
    /// What the attacker changed.
    pub target: String,
    pub detected: bool,
    /// The first failed check and its address, or why nothing was checked.
    #[serde(rename = "where")]
    pub where_: String,
    /// Set when the threat model rules the attack out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ruled_out: Option<String>,
    /// Set when this run gave the attack nothing to work on (why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped: Option<String>,
}

impl AttackResult {
    /// An attack this run gave nothing to work on, and why.
    fn skipped(name: &str, why: &str) -> Self {
        AttackResult {
            name: name.into(),
            target: "none".into(),
            detected: false,
            where_: "not attempted".into(),
            ruled_out: None,
            skipped: Some(why.into()),
        }
    }

    /// Whether the attack was carried out: not ruled out, not skipped.
    pub fn applicable(&self) -> bool {
        self.ruled_out.is_none() && self.skipped.is_none()
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct AttackReport {
    pub scheme: String,
    pub workload: String,
    pub attacks: Vec<AttackResult>,
    /// Applicable attacks that no check detected.
    pub undetected: u64,
    /// Untampered images a check refused (1 or 0: the crash image powered
    /// on before the scheme's recovery attacks).
    pub false_alarms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub false_alarm: Option<String>,
}

impl AttackReport {
    /// The one rule for judging an attack run (`spmsim attack`'s exit code
    /// and `check-all` share it): a secure configuration must detect every
    /// applicable attack and refuse no untampered crash image, unless it is
    /// a crash control (`expect_crash_violations`), whose recovery is built
    /// to fail; an insecure one (`security.enabled = false`, e.g. bbb) is a
    /// control that must let some through, or the harness would be showing
    /// nothing.
    pub fn as_expected(&self, cfg: &SimConfig) -> bool {
        if cfg.security.enabled && cfg.expect_undetected_attacks {
            self.undetected > 0 && self.false_alarms == 0
        } else if cfg.security.enabled {
            self.undetected == 0 && (self.false_alarms == 0 || cfg.expect_crash_violations)
        } else {
            self.undetected > 0
        }
    }
}

fn flip(b: &mut [u8; 64], bit: usize) {
    b[bit / 8] ^= 1 << (bit % 8);
}

struct Ctx<'a> {
    cfg: &'a SimConfig,
    chip: crate::engine::chip::ChipState,
    final_img: NvmImage,
}

impl Ctx<'_> {
    fn check(&self, name: &str, target: String, img: NvmImage, focus: u64) -> AttackResult {
        let mut nvm = Nvm::new(self.cfg.persistence.wpq_entries as usize);
        nvm.image = img;
        let mut mc = crate::scheme::controller_on_chip(self.cfg, self.chip.clone(), nvm);
        let rep = image::verify(&mut mc);
        let focus_s = format!("{:#x}", focus * 64);
        let hit = rep.failures.iter().find(|f| f.address == focus_s).or(rep.failures.first());
        AttackResult {
            name: name.into(),
            target,
            detected: !rep.ok,
            where_: hit.map(|f| format!("{} at {} ({})", f.check, f.address, f.region)).unwrap_or_else(|| "no check failed".into()),
            ruled_out: None,
            skipped: None,
        }
    }
}

/// Records of a page rolled back to never-written: its data blocks, the
/// MAC lines that cover them and its counter block are removed.
fn rollback_page(layout: &crate::engine::layout::Layout, img: &mut NvmImage, block: u64) -> u64 {
    let (ci, _) = layout.counter_of(block);
    let per = layout.blocks_per_counter_block();
    let blocks = ci * per..((ci + 1) * per).min(layout.data_blocks);
    let macs = layout.mac_line_of(blocks.start).0..=layout.mac_line_of(blocks.end - 1).0;
    let counter = layout.meta_addr(0, ci);
    img.retain(|a| !blocks.contains(&a) && !macs.contains(&a) && a != counter);
    counter
}

pub fn run(cfg: &SimConfig, workload: &str, events: &[Event], seed: u64) -> Result<AttackReport, String> {
    let mut sys = System::new(cfg, seed);
    let half = events.len() / 2;
    for (i, e) in events.iter().enumerate() {
        if i == half {
            break;
        }
        sys.apply(e).map_err(|err| format!("event {}: {err}", i + 1))?;
    }
    // The old image must be a state in the final image's own history (a
    // clone that shut down while the original ran on would reuse counters
    // the original later uses): power the machine off cleanly, keep its
    // image, then power it on again and go on.
    sys.shutdown_clean().map_err(|e| e.to_string())?;
    let old_img = sys.mc.st.nvm.image.clone();
    for (i, e) in events.iter().enumerate().skip(half) {
        sys.apply(e).map_err(|err| format!("event {}: {err}", i + 1))?;
    }
    sys.shutdown_clean().map_err(|e| e.to_string())?;
    let layout = sys.mc.layout().clone();
    let ctx = Ctx { cfg, chip: sys.mc.chip_state(), final_img: sys.mc.st.nvm.image.clone() };

    let data: Vec<u64> = ctx.final_img.sorted_addrs().into_iter().filter(|a| *a < layout.data_blocks).collect();
    if data.len() < 2 {
        return Err("the workload wrote fewer than two blocks; nothing to attack".into());
    }
    let mut r = SplitMix64::new(seed ^ 0xA77AC);
    let a = data[r.below(data.len() as u64) as usize];
    let mut b = data[r.below(data.len() as u64) as usize];
    if b == a {
        b = *data.iter().find(|x| **x != a).unwrap();
    }
    // A block that changed between the two snapshots, for the replays.
    let replay = data.iter().copied().find(|x| old_img.get(*x).is_some() && old_img.get(*x) != ctx.final_img.get(*x));

    let mut out = Vec::new();
    let get = block_of;

    let mut img = ctx.final_img.clone();
    let mut blk = get(&img, a);
    flip(&mut blk, 3);
    img.put(a, blk);
    out.push(ctx.check("ciphertext-bit-flip", format!("data block {:#x}, bit 3", a * 64), img, a));

    let (la, slot) = layout.mac_line_of(a);
    let mut img = ctx.final_img.clone();
    let mut line = get(&img, la);
    flip(&mut line, slot * 64 + 5);
    img.put(la, line);
    out.push(ctx.check("mac-bit-flip", format!("MAC of {:#x}, bit 5", a * 64), img, a));

    let mut img = ctx.final_img.clone();
    let mut line = get(&img, la);
    flip(&mut line, slot * 64 + 60);
    img.put(la, line);
    out.push(ctx.check("mac-spare-bit-flip", format!("MAC of {:#x}, spare bit 60", a * 64), img, a));

    out.push(splice(&ctx, &layout, a, b));

    match replay {
        Some(x) => {
            let (lx, sx) = layout.mac_line_of(x);
            let mut img = ctx.final_img.clone();
            img.put(x, get(&old_img, x));
            let mut line = get(&img, lx);
            line[sx * 8..sx * 8 + 8].copy_from_slice(&get(&old_img, lx)[sx * 8..sx * 8 + 8]);
            img.put(lx, line);
            out.push(ctx.check("replay-data-mac", format!("old data+MAC of {:#x}", x * 64), img.clone(), x));
            let (ci, _) = layout.counter_of(x);
            let ca = layout.meta_addr(0, ci);
            img.put(ca, get(&old_img, ca));
            out.push(ctx.check("replay-data-mac-counter", format!("old data+MAC+counter block of {:#x}", x * 64), img, x));
        }
        None => {
            for n in ["replay-data-mac", "replay-data-mac-counter"] {
                out.push(AttackResult::skipped(n, "no block changed between the two snapshots; use more ops"));
            }
        }
    }

    let (ci, cslot) = layout.counter_of(a);
    let ca = layout.meta_addr(0, ci);
    let mut img = ctx.final_img.clone();
    let mut cb = get(&img, ca);
    let bit = layout.counter_format.counter_bit(cslot);
    flip(&mut cb, bit);
    img.put(ca, cb);
    out.push(ctx.check("counter-tamper", format!("counter of {:#x} in counter block {ca:#x}", a * 64), img, a));

    if layout.levels() > 1 {
        let (pl, pi, _) = layout.parent_of(0, ci).unwrap();
        let na = layout.meta_addr(pl, pi);
        let mut img = ctx.final_img.clone();
        let mut nb = img.get(na).copied().unwrap_or_else(|| sys.mc.rules.tree.default_block(pl));
        flip(&mut nb, 9);
        img.put(na, nb);
        out.push(ctx.check("tree-node-tamper", format!("level-{pl} node {na:#x} above {:#x}", a * 64), img, a));
    }

    out.extend(rollbacks(&ctx, &layout, a));

    out.extend(ruled_out_on_chip(cfg));
    if let Some(r) = pad_reuse_after_crash(cfg, events, seed)? {
        out.push(r);
    }
    let false_alarm = recovery_attacks(cfg, events, seed, &mut out)?;
    let undetected = out.iter().filter(|x| x.applicable() && !x.detected).count() as u64;
    Ok(AttackReport {
        scheme: cfg.name.clone(),
        workload: workload.into(),
        attacks: out,
        undetected,
        false_alarms: false_alarm.is_some() as u64,
        false_alarm,
    })
}

/// A block's bytes in `img`, zeros where it holds none.
fn block_of(img: &NvmImage, addr: u64) -> [u8; 64] {
    img.get(addr).copied().unwrap_or([0; 64])
}

/// Blocks `a` and `b` swapped with their MACs.
fn splice(ctx: &Ctx, layout: &Layout, a: u64, b: u64) -> AttackResult {
    let get = block_of;
    let (la, slot) = layout.mac_line_of(a);
    let mut img = ctx.final_img.clone();
    let (lb, slot_b) = layout.mac_line_of(b);
    let (da, db) = (get(&img, a), get(&img, b));
    img.put(a, db);
    img.put(b, da);
    let (mut line_a, mut line_b) = (get(&img, la), get(&img, lb));
    let ma: [u8; 8] = line_a[slot * 8..slot * 8 + 8].try_into().unwrap();
    let mb: [u8; 8] = line_b[slot_b * 8..slot_b * 8 + 8].try_into().unwrap();
    if la == lb {
        line_a[slot * 8..slot * 8 + 8].copy_from_slice(&mb);
        line_a[slot_b * 8..slot_b * 8 + 8].copy_from_slice(&ma);
        img.put(la, line_a);
    } else {
        line_a[slot * 8..slot * 8 + 8].copy_from_slice(&mb);
        line_b[slot_b * 8..slot_b * 8 + 8].copy_from_slice(&ma);
        img.put(la, line_a);
        img.put(lb, line_b);
    }
    ctx.check("splice", format!("swap data+MAC of {:#x} and {:#x}", a * 64, b * 64), img, a)
}

/// Rollbacks to the initial state: the records are removed, so the image
/// reads as never written where the root registers vouch for writes.
fn rollbacks(ctx: &Ctx, layout: &Layout, a: u64) -> Vec<AttackResult> {
    let mut out = Vec::new();
    let (ci, _) = layout.counter_of(a);
    let mut img = ctx.final_img.clone();
    let counter = rollback_page(layout, &mut img, a);
    out.push(ctx.check(
        "rollback-page",
        format!("page of {:#x} never written (data, MAC lines, counter block {counter:#x} removed)", a * 64),
        img,
        a,
    ));

    let mut img = ctx.final_img.clone();
    rollback_page(layout, &mut img, a);
    let mut node = layout.parent_of(0, ci);
    while let Some((pl, pi, _)) = node {
        img.retain(|x| x != layout.meta_addr(pl, pi));
        node = layout.parent_of(pl, pi);
    }
    out.push(ctx.check("rollback-page-and-tree-path", format!("page of {:#x} and every tree node above it never written", a * 64), img, a));

    out.push(ctx.check("rollback-image", "every record removed: the whole image never written".into(), NvmImage::default(), a));
    out
}

/// The attacks the threat model rules out: on the trusted chip's own state
/// (its registers, its caches, the front end's battery-backed store, the
/// scheme's on-chip state).
fn ruled_out_on_chip(cfg: &SimConfig) -> Vec<AttackResult> {
    let mut out = Vec::new();
    for (n, why) in [
        ("root-register-tamper", "on-chip non-volatile register: inside the trusted chip (SecPB II-A)"),
        ("metadata-cache-tamper", "on-chip cache: inside the trusted chip (SecPB II-A)"),
    ] {
        out.push(AttackResult {
            name: n.into(),
            target: "on chip".into(),
            detected: false,
            where_: "not applicable".into(),
            ruled_out: Some(why.into()),
            skipped: None,
        });
    }
    // The front end's battery-backed store is on chip; then the scheme's.
    let front = match cfg.scheme.work().front {
        Front::MemoryController => None,
        Front::PersistBuffer => Some(OwnState::OnChip {
            name: "persist-buffer-tamper",
            why: "the battery-backed persist buffer sits beside L1D, inside the trusted chip (SecPB II-A, III)",
        }),
        Front::CacheHierarchy => Some(OwnState::OnChip {
            name: "data-cache-tamper",
            why: "eADR's battery-backed data caches are inside the trusted chip (SecPB II-A, II-C)",
        }),
    };
    for state in front.into_iter().chain(crate::scheme::describe(cfg).own_state()) {
        match state {
            OwnState::OnChip { name, why } => out.push(AttackResult {
                name: name.into(),
                target: "on chip".into(),
                detected: false,
                where_: "not applicable".into(),
                ruled_out: Some(why.into()),
                skipped: None,
            }),
        }
    }
    out
}

/// Triad-NVM II-A4's attack on counters a crash loses: the attacker knows
/// the plaintext of every write of a non-persistent block before a crash
/// (a malicious program wrote it) and so every pad those writes used; after
/// recovery the block is written anew, and the attacker XORs the new
/// ciphertext with each known pad. A pad used again gives the new
/// plaintext away. Run on machines with persistent regions only (None
/// otherwise): elsewhere every counter persists with its data.
fn pad_reuse_after_crash(cfg: &SimConfig, events: &[Event], seed: u64) -> Result<Option<AttackResult>, String> {
    const NAME: &str = "pad-reuse-after-crash";
    let mut sys = System::new(cfg, seed);
    if !sys.mc.layout().has_regions() || !sys.mc.secure() {
        return Ok(None);
    }
    sys.mc.st.crypto.ledger = Some(Default::default());
    for (i, e) in events.iter().enumerate() {
        sys.apply(e).map_err(|err| format!("event {}: {err}", i + 1))?;
    }
    let layout = sys.mc.layout().clone();
    let mut blocks: Vec<u64> = sys.volatile.keys().copied().filter(|&b| !layout.is_persistent(b)).collect();
    blocks.sort_unstable();
    let Some(&x) = blocks.first() else {
        return Ok(Some(AttackResult::skipped(NAME, "the run wrote no non-persistent block")));
    };
    let known = sys.mc.st.crypto.ledger.take().expect("set above");
    let known: Vec<(crate::engine::crypto::PadUse, [u8; 64])> =
        known.lock().expect("the pad ledger").iter().filter(|(u, _)| u.block == x).map(|(u, p)| (*u, *p)).collect();
    sys.power_fail();
    sys.recover();
    let mut r = SplitMix64::new(seed ^ 0x9AD);
    let fresh: [u8; 64] = std::array::from_fn(|_| r.next_u64() as u8);
    sys.mc.write(x, &fresh).map_err(|e| format!("the first write of {:#x} after recovery: {e}", x * 64))?;
    let ct = sys.mc.st.nvm.peek(x).unwrap_or([0; 64]);
    let revealed = known.iter().find(|(_, pad)| (0..64).all(|i| ct[i] ^ pad[i] == fresh[i]));
    let key = sys.mc.st.crypto.key_of(x);
    Ok(Some(AttackResult {
        name: NAME.into(),
        target: format!(
            "non-persistent block {:#x}: {} pads of writes before a crash, against its first write after recovery",
            x * 64,
            known.len()
        ),
        detected: revealed.is_none(),
        where_: match revealed {
            Some((u, _)) => format!(
                "the pad of counter ({}, {}) under key set {} was used again: the new plaintext is revealed",
                u.major, u.minor, u.key
            ),
            None => format!("no earlier pad decrypts the new ciphertext: it was written under key set {key}"),
        },
        ruled_out: None,
        skipped: None,
    }))
}

/// The scheme's attacks on its own recovery state: crash at the last event
/// after which the scheme holds such state, then power the image on
/// untampered (recovery must pass: anything else is a false alarm) and
/// once per attack (recovery or the checks after it must fail). Returns
/// the false alarm's first failure, if any.
fn recovery_attacks(cfg: &SimConfig, events: &[Event], seed: u64, out: &mut Vec<AttackResult>) -> Result<Option<String>, String> {
    let names = crate::scheme::describe(cfg).recovery_attack_names();
    if names.is_empty() {
        return Ok(None);
    }
    let mut probe = System::new(cfg, seed);
    let mut last = None;
    for (i, e) in events.iter().enumerate() {
        probe.apply(e).map_err(|err| format!("event {}: {err}", i + 1))?;
        if probe.mc.rules.scheme.recovery_state_pending(&probe.mc.st, !probe.volatile.is_empty()) {
            last = Some(i);
        }
    }
    let Some(last) = last else {
        for &n in names {
            out.push(AttackResult::skipped(n, "no crash point of this run leaves the scheme recovery state to attack; use more ops"));
        }
        return Ok(None);
    };
    let mut crashed = System::new(cfg, seed);
    let mut earlier = NvmImage::default();
    for (i, e) in events[..=last].iter().enumerate() {
        if i == last / 2 {
            earlier = crashed.mc.st.nvm.image.clone();
        }
        crashed.apply(e).map_err(|err| format!("event {}: {err}", i + 1))?;
    }
    crashed.power_fail();
    let chip = crashed.mc.chip_state();
    let power_on = |img: NvmImage, after: &[(u64, Option<[u8; 64]>)], focus: Option<u64>| {
        let mut nvm = Nvm::new(cfg.persistence.wpq_entries as usize);
        nvm.image = img;
        let mc = crate::scheme::controller_on_chip(cfg, chip.clone(), nvm);
        let (mut rep, mut mc) = image::verify_saved_with(cfg, mc, |mc| {
            for &(a, b) in after {
                match b {
                    Some(b) => mc.st.nvm.image.put(a, b),
                    None => mc.st.nvm.image.remove(a),
                }
            }
        });
        // A block no check refused but the attack aimed at: read back as
        // valid, the attack got through; refused, it was caught.
        if let (Some(b), true) = (focus, rep.ok) {
            if let Err(e) = mc.read(b) {
                rep.ok = false;
                rep.failures.push(image::VerifyFailure {
                    address: format!("{:#x}", b * 64),
                    region: "data".into(),
                    check: e.name().into(),
                    detail: format!("the attacked block is refused on read: {e}"),
                });
            }
        }
        let recovered: Vec<(u64, [u8; 64])> = mc.st.nvm.image.iter().map(|(a, b)| (a, *b)).collect();
        (rep, recovered)
    };
    let (clean, clean_image) = power_on(crashed.mc.st.nvm.image.clone(), &[], None);
    let false_alarm = (!clean.ok).then(|| clean.failures.first().map(|f| format!("{}: {}", f.check, f.detail)).unwrap_or_default());
    let attacks = crashed.mc.rules.scheme.recovery_attacks(&crashed.mc.rules, &crashed.mc.st, &earlier);
    for &n in names {
        match attacks.iter().find(|a| a.name == n) {
            Some(a) => {
                let (rep, image) = power_on(a.image.clone(), &a.after_recovery, a.focus);
                if rep.ok && a.after_recovery.is_empty() && image == clean_image {
                    // Recovery rewrote every line the attacker changed (STAR
                    // restores a stale node from its children's LSBs): the
                    // recovered memory is the untampered one's, byte for
                    // byte, so the attack did nothing to detect.
                    out.push(AttackResult::skipped(
                        n,
                        "recovery rewrote what the attack changed: the recovered image equals the untampered one's",
                    ));
                    continue;
                }
                let hit = rep.failures.first();
                out.push(AttackResult {
                    name: n.into(),
                    target: format!("{} (crash after event {})", a.target, last + 1),
                    detected: !rep.ok,
                    where_: hit.map(|f| format!("{} at {} ({})", f.check, f.address, f.region)).unwrap_or_else(|| "no check failed".into()),
                    ruled_out: None,
                    skipped: None,
                });
            }
            None => out.push(AttackResult::skipped(n, "the crashed image holds nothing this attack needs")),
        }
    }
    Ok(false_alarm)
}
