//! A tracked cache (Anubis's AGIT, as the multiset-hash scheme and
//! CacheTree keep it): a line that fills a way writes that way's entry in
//! the recovery area, so a recovery knows what the cache held. And the
//! attacks on the recovery input of the schemes that recompute the lines a
//! tracked cache held at the crash from NVM: the multiset-hash
//! scheme (Kubo et al. 4.5; Write Hash plus the recomputed lines must be
//! Read Hash) and CacheTree (the HNodeTree over the recomputed HNodes must
//! be its register). Each attack must make that check fail, or leave a
//! block no counter candidate decrypts.
//!
//! ```text
//!  written-back line  a metadata line in NVM under a listed (cached) parent:
//!                     the parent is recomputed from it
//!  tracking entry     a way's AGIT entry: which lines are recomputed
//!  recovered data     (mset) a data block under a listed counter block:
//!                     Osiris's trials find its counter from its MAC
//! ```
//! Each is tampered (a bit flipped, an entry pointed elsewhere) and
//! replayed (put back to the same machine's earlier image).

use crate::engine::hooks::RecoveryAttack;
use crate::engine::layout::Layout;
use crate::engine::nvm::NvmImage;
use crate::engine::store::MetaStore;
use std::collections::BTreeSet;

/// Way `way`'s tracking entry in the recovery area now lists `addr`
/// (None: the way is empty). Address + 1: an all-zero entry is an empty
/// way.
pub(super) fn write_entry(st: &mut MetaStore, way: usize, addr: Option<u64>) {
    let mut entry = [0u8; 64];
    entry[..8].copy_from_slice(&addr.map_or(0, |a| a + 1).to_le_bytes());
    st.nvm.write(&st.layout, st.layout.recovery_addr(way as u64), entry);
}

/// The tracking table in NVM: each way's entry and the metadata line it
/// lists, read (and counted) as a recovery reads it.
pub(super) fn read_table(st: &mut MetaStore) -> Vec<(u64, u64)> {
    let layout = st.layout.clone();
    let Some((base, lines)) = layout.recovery else { return Vec::new() };
    (0..lines)
        .filter_map(|w| {
            let e = st.nvm.read(&layout, base + w)?;
            let a = u64::from_le_bytes(e[..8].try_into().expect("8 bytes")).checked_sub(1)?;
            layout.meta_pos(a).map(|_| (w, a))
        })
        .collect()
}

/// The multiset-hash scheme's: the four on the tracked lines, then the two
/// on Osiris's trials.
pub(super) const MSET: &[&str] = &[
    "mset-tamper-written-back-line",
    "mset-replay-written-back-line",
    "mset-tamper-tracking-entry",
    "mset-replay-tracking-entry",
    "mset-tamper-recovered-data",
    "mset-replay-recovered-data",
];

/// CacheTree's: the four on the tracked lines (its counters are written
/// through, so no trials).
pub(super) const CACHETREE: &[&str] = &[
    "cachetree-tamper-written-back-line",
    "cachetree-replay-written-back-line",
    "cachetree-tamper-tracking-entry",
    "cachetree-replay-tracking-entry",
];

/// The tracking table in `img`: each entry's line and the address of the
/// metadata line it lists.
fn tracking(layout: &Layout, img: &NvmImage) -> Vec<(u64, u64)> {
    let Some((base, lines)) = layout.recovery else { return Vec::new() };
    (base..base + lines)
        .filter_map(|e| {
            let a = u64::from_le_bytes(img.get(e)?[..8].try_into().expect("8 bytes"));
            let a = a.checked_sub(1).filter(|&a| layout.meta_pos(a).is_some())?;
            Some((e, a))
        })
        .collect()
}

fn with(img: &NvmImage, addr: u64, bytes: Option<[u8; 64]>) -> NvmImage {
    let mut out = img.clone();
    match bytes {
        Some(b) => out.put(addr, b),
        None => out.remove(addr),
    }
    out
}

fn flipped(mut b: [u8; 64], byte: usize) -> [u8; 64] {
    b[byte] ^= 1;
    b
}

fn attack(name: &'static str, target: String, image: NvmImage, focus: Option<u64>) -> RecoveryAttack {
    RecoveryAttack { name, target, image, after_recovery: Vec::new(), focus }
}

