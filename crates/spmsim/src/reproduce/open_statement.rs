//! A statement a paper leaves open, and its readings, as the reference
//! file declares them (`[[readings]]`); `readings.rs` checks them and
//! judges each reading's claims.

use serde::{Deserialize, Serialize};

/// One reading of an open statement.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reading {
    /// Its name, as the reproduction knows it.
    pub name: String,
    /// What the statement says under this reading.
    pub means: String,
}

/// A statement the paper leaves open, and its readings.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenStatement {
    /// The reproduction's parameter that takes each reading in turn.
    pub parameter: String,
    /// What the paper says (and where), or what it leaves unsaid.
    pub statement: String,
    /// The claims whose numbers depend on the reading.
    pub claims: Vec<String>,
    /// The reading the claims are counted under.
    pub primary: String,
    /// Why it is the primary one.
    pub reason: String,
    pub reading: Vec<Reading>,
}
