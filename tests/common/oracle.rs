//! The oracle: Windlass's answers judged by each language's own
//! command-line checker on published projects. One description per
//! server ([`JUDGES`]): the projects it is tried on, how a definition is
//! found on a line, and the checker whose errors are the truth.
//!
//! For each of a seeded sample of definitions it makes an edit in a copy
//! of the project (the name renamed, a parameter dropped) and:
//! - asks `check_edit`, then writes the edit and runs the checker: every
//!   file whose errors the edit grows must be in the answer with new
//!   errors, or named as not checked; no file may get new errors the
//!   checker does not find;
//! - asks `diagnostics` of the first files the checker flags, as on
//!   disk, with the edit written (their errors must grow), and with it
//!   undone (the answer must be the first one again).
//!
//! Each answer is right, partial and said, wrong and said, or wrong
//! without a warning, the last being a bug whatever the server. Every
//! wrong one is printed with the command that replays it.

use super::projects::{compile_lz4, real_project};
use super::*;
use regex::Regex;
use serde_json::json;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One server as the oracle tries it.
pub struct Judge {
    /// Its name in the table and on the command line (`ORACLE_SERVER`).
    pub server: &'static str,
    /// Commands it needs on PATH: the server and the checker.
    pub needs: &'static [&'static str],
    /// The user's configuration that picks it, where it is not the
    /// language's first server.
    pub config: &'static str,
    /// Folders of `target/real-projects`, each one root.
    pub projects: &'static [&'static str],
    /// The files whose definitions are edited, by extension.
    pub extensions: &'static [&'static str],
    /// A definition on one line: `name` is its name, `params` its whole
    /// parameter list when the line holds it.
    pub definition: &'static str,
    /// The first parameter a method has that its callers never give.
    pub receiver: Option<&'static str>,
    pub checker: Checker,
}

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
}

pub const JUDGES: &[Judge] = &[
    Judge {
        server: "pyright",
        needs: &["pyright-langserver", "pyright"],
        config: "",
        projects: &["requests-2.34.2", "aiosql-15.0", "pg-activity-3.6.2"],
        extensions: &["py"],
        definition: PYTHON_DEFINITION,
        receiver: Some("self"),
        checker: Checker::Pyright("pyright"),
    },
    Judge {
        server: "basedpyright",
        needs: &["basedpyright-langserver", "basedpyright"],
        config: "[server.basedpyright]\n",
        projects: &["requests-2.34.2", "aiosql-15.0", "pg-activity-3.6.2"],
        extensions: &["py"],
        definition: PYTHON_DEFINITION,
        receiver: Some("self"),
        checker: Checker::Pyright("basedpyright"),
    },
    Judge {
        server: "ty",
        needs: &["ty"],
        config: "[server.ty]\n",
        projects: &["requests-2.34.2", "aiosql-15.0", "pg-activity-3.6.2"],
        extensions: &["py"],
        definition: PYTHON_DEFINITION,
        receiver: Some("self"),
        checker: Checker::Ty,
    },
    Judge {
        server: "typescript",
        needs: &["typescript-language-server", "tsc"],
        config: "",
        projects: &["immer-11.2.10", "zod-4.6.7"],
        extensions: &["ts"],
        definition: TYPESCRIPT_DEFINITION,
        receiver: None,
        checker: Checker::Tsc("tsc"),
    },
    Judge {
        server: "tsgo",
        needs: &["tsgo"],
        config: "[server.tsgo]\n",
        projects: &["immer-11.2.10", "zod-4.6.7"],
        extensions: &["ts"],
        definition: TYPESCRIPT_DEFINITION,
        receiver: None,
        checker: Checker::Tsc("tsgo"),
    },
    Judge {
        server: "gopls",
        needs: &["gopls", "go"],
        config: "",
        projects: &["pkg-errors-0.9.1", "pflag-1.0.6"],
        extensions: &["go"],
        definition: r"^func\s+(?:\([^()]*\)\s*)?(?P<name>[A-Za-z_]\w*)\((?P<params>[^()]*)\)",
        receiver: None,
        checker: Checker::GoVet,
    },
    Judge {
        server: "clangd",
        needs: &["clangd", "gcc"],
        config: "",
        projects: &["lz4-4.4.4"],
        extensions: &["h"],
        definition: r"^(?:LZ4\w*API\s+|LZ4LIB_STATIC_API\s+|XXH_PUBLIC_API\s+)?[A-Za-z_][\w\s\*]*[\s\*](?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*;",
        receiver: None,
        checker: Checker::Gcc,
    },
    Judge {
        server: "rust-analyzer",
        needs: &["rust-analyzer", "cargo"],
        config: "",
        projects: &["regex-syntax-0.8.11", "num-traits-0.2.19"],
        extensions: &["rs"],
        definition: r"^\s*(?:pub(?:\([^()]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(?P<name>[A-Za-z_]\w*)\s*(?:<[^()]*>)?\((?P<params>[^()]*)\)",
        receiver: Some("&self"),
        checker: Checker::Cargo,
    },
];

