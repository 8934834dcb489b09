//! The language table: one entry per language, with everything Windlass
//! knows of it: the LSP language id, the file extensions, file names and
//! `#!` interpreters that mark its files, the servers that speak it out of
//! the box in order of preference, and what a server needs to see a whole
//! project of it.
//!
//! Routing (a tool call on a file), start-up detection (which servers the
//! roots need), the built-in servers of the configuration and the index
//! gaps servers are warned of all read this one table, so they cannot
//! disagree, and a language is added with one entry.

use crate::vocabulary::diagnostics::Severity;
use globset::{Glob, GlobSet, GlobSetBuilder};
use serde_json::Value;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

/// A server Windlass knows how to run without configuration.
#[derive(Debug, PartialEq, Eq)]
pub struct BuiltIn {
    /// The configuration key it goes by, also its label in errors.
    pub name: &'static str,
    pub command: &'static str,
    pub args: &'static [&'static str],
    /// Arguments with which the binary must run and exit 0 before it is
    /// used: a binary on PATH may be only a shim (a rustup proxy without
    /// its component). `None` where the server has no such option.
    pub check: Option<&'static [&'static str]>,
    /// How a user installs it, for `doctor` and docs/languages.md.
    pub install: &'static str,
    pub role: Role,
    /// Files whose presence says a project chose this linter (its own
    /// configuration file): found on PATH and not configured, it serves
    /// only files in a directory holding one, or below it. Empty: every
    /// file of its languages.
    pub config_files: &'static [&'static str],
    /// Settings answered to its `workspace/configuration` when the user
    /// gives none, as JSON: what the editor it was written for would
    /// answer, where the server breaks on the protocol's `null`.
    pub settings: &'static str,
    /// Options sent with `initialize` when the user gives none, as JSON:
    /// for a server that reads its configuration only from them.
    pub initialization_options: Option<&'static str>,
    /// Whether a real-server test of this repository (`tests/real_*.rs`)
    /// drives it on real code; docs/languages.md says "not verified here"
    /// of the others, and `tests/languages.rs` holds the claim to the
    /// tests.
    pub verified: bool,
    /// Whether its diagnostics are asked for from the start: it publishes
    /// none (tsgo), or answers a question sooner than it publishes
    /// (pyright, which then publishes nothing more).
    pub pulls_diagnostics: bool,
    /// The tsserver plugin it answers through, if any: it hands its
    /// TypeScript questions to the client as `tsserver/request`s, which
    /// only a TypeScript server that loaded the plugin can answer.
    pub tsserver_plugin: Option<&'static str>,
    /// Where its references come from.
    pub references_from: ReferencesFrom,
    /// Whether it checks only the document it is told changed, not those
    /// that depend on it.
    pub checks_only_what_changed: bool,
    /// How long it may rest after the last message it was sent before it
    /// goes on with work it has not finished: quiet for less is not done.
    /// Pyright analyses open files in 50 ms slices, publishing between them
    /// what it has so far (a file it has only read as another's import, so
    /// without its type errors), and within 250 ms of a change or a request
    /// waits until those 250 ms have passed before the next slice.
    pub rests_after_input: Option<Duration>,
    /// Whether it lints each file by itself, so that another file's new
    /// content changes none of its answers (ruff): its open documents are
    /// neither sent again nor waited on when another file changes.
    pub lints_each_file_alone: bool,
    /// Whether it announces workspace folder changes but does not load a
    /// folder added later: it is restarted with the new folders instead.
    pub misses_added_folders: bool,
    /// Whether it checks only the last of the documents opened before it
    /// has its configuration: they are sent again once it has it.
    pub forgets_early_documents: bool,
    /// Whether a document sent again with the text it had is checked again
    /// only when the change asks for a rebuild (clangd's `forceRebuild`):
    /// otherwise it publishes nothing unless a header it includes differs
    /// from its last build, and one sent again after another file changed
    /// (or a header changed and changed back) was never answered.
    pub rebuilds_only_when_forced: bool,
    /// Whether it checks a file against the files it includes as saved,
    /// not as the client holds them (clangd 14, and later ones without
    /// `--use-dirty-headers`): an unsaved edit of a header shows nothing
    /// of what it does to its includers, so `check_edit` says those were
    /// not checked rather than call them unchanged.
    pub reads_includes_from_disk: bool,
    /// Whether it reads the project's files only at its start, and later
    /// only the documents it is sent (bash-language-server registers for
    /// no changes on disk): a file of its languages changed on disk and
    /// not open is opened and closed again, so that its references and
    /// symbols follow the disk rather than name lines that moved.
    pub reads_disk_only_at_start: bool,
    /// Whether it works on one `textDocument/references` at a time: the
    /// next one cancels the one it is working on, and one cancelled by the
    /// client before it began breaks every later one until the server
    /// restarts (pyright 1.1.414 answers them all "this._token.cancel is
    /// not a function"). Its references are asked one at a time, and one
    /// that times out is left to finish rather than cancelled.
    pub references_one_at_a_time: bool,
    /// Whether it answers a question about one file correctly while it
    /// loads the project: pyright checks a file and what it imports when
    /// asked, so its first hover on a million lines took 2.7 s asked at
    /// once and 14.7 s held until it had loaded. Such questions
    /// ([`FILE_QUESTIONS`]) are sent at once; those about the whole
    /// project still wait, unless the server loads what any question
    /// needs before answering it.
    pub while_loading: WhileLoading,
    /// The sources of the findings of a check that a save starts under
    /// progress and whose results it publishes with the document's
    /// (rust-analyzer's `cargo check`: `rustc`, `clippy`); none when it
    /// runs no such check. An answer after a save waits for that check,
    /// and `check_edit`, which saves nothing, leaves its findings out.
    pub save_check_sources: &'static [&'static str],
    /// Whether it groups files into projects by `tsconfig.json` and
    /// `jsconfig.json`, and gives a file opened outside them a project of
    /// its own, built from all it imports (tsserver's inferred projects):
    /// the index pass asks it only about the files of its projects
    /// (`tsconfig.rs`).
    pub projects_from_tsconfig: bool,
    /// Whether it runs tsserver's own commands (typescript-language-server's
    /// `typescript.tsserverRequest`), through which its diagnostics (its
    /// publications can mix the checks of two texts) and workspace
    /// symbols (its own search only the last document's projects) are
    /// asked of tsserver itself.
    pub tsserver_commands: bool,
}

/// Where a server's references come from; any narrower than the project
/// are cross-checked by text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReferencesFrom {
    #[default]
    Project,
    /// The documents it has open (the CSS server).
    OpenFiles,
    /// The files its settings' glob names, and the open ones
    /// (bash-language-server: `*.sh`, `*.bash`, not an extensionless
    /// script).
    NamedFiles,
    /// Only the scripts of the page asked about (the HTML server): an
    /// element or an `id` has none, and no other page is looked in.
    PageScripts,
    /// The paths the project's pyright configuration includes, and the
    /// open ones: the `[tool.…]` tables of `pyproject.toml` it reads, in
    /// its order (`pyrightconfig.json` comes first).
    PyrightIncluded(&'static [&'static str]),
}

/// What a built-in server is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Answers every question about its languages: the first one found
    /// on PATH serves a language nobody configured.
    Language,
    /// Adds diagnostics beside a language's server, and answers the
    /// questions it has the capability for that the language servers
    /// cannot. Every one found on PATH starts.
    Linter,
}

