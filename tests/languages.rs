//! docs/languages.md is the language table of `actors/src/language.rs`
//! as a page: this test writes the page from the table and fails when the
//! file in the repository differs, so the two cannot drift. To bring the
//! page up to date after changing the table:
//!
//! ```sh
//! WINDLASS_WRITE_DOCS=1 cargo test --test languages
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::oracle::oracle_section;
use std::path::Path;
use windlass_actors::language::{LANGUAGES, Language, ReferencesFrom, Role, built_in_servers};

#[test]
fn the_languages_page_is_the_table() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/languages.md");
    let kept = std::fs::read_to_string(&page).unwrap_or_default();
    // The oracle's table closes the page; `benches/oracle.rs` writes it.
    let written = render() + oracle_section(&kept);
    if std::env::var_os("WINDLASS_WRITE_DOCS").is_some() {
        std::fs::write(&page, &written).unwrap();
        return;
    }
    assert!(
        kept == written,
        "docs/languages.md differs from the language table; run \
         `WINDLASS_WRITE_DOCS=1 cargo test --test languages` and commit it"
    );
}

fn render() -> String {
    let mut page = String::from(
        "# Languages\n\n\
         What Windlass knows of each language without configuration: the\n\
         files it recognises as the language, and the servers it starts for\n\
         them. A file with no extension is recognised by the program its\n\
         `#!` line names. A `.h` header is C++, and C when only C has a\n\
         server. A configured server (`[server.NAME]` with `languages`)\n\
         serves any language id, listed here or not, and comes before the\n\
         built-in ones.\n\n\
         Of a language's servers, the first found on PATH (and, where it\n\
         has a version option, running it) serves the language; the others\n\
         are alternatives a user picks by configuring them. A linter\n\
         starts too when found: its diagnostics are merged with the\n\
         language server's, each named by its source, and it answers what\n\
         the language server has no capability for. A linter whose rules\n\
         are the project's choice (ESLint, Biome) serves, unconfigured,\n\
         only the files in a directory holding its configuration file or\n\
         below one, and starts only when the roots hold one. A language someone\n\
         configured a server for has only its configured servers. `windlass doctor`\n\
         names, for each language with no server, the one to install and\n\
         how.\n\n\
         Vue's server answers templates and styles, and asks every\n\
         TypeScript question of its client (`tsserver/request`), which\n\
         Windlass relays to typescript-language-server: found beside it,\n\
         that server starts with the Vue server's TypeScript plugin, serves\n\
         `.vue` files too, and comes first for them. TypeScript answers\n\
         hover, definitions, references and the type errors of scripts and\n\
         templates; the Vue server adds its compiler's errors and the\n\
         outline. The Vue server runs the TypeScript whose `tsserver` is on\n\
         PATH: the one npm gives it by itself (TypeScript 7) has no\n\
         tsserver, and without one it is not started.\n\n\
         Most servers publish their diagnostics when they have checked a\n\
         change; Windlass asks a server marked \"asked for\" for each file's\n\
         (`textDocument/diagnostic`): tsgo publishes none, and pyright checks a\n\
         file at once when asked but publishes a quarter of a second after the\n\
         last change. typescript-language-server is asked through tsserver's\n\
         own checks (`typescript.tsserverRequest`): its publications can hold\n\
         one text's syntax beside the type errors of the text before. Any other\n\
         server is asked once it has published nothing while offering to\n\
         be asked, or from the start with `pull_diagnostics = true` in its\n\
         configuration. A server marked \"after its check on save\"\n\
         (rust-analyzer, whose `cargo check` runs when a file is saved)\n\
         publishes a saved file at once with its last check's findings still\n\
         in it, and begins the new check a moment later: after a change on\n\
         disk Windlass answers once that check has ended, so the compiler's\n\
         findings are of the file as it is. A server that begins no check\n\
         within a second of a save is not waited on for one again.\n\n\
         JSON, YAML, TOML and Markdown are data, not code: in a project\n\
         with code in another language, their servers start when the first\n\
         question about one of their files needs them, not with the session.\n\n\
         References come from the server. A server marked \"open files\"\n\
         looks only in the documents it has open, and one marked \"named\n\
         files\" only in those its settings name by extension and the open\n\
         ones (bash-language-server reads `*.sh` and `*.bash`, not a script\n\
         without an extension); their answers name, by text, the other\n\
         files of their languages that use the name. One marked \"page\n\
         scripts\" (the HTML server) finds references only in the scripts\n\
         of the page asked about, so its answers also name the lines of\n\
         that page that use the name. Svelte components import\n\
         TypeScript and JavaScript modules that typescript-language-server\n\
         answers for without reading a component: its answers name, by\n\
         text, the components that use the name. A\n\
         server that indexes the project in the background (clangd,\n\
         rust-analyzer: it reports indexing) is cross-checked the same\n\
         way, and its answers say when its index is still being built.\n\n\
         When a file changes on disk, the open documents that may depend\n\
         on it are sent again when asked about. A server that checks only\n\
         the file it is told changed, and takes a change in after a pause\n\
         (intelephense), gets only those it has not checked again by\n\
         itself a moment after taking the change in: a quarter of a second\n\
         after it has published the changed files that are open, or a\n\
         second after a change to files none of which is.\n\n\
         A session with other roots shares a server that announces it takes\n\
         new workspace folders; one that does not, or that announces it but\n\
         never loads a folder added later (intelephense, \"restarted\" below),\n\
         gets a process of its own, and is restarted when its roots change.\n\n\
         This page is written from the table in `actors/src/language.rs` by\n\
         `tests/languages.rs`, which fails when the two differ, and which\n\
         holds every server marked verified here to real-server tests\n\
         (`tests/real_*.rs`) that run it in CI on the published projects\n\
         named in its row, at least two: answers right on the one project a\n\
         test was written for can still be wrong on the next. A server not\n\
         verified here that cannot be installed on the test machine is\n\
         played by mockls, with what is known of how it behaves, started\n\
         from this table (`tests/mock_languages.rs`).\n\n\
         ## Languages\n\n\
         | language id | files | servers, in order | needs to see the whole project |\n\
         |---|---|---|---|\n",
    );
    for language in LANGUAGES {
        page.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            language.id,
            files(language),
            servers(language),
            language
                .project
                .map(|project| code_list(project.names, " or "))
                .unwrap_or_else(|| "–".into())
        ));
    }
    page.push_str(
        "\n## Servers\n\n\
         | server (configuration key) | command | role | languages | how to install | serves unconfigured | diagnostics | references | dependents sent again | new folders | verified here |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (server, languages) in built_in_servers() {
        let command = std::iter::once(server.command)
            .chain(server.args.iter().copied())
            .collect::<Vec<_>>()
            .join(" ");
        page.push_str(&format!(
            "| `{}` | `{command}` | {} | {} | `{}` | {} | {} | {} | {} | {} | {} |\n",
            toml_key(server.name),
            match server.role {
                Role::Language => "language server",
                Role::Linter => "linter",
            },
            languages.join(", "),
            server.install,
            if server.config_files.is_empty() {
                "every file".to_owned()
            } else {
                format!("beside {}", code_list(server.config_files, ", "))
            },
            match (
                server.pulls_diagnostics,
                !server.save_check_sources.is_empty()
            ) {
                (true, _) => "asked for",
                (false, true) => "published, after its check on save",
                (false, false) => "published",
            },
            match server.references_from {
                ReferencesFrom::Project => "project",
                ReferencesFrom::OpenFiles => "open files",
                ReferencesFrom::NamedFiles => "named files",
                ReferencesFrom::PageScripts => "page scripts",
                ReferencesFrom::PyrightIncluded(_) => "included paths",
            },
            if server.checks_only_what_changed {
                "once the change is taken in"
            } else {
                "when asked"
            },
            if server.misses_added_folders {
                "restarted"
            } else {
                "as it announces"
            },
            if server.verified {
                format!("on {}", code_list(tried_on(server.command), ", "))
            } else {
                "not verified here".to_owned()
            },
        ));
    }
    page
}

