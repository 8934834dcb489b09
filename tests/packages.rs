//! The prebuilt packages `scripts/dist.py` makes (`.ci/run` runs it), as
//! users install them: `npx -y windlass-mcp` from a registry, with only
//! this machine's platform package fetched beside the launcher; the wheel
//! by `uvx` and by pip into a virtual environment. Each installed
//! `windlass` serves an MCP session through a daemon it starts itself.
//! And the glibc the binaries need, read from their ELF version needs:
//! no newer than the 2.31 the README promises.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::registry::Registry;
use common::*;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The oldest glibc the Linux binaries start on (Debian 11, Ubuntu 20.04).
const GLIBC_FLOOR: (u32, u32) = (2, 31);
const NAME: &str = "windlass-mcp";
const PLATFORM: &str = "windlass-mcp-linux-x64-gnu";

/// `target/dist` as `scripts/dist.py` leaves it, or why there is none.
fn dist() -> Option<PathBuf> {
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/dist");
    let made = ["bin/windlass", "npm", "wheel"]
        .iter()
        .all(|part| dist.join(part).exists());
    if !made {
        skip("target/dist is missing: `python3 scripts/dist.py` makes it (.ci/run does)");
        return None;
    }
    Some(dist)
}

fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

fn succeeded(what: &str, output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{what} failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// A session through `program`, in a daemon world of its own, asked a
/// hover that mockls answers: the installed binary serves.
fn serves(program: &Path) {
    let dir = project(&[("main.py", "def greet():\n    pass\n\ngreet()\n")]);
    let daemon = Daemon::new();
    let mut args = root_arg(dir.path());
    args.extend(["--lsp".into(), mockls_lsp("python", "")]);
    let session = Session::start_as(
        &args,
        &Client {
            daemon: Some(&daemon),
            program: Some(program),
            ..Client::default()
        },
    );
    let hover = session.ok(
        "hover",
        json!({"file": "main.py", "line": 4, "symbol": "greet"}),
    );
    assert!(hover.contains("greet"), "{hover}");
    let status = session.ok("status", json!({}));
    assert!(status.contains("daemon pid"), "{status}");
}

#[test]
fn the_binaries_start_on_glibc_2_31() {
    let Some(dist) = dist() else {
        return;
    };
    for binary in ["windlass", "windlass-bridge"] {
        let bytes = std::fs::read(dist.join("bin").join(binary)).unwrap();
        let needed = version_needs(&bytes).expect("an ELF64 binary with version needs");
        let glibc: Vec<(u32, u32)> = needed
            .iter()
            .filter_map(|name| glibc_version(name))
            .collect();
        assert!(
            !glibc.is_empty(),
            "{binary} needs no glibc version: {needed:?}"
        );
        let newest = glibc.iter().max().unwrap();
        assert!(
            *newest <= GLIBC_FLOOR,
            "{binary} needs glibc {}.{}: {needed:?}",
            newest.0,
            newest.1
        );
        // Packed relocations need a loader of 2.36 or later.
        assert!(
            !needed.iter().any(|name| name == "GLIBC_ABI_DT_RELR"),
            "{binary}: {needed:?}"
        );
    }
    let printed = succeeded(
        "windlass --version",
        &Command::new(dist.join("bin/windlass"))
            .arg("--version")
            .output()
            .unwrap(),
    );
    assert_eq!(printed.trim(), format!("windlass {}", version()));
}

#[test]
fn npx_runs_the_package_from_a_registry_fetching_only_this_platforms_binaries() {
    let Some(dist) = dist() else {
        return;
    };
    if !have("npx") {
        return skip("npx is not on PATH");
    }
    let registry = Registry::serve(&dist.join("npm"), version());
    let home = tempfile::tempdir().unwrap();
    let npx = |arguments: &[&str]| {
        Command::new("npx")
            .args(["--yes", "--registry", &registry.url, "--cache"])
            .arg(home.path().join("npm-cache"))
            .args(arguments)
            .env("HOME", home.path())
            .env("npm_config_update_notifier", "false")
            .env_remove("npm_config_prefix")
            .output()
            .unwrap()
    };
    let printed = succeeded("npx windlass-mcp --version", &npx(&[NAME, "--version"]));
    assert_eq!(printed.trim(), format!("windlass {}", version()));
    let fetched = registry.tarballs_fetched();
    let ours = [
        format!("{NAME}-{}.tgz", version()),
        format!("{PLATFORM}-{}.tgz", version()),
    ];
    assert!(
        ours.iter().all(|file| fetched.contains(file)),
        "{fetched:?}"
    );
    assert_eq!(
        fetched.len(),
        2,
        "other platforms' binaries fetched: {fetched:?}"
    );
    // Where npx put it, the launcher finds its platform package beside it.
    let installed = find_file(&home.path().join("npm-cache/_npx"), "windlass-mcp")
        .expect("npx installed the launcher");
    serves(&installed);
}

/// `npm install FLAGS windlass-mcp` from a loopback registry serving
/// what `dist` packed, into a prefix of its own, which it returns.
fn npm_install(dist: &Path, flags: &[&str]) -> tempfile::TempDir {
    let registry = Registry::serve(&dist.join("npm"), version());
    let prefix = tempfile::tempdir().unwrap();
    let output = Command::new("npm")
        .args(["install", "--no-audit", "--no-fund"])
        .args(flags)
        .args(["--registry", &registry.url, "--prefix"])
        .arg(prefix.path())
        .arg("--cache")
        .arg(prefix.path().join("npm-cache"))
        .arg(NAME)
        .output()
        .unwrap();
    succeeded(&format!("npm install {} {NAME}", flags.join(" ")), &output);
    prefix
}

#[test]
fn npm_install_g_puts_windlass_on_the_path() {
    let Some(dist) = dist() else {
        return;
    };
    if !have("npm") {
        return skip("npm is not on PATH");
    }
    let prefix = npm_install(&dist, &["--global"]);
    let windlass = prefix.path().join("bin/windlass");
    let printed = succeeded(
        "windlass --version",
        &Command::new(&windlass).arg("--version").output().unwrap(),
    );
    assert_eq!(printed.trim(), format!("windlass {}", version()));
    serves(&windlass);
}

#[test]
fn the_launcher_without_its_platform_package_says_what_is_missing() {
    let Some(dist) = dist() else {
        return;
    };
    if !have("npm") {
        return skip("npm is not on PATH");
    }
    let prefix = npm_install(&dist, &["--omit=optional"]);
    let run = Command::new(prefix.path().join("node_modules/.bin/windlass"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(!run.status.success());
    let said = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        said.trim(),
        format!(
            "windlass-mcp: its package for this machine, {PLATFORM}, is not installed \
             (npm leaves optional dependencies out with --omit=optional)"
        )
    );
}

#[test]
fn uvx_and_pip_run_the_wheel() {
    let Some(dist) = dist() else {
        return;
    };
    let wheels = dist.join("wheel");
    if have("uvx") {
        let home = tempfile::tempdir().unwrap();
        let output = Command::new("uvx")
            .args(["--no-index", "--find-links"])
            .arg(&wheels)
            .args([NAME, "--version"])
            .env("UV_CACHE_DIR", home.path().join("uv-cache"))
            .env("UV_TOOL_DIR", home.path().join("uv-tools"))
            .output()
            .unwrap();
        let printed = succeeded("uvx windlass-mcp --version", &output);
        assert_eq!(printed.trim(), format!("windlass {}", version()));
    } else {
        skip("uvx is not on PATH");
    }
    let environment = tempfile::tempdir().unwrap();
    succeeded(
        "python3 -m venv",
        &Command::new("python3")
            .args(["-m", "venv"])
            .arg(environment.path())
            .output()
            .unwrap(),
    );
    let pip = environment.path().join("bin/pip");
    succeeded(
        "pip install windlass-mcp",
        &Command::new(&pip)
            .args(["install", "--quiet", "--no-index", "--find-links"])
            .arg(&wheels)
            .arg(NAME)
            .output()
            .unwrap(),
    );
    // pipx links the commands into ~/.local/bin: run them through a link.
    let linked = tempfile::tempdir().unwrap();
    for command in ["windlass", NAME] {
        let link = linked.path().join(command);
        std::os::unix::fs::symlink(environment.path().join("bin").join(command), &link).unwrap();
        let printed = succeeded(
            command,
            &Command::new(&link).arg("--version").output().unwrap(),
        );
        assert_eq!(printed.trim(), format!("windlass {}", version()));
    }
    serves(&linked.path().join(NAME));
}

/// The first file named `name` under `directory`, depth first.
fn find_file(directory: &Path, name: &str) -> Option<PathBuf> {
    let mut entries: Vec<_> = std::fs::read_dir(directory).ok()?.flatten().collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in &entries {
        let path = entry.path();
        if path.file_name().is_some_and(|file| file == name) && !path.is_dir() {
            return Some(path);
        }
    }
    entries
        .iter()
        .filter(|entry| entry.path().is_dir())
        .find_map(|entry| find_file(&entry.path(), name))
}

/// `GLIBC_2.31` as `(2, 31)`.
fn glibc_version(name: &str) -> Option<(u32, u32)> {
    let mut parts = name.strip_prefix("GLIBC_")?.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The symbol versions a little-endian ELF64 binary needs from its
/// libraries (`.gnu.version_r`): what the loader checks at start.
fn version_needs(elf: &[u8]) -> Option<Vec<String>> {
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u32_at = |at: usize| Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?));
    let u64_at =
        |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?) as usize);
    if elf.get(..5)? != b"\x7fELF\x02" {
        return None;
    }
    const VERNEED: u32 = 0x6fff_fffe;
    let (table, size, count) = (u64_at(0x28)?, u16_at(0x3a)? as usize, u16_at(0x3c)?);
    let section = |index: usize| table + index * size;
    let needs = (0..count as usize).find(|index| u32_at(section(*index) + 4) == Some(VERNEED))?;
    let strings = u64_at(section(u32_at(section(needs) + 40)? as usize) + 24)?;
    let name = |offset: u32| {
        let start = strings + offset as usize;
        let end = start + elf.get(start..)?.iter().position(|byte| *byte == 0)?;
        Some(String::from_utf8_lossy(&elf[start..end]).into_owned())
    };
    let mut names = Vec::new();
    let mut entry = u64_at(section(needs) + 24)?;
    for _ in 0..u32_at(section(needs) + 44)? {
        let mut auxiliary = entry + u32_at(entry + 8)? as usize;
        for _ in 0..u16_at(entry + 2)? {
            names.push(name(u32_at(auxiliary + 8)?)?);
            auxiliary += u32_at(auxiliary + 12)? as usize;
        }
        entry += u32_at(entry + 12)? as usize;
    }
    Some(names)
}

