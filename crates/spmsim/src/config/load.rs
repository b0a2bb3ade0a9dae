//! Loading presets and override strings, with errors that name the file
//! and the key path.

use super::SimConfig;
use std::path::{Path, PathBuf};

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
    #[error("override `{text}`: {message}")]
    Override { text: String, message: String },
}

/// The `configs/` folder: `$SPMSIM_CONFIGS`, else the workspace's own.
pub fn presets_dir() -> PathBuf {
    if let Ok(p) = std::env::var("SPMSIM_CONFIGS") {
        return PathBuf::from(p);
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../configs")
}

pub fn list_presets() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(presets_dir())
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let p = e.path();
                    (p.extension().and_then(|x| x.to_str()) == Some("toml"))
                        .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
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
    let mut table: toml::Table =
        toml::from_str(text).map_err(|e| ConfigError::Syntax { file: file.into(), message: e.to_string().trim_end().replace('\n', " ") })?;
    for o in overrides {
        apply_override(&mut table, o)?;
    }
    let cfg: SimConfig = serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| ConfigError::Key {
        file: file.into(),
        key: e.path().to_string(),
        message: e.inner().to_string().trim_end().replace('\n', " "),
    })?;
    cfg.validate().map_err(|(key, message)| ConfigError::Key { file: file.into(), key, message })?;
    Ok(cfg)
}

/// `a.b.c=value`: the value is parsed as TOML (number, bool, string, array),
/// and taken as a bare string if it does not parse.
fn apply_override(table: &mut toml::Table, text: &str) -> Result<(), ConfigError> {
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
    let mut cur = table;
    for p in &parts[..parts.len() - 1] {
        let e = cur.entry(p.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = e.as_table_mut().ok_or_else(|| err(&format!("`{p}` is not a table")))?;
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_key_names_its_path() {
        let e = load_str("[metadata_cache.organization]\ntype='separate'\n[metadata_cache.organization.counter]\nwayz=4\n", "t.toml", &[]).unwrap_err();
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
    fn syntax_error_names_the_line() {
        let e = load_str("name = \"x\"\nmemory = [", "bad.toml", &[]).unwrap_err().to_string();
        assert!(e.contains("bad.toml") && e.contains("line 2"), "{e}");
    }
}
