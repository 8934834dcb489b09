//! Each verified server on its real project, run by hand:
//!
//! ```sh
//! .ci/run   # or install the servers and unpack target/real-projects as it does
//! cargo build --release --workspace && cargo bench --bench languages
//! ```
//!
//! First answer: Windlass is started on a copy of the package and asked
//! one question at once; the time runs from the process start to the
//! complete answer. Edit to fresh diagnostics: a file is broken on disk
//! (each cycle with a name of its own, so a stale answer cannot pass) and
//! `diagnostics` asked at once, then the edit undone and asked again;
//! every answer is checked. A server or package that is missing is
//! skipped with a note.
//!
//! Then the monorepo of five packages with twelve servers for ten
//! languages, zero-config: the first `diagnostics` call over a file of
//! each language, timed from the process start; then every file edited
//! at once and one call, and the undo and one call, 5 cycles.
//! `LANGUAGES_ONLY=TEXT` runs only the cases whose label holds TEXT.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout
)]

#[path = "../tests/common/mod.rs"]
mod common;
mod percentiles;

use common::projects::{
    MONOREPO_EDITS, MONOREPO_SERVERS, lint_with_eslint, monorepo, real_project,
};
use common::*;
use percentiles::report;
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};

const CYCLES: usize = 10;

/// One server (or servers) on one package's file.
struct Case {
    label: &'static str,
    servers: &'static [&'static str],
    /// The user configuration, for a server that starts only when
    /// configured; empty for none.
    config: &'static str,
    project: &'static str,
    /// What the copy of the project needs before the session starts;
    /// `false` when something it needs is missing.
    prepare: fn(&Path) -> bool,
    file: &'static str,
    /// The first question, and a piece its complete answer contains.
    first: (&'static str, fn() -> Value, &'static str),
    /// The file broken in cycle `n`, from its text, and what each
    /// server's problem must say.
    broken: fn(&str, usize) -> String,
    expected: fn(usize) -> Vec<String>,
    /// The answer for the file as published; empty: whatever it was
    /// before the first edit (a file with findings of its own).
    clean: &'static str,
}

