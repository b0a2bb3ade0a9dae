//! The typed signatures of what `spmsim._native` exports, as one table, and
//! the `.pyi` stub written from it.
//!
//! ```text
//!  SIGNATURES --stub_text()--> python/spmsim/_native.pyi   (test: committed file == generated)
//!      |                                 |
//!      +-- module init: every name is ---+-- pytest: every __text_signature__
//!          registered                        matches the stub's parameters
//! ```
//! PyO3 knows each function's parameter names and defaults but not the
//! Python types of its arguments, so the types live here, beside the
//! functions they describe; the two checks above keep the table, the
//! registered functions and the committed stub from drifting apart.

/// One parameter: name, Python type, default as Python source.
pub struct Param {
    pub name: &'static str,
    pub ty: &'static str,
    pub default: Option<&'static str>,
}

/// One exported function.
pub struct Function {
    pub name: &'static str,
    pub params: &'static [Param],
    pub returns: &'static str,
    pub doc: &'static str,
}

/// One exported constant.
pub struct Constant {
    pub name: &'static str,
    pub ty: &'static str,
    pub doc: &'static str,
}

const fn p(name: &'static str, ty: &'static str) -> Param {
    Param { name, ty, default: None }
}

const fn opt(name: &'static str, ty: &'static str, default: &'static str) -> Param {
    Param { name, ty, default: Some(default) }
}

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "run",
        params: &[
            p("scheme", "str"),
            p("workload", "str"),
            p("instructions", "int | None"),
            p("seed", "int"),
            p("overrides", "list[str]"),
            opt("baseline", "str | None", "None"),
            opt("warmup_instructions", "int", "0"),
        ],
        returns: "tuple[str, str]",
        doc: "One timed run, as `spmsim run --json` does it, without the GIL; Ctrl-C stops it\n\
              (KeyboardInterrupt). Returns the statistics document as the CLI prints it and the\n\
              resolved configuration as TOML. Bad input raises ValueError with the CLI's message;\n\
              a failed simulation raises RuntimeError. `instructions` None runs the default count;\n\
              `warmup_instructions` run first, outside the statistics.",
    },
    Function {
        name: "config_toml",
        params: &[p("scheme", "str"), p("overrides", "list[str]")],
        returns: "str",
        doc: "The resolved configuration of a preset (name or TOML path) under `key.path=value`\n\
              overrides, as TOML; ValueError on a bad preset, key or value.",
    },
    Function { name: "schemes", params: &[], returns: "list[str]", doc: "The preset names, sorted." },
    Function { name: "presets_dir", params: &[], returns: "str", doc: "The folder the presets are read from (`$SPMSIM_CONFIGS` if set)." },
    Function {
        name: "cli_main",
        params: &[p("argv", "list[str]")],
        returns: "int",
        doc: "Run the `spmsim` command line (program name first) in this process, as the binary\n\
              does, and return its exit code. `sweep` and `report` are handed to\n\
              `python3 -m spmsim`.",
    },
];

pub const CONSTANTS: &[Constant] = &[
    Constant { name: "__version__", ty: "str", doc: "The version of the spmsim crates." },
    Constant { name: "DEFAULT_INSTRUCTIONS", ty: "int", doc: "Instructions of a run when none are given." },
];

/// Where the committed stub lives, from the repository root.
pub const STUB_PATH: &str = "python/spmsim/_native.pyi";

/// The command that rewrites the committed stub from this table.
pub const REGENERATE: &str = "SPMSIM_BLESS_STUBS=1 cargo test --release -p spmsim-py stub";

impl Function {
    /// The parameters as `__text_signature__` shows them: names and
    /// defaults, no types.
    pub fn text_signature(&self) -> String {
        let ps: Vec<String> = self
            .params
            .iter()
            .map(|p| match p.default {
                Some(d) => format!("{}={d}", p.name),
                None => p.name.to_string(),
            })
            .collect();
        format!("({})", ps.join(", "))
    }

    fn typed_signature(&self) -> String {
        let ps: Vec<String> = self
            .params
            .iter()
            .map(|p| match p.default {
                Some(d) => format!("{}: {} = {d}", p.name, p.ty),
                None => format!("{}: {}", p.name, p.ty),
            })
            .collect();
        format!("def {}({}) -> {}:", self.name, ps.join(", "), self.returns)
    }
}

fn docstring(doc: &str, indent: &str) -> String {
    let lines: Vec<&str> = doc.lines().map(str::trim).collect();
    if lines.len() == 1 {
        return format!("{indent}\"\"\"{}\"\"\"\n", lines[0]);
    }
    let mut s = format!("{indent}\"\"\"{}\n", lines[0]);
    for l in &lines[1..] {
        s.push_str(&format!("{indent}{l}\n"));
    }
    s.push_str(&format!("{indent}\"\"\"\n"));
    s
}

/// The text of `python/spmsim/_native.pyi`.
pub fn stub_text() -> String {
    let mut s = String::new();
    s.push_str(&format!("# Generated from crates/spmsim-py/src/stubs.rs; do not edit.\n# Regenerate: {REGENERATE}\n"));
    s.push_str("\"\"\"The Rust core of spmsim (PyO3); use it through the `spmsim` package.\"\"\"\n\n");
    for c in CONSTANTS {
        s.push_str(&format!("{}: {}\n", c.name, c.ty));
        s.push_str(&docstring(c.doc, ""));
    }
    for f in FUNCTIONS {
        s.push_str(&format!("\n{}\n", f.typed_signature()));
        s.push_str(&docstring(f.doc, "    "));
    }
    s
}
