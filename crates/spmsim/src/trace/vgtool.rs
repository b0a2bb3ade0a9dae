//! spmsim's own valgrind tool, `spmtrace` (`valgrind/spmtrace.c`),
//! compiled on first use against the valgrind installed on the machine.
//!
//! Lackey prints every access from a program's first instruction, at
//! about a million instructions a second, so a simulation point billions
//! of instructions into a run cannot be reached with it.
//! `spmtrace` counts instructions in inline code at valgrind's own speed
//! (measured: xz's 3.48 G instructions in 4.4 s) and prints lackey's
//! format only inside the windows it is given; it also writes SimPoint's
//! basic-block vectors in the same pass style.
//!
//! Valgrind tools are static executables linked against the core's
//! archives (`libcoregrind`, `libvex`) that valgrind's package ships
//! beside its headers. The compiled tool goes into a folder of the cache
//! together with links to everything in valgrind's own library folder,
//! and valgrind is started with `VALGRIND_LIB` pointing there.
//!
//! The installed valgrind's version ([`valgrind_version`]) keys the built
//! tool here and every recording the suite keeps, so it is asked here, on
//! the recording side, and the suite reads it from below.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The tool's C source, compiled as it is.
pub const SOURCE: &str = include_str!("../../valgrind/spmtrace.c");

/// Where valgrind keeps its tools and the core's preload library.
const LIB_DIRS: [&str; 5] = [
    "/usr/libexec/valgrind",
    "/usr/lib/x86_64-linux-gnu/valgrind",
    "/usr/lib/valgrind",
    "/usr/local/libexec/valgrind",
    "/usr/local/lib/valgrind",
];
/// Where the core's static archives may be.
const ARCHIVE_DIRS: [&str; 4] =
    ["/usr/lib/x86_64-linux-gnu/valgrind", "/usr/lib/valgrind", "/usr/local/lib/valgrind", "/usr/libexec/valgrind"];
const INCLUDE_DIRS: [&str; 2] = ["/usr/include/valgrind", "/usr/local/include/valgrind"];

/// A built tool, ready to run.
#[derive(Clone, Debug)]
pub struct Tool {
    /// The folder to give valgrind as `VALGRIND_LIB`.
    pub lib_dir: PathBuf,
}

impl Tool {
    /// `valgrind --tool=spmtrace` with the tool's folder set.
    pub fn command(&self) -> Command {
        let mut c = Command::new("valgrind");
        c.env("VALGRIND_LIB", &self.lib_dir).arg("--tool=spmtrace");
        c
    }

    /// The same tool reached through a link at `link` (whatever was there
    /// is replaced): valgrind hands its folder's path on to the program
    /// (`VALGRIND_LIB`, and `LD_PRELOAD` naming its preload library), so a
    /// recording that must not depend on the cache's path runs it through
    /// a link at a fixed path.
    pub fn linked_at(&self, link: &Path) -> Result<Tool, String> {
        match std::fs::remove_file(link) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("spmtrace: cannot replace {}: {e}", link.display())),
        }
        let target = self.lib_dir.canonicalize().map_err(|e| format!("spmtrace: {}: {e}", self.lib_dir.display()))?;
        std::os::unix::fs::symlink(&target, link)
            .map_err(|e| format!("spmtrace: linking {} to {}: {e}", link.display(), target.display()))?;
        Ok(Tool { lib_dir: link.to_path_buf() })
    }
}

/// A short digest of the tool's source, which keys what it records (a
/// change to what it prints records the traces again).
pub fn source_digest() -> String {
    Sha256::digest(SOURCE.as_bytes()).iter().take(6).map(|b| format!("{b:02x}")).collect()
}

