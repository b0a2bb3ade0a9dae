//! `configs/suite/programs.toml`: the suite's programs and their inputs.
//!
//! ```text
//!  [env]                      fixed environment of every recorded program
//!  tools = ["valgrind"]       packages every recording needs
//!  [[input]]   name, kind, seed, size | file | command (derived)
//!  [[program]] name, packages, description, command, stdin, skip
//! ```
//! A command is a list of words. `{input:NAME}` stands for the path of an
//! input, `{input-stem:NAME}` for that path without its extension (a
//! program that takes a job name and adds the extension itself, as
//! CalculiX's `ccx -i JOB` reads `JOB.inp` and writes `JOB.dat` beside it),
//! `{work}` for the program's scratch folder (also its working
//! directory), `{executable}` for the path printed by `executable_from`, and
//! in a derived input's command `{out}` for the file to make.

use super::inputs;
use serde::Deserialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// Environment variables set for every recorded program.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Packages every recording needs (valgrind).
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default, rename = "input")]
    pub inputs: Vec<InputSpec>,
    #[serde(default, rename = "program")]
    pub programs: Vec<ProgramSpec>,
}

#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct InputSpec {
    pub name: String,
    /// A generator (see [`inputs`]), `file` (copied from `configs/suite/`)
    /// or `derived` (made by `command` from other inputs).
    pub kind: String,
    #[serde(default = "one", skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Search depth (`xboard` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    /// Path relative to `configs/suite/` (`file` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The command that writes `{out}` (`derived` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Packages the command of a derived input needs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// Lines of a derived input's file that start with one of these are
    /// dropped (a build date would make every build differ).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop_lines: Vec<String>,
    /// File extension of the input (default by kind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extension: Option<String>,
    /// The derived file is a program (a compiler built it): it is made
    /// executable, and a program's command may start with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub executable: bool,
}

fn one() -> Option<u64> {
    Some(1)
}

#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct ProgramSpec {
    pub name: String,
    /// Debian packages to install; the first one is the program's own.
    pub packages: Vec<String>,
    pub description: String,
    /// The traced program and its arguments.
    pub command: Vec<String>,
    /// A command that prints the path of the program to trace (when a
    /// driver would fork it, as gcc forks cc1); `command` then starts with
    /// `{executable}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executable_from: Option<Vec<String>>,
    /// File fed to the program's standard input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Instructions run before recording starts (start-up, not the work).
    pub skip: u64,
    /// Record the window after `skip` with spmsim's own valgrind tool,
    /// which runs at valgrind's own speed up to it, as at simulation
    /// points (the default), rather than with lackey, which
    /// prints and parses every skipped instruction (`false`: 40 times
    /// slower through a long start-up, measured on sjeng's 165 M; and a
    /// program whose threads wait on the clock, as POV-Ray's front end
    /// waits a few seconds for its workers, overruns its timeout). The
    /// window then starts at the first block boundary after `skip` (a few
    /// instructions later).
    #[serde(default = "fast_forward_by_default")]
    pub fast_forward: bool,
}

fn fast_forward_by_default() -> bool {
    true
}

/// A loaded, checked suite.
#[derive(Clone, Debug)]
pub struct Suite {
    pub path: PathBuf,
    /// The folder `file` inputs are relative to.
    pub dir: PathBuf,
    pub env: BTreeMap<String, String>,
    pub tools: Vec<String>,
    pub inputs: Vec<InputSpec>,
    pub programs: Vec<ProgramSpec>,
}

/// `configs/suite/programs.toml` in the configs folder.
pub fn default_path() -> PathBuf {
    crate::config::presets_dir().join("suite").join("programs.toml")
}

/// SPEC CPU2006's upstream programs (`configs/suite/spec-upstream.toml`):
/// the programs SecPB V-A ran, as Debian packages them, and SecPB's
/// reproduction's default suite.
pub fn spec_upstream_path() -> PathBuf {
    default_path().with_file_name("spec-upstream.toml")
}