/// A language server, found on PATH, verified with `check`.
const fn server(
    name: &'static str,
    command: &'static str,
    args: &'static [&'static str],
    install: &'static str,
) -> BuiltIn {
    BuiltIn {
        name,
        command,
        args,
        check: None,
        install,
        role: Role::Language,
        config_files: &[],
        settings: "{}",
        initialization_options: None,
        verified: false,
        pulls_diagnostics: false,
        tsserver_plugin: None,
        references_from: ReferencesFrom::Project,
        checks_only_what_changed: false,
        rests_after_input: None,
        lints_each_file_alone: false,
        misses_added_folders: false,
        forgets_early_documents: false,
        rebuilds_only_when_forced: false,
        reads_includes_from_disk: false,
        reads_disk_only_at_start: false,
        references_one_at_a_time: false,
        while_loading: WhileLoading::Waits,
        save_check_sources: &[],
        projects_from_tsconfig: false,
        tsserver_commands: false,
    }
}

impl BuiltIn {
    const fn checked_with(self, check: &'static [&'static str]) -> Self {
        Self {
            check: Some(check),
            ..self
        }
    }

    const fn settings(self, settings: &'static str) -> Self {
        Self { settings, ..self }
    }

    /// Its default settings as JSON; an object in every case.
    pub fn default_settings(&self) -> Value {
        match serde_json::from_str(self.settings) {
            Ok(Value::Object(settings)) => Value::Object(settings),
            _ => Value::Object(Default::default()),
        }
    }

    const fn initialization_options(self, options: &'static str) -> Self {
        Self {
            initialization_options: Some(options),
            ..self
        }
    }

    /// Its default initialization options as JSON, if it has any.
    pub fn default_initialization_options(&self) -> Option<Value> {
        self.initialization_options
            .and_then(|options| serde_json::from_str(options).ok())
    }

    const fn only_beside(self, config_files: &'static [&'static str]) -> Self {
        Self {
            config_files,
            ..self
        }
    }

    const fn linter(self) -> Self {
        Self {
            role: Role::Linter,
            ..self
        }
    }

    const fn pulls_diagnostics(self) -> Self {
        Self {
            pulls_diagnostics: true,
            ..self
        }
    }

    const fn references_from(self, references_from: ReferencesFrom) -> Self {
        Self {
            references_from,
            ..self
        }
    }

    const fn checks_on_save(self, sources: &'static [&'static str]) -> Self {
        Self {
            save_check_sources: sources,
            ..self
        }
    }

    const fn rests_after_input(self, rest: Duration) -> Self {
        Self {
            rests_after_input: Some(rest),
            ..self
        }
    }

    const fn checks_only_what_changed(self) -> Self {
        Self {
            checks_only_what_changed: true,
            ..self
        }
    }

    const fn lints_each_file_alone(self) -> Self {
        Self {
            lints_each_file_alone: true,
            ..self
        }
    }

    const fn misses_added_folders(self) -> Self {
        Self {
            misses_added_folders: true,
            ..self
        }
    }

    const fn forgets_early_documents(self) -> Self {
        Self {
            forgets_early_documents: true,
            ..self
        }
    }

    const fn rebuilds_only_when_forced(self) -> Self {
        Self {
            rebuilds_only_when_forced: true,
            ..self
        }
    }

    const fn reads_includes_from_disk(self) -> Self {
        Self {
            reads_includes_from_disk: true,
            ..self
        }
    }

    const fn reads_disk_only_at_start(self) -> Self {
        Self {
            reads_disk_only_at_start: true,
            ..self
        }
    }

    const fn references_one_at_a_time(self) -> Self {
        Self {
            references_one_at_a_time: true,
            ..self
        }
    }

    const fn while_loading(self, while_loading: WhileLoading) -> Self {
        Self {
            while_loading,
            ..self
        }
    }

    const fn projects_from_tsconfig(self) -> Self {
        Self {
            projects_from_tsconfig: true,
            ..self
        }
    }

    const fn tsserver_commands(self) -> Self {
        Self {
            pulls_diagnostics: true,
            tsserver_commands: true,
            ..self
        }
    }

    const fn through_tsserver_plugin(self, plugin: &'static str) -> Self {
        Self {
            tsserver_plugin: Some(plugin),
            ..self
        }
    }

    const fn verified(self) -> Self {
        Self {
            verified: true,
            ..self
        }
    }
}

/// What a server answers while it loads its workspace, and so which
/// questions are held until it has loaded, and what it takes in before
/// its next answer. Under `Waits`, every question also waits while the
/// server takes in a change on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhileLoading {
    /// Empty or partial answers: every question waits.
    Waits,
    /// A question about one file, correctly (pyright checks the file and
    /// what it imports when asked): [`FILE_QUESTIONS`] are sent at once.
    /// For the same reason a file changed, on disk or as a document, is
    /// taken in before the next answer (pyright marks it dirty as it reads
    /// the notification). Files created or deleted on disk change its list
    /// of files after a pause: questions about the whole project wait for
    /// that, while those about one file, whose imports it resolves when
    /// asked, do not.
    AnswersFiles,
    /// Any question, once it has taken in everything sent before it,
    /// which it does before answering: one tsserver loads a file's
    /// project when the file is opened, and reads a change on disk its
    /// client tells it of before its next answer. Nothing is held, while
    /// it loads or after a change.
    TakesAllInFirst,
}

impl WhileLoading {
    /// Whether every answer already reflects what was sent before its
    /// question, so that nothing need wait for the server to go quiet.
    pub fn takes_all_in_first(self) -> bool {
        self == Self::TakesAllInFirst
    }

    /// Whether a file's new content, on disk or as a document, is taken
    /// in before the next answer.
    pub fn takes_changed_files_in_first(self) -> bool {
        self != Self::Waits
    }
}

/// Files a server needs to see a whole project; without one, what it says
/// about the project is partial.
#[derive(Debug, PartialEq, Eq)]
pub struct ProjectFiles {
    pub names: &'static [&'static str],
    /// How deep under a root to look for one.
    pub depth: usize,
    /// What is missing without one, after the server's label.
    pub gap: &'static str,
    /// Whether every answer of the server misses it, not only those
    /// that need the whole project (references, renames, symbols).
    pub every_answer: bool,
}

/// One language.
#[derive(Debug)]
pub struct Language {
    /// Its LSP language id.
    pub id: &'static str,
    /// Lower case, without the dot.
    pub extensions: &'static [&'static str],
    /// Names that decide the language by themselves.
    pub file_names: &'static [&'static str],
    /// Beginnings of names that do (`Dockerfile.` of `Dockerfile.dev`).
    pub name_prefixes: &'static [&'static str],
    /// Programs a `#!` line names (`python3` in `#!/usr/bin/env python3`).
    pub interpreters: &'static [&'static str],
    /// Built-in servers, the preferred first.
    pub servers: &'static [&'static BuiltIn],
    pub project: Option<&'static ProjectFiles>,
    /// Data or configuration rather than program code (JSON, YAML, TOML,
    /// Markdown): in a project with code, its server starts only when a
    /// question needs it.
    pub data: bool,
    /// Languages whose modules its files import although their servers
    /// do not read its files (a Svelte component's script imports
    /// TypeScript, which typescript-language-server never sees): their
    /// references are cross-checked in its files by text.
    pub imports_from: &'static [&'static str],
}

