//! `source` and `read_file` on published packages' own code, each with
//! the server found on PATH: a method of requests (pyright), a function of
//! zod with the comment above it (typescript-language-server), and a
//! function of the LZ4 library with both its definition and its header
//! declaration (clangd). Every span is checked line for line against the
//! file on disk.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::{lz4_project, real_project};
use common::*;
use serde_json::json;
use std::path::Path;

/// The heading and numbered lines `first`–`last` (1-based) of `file` as
/// `source` shows one span.
fn span(root: &Path, file: &str, first: usize, last: usize, title: &str) -> String {
    let text = std::fs::read_to_string(root.join(file)).unwrap();
    let width = last.to_string().len();
    let mut lines = vec![format!("{file}:{first}-{last}  {title}")];
    for (index, line) in text.lines().enumerate().take(last).skip(first - 1) {
        lines.push(
            format!("{:>width$}  {line}", index + 1)
                .trim_end()
                .to_owned(),
        );
    }
    lines.join("\n")
}

#[test]
fn source_of_a_python_method_is_exactly_its_lines() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let sessions = "src/requests/sessions.py";
    let request = session.ok(
        "source",
        json!({"file": sessions, "line": 557, "symbol": "request"}),
    );
    let expected = span(dir.path(), sessions, 557, 653, "method request");
    assert_eq!(request, expected);
    // From a call in another file, the same span.
    let from_call = session.ok(
        "source",
        json!({"file": "src/requests/api.py", "line": 71, "symbol": "request"}),
    );
    assert_eq!(from_call, expected);
    let total = std::fs::read_to_string(dir.path().join(sessions))
        .unwrap()
        .len();
    assert!(
        request.len() * 5 < total,
        "{} bytes of a {total}-byte file",
        request.len()
    );

    // With depth 1, each method by its signature: `__init__`'s spans
    // lines, `__getstate__`'s one.
    let outline = session.ok("source", json!({"symbol": "HTTPAdapter", "depth": 1}));
    assert!(
        outline.starts_with(
            "src/requests/adapters.py:158-748  class HTTPAdapter\n158  class HTTPAdapter(BaseAdapter):\n"
        ),
        "{outline}"
    );
    assert!(
        outline.contains("\n201      def __init__(\n202          self,\n")
            && outline.contains(
                "\n223      def __getstate__(self) -> dict[str, Any]:\n             … 1 line\n"
            ),
        "{outline}"
    );
    assert!(outline.len() < 8_000, "{} bytes", outline.len());

    let text = std::fs::read_to_string(dir.path().join(sessions)).unwrap();
    let expected: Vec<String> = text
        .lines()
        .enumerate()
        .skip(556)
        .take(4)
        .map(|(index, line)| format!("{}  {line}", index + 1))
        .collect();
    assert_eq!(
        session.ok(
            "read_file",
            json!({"file": sessions, "start": 557, "end": 560})
        ),
        format!(
            "{sessions}: lines 557-560 of 920 lines\n{}",
            expected.join("\n")
        )
    );
    let error = session.err("read_file", json!({"file": "../requests-2.34.2.tar.gz"}));
    assert!(error.contains("outside the workspace roots"), "{error}");
}

