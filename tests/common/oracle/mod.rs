//! The oracle: Windlass's answers judged by each language's own
//! command-line checker on published projects. One description per
//! server ([`JUDGES`]): the projects it is tried on, how a definition is
//! found on a line, and the checker whose errors are the truth.
//!
//! For each of a seeded sample of definitions (functions and methods,
//! types and constants) it makes an edit in a copy of the project (the
//! name renamed; for a function, a parameter dropped, the return type
//! changed, a statement a linter flags put in its body; the file
//! deleted) and:
//! - asks about the definition first (`questions.rs`): its references
//!   must list every use the checker finds a rename breaking and every
//!   occurrence of the name in code whose `definition` leads back to it
//!   (`occurrences.rs`), a broken use's `definition` must lead back to
//!   it, and `definition` and `source` by name, `hover` and `search` (of
//!   `Type.method` too, for a method) must find it;
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

mod check_answers;
mod checkers;
pub mod edits;
pub mod occurrences;
pub mod questions;

pub use checkers::Checker;

use super::projects::real_project;
use super::*;
use check_answers::{CheckAnswer, adds_errors, errors_in, judge_check};
use checkers::{Errors, added, check, prepare};
use edits::{Edit, Kind, edits, used_elsewhere};
use questions::{Definition, ask_before, broken_uses};
use serde_json::json;
use std::collections::BTreeSet;
use std::fmt;
use std::path::Path;

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
    /// The files its definitions' uses are looked for in, by extension.
    pub sources: &'static [&'static str],
    /// A definition on one line: `name` is its name, `params` its whole
    /// parameter list when the line holds it.
    pub definition: &'static str,
    /// Definitions of other names on one line (types, constants,
    /// fields), by `name`: they are only renamed.
    pub names: &'static [&'static str],
    /// A definition with its body where the language declares it apart
    /// (a C function's), by `name`: a use may lead to either.
    pub body: Option<&'static str>,
    /// The first parameter a method has that its callers never give.
    pub receiver: Option<&'static str>,
    /// A return type written on the definition's line.
    pub returns: Option<Returns>,
    /// A statement the linter flags, put first in a definition's body.
    pub lint: Option<&'static str>,
    pub checker: Checker,
}