impl Language {
    const fn new(id: &'static str) -> Self {
        Self {
            id,
            extensions: &[],
            file_names: &[],
            name_prefixes: &[],
            interpreters: &[],
            servers: &[],
            project: None,
            data: false,
            imports_from: &[],
        }
    }
}

const VERSION: &[&str] = &["--version"];

// By default it answers a symbol query with types alone whenever a type
// matches it (`pow` gave the trait `Pow`, never its method or the
// function `pow`), and stops at 128 symbols, which a macro implementing
// a trait for every integer type fills before the trait's own method.
// It reads these settings from the initialization options only.
const RUST_ANALYZER: BuiltIn = server(
    "rust",
    "rust-analyzer",
    &[],
    "rustup component add rust-analyzer, or cargo install --locked ra_ap_rust-analyzer@0.0.330",
)
.initialization_options(
    r#"{"workspace": {"symbol": {"search": {"kind": "all_symbols", "limit": 2000}}}}"#,
)
.checked_with(VERSION)
.checks_on_save(&["rustc", "clippy"])
.verified();

/// Pyright's rest between slices of analysis after input (250 ms), with
/// room for its event loop to be late.
const PYRIGHT_REST: Duration = Duration::from_millis(300);
const PYRIGHT: BuiltIn = server(
    "python",
    "pyright-langserver",
    &["--stdio"],
    "npm install -g pyright",
)
.pulls_diagnostics()
.references_one_at_a_time()
.references_from(ReferencesFrom::PyrightIncluded(&["pyright"]))
.rests_after_input(PYRIGHT_REST)
.while_loading(WhileLoading::AnswersFiles)
.verified();
const BASEDPYRIGHT: BuiltIn = server(
    "basedpyright",
    "basedpyright-langserver",
    &["--stdio"],
    "pip install basedpyright",
)
.pulls_diagnostics()
.references_one_at_a_time()
.references_from(ReferencesFrom::PyrightIncluded(&[
    "basedpyright",
    "pyright",
]))
.rests_after_input(PYRIGHT_REST)
.while_loading(WhileLoading::AnswersFiles)
.verified();
// Without its extras it has no linter and reports no problems at all.
const PYLSP: BuiltIn = server(
    "pylsp",
    "pylsp",
    &[],
    "pip install \"python-lsp-server[all]\"",
)
.checked_with(VERSION)
.verified();
const JEDI: BuiltIn = server(
    "jedi",
    "jedi-language-server",
    &[],
    "pip install jedi-language-server",
)
.checked_with(VERSION)
.verified();
const PYREFLY: BuiltIn = server("pyrefly", "pyrefly", &["lsp"], "pip install pyrefly")
    .checked_with(VERSION)
    .verified();
const TY: BuiltIn = server("ty", "ty", &["server"], "pip install ty")
    .checked_with(VERSION)
    .verified();
// Asked, ruff answers from the text it holds in about a millisecond;
// waited for, each publication had to be seen followed by a quiet sample
// of its process, 20 to 40 ms after every edit.
const RUFF: BuiltIn = server("ruff", "ruff", &["server"], "pip install ruff")
    .checked_with(VERSION)
    .pulls_diagnostics()
    .linter()
    .lints_each_file_alone()
    .verified();

// One tsserver, not two: with its syntax server beside it, a hover or a
// definition asked while a project loads (and before the first has
// loaded) is answered by the syntax server, without the types of other
// files. Alone, tsserver loads a file's project when the file is opened,
// before it answers anything asked after. Told of changes on disk by its
// client (`useClientFileWatcher`: through typescript-language-server, in
// order with everything else) instead of by watchers of its own, it has
// read them before it answers the next question. So no question is held.
const TYPESCRIPT_LANGUAGE_SERVER: BuiltIn = server(
    "typescript",
    "typescript-language-server",
    &["--stdio"],
    "npm install -g typescript typescript-language-server",
)
.initialization_options(
    r#"{"tsserver": {"useSyntaxServer": "never", "useClientFileWatcher": true}}"#,
)
.while_loading(WhileLoading::TakesAllInFirst)
.checked_with(VERSION)
.projects_from_tsconfig()
.tsserver_commands()
.verified();
const TSGO: BuiltIn = server(
    "tsgo",
    "tsgo",
    &["--lsp", "--stdio"],
    "npm install -g @typescript/native-preview",
)
.checked_with(VERSION)
.pulls_diagnostics()
.projects_from_tsconfig()
.verified();
// It runs the project's own ESLint, and reads every setting VS Code's
// extension would send (all at once, as the empty section) without
// defaults of its own: a missing `experimental` or `nodePath` throws, and
// the file is then never linted.
const ESLINT: BuiltIn = server(
    "eslint",
    "vscode-eslint-language-server",
    &["--stdio"],
    "npm install -g vscode-langservers-extracted",
)
.settings(
    r#"{"validate": "on", "run": "onType", "packageManager": "npm", "nodePath": null,
        "useESLintClass": false, "experimental": {"useFlatConfig": false},
        "options": {}, "format": false, "quiet": false, "onIgnoredFiles": "off",
        "rulesCustomizations": [], "problems": {"shortenToSingleLine": false},
        "codeActionOnSave": {"enable": false, "mode": "all"},
        "codeAction": {"disableRuleComment": {"enable": true, "location": "separateLine",
        "commentStyle": "line"}, "showDocumentation": {"enable": true}}}"#,
)
.linter()
.only_beside(&[
    "eslint.config.js",
    "eslint.config.mjs",
    "eslint.config.cjs",
    "eslint.config.ts",
    "eslint.config.mts",
    "eslint.config.cts",
    ".eslintrc.js",
    ".eslintrc.cjs",
    ".eslintrc.json",
    ".eslintrc.yaml",
    ".eslintrc.yml",
])
.verified();
// Its recommended rules are a project's choice: beside no `biome.json`,
// it would add lints to every TypeScript, JSON and CSS answer of projects
// that never chose them (`noExplicitAny` six times in one file of zod).
const BIOME: BuiltIn = server(
    "biome",
    "biome",
    &["lsp-proxy"],
    "npm install -g @biomejs/biome",
)
.checked_with(VERSION)
.linter()
.only_beside(&["biome.json", "biome.jsonc"])
.verified();

const GOPLS: BuiltIn = server(
    "go",
    "gopls",
    &[],
    "go install golang.org/x/tools/gopls@latest, or apt install gopls",
)
.checked_with(&["version"])
.verified();
const CLANGD: BuiltIn = server("c,cpp", "clangd", &[], "apt install clangd")
    .checked_with(VERSION)
    .rebuilds_only_when_forced()
    .reads_includes_from_disk()
    .verified();
// It lints a document when it opens, but before it has read its
// configuration it keeps only the last one opened, and lints that alone
// once it has (5.8.1): the others were never checked until they changed.
const BASH_LANGUAGE_SERVER: BuiltIn = server(
    "shell",
    "bash-language-server",
    &["start"],
    "npm install -g bash-language-server",
)
.checked_with(VERSION)
.forgets_early_documents()
.reads_disk_only_at_start()
.references_from(ReferencesFrom::NamedFiles)
.verified();