/// Placeholders in `word`: `(name, argument)` pairs such as `("input", "text")`.
pub fn placeholders(word: &str) -> Result<Vec<(String, String)>, String> {
    let mut v = Vec::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| format!("`{word}`: `{{` without a closing `}}`"))?;
        let inner = &after[..close];
        let (name, arg) = inner.split_once(':').unwrap_or((inner, ""));
        v.push((name.to_string(), arg.to_string()));
        rest = &after[close + 1..];
    }
    if rest.contains('}') {
        return Err(format!("`{word}`: `}}` without an opening `{{`"));
    }
    Ok(v)
}

/// Replace the placeholders of `word` with `lookup(name, argument)`.
pub fn expand(word: &str, lookup: &dyn Fn(&str, &str) -> Result<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = word;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let close = after.find('}').ok_or_else(|| format!("`{word}`: `{{` without a closing `}}`"))?;
        let inner = &after[..close];
        let (name, arg) = inner.split_once(':').unwrap_or((inner, ""));
        out.push_str(&lookup(name, arg)?);
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 40
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && s.as_bytes()[0].is_ascii_alphanumeric()
}

/// Debian package names: lower case letters, digits, `+ - .`, two or more characters.
fn valid_package(s: &str) -> bool {
    s.len() >= 2
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"+-.".contains(&b))
        && s.as_bytes()[0].is_ascii_alphanumeric()
}

