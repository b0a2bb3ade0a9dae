//! Contract suites: what every integrity tree and every front end promises,
//! checked for each pairing of the two.
//!
//! ```text
//!  TREES  (bmt, sit, bmt-forest)            x  FRONTS (direct, persist-buffer, cache-hierarchy)
//!     -> one machine per pair (a battery-backed preset of the front end, the tree set over it)
//!     -> every contract below runs on every machine; a failure names the machine
//! ```
//! Adding a tree or a front end is one row in [`TREES`] or [`FRONTS`].
//! The contracts are functions returning `Err(why)`, so the test that shows
//! they can fail runs one on a machine built to break it.

mod common;

use spmsim::config::SimConfig;
use spmsim::engine::controller::MemoryController;
use spmsim::engine::layout::CounterFormat;
use spmsim::engine::nvm::{Nvm, NvmImage};
use spmsim::machine::System;
use spmsim::persist::FrontEnd;
use spmsim::util::rng::SplitMix64;
use spmsim::verify::image;
use spmsim::workload::Event;
use std::collections::BTreeMap;

/// An integrity tree, as overrides over a preset.
struct Tree {
    name: &'static str,
    set: &'static [&'static str],
    /// The tree the controller must end up with (`IntegrityTree::name`).
    kind: &'static str,
    /// More than one top-level node: a Bonsai Merkle forest (SecPB VI-E).
    forest: bool,
}

const TREES: &[Tree] = &[
    Tree { name: "bmt", set: &[], kind: "bmt", forest: false },
    Tree { name: "sit", set: &["tree.type=sit"], kind: "sit", forest: false },
    Tree { name: "bmt-forest", set: &["tree.levels=2"], kind: "bmt", forest: true },
];

/// A front end: a preset whose battery domain makes every store persistent
/// once the front end has taken it, plus overrides that make the
/// structure small enough for the contracts' stores to overflow it.
struct Front {
    name: &'static str,
    preset: &'static str,
    set: &'static [&'static str],
    is: fn(&FrontEnd) -> bool,
}

const FRONTS: &[Front] = &[
    Front { name: "direct", preset: "secure-wb-battery", set: &[], is: |f| matches!(f, FrontEnd::Direct) },
    // 32 entries, drained at the watermarks: the stores below overflow it.
    Front { name: "persist-buffer", preset: "cobcm", set: &[], is: |f| matches!(f, FrontEnd::PersistBuffer(_)) },
    // 64 lines in 2 sets, so lines are evicted to the controller.
    Front {
        name: "cache-hierarchy",
        preset: "secure-eadr",
        set: &["persistence.point.cache.capacity_bytes=4096"],
        is: |f| matches!(f, FrontEnd::CacheHierarchy(_)),
    },
];

struct Machine {
    name: String,
    cfg: SimConfig,
}

impl Machine {
    fn new(tree: &Tree, front: &Front) -> Machine {
        let set: Vec<&str> = tree.set.iter().chain(front.set).copied().collect();
        let cfg = common::small(front.preset, &set);
        let m = Machine { name: format!("{}+{}", tree.name, front.name), cfg };
        // The row must build what it says, or every contract below would
        // be checking some other machine.
        let sys = m.system();
        assert_eq!(sys.mc.rules.tree.name(), tree.kind, "{}: tree", m.name);
        assert!((front.is)(&sys.fronts[0]), "{}: front end {:?}", m.name, sys.fronts[0]);
        let l = sys.mc.layout();
        assert_eq!(l.level_nodes[l.top_level() as usize] > 1, tree.forest, "{}: top-level nodes {:?}", m.name, l.level_nodes);
        assert!(sys.mc.secure(), "{}: security enabled", m.name);
        m
    }

    fn system(&self) -> System {
        System::new(&self.cfg, 7)
    }
}

fn machines() -> Vec<Machine> {
    TREES.iter().flat_map(|t| FRONTS.iter().map(move |f| Machine::new(t, f))).collect()
}

