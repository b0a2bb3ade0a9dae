//! The inputs' files under `<cache>/suite/inputs`: generated, copied or
//! made by a command, each checked against what is there so a file that
//! already holds the right bytes is left alone (and keeps its time stamp).
//!
//! ```text
//!  InputSpec kind = text | random | ... (inputs.rs)  -> inputs::generate(seed, size)
//!               kind = file                          -> the suite folder's file
//!               kind = derived                       -> its command ({out}, {input:NAME}),
//!                                                       drop_lines removed
//!    -> write if changed -> InputFile { path, sha256, bytes, made_by }
//! ```

use super::{inputs, inputs_dir, programs, write_atomic, InputFile, InputSpec, Suite};
use std::collections::BTreeMap;
use std::path::Path;

/// Make (or check) the inputs `wanted` under `<cache>/suite/inputs`; a file
/// already holding the right bytes is left alone. Returns each input or
/// the reason it could not be made.
pub fn make_inputs(suite: &Suite, wanted: &[&InputSpec], cache: &Path) -> BTreeMap<String, Result<InputFile, String>> {
    let dir = inputs_dir(cache);
    let mut done: BTreeMap<String, Result<InputFile, String>> = BTreeMap::new();
    if let Err(e) = std::fs::create_dir_all(&dir) {
        for i in wanted {
            done.insert(i.name.clone(), Err(format!("{}: {e}", dir.display())));
        }
        return done;
    }
    for spec in &suite.inputs {
        if !wanted.iter().any(|w| w.name == spec.name) {
            continue;
        }
        let ext = spec.extension.clone().unwrap_or_else(|| match spec.kind.as_str() {
            "file" => Path::new(spec.file.as_deref().unwrap_or("")).extension().and_then(|e| e.to_str()).unwrap_or("dat").to_string(),
            k => inputs::extension(k).to_string(),
        });
        let path = dir.join(format!("{}.{ext}", spec.name));
        let made = make_one(suite, spec, &path, &done);
        let r = made.and_then(|bytes| {
            write_if_changed(&path, &bytes)?;
            if spec.executable {
                make_executable(&path)?;
            }
            Ok(InputFile {
                name: spec.name.clone(),
                kind: spec.kind.clone(),
                path: path.display().to_string(),
                sha256: inputs::sha256_hex(&bytes),
                bytes: bytes.len() as u64,
                made_by: spec.clone(),
            })
        });
        done.insert(spec.name.clone(), r.map_err(|e| format!("input `{}`: {e}", spec.name)));
    }
    done
}

fn make_one(suite: &Suite, spec: &InputSpec, path: &Path, done: &BTreeMap<String, Result<InputFile, String>>) -> Result<Vec<u8>, String> {
    match spec.kind.as_str() {
        "file" => {
            let f = suite.dir.join(spec.file.as_deref().unwrap_or_default());
            std::fs::read(&f).map_err(|e| format!("{}: {e}", f.display()))
        }
        "derived" => {
            // One temporary name per process: explorations run shards that
            // make the same inputs at once (`spmsim explore`).
            let tmp = path.with_extension(format!("making.{}", std::process::id()));
            let lookup = |name: &str, arg: &str| -> Result<String, String> {
                match name {
                    "out" => Ok(tmp.display().to_string()),
                    "input" => match done.get(arg) {
                        Some(Ok(i)) => Ok(i.path.clone()),
                        Some(Err(e)) => Err(e.clone()),
                        None => Err(format!("input `{arg}` was not made")),
                    },
                    _ => Err(format!("unknown placeholder {{{name}}}")),
                }
            };
            let argv: Vec<String> = spec.command.iter().flatten().map(|w| programs::expand(w, &lookup)).collect::<Result<_, _>>()?;
            let out = std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(std::process::Stdio::null())
                .output()
                .map_err(|e| format!("cannot run `{}`: {e}", argv.join(" ")))?;
            if !out.status.success() {
                let _ = std::fs::remove_file(&tmp);
                let err = String::from_utf8_lossy(&out.stderr);
                return Err(format!("`{}` failed ({}): {}", argv.join(" "), out.status, err.trim()));
            }
            let bytes = std::fs::read(&tmp).map_err(|e| format!("`{}` made no {}: {e}", argv.join(" "), tmp.display()))?;
            let _ = std::fs::remove_file(&tmp);
            if spec.drop_lines.is_empty() {
                return Ok(bytes);
            }
            let kept: Vec<&[u8]> =
                bytes.split_inclusive(|&b| b == b'\n').filter(|l| !spec.drop_lines.iter().any(|d| l.starts_with(d.as_bytes()))).collect();
            Ok(kept.concat())
        }
        k => inputs::generate(k, spec.seed.unwrap_or(1), spec.size.unwrap_or(0), spec.depth.unwrap_or(0)),
    }
}

/// Let a built program run (its owner, group and others may execute it).
fn make_executable(path: &Path) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if std::fs::metadata(path).map(|m| m.len() == bytes.len() as u64).unwrap_or(false)
        && std::fs::read(path).map(|b| b == bytes).unwrap_or(false)
    {
        return Ok(());
    }
    write_atomic(path, bytes)
}