fn main() {
    let cases = [
        Case {
            label: "vscode-css-language-server, bootstrap scss",
            servers: &["vscode-css-language-server"],
            config: "",
            project: "bootstrap-5.3.8",
            prepare: as_unpacked,
            file: "scss/_buttons.scss",
            first: (
                "document_symbols",
                || json!({"file": "scss/_buttons.scss"}),
                "class .btn-sm 214-216",
            ),
            broken: |text, n| format!("{text}\n.broken-{n} {{ color: ; }}\n"),
            expected: |_| vec!["[scss css-propertyvalueexpected] property value expected".into()],
            clean: "scss/_buttons.scss: no problems",
        },
        Case {
            label: "vscode-json-language-server, bootstrap package.json",
            servers: &["vscode-json-language-server"],
            config: "",
            project: "bootstrap-5.3.8",
            prepare: as_unpacked,
            file: "package.json",
            first: (
                "document_symbols",
                || json!({"file": "package.json"}),
                "module scripts 41-106",
            ),
            broken: |text, n| {
                text.replacen(
                    "\"version\": \"5.3.8\",",
                    &format!("\"version\": \"5.3.{n}\""),
                    1,
                )
            },
            expected: |_| vec!["[json 514] Expected comma".into()],
            clean: "package.json: no problems",
        },
        Case {
            label: "yaml-language-server, ansible-core config/base.yml",
            servers: &["yaml-language-server"],
            config: "",
            project: "ansible-core-2.21.5/lib/ansible/config",
            prepare: as_unpacked,
            file: "base.yml",
            first: (
                "document_symbols",
                || json!({"file": "base.yml", "depth": 1}),
                "module _ANSIBALLZ_COVERAGE_CONFIG 4-14",
            ),
            broken: |text, n| {
                text.replacen(
                    "  choices: *basic_error",
                    &format!("  choices: *basic_error\n   bad_{n}: [unclosed"),
                    1,
                )
            },
            expected: |_| vec!["All mapping items must start at the same column".into()],
            clean: "base.yml: 1 info\n  1402:12 info [YAML 0] Unused anchor \"&basic_error2\"",
        },
        Case {
            label: "vscode-html-language-server, html5-boilerplate index.html",
            servers: &["vscode-html-language-server"],
            config: "",
            project: "html5-boilerplate-9.0.1/dist",
            prepare: as_unpacked,
            file: "index.html",
            first: (
                "document_symbols",
                || json!({"file": "index.html"}),
                "field body 25-31",
            ),
            broken: |text, n| {
                text.replacen(
                    "<head>",
                    &format!("<head>\n  <style>p{n} {{ color: ; }}</style>"),
                    1,
                )
            },
            expected: |_| vec!["[css css-propertyvalueexpected] property value expected".into()],
            clean: "index.html: no problems",
        },
        Case {
            label: "docker-langserver, gunicorn example Dockerfile",
            servers: &["docker-langserver"],
            config: "",
            project: "gunicorn-27.0.1/examples/celery_alternative",
            prepare: as_unpacked,
            file: "Dockerfile",
            first: (
                "document_symbols",
                || json!({"file": "Dockerfile"}),
                "function CMD 46",
            ),
            broken: |text, n| {
                text.replacen("WORKDIR /app", &format!("WORKDIR /app\nEXPOSE port{n}"), 1)
            },
            expected: |n| vec![format!("Invalid containerPort: port{n}")],
            clean: "Dockerfile: no problems",
        },
        Case {
            label: "rust-analyzer, regex-syntax parser.rs",
            servers: &["rust-analyzer"],
            config: "",
            project: "regex-syntax-0.8.11",
            prepare: as_unpacked,
            file: "src/parser.rs",
            first: (
                "hover",
                || json!({"file": "src/parser.rs", "line": 230, "symbol": "Parser"}),
                "pub struct Parser {",
            ),
            broken: |text, n| format!("{text}\nfn broken_{n}() -> u32 {{\n    \"text\"\n}}\n"),
            expected: |_| vec!["[rust-analyzer E0308] expected u32, found &'static str".into()],
            clean: "src/parser.rs: no problems",
        },
        Case {
            label: "pyright + ruff, requests api.py",
            servers: &["pyright-langserver", "ruff"],
            config: "",
            project: "requests-2.34.2",
            prepare: as_unpacked,
            file: "src/requests/api.py",
            first: (
                "hover",
                || json!({"file": "src/requests/api.py", "line": 74, "symbol": "get"}),
                "def get(",
            ),
            broken: undefined_url,
            expected: |n| {
                vec![
                    format!("[Pyright reportUndefinedVariable] \"undefined_{n}\" is not defined"),
                    format!("[Ruff F821] Undefined name `undefined_{n}`"),
                ]
            },
            clean: "src/requests/api.py: no problems",
        },
        Case {
            label: "vscode-eslint-language-server beside typescript-language-server, zod iso.ts",
            servers: &[
                "vscode-eslint-language-server",
                "typescript-language-server",
            ],
            config: "",
            project: "zod-4.6.7",
            prepare: lint_with_eslint,
            file: "src/v4/classic/iso.ts",
            first: (
                "diagnostics",
                || json!({"file": "src/v4/classic/coerce.ts"}),
                "[eslint @typescript-eslint/no-empty-object-type]",
            ),
            broken: |text, n| format!("{text}\nvar unused_{n} = 1;\n"),
            expected: |n| {
                vec![
                    "[eslint no-var] Unexpected var, use let or const instead.".into(),
                    format!("'unused_{n}' is assigned a value but never used."),
                ]
            },
            clean: "src/v4/classic/iso.ts: no problems",
        },
        Case {
            label: "graphql-lsp, a query of GitHub's schema (octokit-graphql-schema)",
            servers: &["graphql-lsp"],
            config: "",
            project: "octokit-graphql-schema-15.25.0",
            prepare: query_githubs_schema,
            file: "queries/viewer.graphql",
            first: (
                "hover",
                || json!({"file": "queries/viewer.graphql", "line": 1, "symbol": "login"}),
                "User.login: String!",
            ),
            broken: |text, n| text.replacen("login", &format!("login{n}"), 1),
            expected: |n| vec![format!("Cannot query field \"login{n}\" on type \"User\".")],
            clean: "queries/viewer.graphql: no problems",
        },
        zod_parse_typed(
            "tsgo (asked for diagnostics), zod parse.ts",
            &["tsgo"],
            "[server.tsgo]\n",
            |_| vec!["[ts 2322] Type 'string' is not assignable to type 'number'.".into()],
        ),
        Case {
            label: "intelephense, Monolog Logger.php",
            servers: &["intelephense"],
            config: "",
            project: "monolog-2.9.1",
            prepare: as_unpacked,
            file: "Monolog/Logger.php",
            first: (
                "hover",
                || json!({"file": "Monolog/Logger.php", "line": 225, "symbol": "pushHandler"}),
                "Pushes a handler on to the stack.",
            ),
            broken: |text, n| {
                let opening =
                    "    public function pushHandler(HandlerInterface $handler): self\n    {\n";
                text.replacen(
                    opening,
                    &format!("{opening}        new UnknownThing{n}();\n"),
                    1,
                )
            },
            expected: |n| {
                vec![format!(
                    "[intelephense P1009] Undefined type 'Monolog\\UnknownThing{n}'."
                )]
            },
            clean: "Monolog/Logger.php: 2 hints\n\
                    \x20 18:1 hint [intelephense P1003] Symbol 'LogLevel' is declared but not used.\n\
                    \x20 340:81 hint [intelephense P1078] Implicitly nullable parameters are deprecated.",
        },
        Case {
            label: "gopls (Debian's 0.5), pkg/errors errors.go",
            servers: &["gopls"],
            config: "",
            project: "pkg-errors-0.9.1",
            prepare: as_unpacked,
            file: "errors.go",
            first: (
                "hover",
                || json!({"file": "errors.go", "line": 102, "symbol": "New"}),
                "func New(message string) error",
            ),
            broken: |text, n| format!("{text}\nfunc broken{n}() int {{\n\treturn \"text\"\n}}\n"),
            expected: |_| {
                vec!["[compiler IncompatibleAssign] cannot use \"text\" (untyped string constant) as int value in return statement".into()]
            },
            clean: "errors.go: no problems",
        },
        Case {
            label: "svelte-language-server, svelte-french-toast ToastBar.svelte",
            servers: &["svelteserver"],
            config: "",
            project: "svelte-french-toast-1.2.0",
            prepare: as_unpacked,
            file: "dist/components/ToastBar.svelte",
            first: (
                "hover",
                || json!({"file": "dist/components/ToastBar.svelte", "line": 1, "symbol": "ToastIcon"}),
                "class ToastIcon",
            ),
            broken: |text, n| text.replacen("</div>", &format!("</div>\n</broken{n}>"), 1),
            expected: |n| {
                vec![format!(
                    "[svelte invalid-closing-tag] </broken{n}> attempted to close an element that was not open"
                )]
            },
            clean: "dist/components/ToastBar.svelte: no problems",
        },
        Case {
            label: "vue-language-server with typescript-language-server, VitePress theme VPNavBarTitle.vue",
            servers: &[
                "vue-language-server",
                "typescript-language-server",
                "tsserver",
            ],
            config: "",
            project: common::projects::VITEPRESS_THEME,
            prepare: common::projects::as_vitepress_project,
            file: "components/VPNavBarTitle.vue",
            first: (
                "diagnostics",
                || json!({"file": "components/VPNavBarTitle.vue"}),
                "components/VPNavBarTitle.vue: no problems",
            ),
            broken: |text, n| {
                text.replacen("currentLang.link", &format!("currentLang.link{n}"), 1)
                    .replacen(
                        "<slot name=\"nav-bar-title-before\" />",
                        &format!("<slot name=\"nav-bar-title-before\" /></broken{n}>"),
                        1,
                    )
            },
            expected: |n| {
                vec![
                    format!("Property 'link{n}' does not exist"),
                    "[vue 23] Invalid end tag.".into(),
                ]
            },
            clean: "components/VPNavBarTitle.vue: no problems",
        },
        Case {
            label: "basedpyright (configured), requests api.py",
            servers: &["basedpyright-langserver"],
            config: "[server.basedpyright]\n",
            project: "requests-2.34.2",
            prepare: as_unpacked,
            file: "src/requests/api.py",
            first: (
                "hover",
                || json!({"file": "src/requests/api.py", "line": 74, "symbol": "get"}),
                "get(",
            ),
            broken: undefined_url,
            expected: |n| vec![format!("undefined_{n}")],
            clean: "src/requests/api.py: no problems",
        },
        Case {
            label: "pylsp (configured), requests api.py",
            servers: &["pylsp"],
            config: "[server.pylsp]\n",
            project: "requests-2.34.2",
            prepare: as_unpacked,
            file: "src/requests/api.py",
            first: (
                "hover",
                || json!({"file": "src/requests/api.py", "line": 74, "symbol": "get"}),
                "get(",
            ),
            broken: undefined_url,
            expected: |n| vec![format!("undefined_{n}")],
            clean: "src/requests/api.py: no problems",
        },
        Case {
            label: "jedi (configured), requests api.py",
            servers: &["jedi-language-server"],
            config: "[server.jedi]\n",
            project: "requests-2.34.2",
            prepare: as_unpacked,
            file: "src/requests/api.py",
            first: (
                "hover",
                || json!({"file": "src/requests/api.py", "line": 74, "symbol": "get"}),
                "get(",
            ),
            // Jedi reports syntax errors only.
            broken: |text, n| text.replacen("def get(", &format!("def get_{n}(("), 1),
            expected: |_| vec!["[compile] SyntaxError: '(' was never closed".into()],
            clean: "src/requests/api.py: no problems",
        },
        Case {
            label: "pyrefly (configured), requests api.py",
            servers: &["pyrefly"],
            config: "[server.pyrefly]\n",
            project: "requests-2.34.2",
            prepare: as_unpacked,
            file: "src/requests/api.py",
            first: (
                "hover",
                || json!({"file": "src/requests/api.py", "line": 74, "symbol": "get"}),
                "get(",
            ),
            broken: undefined_url,
            expected: |n| vec![format!("undefined_{n}")],
            clean: "src/requests/api.py: no problems",
        },
        Case {
            label: "ty (configured), requests api.py",
            servers: &["ty"],
            config: "[server.ty]\n",
            project: "requests-2.34.2",
            prepare: as_unpacked,
            file: "src/requests/api.py",
            first: (
                "hover",
                || json!({"file": "src/requests/api.py", "line": 74, "symbol": "get"}),
                "get(",
            ),
            broken: undefined_url,
            expected: |n| vec![format!("undefined_{n}")],
            clean: "src/requests/api.py: no problems",
        },
        zod_parse_typed(
            "typescript-language-server, zod parse.ts",
            &["typescript-language-server"],
            "",
            |_| vec!["[typescript 2322] Type 'string' is not assignable to type 'number'.".into()],
        ),
        Case {
            label: "biome beside tsgo (configured), zod parse.ts",
            servers: &["tsgo", "biome"],
            config: "[server.tsgo]\n[server.biome]\n",
            project: "zod-4.6.7",
            prepare: as_unpacked,
            file: "src/v4/core/parse.ts",
            first: (
                "diagnostics",
                || json!({"file": "src/v4/core/parse.ts"}),
                "[biome lint/suspicious/noExplicitAny]",
            ),
            broken: |text, n| format!("{text}\nconst count_{n}: number = \"many\";\ndebugger;\n"),
            expected: |n| {
                vec![
                    "[ts 2322] Type 'string' is not assignable to type 'number'.".into(),
                    format!(
                        "[biome lint/correctness/noUnusedVariables] This variable count_{n} is unused."
                    ),
                    "[biome lint/suspicious/noDebugger]".into(),
                ]
            },
            clean: "",
        },
        Case {
            label: "clangd, LZ4 lz4.c",
            servers: &["clangd"],
            config: "",
            project: "lz4-4.4.4",
            prepare: common::projects::compile_lz4,
            file: "lz4libs/lz4.c",
            first: (
                "hover",
                || json!({"file": "lz4libs/lz4.c", "line": 1435, "symbol": "LZ4_compress_default"}),
                "LZ4_compress_default",
            ),
            broken: |text, n| format!("{text}\nint broken_{n}(void) {{ return undefined_{n}; }}\n"),
            expected: |n| vec![format!("Use of undeclared identifier 'undefined_{n}'")],
            clean: "",
        },
        Case {
            label: "bash-language-server with shellcheck, gunicorn example run_tests.sh",
            servers: &["bash-language-server", "shellcheck"],
            config: "",
            project: "gunicorn-27.0.1/examples/celery_alternative",
            prepare: as_unpacked,
            file: "run_tests.sh",
            first: (
                "document_symbols",
                || json!({"file": "run_tests.sh"}),
                "variable",
            ),
            broken: |text, n| format!("{text}\necho $undefined_{n}\n"),
            expected: |n| {
                vec![format!(
                    "[shellcheck SC2154] undefined_{n} is referenced but not assigned."
                )]
            },
            clean: "",
        },
        Case {
            label: "taplo, regex-syntax Cargo.toml",
            servers: &["taplo"],
            config: "[server.toml]\n",
            project: "regex-syntax-0.8.11",
            prepare: as_unpacked,
            file: "Cargo.toml",
            first: (
                "diagnostics",
                || json!({"file": "Cargo.toml"}),
                "Cargo.toml: no problems",
            ),
            broken: |text, n| format!("{text}\n[extra_{n}]\nbroken = \n"),
            expected: |_| vec!["[Even Better TOML] expected value".into()],
            clean: "Cargo.toml: no problems",
        },
        Case {
            label: "sql-language-server, aiosql example sql/create_schema.sql",
            servers: &["sql-language-server"],
            config: "",
            project: "aiosql-15.0/example",
            prepare: as_unpacked,
            file: "sql/create_schema.sql",
            first: (
                "diagnostics",
                || json!({"file": "sql/create_schema.sql"}),
                "2:1 error [sql] reserved word must be uppercase",
            ),
            broken: |text, n| {
                text.replacen(
                    "default CURRENT_DATE,",
                    &format!("default CURRENT_DATE broken{n},"),
                    1,
                )
            },
            expected: |_| vec!["but \"b\" found.".into()],
            clean: "sql/create_schema.sql: 2 errors\n\
                    \x20 2:1 error [sql] reserved word must be uppercase\n\
                    \x20 9:1 error [sql] reserved word must be uppercase",
        },
    ];
    // `LANGUAGES_ONLY=svelte` runs the cases whose label holds the text
    // ("monorepo" for the last part).
    let only = std::env::var("LANGUAGES_ONLY").unwrap_or_default();
    for case in cases.iter().filter(|case| case.label.contains(&only)) {
        run(case);
    }
    if "monorepo".contains(&only) {
        run_monorepo();
    }
}