const PYTHON_DEFINITION: &str =
    r"^\s*(?:async\s+)?def\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)";

const TYPESCRIPT_DEFINITION: &str = r"^\s*(?:export\s+)?(?:async\s+)?function\s+(?P<name>[A-Za-z_$][\w$]*)\s*(?:<[^()]*>)?\((?P<params>[^()]*)\)";

/// The heading of the page's last section, the oracle's table: the page
/// is written from the language table above it and from the oracle's
/// bench below it.
pub const TABLE_HEADING: &str = "\n## Answers judged by the checkers\n";

/// The oracle's section of the languages page as it stands.
pub fn oracle_section(page: &str) -> &str {
    page.find(TABLE_HEADING).map_or("", |at| &page[at..])
}

/// What one answer was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Right,
    PartialAndSaid,
    WrongAndSaid,
    WrongWithoutWarning,
}

/// One answer judged: what was asked, and why it is what it is.
#[derive(Debug)]
pub struct Judged {
    pub verdict: Verdict,
    pub question: String,
    pub why: String,
    /// The command that asks this again.
    pub replay: String,
}

/// A server's answers judged, for the table.
#[derive(Debug, Default)]
pub struct Tally {
    pub server: String,
    pub projects: Vec<String>,
    pub seed: u64,
    pub judged: Vec<Judged>,
}

impl Tally {
    pub fn count(&self, verdict: Verdict) -> usize {
        self.judged
            .iter()
            .filter(|judged| judged.verdict == verdict)
            .count()
    }

    pub fn unwarned(&self) -> impl Iterator<Item = &Judged> {
        self.judged
            .iter()
            .filter(|judged| judged.verdict == Verdict::WrongWithoutWarning)
    }
}

impl fmt::Display for Tally {
    /// The table's row: server, projects, answers checked, each class,
    /// seed.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "| {} | {} | {} | {} | {} | {} | {} |",
            self.server,
            self.projects.join(", "),
            self.judged.len(),
            self.count(Verdict::WrongWithoutWarning),
            self.count(Verdict::PartialAndSaid),
            self.count(Verdict::WrongAndSaid),
            self.seed
        )
    }
}

/// A deterministic stream of numbers from a seed (splitmix64): the same
/// seed picks the same definitions and edits on the same projects.
pub struct Seeded(u64);

impl Seeded {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut mixed = self.0;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        mixed ^ (mixed >> 31)
    }

    pub fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound.max(1) as u64) as usize
    }
}

/// An edit of one line of a file, as `check_edit` is given it.
#[derive(Debug, Clone)]
pub struct Edit {
    /// As the roots display it.
    pub file: String,
    pub kind: &'static str,
    pub name: String,
    pub old: String,
    pub new: String,
}

impl Edit {
    fn describe(&self) -> String {
        format!("{} `{}` in {}", self.kind, self.name, self.file)
    }
}

/// Every edit the judge can make in the project at `root`, in path and
/// line order: for each definition, its name renamed, and its last
/// parameter dropped where the line holds the whole list.
pub fn edits(judge: &Judge, root: &Path) -> Vec<Edit> {
    let Ok(definition) = Regex::new(judge.definition) else {
        panic!("{}: the definition pattern does not compile", judge.server);
    };
    let mut edits = Vec::new();
    for path in files(root, judge.extensions) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let file = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        for line in text.lines() {
            let Some(found) = definition.captures(line) else {
                continue;
            };
            // `check_edit` replaces a text that occurs once.
            if text.matches(line).count() != 1 {
                continue;
            }
            let name = &found["name"];
            let Some(at) = found.name("name") else {
                continue;
            };
            let renamed = format!(
                "{}{}Renamed{}",
                &line[..at.start()],
                name,
                &line[at.end()..]
            );
            edits.push(Edit {
                file: file.clone(),
                kind: "rename",
                name: name.to_owned(),
                old: line.to_owned(),
                new: renamed,
            });
            if let Some(params) = found.name("params")
                && let Some(dropped) = without_last_parameter(params.as_str(), judge.receiver)
            {
                edits.push(Edit {
                    file: file.clone(),
                    kind: "drop the last parameter of",
                    name: name.to_owned(),
                    old: line.to_owned(),
                    new: format!(
                        "{}{dropped}{}",
                        &line[..params.start()],
                        &line[params.end()..]
                    ),
                });
            }
        }
    }
    edits
}