/// `valgrind --version`, e.g. `valgrind-3.19.0`.
pub fn valgrind_version() -> Result<String, String> {
    let out = Command::new("valgrind").arg("--version").stdin(Stdio::null()).output().map_err(|e| format!("cannot run valgrind: {e}"))?;
    let v = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !v.is_empty() {
        Ok(v)
    } else {
        Err(format!("valgrind --version failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
    }
}

fn first_with(dirs: &[&str], file: &str) -> Option<PathBuf> {
    dirs.iter().map(PathBuf::from).find(|d| d.join(file).is_file())
}

fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let out = cmd.stdin(Stdio::null()).output().map_err(|e| format!("building spmtrace: cannot run {what}: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("building spmtrace: {what} failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// Build the tool if the cache does not hold it for this source and this
/// valgrind yet; `Err` says what is missing (a C compiler, valgrind's
/// headers or archives, a platform other than amd64 Linux).
pub fn ensure(cache: &Path) -> Result<Tool, String> {
    if !cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        return Err("spmtrace (recording at simulation points) is built for amd64 Linux only".into());
    }
    let version = valgrind_version()?;
    let lib = std::env::var_os("SPMSIM_VALGRIND_LIB")
        .map(PathBuf::from)
        .or_else(|| first_with(&LIB_DIRS, "vgpreload_core-amd64-linux.so"))
        .ok_or_else(|| {
            format!("building spmtrace: no valgrind library folder (with vgpreload_core-amd64-linux.so) in {}", LIB_DIRS.join(", "))
        })?;
    let archives = first_with(&ARCHIVE_DIRS, "libcoregrind-amd64-linux.a")
        .ok_or_else(|| format!("building spmtrace: valgrind's libcoregrind-amd64-linux.a is in none of {}", ARCHIVE_DIRS.join(", ")))?;
    let include = first_with(&INCLUDE_DIRS, "pub_tool_basics.h").ok_or_else(|| {
        format!("building spmtrace: valgrind's tool headers (pub_tool_basics.h) are in none of {}", INCLUDE_DIRS.join(", "))
    })?;
    let mut h = Sha256::new();
    for part in [SOURCE, &version, &lib.display().to_string(), &archives.display().to_string()] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    let key: String = h.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    let dir = cache.join("valgrind-tool").join(&key);
    let tool = Tool { lib_dir: dir.clone() };
    if dir.join("spmtrace-amd64-linux").is_file() {
        return Ok(tool);
    }
    // Built in a folder of its own and renamed into place, so a tool
    // folder is complete or absent, whoever else builds at the same time.
    let tmp = cache
        .join("valgrind-tool")
        .join(format!(".{key}.{}.{:?}", std::process::id(), std::thread::current().id()).replace(['(', ')'], ""));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).map_err(|e| format!("building spmtrace: {}: {e}", tmp.display()))?;
    let built = build_into(&tmp, &lib, &archives, &include);
    if let Err(e) = built {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(e);
    }
    if std::fs::rename(&tmp, &dir).is_err() {
        // Another build finished first; its folder is as good as this one.
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if dir.join("spmtrace-amd64-linux").is_file() {
        Ok(tool)
    } else {
        Err(format!("building spmtrace: {} has no tool after the build", dir.display()))
    }
}

fn build_into(tmp: &Path, lib: &Path, archives: &Path, include: &Path) -> Result<(), String> {
    let src = tmp.join("spmtrace.c");
    std::fs::write(&src, SOURCE).map_err(|e| format!("building spmtrace: {}: {e}", src.display()))?;
    let obj = tmp.join("spmtrace.o");
    // The flags valgrind's own build gives an amd64 Linux tool.
    run(
        Command::new("cc")
            .args([
                "-c",
                "-O2",
                "-m64",
                "-Wall",
                "-fno-strict-aliasing",
                "-fno-builtin",
                "-fno-stack-protector",
                "-fno-pie",
                "-fomit-frame-pointer",
            ])
            .args(["-DVGA_amd64=1", "-DVGO_linux=1", "-DVGP_amd64_linux=1", "-DVGPV_amd64_linux_vanilla=1"])
            .arg(format!("-I{}", include.display()))
            .arg("-o")
            .arg(&obj)
            .arg(&src),
        "cc (compiling spmtrace.c)",
    )?;
    // A static executable at the load address valgrind expects of a tool.
    run(
        Command::new("cc")
            .args([
                "-m64",
                "-static",
                "-nodefaultlibs",
                "-nostartfiles",
                "-u",
                "_start",
                "-Wl,--build-id=none",
                "-Wl,-Ttext-segment=0x58000000",
            ])
            .arg("-o")
            .arg(tmp.join("spmtrace-amd64-linux"))
            .arg(&obj)
            .arg(archives.join("libcoregrind-amd64-linux.a"))
            .arg(archives.join("libvex-amd64-linux.a"))
            .arg("-lgcc")
            .arg(archives.join("libgcc-sup-amd64-linux.a")),
        "cc (linking spmtrace)",
    )?;
    std::fs::remove_file(&obj).ok();
    std::fs::remove_file(&src).ok();
    for e in std::fs::read_dir(lib).map_err(|e| format!("building spmtrace: {}: {e}", lib.display()))? {
        let e = e.map_err(|e| format!("building spmtrace: {}: {e}", lib.display()))?;
        let name = e.file_name();
        if name.to_string_lossy().starts_with("spmtrace-") {
            continue;
        }
        std::os::unix::fs::symlink(e.path(), tmp.join(&name))
            .map_err(|err| format!("building spmtrace: linking {}: {err}", e.path().display()))?;
    }
    Ok(())
}