const YAML_LANGUAGE_SERVER: BuiltIn = server(
    "yaml",
    "yaml-language-server",
    &["--stdio"],
    "npm install -g yaml-language-server",
)
.checked_with(VERSION)
.verified();
const JSON_LANGUAGE_SERVER: BuiltIn = server(
    "json",
    "vscode-json-language-server",
    &["--stdio"],
    "npm install -g vscode-langservers-extracted",
)
.verified();
// It reads its lint rules from the section of each language and fails
// every validation when the section is `null`. Its references are those
// in the file asked about: a custom property used in nine files is "1
// reference in 1 file".
// Asked for its diagnostics: it publishes a check 500 ms after the last
// change, and drops one that a change overtakes; asked, it checks the
// document at once.
const CSS_LANGUAGE_SERVER: BuiltIn = server(
    "css",
    "vscode-css-language-server",
    &["--stdio"],
    "npm install -g vscode-langservers-extracted",
)
.settings(
    r#"{"css": {"validate": true, "lint": {}}, "scss": {"validate": true, "lint": {}},
        "less": {"validate": true, "lint": {}}}"#,
)
.references_from(ReferencesFrom::OpenFiles)
.pulls_diagnostics()
.verified();
// It checks embedded styles with the CSS server's rules, read from the
// same `css` section, and breaks the same way on `null`. It finds
// references only in the page's own scripts: the `fragments` slide of
// reveal.js's demo, named three times on its page, has "no references".
const HTML_LANGUAGE_SERVER: BuiltIn = server(
    "html",
    "vscode-html-language-server",
    &["--stdio"],
    "npm install -g vscode-langservers-extracted",
)
.settings(
    r#"{"html": {"validate": {"scripts": true, "styles": true}},
        "css": {"validate": true, "lint": {}}}"#,
)
.references_from(ReferencesFrom::PageScripts)
.verified();
const DOCKERFILE_LANGUAGE_SERVER: BuiltIn = server(
    "dockerfile",
    "docker-langserver",
    &["--stdio"],
    "npm install -g dockerfile-language-server-nodejs",
)
.verified();
const TAPLO: BuiltIn = server(
    "toml",
    "taplo",
    &["lsp", "stdio"],
    "cargo install --locked taplo-cli --features lsp (the npm and PyPI builds have no language server)",
)
// A build without its language server (npm's, PyPI's) fails this and is
// shown as unusable rather than started to crash.
.checked_with(&["lsp", "--help"])
.verified();
// It checks only the file it is told changed, and re-reads a changed file
// after a pause: a dependent sent again during it is checked against the
// old file. It announces workspace folder changes, but a folder added
// later is never indexed (1.18.5: "128 of 128 files indexed in 0.0 s",
// then every type from the folder undefined).
const INTELEPHENSE: BuiltIn = server(
    "php",
    "intelephense",
    &["--stdio"],
    "npm install -g intelephense",
)
.checks_only_what_changed()
.misses_added_folders()
.verified();
// It answers templates and styles itself, and asks everything TypeScript
// of the session's typescript-language-server, started with its plugin.
// It runs the TypeScript of the `tsserver` on PATH: the one it would
// load by itself is its peer dependency, TypeScript 7 since its release,
// which has no tsserver API and crashes it on the first file.
const VUE_LANGUAGE_SERVER: BuiltIn = server(
    "vue",
    "vue-language-server",
    &["--stdio"],
    "npm install -g @vue/language-server typescript@5 typescript-language-server",
)
.checked_with(VERSION)
.through_tsserver_plugin("@vue/typescript-plugin")
.verified();
// Asked for its diagnostics: when it publishes them, a check that a newer
// change cancels still publishes, and publishes an empty list.
const SVELTE_LANGUAGE_SERVER: BuiltIn = server(
    "svelte",
    "svelteserver",
    &["--stdio"],
    "npm install -g svelte-language-server",
)
.pulls_diagnostics()
.verified();
// Its published dependency ranges now resolve to a protocol library
// whose exports hide a module it imports, and it does not start; pinned
// to the protocol of its time it starts. It parses a MySQL-flavoured
// subset of SQL, lints what it parses (sqlint's rules), completes
// keywords, and has no hover, definition or outline.
const SQL_LANGUAGE_SERVER: BuiltIn = server(
    "sql",
    "sql-language-server",
    &["up", "--method", "stdio"],
    "npm install sql-language-server@1.7.1 in a package whose overrides pin \
     vscode-languageserver-protocol to 3.16.0, its bin on PATH",
)
.verified();
const GRAPHQL_LSP: BuiltIn = server(
    "graphql",
    "graphql-lsp",
    &["server", "-m", "stream"],
    "npm install -g graphql-language-service-cli",
)
.checked_with(VERSION)
.checks_only_what_changed()
.verified();
const MARKSMAN: BuiltIn = server(
    "markdown",
    "marksman",
    &["server"],
    "a release binary from github.com/artempyanykh/marksman",
);
const JDTLS: BuiltIn = server(
    "java",
    "jdtls",
    &[],
    "Eclipse JDT LS from download.eclipse.org/jdtls (its `jdtls` launcher on PATH)",
);
const KOTLIN_LANGUAGE_SERVER: BuiltIn = server(
    "kotlin",
    "kotlin-language-server",
    &[],
    "a release from github.com/fwcd/kotlin-language-server",
);
const CSHARP_LS: BuiltIn = server(
    "csharp",
    "csharp-ls",
    &[],
    "dotnet tool install --global csharp-ls",
)
.checked_with(VERSION);
const RUBY_LSP: BuiltIn = server("ruby", "ruby-lsp", &[], "gem install ruby-lsp");
const SOLARGRAPH: BuiltIn = server(
    "solargraph",
    "solargraph",
    &["stdio"],
    "gem install solargraph",
)
.checked_with(VERSION);
const LUA_LANGUAGE_SERVER: BuiltIn = server(
    "lua",
    "lua-language-server",
    &[],
    "a release from github.com/LuaLS/lua-language-server",
)
.checked_with(VERSION);
const ZLS: BuiltIn =
    server("zig", "zls", &[], "a release from github.com/zigtools/zls").checked_with(VERSION);
const SOURCEKIT_LSP: BuiltIn = server(
    "swift",
    "sourcekit-lsp",
    &[],
    "the Swift toolchain from swift.org (it ships sourcekit-lsp)",
);
const ELIXIR_LS: BuiltIn = server(
    "elixir",
    "elixir-ls",
    &[],
    "a release from github.com/elixir-lsp/elixir-ls (its launcher on PATH as elixir-ls)",
);
const HASKELL_LANGUAGE_SERVER: BuiltIn = server(
    "haskell",
    "haskell-language-server-wrapper",
    &["--lsp"],
    "ghcup install hls",
)
.checked_with(VERSION);
const OCAMLLSP: BuiltIn =
    server("ocaml", "ocamllsp", &[], "opam install ocaml-lsp-server").checked_with(VERSION);
const TERRAFORM_LS: BuiltIn = server(
    "terraform",
    "terraform-ls",
    &["serve"],
    "a release from releases.hashicorp.com/terraform-ls",
)
.checked_with(&["version"]);