/// The parameter list without its last parameter, if it has one callers
/// give (not the receiver alone, nor a variadic or keyword-only marker).
pub fn without_last_parameter(params: &str, receiver: Option<&str>) -> Option<String> {
    let parts: Vec<&str> = params.split(',').map(str::trim).collect();
    let given: Vec<&&str> = parts
        .iter()
        .filter(|part| !part.is_empty() && Some(**part) != receiver)
        .collect();
    let last = given.last()?;
    if last.starts_with('*') || last.starts_with("...") || last.contains('=') || *last == &"/" {
        return None;
    }
    let kept: Vec<&str> = parts
        .iter()
        .copied()
        .filter(|part| !part.is_empty() && part != *last)
        .collect();
    Some(kept.join(", "))
}

/// The files under `root` with one of `extensions`, in path order, out of
/// tests and build output.
fn files(root: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(directory) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&directory) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && !["node_modules", "dist", "build"].contains(&&*name) {
                    stack.push(path);
                }
            } else if extensions
                .iter()
                .any(|extension| name.ends_with(&format!(".{extension}")))
                && !name.ends_with(".d.ts")
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The checker's errors, by file as the roots display it, each by its
/// message.
pub type Errors = BTreeMap<String, Vec<String>>;

impl Checker {
    /// Whether it checks the files that depend on a package it found
    /// broken. The Go and Rust compilers stop at the broken package (and
    /// at ten errors, for Go's): the files beyond are not judged, and an
    /// answer's errors there are not held against it.
    fn checks_past_broken_packages(self) -> bool {
        !matches!(self, Self::GoVet | Self::Cargo)
    }

    /// The severities of a server's problems the checker's errors stand
    /// for: `go vet` fails on its analyzers' findings, which gopls gives
    /// as warnings (`ExampleCause refers to unknown identifier`).
    fn severities(self) -> &'static [&'static str] {
        match self {
            Self::GoVet => &["error", "warning"],
            _ => &["error"],
        }
    }
}

/// Makes the copy at `root` ready for its checker and server.
pub fn prepare(checker: Checker, root: &Path) {
    match checker {
        Checker::Tsc(_) => std::fs::write(
            root.join("tsconfig.json"),
            r#"{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", "module": "esnext", "moduleResolution": "bundler", "skipLibCheck": true, "lib": ["es2022", "dom"]}, "include": ["src"]}"#,
        )
        .unwrap(),
        Checker::Gcc => assert!(compile_lz4(root), "writing the compilation database"),
        Checker::Pyright(_) | Checker::GoVet | Checker::Cargo | Checker::Ty => {}
    }
}

/// Runs the checker over the project at `root`.
pub fn check(checker: Checker, root: &Path) -> Errors {
    match checker {
        Checker::Pyright(command) => pyright(command, root),
        Checker::Tsc(command) => by_line(
            root,
            Command::new(command).args(["--noEmit", "-p", "."]),
            r"^(?P<file>[^(\s][^(]*)\(\d+,\d+\): error (?P<message>.*)$",
        ),
        Checker::GoVet => by_line(
            root,
            Command::new("go")
                .args(["vet", "./..."])
                .env("GOFLAGS", "-mod=mod")
                .env("GOPROXY", "off"),
            r"^(?:vet: )?(?:\./)?(?P<file>[^:\s]+\.go):\d+:\d+: (?P<message>.*)$",
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
            r"^(?P<file>[^:\s]+\.rs):\d+:\d+: error(?:\[\w+\])?: (?P<message>.*)$",
        ),
        Checker::Ty => by_line(
            root,
            Command::new("ty").args(["check", "--output-format", "concise"]),
            r"^(?P<file>[^:\s]+\.py):\d+:\d+: error\[[\w-]+\] (?P<message>.*)$",
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
            .push(
                diagnostic["message"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            );
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
            let file = file.strip_prefix(root).unwrap_or(file);
            errors
                .entry(file.to_string_lossy().into_owned())
                .or_default()
                .push(found["message"].to_owned());
        }
    }
    errors
}

/// `gcc -fsyntax-only` over every entry of the compilation database; an
/// error in a header counts for the header.
fn gcc(root: &Path) -> Errors {
    let database: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(root.join("compile_commands.json")).unwrap())
            .unwrap();
    let pattern = Regex::new(r"^(?P<file>[^:\s]+):\d+:\d+: error: (?P<message>.*)$").unwrap();
    let mut errors = Errors::new();
    for entry in database {
        let directory = PathBuf::from(entry["directory"].as_str().unwrap());
        let file = entry["file"].as_str().unwrap();
        let output = Command::new("gcc")
            .args(["-fsyntax-only", "-I.", file])
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
            errors
                .entry(relative.to_string_lossy().into_owned())
                .or_default()
                .push(found["message"].to_owned());
        }
    }
    errors
}