/// Run `contract` on every machine; panic naming each one it failed on.
fn on_every_machine(contract: fn(&Machine) -> Result<(), String>) {
    let all = machines();
    assert_eq!(all.len(), TREES.len() * FRONTS.len());
    let failed: Vec<String> = all.iter().filter_map(|m| contract(m).err().map(|e| format!("{}: {e}", m.name))).collect();
    assert!(failed.is_empty(), "{} of {} machines break the contract:\n{}", failed.len(), all.len(), failed.join("\n"));
}

/// Blocks the stores go to: two neighbouring pages, a page far off and the
/// last page of memory (other forest roots, other SIT subtrees), 24 blocks
/// each, every third block of a page left unwritten.
fn target_blocks(cfg: &SimConfig) -> Vec<u64> {
    let pages = cfg.memory.capacity_bytes / 4096;
    [0, 1, pages / 3, pages - 1].iter().flat_map(|p| (0..36).filter(|b| b % 3 != 2).map(move |b| p * 64 + b)).collect()
}

/// 600 seeded 8-byte stores over [`target_blocks`], some blocks written
/// many times, so persist buffers coalesce and drain and caches evict.
fn stores(cfg: &SimConfig) -> Vec<Event> {
    let blocks = target_blocks(cfg);
    let mut r = SplitMix64::new(12);
    (0..600)
        .map(|_| {
            let b = blocks[r.below(blocks.len() as u64) as usize];
            Event::store(b * 64 + 8 * r.below(8), 8, r.next_u64() | 1, false)
        })
        .collect()
}

/// What every block holds after the stores, as strict persistency has it.
fn apply_store(shadow: &mut BTreeMap<u64, [u8; 64]>, e: &Event) {
    let line = shadow.entry(e.block()).or_insert([0; 64]);
    let off = (e.addr % 64) as usize;
    line[off..off + 8].copy_from_slice(&e.value.to_le_bytes());
}

/// Run the stores; return the machine and the expected contents.
fn run_stores(m: &Machine) -> Result<(System, BTreeMap<u64, [u8; 64]>), String> {
    let mut sys = m.system();
    let mut shadow = BTreeMap::new();
    for (i, e) in stores(&m.cfg).iter().enumerate() {
        sys.apply(e).map_err(|err| format!("store {} ({}) failed: {err}", i + 1, e.describe()))?;
        apply_store(&mut shadow, e);
    }
    Ok((sys, shadow))
}

/// Power the machine on from `img` and its chip state alone, as `image
/// verify` does after `image save`.
fn power_on(m: &Machine, sys: &System, img: NvmImage) -> MemoryController {
    let mut nvm = Nvm::new(m.cfg.persistence.wpq_entries as usize);
    nvm.image = img;
    spmsim::scheme::controller_on_chip(&m.cfg, sys.mc.chip_state(), nvm)
}

fn expect_block(what: &str, block: u64, got: Result<[u8; 64], spmsim::engine::store::CheckFailure>, want: &[u8; 64]) -> Result<(), String> {
    match got {
        Ok(v) if v == *want => Ok(()),
        Ok(v) => Err(format!("{what}: block {block:#x} reads {} instead of {}", hex::encode(v), hex::encode(want))),
        Err(e) => Err(format!("{what}: block {block:#x} failed a check: {e}")),
    }
}

// ---- the contracts -------------------------------------------------------

/// A read returns the last value written: right after each store (through
/// the front end), after all of them, and from NVM after a clean shutdown.
fn read_after_write(m: &Machine) -> Result<(), String> {
    let mut sys = m.system();
    let mut shadow = BTreeMap::new();
    for e in stores(&m.cfg) {
        sys.apply(&e).map_err(|err| format!("{}: {err}", e.describe()))?;
        apply_store(&mut shadow, &e);
        expect_block("just written", e.block(), sys.read(e.block()), &shadow[&e.block()])?;
    }
    // The stores overflow every front end, so some reads above went
    // through the controller's secure read path, not a buffered copy.
    if sys.mc.st.nvm.writes.data == 0 {
        return Err("no data block reached the controller before shutdown: the front end was never overflowed".into());
    }
    for (b, want) in &shadow {
        expect_block("after every store", *b, sys.read(*b), want)?;
    }
    sys.shutdown_clean().map_err(|e| format!("clean shutdown: {e}"))?;
    for (b, want) in &shadow {
        expect_block("after a clean shutdown", *b, sys.mc.read(*b), want)?;
    }
    Ok(())
}

