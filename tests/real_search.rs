//! `search` for a member asked as `Type.member` with servers that match
//! workspace symbols by name alone (pyright on requests, tsserver on
//! immer): the member, kept only where the server places it in that
//! type.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::real_project;
use common::*;
use serde_json::json;

/// The symbols part of a search answer, without the text heatmap.
fn symbols_part(answer: &str) -> String {
    answer
        .lines()
        .take_while(|line| !line.starts_with("text"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_method_asked_with_its_class_is_found_by_pyright() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok("search", json!({"query": "Session.request"}));
    // Not `api.py`'s function `request`, nor the other classes' methods.
    assert_eq!(
        symbols_part(&answer),
        "symbols (1)\n  src/requests/sessions.py\n    method request 557:9",
        "{answer}"
    );
    session.keep(dir);
}

#[test]
fn a_method_asked_with_its_class_is_found_by_typescript() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let Some(dir) = real_project("immer-11.2.10") else {
        return skip("target/real-projects/immer-11.2.10 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok("search", json!({"query": "Immer.createDraft"}));
    assert!(
        symbols_part(&answer)
            .ends_with("symbols (1)\n  src/core/immerClass.ts\n    method createDraft 153:2"),
        "{answer}"
    );
    session.keep(dir);
}