/// The files whose errors `after` has more of than `before`.
pub fn grown(before: &Errors, after: &Errors) -> BTreeSet<String> {
    after
        .iter()
        .filter(|(file, errors)| {
            let mut left = before.get(*file).cloned().unwrap_or_default();
            errors
                .iter()
                .any(|error| match left.iter().position(|known| known == error) {
                    Some(at) => {
                        left.remove(at);
                        false
                    }
                    None => true,
                })
        })
        .map(|(file, _)| file.clone())
        .collect()
}

/// What a `check_edit` answer says: the files with new errors, the files
/// it says it did not check, and whether it warns of anything else.
#[derive(Debug, Default)]
pub struct CheckAnswer {
    pub broken: BTreeSet<String>,
    pub unchecked: BTreeSet<String>,
    /// Files it did not check beyond those it names.
    pub unnamed: bool,
    pub warned: bool,
}

impl CheckAnswer {
    pub fn read(text: &str, severities: &[&str]) -> Self {
        let mut answer = Self::default();
        let mut current: Option<String> = None;
        for line in text.lines() {
            if let Some((file, _)) = line
                .split_once(", if edited (nothing written): ")
                .or_else(|| line.split_once(", not edited, after the edit: "))
            {
                current = Some(file.to_owned());
            } else if line.starts_with("  new ")
                && severities
                    .iter()
                    .any(|severity| line.contains(&format!(" {severity} ")))
            {
                answer.broken.extend(current.clone());
            } else if line.starts_with("warning:") || line.contains("may be incomplete") {
                answer.warned = true;
                if let Some((_, listed)) = line.split_once(" not checked (") {
                    let files = listed
                        .split_once("): ")
                        .map_or("", |(_, files)| files)
                        .split(';')
                        .next()
                        .unwrap_or_default();
                    let (named, more) = files.split_once(" and ").unwrap_or((files, ""));
                    answer
                        .unchecked
                        .extend(named.split_whitespace().map(str::to_owned));
                    answer.unnamed |= !more.is_empty();
                } else if line.contains("stopped before the end")
                    || line.contains("were not looked for")
                {
                    answer.unnamed = true;
                }
            } else if line.starts_with("note:") && line.contains("are left out") {
                // A check that runs only on save (rust-analyzer's cargo
                // check) is not run: what only it finds is said missing.
                answer.warned = true;
                answer.unnamed = true;
            }
        }
        answer
    }
}

/// Judges a `check_edit` answer against the files the checker found the
/// edit breaking.
pub fn judge_check(
    answer: &CheckAnswer,
    truth: &BTreeSet<String>,
    checker: Checker,
) -> (Verdict, String) {
    let missed: Vec<&String> = truth.difference(&answer.broken).collect();
    // With nothing broken the checker saw every file.
    let judged_beyond = truth.is_empty() || checker.checks_past_broken_packages();
    let invented: Vec<&String> = match judged_beyond {
        true => answer.broken.difference(truth).collect(),
        false => Vec::new(),
    };
    if missed.is_empty() && invented.is_empty() {
        return (Verdict::Right, String::new());
    }
    let why = format!("missed {missed:?}, invented {invented:?}");
    let said = invented.is_empty()
        && missed
            .iter()
            .all(|file| answer.unchecked.contains(*file) || answer.unnamed);
    match (said, answer.warned) {
        (true, _) => (Verdict::PartialAndSaid, why),
        (false, true) => (Verdict::WrongAndSaid, why),
        (false, false) => (Verdict::WrongWithoutWarning, why),
    }
}