impl Suite {
    pub fn load(path: &Path) -> Result<Suite, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Self::parse(&text, path)
    }

    pub fn load_default() -> Result<Suite, String> {
        Self::load(&default_path())
    }

    /// Parse and check the text of a programs file; errors name the file,
    /// the line and the key.
    pub fn parse(text: &str, path: &Path) -> Result<Suite, String> {
        let f: SuiteFile = toml::from_str(text).map_err(|e| format!("{}: {}", path.display(), e.to_string().trim_end()))?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let s = Suite { path: path.to_path_buf(), dir, env: f.env, tools: f.tools, inputs: f.inputs, programs: f.programs };
        s.check(text)?;
        Ok(s)
    }

    /// The 1-based line of `[[section]]` entry `name` in the file text.
    fn line_of(text: &str, name: &str) -> Option<usize> {
        let want = format!("\"{name}\"");
        text.lines()
            .position(|l| {
                let t = l.trim_start();
                t.starts_with("name") && t.split_once('=').is_some_and(|(k, v)| k.trim() == "name" && v.trim().starts_with(&want))
            })
            .map(|i| i + 1)
    }

    fn check(&self, text: &str) -> Result<(), String> {
        for k in self.env.keys() {
            if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                return Err(format!("{}: [env]: `{k}` is not a variable name", self.path.display()));
            }
        }
        for t in &self.tools {
            if !valid_package(t) {
                return Err(format!("{}: tools: `{t}` is not a Debian package name", self.path.display()));
            }
        }
        let known = self.check_inputs(text)?;
        self.check_programs(text, &known)?;
        if self.programs.is_empty() {
            return Err(format!("{}: no [[program]] entries", self.path.display()));
        }
        Ok(())
    }

    /// An error of entry `name` (an input or a program) at its line of the
    /// suite file `text`.
    fn error_at(&self, text: &str, what: &str, name: &str, key: &str, msg: String) -> String {
        let line = Self::line_of(text, name).map(|l| format!(":{l}")).unwrap_or_default();
        format!("{}{line}: {what} `{name}`: {key}: {msg}", self.path.display())
    }

    /// Every `[[input]]` entry checked in order (a derived input may use
    /// only those above it); the names of all of them.
    fn check_inputs(&self, text: &str) -> Result<BTreeSet<&str>, String> {
        let at = |what: &str, name: &str, key: &str, msg: String| self.error_at(text, what, name, key, msg);
        let mut known: BTreeSet<&str> = BTreeSet::new();
        for i in &self.inputs {
            let err = |key: &str, msg: String| at("input", &i.name, key, msg);
            if !valid_name(&i.name) {
                return Err(err("name", "use lower-case letters, digits, `-` and `_` (at most 40)".into()));
            }
            if !known.insert(&i.name) {
                return Err(err("name", "defined twice".into()));
            }
            let generated = inputs::GENERATED.contains(&i.kind.as_str());
            if !i.drop_lines.is_empty() && i.kind != "derived" {
                return Err(err("drop_lines", "only derived inputs take drop_lines".into()));
            }
            if i.executable && (i.kind != "derived" || !i.drop_lines.is_empty()) {
                return Err(err("executable", "only a derived input without drop_lines can be a program".into()));
            }
            match i.kind.as_str() {
                _ if generated => {
                    let size = i.size.ok_or_else(|| err("size", format!("required for kind `{}`", i.kind)))?;
                    if size == 0 {
                        return Err(err("size", "must be at least 1".into()));
                    }
                    if i.file.is_some() || i.command.is_some() {
                        return Err(err("kind", format!("a `{}` input is generated: it takes seed and size, not file or command", i.kind)));
                    }
                    if i.depth.is_some() && i.kind != "xboard" {
                        return Err(err("depth", "only `xboard` inputs take a depth".into()));
                    }
                }
                "file" => {
                    let f = i.file.as_ref().ok_or_else(|| err("file", "required for kind `file`".into()))?;
                    if Path::new(f).is_absolute() || f.split('/').any(|c| c == "..") {
                        return Err(err("file", format!("`{f}` must be a path inside {}", self.dir.display())));
                    }
                    if !self.dir.join(f).is_file() {
                        return Err(err("file", format!("{} does not exist", self.dir.join(f).display())));
                    }
                }
                "derived" => {
                    let c = i.command.as_ref().ok_or_else(|| err("command", "required for kind `derived`".into()))?;
                    if c.is_empty() || !Path::new(&c[0]).is_absolute() {
                        return Err(err("command", "give the program as an absolute path".into()));
                    }
                    let mut outs = 0;
                    for w in c {
                        for (p, a) in placeholders(w).map_err(|m| err("command", m))? {
                            match p.as_str() {
                                "out" => outs += 1,
                                "input" if known.contains(a.as_str()) && a != i.name => {}
                                "input" => {
                                    return Err(err("command", format!("`{{input:{a}}}`: no input `{a}` is defined above this one")))
                                }
                                _ => {
                                    return Err(err(
                                        "command",
                                        format!("unknown placeholder `{{{p}}}` (a derived input knows {{out}} and {{input:NAME}})"),
                                    ))
                                }
                            }
                        }
                    }
                    if outs != 1 {
                        return Err(err("command", "must name the file to make exactly once, as {out}".into()));
                    }
                    if i.packages.is_empty() {
                        return Err(err("packages", "name the package of the command".into()));
                    }
                    if i.drop_lines.iter().any(|d| d.is_empty()) {
                        return Err(err("drop_lines", "an empty prefix would drop every line".into()));
                    }
                }
                k => return Err(err("kind", format!("unknown kind `{k}`; known kinds: {}, file, derived", inputs::GENERATED.join(", ")))),
            }
            for p in &i.packages {
                if !valid_package(p) {
                    return Err(err("packages", format!("`{p}` is not a Debian package name")));
                }
            }
            if let Some(e) = &i.extension {
                if e.is_empty() || !e.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    return Err(err("extension", format!("`{e}`: letters and digits only")));
                }
            }
        }
        Ok(known)
    }

    /// Every `[[program]]` entry checked against the inputs `known`.
    fn check_programs(&self, text: &str, known: &BTreeSet<&str>) -> Result<(), String> {
        let at = |what: &str, name: &str, key: &str, msg: String| self.error_at(text, what, name, key, msg);
        let mut names = BTreeSet::new();
        for p in &self.programs {
            let err = |key: &str, msg: String| at("program", &p.name, key, msg);
            if !valid_name(&p.name) {
                return Err(err("name", "use lower-case letters, digits, `-` and `_` (at most 40)".into()));
            }
            if !names.insert(&p.name) {
                return Err(err("name", "defined twice".into()));
            }
            if p.packages.is_empty() {
                return Err(err("packages", "name at least the program's own package".into()));
            }
            for k in &p.packages {
                if !valid_package(k) {
                    return Err(err("packages", format!("`{k}` is not a Debian package name")));
                }
            }
            if p.description.trim().is_empty() {
                return Err(err("description", "say in one line what the program does".into()));
            }
            if p.command.is_empty() {
                return Err(err("command", "empty".into()));
            }
            let check_words = |key: &str, words: &[String], executable: bool| -> Result<(), String> {
                for w in words {
                    for (ph, a) in placeholders(w).map_err(|m| err(key, m))? {
                        match ph.as_str() {
                            "input" | "input-stem" if known.contains(a.as_str()) => {}
                            "input" | "input-stem" => return Err(err(key, format!("`{{{ph}:{a}}}`: no input `{a}` is defined"))),
                            "work" if a.is_empty() => {}
                            "executable" if executable && a.is_empty() => {}
                            _ => {
                                return Err(err(
                                    key,
                                    format!("unknown placeholder `{{{ph}{}}}`", if a.is_empty() { String::new() } else { format!(":{a}") }),
                                ))
                            }
                        }
                    }
                }
                Ok(())
            };
            check_words("command", &p.command, true)?;
            match &p.executable_from {
                Some(e) => {
                    if p.command[0] != "{executable}" {
                        return Err(err("command", "with executable_from, the command starts with `{executable}`".into()));
                    }
                    if e.is_empty() || !Path::new(&e[0]).is_absolute() {
                        return Err(err("executable_from", "give the program as an absolute path".into()));
                    }
                    check_words("executable_from", e, false)?;
                }
                None if built_program(&p.command[0]).is_some() => {
                    let name = built_program(&p.command[0]).unwrap_or_default();
                    if !self.inputs.iter().any(|i| i.name == name && i.executable) {
                        return Err(err("command", format!("`{}`: no executable derived input `{name}` is defined", p.command[0])));
                    }
                }
                None => {
                    if !Path::new(&p.command[0]).is_absolute() {
                        return Err(err(
                            "command",
                            format!(
                                "`{}`: give the program as an absolute path (a PATH lookup could find a wrapper, not the package's binary)",
                                p.command[0]
                            ),
                        ));
                    }
                    if p.command.iter().any(|w| w.contains("{executable}")) {
                        return Err(err("command", "`{executable}` needs executable_from".into()));
                    }
                }
            }
            if let Some(s) = &p.stdin {
                check_words("stdin", std::slice::from_ref(s), false)?;
            }
        }
        Ok(())
    }

    pub fn program(&self, name: &str) -> Result<&ProgramSpec, String> {
        self.programs
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| format!("no program `{name}` in {}; programs: {}", self.path.display(), self.names().join(", ")))
    }

    pub fn input(&self, name: &str) -> Option<&InputSpec> {
        self.inputs.iter().find(|i| i.name == name)
    }

    pub fn names(&self) -> Vec<String> {
        self.programs.iter().map(|p| p.name.clone()).collect()
    }

    /// The inputs a program uses (in its command, stdin or executable
    /// command), with the inputs those are derived from, in file order.
    pub fn inputs_of(&self, p: &ProgramSpec) -> Vec<&InputSpec> {
        let mut want: BTreeSet<String> = BTreeSet::new();
        let words = p.command.iter().chain(p.stdin.iter()).chain(p.executable_from.iter().flatten());
        for w in words {
            for (ph, a) in placeholders(w).unwrap_or_default() {
                if ph == "input" || ph == "input-stem" {
                    want.insert(a);
                }
            }
        }
        // Inputs a derived input is made from come earlier in the file.
        for i in self.inputs.iter().rev() {
            if want.contains(&i.name) {
                for w in i.command.iter().flatten() {
                    for (ph, a) in placeholders(w).unwrap_or_default() {
                        if ph == "input" {
                            want.insert(a);
                        }
                    }
                }
            }
        }
        self.inputs.iter().filter(|i| want.contains(&i.name)).collect()
    }

    /// Every package a program needs: its own, and those of derived inputs.
    pub fn packages_of(&self, p: &ProgramSpec) -> Vec<String> {
        let mut v = p.packages.clone();
        for i in self.inputs_of(p) {
            for k in &i.packages {
                if !v.contains(k) {
                    v.push(k.clone());
                }
            }
        }
        v
    }
}

