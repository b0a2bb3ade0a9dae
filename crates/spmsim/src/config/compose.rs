//! A preset composed from a choice on each axis instead of a
//! scheme bundle:
//!
//! ```toml
//! [compose]
//! front = "persist-buffer:cobcm"   # memory-controller | persist-buffer[:variant] | cache-hierarchy
//! metadata = "star"                # a memory-controller scheme, or { type = "star", ... }; "none"
//! tree = "sit"                     # optional: bmt | sit
//! persistency = "strict"           # optional: strict | epoch | tep
//! battery = "front"                # optional: front (the buffer or caches drain) | adr (the WPQ only)
//! ```
//! The table is laid under the file's other keys (which change the
//! defaults it implies, as any preset does): `scheme`, `security.enabled`,
//! `persistence.point`, `persistence.battery`, and `tree.type` and
//! `persistence.model` when given. A pair that is a paper's scheme is that
//! scheme (`persist-buffer:cobcm` + `sp` is `cobcm`), so its results are the
//! paper preset's.

use crate::scheme::{Composed, FrontChoice, MetadataChoice};
use toml::{Table, Value};

/// A key of `[compose]` and what is wrong with it.
pub type ComposeError = (String, String);

const KEYS: [&str; 5] = ["front", "metadata", "tree", "persistency", "battery"];

fn string<'a>(t: &'a Table, key: &str) -> Result<Option<&'a str>, ComposeError> {
    match t.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.as_str())),
        Some(v) => Err((format!("compose.{key}"), format!("expected a string, got {v}"))),
    }
}

fn one_of(t: &Table, key: &str, allowed: &[&str]) -> Result<Option<String>, ComposeError> {
    match string(t, key)? {
        Some(s) if !allowed.contains(&s) => Err((format!("compose.{key}"), format!("expected one of {}, got `{s}`", allowed.join(", ")))),
        s => Ok(s.map(str::to_string)),
    }
}