/// The problems of `severities` a `diagnostics` answer lists for one
/// file, each by what it says (`error [source code] message`), without
/// its position.
fn errors_in<'a>(answer: &'a str, severities: &[&str]) -> Vec<&'a str> {
    let mut errors: Vec<&str> = answer
        .lines()
        .filter_map(|line| line.strip_prefix("  "))
        .filter_map(|line| line.split_once(' ').map(|(_, what)| what))
        .filter(|what| {
            severities
                .iter()
                .any(|severity| what.starts_with(&format!("{severity} ")))
        })
        .collect();
    errors.sort_unstable();
    errors
}

/// Whether `after` lists an error `before` does not.
fn adds_errors(before: &str, after: &str, severities: &[&str]) -> bool {
    let mut left = errors_in(before, severities);
    errors_in(after, severities)
        .into_iter()
        .any(|error| match left.binary_search(&error) {
            Ok(at) => {
                left.remove(at);
                false
            }
            Err(_) => true,
        })
}

/// Runs `count` of `judge`'s edits (picked by `seed`, or only the one
/// numbered `only`) on each of its projects (or the one named
/// `project`); the reason instead when a project or a command is
/// missing.
pub fn run(
    judge: &Judge,
    seed: u64,
    count: usize,
    only: Option<usize>,
    project: Option<&str>,
) -> Result<Tally, String> {
    if let Some(missing) = judge.needs.iter().find(|command| !have(command)) {
        return Err(format!("{missing} is not on PATH"));
    }
    let mut tally = Tally {
        server: judge.server.to_owned(),
        seed,
        ..Tally::default()
    };
    for project in judge
        .projects
        .iter()
        .filter(|name| project.is_none_or(|only| only == **name))
    {
        let Some(dir) = real_project(project) else {
            return Err(format!(
                "target/real-projects/{project} is missing (.ci/run unpacks it)"
            ));
        };
        let root = dir.path().canonicalize().unwrap();
        prepare(judge.checker, &root);
        tally.projects.push((*project).to_owned());
        let all = edits(judge, &root);
        let mut seeded = Seeded::new(seed ^ fnv(project));
        let picked: Vec<usize> = match only {
            Some(index) => vec![index],
            None => pick(
                &all,
                &used_elsewhere(judge, &root, &all),
                count,
                &mut seeded,
            ),
        };
        let baseline = check(judge.checker, &root);
        // Whole answers: a file's errors are compared by what each says.
        let config = format!("max_output_bytes = 16000000\n{}", judge.config);
        let session = Session::start_with_user_config(&config, &root_arg(&root));
        for index in picked {
            let Some(edit) = all.get(index) else {
                continue;
            };
            let replay = format!(
                "ORACLE_SERVER={} ORACLE_PROJECT={project} ORACLE_SEED={seed} ORACLE_ONLY={index} cargo test --test oracle -- --nocapture",
                judge.server
            );
            tally
                .judged
                .extend(try_edit(judge, &session, &root, &baseline, edit, &replay));
        }
        session.keep(dir);
    }
    Ok(tally)
}

/// How long an answer is waited for before it counts as none.
const ANSWER_LIMIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Diagnostics asked per edit, of the files the checker finds it
/// breaking, at most.
const FILES_ASKED: usize = 4;

