//! Readings of what a paper leaves open: a statement its text admits in
//! more than one way (which points a percentage is taken over, which
//! write policy an unstated baseline runs). Each reading is a named value
//! of one parameter of the reproduction, and the reproduction runs them
//! all; the reference file declares them, and which one is primary with
//! the reason, before the runs.
//!
//! ```text
//!  configs/reference/<paper>.toml
//!    [[readings]] parameter, statement, claims, primary, reason
//!      [[readings.reading]] name, means          (two or more)
//!  the paper's analysis: every reading's numbers for the statement's claims
//!    resolve(): the primary reading's numbers become the claims' (counted
//!               as every claim is); each reading's claims are judged by
//!               the same rules, shown in the report's Readings section
//!               and never counted
//! ```
//! A reading with no numbers, numbers for no reading, or a primary that
//! names no reading is an error, as a claim with no number is.

use super::claims::{ClaimResult, Reference};
pub use super::open_statement::{OpenStatement, Reading};
use serde::Serialize;
use std::fmt::Write as _;

/// One open statement checked against the reference file it is in.
fn check_statement(s: &OpenStatement, reference: &Reference) -> Result<(), String> {
    let at = |e: String| format!("{}: readings `{}`: {e}", reference.file, s.parameter);
    if s.reading.len() < 2 {
        return Err(at("an open statement has two readings or more".into()));
    }
    for (i, r) in s.reading.iter().enumerate() {
        if s.reading[..i].iter().any(|o| o.name == r.name) {
            return Err(at(format!("reading `{}` is given twice", r.name)));
        }
    }
    if !s.reading.iter().any(|r| r.name == s.primary) {
        return Err(at(format!("the primary reading `{}` is none of its readings", s.primary)));
    }
    if s.reason.trim().is_empty() {
        return Err(at("the primary reading needs its reason".into()));
    }
    if s.claims.is_empty() {
        return Err(at("no claim depends on it".into()));
    }
    for c in &s.claims {
        if !reference.claim.iter().any(|k| &k.id == c) {
            return Err(at(format!("claim `{c}` is not in the file")));
        }
    }
    Ok(())
}

/// Every open statement of `reference` checked, and none given twice.
pub fn check(reference: &Reference) -> Result<(), String> {
    for (i, s) in reference.readings.iter().enumerate() {
        check_statement(s, reference)?;
        if reference.readings[..i].iter().any(|o| o.parameter == s.parameter) {
            return Err(format!("{}: readings `{}` is given twice", reference.file, s.parameter));
        }
    }
    Ok(())
}

/// The reading of parameter `parameter` the claims are counted under.
pub fn primary<'a>(reference: &'a Reference, parameter: &str) -> Result<&'a str, String> {
    reference
        .readings
        .iter()
        .find(|s| s.parameter == parameter)
        .map(|s| s.primary.as_str())
        .ok_or_else(|| format!("{} declares no readings of `{parameter}`", reference.file))
}

/// Numbers of claims: (claim id, (ours, ours by the other averaging)).
pub type Found<'a> = Vec<(&'a str, (f64, f64))>;

/// What one reading measured: the parameter, the reading's name, and its
/// numbers for every claim of the statement.
pub type Measured<'a> = (&'a str, &'a str, Found<'a>);

/// One reading's claims, judged.
#[derive(Clone, Debug, Serialize)]
pub struct ReadingResult {
    pub parameter: String,
    pub reading: String,
    pub means: String,
    pub primary: bool,
    pub claims: Vec<ClaimResult>,
}

/// The claims' numbers with each open statement's primary reading's put
/// in, and every reading's claims judged by the claims' rules.
/// `found` holds the numbers of the claims no statement depends on.
pub fn resolve<'a>(
    reference: &Reference,
    found: &[(&'a str, (f64, f64))],
    measured: &[Measured<'a>],
) -> Result<(Found<'a>, Vec<ReadingResult>), String> {
    for (p, name, _) in measured {
        let known = reference.readings.iter().any(|s| s.parameter == *p && s.reading.iter().any(|r| r.name == *name));
        if !known {
            return Err(format!("the analysis measures reading `{name}` of `{p}`, which {} does not declare", reference.file));
        }
    }
    let mut all: Found<'a> = found.to_vec();
    for s in &reference.readings {
        for r in &s.reading {
            let m = numbers(reference, s, &r.name, measured)?;
            if r.name == s.primary {
                all.extend(m.iter().copied());
            }
        }
    }
    let mut results = Vec::new();
    for s in &reference.readings {
        for r in &s.reading {
            let m = numbers(reference, s, &r.name, measured)?;
            // The claims judged with this reading's numbers in place of
            // the primary's (evaluate needs a number for every claim).
            let mut with: Vec<(&str, (f64, f64))> = all.iter().filter(|(id, _)| !s.claims.iter().any(|c| c == id)).copied().collect();
            with.extend(m.iter().copied());
            let judged = reference.evaluate(&with)?;
            results.push(ReadingResult {
                parameter: s.parameter.clone(),
                reading: r.name.clone(),
                means: r.means.clone(),
                primary: r.name == s.primary,
                claims: judged.into_iter().filter(|c| s.claims.contains(&c.id)).collect(),
            });
        }
    }
    Ok((all, results))
}

/// Reading `name`'s numbers for every claim of `s`, each once.
fn numbers<'a>(reference: &Reference, s: &OpenStatement, name: &str, measured: &[Measured<'a>]) -> Result<Found<'a>, String> {
    let Some((_, _, m)) = measured.iter().find(|(p, n, _)| *p == s.parameter && *n == name) else {
        return Err(format!("reading `{name}` of `{}` ({}) has no numbers: the analysis does not measure it", s.parameter, reference.file));
    };
    for c in &s.claims {
        if m.iter().filter(|(id, _)| id == c).count() != 1 {
            return Err(format!("reading `{name}` of `{}` needs one number for claim `{c}`", s.parameter));
        }
    }
    if let Some((id, _)) = m.iter().find(|(id, _)| !s.claims.iter().any(|c| c == id)) {
        return Err(format!("reading `{name}` of `{}` measures claim `{id}`, which the statement does not list", s.parameter));
    }
    Ok(m.clone())
}

