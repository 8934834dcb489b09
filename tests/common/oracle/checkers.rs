//! The checkers whose errors are the truth: each language's own command
//! line, run over a copy of a project, its errors read by file.

use super::super::projects::{compile_brotli, compile_lz4, compile_pycryptodome, lint_with_eslint};
use super::fnv;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The command whose errors are the truth.
#[derive(Clone, Copy)]
pub enum Checker {
    /// pyright's command line (or basedpyright's), with the project's own
    /// configuration.
    Pyright(&'static str),
    /// `tsc --noEmit` (or tsgo's) with a `tsconfig.json` over `src`.
    Tsc(&'static str),
    /// `go vet ./...`, which type-checks every package and its tests.
    GoVet,
    /// `gcc -fsyntax-only` for every entry of the compilation database.
    Gcc,
    /// `cargo check` of the crate and its tests, offline.
    Cargo,
    /// `ty check`, with the project's own configuration.
    Ty,
    /// `biome lint` over `src`, its recommended rules: its errors and
    /// warnings, which the server gives as the same.
    Biome,
    /// The project's own ESLint over `src`, with typescript-eslint's
    /// recommended rules (`projects::ESLINT_CONFIG`).
    Eslint,
    /// `php -l` of every PHP file: syntax errors only, which
    /// intelephense gives as `P1001`.
    PhpLint,
}

/// The checker's errors, by file as the roots display it, each by its
/// message.
pub type Errors = BTreeMap<String, Vec<CheckerError>>;

/// One error of a checker: its line and column (1-based; the column
/// where the checker gives one) and what it says. Errors are compared by
/// what they say: an edit moves the lines below it.
#[derive(Debug, Clone)]
pub struct CheckerError {
    pub line: usize,
    pub column: Option<usize>,
    pub message: String,
}

impl Checker {
    /// Whether it checks the files that depend on a package it found
    /// broken. The Go and Rust compilers stop at the broken package (and
    /// at ten errors, for Go's): the files beyond are not judged, and an
    /// answer's errors there are not held against it.
    pub fn checks_past_broken_packages(self) -> bool {
        !matches!(self, Self::GoVet | Self::Cargo)
    }

    /// The severities of a server's problems the checker's errors stand
    /// for: `go vet` fails on its analyzers' findings, which gopls gives
    /// as warnings (`ExampleCause refers to unknown identifier`).
    pub fn severities(self) -> &'static [&'static str] {
        match self {
            Self::GoVet => &["error", "warning"],
            // Its own findings, not the language server's beside it.
            Self::Biome => &["error [biome", "warning [biome"],
            Self::Eslint => &["error [eslint", "warning [eslint"],
            Self::PhpLint => &["error [intelephense P1001]"],
            _ => &["error"],
        }
    }
}

/// Makes the copy at `root` ready for its checker and server.
pub fn prepare(checker: Checker, root: &Path) {
    match checker {
        Checker::Tsc(_) | Checker::Biome | Checker::Eslint => std::fs::write(
            root.join("tsconfig.json"),
            r#"{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "esnext", "moduleResolution": "bundler", "skipLibCheck": true, "lib": ["es2022", "dom"]}, "include": ["src"]}"#,
        )
        .unwrap(),
        Checker::Gcc => {
            let write = if root.join("lz4libs").is_dir() {
                compile_lz4
            } else if root.join("c/include/brotli").is_dir() {
                compile_brotli
            } else {
                compile_pycryptodome
            };
            assert!(write(root), "writing the compilation database");
        }
        Checker::Pyright(_) | Checker::GoVet | Checker::Cargo | Checker::Ty | Checker::PhpLint => {}
    }
    if matches!(checker, Checker::Eslint) {
        assert!(lint_with_eslint(root), "linking the project's ESLint");
    }
}

/// Runs the checker over the project at `root`.
pub fn check(checker: Checker, root: &Path) -> Errors {
    match checker {
        Checker::Pyright(command) => pyright(command, root),
        Checker::Tsc(command) => by_line(
            root,
            Command::new(command).args(["--noEmit", "-p", "."]),
            r"^(?P<file>[^(\s][^(]*)\((?P<line>\d+),(?P<column>\d+)\): error (?P<message>.*)$",
        ),
        Checker::GoVet => by_line(
            root,
            Command::new("go")
                .args(["vet", "./..."])
                .env("GOFLAGS", "-mod=mod")
                .env("GOPROXY", "off"),
            r"^(?:vet: )?(?:\./)?(?P<file>[^:\s]+\.go):(?P<line>\d+):(?P<column>\d+): (?P<message>.*)$",
        ),
        Checker::Gcc => gcc(root),
        Checker::Cargo => by_line(
            root,
            Command::new("cargo")
                .args([
                    "check",
                    "--offline",
                    "--all-targets",
                    "--message-format",
                    "short",
                ])
                // Apart from the server's own build directory, whose
                // lock its check on save would wait for, and out of
                // the watched tree.
                .env(
                    "CARGO_TARGET_DIR",
                    std::env::temp_dir().join(format!(
                        "windlass-oracle-{:x}",
                        fnv(&root.display().to_string())
                    )),
                ),
            r"^(?P<file>[^:\s]+\.rs):(?P<line>\d+):(?P<column>\d+): error(?:\[\w+\])?: (?P<message>.*)$",
        ),
        Checker::Ty => by_line(
            root,
            Command::new("ty").args(["check", "--output-format", "concise"]),
            r"^(?P<file>[^:\s]+\.py):(?P<line>\d+):(?P<column>\d+): error\[[\w-]+\] (?P<message>.*)$",
        ),
        Checker::Eslint => eslint(root),
        Checker::PhpLint => php_lint(root),
        Checker::Biome => by_line(
            root,
            Command::new("biome").args([
                "lint",
                "--reporter=github",
                "--max-diagnostics=none",
                "src",
            ]),
            r"^::(?:error|warning) title=(?P<rule>[^,]+),file=(?P<file>[^,]+),line=(?P<line>\d+),[^:]*::(?P<message>.*)$",
        ),
    }
}

fn pyright(command: &str, root: &Path) -> Errors {
    // Every file, whatever the project's `include` names: the server
    // checks any file it has open (requests' configuration includes only
    // `src/requests`, and its tests call what an edit there breaks).
    let output = Command::new(command)
        .args(["--outputjson", "."])
        .current_dir(root)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{command}'s report is not JSON: {error}"));
    let mut errors = Errors::new();
    for diagnostic in report["generalDiagnostics"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if diagnostic["severity"] != "error" {
            continue;
        }
        let file = Path::new(diagnostic["file"].as_str().unwrap_or_default());
        let Ok(relative) = file.strip_prefix(root) else {
            continue;
        };
        errors
            .entry(relative.to_string_lossy().into_owned())
            .or_default()
            .push(CheckerError {
                line: diagnostic["range"]["start"]["line"]
                    .as_u64()
                    .map_or(0, |line| line as usize + 1),
                column: diagnostic["range"]["start"]["character"]
                    .as_u64()
                    .map(|character| character as usize + 1),
                message: diagnostic["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            });
    }
    errors
}

/// ESLint's errors and warnings, read from its JSON report.
fn eslint(root: &Path) -> Errors {
    let output = Command::new(root.join("node_modules/.bin/eslint"))
        .args(["--format", "json", "src"])
        .current_dir(root)
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("ESLint's report is not JSON: {error}"));
    let mut errors = Errors::new();
    for file in report.as_array().into_iter().flatten() {
        let path = Path::new(file["filePath"].as_str().unwrap_or_default());
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        for message in file["messages"].as_array().into_iter().flatten() {
            errors
                .entry(relative.to_string_lossy().into_owned())
                .or_default()
                .push(CheckerError {
                    line: message["line"].as_u64().map_or(0, |line| line as usize),
                    column: message["column"].as_u64().map(|column| column as usize),
                    message: format!(
                        "{} {}",
                        message["ruleId"].as_str().unwrap_or_default(),
                        message["message"].as_str().unwrap_or_default()
                    ),
                });
        }
    }
    errors
}

/// `php -l` of each PHP file: the first syntax error of each file that
/// has one.
fn php_lint(root: &Path) -> Errors {
    let pattern =
        Regex::new(r"(?:PHP )?Parse error: (?P<message>.*) in (?P<file>\S+) on line (?P<line>\d+)")
            .unwrap();
    let mut errors = Errors::new();
    for path in super::edits::files(root, &["php"]) {
        let Ok(relative) = path.strip_prefix(root) else {
            continue;
        };
        let output = Command::new("php")
            .args(["-d", "display_errors=stderr", "-l"])
            .arg(relative)
            .current_dir(root)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout).into_owned()
            + &String::from_utf8_lossy(&output.stderr);
        if let Some(found) = text.lines().find_map(|line| pattern.captures(line)) {
            record(&mut errors, relative, &found);
        }
    }
    errors
}

/// Errors read from a checker's output, one a line.
fn by_line(root: &Path, command: &mut Command, pattern: &str) -> Errors {
    let output = command.current_dir(root).output().unwrap();
    let pattern = Regex::new(pattern).unwrap();
    let mut errors = Errors::new();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    for line in text.lines() {
        if let Some(found) = pattern.captures(line.trim()) {
            // Some checkers name a file by its absolute path.
            let file = Path::new(&found["file"]);
            record(&mut errors, file.strip_prefix(root).unwrap_or(file), &found);
        }
    }
    errors
}

/// Adds the error a checker's line gave (its `line`, `column` where it
/// has one, and `message`) to
/// those of `file`, relative to the root.
fn record(errors: &mut Errors, file: &Path, found: &regex::Captures) {
    errors
        .entry(file.to_string_lossy().into_owned())
        .or_default()
        .push(CheckerError {
            line: found["line"].parse().unwrap_or(0),
            column: found
                .name("column")
                .and_then(|column| column.as_str().parse().ok()),
            message: said(&found["message"]),
        });
}

/// What an error says, less the spelling suggestion a checker makes from
/// the names it has at hand and the code it gives with one: tsc says
/// "TS2552: Cannot find name 'ReadonlySetLike'. Did you mean
/// 'ReadonlySet'?" of a file an edit elsewhere does not change, where it
/// said "TS2304: Cannot find name 'ReadonlySetLike'." before.
fn said(message: &str) -> String {
    static SUGGESTED: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"^(?:TS\d+: )?(?P<said>.*?)(?:\s*Did you mean .*\?)?$").unwrap()
    });
    SUGGESTED
        .captures(message)
        .map_or(message, |found| {
            found.name("said").map_or(message, |said| said.as_str())
        })
        .to_owned()
}