/// One edit's answers: its check; then, of the first few files the
/// checker finds it breaking, the diagnostics as on disk, once the edit
/// is written, and once it is undone.
fn try_edit(
    judge: &Judge,
    session: &Session,
    root: &Path,
    baseline: &Errors,
    edit: &Edit,
    replay: &str,
) -> Vec<Judged> {
    let path = root.join(&edit.file);
    let original = std::fs::read_to_string(&path).unwrap();
    let edited = original.replacen(&edit.old, &edit.new, 1);
    eprintln!("oracle: {}", edit.describe());
    let answer = ask(
        session,
        "check_edit",
        json!({"file": edit.file, "replacements": [{"old": edit.old, "new": edit.new}]}),
    );
    std::fs::write(&path, &edited).unwrap();
    let truth = grown(baseline, &check(judge.checker, root));
    std::fs::write(&path, &original).unwrap();
    let judged = |verdict: Verdict, question: String, why: String| Judged {
        verdict,
        question,
        why,
        replay: replay.to_owned(),
    };
    let (verdict, why) = match answer.is_error {
        true if answer.text.starts_with("no answer") => {
            (Verdict::WrongWithoutWarning, "hung".to_owned())
        }
        true => (Verdict::WrongAndSaid, "failed".to_owned()),
        false => judge_check(
            &CheckAnswer::read(&answer.text, judge.checker.severities()),
            &truth,
            judge.checker,
        ),
    };
    let mut all = vec![judged(
        verdict,
        format!("check_edit: {}", edit.describe()),
        format!("{why}\n{}", answer.text),
    )];
    let asked: Vec<&String> = truth.iter().take(FILES_ASKED).collect();
    let diagnostics = |file: &String| ask(session, "diagnostics", json!({"file": file}));
    let before: Vec<ToolOutcome> = asked.iter().map(|file| diagnostics(file)).collect();
    std::fs::write(&path, &edited).unwrap();
    let written: Vec<ToolOutcome> = asked.iter().map(|file| diagnostics(file)).collect();
    std::fs::write(&path, &original).unwrap();
    let undone: Vec<ToolOutcome> = asked.iter().map(|file| diagnostics(file)).collect();
    for (((file, before), written), undone) in asked.iter().zip(&before).zip(&written).zip(&undone)
    {
        let warned = |answer: &ToolOutcome| {
            (answer.is_error && !answer.text.starts_with("no answer"))
                || answer
                    .text
                    .lines()
                    .any(|line| line.starts_with("warning:") || line.contains("may be incomplete"))
        };
        let grew = adds_errors(&before.text, &written.text, judge.checker.severities());
        all.push(judged(
            class(grew, warned(written)),
            format!("diagnostics of {file} with {} written", edit.describe()),
            format!("before:\n{}\nwritten:\n{}", before.text, written.text),
        ));
        let severities = judge.checker.severities();
        let back = errors_in(&undone.text, severities) == errors_in(&before.text, severities);
        all.push(judged(
            class(back, warned(undone)),
            format!("diagnostics of {file} with {} undone", edit.describe()),
            format!("before:\n{}\nundone:\n{}", before.text, undone.text),
        ));
    }
    all
}

/// A tool's answer, waited for up to [`ANSWER_LIMIT`]: slower than a
/// test's watchdog is still an answer to judge; none at all is a hang.
fn ask(session: &Session, tool: &str, arguments: serde_json::Value) -> ToolOutcome {
    let started = std::time::Instant::now();
    let asked = session.call_async(tool, arguments.clone());
    let answer = asked.recv_timeout(ANSWER_LIMIT).map_or_else(
        |_| ToolOutcome {
            text: format!("no answer in {} s", ANSWER_LIMIT.as_secs()),
            is_error: true,
        },
        outcome,
    );
    eprintln!(
        "oracle: {tool} {} answered in {:.1} s",
        arguments["file"],
        started.elapsed().as_secs_f64()
    );
    answer
}

fn class(right: bool, warned: bool) -> Verdict {
    match (right, warned) {
        (true, _) => Verdict::Right,
        (false, true) => Verdict::WrongAndSaid,
        (false, false) => Verdict::WrongWithoutWarning,
    }
}

/// `count` edits of `all`: every other one among those whose name other
/// files use (an edit that breaks nothing elsewhere is the easy case).
fn pick(all: &[Edit], used: &[usize], count: usize, seeded: &mut Seeded) -> Vec<usize> {
    (0..count)
        .map(|draw| match (draw % 2, used.is_empty()) {
            (0, false) => used[seeded.below(used.len())],
            _ => seeded.below(all.len()),
        })
        .collect()
}

/// The edits whose name another file of the judge's languages names as a
/// whole word.
fn used_elsewhere(judge: &Judge, root: &Path, all: &[Edit]) -> Vec<usize> {
    let texts: Vec<(String, String)> = files(root, judge.extensions)
        .into_iter()
        .filter_map(|path| {
            let text = std::fs::read_to_string(&path).ok()?;
            let file = path.strip_prefix(root).ok()?.to_string_lossy().into_owned();
            Some((file, text))
        })
        .collect();
    all.iter()
        .enumerate()
        .filter(|(_, edit)| {
            let Ok(word) = Regex::new(&format!(r"\b{}\b", regex::escape(&edit.name))) else {
                return false;
            };
            texts
                .iter()
                .any(|(file, text)| *file != edit.file && word.is_match(text))
        })
        .map(|(index, _)| index)
        .collect()
}

/// A stable hash of a name, so each project draws its own edits from one
/// seed.
fn fnv(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