const COMPILATION_DATABASE: ProjectFiles = ProjectFiles {
    names: &["compile_commands.json"],
    depth: 3,
    gap: "has no compile_commands.json, so it knows only the files it has opened; \
          references, renames and callers may be incomplete",
    every_answer: false,
};
const GO_MODULE: ProjectFiles = ProjectFiles {
    names: &["go.mod", "go.work"],
    depth: 3,
    gap: "has no go.mod or go.work, so it cannot load the packages as a module; references \
          and diagnostics may be incomplete",
    every_answer: false,
};
const TSCONFIG: ProjectFiles = ProjectFiles {
    names: &["tsconfig.json", "jsconfig.json"],
    depth: 4,
    gap: "has no tsconfig.json or jsconfig.json, so it sees only the files that open files \
          import; references, renames and symbols may be incomplete",
    every_answer: false,
};
// graphql-config's file names; without one the server knows no schema.
const GRAPHQL_CONFIG: ProjectFiles = ProjectFiles {
    names: &[
        ".graphqlrc",
        ".graphqlrc.yml",
        ".graphqlrc.yaml",
        ".graphqlrc.json",
        ".graphqlrc.toml",
        ".graphqlrc.js",
        ".graphqlrc.ts",
        "graphql.config.yml",
        "graphql.config.yaml",
        "graphql.config.json",
        "graphql.config.toml",
        "graphql.config.js",
        "graphql.config.cjs",
        "graphql.config.ts",
    ],
    depth: 3,
    gap: "has no GraphQL config (.graphqlrc.yml or graphql.config.*) naming the schema, so it \
          checks syntax only: validation, hover and definitions know no schema",
    every_answer: true,
};

const PYTHON_SERVERS: &[&BuiltIn] = &[&PYRIGHT, &BASEDPYRIGHT, &PYLSP, &JEDI, &PYREFLY, &TY, &RUFF];
const SCRIPT_SERVERS: &[&BuiltIn] = &[&TYPESCRIPT_LANGUAGE_SERVER, &TSGO, &ESLINT, &BIOME];

/// Every language Windlass knows, in the order their built-in servers are
/// preferred when several could start.
/// The questions about one file that a server answering files while it
/// loads (`WhileLoading::AnswersFiles`) is sent at once: each needs the
/// file and what it imports, not every file of the project.
pub const FILE_QUESTIONS: &[&str] = &[
    "textDocument/hover",
    "textDocument/definition",
    "textDocument/declaration",
    "textDocument/typeDefinition",
    "textDocument/documentSymbol",
    "textDocument/signatureHelp",
];

pub const LANGUAGES: &[Language] = &[
    Language {
        extensions: &["rs"],
        servers: &[&RUST_ANALYZER],
        ..Language::new("rust")
    },
    Language {
        extensions: &["py", "pyi", "pyw"],
        interpreters: &["python", "python2", "python3", "pypy", "pypy3"],
        servers: PYTHON_SERVERS,
        ..Language::new("python")
    },
    Language {
        extensions: &["ts", "mts", "cts"],
        interpreters: &["ts-node", "tsx", "deno", "bun"],
        servers: SCRIPT_SERVERS,
        project: Some(&TSCONFIG),
        ..Language::new("typescript")
    },
    Language {
        extensions: &["tsx"],
        servers: SCRIPT_SERVERS,
        project: Some(&TSCONFIG),
        ..Language::new("typescriptreact")
    },
    Language {
        extensions: &["js", "mjs", "cjs"],
        interpreters: &["node", "nodejs"],
        servers: SCRIPT_SERVERS,
        project: Some(&TSCONFIG),
        ..Language::new("javascript")
    },
    Language {
        extensions: &["jsx"],
        servers: SCRIPT_SERVERS,
        project: Some(&TSCONFIG),
        ..Language::new("javascriptreact")
    },
    Language {
        extensions: &["go"],
        servers: &[&GOPLS],
        project: Some(&GO_MODULE),
        ..Language::new("go")
    },
    Language {
        extensions: &["c"],
        servers: &[&CLANGD],
        project: Some(&COMPILATION_DATABASE),
        ..Language::new("c")
    },
    Language {
        // `.h` is C++ here and falls back to C (`candidate_languages`).
        extensions: &[
            "h", "cpp", "cc", "cxx", "c++", "hpp", "hh", "hxx", "h++", "ipp", "inl",
        ],
        servers: &[&CLANGD],
        project: Some(&COMPILATION_DATABASE),
        ..Language::new("cpp")
    },
    Language {
        extensions: &["sh", "bash", "zsh", "ksh"],
        file_names: &[".bashrc", ".bash_profile", ".profile", ".zshrc"],
        interpreters: &["sh", "bash", "dash", "zsh", "ksh"],
        servers: &[&BASH_LANGUAGE_SERVER],
        ..Language::new("shellscript")
    },
    Language {
        extensions: &["yaml", "yml"],
        servers: &[&YAML_LANGUAGE_SERVER],
        data: true,
        ..Language::new("yaml")
    },
    Language {
        extensions: &["json", "webmanifest"],
        file_names: &[".babelrc"],
        servers: &[&JSON_LANGUAGE_SERVER, &BIOME],
        data: true,
        ..Language::new("json")
    },
    Language {
        extensions: &["jsonc", "json5"],
        file_names: &[
            "tsconfig.json",
            "jsconfig.json",
            ".eslintrc.json",
            "devcontainer.json",
        ],
        servers: &[&JSON_LANGUAGE_SERVER, &BIOME],
        data: true,
        ..Language::new("jsonc")
    },
    Language {
        extensions: &["css"],
        servers: &[&CSS_LANGUAGE_SERVER, &BIOME],
        ..Language::new("css")
    },
    Language {
        extensions: &["scss"],
        servers: &[&CSS_LANGUAGE_SERVER],
        ..Language::new("scss")
    },
    Language {
        extensions: &["less"],
        servers: &[&CSS_LANGUAGE_SERVER],
        ..Language::new("less")
    },
    Language {
        extensions: &["html", "htm", "xhtml"],
        servers: &[&HTML_LANGUAGE_SERVER],
        ..Language::new("html")
    },
    Language {
        extensions: &["dockerfile", "containerfile"],
        file_names: &["Dockerfile", "Containerfile"],
        name_prefixes: &["Dockerfile.", "Containerfile."],
        servers: &[&DOCKERFILE_LANGUAGE_SERVER],
        ..Language::new("dockerfile")
    },
    Language {
        extensions: &["toml"],
        file_names: &["Pipfile"],
        servers: &[&TAPLO],
        data: true,
        ..Language::new("toml")
    },
    Language {
        extensions: &["php", "phtml", "php8"],
        interpreters: &["php"],
        servers: &[&INTELEPHENSE],
        ..Language::new("php")
    },
    Language {
        extensions: &["vue"],
        servers: &[&VUE_LANGUAGE_SERVER],
        ..Language::new("vue")
    },
    Language {
        extensions: &["svelte"],
        servers: &[&SVELTE_LANGUAGE_SERVER],
        imports_from: &["typescript", "javascript"],
        ..Language::new("svelte")
    },
    Language {
        extensions: &["sql"],
        servers: &[&SQL_LANGUAGE_SERVER],
        ..Language::new("sql")
    },
    Language {
        extensions: &["graphql", "graphqls", "gql"],
        servers: &[&GRAPHQL_LSP],
        project: Some(&GRAPHQL_CONFIG),
        ..Language::new("graphql")
    },
    Language {
        extensions: &["md", "markdown", "mdown", "mkd"],
        servers: &[&MARKSMAN],
        data: true,
        ..Language::new("markdown")
    },
    Language {
        extensions: &["java"],
        servers: &[&JDTLS],
        ..Language::new("java")
    },
    Language {
        extensions: &["kt", "kts"],
        servers: &[&KOTLIN_LANGUAGE_SERVER],
        ..Language::new("kotlin")
    },
    Language {
        extensions: &["cs", "csx"],
        servers: &[&CSHARP_LS],
        ..Language::new("csharp")
    },
    Language {
        extensions: &["rb", "rake", "gemspec", "ru", "erb"],
        file_names: &["Gemfile", "Rakefile", "Guardfile", "Podfile", "Vagrantfile"],
        interpreters: &["ruby", "jruby"],
        servers: &[&RUBY_LSP, &SOLARGRAPH],
        ..Language::new("ruby")
    },
    Language {
        extensions: &["lua"],
        interpreters: &["lua", "luajit"],
        servers: &[&LUA_LANGUAGE_SERVER],
        ..Language::new("lua")
    },
    Language {
        extensions: &["zig", "zon"],
        servers: &[&ZLS],
        ..Language::new("zig")
    },
    Language {
        extensions: &["swift"],
        servers: &[&SOURCEKIT_LSP],
        ..Language::new("swift")
    },
    Language {
        extensions: &["ex", "exs", "heex"],
        interpreters: &["elixir"],
        servers: &[&ELIXIR_LS],
        ..Language::new("elixir")
    },
    Language {
        extensions: &["hs", "lhs"],
        interpreters: &["runghc", "runhaskell"],
        servers: &[&HASKELL_LANGUAGE_SERVER],
        ..Language::new("haskell")
    },
    Language {
        extensions: &["ml", "mli"],
        interpreters: &["ocaml"],
        servers: &[&OCAMLLSP],
        ..Language::new("ocaml")
    },
    Language {
        extensions: &["tf", "tfvars"],
        servers: &[&TERRAFORM_LS],
        ..Language::new("terraform")
    },
    Language {
        extensions: &["mk"],
        file_names: &["Makefile", "GNUmakefile", "makefile"],
        interpreters: &["make"],
        ..Language::new("makefile")
    },
    Language {
        file_names: &["CMakeLists.txt"],
        extensions: &["cmake"],
        ..Language::new("cmake")
    },
    Language {
        extensions: &["txt"],
        ..Language::new("plaintext")
    },
];

