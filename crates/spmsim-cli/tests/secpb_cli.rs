//! The SecPB issue's commands through the binary: run, battery, reproduce.

mod common;
use common::{json, scratch, spmsim};

#[test]
fn run_json_has_the_roi_keys_and_writes_the_resolved_config() {
    let dir = std::env::temp_dir().join(format!("spmsim-run-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    let r = json(&[
        "run",
        "--scheme",
        "cobcm",
        "--workload",
        "random-writes",
        "--instructions",
        "50000",
        "--baseline",
        "bbb",
        "--out",
        d,
        "--json",
    ]);
    let roi = &r["roi"];
    // One object per component of the model.
    for path in [
        "core.cycles",
        "core.instructions",
        "core.ipc",
        "core.ppti",
        "core.store_buffer_stall_cycles",
        "tree.root_updates",
        "persist_path.cycles",
        "persist_path.buffer.nwpe",
        "persist_path.buffer.full_stall_cycles",
        "caches.l1d.hit_rate",
        "metadata_caches.counter.hits",
        "crypto.macs",
        "memory.write_utilisation",
    ] {
        let v = path.split('.').fold(roi, |v, k| &v[k]);
        assert!(v.is_number(), "roi.{path} missing: {roi}");
    }
    for k in ["data", "counter", "mac", "tree"] {
        assert!(roi["memory"]["writes"].get(k).is_some() && roi["memory"]["reads"].get(k).is_some(), "memory.*.{k} missing");
    }
    assert!(roi["core"]["instructions"].as_u64().unwrap() >= 50_000);
    assert!(roi["memory"]["writes"]["data"].as_u64().unwrap() > 0);
    assert!(r["slowdown"].as_f64().unwrap() >= 0.0, "slowdown against bbb: {}", r["slowdown"]);
    assert!(r["crash_at_end"].is_object(), "the drain work of a crash at the end");
    let cfg = std::fs::read_to_string(dir.join("config.toml")).unwrap();
    // The resolved configuration beside the stats: it loads back as the
    // very configuration of the preset that ran.
    let saved = spmsim::config::load_str(&cfg, "config.toml", &[]).unwrap_or_else(|e| panic!("config.toml does not load: {e}\n{cfg}"));
    assert_eq!(
        saved.to_toml(),
        spmsim::config::load_preset("cobcm", &[]).unwrap().to_toml(),
        "config.toml is cobcm's resolved configuration"
    );
    assert!(dir.join("stats.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_rejects_a_bad_override_naming_the_key() {
    let (code, _, err) = spmsim(&["run", "--scheme", "cm", "--workload", "random-writes", "--set", "nvm.write_model=\"fast\""]);
    assert_ne!(code, 0);
    assert!(err.contains("nvm.write_model"), "{err}");
    let (code, _, err) = spmsim(&["run", "--scheme", "cm", "--workload", "synthetic:ppti=abc"]);
    assert_ne!(code, 0);
    assert!(err.contains("ppti"), "{err}");
}

#[test]
fn battery_json_puts_the_paper_beside_ours() {
    let r = json(&["battery", "--scheme", "cobcm", "--entries", "32", "--json"]);
    let row = &r["rows"][0];
    assert_eq!(row["scheme"], "cobcm");
    let ours = row["supercap"]["volume_mm3"].as_f64().unwrap();
    let paper = &row["paper"]["supercap_mm3"];
    assert_eq!(paper["printed"], "4.89");
    assert!(paper["matches"].as_bool().unwrap(), "ours {ours}");
    assert!(paper["residual_pct"].as_f64().unwrap().abs() < 5.0);
    let (code, out, _) = spmsim(&["battery", "--table", "vi"]);
    assert_eq!(code, 0);
    assert_eq!(out.lines().filter(|l| l.starts_with("| cobcm") || l.starts_with("| nogap")).count(), 14, "{out}");
    let (code, _, err) = spmsim(&["battery", "--scheme", "xyz"]);
    assert_ne!(code, 0);
    assert!(err.contains("xyz"), "{err}");
}

#[test]
fn reproduce_writes_a_report_with_paper_and_ours() {
    let dir = std::env::temp_dir().join(format!("spmsim-repro-{}", std::process::id()));
    let d = dir.to_str().unwrap();
    // The built-in stand-ins: fast, and needs neither valgrind nor packages
    // (suite_cli.rs runs reproduce on recorded programs).
    let (code, out, err) = spmsim(&["reproduce", "secpb", "--builtin", "--quick", "--instructions", "60000", "--out", d]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("order COBCM"), "{out}");
    let md = std::fs::read_to_string(dir.join("report.md")).unwrap();
    for section in ["Table IV", "Fig. 6", "Fig. 7", "Fig. 8", "Fig. 9", "Table V", "Table VI", "NoGap IPC", "Causes of the gaps"] {
        assert!(md.contains(section), "report lacks {section}");
    }
    assert!(md.contains("| cobcm | 1.3 |"), "Table IV has the paper's COBCM cell beside ours");
    // The claims, judged by the one rule, with each outcome counted; the
    // rows whose volumes VI-C's text prints otherwise under both readings.
    assert!(md.contains("## The paper's claims") && md.contains("within 25 % of the paper's number"), "{md}");
    assert!(md.contains("### Where the paper disagrees with itself") && md.contains("But VI-C: \"The NoGap model"), "{md}");
    assert!(out.contains("claims: ") && out.contains("where the paper disagrees with itself"), "{out}");
    assert!(out.contains("under the reading of: VI-C"), "both readings printed: {out}");
    // The paper's sections, never the project's issues.
    let issue_numbers = md.match_indices("issue ").filter(|(i, _)| md[i + 6..].starts_with(|c: char| c.is_ascii_digit())).count();
    assert_eq!(issue_numbers, 0, "{md}");
    for f in ["results.json", "runs.csv", "table4.csv", "fig6.csv", "fig7.csv", "fig8.csv", "fig9.csv", "battery.csv"] {
        assert!(dir.join(f).exists(), "{f}");
    }
    // Tables V and VI as data: every row of both tables, each the same
    // estimate `spmsim battery` gives for that scheme and size.
    let results: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap();
    let rows = results["battery_rows"].as_array().unwrap();
    let count = |t: &str| rows.iter().filter(|r| r["table"] == t).count();
    assert_eq!((count("V"), count("VI")), (9, 14));
    let cobcm32 = rows.iter().find(|r| r["table"] == "V" && r["scheme"] == "cobcm").unwrap();
    let cli = json(&["battery", "--scheme", "cobcm", "--entries", "32", "--json"]);
    assert_eq!(cobcm32["energy_uj"], cli["rows"][0]["energy_uj"]);
    assert_eq!(cobcm32["supercap_mm3"], cli["rows"][0]["supercap"]["volume_mm3"]);
    assert_eq!(cobcm32["supercap_paper_mm3"].as_f64(), Some(4.89), "the paper's printed value, from configs/reference");
    let csv = std::fs::read_to_string(dir.join("battery.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + rows.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_reports_every_case_from_its_repeated_runs() {
    let r = json(&["bench", "--instructions", "200000", "--repeat", "2", "--json"]);
    let cases = r["cases"].as_array().unwrap();
    let names: Vec<String> = cases
        .iter()
        .map(|c| format!("{}:{}:{}", c["scheme"].as_str().unwrap(), c["crypto"].as_str().unwrap(), c["workload"].as_str().unwrap()))
        .collect();
    let syn = "synthetic:ppti=10,nwpe=2,footprint_mib=64";
    let want_first = ["bbb:real", "bbb:timing-only", "cobcm:real", "cobcm:timing-only"].map(|c| format!("{c}:{syn}"));
    assert_eq!(names[..4], want_first, "the synthetic cases first, as before");
    // Every program case either ran or was skipped for want of a trace.
    let skipped: Vec<&str> = r["skipped"].as_array().unwrap().iter().map(|s| s["case"].as_str().unwrap()).collect();
    for w in ["suite:gcc#persistent=heap", "suite:xz#persistent=heap", "btree:size_mib=64"] {
        for c in ["real", "timing-only"] {
            let case = format!("cobcm:{c}:{w}");
            assert!(names.contains(&case) ^ skipped.contains(&case.as_str()), "{case}: ran {names:?}, skipped {skipped:?}");
        }
    }
    assert!(!skipped.iter().any(|s| s.contains("btree")), "a generator needs no trace");
    for c in cases {
        // A recorded trace shorter than asked for runs whole.
        assert!(c["instructions"] == 200000 || c["workload"].as_str().unwrap().starts_with("suite:"), "{c}");
        assert_eq!(c["runs"], 2);
        let generated = !c["workload"].as_str().unwrap().starts_with("suite:");
        assert!(c["core"] == "ooo" || generated && c["core"] == "interval", "the programs run the ooo core: {c}");
        let each: Vec<f64> = c["seconds_each_run"].as_array().unwrap().iter().map(|s| s.as_f64().unwrap()).collect();
        assert_eq!(each.len(), 2);
        assert!(each.contains(&c["seconds"].as_f64().unwrap()), "the figures are one run's");
        assert!(c["blocks_touched"].as_u64().unwrap() > 0 && c["peak_rss_mib"].as_f64().unwrap() > 0.0);
        let speed = c["instructions_per_second"].as_f64().unwrap();
        assert_eq!(c["meets_speed_target"], speed >= c["target_instructions_per_second"].as_f64().unwrap());
    }
    let (code, _, err) = spmsim(&["bench", "--repeat", "0"]);
    assert!(code != 0 && err.contains("--repeat must be at least 1"), "{code} {err}");
}

#[test]
fn reproduce_lists_its_points_runs_one_and_refuses_an_unknown_one() {
    let dir = scratch("repro-points");
    let d = dir.to_str().unwrap();
    let args = ["reproduce", "secpb", "--builtin", "--quick", "--instructions", "20000", "--out", d];
    let listed = json(&[&args[..], &["--list-points"]].concat());
    let points = listed["points"].as_array().unwrap();
    assert!(points.len() > 10 && points.iter().all(|p| p["done"] == false && p["id"].as_str().is_some_and(|i| i.len() == 24)));
    let id = points[0]["id"].as_str().unwrap();
    let (code, out, err) = spmsim(&[&args[..], &["--only-point", id]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(&format!("point {id} (")) && out.contains(" ran: "), "{out}");
    assert!(dir.join("points").join(format!("{id}.json")).is_file());
    assert_eq!(json(&[&args[..], &["--list-points"]].concat())["points"][0]["done"], true);
    let (code, _, err) = spmsim(&[&args[..], &["--only-point", "no-such-point"]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no point `no-such-point`") && err.contains("--list-points"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}
