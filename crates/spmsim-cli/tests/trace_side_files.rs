//! Side files of traces bound to what they derive from: an instruction
//! stream used only with the bytes of the trace it was made from, and the
//! stream derived from a ChampSim trace cached by the trace's content.

mod common;

use common::{scratch, spmsim_in, stream_for};
use spmsim::trace::insn::path_for;
use std::path::Path;

/// A generated trace of `n` instructions at `out` (seed `seed`).
fn generate(cache: &Path, out: &Path, n: u64, seed: u64) {
    let (code, _, err) = spmsim_in(
        cache,
        &[
            "trace",
            "generate",
            "--workload",
            "hash",
            "--instructions",
            &n.to_string(),
            "--seed",
            &seed.to_string(),
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
}

/// `bytes` (fewer than 256) as a zstd frame of one uncompressed block
/// (RFC 8878 section 3.1.1).
fn raw_zstd(bytes: &[u8]) -> Vec<u8> {
    let mut f = vec![0x28, 0xB5, 0x2F, 0xFD, 0x20, bytes.len() as u8];
    f.extend_from_slice(&(1u32 | (bytes.len() as u32) << 3).to_le_bytes()[..3]);
    f.extend_from_slice(bytes);
    f
}

fn ooo_run(cache: &Path, workload: &str, n: u64) -> (i32, String, String) {
    spmsim_in(
        cache,
        &["run", "--scheme", "bbb", "--workload", workload, "--set", "core.model=ooo", "--instructions", &n.to_string(), "--json"],
    )
}

/// The trace written over (by `trace generate -o` the same name) while an
/// earlier stream stays beside it: every use of the stream with the trace
/// is refused, exit code 2, naming both files and what to do.
#[test]
fn a_stream_beside_a_trace_written_over_is_refused_naming_both_files() {
    let d = scratch("stale-stream");
    let cache = d.join("cache");
    let t = d.join("p.trace");
    generate(&cache, &t, 5000, 1);
    let s = stream_for(&t, 5000);
    let spec = format!("trace:{}", t.display());
    let (code, _, err) = ooo_run(&cache, &spec, 5000);
    assert_eq!(code, 0, "its own stream: {err}");
    let kept = std::fs::read(&s).unwrap();
    generate(&cache, &t, 5000, 2);
    assert!(!s.exists(), "writing a trace removes the stream of the trace it replaces");
    std::fs::write(&s, &kept).unwrap();
    let refused = |(code, _, err): (i32, String, String), what: &str| {
        assert_eq!(code, 2, "{what}: {err}");
        assert!(
            err.contains("p.trace.insn") && err.contains(&format!("the trace {}", t.display())) && err.contains("Record the trace again"),
            "{what}: {err}"
        );
    };
    refused(ooo_run(&cache, &spec, 5000), "run");
    let profile = format!("synthetic:ppti=20,footprint_mib=1,insns={}", t.display());
    refused(ooo_run(&cache, &profile, 5000), "a synthetic profile's insns=");
    let cs = d.join("p.champsim.xz");
    refused(spmsim_in(&cache, &["trace", "convert", t.to_str().unwrap(), "--to", "champsim", "-o", cs.to_str().unwrap()]), "convert");
    assert!(!cs.exists(), "no ChampSim trace of the mixture is written");
    refused(spmsim_in(&cache, &["trace", "info", t.to_str().unwrap()]), "info");
    // A stream of the older format, which records no trace: refused, saying so.
    let mut old = b"SPMSIMIS\x01".to_vec();
    old.extend_from_slice(&[0, 0x0F, 0]); // one instruction, the trailer
    std::fs::write(&s, raw_zstd(&old)).unwrap();
    let (code, _, err) = ooo_run(&cache, &spec, 5000);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("p.trace.insn") && err.contains("older format version 1") && err.contains("record the trace again"), "{err}");
    std::fs::remove_dir_all(&d).ok();
}

/// Every command that writes a trace removes a stream left beside its
/// output, and none writes over the stream of its own input.
#[test]
fn writing_a_trace_removes_a_stale_stream_and_never_overwrites_the_input_s() {
    let d = scratch("writers");
    let cache = d.join("cache");
    let t = d.join("p.trace");
    generate(&cache, &t, 3000, 1);
    let s = stream_for(&t, 3000);
    let kept = std::fs::read(&s).unwrap();
    let (p, q) = (t.to_str().unwrap(), s.to_str().unwrap());
    for to in ["native", "champsim"] {
        let (code, _, err) = spmsim_in(&cache, &["trace", "convert", p, "--to", to, "-o", q]);
        assert_eq!(code, 2, "--to {to}: {err}");
        assert!(err.contains("is the instruction stream of the input"), "--to {to}: {err}");
        assert_eq!(std::fs::read(&s).unwrap(), kept, "--to {to}: the stream is untouched");
    }
    // Outputs with a stale stream beside them: each loses it.
    let out = d.join("out.trace");
    let stale = path_for(&out);
    let cs = d.join("out.champsim.xz");
    let writers: [(&str, Vec<&str>); 3] = [
        ("generate", vec!["trace", "generate", "--workload", "array", "--instructions", "2000", "-o", out.to_str().unwrap()]),
        ("convert", vec!["trace", "convert", p, "-o", out.to_str().unwrap()]),
        ("convert --to champsim", vec!["trace", "convert", p, "--to", "champsim", "-o", cs.to_str().unwrap()]),
    ];
    for (what, args) in writers {
        let stale = if what.ends_with("champsim") { path_for(&cs) } else { stale.clone() };
        std::fs::write(&stale, &kept).unwrap();
        let (code, _, err) = spmsim_in(&cache, &args);
        assert_eq!(code, 0, "{what}: {err}");
        assert!(!stale.exists(), "{what}: the stale stream is removed");
    }
    std::fs::remove_dir_all(&d).ok();
}

/// `n` ChampSim records: with `chain`, each reads and writes register 3
/// (one dependence chain); without, each writes a register of its own in
/// turn and reads none. Every 10th record loads. They are a loop of 16
/// instructions in one 64-byte block (every 16th a taken jump back, which
/// also reads and writes the instruction pointer, 26), so fetch reads a
/// block that stays in L1I.
fn champsim_records(n: u64, chain: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut r = [0u8; 64];
        r[..8].copy_from_slice(&(0x40_1000 + 4 * (i % 16)).to_le_bytes());
        if chain {
            (r[10], r[12]) = (3, 3);
        } else {
            r[10] = 1 + (i % 5) as u8;
        }
        if i % 16 == 15 {
            (r[8], r[9], r[11], r[13]) = (1, 1, 26, 26);
        }
        if i % 10 == 0 {
            r[32..40].copy_from_slice(&(0x7ffd_0000_0000 + 64 * (i % 64)).to_le_bytes());
        }
        out.extend_from_slice(&r);
    }
    out
}