/// A header whose own language has no server may be served by these: a C
/// header is as much C as C++.
const HEADER_FALLBACKS: &[(&str, &str, &str)] = &[("h", "cpp", "c")];

/// Longest `#!` line read to find a file's interpreter.
const MAX_SHEBANG: usize = 128;

/// The language of a file: its name (or how it begins), else its
/// extension, else, for a file without an extension, the program its
/// `#!` line names.
pub fn language_of(path: &Path) -> Option<&'static Language> {
    let name = path.file_name()?.to_str()?;
    let named = |language: &&Language| {
        language.file_names.contains(&name)
            || language
                .name_prefixes
                .iter()
                .any(|prefix| name.starts_with(prefix))
    };
    if let Some(language) = LANGUAGES.iter().find(named) {
        return Some(language);
    }
    match path.extension() {
        Some(extension) => {
            let extension = extension.to_str()?.to_ascii_lowercase();
            LANGUAGES
                .iter()
                .find(|language| language.extensions.contains(&extension.as_str()))
        }
        None => {
            let interpreter = interpreter(path)?;
            LANGUAGES
                .iter()
                .find(|language| language.interpreters.contains(&interpreter.as_str()))
        }
    }
}

/// Whether the language of this id is data or configuration, not code.
pub fn is_data(id: &str) -> bool {
    LANGUAGES
        .iter()
        .any(|language| language.id == id && language.data)
}

/// The languages whose files import modules of `languages` (ids).
pub fn importers_of(languages: &[String]) -> Vec<&'static str> {
    LANGUAGES
        .iter()
        .filter(|language| {
            language
                .imports_from
                .iter()
                .any(|imported| languages.iter().any(|served| served == imported))
        })
        .map(|language| language.id)
        .collect()
}

/// The LSP language id of a file.
pub fn language_id(path: &Path) -> Option<&'static str> {
    language_of(path).map(|language| language.id)
}

/// The program a file's `#!` line runs, through `env` if it goes through
/// it, without a version suffix's dots (`python3.12` is `python3`).
fn interpreter(path: &Path) -> Option<String> {
    let mut start = [0u8; MAX_SHEBANG];
    let mut file = std::fs::File::open(path).ok()?;
    let read = file.read(&mut start).ok()?;
    let line = start[..read].strip_prefix(b"#!")?;
    let line = line.split(|byte| *byte == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let mut program = words.next()?.rsplit('/').next()?;
    if program == "env" {
        program = words.find(|word| !word.starts_with('-'))?;
    }
    let program = program.split_once('.').map_or(program, |(name, _)| name);
    Some(program.to_owned())
}

/// Languages to try for a file, its own first. Only a header falls back.
pub fn candidate_languages(path: &Path) -> Vec<&'static str> {
    let Some(own) = language_id(path) else {
        return Vec::new();
    };
    let extension = path
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default();
    std::iter::once(own)
        .chain(
            HEADER_FALLBACKS
                .iter()
                .filter(|(header, from, _)| *header == extension && *from == own)
                .map(|(_, _, to)| *to),
        )
        .collect()
}

/// Each built-in server once, in the table's order, with every language
/// that lists it.
pub fn built_in_servers() -> Vec<(&'static BuiltIn, Vec<&'static str>)> {
    let mut servers: Vec<(&'static BuiltIn, Vec<&'static str>)> = Vec::new();
    for language in LANGUAGES {
        for server in language.servers {
            match servers.iter_mut().find(|(known, _)| known == server) {
                Some((_, languages)) => languages.push(language.id),
                None => servers.push((server, vec![language.id])),
            }
        }
    }
    servers
}

/// Every file name some built-in linter takes as a project's choice of it
/// ([`BuiltIn::config_files`]).
pub fn config_file_names() -> impl Iterator<Item = &'static str> {
    built_in_servers()
        .into_iter()
        .flat_map(|(server, _)| server.config_files.iter().copied())
}

/// What a server of `language` needs to see a whole project, if anything.
pub fn project_files(language: &str) -> Option<&'static ProjectFiles> {
    LANGUAGES
        .iter()
        .find(|known| known.id == language)
        .and_then(|known| known.project)
}

/// How to run one language server, after every configuration layer.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// The configuration key, also the label in errors (`[python] …`).
    pub name: String,
    pub command: String,
    pub args: Vec<String>,
    /// LSP language ids this one process serves.
    pub languages: Vec<String>,
    pub initialization_options: Option<Value>,
    /// Answered to `workspace/configuration`, looked up by section.
    pub settings: Value,
    /// For a server found on PATH rather than configured: arguments with
    /// which the command must run and exit 0 before it is used.
    pub check: Option<Vec<String>>,
    /// Whether its diagnostics are asked for (`textDocument/diagnostic`)
    /// from the start rather than waited for.
    pub pull_diagnostics: bool,
    /// Where its references come from: any narrower than the project are
    /// cross-checked by text.
    pub references_from: ReferencesFrom,
    /// Whether it checks only the document it is told changed, so that a
    /// dependent is sent again once it has taken the change in.
    pub checks_only_what_changed: bool,
    /// How long it may rest after input before going on with unfinished
    /// work.
    pub rests_after_input: Option<Duration>,
    /// Whether another file's new content changes none of its answers.
    pub lints_each_file_alone: bool,
    /// Whether it is restarted with new workspace folders though it
    /// announces that it takes them.
    pub misses_added_folders: bool,
    /// Whether the documents opened before it has its configuration are
    /// sent again once it has.
    pub forgets_early_documents: bool,
    /// Whether a document sent again unchanged after a change elsewhere
    /// must ask for a rebuild to be checked again.
    pub rebuilds_only_when_forced: bool,
    /// Whether an unsaved edit of a file it includes goes unseen by the
    /// files that include it ([`BuiltIn::reads_includes_from_disk`]).
    pub reads_includes_from_disk: bool,
    /// Whether a file changed on disk that is not open is opened and
    /// closed again, for a server that reads the disk only at its start.
    pub reads_disk_only_at_start: bool,
    /// Whether its references are asked one at a time and never cancelled.
    pub references_one_at_a_time: bool,
    /// Which questions are sent while it loads.
    pub while_loading: WhileLoading,
    /// The sources of the findings of the check a save starts; an answer
    /// after a save waits for that check.
    pub save_check_sources: Vec<String>,
    /// Whether the index pass asks it only about the files of a
    /// `tsconfig.json`'s project ([`BuiltIn::projects_from_tsconfig`]).
    pub projects_from_tsconfig: bool,
    /// Whether its diagnostics of TypeScript and JavaScript, and its
    /// workspace symbols, are asked of tsserver
    /// ([`BuiltIn::tsserver_commands`]).
    pub tsserver_commands: bool,
    /// How the session uses it; not part of what makes it one process.
    pub duties: Duties,
}