/// `gcc -fsyntax-only` over every entry of the compilation database, with
/// the entry's own arguments; an error in a header counts for the header.
fn gcc(root: &Path) -> Errors {
    let database: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("compile_commands.json")).unwrap())
            .unwrap();
    let pattern = Regex::new(
        r"^(?P<file>[^:\s]+):(?P<line>\d+):(?P<column>\d+): (?:fatal )?error: (?P<message>.*)$",
    )
    .unwrap();
    let mut errors = Errors::new();
    for entry in database {
        let directory = PathBuf::from(entry["directory"].as_str().unwrap());
        let arguments: Vec<&str> = entry["arguments"]
            .as_array()
            .unwrap()
            .iter()
            .skip(1)
            .filter_map(serde_json::Value::as_str)
            .filter(|argument| *argument != "-c")
            .collect();
        let output = Command::new("gcc")
            .arg("-fsyntax-only")
            .args(arguments)
            .current_dir(&directory)
            .output()
            .unwrap();
        for line in String::from_utf8_lossy(&output.stderr).lines() {
            let Some(found) = pattern.captures(line) else {
                continue;
            };
            let path = directory.join(&found["file"]);
            let path = path.canonicalize().unwrap_or(path);
            let Ok(relative) = path.strip_prefix(root) else {
                continue;
            };
            record(&mut errors, relative, &found);
        }
    }
    errors
}

/// The files whose errors `after` has more of than `before`.
pub fn grown(before: &Errors, after: &Errors) -> BTreeSet<String> {
    added(before, after).into_keys().collect()
}

/// The errors `after` has beyond those of `before`, by file: each known
/// by what it says, wherever it stands.
pub fn added(before: &Errors, after: &Errors) -> Errors {
    let mut added = Errors::new();
    for (file, errors) in after {
        let mut left: Vec<&str> = before
            .get(file)
            .into_iter()
            .flatten()
            .map(|error| error.message.as_str())
            .collect();
        for error in errors {
            match left.iter().position(|known| *known == error.message) {
                Some(at) => {
                    left.remove(at);
                }
                None => added.entry(file.clone()).or_default().push(error.clone()),
            }
        }
    }
    added
}
