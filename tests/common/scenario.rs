//! What the tests of the real hosts share: a small Python project with an
//! importer, named checks that report everything the model saw before a
//! test fails, the result of a call as the model saw it, and gates that
//! order two hosts' steps.

use super::host::Finished;
use super::model::{Model, ToolResult};
use super::project;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Longer than any one host run ([`super::host::HOST_DEADLINE`]) plus
/// the installs and a language server's start.
pub const TEST_LIMIT: Duration = Duration::from_secs(170);

pub const MATHUTIL: &str = "def add(a: int, b: int) -> int:\n    return a + b\n";
pub const APP: &str = "from pkg.mathutil import add\n\ntotal: int = add(1, 2)\n";
pub const RETURN: &str = "    return a + b";
/// A return that pyright reports at 2:12: a `str` where an `int` is due.
pub const BAD_RETURN: &str = "    return str(a + b)";

/// A small Python package: `pkg/app.py` imports `pkg/mathutil.py`.
pub fn python_project() -> (tempfile::TempDir, PathBuf) {
    let dir = project(&[
        ("pkg/__init__.py", ""),
        ("pkg/mathutil.py", MATHUTIL),
        ("pkg/app.py", APP),
    ]);
    let root = dir.path().canonicalize().unwrap();
    (dir, root)
}

/// Named checks that all run before the test fails, so that one report
/// says everything that reached the model, right or wrong.
pub struct Checks {
    what: &'static str,
    failed: Vec<String>,
}

impl Checks {
    pub fn new(what: &'static str) -> Checks {
        Checks {
            what,
            failed: Vec::new(),
        }
    }

    pub fn that(&mut self, claim: &str, holds: bool, seen: &str) {
        eprintln!(
            "{}: {} {claim}",
            self.what,
            if holds { "ok  " } else { "FAIL" }
        );
        if !holds {
            self.failed.push(format!("{claim}; the model saw:\n{seen}"));
        }
    }

    /// As [`Checks::finish`], writing also every event the daemon
    /// recorded (tool calls, publications, hook runs), when a check failed.
    pub fn finish_in(self, agents: &[(&Model, &Finished)], daemon: &super::Daemon) {
        if !self.failed.is_empty() {
            let events = std::process::Command::new(super::windlass_binary())
                .args(["query", "--format", "json", "--since", "1h"])
                .envs(daemon.environment())
                .output()
                .unwrap();
            let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hosts");
            std::fs::create_dir_all(&directory).unwrap();
            let name = self.what.replace(' ', "-");
            std::fs::write(directory.join(format!("{name}-events.json")), events.stdout).unwrap();
        }
        self.finish(agents);
    }

    /// Fails the test if a check failed, after writing what each agent's
    /// model received and its host printed under the target's temporary
    /// directory.
    pub fn finish(self, agents: &[(&Model, &Finished)]) {
        let directory = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hosts");
        let name = self.what.replace(' ', "-");
        for (index, (model, host)) in agents.iter().enumerate() {
            model.dump(&directory.join(format!("{name}-{index}-model.jsonl")));
            host.dump(&directory.join(format!("{name}-{index}-host.jsonl")));
        }
        assert!(
            self.failed.is_empty(),
            "{}: {} check(s) failed (what the models received and the hosts printed is in {}/{name}-*):\n\n{}",
            self.what,
            self.failed.len(),
            directory.display(),
            self.failed.join("\n\n")
        );
    }
}

/// What the model saw after the call of `turn`, failing when the host
/// never sent its result.
pub fn result(model: &Model, turn: usize) -> ToolResult {
    model.result(turn).unwrap_or_else(|| {
        panic!(
            "the host sent no result of the call made at turn {turn}; it made {} requests",
            model.turns()
        )
    })
}

/// The text without its whitespace: pyright breaks a long signature
/// over lines.
pub fn squashed(text: &str) -> String {
    text.split_whitespace().collect()
}

/// A result as a failed check shows it.
pub fn shown(result: &ToolResult) -> String {
    format!(
        "result{}: {}\ncontext: {}",
        if result.is_error { " (error)" } else { "" },
        result.text,
        result.context
    )
}

/// The session id Claude Code puts in its stream-json events: the owner
/// Windlass names when another agent holds a file.
pub fn session_id(run: &Finished) -> Option<String> {
    run.events
        .iter()
        .find_map(|(_, event)| event["session_id"].as_str())
        .map(str::to_owned)
}

/// A gate that holds a step until `model` has had `turns` main requests.
pub fn gate(model: &Model, turns: usize) -> impl FnOnce() + Send + 'static {
    let watch = model.watch();
    move || watch.wait_turns(turns, super::host::HOST_DEADLINE)
}