#[test]
fn version_needs_read_this_test_binary() {
    let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
    let needs = version_needs(&me).unwrap();
    assert!(
        needs.iter().any(|name| name.starts_with("GLIBC_2.")),
        "{needs:?}"
    );
}

/// The launcher every host's plugin runs (`plugins/windlass/bin`).
fn launcher() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins/windlass/bin/run-windlass")
}

/// A PATH of only the commands the launcher uses, and `extra` links
/// (name, target): no npx, no uvx, no windlass but those given.
fn bare_path(extra: &[(&str, &Path)]) -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    for command in ["sed", "cat", "mkdir", "tail"] {
        let found = which(command).unwrap_or_else(|| panic!("{command} is not on PATH"));
        std::os::unix::fs::symlink(found, bin.path().join(command)).unwrap();
    }
    for (name, target) in extra {
        std::os::unix::fs::symlink(target, bin.path().join(name)).unwrap();
    }
    bin
}

/// The launcher run by `sh` with `args`, `input` on its stdin, PATH
/// `bin` and a HOME of its own.
fn launch(bin: &Path, args: &[&str], input: &str, env: &[(&str, &str)]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new("/bin/sh")
        .arg(launcher())
        .args(args)
        .env_clear()
        .env("PATH", bin)
        .env("HOME", home.path())
        .envs(env.iter().copied())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_launcher_runs_the_windlass_on_path_when_its_version_fits() {
    let bin = bare_path(&[("windlass", &windlass_binary())]);
    let which = launch(bin.path(), &[], "", &[("WINDLASS_RUN_WHICH", "1")]);
    assert_eq!(
        String::from_utf8_lossy(&which.stdout).trim(),
        format!(
            "{} {} (PATH)",
            bin.path().join("windlass").display(),
            version()
        )
    );
    let ran = launch(bin.path(), &["--version"], "", &[]);
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout).trim(),
        format!("windlass {}", version())
    );
}

