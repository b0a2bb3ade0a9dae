//! Bad trace input named with what is wrong and where (the file, the byte
//! offset, the record, the flag), exit code 2, and nothing written.

mod common;

use common::{scratch, spmsim_in, stream_for};
use std::io::Write;
use std::path::Path;

/// Refused with exit code 2 and every one of `want` in the first line of stderr.
fn refused(r: (i32, String, String), want: &[&str]) {
    let (code, _, err) = r;
    let first = err.lines().next().unwrap_or("");
    assert_eq!(code, 2, "{err}");
    for w in want {
        assert!(first.contains(w), "`{w}` not in `{first}`");
    }
}

/// `n` ChampSim records, each loading, that detection takes for ChampSim.
fn records(n: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut r = [0u8; 64];
        r[..8].copy_from_slice(&(0x40_1000 + 4 * i).to_le_bytes());
        r[32..40].copy_from_slice(&(0x7ffd_0000_0000 + 64 * (i % 100)).to_le_bytes());
        out.extend_from_slice(&r);
    }
    out
}

#[test]
fn damaged_compressed_data_is_named_as_such_not_as_an_empty_file() {
    let d = scratch("damaged-compressed");
    let plain = records(2000);
    let mut xz = xz2::write::XzEncoder::new(Vec::new(), 6);
    xz.write_all(&plain).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&plain).unwrap();
    for (name, mut z) in [("xz", xz.finish().unwrap()), ("gzip", gz.finish().unwrap()), ("zstd", zstd::encode_all(&plain[..], 3).unwrap())]
    {
        for b in &mut z[20..60] {
            *b ^= 0x5A;
        }
        let p = d.join(format!("t.champsim.{name}"));
        std::fs::write(&p, &z).unwrap();
        let want = [p.to_str().unwrap(), "at byte", &format!("the {name} data is damaged or cut short")];
        refused(spmsim_in(&d, &["trace", "info", p.to_str().unwrap()]), &want);
        refused(
            spmsim_in(&d, &["run", "--scheme", "bbb", "--workload", &format!("trace:{}", p.display()), "--instructions", "1000"]),
            &want,
        );
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn an_impossible_champsim_record_is_named_by_its_number_wherever_it_is() {
    let d = scratch("champsim-records");
    let run = |p: &Path| {
        spmsim_in(
            &d,
            &["run", "--scheme", "bbb", "--workload", &format!("trace:{}#format=champsim", p.display()), "--instructions", "1000"],
        )
    };
    let info = |p: &Path| spmsim_in(&d, &["trace", "info", p.to_str().unwrap(), "--format", "champsim"]);
    // An all-ones address: its block wraps the address space.
    let mut b = records(200);
    b[100 * 64 + 32..100 * 64 + 40].copy_from_slice(&u64::MAX.to_le_bytes());
    let p = d.join("ones.champsim");
    std::fs::write(&p, &b).unwrap();
    for r in [run(&p), info(&p)] {
        refused(r, &["ones.champsim: at byte 6400", "record 100", "0xffffffffffffffff", "past the top of the address space"]);
    }
    // Branch flags 7 and 9: refused in the records format detection reads
    // (the first 64) and after them alike.
    for (at, k, flag) in [(10, 8, 7u8), (100, 8, 7), (10, 9, 9), (100, 9, 9)] {
        let mut b = records(200);
        b[at * 64 + k] = flag;
        let p = d.join(format!("flags-{at}-{k}.champsim"));
        std::fs::write(&p, &b).unwrap();
        let want = [format!("at byte {}", at * 64), format!("record {at}:"), format!(" {flag} "), "not 0 or 1".to_string()];
        let want: Vec<&str> = want.iter().map(String::as_str).collect();
        refused(run(&p), &want);
        refused(info(&p), &want);
        if at < 64 {
            // Without the format named, detection says the same record.
            refused(spmsim_in(&d, &["trace", "info", p.to_str().unwrap()]), &[&format!("record {at}:"), "not 0 or 1"]);
        }
    }
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn trace_convert_names_its_output_its_missing_input_and_a_zero_count() {
    let d = scratch("convert-errors");
    let t = d.join("p.trace");
    let (code, _, err) = spmsim_in(&d, &["trace", "generate", "--workload", "hash", "--instructions", "3000", "-o", t.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    stream_for(&t, 3000);
    let p = t.to_str().unwrap();
    let convert = |args: &[&str]| {
        let mut a = vec!["trace", "convert"];
        a.extend_from_slice(args);
        spmsim_in(&d, &a)
    };
    // Output-side errors name the output.
    let under_a_file = d.join("p.trace").join("x.champsim.xz");
    refused(
        convert(&[p, "--to", "champsim", "-o", under_a_file.to_str().unwrap()]),
        &["trace convert", under_a_file.to_str().unwrap(), "which is a file, not a folder"],
    );
    refused(convert(&[p, "--to", "champsim", "-o", d.to_str().unwrap()]), &["trace convert", d.to_str().unwrap(), "is a folder"]);
    refused(convert(&[p, "-o", d.to_str().unwrap()]), &["is a folder"]);
    // A missing input is missing, not without a stream.
    let missing = d.join("missing.trace");
    let out = d.join("x.champsim.xz");
    refused(
        convert(&[missing.to_str().unwrap(), "--to", "champsim", "-o", out.to_str().unwrap()]),
        &[missing.to_str().unwrap(), "does not exist"],
    );
    // --instructions 0 writes nothing.
    refused(convert(&[p, "--to", "champsim", "--instructions", "0", "-o", out.to_str().unwrap()]), &["--instructions 0"]);
    assert!(!out.exists(), "no empty trace is written");
    let (code, _, err) = convert(&[p, "--to", "champsim", "--instructions", "1", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    std::fs::remove_dir_all(&d).ok();
}