/// A block never written reads as zeros, whether its page or counter block
/// was written or not, before and after a power cycle.
fn never_written_reads_zero(m: &Machine) -> Result<(), String> {
    let (mut sys, shadow) = run_stores(m)?;
    let last = m.cfg.memory.capacity_bytes / 64 - 1;
    let unwritten = [2, 5, 64 + 35, 1000, 2 * 64 * 64 + 3, last];
    for b in unwritten {
        if shadow.contains_key(&b) {
            return Err(format!("block {b:#x} is meant to be unwritten, fix the test"));
        }
        expect_block("never written", b, sys.read(b), &[0; 64])?;
    }
    sys.shutdown_clean().map_err(|e| format!("clean shutdown: {e}"))?;
    let mut mc = power_on(m, &sys, sys.mc.st.nvm.image.clone());
    for b in unwritten {
        expect_block("never written, after a power cycle", b, mc.read(b), &[0; 64])?;
    }
    Ok(())
}

/// After a clean shutdown the whole image verifies from the chip state
/// alone, and every block reads back what was written.
fn clean_shutdown_verifies(m: &Machine) -> Result<(), String> {
    let (mut sys, shadow) = run_stores(m)?;
    sys.shutdown_clean().map_err(|e| format!("clean shutdown: {e}"))?;
    let rep = image::verify_saved(&m.cfg, power_on(m, &sys, sys.mc.st.nvm.image.clone()));
    if !rep.ok {
        return Err(format!("the image fails verification: {:?}", rep.failures.first()));
    }
    if rep.data_blocks_checked < shadow.len() as u64 || rep.metadata_blocks_checked == 0 {
        return Err(format!(
            "verification checked {} data and {} metadata blocks of {} written",
            rep.data_blocks_checked,
            rep.metadata_blocks_checked,
            shadow.len()
        ));
    }
    let mut mc = power_on(m, &sys, sys.mc.st.nvm.image.clone());
    for (b, want) in &shadow {
        expect_block("after power-on", *b, mc.read(*b), want)?;
    }
    Ok(())
}

/// One bit of the image changed by an attacker between power-off and
/// power-on: reading the block it protects fails the named check, and
/// verifying the image reports it.
fn tamper_detected(
    m: &Machine,
    what: &str,
    checks: &[&str],
    change: fn(&spmsim::engine::layout::Layout, u64, &mut NvmImage),
) -> Result<(), String> {
    let (mut sys, shadow) = run_stores(m)?;
    sys.shutdown_clean().map_err(|e| format!("clean shutdown: {e}"))?;
    // A written block from the middle of the list (the far page).
    let block = *shadow.keys().nth(shadow.len() / 2).unwrap();
    let mut img = sys.mc.st.nvm.image.clone();
    change(sys.mc.layout(), block, &mut img);
    let mut mc = power_on(m, &sys, img.clone());
    match mc.read(block) {
        Err(e) if checks.contains(&e.name()) => {}
        Err(e) => return Err(format!("{what}: block {block:#x} failed `{}` ({e}), expected one of {checks:?}", e.name())),
        Ok(v) => return Err(format!("{what}: block {block:#x} read {} with no check failing", hex::encode(v))),
    }
    let rep = image::verify_saved(&m.cfg, power_on(m, &sys, img));
    if rep.ok {
        return Err(format!("{what}: image verification passed"));
    }
    Ok(())
}