fn run_monorepo() {
    if let Some(missing) = MONOREPO_SERVERS.iter().find(|server| !have(server)) {
        println!("monorepo: skipped, {missing} is not on PATH");
        return;
    }
    let Some(dir) = monorepo() else {
        println!("monorepo: skipped, a package of target/real-projects is missing");
        return;
    };
    let files: Vec<&str> = MONOREPO_EDITS.iter().map(|(file, _, _)| *file).collect();
    let started = Instant::now();
    let session = Session::start(&root_arg(dir.path()));
    let first = session.ok("diagnostics", json!({"files": files}));
    report(
        "monorepo, 10 files of 10 languages: first answer",
        &[started.elapsed()],
    );
    let originals: Vec<String> = files
        .iter()
        .map(|file| std::fs::read_to_string(dir.path().join(file)).unwrap())
        .collect();
    let (mut edited, mut undone) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        for ((file, added, _), original) in MONOREPO_EDITS.iter().zip(&originals) {
            std::fs::write(dir.path().join(file), format!("{original}{added}")).unwrap();
        }
        let asked = Instant::now();
        let answer = session.ok("diagnostics", json!({"files": files}));
        edited.push(asked.elapsed());
        for (_, _, reported) in MONOREPO_EDITS {
            assert!(answer.contains(reported), "{reported} in {answer}");
        }
        for (file, original) in files.iter().zip(&originals) {
            std::fs::write(dir.path().join(file), original).unwrap();
        }
        let asked = Instant::now();
        assert_eq!(session.ok("diagnostics", json!({"files": files})), first);
        undone.push(asked.elapsed());
    }
    report("monorepo: all 10 edited to fresh diagnostics", &edited);
    report("monorepo: undo to fresh diagnostics", &undone);
}

