//! The points folder of a reproduction: each run's record written the
//! moment the run ends, so that a killed reproduction, run again with the
//! same arguments, runs only the points it lacks, and so that the points
//! can run anywhere (`--only-point`, one process per point on a Dask
//! cluster) before one last run analyses them all.
//!
//! ```text
//!  a point's provenance: spmsim's version, the paper, its settings
//!    (instructions, seed, options), the point itself, a digest of every
//!    preset, and each trace file the point reads (size, modification time)
//!      -> its id: the provenance's digest          OUT/points/<id>.json
//!  the file: { format, paper, id, point (described), provenance,
//!              record_digest, record }  written whole (temporary, rename)
//!  load: a file whose provenance is not this run's, whose record does
//!        not match its digest, or that does not read is computed again
//! ```
//! A record is kept only when it reads back to itself exactly (serde_json
//! keeps every finite float; a NaN would come back as null): a record that
//! does not is used by this run and computed again by the next, so a
//! resumed reproduction's results are byte for byte an uninterrupted one's.

use super::Paper;
use crate::config::presets_digests;
use crate::util::digest::hex_digest as digest;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The point file's format.
pub const FORMAT: &str = "spmsim-reproduce-point-1";

/// The folder of the point files in a reproduction's output folder.
pub fn dir(out: &Path) -> PathBuf {
    out.join("points")
}

/// A point of the grid as the points folder knows it.
#[derive(Clone, Debug)]
pub struct Key {
    /// The digest of `provenance`: the file's name.
    pub id: String,
    /// The point as the progress line names it.
    pub point: String,
    pub provenance: Value,
}

#[derive(Serialize, Deserialize)]
struct PointFile {
    format: String,
    paper: String,
    id: String,
    point: String,
    provenance: Value,
    record_digest: String,
    record: Value,
}

/// The key of every point of `points`, in order.
pub fn keys<P: Paper>(paper: &P, points: &[P::Point]) -> Result<Vec<Key>, String> {
    let presets = presets_digests(&[])?;
    let settings = paper.settings();
    let mut stamps = BTreeMap::new();
    points
        .iter()
        .map(|p| {
            let point = serde_json::to_value(p).map_err(|e| format!("{}: {e}", paper.describe(p)))?;
            let traces: BTreeMap<String, String> =
                trace_files(&point).into_iter().map(|f| (f.clone(), stamps.entry(f).or_insert_with_key(|f| stamp(f)).clone())).collect();
            let provenance = serde_json::json!({
                "spmsim": env!("CARGO_PKG_VERSION"),
                "model": crate::MODEL_DIGEST,
                "paper": P::ID,
                "settings": settings,
                "point": point,
                "presets": presets,
                "traces": traces,
            });
            Ok(Key { id: digest(provenance.to_string().as_bytes()), point: paper.describe(p), provenance })
        })
        .collect()
}

/// The trace files a point's workloads read: the cached trace of every
/// `suite:NAME` it names and every absolute path of a file it names
/// (`insns=PATH`, `trace:PATH`).
fn trace_files(point: &Value) -> Vec<String> {
    let mut strings = Vec::new();
    collect_strings(point, &mut strings);
    let mut files = Vec::new();
    for s in strings {
        for token in s.split([',', '#', ' ', ';', '=']) {
            if let Some(name) = token.strip_prefix("suite:") {
                files.push(crate::suite::cache_dir().join("suite").join(format!("{name}.trace")).display().to_string());
            }
            let path = token.strip_prefix("trace:").unwrap_or(token);
            if path.starts_with('/') && Path::new(path).is_file() {
                files.push(path.to_string());
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

fn collect_strings<'a>(v: &'a Value, out: &mut Vec<&'a str>) {
    match v {
        Value::String(s) => out.push(s),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => m.values().for_each(|x| collect_strings(x, out)),
        _ => {}
    }
}

/// A trace file's size and modification time (re-recording it changes
/// them), or `absent`.
fn stamp(path: &str) -> String {
    match std::fs::metadata(path) {
        Ok(m) => {
            let t = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
            format!("{} bytes, modified {t}", m.len())
        }
        Err(_) => "absent".into(),
    }
}

/// The record of `key` kept in `dir`: `Ok(None)` when there is none, an
/// error saying why when the file there cannot stand for it (it is then
/// computed again).
pub fn load<P: Paper>(dir: &Path, key: &Key) -> Result<Option<P::Record>, String> {
    let path = dir.join(format!("{}.json", key.id));
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let why = |what: String| format!("{} ({}): {what}", path.display(), key.point);
    let f: PointFile = serde_json::from_str(&text).map_err(|e| why(format!("not a point file: {e}")))?;
    if f.format != FORMAT {
        return Err(why(format!("format `{}`, not {FORMAT}", f.format)));
    }
    if f.provenance != key.provenance {
        let differ = differences(&f.provenance, &key.provenance);
        return Err(why(format!("computed with another {}", differ.join(", "))));
    }
    if f.id != key.id || f.paper != P::ID {
        return Err(why(format!("it names point {} of {}", f.id, f.paper)));
    }
    if digest(f.record.to_string().as_bytes()) != f.record_digest {
        return Err(why("its record does not match its digest (edited or damaged)".into()));
    }
    let r = serde_json::from_value(f.record).map_err(|e| why(format!("its record does not read: {e}")))?;
    Ok(Some(r))
}

/// The top-level fields of a provenance that differ from another's.
fn differences(was: &Value, now: &Value) -> Vec<String> {
    let (Value::Object(a), Value::Object(b)) = (was, now) else { return vec!["provenance".into()] };
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let d: Vec<String> = names.into_iter().filter(|k| a.get(*k) != b.get(*k)).cloned().collect();
    if d.is_empty() {
        vec!["provenance".into()]
    } else {
        d
    }
}

/// Keep `record` as `key`'s in `dir` (created if need be), written whole.
/// A record that would not read back to itself exactly is not kept, and
/// the error says so.
pub fn save<P: Paper>(dir: &Path, key: &Key, record: &P::Record) -> Result<(), String> {
    let path = dir.join(format!("{}.json", key.id));
    let value = serde_json::to_value(record).map_err(|e| format!("{}: {e}", key.point))?;
    let back: Option<P::Record> = serde_json::from_value(value.clone()).ok();
    if back.and_then(|b| serde_json::to_value(&b).ok()).as_ref() != Some(&value) {
        return Err(format!("{}: its record does not read back exactly (a NaN or infinite figure?); not kept", key.point));
    }
    let f = PointFile {
        format: FORMAT.into(),
        paper: P::ID.into(),
        id: key.id.clone(),
        point: key.point.clone(),
        provenance: key.provenance.clone(),
        record_digest: digest(value.to_string().as_bytes()),
        record: value,
    };
    let text = serde_json::to_string_pretty(&f).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    crate::util::output::write_atomic(&path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}