/// The attacks named in `names` (the first four of [`MSET`]'s shape, and
/// the two on recovered data when there are six).
pub(super) fn attacks(crashed: &MetaStore, earlier: &NvmImage, names: &'static [&'static str]) -> Vec<RecoveryAttack> {
    let layout = &crashed.layout;
    let img = &crashed.nvm.image;
    let table = tracking(layout, img);
    let listed: BTreeSet<u64> = table.iter().map(|&(_, a)| a).collect();
    let mut out = Vec::new();
    // A line NVM holds, not listed itself, whose parent is listed: the
    // parent is recomputed from its bytes. Counter blocks first (their
    // blocks are read back as the focus).
    let mut under_listed: Vec<(u32, u64)> = img
        .iter()
        .filter_map(|(a, _)| {
            let (level, index) = layout.meta_pos(a)?;
            let (pl, pi, _) = layout.parent_of(level, index)?;
            (listed.contains(&layout.meta_addr(pl, pi)) && !listed.contains(&a)).then_some((level, a))
        })
        .collect();
    under_listed.sort_unstable();
    let focus_of = |a: u64| match layout.meta_pos(a) {
        Some((0, c)) => img.addrs_in(c * layout.blocks_per_counter_block(), (c + 1) * layout.blocks_per_counter_block()).first().copied(),
        _ => None,
    };
    if let Some(&(level, a)) = under_listed.first() {
        let b = *img.get(a).expect("held");
        out.push(attack(
            names[0],
            format!("level-{level} line {a:#x} (written back; its parent is listed) with a bit flipped"),
            with(img, a, Some(flipped(b, 0))),
            focus_of(a),
        ));
    }
    if let Some(&(level, a)) = under_listed.iter().find(|&&(_, a)| earlier.get(a) != img.get(a)) {
        out.push(attack(
            names[1],
            format!("level-{level} line {a:#x} (written back; its parent is listed) put back to its earlier value"),
            with(img, a, earlier.get(a).copied()),
            focus_of(a),
        ));
    }
    // An entry pointed at another metadata line NVM holds, not listed: the
    // line it named is left out of the recomputation, the other put in.
    let other = img.iter().map(|(a, _)| a).find(|&a| layout.meta_pos(a).is_some() && !listed.contains(&a));
    if let (Some(&(e, a)), Some(o)) = (table.first(), other) {
        let mut b = *img.get(e).expect("held");
        b[..8].copy_from_slice(&(o + 1).to_le_bytes());
        out.push(attack(names[2], format!("tracking entry {e:#x} (listing {a:#x}) pointed at {o:#x}"), with(img, e, Some(b)), None));
    }
    if let Some((base, lines)) = layout.recovery {
        if let Some(e) = (base..base + lines).find(|&e| earlier.get(e) != img.get(e)) {
            out.push(attack(
                names[3],
                format!("tracking entry {e:#x} put back to its earlier value"),
                with(img, e, earlier.get(e).copied()),
                None,
            ));
        }
    }
    if names.len() < 6 {
        return out;
    }
    // A data block under a listed counter block: Osiris's trials recover
    // its counter from its MAC (in its line).
    let per = layout.blocks_per_counter_block();
    let data: Vec<u64> = listed
        .iter()
        .filter_map(|&a| match layout.meta_pos(a) {
            Some((0, c)) => Some(img.addrs_in(c * per, (c + 1) * per)),
            _ => None,
        })
        .flatten()
        .collect();
    if let Some(&d) = data.first() {
        let b = *img.get(d).expect("held");
        out.push(attack(
            names[4],
            format!("data block {:#x} (its counter block listed: Osiris trials it under ADR) with a bit flipped", d * 64),
            with(img, d, Some(flipped(b, 5))),
            Some(d),
        ));
    }
    if let Some(&d) = data.iter().find(|&&d| earlier.get(d).is_some() && earlier.get(d) != img.get(d)) {
        out.push(attack(
            names[5],
            format!("data block {:#x} (its counter block listed) put back to its earlier line, MAC and all", d * 64),
            with(img, d, earlier.get(d).copied()),
            Some(d),
        ));
    }
    out
}
