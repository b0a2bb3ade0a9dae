//! Naming the exact key behind a configuration error.
//!
//! serde reads an internally tagged enum (`tree`, `persistence.point`,
//! `metadata_cache.organization`: tables chosen by their `type`) by
//! buffering the table first, so an error inside one carries only the
//! table's path, and a unit variant (`type = "memory-controller"`) ignores
//! every other key of its table. This module recovers the leaf: it lays one
//! key at a time over the variant's own defaults until one fails alone; and
//! it checks that every key given is a key of the resolved configuration.

use super::SimConfig;
use toml::{Table, Value};

/// A key path and what is wrong with the value there.
pub type KeyError = (String, String);

/// serde's message on one line, without the ` in `table`` the TOML reader
/// appends (the key path is reported separately, and exactly).
fn message<E: std::fmt::Display>(e: E) -> String {
    let m = e.to_string().trim_end().replace('\n', " ");
    match m.rfind(" in `") {
        Some(i) if m.ends_with('`') => m[..i].to_string(),
        _ => m,
    }
}

/// Deserialize the merged table; an error names the leaf key.
pub fn deserialize(table: &Table) -> Result<SimConfig, KeyError> {
    try_deserialize(table).map_err(|(key, msg)| leaf_inside_variant(table, &key).unwrap_or((key, msg)))
}

fn try_deserialize(table: &Table) -> Result<SimConfig, KeyError> {
    serde_path_to_error::deserialize(Value::Table(table.clone())).map_err(|e| (e.path().to_string(), message(e.inner())))
}

fn get<'a>(table: &'a Table, path: &[String]) -> Option<&'a Value> {
    let (first, rest) = path.split_first()?;
    let v = table.get(first)?;
    match rest.is_empty() {
        true => Some(v),
        false => get(v.as_table()?, rest),
    }
}

/// Set `path` in `table`, creating tables on the way.
fn set(table: &mut Table, path: &[String], value: Value) {
    let (last, parents) = path.split_last().expect("a key path has at least one segment");
    let mut cur = table;
    for p in parents {
        let slot = cur.entry(p.clone()).or_insert_with(|| Value::Table(Table::new()));
        if !slot.is_table() {
            *slot = Value::Table(Table::new());
        }
        cur = slot.as_table_mut().unwrap();
    }
    cur.insert(last.clone(), value);
}

/// When the failing key `at` is a tagged table, the leaf in it that fails
/// on its own over the variant's defaults, with that failure's message.
fn leaf_inside_variant(table: &Table, at: &str) -> Option<KeyError> {
    let at: Vec<String> = at.split('.').map(str::to_string).collect();
    let input = get(table, &at)?.as_table()?;
    let tag = input.get("type")?.clone();
    // The variant alone: if even that fails here, the tag itself is wrong.
    let mut bare = table.clone();
    set(&mut bare, &at, Value::Table(Table::from_iter([("type".to_string(), tag)])));
    let defaults = match try_deserialize(&bare) {
        Ok(cfg) => match Value::try_from(&cfg).ok()? {
            Value::Table(t) => get(&t, &at)?.as_table()?.clone(),
            _ => return None,
        },
        Err((key, msg)) if key == at.join(".") => return Some((format!("{key}.type"), msg)),
        Err(_) => return None,
    };
    first_failing_leaf(table, &at, &defaults, input, &[])
}

fn first_failing_leaf(table: &Table, at: &[String], defaults: &Table, input: &Table, prefix: &[String]) -> Option<KeyError> {
    for (k, v) in input {
        if prefix.is_empty() && k == "type" {
            continue;
        }
        let path: Vec<String> = prefix.iter().cloned().chain([k.clone()]).collect();
        // Into a table the variant has; a table it lacks is the leaf itself.
        if let (Value::Table(sub), Some(Value::Table(_))) = (v, get(defaults, &path)) {
            if let Some(found) = first_failing_leaf(table, at, defaults, sub, &path) {
                return Some(found);
            }
        }
        let mut variant = defaults.clone();
        set(&mut variant, &path, v.clone());
        let mut trial = table.clone();
        set(&mut trial, at, Value::Table(variant));
        match try_deserialize(&trial) {
            Err((key, msg)) if key == at.join(".") => return Some((format!("{key}.{}", path.join(".")), msg)),
            _ => {}
        }
    }
    None
}