fn run(case: &Case) {
    if let Some(missing) = case.servers.iter().find(|server| !have(server)) {
        println!("{}: skipped, {missing} is not on PATH", case.label);
        return;
    }
    let Some(dir) = real_project(case.project) else {
        println!(
            "{}: skipped, target/real-projects/{} is missing",
            case.label, case.project
        );
        return;
    };
    if !(case.prepare)(dir.path()) {
        println!("{}: skipped, what the project needs is missing", case.label);
        return;
    }
    let started = Instant::now();
    let session = match case.config {
        "" => Session::start(&root_arg(dir.path())),
        config => Session::start_with_user_config(config, &root_arg(dir.path())),
    };
    let (tool, arguments, complete) = &case.first;
    let answer = session.ok(tool, arguments());
    let first = started.elapsed();
    assert!(
        answer.contains(complete),
        "{}: first answer {answer}",
        case.label
    );
    report(&format!("{}: first answer", case.label), &[first]);

    let path = dir.path().join(case.file);
    let original = std::fs::read_to_string(&path).unwrap();
    let clean = match case.clean {
        "" => session.ok("diagnostics", json!({"file": case.file})),
        clean => clean.to_owned(),
    };
    let mut broken_times: Vec<Duration> = Vec::new();
    let mut fixed_times: Vec<Duration> = Vec::new();
    for cycle in 0..CYCLES {
        std::fs::write(&path, (case.broken)(&original, cycle)).unwrap();
        let asked = Instant::now();
        let answer = session.ok("diagnostics", json!({"file": case.file}));
        broken_times.push(asked.elapsed());
        for expected in (case.expected)(cycle) {
            assert!(
                answer.contains(&expected),
                "{}: {expected} in {answer}",
                case.label
            );
        }
        std::fs::write(&path, &original).unwrap();
        let asked = Instant::now();
        let answer = session.ok("diagnostics", json!({"file": case.file}));
        fixed_times.push(asked.elapsed());
        assert_eq!(answer, clean, "{}", case.label);
    }
    report(
        &format!("{}: edit to fresh diagnostics", case.label),
        &broken_times,
    );
    report(
        &format!("{}: undo to fresh diagnostics", case.label),
        &fixed_times,
    );
}

