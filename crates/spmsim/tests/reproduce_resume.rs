//! A reproduction resumed from its points folder gives the files an
//! uninterrupted run gives, byte for byte; a kept record that was edited
//! or computed with other settings is computed again; `--only-point` with
//! an id the grid lacks is refused.

use spmsim::reproduce::{self, points, secon, secpb, Paper};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A small Secon grid: every figure, one or two x values each.
const SMALL: secon::Grid = secon::Grid { ops: &[1, 4], values: &[64], cores: &[1, 2], hash_ns: &[40], wpq: &[8] };

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("spmsim-resume-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Run `paper` keeping its records in `out`/points, write its files into
/// `out`; the notes it printed.
fn run_into<P: Paper>(paper: &P, out: &Path) -> Vec<String> {
    let notes = Mutex::new(Vec::new());
    let r =
        reproduce::run_kept(paper, &points::dir(out), &|_, _, _| {}, &|n| notes.lock().unwrap().push(n)).unwrap_or_else(|f| panic!("{f}"));
    reproduce::write(paper, &r, out).unwrap();
    notes.into_inner().unwrap()
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    ["results.json", "report.md", "runs.csv"].iter().map(|f| (f.to_string(), std::fs::read(dir.join(f)).unwrap())).collect()
}

fn point_files(out: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(points::dir(out)).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

fn copy_points(from: &Path, to: &Path, keep: impl Fn(usize) -> bool) {
    std::fs::create_dir_all(points::dir(to)).unwrap();
    for (_, p) in point_files(from).iter().enumerate().filter(|(i, _)| keep(*i)) {
        std::fs::copy(p, points::dir(to).join(p.file_name().unwrap())).unwrap();
    }
}

#[test]
fn an_interrupted_reproduction_resumed_gives_the_uninterrupted_files() {
    let paper = secon::Secon::with_grid(20_000, 1, true, SMALL).unwrap();
    let n = paper.grid().len();
    let whole = scratch("whole");
    assert!(run_into(&paper, &whole).is_empty(), "a first run finds nothing to say");
    assert_eq!(point_files(&whole).len(), n, "one record per point");
    // The same as the run that keeps nothing.
    let plain = reproduce::run(&paper, &|_, _, _| {}).unwrap();
    let plain_dir = scratch("plain");
    reproduce::write(&paper, &plain, &plain_dir).unwrap();
    assert_eq!(files(&whole), files(&plain_dir));

    // Killed after about half its runs: a rerun runs only the others.
    let resumed = scratch("resumed");
    copy_points(&whole, &resumed, |i| i % 2 == 0);
    let ran = Mutex::new(0usize);
    let r = reproduce::run_kept(&paper, &points::dir(&resumed), &|_, _, _| *ran.lock().unwrap() += 1, &|_| {}).unwrap();
    assert_eq!(ran.into_inner().unwrap(), n / 2, "only the missing points ran");
    reproduce::write(&paper, &r, &resumed).unwrap();
    assert_eq!(files(&resumed), files(&whole), "byte for byte the uninterrupted run's");
    assert_eq!(point_files(&resumed).len(), n);

    // Every record kept: nothing runs, and the files are the same again.
    let ran = Mutex::new(0usize);
    let r = reproduce::run_kept(&paper, &points::dir(&resumed), &|_, _, _| *ran.lock().unwrap() += 1, &|_| {}).unwrap();
    assert_eq!(ran.into_inner().unwrap(), 0);
    reproduce::write(&paper, &r, &resumed).unwrap();
    assert_eq!(files(&resumed), files(&whole));
    for d in [whole, plain_dir, resumed] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn an_edited_or_foreign_record_is_computed_again() {
    let paper = secon::Secon::with_grid(20_000, 1, true, SMALL).unwrap();
    let whole = scratch("edited-whole");
    run_into(&paper, &whole);
    let out = scratch("edited");
    copy_points(&whole, &out, |_| true);
    let kept = point_files(&out);
    // A record whose number was changed by hand.
    let edit = |p: &Path, f: &dyn Fn(&mut serde_json::Value)| {
        let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
        f(&mut v);
        std::fs::write(p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    };
    edit(&kept[0], &|v| v["record"]["cycles"] = serde_json::json!(v["record"]["cycles"].as_u64().unwrap() + 1));
    // A record computed with another seed, its digest consistent.
    edit(&kept[1], &|v| v["provenance"]["settings"]["seed"] = serde_json::json!(7));
    // Not a point file at all.
    std::fs::write(&kept[2], "{ truncated").unwrap();
    // A record of a build of other model code.
    assert_eq!(spmsim::MODEL_DIGEST.len(), 16);
    edit(&kept[3], &|v| v["provenance"]["model"] = serde_json::json!("0000000000000000"));
    let notes = run_into(&paper, &out);
    let said = |what: &str, file: &Path| {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        assert!(notes.iter().any(|n| n.contains(&name) && n.contains(what) && n.ends_with("computing it again")), "{what}: {notes:?}");
    };
    said("does not match its digest", &kept[0]);
    said("computed with another settings", &kept[1]);
    said("not a point file", &kept[2]);
    said("computed with another model", &kept[3]);
    assert!(notes.iter().any(|n| n.starts_with(&format!("{} of {} runs already done", kept.len() - 4, kept.len()))), "{notes:?}");
    assert_eq!(files(&out), files(&whole), "the records computed again give the same files");
    // The files computed again now stand.
    let ran = Mutex::new(0usize);
    reproduce::run_kept(&paper, &points::dir(&out), &|_, _, _| *ran.lock().unwrap() += 1, &|_| {}).unwrap();
    assert_eq!(ran.into_inner().unwrap(), 0);
    for d in [whole, out] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn one_point_at_a_time_fills_the_folder_and_an_unknown_id_is_refused() {
    let suite: Vec<secpb::SuiteEntry> = secpb::builtin_suite().into_iter().take(1).collect();
    let paper = secpb::SecPb::new(suite, 20_000, 1, true).unwrap();
    let out = scratch("one-point");
    let dir = points::dir(&out);
    let listed = reproduce::list_points(&paper, &dir).unwrap();
    assert_eq!(listed.len(), paper.grid().len());
    assert!(listed.iter().all(|(_, done)| !done));
    let ids: std::collections::BTreeSet<&str> = listed.iter().map(|(k, _)| k.id.as_str()).collect();
    assert_eq!(ids.len(), listed.len(), "every point its own id");
    let first = &listed[0].0;
    assert_eq!(reproduce::run_point(&paper, &dir, &first.id, &|n| panic!("{n}")).unwrap(), (first.point.clone(), true));
    assert_eq!(reproduce::run_point(&paper, &dir, &first.id, &|n| panic!("{n}")).unwrap(), (first.point.clone(), false));
    assert!(reproduce::list_points(&paper, &dir).unwrap()[0].1, "listed as done");
    let e = reproduce::run_point(&paper, &dir, "0123456789abcdef01234567", &|_| {}).unwrap_err();
    assert!(e.contains("no point `0123456789abcdef01234567`") && e.contains("--list-points"), "{e}");
    // Another seed is another grid: the same point has another id.
    let other = secpb::SecPb::new(secpb::builtin_suite().into_iter().take(1).collect(), 20_000, 2, true).unwrap();
    assert!(reproduce::run_point(&other, &dir, &first.id, &|_| {}).is_err());
    // Every point run one at a time, then the whole: nothing left to run,
    // and the files are an uninterrupted run's.
    for (k, _) in &listed {
        reproduce::run_point(&paper, &dir, &k.id, &|n| panic!("{n}")).unwrap();
    }
    let ran = Mutex::new(0usize);
    let r = reproduce::run_kept(&paper, &dir, &|_, _, _| *ran.lock().unwrap() += 1, &|_| {}).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(ran.into_inner().unwrap(), 0);
    reproduce::write(&paper, &r, &out).unwrap();
    let plain = scratch("one-point-plain");
    reproduce::write(&paper, &reproduce::run(&paper, &|_, _, _| {}).unwrap_or_else(|f| panic!("{f}")), &plain).unwrap();
    assert_eq!(files(&out), files(&plain));
    for d in [out, plain] {
        std::fs::remove_dir_all(d).unwrap();
    }
}