fn cycles(out: &str) -> u64 {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    v["roi"]["core"]["cycles"].as_u64().unwrap()
}

/// A ChampSim trace written over with other records of the same size, its
/// modification time set back, runs on the stream of its new records.
#[test]
fn the_derived_stream_of_a_champsim_trace_follows_its_content() {
    let d = scratch("champsim-content");
    let (cache, fresh) = (d.join("cache"), d.join("fresh-cache"));
    let (chain, free) = (champsim_records(20_000, true), champsim_records(20_000, false));
    assert_eq!(chain.len(), free.len());
    let t = d.join("t.champsim");
    std::fs::write(&t, &chain).unwrap();
    let spec = format!("trace:{}", t.display());
    let (code, out, err) = ooo_run(&cache, &spec, 20_000);
    assert_eq!(code, 0, "{err}");
    let chained = cycles(&out);
    let mtime = std::fs::metadata(&t).unwrap().modified().unwrap();
    std::fs::write(&t, &free).unwrap();
    std::fs::File::options().write(true).open(&t).unwrap().set_modified(mtime).unwrap();
    let (code, out, err) = ooo_run(&cache, &spec, 20_000);
    assert_eq!(code, 0, "{err}");
    let (code, fresh_out, err) = ooo_run(&fresh, &spec, 20_000);
    assert_eq!(code, 0, "{err}");
    assert_eq!(cycles(&out), cycles(&fresh_out), "the same as with an empty cache");
    assert!(cycles(&out) * 2 < chained, "independent instructions: {} cycles, the chain {chained}", cycles(&out));
    std::fs::remove_dir_all(&d).ok();
}

/// ChampSim records without registers or branches (each loads).
fn bare_records(n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut r = [0u8; 64];
        r[..8].copy_from_slice(&(0x40_1000 + 4 * i).to_le_bytes());
        r[32..40].copy_from_slice(&(0x7ffd_0000_0000 + 64 * (i % 64)).to_le_bytes());
        out.extend_from_slice(&r);
    }
    out
}

/// Under core.model = "ooo" a mix follows the rule of each of its traces
/// alone: a trace without its stream is refused (it once sent the whole
/// mix to the interval core when a ChampSim trace was in it), a ChampSim
/// trace without fields sends the machine to the interval core, saying so.
#[test]
fn a_mix_follows_the_core_model_rule_of_each_trace_alone() {
    let d = scratch("mix-rule");
    let cache = d.join("cache");
    let (fields, bare) = (d.join("fields.champsim"), d.join("bare.champsim"));
    std::fs::write(&fields, champsim_records(5000, true)).unwrap();
    std::fs::write(&bare, bare_records(5000)).unwrap();
    let (generated, recorded) = (d.join("gen.trace"), d.join("rec.trace"));
    generate(&cache, &generated, 5000, 1);
    generate(&cache, &recorded, 5000, 2);
    stream_for(&recorded, 5000);
    let list = |a: &Path, b: &Path| format!("trace:{},{}", a.display(), b.display());
    let notes = |out: &str| {
        let v: serde_json::Value = serde_json::from_str(out).unwrap();
        (v["workload_notes"].to_string(), v["roi"]["core"]["ooo"].is_null())
    };
    // Without its stream: refused alone and in a mix, naming the thread.
    let (code, _, alone) = ooo_run(&cache, &format!("trace:{}", generated.display()), 5000);
    assert_eq!(code, 2, "{alone}");
    let (code, _, err) = ooo_run(&cache, &list(&fields, &generated), 5000);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("thread 1 of the mix") && err.contains("gen.trace.insn") && err.contains("every program of a mix"), "{err}");
    // A ChampSim trace without fields: the interval core, alone and in a
    // mix, and the notes say which trace.
    for w in [format!("trace:{}", bare.display()), list(&bare, &recorded)] {
        let (code, out, err) = ooo_run(&cache, &w, 5000);
        assert_eq!(code, 0, "{w}: {err}");
        let (n, interval) = notes(&out);
        assert!(
            interval && n.contains("the interval core ran it") && n.contains("bare.champsim carries no register or branch fields"),
            "{w}: {n}"
        );
    }
    // Every trace with a stream: the ooo core.
    let (code, out, err) = ooo_run(&cache, &list(&fields, &recorded), 5000);
    assert_eq!(code, 0, "{err}");
    assert!(!notes(&out).1, "the ooo core ran the mix");
    std::fs::remove_dir_all(&d).ok();
}
