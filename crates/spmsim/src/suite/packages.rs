//! Debian packages: which are installed at which version, installing the
//! missing ones, and which package a binary comes from.

use std::collections::BTreeMap;
use std::process::{Command, Stdio};

/// The installed version of `pkg`, or `None` if it is not installed.
pub fn installed_version(pkg: &str) -> Result<Option<String>, String> {
    let out = Command::new("dpkg-query").args(["-W", "-f=${Status}\t${Version}", pkg]).stdin(Stdio::null()).output().map_err(|e| {
        format!("cannot run dpkg-query ({e}): the suite installs its programs from Debian's packages, so it needs Debian or a derivative")
    })?;
    if !out.status.success() {
        return Ok(None);
    }
    let s = String::from_utf8_lossy(&out.stdout);
    match s.split_once('\t') {
        Some((status, version)) if status.ends_with(" installed") && !version.is_empty() => Ok(Some(version.to_string())),
        _ => Ok(None),
    }
}

/// The package that installed `path` (tried with symbolic links resolved
/// first, so `/usr/bin/python3` names the interpreter's own package), with
/// its version.
pub fn owner(path: &str) -> Option<(String, String)> {
    let real = std::fs::canonicalize(path).ok().map(|p| p.display().to_string()).filter(|r| r != path);
    real.and_then(|r| owner_of(&r)).or_else(|| owner_of(path))
}

fn owner_of(path: &str) -> Option<(String, String)> {
    let out = Command::new("dpkg-query").args(["-S", path]).stdin(Stdio::null()).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    // `pkg[:arch]: /path`, with diversion lines first when there are any.
    let line = text.lines().find(|l| !l.starts_with("diversion by") && l.contains(": "))?;
    let pkg = line.split(": ").next()?.split(',').next()?.trim();
    let name = pkg.split(':').next()?.to_string();
    let version = installed_version(pkg).ok().flatten().or_else(|| installed_version(&name).ok().flatten())?;
    Some((name, version))
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn apt(args: &[&str]) -> Result<(), String> {
    // Another apt or dpkg at work (an unattended upgrade, a second install)
    // holds the dpkg lock: wait for it rather than fail the program.
    let out = Command::new("apt-get")
        .args(["-o", "DPkg::Lock::Timeout=600"])
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run apt-get: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        Err(tail(&text, 6))
    }
}

fn install(pkgs: &[String]) -> Result<(), String> {
    let mut args = vec!["install", "-y", "--no-install-recommends"];
    args.extend(pkgs.iter().map(String::as_str));
    apt(&args)
}

/// A failure that fresher package lists may cure.
fn lacks_lists(msg: &str) -> bool {
    ["Unable to locate package", "has no installation candidate", "Failed to fetch", "404", "not found"].iter().any(|s| msg.contains(s))
}

/// Make sure every package in `pkgs` is installed: install the missing
/// ones with `apt-get install -y --no-install-recommends` (running
/// `apt-get update` first only if the install fails for lack of package
/// lists). `note` hears what is being done. Returns each package's version
/// or the reason it is missing.
pub fn ensure(pkgs: &[String], note: &dyn Fn(&str)) -> BTreeMap<String, Result<String, String>> {
    let mut got: BTreeMap<String, Result<String, String>> = BTreeMap::new();
    let mut missing = Vec::new();
    for p in pkgs {
        if got.contains_key(p) || missing.contains(p) {
            continue;
        }
        match installed_version(p) {
            Ok(Some(v)) => {
                got.insert(p.clone(), Ok(v));
            }
            Ok(None) => missing.push(p.clone()),
            Err(e) => {
                got.insert(p.clone(), Err(e));
            }
        }
    }
    if missing.is_empty() {
        return got;
    }
    note(&format!("installing {} missing Debian package(s): {}", missing.len(), missing.join(" ")));
    let mut result = install(&missing);
    if let Err(e) = &result {
        if lacks_lists(e) {
            note("the install failed for lack of package lists; running apt-get update");
            result = apt(&["update"]).and_then(|_| install(&missing));
        }
    }
    let whole_failed = result.as_ref().err().cloned();
    if whole_failed.is_some() && missing.len() > 1 {
        // Find out which packages cannot be had: install them one at a time.
        for p in &missing {
            if let Err(e) = install(std::slice::from_ref(p)) {
                got.insert(p.clone(), Err(format!("apt-get install {p} failed:\n{e}")));
            }
        }
    }
    for p in missing {
        if got.contains_key(&p) {
            continue;
        }
        let v = match installed_version(&p) {
            Ok(Some(v)) => Ok(v),
            Ok(None) => Err(match &whole_failed {
                Some(e) => format!("apt-get install {p} failed:\n{e}"),
                None => format!("{p} is still not installed after apt-get install"),
            }),
            Err(e) => Err(e),
        };
        got.insert(p, v);
    }
    got
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_unknown_package_is_not_installed() {
        // The suite is Debian's packages: its tests run on Debian.
        assert!(super::installed_version("dpkg").expect("dpkg-query is needed").is_some());
        assert_eq!(super::installed_version("spmsim-no-such-package").unwrap(), None);
        let (pkg, v) = super::owner("/usr/bin/dpkg").unwrap();
        assert_eq!(pkg, "dpkg");
        assert!(!v.is_empty());
    }
}