#[test]
fn source_of_a_typescript_function_brings_the_comment_above_it() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let Some(dir) = real_project("zod-4.6.7") else {
        return skip("target/real-projects/zod-4.6.7 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let parse = "src/v4/core/parse.ts";
    let answer = session.ok(
        "source",
        json!({"file": parse, "line": 202, "symbol": "finalizeParams"}),
    );
    assert!(
        answer.ends_with(&span(dir.path(), parse, 9, 12, "function finalizeParams")),
        "{answer}"
    );
}

/// zod's `isFinite` is declared by an interface and assigned below it in
/// the same file (`inst.isFinite = true`), where the server's definition
/// leads to the declaration: the name asked alone lists the declaration,
/// not the assignment, among its candidates.
#[test]
fn a_property_named_alone_is_its_declaration_not_an_assignment_to_it() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let Some(dir) = real_project("zod-4.6.7") else {
        return skip("target/real-projects/zod-4.6.7 is missing (.ci/run unpacks it)");
    };
    std::fs::write(
        dir.path().join("tsconfig.json"),
        r#"{"compilerOptions": {"strict": true, "target": "es2022", "module": "esnext", "moduleResolution": "bundler", "skipLibCheck": true}, "include": ["src"]}"#,
    )
    .unwrap();
    let schemas = "src/v4/classic/schemas.ts";
    let text = std::fs::read_to_string(dir.path().join(schemas)).unwrap();
    let line_of = |written: &str| {
        1 + text
            .lines()
            .position(|line| line.trim() == written)
            .unwrap_or_else(|| panic!("{schemas} no longer writes {written}"))
    };
    let declared = format!(
        "{schemas}:{}:3  property isFinite",
        line_of("isFinite: boolean;")
    );
    let assigned = format!("{schemas}:{}:", line_of("inst.isFinite = true;"));
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok("definition", json!({"symbol": "isFinite"}));
    assert!(answer.contains(&declared), "{answer}");
    assert!(!answer.contains(&assigned), "{answer}");
    session.keep(dir);
}

#[test]
fn source_of_a_c_function_gives_its_definition_then_its_header_declaration() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let Some((_dir, root)) = lz4_project() else {
        return skip("target/real-projects/lz4-4.4.4 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(&root));
    let answer = session.ok(
        "source",
        json!({"file": "lz4libs/lz4.c", "line": 2659, "symbol": "LZ4_compress_default"}),
    );
    let definition = span(
        &root,
        "lz4libs/lz4.c",
        1435,
        1438,
        "function LZ4_compress_default",
    );
    let declaration = span(
        &root,
        "lz4libs/lz4.h",
        175,
        189,
        "function LZ4_compress_default",
    );
    assert_eq!(answer, format!("{definition}\n{declaration}"));
}

/// `impact` of a function of requests names every caller that
/// `call_hierarchy` does, at the same lines, each in its file, and goes on
/// to their callers.
#[test]
fn impact_lists_the_callers_call_hierarchy_finds_and_theirs() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let address =
        json!({"file": "src/requests/utils.py", "line": 1070, "symbol": "get_auth_from_url"});
    let impact = session.ok("impact", address.clone());
    let mut incoming = address;
    incoming["direction"] = json!("incoming");
    let callers = session.ok("call_hierarchy", incoming);
    let depth_two = impact.find("\ndepth 2: ").unwrap();
    let (first, second) = impact.split_at(depth_two);
    let mut file = "";
    let mut checked = 0;
    for line in callers.lines().skip(1) {
        if !line.starts_with(' ') {
            file = line;
            continue;
        }
        // `  function NAME LINE:COLUMN — calls at LINE:COLUMN, …`
        let mut words = line.split_whitespace();
        let name = words.nth(1).unwrap();
        let start = words.next().unwrap().split(':').next().unwrap();
        let call = line
            .rsplit("calls at ")
            .next()
            .unwrap()
            .split(':')
            .next()
            .unwrap();
        let group = first
            .split(&format!("\n  {file}\n"))
            .nth(1)
            .unwrap_or_default();
        assert!(
            group
                .lines()
                .any(|held| held.contains(&format!(".{name} {start}-"))
                    && held.ends_with(&format!(": line {call}"))),
            "{name} at {call} of {file}:\n{impact}"
        );
        checked += 1;
    }
    assert_eq!(checked, 4, "{callers}");
    let callers = session.ok(
        "call_hierarchy",
        json!({"file": "src/requests/sessions.py", "line": 557, "symbol": "request", "direction": "incoming"}),
    );
    assert!(
        callers.contains("\n  function request 24:5 — calls at 71:24\n"),
        "each call site once: {callers}"
    );
    assert!(
        impact.starts_with("impact of `get_auth_from_url` at src/requests/utils.py:1070:5: ")
            && second
                .contains("\n    method SessionRedirectMixin.resolve_redirects 186-307: line 272"),
        "{impact}"
    );
}
