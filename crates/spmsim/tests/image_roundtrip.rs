//! Saved images: a round trip verifies, and changing any byte is either a
//! format error or an integrity failure that names an address.

mod common;

use spmsim::machine::System;
use spmsim::verify::image;
use spmsim::workload::WorkloadKind;
use std::path::Path;

fn save(dir: &Path, preset: &str) -> Vec<u8> {
    save_after(dir, preset, false)
}

fn save_after(dir: &Path, preset: &str, crash: bool) -> Vec<u8> {
    let cfg = common::small(preset, &[]);
    let mut sys = System::new(&cfg, 11);
    for e in WorkloadKind::RandomWrites.generate_placed(60, 11, spmsim::workload::Placement::of(&cfg)).unwrap() {
        sys.apply(&e).unwrap();
    }
    if crash {
        sys.power_fail();
    } else {
        sys.shutdown_clean().unwrap();
    }
    image::save(dir, &cfg, &sys.mc).unwrap();
    std::fs::read(dir.join("nvm.img")).unwrap()
}

fn verdict(dir: &Path) -> Result<image::VerifyReport, String> {
    image::open(dir).map(|(chip, mc)| image::verify_saved(&chip.config, mc)).map_err(|e| e.to_string())
}

#[test]
fn every_byte_flip_is_caught() {
    for preset in ["secure-wt", "sit-strict"] {
        let dir = std::env::temp_dir().join(format!("spmsim-flip-{preset}-{}", std::process::id()));
        let orig = save(&dir, preset);
        let ok = verdict(&dir).unwrap();
        assert!(ok.ok, "{preset}: {:?}", ok.failures);
        assert!(ok.data_blocks_checked >= 60);
        // Every byte of the header and of the first records of each region,
        // and every 7th byte elsewhere (all bytes would take minutes).
        let mut positions: Vec<usize> = (0..image::HEADER_BYTES).collect();
        positions
            .extend((image::HEADER_BYTES..orig.len()).filter(|i| {
                i % 7 == 0 || *i < image::HEADER_BYTES + 4 * image::RECORD_BYTES || *i >= orig.len() - 3 * image::RECORD_BYTES
            }));
        for &pos in &positions {
            let mut b = orig.clone();
            b[pos] ^= 0x10;
            std::fs::write(dir.join("nvm.img"), &b).unwrap();
            match verdict(&dir) {
                Err(msg) => assert!(msg.contains("nvm.img"), "{preset} byte {pos}: {msg}"),
                Ok(r) => {
                    assert!(!r.ok, "{preset}: flipping byte {pos} went unnoticed");
                    assert!(r.failures[0].address.starts_with("0x"));
                }
            }
        }
        std::fs::write(dir.join("nvm.img"), &orig).unwrap();
        assert!(verdict(&dir).unwrap().ok);
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn truncation_and_garbage_are_format_errors() {
    let dir = std::env::temp_dir().join(format!("spmsim-trunc-{}", std::process::id()));
    let orig = save(&dir, "secure-wt");
    std::fs::write(dir.join("nvm.img"), &orig[..orig.len() - 5]).unwrap();
    assert!(verdict(&dir).unwrap_err().contains("records declared"));
    std::fs::write(dir.join("nvm.img"), b"hello").unwrap();
    assert!(verdict(&dir).unwrap_err().contains("shorter than"));
    std::fs::write(dir.join("chip.json"), b"{").unwrap();
    assert!(verdict(&dir).unwrap_err().contains("chip.json"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn crash_images_of_controls_fail_verification() {
    let dir = std::env::temp_dir().join(format!("spmsim-crashimg-{}", std::process::id()));
    let cfg = common::small("secure-wb-nobattery", &[]);
    let mut sys = System::new(&cfg, 2);
    for e in WorkloadKind::RandomWrites.generate(100, 2).unwrap() {
        sys.apply(&e).unwrap();
    }
    sys.power_fail();
    image::save(&dir, &cfg, &sys.mc).unwrap();
    assert!(!verdict(&dir).unwrap().ok);
    std::fs::remove_dir_all(&dir).ok();
}

/// The records of `nvm.img` whose block address `keep` accepts, with the
/// header's record count set to match: a well-formed image, rolled back.
fn keep_records(orig: &[u8], keep: impl Fn(u64) -> bool) -> Vec<u8> {
    let mut out = orig[..image::HEADER_BYTES].to_vec();
    let kept: Vec<&[u8]> =
        orig[image::HEADER_BYTES..].chunks(image::RECORD_BYTES).filter(|r| keep(u64::from_le_bytes(r[..8].try_into().unwrap()))).collect();
    out[32..40].copy_from_slice(&(kept.len() as u64).to_le_bytes());
    kept.iter().for_each(|r| out.extend_from_slice(r));
    out
}

#[test]
fn rolled_back_images_fail_verification() {
    for preset in ["secure-wt", "sit-strict", "cm-dbmf"] {
        let dir = std::env::temp_dir().join(format!("spmsim-rollback-{preset}-{}", std::process::id()));
        let orig = save(&dir, preset);
        let (_, mc) = image::open(&dir).unwrap();
        let layout = mc.layout().clone();
        let written = mc.st.nvm.image.sorted_addrs().into_iter().find(|a| *a < layout.data_blocks).unwrap();
        let (ci, _) = layout.counter_of(written);
        let per = layout.blocks_per_counter_block();
        let page = ci * per..(ci + 1) * per;
        let macs = layout.mac_line_of(page.start).0..=layout.mac_line_of(page.end - 1).0;
        let counter = layout.meta_addr(0, ci);
        // One page back to never written: its data, MAC lines, counter block.
        std::fs::write(dir.join("nvm.img"), keep_records(&orig, |a| !page.contains(&a) && !macs.contains(&a) && a != counter)).unwrap();
        let r = verdict(&dir).unwrap();
        assert!(!r.ok, "{preset}: a page rolled back to never written verified");
        assert!(
            r.failures.iter().any(|f| f.address == format!("{counter:#x}")),
            "{preset}: the removed counter block is named: {:?}",
            r.failures
        );
        // The whole image back to never written.
        std::fs::write(dir.join("nvm.img"), keep_records(&orig, |_| false)).unwrap();
        let r = verdict(&dir).unwrap();
        assert!(!r.ok && r.failures[0].check == "root", "{preset}: an empty image must fail at the root: {:?}", r.failures);
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn crash_images_of_every_preset_verify() {
    for (preset, cfg) in common::presets() {
        let dir = std::env::temp_dir().join(format!("spmsim-crash-every-{preset}-{}", std::process::id()));
        save_after(&dir, &preset, true);
        let r = verdict(&dir).unwrap();
        // A control that uses one key for both regions (triad-same-key)
        // reuses one-time pads, which no image shows: the crash oracle's
        // pad check and the attack harness fail it.
        let pads_only = image::reuses_pads_only(&cfg);
        if image::gap_needs_trigger(&cfg) {
            // Osiris without a stop-loss loses a counter only once a block
            // is rewritten more often than the trials search: 60 random
            // writes may not, so the image verifies, or its recovery fails
            // first (the scheme's tests and the crash oracle fail it).
            assert!(r.ok || r.failures[0].check == "recovery", "{preset}: {:?}", &r.failures[..r.failures.len().min(3)]);
        } else if cfg.expect_crash_violations && cfg.persistence.tep.pair_order && !pads_only {
            // A control's crash leaves a real gap; verify must not hide it.
            // (A control that drops TEP's pair order, tep-unordered and
            // secon-tep-unordered, breaks the order of data and log, not
            // integrity: its image verifies, and the crash oracle's
            // transactional guarantee is what fails it.)
            assert!(!r.ok, "{preset}: a control's crash image verified");
        } else {
            assert!(r.ok, "{preset}: an untampered crash image fails: {:?}", &r.failures[..r.failures.len().min(3)]);
            assert!(r.data_blocks_checked >= 60, "{preset}: {} data blocks checked", r.data_blocks_checked);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn tampering_with_a_crash_image_is_still_detected() {
    for preset in ["cobcm", "sp", "cm-dbmf"] {
        let dir = std::env::temp_dir().join(format!("spmsim-crash-tamper-{preset}-{}", std::process::id()));
        let orig = save_after(&dir, preset, true);
        let r = verdict(&dir).unwrap();
        assert!(r.ok && r.recovery.as_ref().is_some_and(|a| a.tree_nodes_rebuilt > 0), "{preset}: {r:?}");
        let (_, mc) = image::open(&dir).unwrap();
        let layout = mc.layout().clone();
        let addrs = mc.st.nvm.image.sorted_addrs();
        let offset_of = |addr: u64| image::HEADER_BYTES + addrs.iter().position(|a| *a == addr).unwrap() * image::RECORD_BYTES;
        let data = addrs.iter().copied().find(|a| *a < layout.data_blocks).unwrap();
        let counter = layout.meta_addr(0, layout.counter_of(data).0);
        for (what, addr) in [("data block", data), ("counter block", counter), ("MAC line", layout.mac_line_of(data).0)] {
            let mut b = orig.clone();
            b[offset_of(addr) + 8 + 9] ^= 0x04;
            std::fs::write(dir.join("nvm.img"), &b).unwrap();
            assert!(!verdict(&dir).unwrap().ok, "{preset}: a flipped bit in the {what} of a crash image went unnoticed");
        }
        std::fs::write(dir.join("nvm.img"), keep_records(&orig, |a| a != counter)).unwrap();
        assert!(!verdict(&dir).unwrap().ok, "{preset}: a crash image with a counter block removed verified");
        std::fs::remove_dir_all(&dir).ok();
    }
}