/// A project used as its package was unpacked.
/// A TypeScript server on zod's `parse.ts`: a hover first, then a type
/// error added at the end of the file, each server naming it its way.
fn zod_parse_typed(
    label: &'static str,
    servers: &'static [&'static str],
    config: &'static str,
    expected: fn(usize) -> Vec<String>,
) -> Case {
    Case {
        label,
        servers,
        config,
        project: "zod-4.6.7",
        prepare: as_unpacked,
        file: "src/v4/core/parse.ts",
        first: (
            "hover",
            || json!({"file": "src/v4/core/parse.ts", "line": 10, "symbol": "finalizeParams"}),
            "function finalizeParams(",
        ),
        broken: |text, n| format!("{text}\nconst count_{n}: number = \"many\";\n"),
        expected,
        clean: "src/v4/core/parse.ts: no problems",
    }
}

fn as_unpacked(_: &Path) -> bool {
    true
}

/// A name nobody defined, each cycle its own, where requests' `get`
/// passes its url on.
fn undefined_url(text: &str, n: usize) -> String {
    text.replacen(
        "url=url, **kwargs)",
        &format!("url=undefined_{n}, **kwargs)"),
        1,
    )
}

/// GitHub's schema with the GraphQL config that names it, and a query.
fn query_githubs_schema(root: &Path) -> bool {
    common::projects::write(
        root,
        ".graphqlrc.yml",
        "schema: schema.graphql\ndocuments: \"queries/**/*.graphql\"\n",
    );
    common::projects::write(
        root,
        "queries/viewer.graphql",
        "query { viewer { login name } }\n",
    );
    true
}
