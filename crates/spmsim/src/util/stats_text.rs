//! The one text printer of a stats tree: it walks the JSON tree the stats
//! serialize to, so a component's new counter is printed with no printing
//! code (JSON itself is serde's).
//!
//! ```text
//!  {"core": {"cycles": 1431808, "ipc": 0.698}, "caches": {"l1d": {...}}}
//!  core
//!    cycles      1,431,808
//!    ipc             0.698
//!  caches
//!    l1d.hits       53,799
//! ```

use serde_json::Value;

/// An integer with thousands separators.
pub fn count(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn leaf(v: &Value) -> String {
    match v {
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => count(u),
            (None, Some(i), _) => format!("-{}", count(i.unsigned_abs())),
            (_, _, Some(f)) => format!("{f:.4}"),
            _ => n.to_string(),
        },
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "-".into(),
        Value::Array(a) => format!("[{}]", a.iter().map(leaf).collect::<Vec<_>>().join(", ")),
        // Objects are walked (`leaves`); one inside an array of scalars
        // would print as JSON.
        Value::Object(_) => v.to_string(),
    }
}

/// Every leaf under `v`, with its dotted path below `prefix`.
fn leaves(prefix: &str, v: &Value, out: &mut Vec<(String, String)>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                leaves(&p, x, out);
            }
        }
        // An array of objects (one per core) is walked element by element.
        Value::Array(a) if a.iter().any(Value::is_object) => {
            for (i, x) in a.iter().enumerate() {
                leaves(&if prefix.is_empty() { i.to_string() } else { format!("{prefix}.{i}") }, x, out);
            }
        }
        other => out.push((prefix.to_string(), leaf(other))),
    }
}

/// One section per key of `tree` (an object: a component each), its
/// leaves one per line with their values aligned; a leaf at the top level
/// is a line of its own.
pub fn render(tree: &Value) -> String {
    let mut s = String::new();
    let Value::Object(m) = tree else { return format!("{}\n", leaf(tree)) };
    for (k, v) in m {
        let mut rows = Vec::new();
        leaves("", v, &mut rows);
        if let [(p, x)] = rows.as_slice() {
            if p.is_empty() {
                s.push_str(&format!("{k}  {x}\n"));
                continue;
            }
        }
        s.push_str(&format!("{k}\n"));
        let kw = rows.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
        let vw = rows.iter().map(|(_, x)| x.len()).max().unwrap_or(0);
        for (p, x) in rows {
            s.push_str(&format!("  {p:<kw$}  {x:>vw$}\n"));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn counts_get_separators() {
        assert_eq!((count(0), count(999), count(1000), count(1431808)), ("0".into(), "999".into(), "1,000".into(), "1,431,808".into()));
    }

    #[test]
    fn every_leaf_is_printed_under_its_component_aligned() {
        let t = json!({"core": {"cycles": 1431808, "ipc": 0.69841}, "caches": {"l1d": {"hits": 5, "hit_rate": 0.5}}, "scheme": "cobcm"});
        let out = render(&t);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines,
            [
                "caches",
                "  l1d.hit_rate  0.5000",
                "  l1d.hits           5",
                "core",
                "  cycles  1,431,808",
                "  ipc        0.6984",
                "scheme  cobcm"
            ]
        );
    }

    #[test]
    fn arrays_of_objects_are_walked_by_index() {
        let t = json!({"roi": {"cores": [{"ipc": 0.5}, {"ipc": 0.25}], "sizes": [1, 2]}});
        let out = render(&t);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines, ["roi", "  cores.0.ipc  0.5000", "  cores.1.ipc  0.2500", "  sizes        [1, 2]"]);
    }
}
