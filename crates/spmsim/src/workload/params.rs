//! Parameters of the built-in generators, from the command line
//! (`btree:value_bytes=256,ops_per_tx=1-16`) or from a TOML file
//! (`kind = "btree"` plus the same keys). Both paths build a TOML table and
//! deserialize it with serde (`deny_unknown_fields`), so a misspelt key is
//! named together with the valid ones, and `name()` prints every key back in
//! the same syntax so that a name parses to the same parameters.

use crate::util::rng::SplitMix64;
use serde::de::{self, DeserializeOwned, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Operations per transaction: a fixed `N`, or uniform in `A-B` (Secon
/// 4.2.1 varies it over 1-16).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpsPerTx {
    pub min: u32,
    pub max: u32,
}

/// The most operations one transaction may hold (its undo log must fit the
/// 4 MiB log region).
pub const MAX_OPS_PER_TX: u32 = 256;

impl OpsPerTx {
    pub const fn fixed(n: u32) -> Self {
        OpsPerTx { min: n, max: n }
    }
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || format!("ops_per_tx wants N or A-B with 1 <= A <= B <= {MAX_OPS_PER_TX}, got `{s}`");
        let (a, b) = match s.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u32>().map_err(|_| bad())?, b.trim().parse::<u32>().map_err(|_| bad())?),
            None => {
                let n = s.trim().parse::<u32>().map_err(|_| bad())?;
                (n, n)
            }
        };
        if a == 0 || a > b || b > MAX_OPS_PER_TX {
            return Err(bad());
        }
        Ok(OpsPerTx { min: a, max: b })
    }
    pub fn draw(&self, r: &mut SplitMix64) -> u32 {
        if self.min == self.max {
            self.min
        } else {
            self.min + r.below((self.max - self.min + 1) as u64) as u32
        }
    }
}

impl fmt::Display for OpsPerTx {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}-{}", self.min, self.max)
        }
    }
}