/// The published projects (as `.ci/run` unpacks them into
/// `target/real-projects`) that each verified server's real-server tests
/// run it on, by command.
const TRIED_ON: &[(&str, &[&str])] = &[
    (
        "rust-analyzer",
        &["regex-syntax-0.8.11", "num-traits-0.2.19", "heck-0.5.0"],
    ),
    ("pyright-langserver", PYTHON_PROJECTS),
    ("basedpyright-langserver", PYTHON_PROJECTS),
    ("pylsp", PYTHON_PROJECTS),
    ("jedi-language-server", PYTHON_PROJECTS),
    ("pyrefly", PYTHON_PROJECTS),
    ("ty", PYTHON_PROJECTS),
    ("ruff", PYTHON_PROJECTS),
    ("typescript-language-server", TYPESCRIPT_PROJECTS),
    ("tsgo", TYPESCRIPT_PROJECTS),
    ("vscode-eslint-language-server", TYPESCRIPT_PROJECTS),
    ("biome", TYPESCRIPT_PROJECTS),
    ("gopls", &["pkg-errors-0.9.1", "pflag-1.0.6"]),
    ("clangd", &["lz4-4.4.4", "brotli-1.2.1"]),
    (
        "bash-language-server",
        &["bats-1.11.1", "bats-support-0.3.0", "bats-assert-2.2.4"],
    ),
    (
        "yaml-language-server",
        &["ansible-core-2.21.5", "jupyter-repo2docker-2026.4.0"],
    ),
    (
        "vscode-json-language-server",
        &["bootstrap-5.3.8", "reveal.js-6.0.2"],
    ),
    (
        "vscode-css-language-server",
        &["bootstrap-5.3.8", "bulma-1.0.4"],
    ),
    (
        "vscode-html-language-server",
        &["html5-boilerplate-9.0.1", "reveal.js-6.0.2"],
    ),
    (
        "docker-langserver",
        &["gunicorn-27.0.1", "jupyter-repo2docker-2026.4.0"],
    ),
    ("taplo", &["regex-syntax-0.8.11", "gunicorn-27.0.1"]),
    ("intelephense", &["monolog-2.9.1", "fast-route-1.3.0"]),
    (
        "vue-language-server",
        &["vitepress-1.6.4", "vue-theme-2.4.0"],
    ),
    (
        "svelteserver",
        &["svelte-french-toast-1.2.0", "svelte-sonner-0.3.28"],
    ),
    ("sql-language-server", &["aiosql-15.0", "pg-activity-3.6.2"]),
    (
        "graphql-lsp",
        &[
            "octokit-graphql-schema-15.25.0",
            "favware-graphql-pokemon-8.8.1",
        ],
    ),
];
const PYTHON_PROJECTS: &[&str] = &["requests-2.34.2", "gunicorn-27.0.1"];
const TYPESCRIPT_PROJECTS: &[&str] = &["zod-4.6.7", "immer-11.2.10"];

