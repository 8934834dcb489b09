//! `search` for a member asked as `Type.member` with servers that match
//! workspace symbols by name alone (pyright on requests, tsserver on
//! immer, ty on pg_activity): the member, kept only where the server or
//! its file's outline places it in that type.

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

/// ty names a class's fields without their class, and finds no field by
/// text (an annotated attribute is no `def`): the field asked with its
/// class (pg_activity's `ServerInformation.insert_per_second`) is placed
/// by its file's outline.
#[test]
fn a_field_asked_with_its_class_is_found_by_ty() {
    if !have("ty") {
        return skip("ty is not on PATH");
    }
    let Some(dir) = real_project("pg-activity-3.6.2") else {
        return skip("target/real-projects/pg-activity-3.6.2 is missing (.ci/run unpacks it)");
    };
    let types = std::fs::read_to_string(dir.path().join("pgactivity/types.py")).unwrap();
    let line = 1 + types
        .lines()
        .position(|line| line == "    insert_per_second: int")
        .expect("pg_activity declares insert_per_second");
    let session = Session::start_with_user_config("[server.ty]\n", &root_arg(dir.path()));
    let answer = session.ok(
        "search",
        json!({"query": "ServerInformation.insert_per_second"}),
    );
    assert_eq!(
        symbols_part(&answer),
        format!("symbols (1)\n  pgactivity/types.py\n    field insert_per_second {line}:5"),
        "{answer}"
    );
    session.keep(dir);
}

/// A function defined once for each platform, in files build constraints
/// choose between (uuid's `getHardwareInterface`): gopls reads only this
/// platform's, and the other is listed by text.
#[test]
fn a_definition_gopls_leaves_out_by_build_constraints_is_listed_by_text() {
    if !have("gopls") {
        return skip("gopls is not on PATH");
    }
    let dir = project(&[
        ("go.mod", "module example.com/node\n\ngo 1.21\n"),
        (
            "node_net.go",
            "//go:build !js\n\npackage node\n\nfunc hardware(name string) string { return name }\n",
        ),
        (
            "node_js.go",
            "//go:build js\n\npackage node\n\nfunc hardware(name string) string { return \"\" }\n",
        ),
        (
            "node.go",
            "package node\n\nfunc Node() string { return hardware(\"eth0\") }\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok("search", json!({"query": "hardware"}));
    assert!(
        answer.contains(
            "note: 1 definition was found only by text search; the servers did not report it"
        ) && answer.contains("  node_js.go\n    definition hardware 5:6 (text)")
            && answer.contains("  node_net.go\n    function hardware 5:6"),
        "{answer}"
    );
    session.keep(dir);
}