impl Serialize for OpsPerTx {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for OpsPerTx {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = OpsPerTx;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "an operation count N or a range \"A-B\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<OpsPerTx, E> {
                OpsPerTx::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<OpsPerTx, E> {
                OpsPerTx::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OpsPerTx, E> {
                OpsPerTx::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A TOML value for a command-line `key=value`: boolean, integer, float,
/// or else a string (`1-16`, `1:1`, `zipfian`).
fn guess_value(v: &str) -> toml::Value {
    if let Ok(b) = v.parse::<bool>() {
        return toml::Value::Boolean(b);
    }
    if let Ok(i) = v.parse::<i64>() {
        return toml::Value::Integer(i);
    }
    if v.chars().any(|c| c.is_ascii_digit()) && !v.contains(['-', ':']) {
        if let Ok(f) = v.parse::<f64>() {
            return toml::Value::Float(f);
        }
    }
    toml::Value::String(v.to_string())
}

/// The table of a command-line body `k=v,k=v`.
pub fn table_of(what: &str, body: &str) -> Result<toml::Table, String> {
    let mut t = toml::Table::new();
    for kv in body.split(',').filter(|x| !x.trim().is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| format!("{what} workload: `{kv}` is not key=value"))?;
        let k = k.trim();
        if t.insert(k.to_string(), guess_value(v.trim())).is_some() {
            return Err(format!("{what} workload: key `{k}` given twice"));
        }
    }
    Ok(t)
}

/// Deserialize parameters from a table; errors name the key.
pub fn from_table<T: DeserializeOwned>(what: &str, t: toml::Table) -> Result<T, String> {
    serde_path_to_error::deserialize(toml::Value::Table(t)).map_err(|e| {
        let path = e.path().to_string();
        if path == "." || path.is_empty() {
            format!("{what} workload: {}", e.inner())
        } else {
            format!("{what} workload: key `{path}`: {}", e.inner())
        }
    })
}

/// `k=v,k=v` for every key of the parameters (the inverse of
/// [`table_of`] + [`from_table`]).
pub fn keys_of<T: Serialize>(p: &T) -> String {
    let v = toml::Value::try_from(p).expect("generator parameters serialize to a table");
    let t = match v {
        toml::Value::Table(t) => t,
        _ => unreachable!("parameters are a struct"),
    };
    t.iter()
        .map(|(k, v)| {
            let s = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Float(f) => format!("{f}"),
                other => other.to_string(),
            };
            format!("{k}={s}")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A read:write ratio `R:W` (or `R`, meaning `R:1`), as DAXBENCH-S-RW
/// names it (Triad-NVM Table II: DAXBENCH-128-2 reads twice per write).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ratio {
    pub reads: u32,
    pub writes: u32,
}

impl Ratio {
    pub fn parse(s: &str) -> Result<Self, String> {
        let bad = || format!("rw wants R:W or R (reads per write) with R + W between 1 and 1024, got `{s}`");
        let (r, w) = match s.split_once(':') {
            Some((r, w)) => (r.trim().parse::<u32>().map_err(|_| bad())?, w.trim().parse::<u32>().map_err(|_| bad())?),
            None => (s.trim().parse::<u32>().map_err(|_| bad())?, 1),
        };
        if r + w == 0 || r + w > 1024 {
            return Err(bad());
        }
        Ok(Ratio { reads: r, writes: w })
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}:{}", self.reads, self.writes)
    }
}

impl Serialize for Ratio {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Ratio {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Ratio;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a ratio \"R:W\" or a read count R")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ratio, E> {
                Ratio::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ratio, E> {
                Ratio::parse(&v.to_string()).map_err(E::custom)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Ratio, E> {
                Ratio::parse(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// Common range checks.
pub fn check_range(what: &str, key: &str, v: u64, lo: u64, hi: u64) -> Result<(), String> {
    if v < lo || v > hi {
        return Err(format!("{what} workload: {key} must be in {lo}..={hi}, got {v}"));
    }
    Ok(())
}

/// Value sizes: whole 8-byte words, 8 B to 4 KiB.
pub fn check_value_bytes(what: &str, v: u64) -> Result<(), String> {
    check_range(what, "value_bytes", v, 8, 4096)?;
    if !v.is_multiple_of(8) {
        return Err(format!("{what} workload: value_bytes must be a multiple of 8, got {v}"));
    }
    Ok(())
}

/// The parameters of a structure benchmark whose keys are exactly the
/// common six (array, queue, hash, rbtree): a struct `$name` holding
/// `value_bytes`, `size_mib`, `ops_per_tx`, `gap`, `style` and `populate`
/// in that order (the order a bad key's error lists them in), whose default
/// is the papers' (Secon 4.1: 256 B values in a 1 GB structure, 1-16
/// operations per transaction, Secon 4.2.1) with the kind's own `gap`, and
/// whose `check_keys` checks every key's range for `kind`, with `size_mib`
/// at most `max_size_mib`. The kind's `validate` adds its layout's checks.
/// (btree, ycsb and tpcc have other keys and spell their structs out.)
macro_rules! structure_params {
    ($(#[$attr:meta])* $name:ident, kind = $kind:literal, gap = $gap:literal, max_size_mib = $max:literal) => {
        $(#[$attr])*
        #[derive(Clone, Debug, PartialEq, ::serde::Serialize, ::serde::Deserialize)]
        #[serde(deny_unknown_fields, default)]
        pub struct $name {
            /// Bytes per entry or value (Secon: 256).
            pub value_bytes: u64,
            /// Structure size (Secon: 1 GB).
            pub size_mib: u64,
            pub ops_per_tx: $crate::workload::params::OpsPerTx,
            /// Non-memory instructions before each access of the structure's code.
            pub gap: u32,
            pub style: $crate::workload::pheap::TxStyle,
            /// Emit the initial contents as stores before the first transaction.
            pub populate: bool,
        }

        impl Default for $name {
            fn default() -> Self {
                $name {
                    value_bytes: 256,
                    size_mib: 1024,
                    ops_per_tx: $crate::workload::params::OpsPerTx { min: 1, max: 16 },
                    gap: $gap,
                    style: $crate::workload::pheap::TxStyle::Dynamic,
                    populate: false,
                }
            }
        }

        impl $name {
            /// The range of every key (the layout is the caller's to check).
            fn check_keys(&self) -> Result<(), String> {
                $crate::workload::params::check_value_bytes($kind, self.value_bytes)?;
                $crate::workload::params::check_range($kind, "size_mib", self.size_mib, 1, $max)?;
                $crate::workload::params::check_range($kind, "gap", self.gap as u64, 0, 10_000)
            }
        }
    };
}
pub(crate) use structure_params;

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct P {
        value_bytes: u64,
        ops_per_tx: OpsPerTx,
        theta: f64,
        rw: Ratio,
        populate: bool,
    }
    impl Default for P {
        fn default() -> Self {
            P {
                value_bytes: 256,
                ops_per_tx: OpsPerTx { min: 1, max: 16 },
                theta: 0.99,
                rw: Ratio { reads: 1, writes: 1 },
                populate: false,
            }
        }
    }

    #[test]
    fn keys_round_trip_and_bad_keys_are_named() {
        let p: P = from_table("t", table_of("t", "value_bytes=64,ops_per_tx=4,theta=1,rw=2").unwrap()).unwrap();
        assert_eq!(
            p,
            P { value_bytes: 64, ops_per_tx: OpsPerTx::fixed(4), theta: 1.0, rw: Ratio { reads: 2, writes: 1 }, populate: false }
        );
        let s = keys_of(&p);
        assert_eq!(s, "ops_per_tx=4,populate=false,rw=2:1,theta=1,value_bytes=64");
        assert_eq!(from_table::<P>("t", table_of("t", &s).unwrap()).unwrap(), p);
        let d = P::default();
        assert_eq!(from_table::<P>("t", table_of("t", &keys_of(&d)).unwrap()).unwrap(), d);
        let e = from_table::<P>("btree", table_of("btree", "valu_bytes=3").unwrap()).unwrap_err();
        assert!(e.contains("valu_bytes") && e.contains("value_bytes") && e.contains("ops_per_tx"), "{e}");
        let e = from_table::<P>("btree", table_of("btree", "value_bytes=abc").unwrap()).unwrap_err();
        assert!(e.contains("key `value_bytes`"), "{e}");
        let e = from_table::<P>("btree", table_of("btree", "ops_per_tx=9-2").unwrap()).unwrap_err();
        assert!(e.contains("ops_per_tx"), "{e}");
        assert!(table_of("btree", "value_bytes").unwrap_err().contains("key=value"));
        assert!(table_of("btree", "a=1,a=2").unwrap_err().contains("twice"));
    }

    #[test]
    fn ops_per_tx_and_ratio_parse_and_draw() {
        assert_eq!(OpsPerTx::parse("1-16").unwrap(), OpsPerTx { min: 1, max: 16 });
        for bad in ["0", "3-2", "x", "1-999", "-1"] {
            assert!(OpsPerTx::parse(bad).is_err(), "{bad}");
        }
        let o = OpsPerTx::parse("2-5").unwrap();
        let mut r = SplitMix64::new(1);
        let mut seen = [false; 6];
        for _ in 0..200 {
            let n = o.draw(&mut r);
            assert!((2..=5).contains(&n));
            seen[n as usize] = true;
        }
        assert!(seen[2] && seen[5]);
        assert_eq!(Ratio::parse("3").unwrap(), Ratio { reads: 3, writes: 1 });
        assert_eq!(Ratio::parse("0:1").unwrap(), Ratio { reads: 0, writes: 1 });
        assert!(Ratio::parse("0:0").is_err() && Ratio::parse("a:b").is_err());
    }
}
