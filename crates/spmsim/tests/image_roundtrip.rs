//! Saved images: a round trip verifies, and changing any byte is either a
//! format error or an integrity failure that names an address.

mod common;

use spmsim::image;
use spmsim::system::System;
use spmsim::workload::WorkloadKind;
use std::path::Path;

fn save(dir: &Path, preset: &str) -> Vec<u8> {
    let cfg = common::small(preset, &[]);
    let mut sys = System::new(&cfg, 11);
    for e in WorkloadKind::RandomWrites.generate(60, 11).unwrap() {
        sys.apply(&e).unwrap();
    }
    sys.shutdown_clean().unwrap();
    image::save(dir, &cfg, &sys.mc).unwrap();
    std::fs::read(dir.join("nvm.img")).unwrap()
}

fn verdict(dir: &Path) -> Result<image::VerifyReport, String> {
    image::open(dir).map(|(_, mut mc)| image::verify(&mut mc)).map_err(|e| e.to_string())
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
        positions.extend((image::HEADER_BYTES..orig.len()).filter(|i| i % 7 == 0 || *i < image::HEADER_BYTES + 4 * image::RECORD_BYTES || *i >= orig.len() - 3 * image::RECORD_BYTES));
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