/// How a session uses one of its servers among the others of its
/// languages.
#[derive(Debug, Clone, PartialEq)]
pub struct Duties {
    pub role: Role,
    /// Whether its diagnostics are part of the `diagnostics` answer.
    pub diagnostics: bool,
    /// Its diagnostics less severe than this are left out.
    pub min_severity: Option<Severity>,
    /// Globs the end of a file's path must match for it to serve the
    /// file; none: every file of its languages.
    pub file_patterns: Vec<String>,
    /// A linter started because it was found, not configured: the files
    /// one of which must be in the file's directory or above it
    /// ([`BuiltIn::config_files`]).
    pub config_files: &'static [&'static str],
}

impl Duties {
    pub fn of(role: Role) -> Self {
        Self {
            role,
            diagnostics: true,
            min_severity: None,
            file_patterns: Vec::new(),
            config_files: &[],
        }
    }

    /// `file_patterns` as one matcher of whole paths, each pattern
    /// matching the end of a path (`src/**` matches `/work/app/src/a.py`);
    /// `None` when there are none.
    pub fn file_matcher(&self) -> Result<Option<GlobSet>, globset::Error> {
        if self.file_patterns.is_empty() {
            return Ok(None);
        }
        let mut set = GlobSetBuilder::new();
        for pattern in &self.file_patterns {
            let anchored = match pattern.starts_with('/') {
                true => pattern.clone(),
                false => format!("**/{pattern}"),
            };
            set.add(Glob::new(&anchored)?);
        }
        set.build().map(Some)
    }

    /// What sets it apart from a plain language server, for `status`:
    /// `linter`, `no diagnostics`, `min severity warning`, `files *.pyi`.
    pub fn described(&self) -> Vec<String> {
        let mut words = Vec::new();
        if self.role == Role::Linter {
            words.push("linter".to_owned());
        }
        if !self.diagnostics {
            words.push("no diagnostics".to_owned());
        }
        if let Some(least) = self.min_severity {
            words.push(format!("min severity {}", least.name()));
        }
        if !self.file_patterns.is_empty() {
            words.push(format!("files {}", self.file_patterns.join(", ")));
        }
        if let Some(first) = self.config_files.first() {
            words.push(format!("beside {first} or the like"));
        }
        words
    }

    /// Whether a diagnostic of `severity` from this server is shown.
    pub fn shows(&self, severity: Severity) -> bool {
        self.min_severity.is_none_or(|least| severity <= least)
    }
}

/// What makes two sessions' servers one process: the resolved command,
/// arguments, languages, initialization options and settings. The name a
/// configuration gives a server is not part of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ServerKey(String);

impl ServerSpec {
    /// Whether a save starts a check whose end an answer waits for.
    pub fn checks_on_save(&self) -> bool {
        !self.save_check_sources.is_empty()
    }

    pub fn key(&self) -> ServerKey {
        let options = self
            .initialization_options
            .as_ref()
            .map(Value::to_string)
            .unwrap_or_default();
        ServerKey(format!(
            "{}\u{0}{}\u{0}{}\u{0}{options}\u{0}{}\u{0}{}",
            self.command,
            self.args.join("\u{1}"),
            self.languages.join("\u{1}"),
            self.settings,
            self.pull_diagnostics
        ))
    }

