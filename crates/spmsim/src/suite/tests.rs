//! Recording the suite with a stand-in recorder: matching traces kept,
//! changes recorded again, failures named; inputs made by commands.

use super::*;

use crate::trace::event::Op;
use crate::trace::lackey::{RecordOptions, RecordSummary};
use crate::trace::{AddressSpace, NativeWriter, TraceHeader, TraceRecord};

/// A stand-in for valgrind lackey: it runs nothing and writes a trace
/// of the instructions asked for (one load each), with the options it
/// was given in the header, so the test sees what the suite asked of it.
fn fake_record(opts: &RecordOptions) -> Result<RecordSummary, String> {
    let n = opts.instructions.ok_or("the suite always bounds a recording")?;
    // The program's stage is in place while it runs: its working folder,
    // its inputs through the stage's link.
    let cwd = opts.cwd.as_ref().ok_or("the suite always gives a working folder")?;
    if !cwd.is_dir() {
        return Err(format!("the working folder {} is not there", cwd.display()));
    }
    if let Some(a) = opts.program.iter().find(|a| a.contains("/inputs/") && !Path::new(a).is_file()) {
        return Err(format!("the input {a} cannot be read"));
    }
    let mut h = TraceHeader::new("fake", AddressSpace::Virtual, false);
    h.source = format!("{} | cwd {} | program {}", opts.source, opts.cwd.as_ref().unwrap().display(), opts.program.join(" "));
    h.skipped_instructions = opts.skip;
    let mut w = NativeWriter::create(&opts.out, &h).map_err(|e| e.to_string())?;
    for i in 0..n {
        let r =
            TraceRecord { gap: 0, op: Op::Load, log: false, addr: 4096 + 64 * (i % 100), size: 8, value: None, same_instruction: false };
        w.write(&r).map_err(|e| e.to_string())?;
    }
    w.finish().map_err(|e| e.to_string())?;
    // Its instruction stream, one load per instruction, bound to the trace.
    let mut s = crate::trace::insn::InsnWriter::create(&crate::trace::insn::path_for(&opts.out)).map_err(|e| e.to_string())?;
    for _ in 0..n {
        s.write(&crate::trace::insn::Insn { class: crate::trace::vex::FuClass::Load, ..Default::default() }).map_err(|e| e.to_string())?;
    }
    s.finish(0, &crate::util::digest::file_digest(&opts.out).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    Ok(RecordSummary {
        skipped_instructions: opts.skip,
        recorded_instructions: n,
        loads: n,
        stores: 0,
        records: n,
        program_finished: false,
        folded_iterations: 0,
        ..RecordSummary::default()
    })
}

const FAKE: Recorder = Recorder { version: || Ok("fake-recorder-1".into()), record: fake_record, record_fast: fake_record_fast };

/// The fake's fast-forwarding path: the same trace, its header saying so.
fn fake_record_fast(opts: &RecordOptions, _cache: &Path) -> Result<RecordSummary, String> {
    let mut o = opts.clone();
    o.source = format!("fast-forwarded: {}", opts.source);
    fake_record(&o)
}
/// The same tool at another version: traces it made before do not match.
const FAKE_2: Recorder = Recorder { version: || Ok("fake-recorder-2".into()), record: fake_record, record_fast: |o, _| fake_record(o) };

/// A one-program suite (cat on a small corpus) plus a broken entry, in
/// a temporary folder: the file and its cache. No tool is named, so
/// nothing is installed.
fn tiny_suite(tag: &str) -> (Suite, PathBuf) {
    let dir = std::env::temp_dir().join(format!("spmsim-suite-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let text = r#"
tools = []
[env]
LC_ALL = "C"
[[input]]
name = "corpus"
kind = "text"
seed = 3
size = 20000
[[program]]
name = "cat"
packages = ["coreutils"]
description = "cat on a small corpus"
command = ["/bin/cat", "-n", "{input:corpus}"]
skip = 1000
[[program]]
name = "broken"
packages = ["coreutils"]
description = "a program that is not there"
command = ["/nonexistent/spmsim-test-program", "{input:corpus}"]
skip = 0
"#;
    let path = dir.join("programs.toml");
    std::fs::write(&path, text).unwrap();
    (Suite::load(&path).unwrap(), dir.join("cache"))
}

#[test]
fn records_a_program_and_reuses_a_matching_trace() {
    let (suite, cache) = tiny_suite("e2e");
    let mut plan = RecordPlan::new(cache.clone(), 3000);
    plan.recorder = FAKE;
    let run = |plan: &RecordPlan| record_suite(&suite, plan, &|_| {}).unwrap();
    let out = run(&plan);
    assert_eq!(out.len(), 2);
    let broken = out.iter().find(|o| o.name == "broken").unwrap();
    match &broken.status {
        Status::Failed(e) => assert!(e.contains("/nonexistent/spmsim-test-program") && e.contains("does not exist"), "{e}"),
        s => panic!("broken entry: {s:?}"),
    }
    let o = out.iter().find(|o| o.name == "cat").unwrap();
    assert!(matches!(o.status, Status::Recorded), "{:?}", o.status);
    let m = Manifest::load(&manifest_file(&cache, "cat")).unwrap();
    assert_eq!(o.manifest.as_ref(), Some(&m));
    assert_eq!(
        (m.program.as_str(), m.packages[0].name.as_str(), m.valgrind.as_str()),
        ("cat", "coreutils", format!("fake-recorder-1, fast-forwarded by spmtrace {}", crate::trace::vgtool::source_digest()).as_str())
    );
    assert_eq!(Some(&m.packages[0].version), packages::installed_version("coreutils").unwrap().as_ref());
    assert_eq!(m.binary_package.as_ref().map(|b| b.name.as_str()), Some("coreutils"));
    let corpus = inputs::generate("text", 3, 20_000, 0).unwrap();
    assert_eq!(m.inputs[0].sha256, inputs::sha256_hex(&corpus));
    assert_eq!(std::fs::read(&m.inputs[0].path).unwrap(), corpus);
    // Placeholders resolved, the input named through the program's stage.
    let staged = stage::Stage::inputs_of("cat").join("corpus.txt").display().to_string();
    assert_eq!(m.command, ["/bin/cat", "-n", staged.as_str()], "placeholders resolved");
    assert_eq!(m.cwd, stage::Stage::work_of("cat").display().to_string());
    assert_eq!(
        (m.skip, m.recording.skipped_instructions, m.instructions_requested, m.recording.recorded_instructions),
        (1000, 1000, 3000, 3000)
    );
    assert_eq!(m.env.get("LC_ALL").map(String::as_str), Some("C"));
    assert_eq!(m.trace_bytes, std::fs::metadata(trace_file(&cache, "cat")).unwrap().len());
    // The recorder was given the resolved command, a scratch folder of
    // its own, and a source line naming the program, package and tool.
    let mut r = crate::trace::open(&trace_file(&cache, "cat"), None).unwrap();
    let info = crate::trace::info::scan("native", r.as_mut()).unwrap();
    assert_eq!(info.instructions, 3000);
    let h = info.header.unwrap();
    assert_eq!(h.skipped_instructions, 1000);
    assert!(
        h.source.starts_with("fast-forwarded: suite:cat (coreutils ")
            && h.source.contains(&format!(
                "; fake-recorder-1, fast-forwarded by spmtrace {}): /bin/cat -n ",
                crate::trace::vgtool::source_digest()
            )),
        "{}",
        h.source
    );
    assert!(h.source.contains(&format!("| cwd {} |", stage::Stage::work_of("cat").display())), "{}", h.source);
    assert!(h.source.ends_with(&format!("| program {}", m.command.join(" "))), "{}", h.source);
    // Again: the trace matches, so nothing is recorded.
    plan.only = vec!["cat".into()];
    assert!(matches!(run(&plan)[0].status, Status::UpToDate));
    // Forced, it is recorded again.
    plan.force = true;
    assert!(matches!(run(&plan)[0].status, Status::Recorded));
    plan.force = false;
    // Asked for more, it is recorded again, unless a shorter trace will do.
    plan.instructions = 4000;
    plan.accept_at_least = Some(2000);
    assert!(matches!(run(&plan)[0].status, Status::UpToDate), "a trace longer than needed will do");
    plan.accept_at_least = None;
    assert!(matches!(run(&plan)[0].status, Status::Recorded), "without accept_at_least the count must match");
    assert_eq!(Manifest::load(&manifest_file(&cache, "cat")).unwrap().recording.recorded_instructions, 4000);
    // Another version of the tool: the trace is recorded again.
    plan.recorder = FAKE_2;
    assert!(matches!(run(&plan)[0].status, Status::Recorded));
    assert_eq!(
        Manifest::load(&manifest_file(&cache, "cat")).unwrap().valgrind,
        format!("fake-recorder-2, fast-forwarded by spmtrace {}", crate::trace::vgtool::source_digest())
    );
    assert!(matches!(run(&plan)[0].status, Status::UpToDate));
    // A trace in an older format version is recorded again.
    let t = trace_file(&cache, "cat");
    let mut bytes = std::fs::read(&t).unwrap();
    bytes[8..10].copy_from_slice(&1u16.to_le_bytes());
    std::fs::write(&t, bytes).unwrap();
    assert!(matches!(run(&plan)[0].status, Status::Recorded), "a version 1 trace must be re-recorded");
    assert!(crate::trace::NativeReader::open(&t).is_ok());
    // An instruction stream that cannot be used with the trace is recorded
    // again, and the suite says why: none, one made from other bytes (the
    // trace written over since), one of the older format version.
    let stream = crate::trace::insn::path_for(&t);
    let notes = std::sync::Mutex::new(Vec::<String>::new());
    let run_noting = |plan: &RecordPlan| {
        let noted = |p: Progress| {
            if let Progress::Note(n) = p {
                notes.lock().unwrap().push(n.to_string());
            }
        };
        record_suite(&suite, plan, &noted).unwrap().remove(0).status
    };
    std::fs::remove_file(&stream).unwrap();
    assert!(matches!(run_noting(&plan), Status::Recorded), "a trace without its stream is recorded again");
    assert!(matches!(run_noting(&plan), Status::UpToDate));
    let mut other = std::fs::read(&t).unwrap();
    other.truncate(other.len() - 1);
    other.push(0);
    std::fs::write(&t, &other).unwrap();
    let trace_now = std::fs::read(&t).unwrap();
    assert!(matches!(run_noting(&plan), Status::Recorded), "a stream of other bytes is recorded again");
    assert_ne!(std::fs::read(&t).unwrap(), trace_now, "the trace was recorded again");
    let mut old = b"SPMSIMIS\x01".to_vec();
    old.extend_from_slice(&[0, crate::trace::insn::END, 0]);
    std::fs::write(&stream, zstd::encode_all(&old[..], 1).unwrap()).unwrap();
    assert!(matches!(run_noting(&plan), Status::Recorded), "a stream of the older format is recorded again");
    assert!(crate::trace::insn::InsnReader::open_for(&stream, &t).is_ok());
    let notes = notes.into_inner().unwrap();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[1].contains("written over") && notes[2].contains("older format version 1"), "{notes:?}");
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

#[test]
fn without_the_recording_tool_every_program_fails_naming_it() {
    let (suite, cache) = tiny_suite("notool");
    let mut plan = RecordPlan::new(cache.clone(), 1000);
    plan.recorder =
        Recorder { version: || Err("cannot run valgrind: not found".into()), record: fake_record, record_fast: |o, _| fake_record(o) };
    let out = record_suite(&suite, &plan, &|_| {}).unwrap();
    assert_eq!(out.len(), 2);
    for o in &out {
        assert!(matches!(&o.status, Status::Failed(e) if e.contains("cannot run valgrind")), "{}: {:?}", o.name, o.status);
    }
    assert!(!trace_file(&cache, "cat").exists());
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

#[test]
fn derived_inputs_are_made_by_their_command_and_drop_their_stamps() {
    let dir = std::env::temp_dir().join(format!("spmsim-suite-derived-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = r#"
[[input]]
name = "base"
kind = "text"
size = 100
[[input]]
name = "made"
kind = "derived"
command = ["/bin/sh", "-c", "cat \"$1\" > \"$0\"; printf '\\nDATE today\\nkept\\n' >> \"$0\"", "{out}", "{input:base}"]
packages = ["dash"]
drop_lines = ["DATE "]
[[program]]
name = "p"
packages = ["dash"]
description = "d"
command = ["/bin/cat", "{input:made}"]
skip = 0
"#;
    let path = dir.join("programs.toml");
    std::fs::write(&path, text).unwrap();
    let suite = Suite::load(&path).unwrap();
    let wanted = suite.inputs_of(&suite.programs[0]);
    assert_eq!(wanted.len(), 2, "the input a derived one is made from comes along");
    let made = make_inputs(&suite, &wanted, &dir.join("cache"));
    let m = made["made"].as_ref().unwrap();
    let bytes = std::fs::read(&m.path).unwrap();
    let base = inputs::generate("text", 1, 100, 0).unwrap();
    assert_eq!(bytes, [base.as_slice(), b"\nkept\n"].concat(), "the DATE line is dropped");
    assert_eq!(m.sha256, inputs::sha256_hex(&bytes));
    let again = make_inputs(&suite, &wanted, &dir.join("cache"));
    assert_eq!(again["made"].as_ref().unwrap().sha256, m.sha256, "made the same way twice, same bytes");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_program_is_an_error_naming_the_known_ones() {
    let (suite, cache) = tiny_suite("sel");
    let mut plan = RecordPlan::new(cache.clone(), 1000);
    plan.recorder = FAKE;
    plan.only = vec!["gzip".into()];
    let e = record_suite(&suite, &plan, &|_| {}).unwrap_err();
    assert!(e.contains("`gzip`") && e.contains("cat, broken"), "{e}");
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}

#[test]
fn utc_dates_are_iso() {
    let d = utc_now();
    assert_eq!(d.len(), 20, "{d}");
    assert!(d.starts_with("20") && d.ends_with('Z') && d.as_bytes()[10] == b'T');
}

#[test]
fn a_program_fast_forwards_unless_it_says_not_and_the_choice_keys_its_trace() {
    let (suite, cache) = tiny_suite("ff");
    let mut plan = RecordPlan::new(cache.clone(), 3000);
    plan.recorder = FAKE;
    plan.only = vec!["cat".into()];
    use crate::trace::RecordReader;
    let source = || crate::trace::NativeReader::open(&trace_file(&cache, "cat")).unwrap().header().source.clone();
    let status = |suite: &Suite| record_suite(suite, &plan, &|_| {}).unwrap().remove(0).status;
    assert!(matches!(status(&suite), Status::Recorded));
    assert!(source().starts_with("fast-forwarded: "), "{}", source());
    assert!(matches!(status(&suite), Status::UpToDate));
    // The same program recorded by lackey all the way: recorded again, and
    // by the other path.
    let mut lackey = suite.clone();
    lackey.programs.iter_mut().for_each(|p| p.fast_forward = false);
    assert!(matches!(status(&lackey), Status::Recorded));
    assert!(!source().starts_with("fast-forwarded: "), "{}", source());
    assert!(matches!(status(&lackey), Status::UpToDate));
    assert!(matches!(status(&suite), Status::Recorded));
    let _ = std::fs::remove_dir_all(cache.parent().unwrap());
}