/// The keys `[compose]` implies.
pub fn implied(t: &Table) -> Result<Table, ComposeError> {
    if let Some(k) = t.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err((format!("compose.{k}"), format!("unknown key; known: {}", KEYS.join(", "))));
    }
    let front = FrontChoice::parse(string(t, "front")?.unwrap_or("memory-controller")).map_err(|m| ("compose.front".to_string(), m))?;
    let metadata: MetadataChoice = match t.get("metadata") {
        None => return Err(("compose.metadata".into(), "missing: name how metadata persists (`none`, `sp`, `star`, ...)".into())),
        Some(Value::String(s)) => {
            let mut one = Table::new();
            one.insert("type".into(), Value::String(s.clone()));
            Value::Table(one).try_into()
        }
        Some(v) => v.clone().try_into(),
    }
    .map_err(|e: toml::de::Error| ("compose.metadata".to_string(), e.message().to_string()))?;
    let scheme = Composed { front, metadata }.resolve().map_err(|m| ("compose.metadata".to_string(), m))?;
    let battery = one_of(t, "battery", &["front", "adr"])?.unwrap_or_else(|| "front".into());
    let drains = battery == "front";
    let mut out = Table::new();
    out.insert("scheme".into(), Value::try_from(scheme).expect("a scheme serializes"));
    let mut security = Table::new();
    security.insert("enabled".into(), Value::Boolean(metadata != MetadataChoice::NONE));
    out.insert("security".into(), Value::Table(security));
    let mut point = Table::new();
    point.insert("type".into(), Value::String(front.front().point_type().into()));
    let mut bat = Table::new();
    bat.insert("wpq".into(), Value::Boolean(true));
    bat.insert("persist_buffer".into(), Value::Boolean(drains && matches!(front, FrontChoice::PersistBuffer(_))));
    bat.insert("caches".into(), Value::Boolean(drains && front == FrontChoice::CacheHierarchy));
    let mut persistence = Table::new();
    persistence.insert("point".into(), Value::Table(point));
    persistence.insert("battery".into(), Value::Table(bat));
    if let Some(m) = one_of(t, "persistency", &["strict", "epoch", "tep"])? {
        persistence.insert("model".into(), Value::String(m));
    }
    out.insert("persistence".into(), Value::Table(persistence));
    if let Some(tree) = one_of(t, "tree", &["bmt", "sit"])? {
        let mut tt = Table::new();
        tt.insert("type".into(), Value::String(tree));
        out.insert("tree".into(), Value::Table(tt));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::compare::machine::same_machine;
    use crate::config::{load_preset, load_str};

    fn composed(body: &str) -> Result<crate::config::SimConfig, String> {
        load_str(body, "c.toml", &[]).map_err(|e| e.to_string())
    }

    /// The papers' schemes written as compositions are their presets'
    /// machines exactly (so their results are the presets', byte for byte).
    #[test]
    fn a_papers_pair_is_its_preset() {
        for (preset, compose) in [
            ("cobcm", "front = 'persist-buffer:cobcm'\nmetadata = 'sp'"),
            ("nogap", "front = 'persist-buffer:nogap'\nmetadata = 'sp'"),
            ("bbb", "front = 'persist-buffer'\nmetadata = 'none'"),
            ("secure-eadr", "front = 'cache-hierarchy'\nmetadata = 'battery-write-back'"),
            ("eadr", "front = 'cache-hierarchy'\nmetadata = 'none'"),
            ("sp", "metadata = 'sp'"),
            ("secure-wt", "front = 'memory-controller'\nmetadata = 'write-through'"),
        ] {
            let c = composed(&format!("[compose]\n{compose}\n")).unwrap();
            assert!(same_machine(&c, &load_preset(preset, &[]).unwrap()), "{preset}");
        }
        // Over another preset's machine: STAR's is sit-wb's with its scheme.
        let c = composed("extends = 'sit-wb'\n[compose]\nmetadata = 'star'\n").unwrap();
        assert!(same_machine(&c, &load_preset("star", &[]).unwrap()));
    }

    #[test]
    fn a_new_pair_builds_its_machine() {
        let c = composed("extends = 'sit-wb'\n[compose]\nfront = 'persist-buffer:obcm'\nmetadata = { type = 'star' }\n").unwrap();
        assert_eq!(c.scheme.name(), "obcm+star");
        assert!(c.persistence.battery.persist_buffer && c.security.enabled);
        assert!(matches!(c.persistence.point, crate::config::PersistPoint::PersistBuffer { entries: 32, .. }));
        // The battery axis: the buffer outside the battery domain.
        let c = composed("extends = 'sit-wb'\n[compose]\nfront = 'persist-buffer'\nmetadata = 'star'\nbattery = 'adr'\n").unwrap();
        assert!(!c.persistence.battery.persist_buffer);
        // The tree and persistency axes; the file's own keys change them.
        let c = composed("[compose]\nmetadata = 'write-through'\ntree = 'sit'\npersistency = 'epoch'\n").unwrap();
        assert!(matches!(c.tree, crate::config::TreeConfig::Sit { .. }));
        assert_eq!(c.persistence.model.name(), "epoch");
        let c = composed("[compose]\nmetadata = 'write-through'\n[persistence]\nwpq_entries = 8\n").unwrap();
        assert_eq!(c.persistence.wpq_entries, 8);
        // `--set compose.front=...` changes the choice.
        let c =
            load_str("extends = 'sit-wb'\n[compose]\nmetadata = 'star'\n", "c.toml", &["compose.front=cache-hierarchy".into()]).unwrap();
        assert_eq!(c.scheme.name(), "eadr+star");
    }

    #[test]
    fn bad_choices_name_the_key_and_both_choices() {
        let e = composed("extends = 'sit-wb'\n[compose]\nfront = 'persist-buffer:nogap'\nmetadata = 'star'\n").unwrap_err();
        assert!(
            e.contains("c.toml") && e.contains("compose.metadata") && e.contains("persist-buffer:nogap") && e.contains("`star`"),
            "{e}"
        );
        let e = composed("[compose]\nfront = 'l2'\nmetadata = 'sp'\n").unwrap_err();
        assert!(e.contains("compose.front") && e.contains("unknown front end `l2`"), "{e}");
        let e = composed("[compose]\nmetadata = 'nope'\n").unwrap_err();
        assert!(e.contains("compose.metadata") && e.contains("nope"), "{e}");
        let e = composed("[compose]\nfront = 'persist-buffer'\n").unwrap_err();
        assert!(e.contains("compose.metadata") && e.contains("missing"), "{e}");
        let e = composed("[compose]\nmetadata = 'sp'\ntree = 'avl'\n").unwrap_err();
        assert!(e.contains("compose.tree") && e.contains("avl"), "{e}");
        let e = composed("[compose]\nmetadata = 'sp'\ncolour = 1\n").unwrap_err();
        assert!(e.contains("compose.colour"), "{e}");
        // A choice the rest of the machine cannot give: Secon's TEP needs
        // the memory controller's front end.
        let e = composed("extends = 'secon'\n[compose]\nfront = 'persist-buffer:cobcm'\nmetadata = 'secon'\n").unwrap_err();
        assert!(e.contains("persistence.model") || e.contains("persist-buffer"), "{e}");
    }
}