fn flip(img: &mut NvmImage, addr: u64, byte: usize, bit: u32) {
    let mut b = img.get(addr).copied().unwrap_or([0; 64]);
    b[byte] ^= 1 << bit;
    img.put(addr, b);
}

fn ciphertext_flip(m: &Machine) -> Result<(), String> {
    tamper_detected(m, "ciphertext byte", &["mac"], |_, block, img| flip(img, block, 17, 4))
}

fn mac_flip(m: &Machine) -> Result<(), String> {
    tamper_detected(m, "MAC byte", &["mac"], |l, block, img| {
        let (line, slot) = l.mac_line_of(block);
        flip(img, line, slot * 8 + 2, 0)
    })
}

/// The block's own counter, in whichever format the tree's leaves use.
fn counter_flip(m: &Machine) -> Result<(), String> {
    tamper_detected(m, "counter byte", &["tree", "root"], |l, block, img| {
        let (index, slot) = l.counter_of(block);
        let bit = match l.counter_format {
            CounterFormat::Split => 64 + slot * 7,
            CounterFormat::Sit => slot * 56,
        };
        flip(img, l.meta_addr(0, index), bit / 8, (bit % 8) as u32)
    })
}

/// Power fails after any store: what the battery drains, with the
/// scheme's recovery, brings back every store made so far.
fn power_fail_keeps_every_store(m: &Machine) -> Result<(), String> {
    let events = stores(&m.cfg);
    let mut sys = m.system();
    let mut shadow = BTreeMap::new();
    for (k, e) in events.iter().enumerate() {
        if k % 41 == 0 || k + 1 == events.len() {
            let mut crashed = sys.clone();
            let drain = crashed.power_fail();
            if let Some(f) = drain.failure {
                return Err(format!("crash after {k} stores: the drain failed: {f}"));
            }
            let rec = crashed.recover();
            if !rec.ok() {
                return Err(format!("crash after {k} stores: recovery failed: {rec:?}"));
            }
            for (b, want) in &shadow {
                expect_block(&format!("crash after {k} stores"), *b, crashed.mc.read(*b), want)?;
            }
        }
        sys.apply(e).map_err(|err| format!("{}: {err}", e.describe()))?;
        apply_store(&mut shadow, e);
    }
    Ok(())
}

#[test]
fn a_read_after_a_write_returns_the_written_value() {
    on_every_machine(read_after_write);
}

#[test]
fn a_never_written_block_reads_as_zeros() {
    on_every_machine(never_written_reads_zero);
}

#[test]
fn a_clean_shutdown_leaves_an_image_that_verifies() {
    on_every_machine(clean_shutdown_verifies);
}

#[test]
fn a_flipped_ciphertext_byte_is_detected() {
    on_every_machine(ciphertext_flip);
}

#[test]
fn a_flipped_mac_byte_is_detected() {
    on_every_machine(mac_flip);
}

#[test]
fn a_flipped_counter_byte_is_detected() {
    on_every_machine(counter_flip);
}

#[test]
fn power_fail_then_recovery_keeps_every_persisted_store() {
    on_every_machine(power_fail_keeps_every_store);
}

/// The contracts can fail: on machines built to break them they report it.
#[test]
fn the_contracts_fail_on_broken_machines() {
    // No battery for the metadata caches: dirty counters die with power.
    let no_battery = Machine { name: "secure-wb-nobattery".into(), cfg: common::small("secure-wb-nobattery", &[]) };
    assert!(power_fail_keeps_every_store(&no_battery).is_err());
    // The persist buffer drains without the security engine (the gap).
    let gap = Machine { name: "bbb-gap".into(), cfg: common::small("bbb-gap", &[]) };
    assert!(power_fail_keeps_every_store(&gap).is_err());
    // No security: tampering goes unnoticed.
    let insecure = Machine { name: "bbb".into(), cfg: common::small("bbb", &[]) };
    for contract in [ciphertext_flip, mac_flip] {
        assert!(contract(&insecure).is_err());
    }
}