/// The report's section: each open statement, its primary reading with
/// the reason, and every reading's claims beside the paper's numbers.
pub fn markdown(reference: &Reference, results: &[ReadingResult]) -> String {
    if reference.readings.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n## Readings of what the paper leaves open\n\n");
    let _ = writeln!(
        s,
        "Each statement below admits more than one reading; every reading was run. The claims above are counted under the primary reading, declared with its reason in {} before the runs; the other readings' numbers are judged by the same rule and not counted.\n",
        reference.file
    );
    for st in &reference.readings {
        let _ = writeln!(s, "### `{}`: {}\n", st.parameter, st.statement);
        let _ = writeln!(s, "Primary reading: `{}`. {}\n", st.primary, st.reason);
        let _ = writeln!(
            s,
            "| reading | what it means | claim | paper | ours | ours (arith/pooled) | outcome |\n|---|---|---|---|---|---|---|"
        );
        for r in results.iter().filter(|r| r.parameter == st.parameter) {
            for c in &r.claims {
                let _ = writeln!(
                    s,
                    "| `{}`{} | {} | {} | {} | {} | {} | {} |",
                    r.reading,
                    if r.primary { " (primary)" } else { "" },
                    r.means,
                    c.id,
                    c.show_paper(),
                    c.show(c.ours),
                    c.show(c.ours_arithmetic),
                    c.outcome.label()
                );
            }
        }
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::claims::{Claim, Kind};

    fn claim(id: &str, paper: f64) -> Claim {
        Claim { id: id.into(), text: "t".into(), where_: "w".into(), paper, kind: Kind::Factor, bound: None, disagreement: None }
    }

    fn statement(primary: &str) -> OpenStatement {
        OpenStatement {
            parameter: "p".into(),
            statement: "s".into(),
            claims: vec!["a".into()],
            primary: primary.into(),
            reason: "why".into(),
            reading: vec![Reading { name: "x".into(), means: "m".into() }, Reading { name: "y".into(), means: "n".into() }],
        }
    }

    fn reference(readings: Vec<OpenStatement>) -> Reference {
        Reference { source: "s".into(), claim: vec![claim("a", 1.0), claim("b", 2.0)], readings, file: "ref.toml".into() }
    }

    #[test]
    fn the_primary_readings_numbers_are_the_claims_and_every_reading_is_judged() {
        let r = reference(vec![statement("y")]);
        check(&r).unwrap();
        let measured = vec![("p", "x", vec![("a", (1.05, 1.05))]), ("p", "y", vec![("a", (3.0, 3.0))])];
        let (found, results) = resolve(&r, &[("b", (2.0, 2.0))], &measured).unwrap();
        let judged = r.evaluate(&found).unwrap();
        assert_eq!(judged[0].ours, 3.0, "claim a takes the primary reading's number");
        assert!(!judged[0].reproduced && judged[1].reproduced);
        assert_eq!(results.len(), 2);
        let x = results.iter().find(|r| r.reading == "x").unwrap();
        assert!(!x.primary && x.claims.len() == 1 && x.claims[0].reproduced, "the other reading is judged, not counted");
        let md = markdown(&r, &results);
        assert!(md.contains("`y` (primary)") && md.contains("| `x` | m | a |"), "{md}");
    }

    #[test]
    fn a_reading_without_numbers_or_a_primary_that_is_no_reading_is_an_error() {
        let r = reference(vec![statement("y")]);
        let only_x = vec![("p", "x", vec![("a", (1.0, 1.0))])];
        assert!(resolve(&r, &[("b", (2.0, 2.0))], &only_x).unwrap_err().contains("`y`"));
        let unknown = vec![("p", "x", vec![("a", (1.0, 1.0))]), ("p", "y", vec![("a", (1.0, 1.0))]), ("p", "z", vec![])];
        assert!(resolve(&r, &[("b", (2.0, 2.0))], &unknown).unwrap_err().contains("does not declare"));
        let wrong_claim = vec![("p", "x", vec![("b", (1.0, 1.0))]), ("p", "y", vec![("a", (1.0, 1.0))])];
        assert!(resolve(&r, &[("b", (2.0, 2.0))], &wrong_claim).is_err());
        assert!(check(&reference(vec![statement("z")])).unwrap_err().contains("primary"));
        let mut no_reason = statement("x");
        no_reason.reason = " ".into();
        assert!(check(&reference(vec![no_reason])).unwrap_err().contains("reason"));
        let mut unknown_claim = statement("x");
        unknown_claim.claims = vec!["c".into()];
        assert!(check(&reference(vec![unknown_claim])).unwrap_err().contains("`c`"));
        assert!(check(&reference(vec![statement("x"), statement("y")])).unwrap_err().contains("twice"));
    }

    #[test]
    fn the_reference_files_readings_are_well_formed() {
        for paper in ["secon", "mset"] {
            let r = Reference::load(paper).unwrap();
            check(&r).unwrap();
            assert!(!r.readings.is_empty(), "{paper} declares its readings");
        }
    }
}