#[test]
fn with_nothing_to_run_the_launcher_answers_initialize_with_why() {
    let old = tempfile::tempdir().unwrap();
    let script = old.path().join("windlass");
    std::fs::write(&script, "#!/bin/sh\necho 'windlass 0.0.9'\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let (none, older) = (bare_path(&[]), bare_path(&[("windlass", &script)]));
    let cases = [
        (
            &none,
            "not on PATH, and neither npx nor uvx is there to fetch it:".to_owned(),
        ),
        (
            &older,
            format!(
                "the windlass on PATH ({}) is version 0.0.9 and this plugin needs",
                older.path().join("windlass").display()
            ),
        ),
    ];
    let initialize = r#"{"jsonrpc":"2.0","id":7,"method":"initialize","params":{}}"#;
    for (bin, why) in cases {
        let served = launch(bin.path(), &[], &format!("{initialize}\n"), &[]);
        assert!(!served.status.success());
        let answer: serde_json::Value =
            serde_json::from_slice(&served.stdout).expect("a JSON-RPC answer");
        assert_eq!(answer["id"], 7, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(&format!("windlass: {why}")),
            "{message}"
        );
        assert!(
            message.ends_with(&format!(
                "install it with 'npm install -g windlass-mcp@{0}' or 'pipx install windlass-mcp=={0}'",
                version()
            )),
            "{message}"
        );
        // A hook never fails its host.
        let hook = launch(bin.path(), &["release", "--format", "claude"], "{}", &[]);
        assert!(hook.status.success());
        assert!(hook.stdout.is_empty());
    }
}

/// The real `command`, not a version manager's shim of it (pyenv's
/// need pyenv on PATH).
fn real(command: &str) -> Option<PathBuf> {
    let shim = which(command)?;
    let resolved = Command::new("pyenv")
        .args(["which", command])
        .output()
        .ok()
        .filter(|output| output.status.success())
        .map(|output| PathBuf::from(String::from_utf8_lossy(&output.stdout).trim()));
    resolved.or(Some(shim))
}

#[test]
fn with_only_uvx_the_launcher_fetches_the_wheel_and_remembers_it() {
    let Some(dist) = dist() else {
        return;
    };
    let (Some(uvx), Some(python)) = (real("uvx"), real("python3")) else {
        return skip("uvx or python3 is not on PATH");
    };
    // uvx makes its environment with the machine's Python.
    let bin = bare_path(&[
        ("uvx", &uvx),
        ("python3", &python),
        ("sh", Path::new("/bin/sh")),
    ]);
    let cache = tempfile::tempdir().unwrap();
    let wheels = dist.join("wheel").display().to_string();
    let uv_cache = cache.path().join("uv").display().to_string();
    let env = [
        ("UV_OFFLINE", "1"),
        ("UV_FIND_LINKS", wheels.as_str()),
        ("UV_CACHE_DIR", uv_cache.as_str()),
        ("XDG_CACHE_HOME", cache.path().to_str().unwrap()),
    ];
    let ran = launch(bin.path(), &["--version"], "", &env);
    assert_eq!(
        String::from_utf8_lossy(&ran.stdout).trim(),
        format!("windlass {}", version()),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    // A hook runs what the server fetched, without asking uvx again.
    let mut which = env.to_vec();
    which.push(("WINDLASS_RUN_WHICH", "1"));
    let said = launch(bin.path(), &["release"], "", &which);
    let said = String::from_utf8_lossy(&said.stdout);
    assert!(
        said.trim()
            .ends_with(&format!("/bin/windlass {} (uvx)", version())),
        "{said}"
    );
}