/// How a definition's line writes its return type, after its parameters'
/// `)`: the pattern's `type`, and the two types it is changed to (the
/// second where it already is the first).
#[derive(Clone, Copy)]
pub struct Returns {
    pub pattern: &'static str,
    pub instead: [&'static str; 2],
}

const PYTHON_RETURNS: Returns = Returns {
    pattern: r"^\s*->\s*(?P<type>[^:]+?)\s*:",
    instead: ["int", "str"],
};

const TYPESCRIPT_RETURNS: Returns = Returns {
    pattern: r"^\s*:\s*(?P<type>[^{;=]+?)\s*\{",
    instead: ["number", "string"],
};

/// pyright's judge, whose projects, patterns and edits every Python
/// server's shares.
const PYTHON: Judge = Judge {
    server: "pyright",
    needs: &["pyright-langserver", "pyright"],
    config: "",
    projects: &["requests-2.34.2", "aiosql-15.0", "pg-activity-3.6.2"],
    extensions: &["py"],
    sources: &["py"],
    definition: PYTHON_DEFINITION,
    names: &[
        r"^\s*class\s+(?P<name>[A-Za-z_]\w*)\s*[(:]",
        r"^(?P<name>[A-Z][A-Z0-9_]+)\s*(?::[^=]+)?=[^=]",
        // An attribute a class body declares with its type.
        r"^    (?P<name>[a-z_][a-z0-9_]*): [^=(,]*[^,=(\s](?: = [^,(]*[^,\s])?$",
    ],
    body: None,
    receiver: Some("self"),
    returns: Some(PYTHON_RETURNS),
    lint: None,
    checker: Checker::Pyright("pyright"),
};

/// typescript-language-server's judge, whose projects, patterns and
/// edits every TypeScript server's (and linter's) shares.
const TYPESCRIPT: Judge = Judge {
    server: "typescript",
    needs: &["typescript-language-server", "tsc"],
    config: "",
    projects: &["immer-11.2.10", "zod-4.6.7", "mobx-7.1.3"],
    extensions: &["ts"],
    sources: &["ts", "tsx"],
    definition: TYPESCRIPT_DEFINITION,
    names: &[
        r"^\s*(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface|enum|type)\s+(?P<name>[A-Za-z_$][\w$]*)\b",
        r"^(?:export\s+)?const\s+(?P<name>[A-Za-z_$][\w$]*)\s*(?::[^=]+)?=[^=>]",
        // A property a class, interface or type literal declares.
        r"^\s+(?:(?:public|private|protected|readonly|static|declare|abstract)\s+)*(?P<name>[A-Za-z_$][\w$]*)[?!]?: [^=;]+;$",
    ],
    body: None,
    receiver: None,
    returns: Some(TYPESCRIPT_RETURNS),
    lint: None,
    checker: Checker::Tsc("tsc"),
};

pub const JUDGES: &[Judge] = &[
    PYTHON,
    Judge {
        server: "basedpyright",
        needs: &["basedpyright-langserver", "basedpyright"],
        config: "[server.basedpyright]\n",
        checker: Checker::Pyright("basedpyright"),
        ..PYTHON
    },
    Judge {
        server: "ty",
        needs: &["ty"],
        config: "[server.ty]\n",
        checker: Checker::Ty,
        ..PYTHON
    },
    TYPESCRIPT,
    Judge {
        server: "tsgo",
        needs: &["tsgo"],
        config: "[server.tsgo]\n",
        checker: Checker::Tsc("tsgo"),
        ..TYPESCRIPT
    },
    Judge {
        server: "biome",
        needs: &["biome", "typescript-language-server"],
        config: "[server.biome]\n",
        lint: Some("debugger;"),
        checker: Checker::Biome,
        ..TYPESCRIPT
    },
    Judge {
        server: "eslint",
        needs: &[
            "vscode-eslint-language-server",
            "typescript-language-server",
        ],
        config: "",
        lint: Some("var flagged = 1;"),
        checker: Checker::Eslint,
        ..TYPESCRIPT
    },
    Judge {
        server: "intelephense",
        needs: &["intelephense", "php"],
        config: "",
        projects: &[
            "fast-route-1.3.0",
            "monolog-2.9.1",
            "doctrine-inflector-2.0.6",
        ],
        extensions: &["php"],
        sources: &["php"],
        definition: r"^\s*(?:(?:public|protected|private|static|abstract|final)\s+)*function\s+(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)",
        names: &[
            r"^\s*(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(?P<name>[A-Za-z_]\w*)",
            r"^\s*(?:(?:public|protected|private|final)\s+)*const\s+(?P<name>[A-Za-z_]\w*)\s*=",
            // A property a class declares.
            r"^\s*(?:(?:public|protected|private|static|readonly)\s+)+(?:\??[\w\\|]+\s+)?\$(?P<name>\w+)\s*[;=]",
        ],
        body: None,
        receiver: None,
        returns: None,
        lint: Some("$flagged = ;"),
        checker: Checker::PhpLint,
    },
    Judge {
        server: "gopls",
        needs: &["gopls", "go"],
        config: "",
        projects: &["pkg-errors-0.9.1", "pflag-1.0.6", "uuid-1.3.0"],
        extensions: &["go"],
        sources: &["go"],
        definition: r"^func\s+(?:\([^()]*\)\s*)?(?P<name>[A-Za-z_]\w*)\((?P<params>[^()]*)\)",
        // A type, a constant, or a member of a `const (` or `var (` block.
        names: &[
            r"^type\s+(?P<name>[A-Za-z_]\w*)\s+[\w\[\*]",
            r"^const\s+(?P<name>[A-Za-z_]\w*)\b",
            r"^\t(?P<name>[A-Z]\w*)\s*(?:[A-Za-z_][\w.]*\s*)?=[^=]",
            // An exported field of a struct.
            r"^\t(?P<name>[A-Z]\w*)\s+[\*\[\]\w.]+(?:\s+`[^`]*`)?$",
        ],
        body: None,
        receiver: None,
        returns: Some(Returns {
            pattern: r"^\s*(?P<type>[\w\.\*\[\]]+)\s*\{",
            instead: ["int", "string"],
        }),
        lint: None,
        checker: Checker::GoVet,
    },
    Judge {
        server: "clangd",
        needs: &["clangd", "gcc"],
        config: "",
        projects: &["lz4-4.4.4", "brotli-1.2.1", "pycryptodome-4.5.0"],
        extensions: &["h"],
        sources: &["h", "c"],
        definition: r"^(?:LZ4\w*API\s+|LZ4LIB_STATIC_API\s+|XXH_PUBLIC_API\s+)?[A-Za-z_][\w\s\*]*[\s\*](?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^()]*)\)\s*;",
        // A type a `typedef` names (at its end), or a constant a macro
        // without parameters defines.
        names: &[
            r"^\}\s*(?P<name>[A-Za-z_]\w*)\s*;",
            r"^typedef\s+[^;(){}]*[\s\*](?P<name>[A-Za-z_]\w*)\s*;",
            r"^#\s*define\s+(?P<name>[A-Z][A-Z0-9_]+)\s+[^\s\\]",
        ],
        body: Some(
            // The return type may stand on the line above.
            r"^(?:static\s+|inline\s+|FORCE_INLINE\s+|LZ4\w*API\s+|XXH_PUBLIC_API\s+)*(?:[A-Za-z_][\w\s\*]*[\s\*])?(?P<name>[A-Za-z_]\w*)\s*\([^;{]*(?:\)\s*\{.*)?$",
        ),
        receiver: None,
        returns: None,
        lint: None,
        checker: Checker::Gcc,
    },
    Judge {
        server: "rust-analyzer",
        needs: &["rust-analyzer", "cargo"],
        config: "",
        projects: &["regex-syntax-0.8.11", "num-traits-0.2.19", "heck-0.5.0"],
        extensions: &["rs"],
        sources: &["rs"],
        definition: r"^\s*(?:pub(?:\([^()]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?fn\s+(?P<name>[A-Za-z_]\w*)\s*(?:<[^()]*>)?\((?P<params>[^()]*)\)",
        names: &[
            r"^\s*(?:pub(?:\([^()]*\))?\s+)?(?:struct|enum|trait|type|union)\s+(?P<name>[A-Za-z_]\w*)",
            r"^\s*(?:pub(?:\([^()]*\))?\s+)?(?:const|static)\s+(?P<name>[A-Z_][A-Z0-9_]*)\s*:",
            // A public field of a struct.
            r"^\s+pub(?:\([^()]*\))?\s+(?P<name>[a-z_][a-z0-9_]*)\s*:\s*[^:]",
        ],
        body: None,
        receiver: Some("&self"),
        returns: Some(Returns {
            pattern: r"^\s*->\s*(?P<type>[^{;]+?)\s*(?:\{|;|where\b)",
            instead: ["u8", "i64"],
        }),
        lint: None,
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
    /// How long each `check_edit` took to answer, in seconds.
    pub checks: Vec<f64>,
}

impl Tally {
    /// The median, p90 and slowest `check_edit`, in seconds.
    pub fn check_times(&self) -> Option<(f64, f64, f64)> {
        let mut times = self.checks.clone();
        times.sort_by(f64::total_cmp);
        let at = |fraction: f64| times[((times.len() - 1) as f64 * fraction).round() as usize];
        let slowest = *times.last()?;
        Some((at(0.5), at(0.9), slowest))
    }

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
            let (judged, check) = try_edit(judge, &session, &root, &baseline, edit, &replay);
            tally.judged.extend(judged);
            tally.checks.extend(check);
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
/// is written, and once it is undone. A deleted file is not asked about
/// (it is gone), nor checked first (`check_edit` edits a file's text).
/// With the answers, how long the check took, in seconds.
fn try_edit(
    judge: &Judge,
    session: &Session,
    root: &Path,
    baseline: &Errors,
    edit: &Edit,
    replay: &str,
) -> (Vec<Judged>, Option<f64>) {
    let path = root.join(&edit.file);
    let original = std::fs::read_to_string(&path).unwrap();
    let write = || match edit.kind {
        Kind::Delete => std::fs::remove_file(&path).unwrap(),
        _ => std::fs::write(&path, original.replacen(&edit.old, &edit.new, 1)).unwrap(),
    };
    let undo = || std::fs::write(&path, &original).unwrap();
    eprintln!("oracle: {}", edit.describe());
    let definition = (edit.kind != Kind::Delete)
        .then(|| Definition::of(edit, &original))
        .flatten();
    let questions = definition
        .as_ref()
        .map(|definition| ask_before(session, definition));
    let started = std::time::Instant::now();
    let answer = (edit.kind != Kind::Delete).then(|| {
        ask(
            session,
            "check_edit",
            json!({"file": edit.file, "replacements": [{"old": edit.old, "new": edit.new}]}),
        )
    });
    let took = answer.as_ref().map(|_| started.elapsed().as_secs_f64());
    write();
    let mut added = added(baseline, &check(judge.checker, root));
    undo();
    if edit.kind == Kind::Delete {
        added.remove(&edit.file);
    }
    let truth: BTreeSet<String> = added.keys().cloned().collect();
    let judged = |verdict: Verdict, question: String, why: String| Judged {
        verdict,
        question,
        why,
        replay: replay.to_owned(),
    };
    let mut all = Vec::new();
    if let Some(answer) = answer {
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
        all.push(judged(
            verdict,
            format!("check_edit: {}", edit.describe()),
            format!("{why}\n{}", answer.text),
        ));
    }
    if let (Some(definition), Some(questions)) = (&definition, &questions) {
        // A rename breaks only the uses of the name; a parameter dropped
        // also breaks the function's own body.
        let uses =
            (edit.kind == Kind::Rename).then(|| broken_uses(judge, &added, root, definition));
        let answers = questions::judge(judge, session, root, definition, questions, uses.as_ref());
        for (verdict, question, why) in answers {
            all.push(judged(verdict, question, why));
        }
    }
    let asked: Vec<&String> = truth.iter().take(FILES_ASKED).collect();
    let diagnostics = |file: &String| ask(session, "diagnostics", json!({"file": file}));
    let before: Vec<ToolOutcome> = asked.iter().map(|file| diagnostics(file)).collect();
    write();
    let written: Vec<ToolOutcome> = asked.iter().map(|file| diagnostics(file)).collect();
    undo();
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
    (all, took)
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

/// A stable hash of a name, so each project draws its own edits from one
/// seed.
pub fn fnv(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}