/// The input a command's first word names when it is exactly
/// `{input:NAME}` (a program the suite builds), else None.
pub fn built_program(word: &str) -> Option<&str> {
    word.strip_prefix("{input:")?.strip_suffix('}').filter(|n| !n.contains(['{', '}']))
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
tools = ["valgrind"]
[env]
LC_ALL = "C"

[[input]]
name = "corpus"
kind = "text"
size = 1000

[[input]]
name = "model"
kind = "derived"
command = ["/usr/bin/tool", "{out}", "{input:corpus}"]
packages = ["tool"]

[[program]]
name = "zip"
packages = ["bzip2"]
description = "compress"
command = ["/bin/bzip2", "-c", "{input:corpus}"]
skip = 10

[[program]]
name = "use-model"
packages = ["prog"]
description = "uses the model"
command = ["/bin/prog", "{input:model}", "{work}/out"]
stdin = "{input:corpus}"
skip = 0
"#;

    fn parse(t: &str) -> Result<Suite, String> {
        Suite::parse(t, Path::new("/nonexistent/programs.toml"))
    }

    #[test]
    fn a_good_file_loads_and_inputs_follow_derivations() {
        let s = parse(GOOD).unwrap();
        assert_eq!(s.names(), ["zip", "use-model"]);
        let p = s.program("use-model").unwrap();
        let ins: Vec<&str> = s.inputs_of(p).iter().map(|i| i.name.as_str()).collect();
        assert_eq!(ins, ["corpus", "model"]);
        assert_eq!(s.packages_of(p), ["prog", "tool"]);
        assert_eq!(s.input("corpus").unwrap().seed, Some(1), "seed defaults to 1");
    }

    #[test]
    fn mistakes_name_the_file_line_and_key() {
        let cases = [
            (GOOD.replace("skip = 10", "skip = 10\nspeed = 3"), "speed"),
            (GOOD.replace("skip = 10", "skip = \"ten\""), "skip"),
            (GOOD.replace("{input:corpus}\"]\nskip = 10", "{input:corpse}\"]\nskip = 10"), "corpse"),
            (GOOD.replace("\"/bin/bzip2\"", "\"bzip2\""), "absolute path"),
            (GOOD.replace("kind = \"text\"", "kind = \"texts\""), "texts"),
            (GOOD.replace("size = 1000", ""), "size"),
            (GOOD.replace("name = \"use-model\"", "name = \"zip\""), "defined twice"),
            (GOOD.replace("{work}/out", "{wrk}/out"), "{wrk}"),
            (GOOD.replace("packages = [\"bzip2\"]", "packages = []"), "packages"),
            (GOOD.replace("packages = [\"bzip2\"]", "packages = [\"Bzip 2\"]"), "Debian package name"),
        ];
        for (text, want) in cases {
            let e = parse(&text).unwrap_err();
            assert!(e.contains("programs.toml"), "{e}");
            assert!(e.contains(want), "wanted `{want}` in: {e}");
            assert!(e.contains("line") || e.contains(".toml:"), "a line number: {e}");
        }
        let e = parse(&GOOD.replace("{input:corpus}\"]\nskip = 10", "{input:corpse}\"]\nskip = 10")).unwrap_err();
        assert!(e.contains("program `zip`"), "{e}");
    }

    #[test]
    fn placeholders_expand() {
        let f = |n: &str, a: &str| -> Result<String, String> { Ok(format!("<{n}|{a}>")) };
        assert_eq!(expand("-o{work}/x.{input:y}", &f).unwrap(), "-o<work|>/x.<input|y>");
        assert!(expand("{oops", &f).is_err());
        assert_eq!(placeholders("a}b").unwrap_err(), "`a}b`: `}` without an opening `{`");
    }

    #[test]
    fn the_shipped_suite_loads_and_every_entry_is_valid() {
        let s = Suite::load_default().unwrap();
        assert!(s.programs.len() >= 12, "the issue asks for at least 12 programs");
        for p in &s.programs {
            for i in s.inputs_of(p) {
                if inputs::GENERATED.contains(&i.kind.as_str()) {
                    assert!(i.size.unwrap() > 0);
                }
            }
            assert!(!s.inputs_of(p).is_empty() || p.stdin.is_none(), "{}", p.name);
        }
        assert!(s.tools.iter().any(|t| t == "valgrind"));
        let m = Suite::load(&default_path().with_file_name("memory-intensive.toml")).unwrap();
        assert_eq!(m.names(), ["lbm", "mcf", "libquantum"]);
        for p in &m.programs {
            let built = built_program(&p.command[0]).unwrap();
            assert!(m.input(built).unwrap().executable, "{}", p.name);
        }
    }

    /// Every suite file records into one cache folder, by name: a program
    /// name belongs to one file, and an input two files share is the same
    /// input (or one file's would overwrite the other's).
    #[test]
    fn the_suite_files_share_the_cache_without_clashing() {
        let dir = default_path().parent().unwrap().to_path_buf();
        let mut files: Vec<_> =
            std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect();
        files.sort();
        assert!(files.iter().any(|f| f.ends_with("spec-upstream.toml")), "{files:?}");
        let mut programs = std::collections::BTreeMap::new();
        let mut inputs: std::collections::BTreeMap<String, (InputSpec, std::path::PathBuf)> = Default::default();
        for f in &files {
            let s = Suite::load(f).unwrap_or_else(|e| panic!("{e}"));
            for p in &s.programs {
                if let Some(other) = programs.insert(p.name.clone(), f.clone()) {
                    panic!("program `{}` is in {} and {}", p.name, other.display(), f.display());
                }
            }
            for i in &s.inputs {
                if let Some((other, at)) = inputs.get(&i.name) {
                    assert_eq!(other, i, "input `{}` differs between {} and {}", i.name, at.display(), f.display());
                } else {
                    inputs.insert(i.name.clone(), (i.clone(), f.clone()));
                }
            }
        }
        let upstream = Suite::load(&dir.join("spec-upstream.toml")).unwrap();
        assert!(
            upstream.names().iter().all(|n| n.as_bytes()[..3].iter().all(u8::is_ascii_digit)),
            "named after SPEC's benchmarks: {:?}",
            upstream.names()
        );
    }

    #[test]
    fn a_program_the_suite_builds_is_an_executable_derived_input() {
        let built = GOOD
            .replace("packages = [\"tool\"]", "packages = [\"tool\"]\nexecutable = true")
            .replace("command = [\"/bin/prog\", \"{input:model}\"", "command = [\"{input:model}\"");
        let s = parse(&built).unwrap();
        assert_eq!(built_program(&s.program("use-model").unwrap().command[0]), Some("model"));
        assert_eq!(built_program("{input:model}x"), None);
        // Not marked executable, or not derived: an error naming the key.
        let e = parse(&GOOD.replace("command = [\"/bin/prog\", \"{input:model}\"", "command = [\"{input:model}\"")).unwrap_err();
        assert!(e.contains("command") && e.contains("no executable derived input `model`"), "{e}");
        let e = parse(&GOOD.replace("size = 1000", "size = 1000\nexecutable = true")).unwrap_err();
        assert!(e.contains("executable") && e.contains("corpus"), "{e}");
    }
}
