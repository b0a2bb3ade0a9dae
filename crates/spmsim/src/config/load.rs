//! Loading presets and override strings, with errors that name the file
//! and the key path.

use super::{keys, SimConfig};
use std::path::{Path, PathBuf};
use toml::Value;

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file}: key `{key}`: {message}")]
    Key { file: String, key: String, message: String },
    #[error("unknown preset `{name}`; known presets: {known}")]
    UnknownPreset { name: String, known: String },
    #[error("{file}: {message}")]
    Io { file: String, message: String },
    #[error("--set `{text}`: {message}")]
    Override { text: String, message: String },
    /// A bad value that a `--set` (or an override of a front end) gave.
    #[error("--set `{text}`: key `{key}`: {message}")]
    SetKey { text: String, key: String, message: String },
}

/// The `configs/` folder: `$SPMSIM_CONFIGS`, else the workspace's own.
pub fn presets_dir() -> PathBuf {
    if let Ok(p) = std::env::var("SPMSIM_CONFIGS") {
        return PathBuf::from(p);
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs");
    p.canonicalize().unwrap_or(p)
}

pub fn list_presets() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(presets_dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let p = e.path();
                    (p.extension().and_then(|x| x.to_str()) == Some("toml")).then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A preset name, or a path to a TOML file.
pub fn find_preset(name: &str) -> Result<PathBuf, ConfigError> {
    let p = Path::new(name);
    if name.ends_with(".toml") && p.exists() {
        return Ok(p.to_path_buf());
    }
    let f = presets_dir().join(format!("{name}.toml"));
    if f.exists() {
        Ok(f)
    } else {
        Err(ConfigError::UnknownPreset { name: name.into(), known: list_presets().join(", ") })
    }
}

/// Load a preset with `key.path=value` overrides, then validate.
pub fn load_preset(name: &str, overrides: &[String]) -> Result<SimConfig, ConfigError> {
    let path = find_preset(name)?;
    let file = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| ConfigError::Io { file: file.clone(), message: e.to_string() })?;
    load_str(&text, &file, overrides)
}

pub fn load_str(text: &str, file: &str, overrides: &[String]) -> Result<SimConfig, ConfigError> {
    // `--set compose.*` changes the file's choices before they are laid out.
    let (choices, overrides): (Vec<&String>, Vec<&String>) = overrides.iter().partition(|o| o.trim_start().starts_with("compose."));
    let preset = preset_table(text, file, &mut Vec::new(), &choices)?;
    // Presets only change defaults: lay the file over the defaults.
    let mut table = match toml::Value::try_from(SimConfig::default()).expect("defaults serialize") {
        toml::Value::Table(t) => t,
        _ => unreachable!(),
    };
    merge(&mut table, preset);
    let mut set_keys = Vec::new();
    for o in overrides {
        set_keys.push((o.as_str(), apply_override(&mut table, o)?));
    }
    // An error is the last override's whose key is on the failing key's path
    // (the same key, a table above it or a key below it); else the file's.
    let blame = |(key, message): (String, String)| {
        let related = |k: &str| k == key || key.starts_with(&format!("{k}.")) || k.starts_with(&format!("{key}."));
        match set_keys.iter().rev().find(|(_, k)| related(k)) {
            Some((text, _)) => ConfigError::SetKey { text: text.to_string(), key, message },
            None => ConfigError::Key { file: file.into(), key, message },
        }
    };
    // An integer beyond its key's type: the key's range, not serde's
    // "expected u32".
    let cfg = keys::deserialize(&table)
        .map_err(|(key, msg)| {
            let msg = keys::integer_range_message(&table, &key, &msg).unwrap_or(msg);
            (key, msg)
        })
        .map_err(blame)?;
    keys::check_all_used(&table, &cfg).map_err(blame)?;
    cfg.validate().map_err(blame)?;
    Ok(cfg)
}

/// A preset's table, laid over the preset it names in `extends` (if any),
/// as gem5's variants change only what differs: an ablation is its base
/// and the keys it changes. `chain` holds the files above, so a cycle is
/// an error naming them.
fn preset_table(text: &str, file: &str, chain: &mut Vec<String>, choices: &[&String]) -> Result<toml::Table, ConfigError> {
    let mut preset: toml::Table = toml::from_str(text)
        .map_err(|e| ConfigError::Syntax { file: file.into(), message: e.to_string().trim_end().replace('\n', " ") })?;
    for o in choices {
        apply_override(&mut preset, o)?;
    }
    let mut table = match preset.remove("extends") {
        None => toml::Table::new(),
        Some(base) => {
            let key_err = |message: String| ConfigError::Key { file: file.into(), key: "extends".into(), message };
            let Value::String(name) = base else { return Err(key_err("expected the name of a preset".into())) };
            chain.push(file.to_string());
            let path = find_preset(&name).map_err(|e| key_err(e.to_string()))?;
            let base_file = path.display().to_string();
            if chain.contains(&base_file) {
                return Err(key_err(format!("presets extend each other in a cycle: {} -> {base_file}", chain.join(" -> "))));
            }
            let base_text =
                std::fs::read_to_string(&path).map_err(|e| ConfigError::Io { file: base_file.clone(), message: e.to_string() })?;
            preset_table(&base_text, &base_file, chain, &[])?
        }
    };
    // A composed preset (`config/compose.rs`): its choices replace what
    // the preset it extends chose, and its own keys change them.
    if let Some(compose) = preset.remove("compose") {
        let err = |(key, message): (String, String)| match choices.last() {
            Some(text) => ConfigError::SetKey { text: text.to_string(), key, message },
            None => ConfigError::Key { file: file.into(), key, message },
        };
        let Value::Table(compose) = compose else { return Err(err(("compose".into(), "expected a table".into()))) };
        merge(&mut table, super::compose::implied(&compose).map_err(err)?);
    }
    merge(&mut table, preset);
    Ok(table)
}

/// Deep merge. A table whose `type` (an enum variant) changes is replaced
/// whole, so the new variant starts from its own defaults.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => {
                let same_variant = match (b.get("type"), o.get("type")) {
                    (Some(x), Some(y)) => x == y,
                    _ => true,
                };
                if same_variant {
                    merge(b, o);
                } else {
                    *b = o;
                }
            }
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// `a.b.c=value`: the value is parsed as TOML (number, bool, string, array),
/// and taken as a bare string if it does not parse. Returns the key path.
fn apply_override(table: &mut toml::Table, text: &str) -> Result<String, ConfigError> {
    let err = |m: &str| ConfigError::Override { text: text.into(), message: m.into() };
    let (key, raw) = text.split_once('=').ok_or_else(|| err("expected key.path=value"))?;
    let value: toml::Value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
        Ok(mut t) => t.remove("v").unwrap(),
        Err(_) => toml::Value::String(raw.trim().to_string()),
    };
    let parts: Vec<&str> = key.trim().split('.').collect();
    if parts.iter().any(|p| p.is_empty()) {
        return Err(err("empty key segment"));
    }
    let mut over = toml::Table::new();
    let mut cur = &mut over;
    for p in &parts[..parts.len() - 1] {
        cur = cur.entry(p.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new())).as_table_mut().unwrap();
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    // Check the path runs through tables before merging.
    let mut probe: &toml::Table = table;
    for p in &parts[..parts.len() - 1] {
        match probe.get(*p) {
            Some(toml::Value::Table(t)) => probe = t,
            Some(_) => return Err(err(&format!("`{p}` is not a table"))),
            None => break,
        }
    }
    merge(table, over);
    Ok(parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_its_path() {
        let e = load_str("[metadata_cache.organization]\ntype='separate'\n[metadata_cache.organization.counter]\nwayz=4\n", "t.toml", &[])
            .unwrap_err();
        let s = e.to_string();
        assert!(s.contains("t.toml") && s.contains("metadata_cache.organization") && s.contains("wayz"), "{s}");
    }

    #[test]
    fn overrides_set_nested_keys() {
        let c = load_str("", "t.toml", &["persistence.wpq_entries=64".into(), "memory.capacity_bytes=1048576".into()]).unwrap();
        assert_eq!(c.persistence.wpq_entries, 64);
        assert_eq!(c.memory.capacity_bytes, 1 << 20);
    }

    #[test]
    fn an_integer_beyond_its_type_is_refused_with_the_key_and_its_range() {
        let err = |set: &str| load_str("", "t.toml", &[set.to_string()]).unwrap_err().to_string();
        // Validation's range when it holds the key to one.
        let e = err("security.mac_units=-1");
        assert!(e.contains("key `security.mac_units`") && e.contains("must be between 1 and 256, got -1"), "{e}");
        let e = err("security.mac_units=1099511627776");
        assert!(e.contains("must be between 1 and 256, got 1099511627776"), "{e}");
        // A key inside a tagged table, found by its leaf.
        let e = load_str("[persistence.point]\ntype = 'persist-buffer'\n", "t.toml", &["persistence.point.entries=-1".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("persistence.point.entries") && e.contains("got -1") && e.contains("must be between"), "{e}");
        // The type's range when validation holds the key to no range.
        let e = err("memory.capacity_bytes=-4096");
        assert!(
            e.contains("key `memory.capacity_bytes`") && e.contains("must be between 0 and 18446744073709551615 (a u64), got -4096"),
            "{e}"
        );
        assert!(!e.contains("expected u"), "{e}");
    }

    #[test]
    fn syntax_error_names_the_line() {
        let e = load_str("name = \"x\"\nmemory = [", "bad.toml", &[]).unwrap_err().to_string();
        assert!(e.contains("bad.toml") && e.contains("line 2"), "{e}");
    }
}

#[cfg(test)]
mod merge_tests {
    use super::*;

    #[test]
    fn a_preset_extends_another_and_changes_only_its_keys() {
        let c = load_str("extends = 'wt'\nname = 'x'\n[persistence]\nwpq_entries = 8\n", "x.toml", &[]).unwrap();
        let wt = load_preset("wt", &[]).unwrap();
        assert_eq!((c.persistence.wpq_entries, wt.persistence.wpq_entries), (8, 32));
        assert_eq!((c.caches.l2.capacity_bytes, c.scheme), (wt.caches.l2.capacity_bytes, wt.scheme), "the rest is wt's");
        let e = load_str("extends = 'no-such-preset'\n", "y.toml", &[]).unwrap_err().to_string();
        assert!(e.contains("y.toml") && e.contains("extends") && e.contains("no-such-preset"), "{e}");
        let e = load_str("extends = 3\n", "z.toml", &[]).unwrap_err().to_string();
        assert!(e.contains("extends") && e.contains("name of a preset"), "{e}");
    }

    #[test]
    fn presets_that_extend_each_other_in_a_cycle_are_refused() {
        let dir = std::env::temp_dir().join(format!("spmsim-extends-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a.toml"), dir.join("b.toml"));
        std::fs::write(&a, format!("extends = '{}'\n", b.display())).unwrap();
        std::fs::write(&b, format!("extends = '{}'\n", a.display())).unwrap();
        let e = load_preset(&a.display().to_string(), &[]).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).ok();
        assert!(e.contains("cycle"), "{e}");
    }

    #[test]
    fn a_variant_change_replaces_the_table() {
        let c = load_str(
            "[metadata_cache.organization]\ntype='unified'\nunified={capacity_bytes=4096, ways=4}\n",
            "t",
            &["tree.arity=8".into()],
        )
        .unwrap();
        assert!(matches!(c.metadata_cache.organization, crate::config::MetadataCacheOrganization::Unified { .. }));
        let c = load_str("[tree]\ntype='sit'\n", "t", &["tree.levels=9".into()]).unwrap();
        assert_eq!(c.tree, crate::config::TreeConfig::Sit { arity: 8, levels: Some(9) });
    }
}

/// The digest of every preset of the presets folder and of the files
/// `extra` (paths in that folder), by path there: what a record kept to
/// resume work says of the presets it was computed with.
pub fn presets_digests(extra: &[String]) -> Result<std::collections::BTreeMap<String, String>, String> {
    let dir = presets_dir();
    let presets = list_presets().into_iter().map(|p| format!("{p}.toml"));
    let mut inputs = std::collections::BTreeMap::new();
    for f in presets.chain(extra.iter().cloned()) {
        let path = dir.join(&f);
        let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        inputs.insert(f, crate::util::digest::hex_digest(&bytes));
    }
    Ok(inputs)
}