fn tried_on(command: &str) -> &'static [&'static str] {
    TRIED_ON
        .iter()
        .find(|(tried, _)| *tried == command)
        .map_or(&[], |(_, projects)| projects)
}

/// Every verified server is tried on two published projects or more, each
/// named by a real-server test and, in CI, unpacked where the tests read
/// it; and every project listed belongs to a verified server.
#[test]
fn each_server_verified_here_is_tried_on_two_published_projects() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let real = texts(&tests, "real_") + &texts(&tests.join("common"), "");
    let unpacked = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/real-projects");
    let verified: Vec<&str> = built_in_servers()
        .into_iter()
        .filter(|(server, _)| server.verified)
        .map(|(server, _)| server.command)
        .collect();
    for command in &verified {
        let projects = tried_on(command);
        assert!(
            projects.len() >= 2,
            "`{command}` is verified on {projects:?}: name two published projects its tests run it on"
        );
        for project in projects {
            assert!(
                real.contains(&format!("\"{project}")),
                "`{project}` ({command}) is named by no tests/real_*.rs"
            );
            if std::env::var_os("CI").is_some() {
                assert!(
                    unpacked.join(project).is_dir(),
                    "`{project}` ({command}) is not unpacked in target/real-projects"
                );
            }
        }
    }
    for (command, _) in TRIED_ON {
        assert!(verified.contains(command), "`{command}` is not verified");
    }
}

/// The text of the files in `dir` whose names start with `prefix`.
fn texts(dir: &Path, prefix: &str) -> String {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with(prefix))
        .filter_map(|entry| std::fs::read_to_string(entry.path()).ok())
        .collect()
}

/// A server claimed verified is run by a real-server test: its command
/// appears in one of `tests/real_*.rs`.
#[test]
fn each_server_verified_here_has_a_real_server_test() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let real = texts(&tests, "real_");
    for (server, _) in built_in_servers() {
        if server.verified {
            assert!(
                real.contains(server.command),
                "`{}` is marked verified but no tests/real_*.rs runs it",
                server.command
            );
        }
    }
}

/// `*.py`, `Dockerfile`, `#!python3`, …
fn files(language: &Language) -> String {
    let marks: Vec<String> = language
        .extensions
        .iter()
        .map(|extension| format!("`*.{extension}`"))
        .chain(language.file_names.iter().map(|name| format!("`{name}`")))
        .chain(
            language
                .name_prefixes
                .iter()
                .map(|prefix| format!("`{prefix}*`")),
        )
        .chain(
            language
                .interpreters
                .iter()
                .map(|program| format!("`#!{program}`")),
        )
        .collect();
    marks.join(", ")
}

fn servers(language: &Language) -> String {
    if language.servers.is_empty() {
        return "none yet (configure one)".into();
    }
    language
        .servers
        .iter()
        .map(|server| match server.role {
            Role::Language => format!("`{}`", server.command),
            Role::Linter => format!("`{}` (linter)", server.command),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn code_list(items: &[&str], separator: &str) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(separator)
}

/// A configuration key as TOML needs it written: quoted unless bare.
fn toml_key(name: &str) -> String {
    let bare = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    match bare {
        true => name.to_owned(),
        false => format!("\"{name}\""),
    }
}