/// serde's refusal of an integer its field's type cannot hold (`invalid
/// value: integer `-1`, expected u32`): the value, the type and its range.
fn integer_beyond_type(msg: &str) -> Option<(i128, &'static str, i128, i128)> {
    let rest = msg.strip_prefix("invalid value: integer `")?;
    let (value, rest) = rest.split_once('`')?;
    let ty = rest.strip_prefix(", expected ")?.trim();
    let (ty, lo, hi): (&'static str, i128, i128) = match ty {
        "u8" => ("u8", 0, u8::MAX.into()),
        "u16" => ("u16", 0, u16::MAX.into()),
        "u32" => ("u32", 0, u32::MAX.into()),
        "u64" => ("u64", 0, u64::MAX.into()),
        "usize" => ("usize", 0, u64::MAX.into()),
        "i8" => ("i8", i8::MIN.into(), i8::MAX.into()),
        "i16" => ("i16", i16::MIN.into(), i16::MAX.into()),
        "i32" => ("i32", i32::MIN.into(), i32::MAX.into()),
        "i64" => ("i64", i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    };
    Some((value.parse().ok()?, ty, lo, hi))
}

/// For an integer its key's type cannot hold (-1 or 2^40 for a `u32`),
/// the message with the key's range: the range validation holds the key
/// to (found by laying each end of the type's range on the key and
/// reading validation's refusal of the one outside it), else the type's.
pub fn integer_range_message(table: &Table, key: &str, msg: &str) -> Option<String> {
    let (value, ty, lo, hi) = integer_beyond_type(msg)?;
    let path: Vec<String> = key.split('.').map(str::to_string).collect();
    for end in [hi, lo] {
        let Ok(end_value) = i64::try_from(end) else { continue };
        let mut trial = table.clone();
        set(&mut trial, &path, Value::Integer(end_value));
        let Ok(cfg) = try_deserialize(&trial) else { continue };
        if let Err((k, m)) = cfg.validate() {
            let got = format!(", got {end}");
            if k == key && m.starts_with("must be between ") && m.ends_with(&got) {
                return Some(format!("{}, got {value}", &m[..m.len() - got.len()]));
            }
        }
    }
    Some(format!("must be between {lo} and {hi} (a {ty}), got {value}"))
}

/// Every key of `input` must be a key of `cfg` as it serializes: a key the
/// selected variant lacks would otherwise be read and silently dropped.
pub fn check_all_used(input: &Table, cfg: &SimConfig) -> Result<(), KeyError> {
    let resolved = match Value::try_from(cfg).expect("config serializes") {
        Value::Table(t) => t,
        _ => unreachable!("a config serializes to a table"),
    };
    let mut trimmed = input.clone();
    while let Some((path, msg)) = unused_key(&trimmed, &resolved, "") {
        // A field the config leaves out while it holds its default is a key
        // all the same: set to that default, dropping it changes nothing.
        if !SKIPPED_AT_DEFAULT.contains(&path.as_str()) {
            return Err((path, msg));
        }
        let parts: Vec<String> = path.split('.').map(str::to_string).collect();
        remove(&mut trimmed, &parts);
        // Compared as text: a NaN (a value validation refuses later) is
        // equal to itself there, as it is not among values.
        let same = try_deserialize(&trimmed).ok().and_then(|c| toml::to_string(&c).ok()) == toml::to_string(cfg).ok();
        if !same {
            return Err((path, msg));
        }
    }
    Ok(())
}

/// The keys the resolved configuration leaves out when they hold their
/// default (`skip_serializing_if` in `config/mod.rs`).
const SKIPPED_AT_DEFAULT: &[&str] = &[
    "expect_undetected_attacks",
    "role",
    "security.mac_placement",
    "security.volatile_key",
    "memory.persistent_regions",
    "memory.tx_stack_bytes",
    "tree.onchip_levels",
    "nvm.read_scheduling",
    "nvm.write_scheduling",
    "core.count",
    "core.multicore_stats",
];

/// Remove `path` from `table`, if there.
fn remove(table: &mut Table, path: &[String]) {
    let Some((last, parents)) = path.split_last() else { return };
    let mut cur = table;
    for p in parents {
        match cur.get_mut(p).and_then(Value::as_table_mut) {
            Some(t) => cur = t,
            None => return,
        }
    }
    cur.remove(last);
}

fn unused_key(input: &Table, resolved: &Table, prefix: &str) -> Option<KeyError> {
    for (k, v) in input {
        let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
        match (resolved.get(k), v) {
            (None, _) => {
                let owner = match resolved.get("type").and_then(Value::as_str) {
                    Some(t) => format!("`{prefix}` of type `{t}`"),
                    None => format!("`{prefix}`"),
                };
                return Some((path, format!("{owner} has no key `{k}`")));
            }
            (Some(Value::Table(r)), Value::Table(i)) => {
                if let Some(e) = unused_key(i, r, &path) {
                    return Some(e);
                }
            }
            _ => {}
        }
    }
    None
}