    /// The command and its arguments as a shell would show them.
    pub fn command_line(&self) -> String {
        std::iter::once(&self.command)
            .chain(&self.args)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Whether it starts tsserver with plugins (typescript-language-server's
    /// `plugins` option), and so may answer a plugin's `tsserver/request`s.
    pub fn loads_tsserver_plugins(&self) -> bool {
        self.initialization_options
            .as_ref()
            .and_then(|options| options.get("plugins"))
            .and_then(Value::as_array)
            .is_some_and(|plugins| !plugins.is_empty())
    }

    pub fn serves(&self, language: &str) -> bool {
        self.languages.iter().any(|known| known == language)
    }

    /// Whether a change to `path` can be something for it to take in:
    /// anything but another language's code, which it neither serves nor
    /// imports. Told of every change it asked for (pyright asks for all),
    /// it has nothing to read again for an edit of a TypeScript module;
    /// data and configuration (`pyproject.toml`) and files of no known
    /// language (a new directory) can matter to it.
    pub fn may_take_in(&self, path: &Path) -> bool {
        let Some(language) = language_of(path) else {
            return true;
        };
        language.data
            || candidate_languages(path)
                .iter()
                .any(|candidate| self.serves(candidate))
            || LANGUAGES
                .iter()
                .filter(|served| self.serves(served.id))
                .any(|served| served.imports_from.contains(&language.id))
    }

    /// The label used in errors and status: the configuration key.
    pub fn label(&self) -> String {
        self.name.clone()
    }

    /// Whether `other` runs the same process for the same languages, so
    /// that only its settings may differ.
    pub fn same_process(&self, other: &ServerSpec) -> bool {
        self.command == other.command
            && self.args == other.args
            && self.languages == other.languages
            && self.initialization_options == other.initialization_options
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_files_to_language_ids() {
        let cases = [
            ("src/main.rs", Some("rust")),
            ("a/B.PY", Some("python")),
            ("x.tsx", Some("typescriptreact")),
            ("lib.h", Some("cpp")),
            ("run.sh", Some("shellscript")),
            ("docker/Dockerfile", Some("dockerfile")),
            ("Makefile", Some("makefile")),
            ("ops/Containerfile", Some("dockerfile")),
            ("tests/Dockerfile.gunicorn", Some("dockerfile")),
            ("web/App.vue", Some("vue")),
            ("Gemfile", Some("ruby")),
            ("tsconfig.json", Some("jsonc")),
            ("package.json", Some("json")),
            ("styles/site.SCSS", Some("scss")),
            ("infra/main.tf", Some("terraform")),
            ("README", None),
            ("archive.xyz", None),
        ];
        for (path, expected) in cases {
            assert_eq!(language_id(Path::new(path)), expected, "{path}");
        }
    }

    #[test]
    fn another_languages_code_is_nothing_for_a_server_to_take_in() {
        let spec = |languages: &[&str]| ServerSpec {
            languages: languages.iter().map(|id| (*id).to_owned()).collect(),
            ..python_spec()
        };
        let python = spec(&["python"]);
        for (path, taken) in [
            ("src/app.py", true),
            ("pyproject.toml", true),
            ("pyrightconfig.json", true),
            ("src/new_directory", true),
            ("web/index.ts", false),
            ("native/lib.c", false),
        ] {
            assert_eq!(python.may_take_in(Path::new(path)), taken, "{path}");
        }
        let svelte = spec(&["svelte"]);
        assert!(
            svelte.may_take_in(Path::new("src/lib/store.ts")),
            "a component imports TypeScript"
        );
        assert!(spec(&["cpp"]).may_take_in(Path::new("include/lib.h")));
    }

    fn python_spec() -> ServerSpec {
        ServerSpec {
            name: "python".into(),
            command: "pyright-langserver".into(),
            args: vec!["--stdio".into()],
            languages: vec!["python".into()],
            initialization_options: None,
            settings: serde_json::json!({}),
            check: None,
            pull_diagnostics: false,
            references_from: ReferencesFrom::Project,
            checks_only_what_changed: false,
            rests_after_input: None,
            lints_each_file_alone: false,
            misses_added_folders: false,
            forgets_early_documents: false,
            rebuilds_only_when_forced: false,
            reads_includes_from_disk: false,
            reads_disk_only_at_start: false,
            references_one_at_a_time: false,
            while_loading: WhileLoading::Waits,
            save_check_sources: Vec::new(),
            projects_from_tsconfig: false,
            tsserver_commands: false,
            duties: Duties::of(Role::Language),
        }
    }

    #[test]
    fn keys_ignore_names_and_checks_but_not_settings() {
        let spec = python_spec();
        let renamed = ServerSpec {
            name: "py".into(),
            check: Some(vec!["--version".into()]),
            ..spec.clone()
        };
        assert_eq!(spec.key(), renamed.key());
        let strict = ServerSpec {
            settings: serde_json::json!({"python": {"analysis": {"typeCheckingMode": "strict"}}}),
            ..spec.clone()
        };
        assert_ne!(spec.key(), strict.key());
    }

    #[test]
    fn each_name_extension_and_interpreter_marks_one_language() {
        let mut ids = Vec::new();
        let mut marks = Vec::new();
        for language in LANGUAGES {
            assert!(!ids.contains(&language.id), "{} twice", language.id);
            ids.push(language.id);
            let own = language
                .extensions
                .iter()
                .map(|extension| format!(".{extension}"))
                .chain(
                    language
                        .file_names
                        .iter()
                        .map(|name| format!("name {name}")),
                )
                .chain(
                    language
                        .interpreters
                        .iter()
                        .map(|program| format!("#!{program}")),
                );
            for mark in own {
                assert!(!marks.contains(&mark), "{mark} marks two languages");
                marks.push(mark);
            }
            for extension in language.extensions {
                assert_eq!(extension.to_ascii_lowercase(), *extension);
                let path = format!("a/file.{extension}");
                assert_eq!(language_id(Path::new(&path)), Some(language.id));
            }
            for name in language.file_names {
                assert_eq!(language_id(&Path::new("a").join(name)), Some(language.id));
            }
        }
    }

    #[test]
    fn built_in_servers_gather_their_languages_in_preference_order() {
        let servers: Vec<(&str, Vec<&str>)> = built_in_servers()
            .into_iter()
            .map(|(server, languages)| (server.name, languages))
            .collect();
        let scripts = vec![
            "typescript",
            "typescriptreact",
            "javascript",
            "javascriptreact",
        ];
        let served = |name: &str| {
            servers
                .iter()
                .find(|(known, _)| *known == name)
                .map(|(_, languages)| languages.clone())
                .unwrap_or_default()
        };
        let names: Vec<&str> = servers.iter().map(|(name, _)| *name).collect();
        assert_eq!(
            names[..8],
            [
                "rust",
                "python",
                "basedpyright",
                "pylsp",
                "jedi",
                "pyrefly",
                "ty",
                "ruff"
            ]
        );
        assert_eq!(served("typescript"), scripts);
        assert_eq!(served("c,cpp"), ["c", "cpp"]);
        assert_eq!(served("css"), ["css", "scss", "less"]);
        assert_eq!(served("json"), ["json", "jsonc"]);
        let mut biome = scripts.clone();
        biome.extend(["json", "jsonc", "css"]);
        assert_eq!(served("biome"), biome);
        let commands: Vec<&str> = built_in_servers()
            .iter()
            .map(|(server, _)| server.command)
            .collect();
        let mut unique = commands.clone();
        unique.dedup();
        assert_eq!(commands, unique, "a command is one built-in server");
        assert!(project_files("cpp").is_some() && project_files("rust").is_none());
    }

    #[test]
    fn a_file_without_an_extension_is_known_by_its_interpreter() {
        let directory = tempfile::tempdir().unwrap();
        let cases = [
            ("deploy", "#!/bin/bash\nset -e\n", Some("shellscript")),
            ("tool", "#!/usr/bin/env -S python3.12 -u\n", Some("python")),
            ("serve", "#! /usr/bin/env node\n", Some("javascript")),
            ("release", "#!/usr/bin/env ruby\n", Some("ruby")),
            ("index", "#!/usr/bin/php -q\n", Some("php")),
            ("notes", "plain text\n", None),
            ("empty", "", None),
        ];
        for (name, text, expected) in cases {
            let path = directory.path().join(name);
            std::fs::write(&path, text).unwrap();
            assert_eq!(language_id(&path), expected, "{name}");
        }
        let script = directory.path().join("run.txt");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        assert_eq!(language_id(&script), Some("plaintext"), "an extension wins");
    }

    #[test]
    fn every_built_in_settings_text_is_a_json_object() {
        for (server, _) in built_in_servers() {
            let parsed: Value = serde_json::from_str(server.settings).unwrap();
            assert!(parsed.is_object(), "{}", server.name);
        }
    }

    #[test]
    fn file_patterns_match_the_end_of_a_path() {
        let duties = Duties {
            file_patterns: vec!["*.pyi".into(), "src/**".into()],
            ..Duties::of(Role::Language)
        };
        let matcher = duties.file_matcher().unwrap().unwrap();
        assert!(matcher.is_match("/work/app/stubs/io.pyi"));
        assert!(matcher.is_match("/work/app/src/deep/main.py"));
        assert!(!matcher.is_match("/work/app/tests/test_main.py"));
        assert!(Duties::of(Role::Linter).file_matcher().unwrap().is_none());
        let broken = Duties {
            file_patterns: vec!["src/[".into()],
            ..Duties::of(Role::Language)
        };
        assert!(broken.file_matcher().is_err());
    }

    #[test]
    fn a_minimum_severity_keeps_the_worse_ones() {
        let duties = Duties {
            min_severity: Some(Severity::Warning),
            ..Duties::of(Role::Linter)
        };
        assert!(duties.shows(Severity::Error) && duties.shows(Severity::Warning));
        assert!(!duties.shows(Severity::Info) && !duties.shows(Severity::Hint));
        assert!(Duties::of(Role::Linter).shows(Severity::Hint));
    }

    #[test]
    fn headers_fall_back_to_c() {
        assert_eq!(candidate_languages(Path::new("x.h")), vec!["cpp", "c"]);
        assert_eq!(candidate_languages(Path::new("x.hpp")), vec!["cpp"]);
        assert_eq!(candidate_languages(Path::new("x.c")), vec!["c"]);
    }
}
