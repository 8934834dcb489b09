//! docs/languages.md is the language table of `actors/src/language.rs`
//! as a page: this test writes the page from the table and fails when the
//! file in the repository differs, so the two cannot drift. To bring the
//! page up to date after changing the table:
//!
//! ```sh
//! WINDLASS_WRITE_DOCS=1 cargo test --test languages
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use windlass_actors::language::{LANGUAGES, Language};

#[test]
fn the_languages_page_is_the_table() {
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/languages.md");
    let written = render();
    if std::env::var_os("WINDLASS_WRITE_DOCS").is_some() {
        std::fs::write(&page, &written).unwrap();
        return;
    }
    let kept = std::fs::read_to_string(&page).unwrap_or_default();
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
         them when one is on PATH, the first that is found (each with its\n\
         configuration key and how to install it). A file with no\n\
         extension is recognised by the program its `#!` line names. A\n\
         configured server (`[server.NAME]` with `languages`) serves any\n\
         language id, listed here or not. A `.h` header is C++, and C when\n\
         only C has a server.\n\n\
         This page is written from the table in `actors/src/language.rs` by\n\
         `tests/languages.rs`, which fails when the two differ.\n\n\
         | language id | files | built-in servers, in order | needs to see the whole project |\n\
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
    page
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
                .interpreters
                .iter()
                .map(|program| format!("`#!{program}`")),
        )
        .collect();
    marks.join(", ")
}

fn servers(language: &Language) -> String {
    match language.servers.is_empty() {
        true => "none yet (configure one)".into(),
        false => language
            .servers
            .iter()
            .map(|server| {
                let command = std::iter::once(server.command)
                    .chain(server.args.iter().copied())
                    .collect::<Vec<_>>()
                    .join(" ");
                format!(
                    "`{command}` (`[server.{}]`; `{}`)",
                    toml_key(server.name),
                    server.install
                )
            })
            .collect::<Vec<_>>()
            .join(", then "),
    }
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
