//! The built-in servers of languages beyond the first four, each on a
//! published package's own sources with zero configuration: Windlass
//! finds the server on PATH and the package's files tell it which to
//! start. `.ci/run` installs the servers and unpacks the packages into
//! `target/real-projects` (or `WINDLASS_REAL_PROJECTS`); each test skips,
//! saying why, when either is missing, and fails instead in CI.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::{
    lint_with_eslint, real_project, real_projects, vitepress_theme, vue_theme, write,
};
use common::*;
use serde_json::json;

/// bash-language-server on bats-core's scripts, the first published shell
/// project here. Asked at once for two files' diagnostics, it answers
/// both: it lints only the last of the documents opened before it has its
/// configuration, so the others are sent again once it has (each was "no
/// diagnostics, idle for 30 s" before). Its references come from the
/// files its glob names (`*.bash`), so a use in an extensionless script is
/// named by text beside them. Its hover on a function's own name is
/// empty, so the declaration is shown from the text instead.
#[test]
fn bash_server_answers_on_bats() {
    if !have("bash-language-server") {
        return skip("bash-language-server is not on PATH");
    }
    let Some(dir) = real_project("bats-1.11.1") else {
        return skip("target/real-projects/bats-1.11.1 is missing (.ci/run unpacks it)");
    };
    let (common, exec) = (
        "lib/bats-core/common.bash",
        "libexec/bats-core/bats-exec-test",
    );
    let first = Session::start(&root_arg(dir.path()));
    assert_eq!(
        first.ok("diagnostics", json!({"files": [common, exec]})),
        format!("{common}: no problems\n{exec}: no problems")
    );
    drop(first);
    // Open, the script is read too; a fresh session has it closed.
    let session = Session::start(&root_arg(dir.path()));
    assert_eq!(
        session.ok("definition", json!({"symbol": "bats_quote_code"})),
        format!("{common}:22:1  bats_quote_code() {{ # <var> <code>")
    );
    // bash-language-server answers no hover on a function's own name.
    assert_eq!(
        session.ok("hover", json!({"symbol": "bats_quote_code"})),
        format!(
            "no hover from the server at {common}:22:1, the declaration of `bats_quote_code`; \
             from the text:\n{common}:22-22  function bats_quote_code\n\
             22  bats_quote_code() {{ # <var> <code>"
        )
    );
    let references = session.ok("find_references", json!({"symbol": "bats_quote_code"}));
    assert!(
        references.starts_with(
            "3 references in 2 files\nnote: by text, `bats_quote_code` also appears in 1 file \
             the server listed no reference in; it reads only the files its settings name \
             (by extension) and those open: libexec/bats-core/bats-exec-test:319\n"
        ),
        "{references}"
    );
}

/// bash-language-server on bats-support and bats-assert side by side, as
/// a project's tests keep them, a second shell project beside bats-core:
/// a helper of one package used all over the other, its references
/// across both, fresh after a use is added on disk to a file not open and
/// taken away again, its documented declaration shown from the text (the
/// server has no hover there), `search`'s exact match first, the
/// outline's ranges, and shellcheck's findings after an edit on disk and
/// after its undo. The packages source their files by computed paths,
/// which shellcheck cannot follow: no file's findings depend on another's.
#[test]
fn bash_server_answers_on_bats_assert() {
    if !have("bash-language-server") {
        return skip("bash-language-server is not on PATH");
    }
    let Some(dir) = real_projects(&[
        ("bats-support-0.3.0", "bats-support"),
        ("bats-assert-2.2.4", "bats-assert"),
    ]) else {
        return skip("target/real-projects/bats-assert-2.2.4 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let references = session.ok("find_references", json!({"symbol": "batslib_decorate"}));
    assert!(
        references.starts_with(
            "40 references in 13 files\nbats-assert/src/assert.bash (1)\n  \
             39:7  | batslib_decorate 'assertion failed' \\\n"
        ) && references
            .ends_with("\nbats-support/src/output.bash (1)\n  273:1  batslib_decorate() {"),
        "{references}"
    );
    // A use added on disk to a file not open, then taken away: the
    // server reads the project only at its start, so the file is shown
    // to it (it named line 39, the old line, over the new text before).
    let refute = dir.path().join("bats-assert/src/refute.bash");
    let original = std::fs::read_to_string(&refute).unwrap();
    let added = original.replacen(
        "  if \"$@\"; then\n",
        "  if \"$@\"; then\n    batslib_decorate 'extra' | fail\n",
        1,
    );
    std::fs::write(&refute, added).unwrap();
    let references = session.ok("find_references", json!({"symbol": "batslib_decorate"}));
    assert!(
        references.starts_with("41 references in 13 files\n")
            && references.contains(
                "\nbats-assert/src/refute.bash (2)\n  38:5  batslib_decorate 'extra' | fail\n  \
                 40:7  | batslib_decorate 'assertion succeeded, but it was expected to fail' \\\n"
            ),
        "{references}"
    );
    std::fs::write(&refute, original).unwrap();
    let references = session.ok("find_references", json!({"symbol": "batslib_decorate"}));
    assert!(
        references.starts_with("40 references in 13 files\n")
            && references.contains(
                "\nbats-assert/src/refute.bash (1)\n  \
                 39:7  | batslib_decorate 'assertion succeeded, but it was expected to fail' \\\n"
            ),
        "{references}"
    );
    let hover = session.ok("hover", json!({"symbol": "batslib_decorate"}));
    assert!(
        hover.starts_with(
            "no hover from the server at bats-support/src/output.bash:273:1, the declaration \
             of `batslib_decorate`; from the text:\n\
             bats-support/src/output.bash:258-273  function batslib_decorate\n\
             258  # Enclose the input text in header and footer lines.\n"
        ),
        "{hover}"
    );
    let search = session.ok("search", json!({"query": "assert_line"}));
    assert!(
        search.contains(
            "symbols (3)\n  bats-assert/src/assert_line.bash\n    function assert_line 130:1\n"
        ),
        "{search}"
    );
    assert_eq!(
        session.ok(
            "document_symbols",
            json!({"file": "bats-assert/src/assert_line.bash", "depth": 1})
        ),
        "function assert_line 130-132\nfunction assert_stderr_line 162-164\n\
         function __assert_line 166-298 (+13 nested)"
    );
    let output = "bats-support/src/output.bash";
    let clean = session.ok("diagnostics", json!({"file": output}));
    assert!(
        clean.starts_with(&format!("{output}: 2 warnings, 1 info, 1 hint\n")),
        "{clean}"
    );
    let original = std::fs::read_to_string(dir.path().join(output)).unwrap();
    let broken = original.replacen(
        "batslib_decorate() {",
        "batslib_decorate() {\n  local unused_width=$1",
        1,
    );
    std::fs::write(dir.path().join(output), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": output}));
    assert!(
        diagnostics.starts_with(&format!("{output}: 3 warnings, 1 info, 1 hint\n"))
            && diagnostics.ends_with(
                "\n  274:9 warning [shellcheck SC2034] unused_width appears unused. \
                 Verify use (or export if used externally)."
            ),
        "{diagnostics}"
    );
    std::fs::write(dir.path().join(output), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": output})), clean);
}

/// Bulma's Sass, a second CSS-family project beside Bootstrap. The CSS
/// server answers no workspace symbols, so a mixin or a variable named
/// alone is found by text, and picked when it is the only one: `source`
/// of a mixin, a variable's definition asked with or without its `$`, and
/// references that say which files the server did not look in.
#[test]
fn css_server_answers_on_bulma() {
    if !have("vscode-css-language-server") {
        return skip("vscode-css-language-server is not on PATH");
    }
    let Some(dir) = real_project("bulma-1.0.4") else {
        return skip("target/real-projects/bulma-1.0.4 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let mixin = session.ok("source", json!({"symbol": "navbar-fixed"}));
    assert!(
        mixin.starts_with(
            "sass/components/navbar.scss:97-102  method navbar-fixed\n 97  @mixin navbar-fixed {\n"
        ),
        "{mixin}"
    );
    for asked in ["radius-small", "$radius-small"] {
        assert_eq!(
            session.ok("definition", json!({"symbol": asked})),
            "sass/utilities/initial-variables.scss:139:1  $radius-small: 0.25rem !default;",
            "{asked}"
        );
    }
    let uses = session.ok("find_references", json!({"symbol": "navbar-fixed"}));
    assert!(
        uses.starts_with("4 references in 1 file\nsass/components/navbar.scss (4)\n"),
        "{uses}"
    );
    let variable = session.ok("find_references", json!({"symbol": "$radius-small"}));
    assert!(
        variable.contains("it looks only in the files it has open: sass/themes/light.scss:78"),
        "{variable}"
    );
}

/// Bootstrap's SCSS and its package.json: vscode-css-language-server
/// (which needs its settings sections to be objects, not the protocol's
/// `null`) and vscode-json-language-server.
#[test]
fn css_and_json_servers_answer_on_bootstrap() {
    for server in ["vscode-css-language-server", "vscode-json-language-server"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("bootstrap-5.3.8") else {
        return skip("target/real-projects/bootstrap-5.3.8 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let buttons = "scss/_buttons.scss";

    let outline = session.ok("document_symbols", json!({"file": buttons}));
    assert!(
        outline.starts_with("class .btn 5-123\n  class &:hover 43-48"),
        "{outline}"
    );
    assert!(
        outline.ends_with("class .btn-lg 210-212\nclass .btn-sm 214-216"),
        "{outline}"
    );

    // A class asked for as an agent names it, without its dot.
    let source = session.ok("source", json!({"file": buttons, "symbol": "btn-lg"}));
    assert!(
        source.starts_with("scss/_buttons.scss:210-212  class .btn-lg\n"),
        "{source}"
    );

    let hover = session.ok(
        "hover",
        json!({"file": buttons, "line": 24, "symbol": "display"}),
    );
    assert!(hover.contains("determines the type of box"), "{hover}");
    assert!(
        !hover.contains("data:image"),
        "no pictures for a model: {hover}"
    );

    let variables = "scss/_variables.scss";
    let definition = session.ok(
        "definition",
        json!({"file": variables, "line": 819, "symbol": "$input-btn-padding-y"}),
    );
    assert_eq!(
        definition,
        "scss/_variables.scss:789:1  $input-btn-padding-y:         .375rem !default;"
    );
    let references = session.ok(
        "find_references",
        json!({"file": variables, "line": 789, "symbol": "$input-btn-padding-y"}),
    );
    assert!(
        references.starts_with("3 references in 1 file"),
        "{references}"
    );
    assert!(
        references.contains("\n  819:31  $btn-padding-y:"),
        "{references}"
    );
    assert!(
        references.contains("\n  885:41  $input-padding-y:"),
        "{references}"
    );
    // The server looks only in the file asked about; the use in another
    // file is named by text, `$btn-padding-y-lg` is not taken for it.
    let references = session.ok(
        "find_references",
        json!({"file": variables, "line": 819, "symbol": "$btn-padding-y"}),
    );
    assert!(
        references.contains(
            "note: by text, `$btn-padding-y` also appears in 1 file the server listed no \
             reference in; it looks only in the files it has open: scss/_buttons.scss:8\n"
        ),
        "{references}"
    );

    let original = std::fs::read_to_string(dir.path().join(buttons)).unwrap();
    let broken = format!("{original}\n.broken {{ color: ; }}\n");
    std::fs::write(dir.path().join(buttons), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": buttons}));
    assert_eq!(
        diagnostics,
        "scss/_buttons.scss: 1 error\n  218:18 error [scss css-propertyvalueexpected] property value expected"
    );
    std::fs::write(dir.path().join(buttons), &original).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": buttons}));
    assert_eq!(diagnostics, "scss/_buttons.scss: no problems");

    let manifest = std::fs::read_to_string(dir.path().join("package.json")).unwrap();
    let outline = session.ok("document_symbols", json!({"file": "package.json"}));
    assert!(
        outline.starts_with("string name 2\nstring description 3"),
        "{outline}"
    );
    assert!(outline.contains("\nmodule scripts 41-106\n"), "{outline}");
    let comma = "\"version\": \"5.3.8\",";
    let broken = manifest.replacen(comma, "\"version\": \"5.3.8\"", 1);
    std::fs::write(dir.path().join("package.json"), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": "package.json"}));
    assert_eq!(
        diagnostics,
        "package.json: 1 error\n  5:3 error [json 514] Expected comma"
    );
    std::fs::write(dir.path().join("package.json"), &manifest).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": "package.json"}));
    assert_eq!(diagnostics, "package.json: no problems");
}

/// Requests' own sources with pyright and ruff found on PATH: pyright
/// answers the questions, and a broken edit's diagnostics come from both,
/// each named, until the edit is undone.
#[test]
fn pyright_and_ruff_both_check_requests() {
    for server in ["pyright-langserver", "ruff"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let api = "src/requests/api.py";
    let hover = session.ok("hover", json!({"file": api, "line": 74, "symbol": "get"}));
    assert!(hover.starts_with("(function) def get("), "{hover}");
    assert_eq!(
        session.ok("diagnostics", json!({"file": api})),
        "src/requests/api.py: no problems"
    );

    let original = std::fs::read_to_string(dir.path().join(api)).unwrap();
    let broken = original
        .replacen(
            "from typing import TYPE_CHECKING\n",
            "from typing import TYPE_CHECKING\nimport os\n",
            1,
        )
        .replacen("url=url, **kwargs)", "url=undefined_url, **kwargs)", 1);
    std::fs::write(dir.path().join(api), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": api}));
    for expected in [
        "  14:8 warning [Ruff F401] `os` imported but unused",
        "  72:51 error [Pyright reportUndefinedVariable] \"undefined_url\" is not defined",
        "  72:51 error [Ruff F821] Undefined name `undefined_url`",
    ] {
        assert!(
            diagnostics.contains(expected),
            "{expected} in {diagnostics}"
        );
    }
    std::fs::write(dir.path().join(api), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": api})),
        "src/requests/api.py: no problems"
    );
    let status = session.ok("status", json!({}));
    assert!(
        status.contains("[ruff] (python) ruff (linter) running"),
        "{status}"
    );
}

/// pyright on the big tree benches/bigtree.rs measures: sympy and django
/// side by side (1.25 million lines of Python) with effect's TypeScript
/// beside them. A class of sympy's core is named by its first hover.
#[test]
fn pyright_answers_on_the_big_tree() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("bigtree-1") else {
        return skip("target/real-projects/bigtree-1 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let hover = session.ok(
        "hover",
        json!({"file": "sympy-1.14.0/sympy/core/basic.py", "line": 156, "symbol": "Basic"}),
    );
    assert!(hover.contains("class Basic("), "{hover}");
}

/// ruff on gunicorn, a second project beside requests, found on PATH
/// beside pyright: an edit's unused import and undefined name are its
/// findings (named as ruff's) at their new lines, and its answer after
/// the undo is the one before the edit.
#[test]
fn ruff_lints_gunicorn_beside_pyright() {
    for server in ["pyright-langserver", "ruff"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("gunicorn-27.0.1") else {
        return skip("target/real-projects/gunicorn-27.0.1 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let file = "gunicorn/pidfile.py";
    let before = session.ok("diagnostics", json!({"file": file}));
    let original = std::fs::read_to_string(dir.path().join(file)).unwrap();
    let broken = original
        .replacen("import errno\n", "import errno\nimport sys\n", 1)
        .replacen("self.fname = fname\n", "self.fname = fname_given\n", 1);
    std::fs::write(dir.path().join(file), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": file}));
    for expected in [
        "\n  6:8 warning [Ruff F401] `sys` imported but unused",
        "\n  19:22 error [Ruff F821] Undefined name `fname_given`",
    ] {
        assert!(
            diagnostics.contains(expected),
            "{expected} in {diagnostics}"
        );
    }
    std::fs::write(dir.path().join(file), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": file})), before);
    let status = session.ok("status", json!({}));
    assert!(
        status.contains("[ruff] (python) ruff (linter) running"),
        "{status}"
    );
}

/// Ansible's own configuration definitions (2,300 lines of YAML with
/// anchors) with yaml-language-server.
#[test]
fn yaml_server_answers_on_ansible_config() {
    if !have("yaml-language-server") {
        return skip("yaml-language-server is not on PATH");
    }
    let Some(dir) = real_project("ansible-core-2.21.5/lib/ansible/config") else {
        return skip("target/real-projects/ansible-core-2.21.5 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let base = "base.yml";
    let outline = session.ok("document_symbols", json!({"file": base, "depth": 1}));
    // Each block ends on its own last line, not on the first of the
    // next (the server ends ranges at column 0 of the line after).
    assert!(
        outline.starts_with("module _ANSIBALLZ_COVERAGE_CONFIG 4-13 (+5 nested)\n"),
        "{outline}"
    );
    let last = outline.lines().last().unwrap_or_default();
    assert!(last.contains("-2292 "), "the file's last block: {last}");
    let definition = session.ok(
        "definition",
        json!({"file": base, "line": 310, "symbol": "basic_error"}),
    );
    assert_eq!(
        definition,
        "base.yml:49:5  error: issue a 'fatal' error and stop the play"
    );
    let references = session.err(
        "find_references",
        json!({"file": base, "line": 48, "symbol": "basic_error"}),
    );
    assert_eq!(references, "[yaml] does not support references");

    let clean = "base.yml: 1 info\n  1402:12 info [YAML 0] Unused anchor \"&basic_error2\"";
    assert_eq!(session.ok("diagnostics", json!({"file": base})), clean);
    let original = std::fs::read_to_string(dir.path().join(base)).unwrap();
    let broken = original.replacen(
        "  choices: *basic_error",
        "  choices: *basic_error\n   bad: [unclosed",
        1,
    );
    std::fs::write(dir.path().join(base), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": base}));
    assert!(
        diagnostics
            .contains("\n  311:1 error [YAML 0] All mapping items must start at the same column\n"),
        "{diagnostics}"
    );
    std::fs::write(dir.path().join(base), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": base})), clean);
}

/// An edit written while the CSS server still checks the text it was
/// opened with: that check's publication, which carries no version, comes
/// after the edit and must not pass for the edit's.
#[test]
fn an_edit_during_the_css_servers_first_check_is_answered_by_its_own() {
    if !have("vscode-css-language-server") {
        return skip("vscode-css-language-server is not on PATH");
    }
    let Some(dir) = real_project("bootstrap-5.3.8") else {
        return skip("target/real-projects/bootstrap-5.3.8 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let buttons = "scss/_buttons.scss";
    session.ok("document_symbols", json!({"file": buttons}));
    let original = std::fs::read_to_string(dir.path().join(buttons)).unwrap();
    let broken = format!("{original}\n.broken {{ color: ; }}\n");
    std::fs::write(dir.path().join(buttons), broken).unwrap();
    // On a cold machine the server may not have checked the edit by the
    // time the answer is due, and the answer then says so; asked again it
    // must be the edit's. What it must never be is the check of the text
    // the file was opened with ("no problems").
    let ask = || session.ok("diagnostics", json!({"file": buttons}));
    let mut answer = ask();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while answer == "scss/_buttons.scss: no diagnostics from [css]"
        && std::time::Instant::now() < deadline
    {
        answer = ask();
    }
    assert_eq!(
        answer,
        "scss/_buttons.scss: 1 error\n  218:18 error [scss css-propertyvalueexpected] property value expected"
    );
}

/// regex-syntax's own sources with rust-analyzer: `Parser` named alone is
/// the two structs of that name, its `pub use` re-export in lib.rs being
/// the one it names; hover, definition, references and the outline; and
/// rust-analyzer's own diagnostics of an edit and of its undo.
#[test]
fn rust_analyzer_answers_on_regex_syntax() {
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is not on PATH (or is only rustup's proxy)");
    }
    let Some(dir) = real_project("regex-syntax-0.8.11") else {
        return skip("target/real-projects/regex-syntax-0.8.11 is missing (.ci/run copies it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    // Under the suite's load rust-analyzer may index for longer than
    // requests wait, and its answers then say so.
    let ask = |tool: &str, arguments| past_loading_warning(&session.ok(tool, arguments));
    assert_eq!(
        ask("hover", json!({"symbol": "Parser"})),
        "`Parser` is ambiguous (2 matches); ask again with file and line:\n\
         src/parser.rs:230:12  struct Parser\n\
         src/ast/parse.rs:249:12  struct Parser"
    );
    let parser = "src/parser.rs";
    let hover = ask(
        "hover",
        json!({"file": parser, "line": 230, "symbol": "Parser"}),
    );
    assert!(
        hover.starts_with("regex_syntax::parser\n\npub struct Parser {"),
        "{hover}"
    );
    assert_eq!(
        ask(
            "definition",
            json!({"file": "src/lib.rs", "line": 182, "symbol": "Parser"})
        ),
        "src/parser.rs:230:12  pub struct Parser {"
    );
    let references = ask(
        "find_references",
        json!({"file": parser, "line": 230, "symbol": "Parser"}),
    );
    assert!(
        references.starts_with("15 references in 3 files\n"),
        "{references}"
    );
    assert!(
        references.contains("\n  182:21  parser::{parse, Parser, ParserBuilder},"),
        "{references}"
    );
    let outline = ask("document_symbols", json!({"file": parser, "depth": 1}));
    assert!(
        outline.contains("\nstruct Parser 216-233 (+2 nested)\n"),
        "{outline}"
    );

    assert_eq!(
        session.ok("diagnostics", json!({"file": parser})),
        "src/parser.rs: no problems"
    );
    let original = std::fs::read_to_string(dir.path().join(parser)).unwrap();
    let broken = format!("{original}\nfn broken() -> u32 {{\n    \"text\"\n}}\n");
    std::fs::write(dir.path().join(parser), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": parser}));
    assert!(
        diagnostics.contains("error [rust-analyzer E0308] expected u32, found &'static str"),
        "{diagnostics}"
    );
    // The save's `cargo check` has been waited for; after the fix below
    // none of its findings of the broken text may be left.
    assert!(
        diagnostics.contains("error [rustc E0308] mismatched types"),
        "{diagnostics}"
    );
    // An unsaved edit runs no `cargo check`: the last save's findings
    // are left out of the comparison, and the answer says so.
    let checked = session.ok(
        "check_edit",
        json!({"file": parser, "replacements": [{"old": "    \"text\"\n", "new": "    7\n"}]}),
    );
    assert_eq!(
        checked,
        "note: [rust] the findings of its check on save (rustc, clippy) are left out: \
         nothing is saved, so that check does not run\n\
         src/parser.rs, if edited (nothing written): 0 new problems, 1 fixed\n\
         \x20 fixed 257:5 error [rust-analyzer E0308] expected u32, found &'static str\n\
         warning: 1 other file that uses `broken` not checked ([rust] finds what breaks in other \
         files in its check on save, which an unsaved edit does not run): src/hir/interval.rs; \
         write the edit and ask `diagnostics` of them"
    );
    std::fs::write(dir.path().join(parser), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": parser})),
        "src/parser.rs: no problems"
    );
}

/// rust-analyzer on heck, whose tests call its methods through a
/// `macro_rules!` macro: the body is tokens until the macro is called, so
/// the server lists no reference there, and the answer names the line by
/// text.
#[test]
fn rust_analyzer_references_name_uses_inside_macro_bodies() {
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is not on PATH (or is only rustup's proxy)");
    }
    let Some(dir) = real_project("heck-0.5.0") else {
        return skip("target/real-projects/heck-0.5.0 is missing (.ci/run copies it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let references = past_loading_warning(&session.ok(
        "find_references",
        json!({"file": "src/title.rs", "symbol": "to_title_case", "line": 25}),
    ));
    assert!(
        references.starts_with(
            "2 references in 1 file\n\
             note: by text, `to_title_case` also appears inside `macro_rules!` bodies, which the server does not resolve (uses once a macro is called): src/title.rs:60\n"
        ),
        "{references}"
    );
    // From a use there, the definition is not found, and the answer says
    // why and how to find it.
    let definition = past_loading_warning(&session.ok(
        "definition",
        json!({"file": "src/title.rs", "symbol": "to_title_case", "line": 60}),
    ));
    assert!(
        definition.starts_with(
            "warning: [rust] line 60 is inside a `macro_rules!` body, which the server does not resolve; ask for `to_title_case` by name (`symbol` alone)\n\
             no definition found for `to_title_case` at src/title.rs:60:"
        ),
        "{definition}"
    );
}

/// rust-analyzer publishes a document's diagnostics only when they
/// change: an edit of a comment on heck, written or checked, is answered
/// as the server has it when asked (it was 30 s and an error).
#[test]
fn rust_analyzer_answers_an_edit_that_changes_no_diagnostics() {
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is not on PATH (or is only rustup's proxy)");
    }
    let Some(dir) = real_project("heck-0.5.0") else {
        return skip("target/real-projects/heck-0.5.0 is missing (.ci/run copies it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let file = json!({"file": "src/title.rs"});
    let clean = "src/title.rs: no problems";
    assert_eq!(
        past_loading_warning(&session.ok("diagnostics", file.clone())),
        clean
    );
    let path = dir.path().join("src/title.rs");
    let original = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{original}// a comment\n")).unwrap();
    assert_eq!(session.ok("diagnostics", file.clone()), clean);
    std::fs::write(&path, &original).unwrap();
    assert_eq!(session.ok("diagnostics", file), clean);
    let check = session.ok(
        "check_edit",
        json!({"file": "src/title.rs", "replacements": [{"old": "use core::fmt;", "new": "use core::fmt; // formatting"}]}),
    );
    assert!(
        check.ends_with("src/title.rs, if edited (nothing written): no new problems, none fixed (0 problems as now)"),
        "{check}"
    );
}

/// A file the agent never asked about, written on disk, is checked again
/// by `cargo check` (which rust-analyzer runs on a save): a bound on a
/// generic function that its caller in another file does not meet, an
/// error only the compiler finds, is taken out and put back, and the
/// caller's answers follow.
#[test]
fn rust_analyzer_checks_again_when_a_file_no_one_asked_about_is_written() {
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is not on PATH (or is only rustup's proxy)");
    }
    let bound = "pub fn keep<T: Clone>(value: T) -> T {\n    value\n}\n";
    let dir = project(&[
        (
            "Cargo.toml",
            "[package]\nname = \"bounds\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("src/lib.rs", "pub mod caller;\npub mod generic;\n"),
        ("src/generic.rs", bound),
        (
            "src/caller.rs",
            "pub struct Plain;\n\npub fn call() -> Plain {\n    crate::generic::keep(Plain)\n}\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let caller = json!({"file": "src/caller.rs"});
    let unmet = "4:26 error [rustc E0277] the trait bound `Plain: Clone` is not satisfied";
    let first = session.ok("diagnostics", caller.clone());
    assert!(first.contains(unmet), "{first}");
    let path = dir.path().join("src/generic.rs");
    std::fs::write(&path, bound.replace("<T: Clone>", "<T>")).unwrap();
    assert_eq!(
        session.ok("diagnostics", caller.clone()),
        "src/caller.rs: no problems"
    );
    std::fs::write(&path, bound).unwrap();
    let again = session.ok("diagnostics", caller);
    assert!(again.contains(unmet), "{again}");
    session.keep(dir);
}

/// A parameter dropped from num-traits' `Real::max` is an error in the
/// macro that writes the method (`src/macros.rs`); rust-analyzer gives
/// the trait's line, where `cargo check` puts the error too, a hint tied
/// to it, answered as the error it is part of.
#[test]
fn rust_analyzer_answers_a_hint_of_an_error_as_that_error() {
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is not on PATH (or is only rustup's proxy)");
    }
    let Some(dir) = real_project("num-traits-0.2.19") else {
        return skip("target/real-projects/num-traits-0.2.19 is missing (.ci/run copies it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let file = json!({"file": "src/real.rs"});
    let clean = "src/real.rs: no problems";
    assert_eq!(
        past_loading_warning(&session.ok("diagnostics", file.clone())),
        clean
    );
    let path = dir.path().join("src/real.rs");
    let original = std::fs::read_to_string(&path).unwrap();
    let dropped = original.replacen(
        "    fn max(self, other: Self) -> Self;",
        "    fn max(self) -> Self;",
        1,
    );
    std::fs::write(&path, dropped).unwrap();
    let broken = session.ok("diagnostics", file.clone());
    assert!(
        broken.contains(
            "438:12 error [rustc E0050] trait requires 1 parameter (part of the problem reported at src/macros.rs:16)"
        ),
        "{broken}"
    );
    std::fs::write(&path, &original).unwrap();
    assert_eq!(session.ok("diagnostics", file), clean);
}

/// rust-analyzer on num-traits, a second crate of the registry, whose
/// traits' methods share their names with free functions and are
/// implemented for every number type by macros. A method is found by
/// `Trait.method` though its name also matches a type (`Pow`); a name
/// implemented at many macro calls lists its declarations first, each
/// place once; references cross files; and a file that imports a
/// function follows its rename on disk, both ways.
#[test]
fn rust_analyzer_answers_on_num_traits() {
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is not on PATH (or is only rustup's proxy)");
    }
    let Some(dir) = real_project("num-traits-0.2.19") else {
        return skip("target/real-projects/num-traits-0.2.19 is missing (.ci/run copies it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let ask = |tool: &str, arguments| past_loading_warning(&session.ok(tool, arguments));
    let method = ask("hover", json!({"symbol": "Pow.pow"}));
    assert!(
        method.starts_with(
            "num_traits::pow::Pow\n\npub trait Pow<RHS>\npub fn pow(self, rhs: RHS) -> Self::Output"
        ),
        "{method}"
    );
    let method = ask("hover", json!({"symbol": "PrimInt.pow"}));
    assert!(
        method.starts_with(
            "num_traits::int::PrimInt\n\npub trait PrimInt\npub fn pow(self, exp: u32)"
        ),
        "{method}"
    );
    // The two trait methods and the function, before the macros' calls.
    let candidates = ask("hover", json!({"symbol": "pow"}));
    let shown: Vec<&str> = candidates.lines().skip(1).take(3).collect();
    assert_eq!(
        shown,
        [
            "src/int.rs:358:8  function pow",
            "src/pow.rs:18:8  function pow",
            "src/pow.rs:179:8  function pow"
        ],
        "{candidates}"
    );
    assert!(
        candidates.contains("\n… 80 more: `search` with query \"pow\" lists every one, by file"),
        "{candidates}"
    );
    assert_eq!(
        ask("hover", json!({"symbol": "is_positive"})),
        "`is_positive` is ambiguous (5 matches); ask again with file and line:\n\
         src/sign.rs:97:8  function is_positive\n\
         src/sign.rs:38:8  function is_positive\n\
         src/sign.rs:75:1  function is_positive\n\
         src/sign.rs:153:1  function is_positive\n\
         src/sign.rs:154:1  function is_positive"
    );
    let search = ask("search", json!({"query": "pow"}));
    assert!(
        search.starts_with("symbols (110)\n  src/int.rs\n    function pow 358:8\n"),
        "{search}"
    );
    assert!(
        search.contains("\n  … 90 more symbols (call again with offset=20)\n"),
        "{search}"
    );
    let references = ask(
        "find_references",
        json!({"file": "src/lib.rs", "line": 402, "symbol": "clamp"}),
    );
    assert!(
        references.starts_with("13 references in 2 files\n"),
        "{references}"
    );
    assert!(
        references.contains(
            "\nsrc/float.rs (2)\n  682:16  crate::clamp(self, min, max)\n  \
             1546:16  crate::clamp(self, min, max)\nsrc/lib.rs (11)\n"
        ),
        "{references}"
    );
    let outline = ask(
        "document_symbols",
        json!({"file": "src/pow.rs", "depth": 2}),
    );
    assert!(
        outline.starts_with(
            "interface Pow 5-19\n  type-parameter Output 7-8\n  method pow 10-18\nfunction pow_impl 21-67\n"
        ),
        "{outline}"
    );

    let importer = json!({"file": "src/lib.rs"});
    assert_eq!(
        session.ok("diagnostics", importer.clone()),
        "src/lib.rs: no problems"
    );
    let pow = dir.path().join("src/pow.rs");
    let original = std::fs::read_to_string(&pow).unwrap();
    std::fs::write(
        &pow,
        original.replace("pub fn checked_pow<", "pub fn checked_power<"),
    )
    .unwrap();
    let diagnostics = session.ok("diagnostics", importer.clone());
    assert!(
        diagnostics.contains(
            "49:22 error [rustc E0432] unresolved import `crate::pow::checked_pow` \
             no `checked_pow` in `pow`"
        ),
        "{diagnostics}"
    );
    std::fs::write(&pow, original).unwrap();
    assert_eq!(
        session.ok("diagnostics", importer),
        "src/lib.rs: no problems"
    );
}

/// One Python server, configured alone, on requests: what its hover
/// starts with, and the edit it is checked with and what it reports.
struct PythonServer {
    name: &'static str,
    command: &'static str,
    args: &'static str,
    hover: &'static str,
    broken: (&'static str, &'static str),
    reported: &'static str,
}

/// The alternatives to pyright, each configured as a user picks it, on
/// requests' own sources: hover, definition across files, references,
/// outline, and diagnostics after an edit and after its undo.
#[test]
fn each_python_alternative_answers_on_requests() {
    let undefined = ("url=url, **kwargs)", "url=undefined_url, **kwargs)");
    let servers = [
        PythonServer {
            name: "basedpyright",
            command: "basedpyright-langserver",
            args: "--stdio",
            hover: "(function) def get(",
            broken: undefined,
            reported: "71:51 error [basedpyright reportUndefinedVariable] \"undefined_url\" is not defined",
        },
        PythonServer {
            name: "pylsp",
            command: "pylsp",
            args: "",
            hover: "get(\n    url: _t.UriType,",
            broken: undefined,
            reported: "71:51 error [pyflakes] undefined name 'undefined_url'",
        },
        PythonServer {
            name: "jedi",
            command: "jedi-language-server",
            args: "",
            hover: "def get(url: _t.UriType,",
            // Jedi reports syntax errors only.
            broken: ("def get(", "def get(("),
            reported: "74:1 error [compile] SyntaxError: '(' was never closed",
        },
        PythonServer {
            name: "pyrefly",
            command: "pyrefly",
            args: "lsp",
            hover: "(function) get: def get(",
            broken: undefined,
            reported: "71:51 error [Pyrefly unknown-name] Could not find name `undefined_url`",
        },
        PythonServer {
            name: "ty",
            command: "ty",
            args: "server",
            hover: "def get(",
            broken: undefined,
            reported: "71:51 error [ty unresolved-reference] Name `undefined_url` used when not defined",
        },
    ];
    for server in &servers {
        if !have(server.command) {
            return skip(&format!("{} is not on PATH", server.command));
        }
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    for server in &servers {
        python_server_on(dir.path(), server);
    }
}

fn python_server_on(project: &std::path::Path, server: &PythonServer) {
    let config = python_server(server.name, server.command, server.args, "");
    let session = Session::start_with_user_config(&config, &root_arg(project));
    let name = server.name;
    let api = "src/requests/api.py";
    let hover = session.ok("hover", json!({"file": api, "line": 74, "symbol": "get"}));
    assert!(hover.starts_with(server.hover), "{name}: {hover}");
    // Within the file: jedi-based servers resolve the package's other
    // modules to an installed requests, outside the roots, unless told
    // of the `src/` layout.
    let definition = session.ok(
        "definition",
        json!({"file": api, "line": 87, "symbol": "request"}),
    );
    assert_eq!(
        definition, "src/requests/api.py:24:5  def request(",
        "{name}"
    );
    let references = session.ok(
        "find_references",
        json!({"file": api, "line": 74, "symbol": "get"}),
    );
    assert!(
        references.contains("\n  171:26  from .api import delete, get, head"),
        "{name}: {references}"
    );
    let outline = session.ok("document_symbols", json!({"file": api, "depth": 1}));
    assert!(outline.contains("function get 74-"), "{name}: {outline}");

    let clean = "src/requests/api.py: no problems";
    assert_eq!(
        session.ok("diagnostics", json!({"file": api})),
        clean,
        "{name}"
    );
    let original = std::fs::read_to_string(project.join(api)).unwrap();
    let (from, to) = server.broken;
    std::fs::write(project.join(api), original.replacen(from, to, 1)).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": api}));
    assert!(
        diagnostics.contains(server.reported),
        "{name}: {} in {diagnostics}",
        server.reported
    );
    std::fs::write(project.join(api), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": api})),
        clean,
        "{name}"
    );
}

/// One Python server on gunicorn, where its answers differ from the
/// others'.
struct OnGunicorn {
    name: &'static str,
    command: &'static str,
    args: &'static str,
    /// A file the project adds to choose the server's checks: pyrefly
    /// checks a project without one with its `basic` preset, which leaves
    /// out an import of a name the module no longer has.
    config: Option<(&'static str, &'static str)>,
    /// How the hover of `Logger.close_on_exec` starts, and of the
    /// documented `Arbiter.reap_workers`: where the server names no
    /// methods (jedi), its outline places the one found by text.
    method: &'static str,
    documented: &'static str,
    /// What it reports in the importer when the imported function is
    /// renamed; `None` where it does not resolve imports (pylsp's
    /// pyflakes, jedi).
    import_error: Option<&'static str>,
}

/// The alternatives to pyright on gunicorn, a second project beside
/// requests: a name shared by a function and a method is listed as
/// ambiguous, a method is found by `Class.method` (by text and the
/// file's outline where the server names no methods), a documented
/// method is answered, references cross modules, and the diagnostics
/// of a module that imports a function follow its rename on disk in the
/// module that defines it, both ways.
#[test]
fn each_python_alternative_answers_on_gunicorn() {
    let servers = [
        OnGunicorn {
            name: "basedpyright",
            command: "basedpyright-langserver",
            args: "--stdio",
            config: None,
            method: "(method) def close_on_exec(self: Self@Logger) -> None",
            documented: "(method) def reap_workers(self: Self@Arbiter) -> None",
            import_error: Some(
                "22:27 error [basedpyright reportAttributeAccessIssue] \
                 \"split_request_uri\" is unknown import symbol",
            ),
        },
        OnGunicorn {
            name: "pylsp",
            command: "pylsp",
            args: "",
            config: None,
            method: "close_on_exec(self)",
            documented: "reap_workers(self)",
            import_error: None,
        },
        OnGunicorn {
            name: "jedi",
            command: "jedi-language-server",
            args: "",
            config: None,
            method: "def close_on_exec(self)\nFull name: gunicorn.glogging.Logger.close_on_exec",
            documented: "def reap_workers(self)",
            import_error: None,
        },
        OnGunicorn {
            name: "pyrefly",
            command: "pyrefly",
            args: "lsp",
            config: Some(("pyrefly.toml", "preset = \"default\"\n")),
            method: "(method) close_on_exec: def close_on_exec(self: Self@Logger)",
            documented: "(method) reap_workers: def reap_workers(self: Self@Arbiter)",
            import_error: Some(
                "22:27 error [Pyrefly missing-module-attribute] \
                 Could not import `split_request_uri` from `gunicorn.util`",
            ),
        },
        OnGunicorn {
            name: "ty",
            command: "ty",
            args: "server",
            config: None,
            method: "def close_on_exec(self) -> Unknown",
            documented: "def reap_workers(self) -> Unknown",
            import_error: Some(
                "22:27 error [ty missing-module-member] \
                 Module `gunicorn.util` has no member `split_request_uri`",
            ),
        },
    ];
    for server in &servers {
        if !have(server.command) {
            return skip(&format!("{} is not on PATH", server.command));
        }
    }
    for server in &servers {
        let Some(dir) = real_project("gunicorn-27.0.1") else {
            return skip("target/real-projects/gunicorn-27.0.1 is missing (.ci/run unpacks it)");
        };
        python_server_on_gunicorn(dir.path(), server);
    }
}

fn python_server_on_gunicorn(project: &std::path::Path, server: &OnGunicorn) {
    if let Some((file, text)) = server.config {
        write(project, file, text);
    }
    let config = python_server(server.name, server.command, server.args, "");
    let session = Session::start_with_user_config(&config, &root_arg(project));
    let name = server.name;
    // With its project configured pyrefly checks every file at its start,
    // longer than a request waits under the suite's load.
    let ask = |tool: &str, arguments| past_loading_warning(&session.ok(tool, arguments));
    let shared = ask("hover", json!({"symbol": "close_on_exec"}));
    assert!(
        shared.starts_with("`close_on_exec` is ambiguous (")
            && shared.contains("\ngunicorn/util.py:273:5  ")
            && shared.contains("\ngunicorn/glogging.py:422:"),
        "{name}: {shared}"
    );
    let method = ask("hover", json!({"symbol": "Logger.close_on_exec"}));
    assert!(method.starts_with(server.method), "{name}: {method}");
    let documented = ask("hover", json!({"symbol": "Arbiter.reap_workers"}));
    assert!(
        documented.starts_with(server.documented),
        "{name}: {documented}"
    );
    assert!(
        documented.contains("Reap workers to avoid zombie processes"),
        "{name}: {documented}"
    );
    let references = ask(
        "find_references",
        json!({"file": "gunicorn/util.py", "line": 671, "symbol": "split_request_uri"}),
    );
    assert!(
        references.starts_with("11 references in 6 files\n")
            && references.contains("\n  22:27  from gunicorn.util import split_request_uri\n"),
        "{name}: {references}"
    );
    let outline = ask(
        "document_symbols",
        json!({"file": "gunicorn/pidfile.py", "depth": 1}),
    );
    assert!(
        outline.contains("class Pidfile 10-87 (+"),
        "{name}: {outline}"
    );

    let importer = json!({"file": "gunicorn/http2/request.py"});
    // A server still busy with the change when its wait ends says so
    // above its answer (on a loaded machine); the answer itself must hold.
    let diagnostics = || without_settling_warning(&session.ok("diagnostics", importer.clone()));
    let before = diagnostics();
    let util = project.join("gunicorn/util.py");
    let original = std::fs::read_to_string(&util).unwrap();
    std::fs::write(
        &util,
        original.replace("def split_request_uri(", "def split_uri("),
    )
    .unwrap();
    let broken = diagnostics();
    match server.import_error {
        Some(reported) => assert!(broken.contains(reported), "{name}: {reported} in {broken}"),
        None => assert_eq!(broken, before, "{name}"),
    }
    std::fs::write(&util, original).unwrap();
    assert_eq!(diagnostics(), before, "{name}");
}

/// `answer` without the warning that a server was still taking in changes
/// on disk when its wait ended.
fn without_settling_warning(answer: &str) -> String {
    answer
        .lines()
        .filter(|line| {
            !(line.starts_with("warning: [") && line.contains("is still taking in changes on disk"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// HTML5 Boilerplate's page with vscode-html-language-server: the outline,
/// an element's hover, and its embedded style and script checked after an
/// edit (which needs the CSS rules' settings section, as the CSS server
/// does) and after its undo.
#[test]
fn html_server_answers_on_html5_boilerplate() {
    if !have("vscode-html-language-server") {
        return skip("vscode-html-language-server is not on PATH");
    }
    let Some(dir) = real_project("html5-boilerplate-9.0.1/dist") else {
        return skip(
            "target/real-projects/html5-boilerplate-9.0.1 is missing (.ci/run unpacks it)",
        );
    };
    let session = Session::start(&root_arg(dir.path()));
    let index = "index.html";
    let outline = session.ok("document_symbols", json!({"file": index}));
    // The server's symbols are flat; the outline nests them as the page
    // does.
    assert!(
        outline.starts_with("field html.no-js 2-33\n  field head 4-23\n    field meta 5\n"),
        "{outline}"
    );
    assert!(outline.contains("\n  field body 25-31\n"), "{outline}");
    let hover = session.ok("hover", json!({"file": index, "line": 4, "symbol": "head"}));
    assert!(
        hover.starts_with("The head element represents a collection of metadata for the Document."),
        "{hover}"
    );
    assert_eq!(
        session.ok("diagnostics", json!({"file": index})),
        "index.html: no problems"
    );
    let original = std::fs::read_to_string(dir.path().join(index)).unwrap();
    let broken = original.replacen(
        "<head>",
        "<head>\n  <style>p { color: ; }</style>\n  <script>let x = ;</script>",
        1,
    );
    std::fs::write(dir.path().join(index), broken).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": index})),
        "index.html: 2 errors\n\
         \x20 5:21 error [css css-propertyvalueexpected] property value expected\n\
         \x20 6:19 error [javascript] Expression expected."
    );
    std::fs::write(dir.path().join(index), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": index})),
        "index.html: no problems"
    );
}

/// A Dockerfile of gunicorn's examples with docker-langserver: its
/// instructions as the outline, an instruction's documentation, a clear
/// refusal of references, and its checks of an edit and of its undo.
#[test]
fn dockerfile_server_answers_on_gunicorns_example() {
    if !have("docker-langserver") {
        return skip("docker-langserver is not on PATH");
    }
    let Some(dir) = real_project("gunicorn-27.0.1/examples/celery_alternative") else {
        return skip("target/real-projects/gunicorn-27.0.1 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let file = "Dockerfile";
    let outline = session.ok("document_symbols", json!({"file": file}));
    assert!(
        outline.starts_with("function FROM 10\nfunction WORKDIR 13\nfunction RUN 16-18\n"),
        "{outline}"
    );
    assert!(
        outline.ends_with("function HEALTHCHECK 42-43\nfunction CMD 46"),
        "{outline}"
    );
    let hover = session.ok(
        "hover",
        json!({"file": file, "line": 13, "symbol": "WORKDIR"}),
    );
    assert!(
        hover.starts_with("Set the working directory for any subsequent `ADD`, `COPY`"),
        "{hover}"
    );
    assert_eq!(
        session.err(
            "find_references",
            json!({"file": file, "line": 13, "symbol": "WORKDIR"})
        ),
        "[dockerfile] does not support references"
    );
    assert_eq!(
        session.ok("diagnostics", json!({"file": file})),
        "Dockerfile: no problems"
    );
    let original = std::fs::read_to_string(dir.path().join(file)).unwrap();
    let broken = original.replacen("WORKDIR /app", "WORKDIR /app\nEXPOSE port", 1);
    std::fs::write(dir.path().join(file), broken).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": file})),
        "Dockerfile: 1 error\n  14:8 error [dockerfile-utils 24] Invalid containerPort: port"
    );
    std::fs::write(dir.path().join(file), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": file})),
        "Dockerfile: no problems"
    );
}

/// A session started on `root` with `file` broken on disk by `breaking`:
/// its first `diagnostics` must already be `errors` (the first answer is
/// complete, not whatever came first), then the fix and the break again
/// are each answered fresh. Returns with the file as it was.
fn started_on_a_broken_file(
    root: &std::path::Path,
    file: &str,
    breaking: fn(&str) -> String,
    errors: &str,
) -> Session {
    started_on_a_broken_file_with(
        root,
        file,
        breaking,
        errors,
        &format!("{file}: no problems"),
    )
}

/// As [`started_on_a_broken_file`], for a file whose own text has
/// problems: `clean` is the answer for it.
fn started_on_a_broken_file_with(
    root: &std::path::Path,
    file: &str,
    breaking: fn(&str) -> String,
    errors: &str,
    clean: &str,
) -> Session {
    let path = root.join(file);
    let original = std::fs::read_to_string(&path).unwrap();
    let broken = breaking(&original);
    std::fs::write(&path, &broken).unwrap();
    let session = Session::start(&root_arg(root));
    assert_eq!(session.ok("diagnostics", json!({"file": file})), errors);
    for (text, answer) in [(&original, clean), (&broken, errors), (&original, clean)] {
        std::fs::write(&path, text).unwrap();
        assert_eq!(session.ok("diagnostics", json!({"file": file})), answer);
    }
    session
}

/// @vue/language-server on VitePress's default theme, beside
/// typescript-language-server, which Windlass starts with the Vue
/// server's TypeScript plugin and relays the Vue server's TypeScript
/// questions to. The first answer is complete: a component broken on disk
/// before the servers start has TypeScript's error in its template and
/// the Vue compiler's; the fix and the break again are answered fresh.
/// TypeScript answers hover, definition (from the template into a
/// compiled composable) and references across components and scripts;
/// the Vue server the outline, which TypeScript has none of.
#[test]
fn vue_server_answers_on_vitepress_theme() {
    for server in [
        "vue-language-server",
        "typescript-language-server",
        "tsserver",
    ] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = vitepress_theme() else {
        return skip("target/real-projects/vitepress-1.6.4 is missing (.ci/run installs it)");
    };
    let file = "components/VPNavBarTitle.vue";
    let session = started_on_a_broken_file(
        dir.path(),
        file,
        |text| {
            text.replacen("currentLang.link", "currentLang.lnk", 1)
                .replacen(
                    r#"<slot name="nav-bar-title-before" />"#,
                    r#"<slot name="nav-bar-title-before" /></span>"#,
                    1,
                )
        },
        "components/VPNavBarTitle.vue: 2 errors\n\
         \x20 36:48 error [typescript 2551] Property 'lnk' does not exist on type \
         '{ label: string; link: string; }'. Did you mean 'link'?\n\
         \x20 40:43 error [vue 23] Invalid end tag.",
    );
    assert_eq!(
        session.ok(
            "hover",
            json!({"file": file, "line": 10, "symbol": "hasSidebar"})
        ),
        "const hasSidebar: ComputedRef<boolean>"
    );
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": file, "line": 36, "symbol": "normalizeLink"})
        ),
        "support/utils.js:21:17  export function normalizeLink(url) {"
    );
    let references = session.ok(
        "find_references",
        json!({"file": file, "line": 10, "symbol": "hasSidebar"}),
    );
    assert!(
        references.starts_with("10 references in 9 files\n")
            && references.contains(
                "components/VPSidebar.vue (1)\n  8:24  const { sidebarGroups, hasSidebar } = useSidebar()"
            )
            && references.contains("composables/sidebar.js (1)\n  56:9  hasSidebar,"),
        "{references}"
    );
    let outline = session.ok("document_symbols", json!({"file": file}));
    assert!(
        outline.starts_with("module script setup 1-30\n  variable site 9\n")
            && outline.contains("\nmodule template 32-47\n  field div.VPNavBarTitle 33-46\n"),
        "{outline}"
    );
    let status = session.ok("status", json!({}));
    assert!(
        status.contains(
            "[typescript] (typescript,typescriptreact,javascript,javascriptreact,vue) \
             typescript-language-server running"
        ) && status.contains("[vue] vue-language-server running"),
        "{status}"
    );
}

/// @vue/language-server with typescript-language-server on the theme of
/// Vue's own documentation (@vue/theme, its sources as published), a
/// second Vue project: a composable named alone is found and hovered; a
/// name five functions and constants share is listed as ambiguous, and
/// `search` puts the exact name first; its references cross components
/// and scripts; the outline of a component spans its blocks; and a
/// component's diagnostics follow an edit on disk of the composable it
/// calls and of the component it renders, each both ways.
#[test]
fn vue_server_answers_on_vue_theme() {
    for server in [
        "vue-language-server",
        "typescript-language-server",
        "tsserver",
    ] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = vue_theme() else {
        return skip("target/real-projects/vue-theme-2.4.0 is missing (.ci/run installs it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let nav = json!({"file": "src/vitepress/components/VPNav.vue"});
    assert_eq!(
        session.ok("diagnostics", nav.clone()),
        "src/vitepress/components/VPNav.vue: no problems"
    );
    let edits = [
        (
            "src/vitepress/composables/nav.ts",
            "    toggleScreen\n  }",
            "    toggle: toggleScreen\n  }",
            "src/vitepress/components/VPNav.vue: 1 error\n\
             \x20 8:36 error [typescript 2339] Property 'toggleScreen' does not exist on type \
             '{ isScreenOpen: Ref<boolean, boolean>; openScreen: () => void; closeScreen: () => void; \
             toggle: () => void; }'.",
        ),
        (
            "src/vitepress/components/VPNavBar.vue",
            "  isScreenOpen: boolean",
            "  screenOpen: boolean",
            "src/vitepress/components/VPNav.vue: 1 error\n\
             \x20 16:6 error [typescript 2345] Argument of type '{ isScreenOpen: boolean; \
             onToggleScreen: any; }' is not assignable to parameter of type '{ readonly screenOpen: \
             boolean; } & VNodeProps & AllowedComponentProps & ComponentCustomProps & \
             Record<string, unknown>'. Property 'screenOpen' is missing in type '{ isScreenOpen: \
             boolean; onToggleScreen: any; }' but required in type '{ readonly screenOpen: boolean; }'.",
        ),
    ];
    for (file, old, new, broken) in edits {
        let path = dir.path().join(file);
        let original = std::fs::read_to_string(&path).unwrap();
        assert!(original.contains(old), "{file}");
        std::fs::write(&path, original.replacen(old, new, 1)).unwrap();
        assert_eq!(session.ok("diagnostics", nav.clone()), broken, "{file}");
        std::fs::write(&path, original).unwrap();
        assert_eq!(
            session.ok("diagnostics", nav.clone()),
            "src/vitepress/components/VPNav.vue: no problems",
            "{file} restored"
        );
    }
    assert_eq!(
        past_loading_warning(&session.ok("hover", json!({"symbol": "useNav"}))),
        "function useNav(): {\n\
         \x20   isScreenOpen: Ref<boolean, boolean>;\n\
         \x20   openScreen: () => void;\n\
         \x20   closeScreen: () => void;\n\
         \x20   toggleScreen: () => void;\n\
         }"
    );
    assert_eq!(
        past_loading_warning(&session.ok("hover", json!({"symbol": "toggle"}))),
        "`toggle` is ambiguous (5 matches); ask again with file and line:\n\
         src/vitepress/components/VPLocalNavOutlineDropdown.vue:20:10  function toggle\n\
         src/vitepress/components/VPNavScreenMenuGroup.vue:20:10  function toggle\n\
         src/vitepress/composables/sidebar.ts:32:12  function toggle\n\
         src/core/components/VTSwitchAppearance.vue:30:9  constant toggle\n\
         src/core/components/VTSwitchAppearance.vue:11:17  constant toggle"
    );
    let search = session.ok("search", json!({"query": "toggle"}));
    assert!(
        search.starts_with(
            "symbols (7)\n  src/vitepress/components/VPLocalNavOutlineDropdown.vue\n    function toggle 20:10\n"
        ) && search
            .contains("\n  src/vitepress/composables/nav.ts\n    function toggleScreen 16:12\n"),
        "{search}"
    );
    let references =
        past_loading_warning(&session.ok("find_references", json!({"symbol": "useConfig"})));
    assert!(
        references.starts_with("57 references in 29 files\n")
            && references.contains(
                "\nsrc/vitepress/composables/config.ts (1)\n\
                 \x20 40:17  export function useConfig() {\n"
            )
            && references.contains(
                "src/vitepress/components/VPNavBarMenu.vue (2)\n\
             \x20 2:10  import { useConfig } from '../composables/config'\n\
             \x20 7:20  const { config } = useConfig()\n"
            ),
        "{references}"
    );
    assert_eq!(
        past_loading_warning(&session.ok(
            "definition",
            json!({"file": "src/vitepress/components/VPNav.vue", "line": 16, "symbol": "VPNavBar"})
        )),
        "src/vitepress/components/VPNavBar.vue:1:1  <script lang=\"ts\" setup>"
    );
    assert_eq!(
        session.ok("document_symbols", nav.clone()),
        "module script setup 1-12\n\
         \x20 variable isScreenOpen 8\n\
         \x20 variable closeScreen 8\n\
         \x20 variable toggleScreen 8\n\
         \x20 variable hasSidebar 9\n\
         module template 14-23\n\
         \x20 field header.VPNav.nav-bar 15-22\n\
         \x20   field VPNavBar 16-20 (+1 nested)\n\
         \x20   field VPNavScreen 21\n\
         module style scoped 25-40\n\
         \x20 class .VPNav 26-31\n\
         \x20 module @media (min-width: 960px) 33-39\n\
         \x20   class .VPNav 34-38"
    );
}

/// sql-language-server on aiosql's example project (its sdist's
/// `example/`: queries kept in `.sql` files beside the Python that runs
/// them). The first answer is complete: the schema is broken on disk
/// before the server starts, and its parse error is the first answer;
/// then the fix (the linter's findings on the schema as published) and
/// the break again are answered fresh. It lints what it parses with
/// sqlint's rules; it completes keywords, and has no hover or outline,
/// which Windlass says.
#[test]
fn sql_server_answers_on_aiosql_example() {
    if !have("sql-language-server") {
        return skip("sql-language-server is not on PATH");
    }
    let Some(dir) = real_project("aiosql-15.0/example") else {
        return skip("target/real-projects/aiosql-15.0 is missing (.ci/run unpacks it)");
    };
    let schema = "sql/create_schema.sql";
    let session = started_on_a_broken_file_with(
        dir.path(),
        schema,
        |text| text.replacen("default CURRENT_DATE,", "default,", 1),
        "sql/create_schema.sql: 1 error\n\
         \x20 14:37 error [sql] Expected \"'\", \"+\", \"-\", \"--\", \"/*\", \"CURRENT_DATE\", \
         \"CURRENT_TIME\", \"CURRENT_TIMESTAMP\", \"CURRENT_USER\", \"FALSE\", \"LOCALTIME\", \
         \"LOCALTIMESTAMP\", \"NULL\", \"SESSION_USER\", \"SYSTEM_USER\", \"TRUE\", \"USER\", \
         \"\\\"\", \"`\", [ \\t\\n\\r], [0-9], [1-9], or [A-Za-z_] but \",\" found.",
        "sql/create_schema.sql: 2 errors\n\
         \x20 2:1 error [sql] reserved word must be uppercase\n\
         \x20 9:1 error [sql] reserved word must be uppercase",
    );
    let queries = session.ok("diagnostics", json!({"file": "greetings.sql"}));
    assert!(
        queries.starts_with(
            "greetings.sql: 13 errors\n\
             \x20 3:1 error [sql] reserved word must be uppercase\n\
             \x20 3:1 error [sql] A linebreak is required after select keyword\n"
        ),
        "{queries}"
    );
    let completion = session.ok(
        "completion",
        json!({"file": schema, "line": 15, "column": 5}),
    );
    assert!(
        completion.contains("FOREIGN KEY  text  keyword"),
        "{completion}"
    );
    assert_eq!(
        session.err(
            "hover",
            json!({"file": "greetings.sql", "line": 3, "symbol": "greeting"})
        ),
        "[sql] does not support hover"
    );
    assert_eq!(
        session.err("document_symbols", json!({"file": schema})),
        "[sql] does not support document symbols"
    );
}

/// sql-language-server on pg_activity's queries (its sdist's
/// `pgactivity/queries/`: PostgreSQL queries in `.sql` files its Python
/// code reads, with psycopg's `%(name)s` placeholders), a second SQL
/// project. A query's diagnostics follow an edit on disk, both ways; a
/// query it parses gets sqlint's findings; the MySQL-flavoured subset it
/// parses stops at a placeholder, which its parse error shows; it
/// completes keywords. It has no hover, definition, references or
/// outline, and each answer says so; the queries share no names for it
/// to follow across files (it knows tables only from a database
/// connection), so dependent freshness has nothing to ask.
#[test]
fn sql_server_answers_on_pg_activity_queries() {
    if !have("sql-language-server") {
        return skip("sql-language-server is not on PATH");
    }
    let Some(dir) = real_project("pg-activity-3.6.2/pgactivity/queries") else {
        return skip("target/real-projects/pg-activity-3.6.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let version = "get_version.sql";
    let path = dir.path().join(version);
    let original = std::fs::read_to_string(&path).unwrap();
    let broken = original.replacen("SELECT version()", "SELECT version(", 1);
    let clean = "get_version.sql: no problems";
    let error = "get_version.sql: 1 error\n\
                 \x20 2:20 error [sql] Expected [.], [A-Za-z0-9_:[\\]'], or [A-Za-z0-9_] but \" \" found.";
    for (text, answer) in [
        (&original, clean),
        (&broken, error),
        (&original, clean),
        (&broken, error),
        (&original, clean),
    ] {
        std::fs::write(&path, text).unwrap();
        assert_eq!(session.ok("diagnostics", json!({"file": version})), answer);
    }
    assert_eq!(
        session.ok(
            "diagnostics",
            json!({"file": "get_wal_senders_post_090100.sql"})
        ),
        "get_wal_senders_post_090100.sql: 2 errors\n\
         \x20 3:1 error [sql] A linebreak is required after SELECT keyword\n\
         \x20 4:1 error [sql] A linebreak is required after FROM keyword"
    );
    let placeholder = session.ok("diagnostics", json!({"file": "do_pg_cancel_backend.sql"}));
    assert!(
        placeholder.starts_with("do_pg_cancel_backend.sql: 1 error\n  3:27 error [sql] Expected ")
            && placeholder.ends_with(" but \"%\" found."),
        "{placeholder}"
    );
    let completion = session.ok(
        "completion",
        json!({"file": version, "line": 2, "column": 1}),
    );
    assert!(
        completion.contains("\nSELECT  text  keyword\n"),
        "{completion}"
    );
    for (tool, lacks) in [
        ("hover", "hover"),
        ("definition", "definition"),
        ("find_references", "references"),
    ] {
        assert_eq!(
            session.err(
                tool,
                json!({"file": version, "line": 2, "symbol": "pg_version"})
            ),
            format!("[sql] does not support {lacks}")
        );
    }
    assert_eq!(
        session.err("document_symbols", json!({"file": version})),
        "[sql] does not support document symbols"
    );
}

/// svelte-language-server on svelte-french-toast's published components.
/// The first answer is complete: the component is broken on disk before
/// the server starts, and the first `diagnostics` already has its
/// compiler's error; then the fix and the break again are each answered
/// fresh; and the outline, hover, definition (into the sibling
/// component's declarations) and references of the component's script.
#[test]
fn svelte_server_answers_on_svelte_french_toast() {
    if !have("svelteserver") {
        return skip("svelteserver is not on PATH");
    }
    let Some(dir) = real_project("svelte-french-toast-1.2.0") else {
        return skip(
            "target/real-projects/svelte-french-toast-1.2.0 is missing (.ci/run unpacks it)",
        );
    };
    let file = "dist/components/ToastBar.svelte";
    let session = started_on_a_broken_file(
        dir.path(),
        file,
        |text| text.replacen("{/if}", "", 1),
        "dist/components/ToastBar.svelte: 2 errors\n\
         \x20 34:1 error [svelte invalid-closing-tag] </div> attempted to close an element that was not open\n\
         \x20 34:1 error [js -1] </div> attempted to close an element that was not open",
    );

    let outline = session.ok("document_symbols", json!({"file": file}));
    assert!(
        outline.starts_with("field script 1-16\n  variable ToastIcon 1\n"),
        "{outline}"
    );
    assert!(
        outline.contains("\n  field svelte:component 24-27\n"),
        "{outline}"
    );
    assert!(outline.ends_with("  class .fadeOut 107-109"), "{outline}");
    let hover = session.ok(
        "hover",
        json!({"file": file, "line": 1, "symbol": "ToastIcon"}),
    );
    assert!(hover.contains("class ToastIcon"), "{hover}");
    let definition = session.ok(
        "definition",
        json!({"file": file, "line": 25, "symbol": "ToastIcon"}),
    );
    assert!(
        definition.starts_with(
            "dist/components/ToastIcon.svelte.d.ts:15:22  export default class ToastIcon"
        ),
        "{definition}"
    );
    let references = session.ok(
        "find_references",
        json!({"file": file, "line": 8, "symbol": "factor"}),
    );
    assert_eq!(
        references,
        "3 references in 1 file\n\
         dist/components/ToastBar.svelte (3)\n\
         \x20 8:5  let factor;\n\
         \x20 12:3  factor = top ? 1 : -1;\n\
         \x20 21:18  style:--factor={factor}"
    );
}

/// Writes `text` to `path` as an editor's safe save does: into a new file
/// outside the roots (on their file system: the copies of the projects
/// are temporary directories too), renamed over the old one.
fn save_by_renaming(path: &std::path::Path, text: &str) {
    let beside = tempfile::tempdir().unwrap();
    let saved = beside.path().join("saved");
    std::fs::write(&saved, text).unwrap();
    std::fs::rename(&saved, path).unwrap();
}

/// svelte-language-server on svelte-sonner's published components, a
/// second Svelte project: four components, compiled to JavaScript, over
/// a store module published with its declaration (`state.js` and
/// `state.d.ts`), given the `jsconfig.json` with which a user has its
/// JavaScript checked. A component's diagnostics follow the store's
/// declaration renamed on disk, both ways, written in place or saved by
/// renaming a new file over it (the server was told of a file created,
/// and kept its old text); the store named alone is one
/// thing, its declaration and its module not two candidates; its
/// references cross components; `search` puts the exact name first and
/// names the offset that continues it; and a component's outline.
#[test]
fn svelte_server_answers_on_svelte_sonner() {
    if !have("svelteserver") {
        return skip("svelteserver is not on PATH");
    }
    let Some(dir) = real_project("svelte-sonner-0.3.28") else {
        return skip("target/real-projects/svelte-sonner-0.3.28 is missing (.ci/run unpacks it)");
    };
    write(
        dir.path(),
        "jsconfig.json",
        r#"{"compilerOptions": {"checkJs": true, "allowJs": true, "noEmit": true,
  "module": "ESNext", "moduleResolution": "Bundler", "target": "ESNext"}}
"#,
    );
    let session = Session::start(&root_arg(dir.path()));
    let toast = json!({"file": "dist/Toast.svelte"});
    let hint = |at: &str, name: &str| {
        format!(
            "\n  {at} hint [js 7044] Parameter '{name}' implicitly has an 'any' type, \
             but a better type may be inferred from usage."
        )
    };
    let clean = format!(
        "dist/Toast.svelte: 2 hints{}{}",
        hint("181:24", "event"),
        hint("214:24", "event")
    );
    let broken = format!(
        "dist/Toast.svelte: 1 error, 6 hints\n\
         \x20 5:10 error [js 2724] '\"./state\"' has no exported member named 'toastState'. \
         Did you mean 'toastStore'?{}{}{}{}{}{}",
        hint("63:25", "height"),
        hint("69:42", "prev"),
        hint("69:48", "curr"),
        hint("69:54", "reducerIndex"),
        hint("181:24", "event"),
        hint("214:24", "event")
    );
    let state = dir.path().join("dist/state.d.ts");
    let original = std::fs::read_to_string(&state).unwrap();
    let renamed = original.replacen(
        "export declare const toastState:",
        "export declare const toastStore:",
        1,
    );
    for (text, answer) in [
        (&original, &clean),
        (&renamed, &broken),
        (&original, &clean),
    ] {
        std::fs::write(&state, text).unwrap();
        assert_eq!(&session.ok("diagnostics", toast.clone()), answer);
    }
    // Saved as editors that rename a new file over the old one save it.
    for (text, answer) in [(&renamed, &broken), (&original, &clean)] {
        save_by_renaming(&state, text);
        assert_eq!(&session.ok("diagnostics", toast.clone()), answer);
    }
    let hover = past_loading_warning(&session.ok("hover", json!({"symbol": "toastState"})));
    assert!(hover.starts_with("const toastState: {\n"), "{hover}");
    assert_eq!(
        past_loading_warning(&session.ok("definition", json!({"symbol": "cn"}))),
        "dist/internal/helpers.d.ts:3:25  export declare function cn(...classes: (string | undefined)[]): string;"
    );
    assert_eq!(
        session.ok(
            "find_references",
            json!({"file": "dist/Toaster.svelte", "line": 2, "symbol": "toastState"})
        ),
        "5 references in 3 files\n\
         dist/Toast.svelte (2)\n\
         \x20 5:10  import { toastState, useEffect } from './state';\n\
         \x20 30:62  const { toasts, heights, removeHeight, setHeight, remove } = toastState;\n\
         dist/Toaster.svelte (2)\n\
         \x20 2:10  import { toastState } from './state.js';\n\
         \x20 54:36  const { toasts, heights, reset } = toastState;\n\
         dist/state.d.ts (1)\n\
         \x20 3:22  export declare const toastState: {"
    );
    // Asked by name, it is the module's declaration, answered by
    // typescript-language-server, which reads no component: the answer
    // names the components that use it.
    let by_name =
        past_loading_warning(&session.ok("find_references", json!({"symbol": "toastState"})));
    assert!(
        by_name.contains(
            "note: by text, `toastState` also appears in 2 files the server listed no reference in; \
             it does not read svelte files: dist/Toast.svelte:5,30 dist/Toaster.svelte:2,54"
        ),
        "{by_name}"
    );
    let search = past_loading_warning(&session.ok("search", json!({"query": "toast"})));
    assert!(
        search.starts_with("symbols (")
            && search.contains(")\n  dist/Toast.svelte\n    variable toast 31:12\n")
            && search.contains(" more symbols (call again with offset=20)\n"),
        "{search}"
    );
    assert_eq!(
        session.ok("document_symbols", json!({"file": "dist/Loader.svelte"})),
        "field script 1-3\n\
         \x20 variable visible 1\n\
         \x20 constant bars 2\n\
         field div.sonner-loading-wrapper 5-11\n\
         \x20 field div.sonner-spinner 6-10\n\
         \x20   variable _ 7\n\
         \x20   variable i 7\n\
         \x20   field div.sonner-loading-bar 8"
    );
}

/// gopls as Debian ships it (0.5) on pkg/errors' sources as Debian ships
/// them. The first answer is complete (the file is broken on disk before
/// gopls starts); the fix and the break again are answered fresh; and the
/// outline, hover, definition in another file and references across the
/// package's tests.
#[test]
fn gopls_answers_on_pkg_errors() {
    if !have("gopls") {
        return skip("gopls is not on PATH");
    }
    let Some(dir) = real_project("pkg-errors-0.9.1") else {
        return skip("target/real-projects/pkg-errors-0.9.1 is missing (.ci/run unpacks it)");
    };
    let file = "errors.go";
    let session = started_on_a_broken_file(
        dir.path(),
        file,
        |text| format!("{text}\nfunc broken() int {{\n\treturn \"text\"\n}}\n"),
        "errors.go: 1 error\n\
         \x20 291:9 error [compiler IncompatibleAssign] cannot use \"text\" (untyped string constant) as int value in return statement",
    );

    // A function and two methods of one name are all candidates; a
    // method is addressed by the name gopls and `search` give it.
    assert_eq!(
        session.ok("hover", json!({"symbol": "Cause"})),
        "`Cause` is ambiguous (3 matches); ask again with file and line:\n\
         errors.go:275:6  function Cause\n\
         errors.go:160:21  method Cause\n\
         errors.go:245:23  method Cause"
    );
    let method = session.ok("hover", json!({"symbol": "withStack.Cause"}));
    assert!(
        method.starts_with("func (*withStack).Cause() error"),
        "{method}"
    );
    let outline = session.ok("document_symbols", json!({"file": file}));
    assert!(
        outline.starts_with(
            "function New 102-107\nfunction Errorf 112-117\nstruct fundamental 120-123\n"
        ),
        "{outline}"
    );
    assert!(outline.ends_with("\nfunction Cause 275-288"), "{outline}");
    let hover = session.ok("hover", json!({"file": file, "line": 102, "symbol": "New"}));
    assert!(
        hover.starts_with(
            "func New(message string) error\n\nNew returns an error with the supplied message."
        ),
        "{hover}"
    );
    let definition = session.ok(
        "definition",
        json!({"file": file, "line": 105, "symbol": "callers"}),
    );
    assert!(
        definition.starts_with("stack.go:163:6  func callers() *stack {"),
        "{definition}"
    );
    let references = session.ok(
        "find_references",
        json!({"file": file, "line": 102, "symbol": "New"}),
    );
    assert!(
        references.starts_with("40 references in 7 files\n")
            && references.contains("\nerrors.go (1)\n  102:6  func New(message string) error {\n"),
        "{references}"
    );
    assert!(
        references.contains("\nexample_test.go (9)\n  10:16  err := errors.New(\"whoops\")\n"),
        "{references}"
    );
}

/// gopls on pflag as Debian ships it, a second Go project beside
/// pkg/errors: a method found by its bare name and by `Type.method`, a name
/// shared by a package function and a method listed as ambiguous, the
/// method's references across the package, `search`'s exact match first,
/// and a caller's diagnostics following a change to a method it calls in
/// another file, both ways.
#[test]
fn gopls_answers_on_pflag() {
    if !have("gopls") {
        return skip("gopls is not on PATH");
    }
    let Some(dir) = real_project("pflag-1.0.6") else {
        return skip("target/real-projects/pflag-1.0.6 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let signature = "func (*FlagSet).GetString(name string) (string, error)";
    for asked in ["GetString", "FlagSet.GetString"] {
        let hover = session.ok("hover", json!({"symbol": asked}));
        assert!(hover.starts_with(signature), "{asked}: {hover}");
    }
    assert_eq!(
        session.ok("hover", json!({"symbol": "VarP"})),
        "`VarP` is ambiguous (2 matches); ask again with file and line:\n\
         flag.go:910:6  function VarP\n\
         flag.go:843:19  method VarP"
    );
    let references = session.ok("find_references", json!({"symbol": "FlagSet.VarP"}));
    assert!(
        references.starts_with("142 references in 35 files\n")
            && references.contains("\nflag.go (4)\n  825:4 843:19 906:14 911:14\n"),
        "{references}"
    );
    let search = session.ok("search", json!({"query": "GetString"}));
    assert!(
        search.starts_with("symbols (42)\n  string.go\n    method FlagSet.GetString 26:19\n"),
        "{search}"
    );
    let caller = json!({"file": "string.go"});
    assert_eq!(
        session.ok("diagnostics", caller.clone()),
        "string.go: no problems"
    );
    let flag = dir.path().join("flag.go");
    let original = std::fs::read_to_string(&flag).unwrap();
    let renamed = original.replace(
        "func (f *FlagSet) getFlagType(",
        "func (f *FlagSet) flagTypeOf(",
    );
    std::fs::write(&flag, renamed).unwrap();
    assert_eq!(
        session.ok("diagnostics", caller.clone()),
        "string.go: 1 error\n\
         \x20 27:16 error [compiler MissingFieldOrMethod] f.getFlagType undefined \
         (type *FlagSet has no field or method getFlagType)"
    );
    std::fs::write(&flag, original).unwrap();
    assert_eq!(session.ok("diagnostics", caller), "string.go: no problems");
}

/// gopls runs its analyzers (vet's printf check) only on a package that
/// type-checks: an edit that adds a type error to one file takes another
/// file's printf warning away. `check_edit` says the warning is no longer
/// reported beside the new errors, not that the edit fixed it.
#[test]
fn gopls_warnings_hidden_by_an_edits_errors_are_not_called_fixed() {
    if !have("gopls") {
        return skip("gopls is not on PATH");
    }
    let dir = project(&[
        ("go.mod", "module example.com/labels\n\ngo 1.19\n"),
        (
            "label.go",
            "package labels\n\nimport \"fmt\"\n\nfunc Label(n int) string {\n\treturn fmt.Sprintf(\"%d items\", n)\n}\n",
        ),
        (
            "show.go",
            "package labels\n\nimport \"fmt\"\n\nfunc Show() string {\n\treturn fmt.Sprintf(\"%d\", \"x\")\n}\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let printf = "6:9 warning [printf] fmt.Sprintf format %d has arg \"x\" of wrong type string";
    let both = session.ok("diagnostics", json!({"files": ["label.go", "show.go"]}));
    assert!(
        both.contains(&format!("show.go: 1 warning\n  {printf}")),
        "{both}"
    );
    let check = session.ok(
        "check_edit",
        json!({"file": "label.go", "replacements": [
            {"old": "return fmt.Sprintf(\"%d items\", n)", "new": "return n"}
        ]}),
    );
    assert!(
        check.contains(&format!(
            "show.go, not edited, after the edit: 0 new problems, 0 fixed, \
             1 no longer reported beside the new errors\n  unreported {printf}"
        )),
        "{check}"
    );
    assert!(!check.contains("fixed 6:9"), "{check}");
    session.keep(dir);
}

/// clangd on Brotli's C sources (its Python package's sdist), a second C
/// project beside LZ4. Brotli ships no compilation database: the copy has
/// the two-line compile_flags.txt a user writes (C, and its `include`
/// folder). A function declared in a header and defined in a .c file is
/// one candidate, shown as the documented prototype; its references
/// across the files clangd has seen, said to be possibly incomplete; two
/// `static` functions of one name in two files, each with its parameters
/// a line, listed as ambiguous though clangd has not seen either;
/// `search`'s exact match and the header's outline; and a .c file's
/// diagnostics following its header edited on disk, both ways, while the
/// answers of another open .c file, and of one after an unrelated file
/// changed, stay prompt and true.
#[test]
fn clangd_answers_on_brotli() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let Some(dir) = real_projects(&[("brotli-1.2.1/c", ".")]) else {
        return skip("target/real-projects/brotli-1.2.1 is missing (.ci/run unpacks it)");
    };
    write(dir.path(), "compile_flags.txt", "-xc\n-Iinclude\n");
    let session = Session::start(&root_arg(dir.path()));
    let decode = json!({"file": "dec/decode.c"});
    assert_eq!(
        session.ok("diagnostics", decode.clone()),
        "dec/decode.c: no problems"
    );
    let partial = "warning: [c,cpp] has no compile_commands.json, so it knows only the files \
                   it has opened; references, renames and callers may be incomplete";
    let hover = session.ok("hover", json!({"symbol": "BrotliWarmupBitReader"}));
    assert!(
        hover.starts_with("### function `BrotliWarmupBitReader`")
            && hover.contains("\nEnsures that accumulator is not empty.")
            && hover.ends_with("int BrotliWarmupBitReader(BrotliBitReader *br)"),
        "{hover}"
    );
    // clangd, which has not indexed the file with the body, gives the
    // prototype in the header: the body is found by text.
    assert_eq!(
        session.ok("definition", json!({"symbol": "BrotliWarmupBitReader"})),
        "note: [c,cpp] gave only the declaration; the definition below was found by text\n\
         dec/bit_reader.c:34:13  BROTLI_BOOL BrotliWarmupBitReader(BrotliBitReader* const br) {"
    );
    assert_eq!(
        session.ok(
            "find_references",
            json!({"symbol": "BrotliWarmupBitReader"})
        ),
        format!(
            "{partial}\n5 references in 3 files\n\
             dec/bit_reader.c (1)\n  34:13  BROTLI_BOOL BrotliWarmupBitReader(BrotliBitReader* const br) {{\n\
             dec/bit_reader.h (1)\n  59:29  BROTLI_INTERNAL BROTLI_BOOL BrotliWarmupBitReader(BrotliBitReader* br);\n\
             dec/decode.c (3)\n  663:8  if (!BrotliWarmupBitReader(br)) {{\n\
             \x20 1995:19  BROTLI_UNUSED(BrotliWarmupBitReader(br));\n\
             \x20 2520:14  if (!BrotliWarmupBitReader(br)) {{"
        )
    );
    let namesakes = session.ok("hover", json!({"symbol": "ShouldCompress"}));
    assert!(
        namesakes.starts_with(
            "`ShouldCompress` is ambiguous (2 matches); ask again with file and line:\n\
             enc/compress_fragment_two_pass.c:526:20  (text) static BROTLI_BOOL ShouldCompress(BrotliTwoPassArena* s,\n\
             enc/encode.c:443:20  (text) static BROTLI_BOOL ShouldCompress(\n"
        ),
        "{namesakes}"
    );
    let search = session.ok("search", json!({"query": "BrotliBuildHuffmanTable"}));
    assert!(
        search.starts_with(&format!(
            "{partial}\nsymbols (1)\n  dec/huffman.h\n    function BrotliBuildHuffmanTable 95:26\n"
        )),
        "{search}"
    );
    let outline = session.ok(
        "document_symbols",
        json!({"file": "dec/bit_reader.h", "depth": 1}),
    );
    assert!(
        outline.contains(
            "\nfunction BrotliInitBitReader 52\nfunction BrotliWarmupBitReader 59\n\
             function BrotliSafeReadBits32Slow 64-65\n"
        ) && outline.ends_with("\nfunction BrotliBitReaderSuppressUnusedFunctions 392-413"),
        "{outline}"
    );
    // Open beside decode.c, it is sent again with the text it had after
    // each change on disk; clangd checks it again only when asked to
    // rebuild (it was "published no diagnostics ... idle for 30 s").
    let reader = json!({"file": "dec/bit_reader.c"});
    assert_eq!(
        session.ok("diagnostics", reader.clone()),
        "dec/bit_reader.c: no problems"
    );
    let encode = dir.path().join("enc/encode.c");
    let unrelated = std::fs::read_to_string(&encode).unwrap();
    std::fs::write(&encode, format!("{unrelated}\nint brotli_unused_total;\n")).unwrap();
    assert_eq!(
        session.ok("diagnostics", decode.clone()),
        "dec/decode.c: no problems"
    );
    std::fs::write(&encode, unrelated).unwrap();
    let header = dir.path().join("dec/bit_reader.h");
    let original = std::fs::read_to_string(&header).unwrap();
    let widened = original.replacen(
        "BrotliWarmupBitReader(BrotliBitReader* br);",
        "BrotliWarmupBitReader(BrotliBitReader* br, int bits);",
        1,
    );
    std::fs::write(&header, widened).unwrap();
    let broken = session.ok("diagnostics", decode.clone());
    assert!(
        broken.starts_with(
            "dec/decode.c: 3 errors\n  663:32 error [clang typecheck_call_too_few_args] \
             Too few arguments to function call, expected 2, have 1"
        ),
        "{broken}"
    );
    std::fs::write(&header, original).unwrap();
    assert_eq!(
        session.ok("diagnostics", decode),
        "dec/decode.c: no problems"
    );
    // Its header changed and changed back before it was asked again.
    assert_eq!(
        session.ok("diagnostics", reader),
        "dec/bit_reader.c: no problems"
    );
}

/// tsgo, configured as a user picks it over typescript-language-server,
/// on zod's own sources. It publishes nothing: Windlass asks it for each
/// file's diagnostics (`textDocument/diagnostic`).
#[test]
fn tsgo_answers_on_zod_when_asked_for_diagnostics() {
    if !have("tsgo") {
        return skip("tsgo is not on PATH");
    }
    let Some(dir) = real_project("zod-4.6.7") else {
        return skip("target/real-projects/zod-4.6.7 is missing (.ci/run unpacks it)");
    };
    let session = Session::start_with_user_config("[server.tsgo]\n", &root_arg(dir.path()));
    let parse = "src/v4/core/parse.ts";
    // The first answer after start is the loaded project's.
    assert_eq!(
        session.ok("diagnostics", json!({"file": parse})),
        "src/v4/core/parse.ts: no problems"
    );
    assert_eq!(
        session.ok(
            "hover",
            json!({"file": parse, "line": 10, "symbol": "finalizeParams"})
        ),
        "function finalizeParams(callee: util.AnyFunc, params: $ParseParams | undefined): $ParseParams"
    );
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": parse, "line": 39, "symbol": "_parse"})
        ),
        "src/v4/core/parse.ts:22:14  export const _parse: (_Err: $ZodErrorClass) => $Parse = (_Err) => {"
    );
    let references = session.ok(
        "find_references",
        json!({"file": parse, "line": 10, "symbol": "finalizeParams"}),
    );
    assert!(
        references.contains("5 references in 1 file\n")
            && references.contains(
                "\n  202:45  return parse(schema, value, ctx as any, finalizeParams(fn, _params)) as any;"
            ),
        "{references}"
    );
    let outline = session.ok("document_symbols", json!({"file": parse, "depth": 1}));
    assert!(
        outline.contains("\nfunction finalizeParams 10-12 (+2 nested)\nclass $Parse 15-20\n"),
        "{outline}"
    );
    let original = std::fs::read_to_string(dir.path().join(parse)).unwrap();
    let broken = format!("{original}\nconst count: number = \"many\";\n");
    std::fs::write(dir.path().join(parse), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": parse}));
    assert!(
        diagnostics.starts_with(
            "src/v4/core/parse.ts: 1 error, 1 hint\n  311:7 error [ts 2322] Type 'string' is not assignable to type 'number'."
        ),
        "{diagnostics}"
    );
    std::fs::write(dir.path().join(parse), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": parse})),
        "src/v4/core/parse.ts: no problems"
    );
    let status = session.ok("status", json!({}));
    assert!(status.contains("diagnostics by pull"), "{status}");
}

/// Biome beside tsgo on zod, both configured: tsgo answers questions and
/// is asked for its diagnostics, Biome publishes its lints, and the answer
/// merges the two, each fresh, after an edit and after its undo.
#[test]
fn biome_lints_beside_tsgo_on_zod() {
    for server in ["tsgo", "biome"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("zod-4.6.7") else {
        return skip("target/real-projects/zod-4.6.7 is missing (.ci/run unpacks it)");
    };
    let session =
        Session::start_with_user_config("[server.tsgo]\n[server.biome]\n", &root_arg(dir.path()));
    let parse = "src/v4/core/parse.ts";
    let lints = session.ok("diagnostics", json!({"file": parse}));
    let any =
        "warning [biome lint/suspicious/noExplicitAny] Unexpected any. Specify a different type.";
    assert!(
        lints.starts_with(&format!(
            "src/v4/core/parse.ts: 15 warnings\n  78:111 {any}\n"
        )),
        "{lints}"
    );
    assert_eq!(
        session.ok(
            "hover",
            json!({"file": parse, "line": 10, "symbol": "finalizeParams"})
        ),
        "function finalizeParams(callee: util.AnyFunc, params: $ParseParams | undefined): $ParseParams",
        "the language server answers before the linter"
    );
    let original = std::fs::read_to_string(dir.path().join(parse)).unwrap();
    let broken = format!("{original}\nconst count: number = \"many\";\ndebugger;\n");
    std::fs::write(dir.path().join(parse), broken).unwrap();
    let both = session.ok("diagnostics", json!({"file": parse}));
    assert!(
        both.starts_with("src/v4/core/parse.ts: 2 errors, 16 warnings, 1 hint\n"),
        "{both}"
    );
    assert!(
        both.ends_with(
            "\n  311:7 error [ts 2322] Type 'string' is not assignable to type 'number'.\
             \n  311:7 hint [ts 6133] 'count' is declared but its value is never read.\
             \n  311:7 warning [biome lint/correctness/noUnusedVariables] This variable count is unused.\
             \n  312:1 error [biome lint/suspicious/noDebugger] This is an unexpected use of the debugger statement."
        ),
        "{both}"
    );
    std::fs::write(dir.path().join(parse), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": parse})), lints);
    // A linter misses nothing without a tsconfig.json.
    let status = session.ok("status", json!({}));
    let mut lines = status
        .lines()
        .skip_while(|line| !line.starts_with("[biome]"));
    let biome = lines.next().unwrap();
    assert!(biome.contains("(linter)"), "{status}");
    assert!(
        !lines.next().unwrap_or_default().contains("note:"),
        "{status}"
    );
}

/// tsgo, configured as a user picks it, on immer's sources as its
/// repository holds them (the published `dist` is built from them, so it
/// is left out), a second project beside zod: a method by its bare name
/// and by `Type.method`, a name shared by a method and an exported
/// function listed as ambiguous, an overloaded function answered as one,
/// references across the package, `search`'s exact match first and a
/// name in a hidden folder, the outline's ranges, and a dependent's
/// diagnostics following a change on disk to the file it imports, both
/// ways.
#[test]
fn tsgo_answers_on_immer() {
    if !have("tsgo") {
        return skip("tsgo is not on PATH");
    }
    let Some(dir) = real_project("immer-11.2.10") else {
        return skip("target/real-projects/immer-11.2.10 is missing (.ci/run unpacks it)");
    };
    std::fs::remove_dir_all(dir.path().join("dist")).unwrap();
    write(
        dir.path(),
        ".scripts/tally.ts",
        "import {produce} from \"../src/immer\"\n\n\
         export function bumpVersionTally(n: number): number {\n\
         \treturn produce({n}, d => { d.n++ }).n\n}\n",
    );
    let session = Session::start_with_user_config("[server.tsgo]\n", &root_arg(dir.path()));
    let partial = "warning: [tsgo] has no tsconfig.json or jsconfig.json, so it sees only \
                   the files that open files import; references, renames and symbols may be \
                   incomplete";
    let dependent = json!({"file": "src/core/immerClass.ts"});
    let clean = session.ok("diagnostics", dependent.clone());
    assert!(
        clean.starts_with("src/core/immerClass.ts: 5 hints\n"),
        "{clean}"
    );
    // The exported function is in a file no open file imports: tsgo names
    // it once the symbol index's pass has shown it the file, and until
    // then the text finds it, saying so.
    let ambiguous = session.ok("hover", json!({"symbol": "createDraft"}));
    let from_text = "src/immer.ts:94:14  (text) export const createDraft = /* @__PURE__ */ \
                     immer.createDraft.bind(immer)\n\
                     note: 1 definition was found only by text search; the servers did not \
                     report it\n";
    assert!(
        ambiguous.starts_with(
            "`createDraft` is ambiguous (2 matches); ask again with file and line:\n\
             src/core/immerClass.ts:153:2  method createDraft\n"
        ) && ambiguous.ends_with(&format!("\n{partial}"))
            && (ambiguous.contains("\nsrc/immer.ts:94:14  variable createDraft\n")
                || ambiguous.contains(&format!("\n{from_text}"))),
        "{ambiguous}"
    );
    assert_eq!(
        session.ok("hover", json!({"symbol": "Immer.createDraft"})),
        "(method) Immer.createDraft<T extends Objectish>(base: T): Draft<T>"
    );
    assert!(
        session
            .ok("hover", json!({"symbol": "DraftMap.has"}))
            .starts_with("(method) DraftMap.has(key: any): boolean\n")
    );
    // Its overload signature and its body, each of which tsgo leads to
    // both, are one function.
    let freeze = session.ok(
        "hover",
        json!({"file": "src/utils/common.ts", "symbol": "freeze"}),
    );
    assert!(
        freeze.starts_with(
            "function freeze<T>(obj: T, deep?: boolean): T\nFreezes draftable objects."
        ),
        "{freeze}"
    );
    let references = session.ok(
        "find_references",
        json!({"file": "src/utils/common.ts", "line": 46, "symbol": "isDraftable"}),
    );
    assert!(
        references.starts_with(&format!("{partial}\n21 references in 8 files\n"))
            && references.contains("\nsrc/utils/common.ts (2)\n")
            && references.contains("\nsrc/plugins/mapset.ts (3)\n  11:2  isDraftable,\n"),
        "{references}"
    );
    let search = session.ok("search", json!({"query": "produce"}));
    assert!(
        search.starts_with(&format!(
            "{partial}\nsymbols (11)\n  src/core/immerClass.ts\n    property produce 41:2\n"
        )),
        "{search}"
    );
    assert!(
        session
            .ok("search", json!({"query": "bumpVersionTally"}))
            .ends_with("text (1 match in 1 file)\n  .scripts/tally.ts  1 × line 3")
    );
    // tsgo sees no file that nothing open imports: the definition found
    // by text is shown, not passed for the server's.
    assert!(
        session
            .ok("hover", json!({"symbol": "bumpVersionTally"}))
            .starts_with(
                "`bumpVersionTally` has 1 match; ask again with file and line:\n\
                 .scripts/tally.ts:3:17  (text) export function bumpVersionTally"
            )
    );
    let outline = session.ok(
        "document_symbols",
        json!({"file": "src/core/immerClass.ts", "depth": 1}),
    );
    assert!(
        outline.ends_with(
            "\nclass Immer 47-233 (+13 nested)\nfunction createProxy 235-274 (+4 nested)"
        ),
        "{outline}"
    );
    let common = dir.path().join("src/utils/common.ts");
    let original = std::fs::read_to_string(&common).unwrap();
    let renamed = original.replacen(
        "export function isDraftable(",
        "export function isDraftableValue(",
        1,
    );
    std::fs::write(&common, renamed).unwrap();
    let broken = session.ok("diagnostics", dependent.clone());
    assert!(
        broken.starts_with(
            "src/core/immerClass.ts: 1 error, 5 hints\n  6:2 error [ts 2724] '\"../internal\"' \
             has no exported member named 'isDraftable'. Did you mean 'DRAFTABLE'?\n"
        ),
        "{broken}"
    );
    std::fs::write(&common, original).unwrap();
    assert_eq!(session.ok("diagnostics", dependent), clean);
}

/// Biome beside tsgo on immer, a second project beside zod, both
/// configured: the first answer already merges Biome's lints with tsgo's
/// errors, and each is fresh after an edit on disk and after its undo.
/// A linter answers for the file alone: the cross-file questions are
/// tsgo's.
#[test]
fn biome_lints_beside_tsgo_on_immer() {
    for server in ["tsgo", "biome"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("immer-11.2.10") else {
        return skip("target/real-projects/immer-11.2.10 is missing (.ci/run unpacks it)");
    };
    let session =
        Session::start_with_user_config("[server.tsgo]\n[server.biome]\n", &root_arg(dir.path()));
    let proxy = "src/core/proxy.ts";
    let first = session.ok("diagnostics", json!({"file": proxy}));
    assert!(
        first.starts_with(
            "src/core/proxy.ts: 3 errors, 43 warnings, 3 infos, 1 hint\n  \
             1:1 info [biome assist/source/organizeImports] Sort the imported names.\n"
        ) && first.contains("\n  275:6 error [ts 2591] Cannot find name 'process'."),
        "{first}"
    );
    let original = std::fs::read_to_string(dir.path().join(proxy)).unwrap();
    let broken = original.replacen(
        "export function createProxyProxy",
        "debugger\nexport function createProxyProxy",
        1,
    );
    std::fs::write(dir.path().join(proxy), broken).unwrap();
    let both = session.ok("diagnostics", json!({"file": proxy}));
    assert!(
        both.starts_with("src/core/proxy.ts: 4 errors, 43 warnings, 3 infos, 1 hint\n")
            && both.contains(
                "\n  57:1 error [biome lint/suspicious/noDebugger] This is an unexpected use \
                 of the debugger statement.\n"
            )
            && both.contains("\n  276:6 error [ts 2591] Cannot find name 'process'."),
        "{both}"
    );
    std::fs::write(dir.path().join(proxy), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": proxy})), first);
}

/// ESLint, found on PATH, on immer's sources with the project's own
/// ESLint and typescript-eslint installed, a second project beside zod,
/// beside typescript-language-server: its first answer complete (another
/// file's too), fresh after an edit on disk and after its undo. A linter
/// answers for the file alone: the cross-file questions are TypeScript's.
#[test]
fn eslint_lints_immer() {
    for server in [
        "vscode-eslint-language-server",
        "typescript-language-server",
    ] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("immer-11.2.10") else {
        return skip("target/real-projects/immer-11.2.10 is missing (.ci/run unpacks it)");
    };
    if !lint_with_eslint(dir.path()) {
        return skip("target/real-projects/eslint-9.39.5 is missing (.ci/run installs it)");
    }
    let session = Session::start(&root_arg(dir.path()));
    let proxy = "src/core/proxy.ts";
    let first = session.ok("diagnostics", json!({"file": proxy}));
    assert!(
        first.starts_with(
            "src/core/proxy.ts: 10 errors, 1 hint\n  \
             114:7 error [eslint prefer-const] 'arrayPlugin' is never reassigned. Use 'const' instead.\n"
        ) && first.contains("\n  275:6 error [typescript 2580] Cannot find name 'process'."),
        "{first}"
    );
    let patches = session.ok("diagnostics", json!({"file": "src/plugins/patches.ts"}));
    assert!(
        patches.starts_with("src/plugins/patches.ts: 7 errors\n")
            && patches.contains(
                "\n  117:12 error [eslint @typescript-eslint/no-unused-vars] 'e' is defined but never used.\n"
            ),
        "{patches}"
    );
    let original = std::fs::read_to_string(dir.path().join(proxy)).unwrap();
    let broken = original.replacen(
        "export function createProxyProxy",
        "var unused_total = 1\nexport function createProxyProxy",
        1,
    );
    std::fs::write(dir.path().join(proxy), broken).unwrap();
    let linted = session.ok("diagnostics", json!({"file": proxy}));
    assert!(
        linted.starts_with(
            "src/core/proxy.ts: 12 errors, 2 hints\n  \
             57:1 error [eslint no-var] Unexpected var, use let or const instead.\n  \
             57:5 hint [typescript 6133] 'unused_total' is declared but its value is never read.\n  \
             57:5 error [eslint @typescript-eslint/no-unused-vars] 'unused_total' is assigned \
             a value but never used.\n  \
             115:7 error [eslint prefer-const]"
        ),
        "{linted}"
    );
    std::fs::write(dir.path().join(proxy), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": proxy})), first);
}

/// ESLint, found on PATH and not configured, lints the TypeScript of a
/// project that has an ESLint configuration and installed ESLint (zod's
/// sources, with typescript-eslint's recommended rules) beside
/// typescript-language-server, which answers questions: its first answer
/// complete, fresh after an edit and after its undo. A project whose
/// ESLint is not installed is told so, not answered "no problems" as if
/// linted, and a project without a configuration is not its business.
#[test]
fn eslint_lints_the_projects_that_chose_it() {
    for server in [
        "vscode-eslint-language-server",
        "typescript-language-server",
    ] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_projects(&[("zod-4.6.7", "app")]) else {
        return skip("target/real-projects/zod-4.6.7 is missing (.ci/run unpacks it)");
    };
    if !lint_with_eslint(&dir.path().join("app")) {
        return skip("target/real-projects/eslint-9.39.5 is missing (.ci/run installs it)");
    }
    let answer = "export const answer: number = 42;\n";
    write(
        dir.path(),
        "uninstalled/eslint.config.mjs",
        "export default [];\n",
    );
    write(dir.path(), "uninstalled/src/index.ts", answer);
    write(dir.path(), "plain/src/index.ts", answer);
    let session = Session::start(&root_arg(dir.path()));

    let coerce = "app/src/v4/classic/coerce.ts";
    let first = session.ok("diagnostics", json!({"file": coerce}));
    let empty = "error [eslint @typescript-eslint/no-empty-object-type] An interface declaring \
                 no members is equivalent to its supertype.";
    assert!(
        first.starts_with(&format!(
            "{coerce}: 5 errors\n  4:18 {empty}\n  9:18 {empty}\n"
        )),
        "{first}"
    );
    assert_eq!(
        session.ok(
            "hover",
            json!({"file": coerce, "line": 4, "symbol": "ZodCoercedString"})
        ),
        "interface ZodCoercedString<T = unknown>",
        "the language server answers, not the linter"
    );

    let iso = "app/src/v4/classic/iso.ts";
    let original = std::fs::read_to_string(dir.path().join(iso)).unwrap();
    let line = original.lines().count() + 2;
    std::fs::write(
        dir.path().join(iso),
        format!("{original}\nvar unused_total = 1;\n"),
    )
    .unwrap();
    let linted = session.ok("diagnostics", json!({"file": iso}));
    for problem in [
        format!("  {line}:1 error [eslint no-var] Unexpected var, use let or const instead."),
        format!(
            "  {line}:5 error [eslint @typescript-eslint/no-unused-vars] 'unused_total' is \
             assigned a value but never used."
        ),
    ] {
        assert!(
            linted.contains(&format!("{problem}\n")) || linted.ends_with(&problem),
            "{linted}"
        );
    }
    std::fs::write(dir.path().join(iso), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": iso})),
        format!("{iso}: no problems")
    );

    let uninstalled = session.ok("diagnostics", json!({"file": "uninstalled/src/index.ts"}));
    assert!(
        uninstalled.starts_with(
            "warning: [eslint] reported: ESLint is not installed where this file's project loads it from"
        ),
        "{uninstalled}"
    );
    assert_eq!(
        session.ok("diagnostics", json!({"file": "plain/src/index.ts"})),
        "plain/src/index.ts: no problems"
    );
    let status = session.ok("status", json!({}));
    let eslint = status
        .lines()
        .find(|line| line.starts_with("[eslint]"))
        .unwrap_or_default();
    assert!(
        eslint.contains("(linter; beside eslint.config.js or the like) running"),
        "{status}"
    );
}

/// A query of GitHub's API, as an application of it keeps one.
const VIEWER_QUERY: &str = "\
query ViewerRepositories($count: Int!) {
  viewer {
    login
    repositories(first: $count, orderBy: {field: UPDATED_AT, direction: DESC}) {
      nodes {
        name
        stargazerCount
      }
    }
  }
}
";

/// graphql-lsp on GitHub's published schema (@octokit/graphql-schema,
/// 64,000 lines the server takes seconds to load), named by the project's
/// GraphQL config, and a query of it. The first answer is complete (the
/// query is broken on disk before the server starts); the fix and the
/// break again are answered fresh; hover, definition into the schema and
/// the query's outline. Without a config, every answer says that the
/// server knows no schema.
#[test]
fn graphql_server_answers_on_githubs_schema() {
    if !have("graphql-lsp") {
        return skip("graphql-lsp is not on PATH");
    }
    let package = "octokit-graphql-schema-15.25.0";
    let (Some(dir), Some(unconfigured)) = (real_project(package), real_project(package)) else {
        return skip(&format!(
            "target/real-projects/{package} is missing (.ci/run unpacks it)"
        ));
    };
    let query = "queries/viewer.graphql";
    write(dir.path(), query, VIEWER_QUERY);
    write(
        dir.path(),
        ".graphqlrc.yml",
        "schema: schema.graphql\ndocuments: \"queries/**/*.graphql\"\n",
    );
    let session = started_on_a_broken_file(
        dir.path(),
        query,
        |text| text.replacen("stargazerCount", "starCount", 1),
        "queries/viewer.graphql: 1 error\n\
         \x20 7:9 error [GraphQL: Validation] Cannot query field \"starCount\" on type \
         \"Repository\". Did you mean \"forkCount\"?",
    );
    assert_eq!(
        session.ok(
            "hover",
            json!({"file": query, "line": 7, "symbol": "stargazerCount"})
        ),
        "Repository.stargazerCount: Int!\n\n\
         Returns a count of how many stargazers there are on this object"
    );
    let definition = session.ok(
        "definition",
        json!({"file": query, "line": 4, "symbol": "repositories"}),
    );
    assert_eq!(definition, "schema.graphql:61146:3  repositories(");
    // Its symbols are flat; the outline nests them as the query does.
    assert_eq!(
        session.ok("document_symbols", json!({"file": query, "depth": 5})),
        "class ViewerRepositories 1-11\n\
         \x20 field viewer 2-10\n\
         \x20   field login 3\n\
         \x20   field repositories 4-9\n\
         \x20     field nodes 5-8\n\
         \x20       field name 6\n\
         \x20       field stargazerCount 7"
    );

    write(unconfigured.path(), query, VIEWER_QUERY);
    let session = Session::start(&root_arg(unconfigured.path()));
    let hover = session.ok(
        "hover",
        json!({"file": query, "line": 7, "symbol": "stargazerCount"}),
    );
    let gap = "warning: [graphql] has no GraphQL config (.graphqlrc.yml or graphql.config.*) \
               naming the schema, so it checks syntax only";
    assert!(hover.starts_with(gap), "{hover}");
    let diagnostics = session.ok("diagnostics", json!({"file": query}));
    assert!(
        diagnostics.starts_with(gap)
            && diagnostics.ends_with("\nqueries/viewer.graphql: no problems"),
        "{diagnostics}"
    );
}

/// A query of the Pokémon schema, its abilities selected through a
/// fragment kept in a file of its own.
const POKEMON_QUERY: &str = "\
query PokemonAbilities($pokemon: PokemonEnum!) {
  getPokemon(pokemon: $pokemon) {
    species
    abilities {
      first {
        ...AbilityParts
      }
      hidden {
        ...AbilityParts
      }
    }
  }
}
";

const ABILITY_FRAGMENT: &str = "\
fragment AbilityParts on Ability {
  name
  shortDesc
}
";

/// graphql-lsp on @favware/graphql-pokemon, a second GraphQL project: its
/// schema as published, split across three files (types, enums and the
/// `Query` type), named by the GraphQL config a user of it writes, with
/// a query and the fragment it spreads, each in a file of its own. The
/// fragment's diagnostics follow a field renamed in the schema on disk,
/// both ways: the server checks only the document it is told changed, so
/// the fragment is sent again once the server has taken in the schema.
/// Definitions cross files (query to `Query` field, spread to fragment,
/// fragment to type, each at its declaration, not its description); a
/// field two types declare is found by its type's name and its own, at
/// its declaration; the server has no references, which the answer says.
#[test]
fn graphql_server_answers_on_pokemon_schema() {
    if !have("graphql-lsp") {
        return skip("graphql-lsp is not on PATH");
    }
    let package = "favware-graphql-pokemon-8.8.1";
    let Some(dir) = real_project(package) else {
        return skip(&format!(
            "target/real-projects/{package} is missing (.ci/run unpacks it)"
        ));
    };
    let (query, fragment) = ("queries/pokemon.graphql", "queries/fragments.graphql");
    write(dir.path(), query, POKEMON_QUERY);
    write(dir.path(), fragment, ABILITY_FRAGMENT);
    write(
        dir.path(),
        ".graphqlrc.yml",
        "schema: \"graphql/*.graphql\"\ndocuments: \"queries/**/*.graphql\"\n",
    );
    let session = Session::start(&root_arg(dir.path()));
    assert_eq!(
        session.ok("diagnostics", json!({"file": query})),
        "queries/pokemon.graphql: no problems"
    );
    let schema = dir.path().join("graphql/schema.graphql");
    let original = std::fs::read_to_string(&schema).unwrap();
    let renamed = original.replacen("  shortDesc: String!\n", "  summary: String!\n", 1);
    for (text, answer) in [
        (
            &renamed,
            "queries/fragments.graphql: 1 error\n\
             \x20 3:3 error [GraphQL: Validation] Cannot query field \"shortDesc\" on type \"Ability\".",
        ),
        (&original, "queries/fragments.graphql: no problems"),
        (
            &renamed,
            "queries/fragments.graphql: 1 error\n\
             \x20 3:3 error [GraphQL: Validation] Cannot query field \"shortDesc\" on type \"Ability\".",
        ),
        (&original, "queries/fragments.graphql: no problems"),
    ] {
        std::fs::write(&schema, text).unwrap();
        assert_eq!(session.ok("diagnostics", json!({"file": fragment})), answer);
    }
    assert_eq!(
        session.ok(
            "hover",
            json!({"file": query, "line": 3, "symbol": "species"})
        ),
        "Pokemon.species: String!\n\nThe species name for a Pokémon"
    );
    for (asked, answer) in [
        (
            json!({"file": query, "line": 2, "symbol": "getPokemon"}),
            "graphql/resolvers.graphql:57:3  getPokemon(",
        ),
        (
            json!({"file": query, "line": 6, "symbol": "AbilityParts"}),
            "queries/fragments.graphql:1:1  fragment AbilityParts on Ability {",
        ),
        (
            json!({"file": fragment, "line": 1, "symbol": "Ability"}),
            "graphql/schema.graphql:2:6  type Ability {",
        ),
    ] {
        assert_eq!(session.ok("definition", asked.clone()), answer, "{asked}");
    }
    // The server hovers and defines only in operations: asked at the
    // schema's own declaration it has nothing, and says where it was asked.
    for (asked, line) in [("Pokemon.species", 152), ("Learnset.species", 356)] {
        assert_eq!(
            session.ok("hover", json!({"symbol": asked})),
            format!("no hover information at graphql/schema.graphql:{line}:3"),
        );
    }
    let search = session.ok("search", json!({"query": "species"}));
    assert!(
        search.contains(
            "symbols (3)\n  graphql/schema.graphql\n    field species 152:3\n    field species 356:3\n"
        ),
        "{search}"
    );
    assert_eq!(
        session.err(
            "find_references",
            json!({"file": fragment, "line": 1, "symbol": "AbilityParts"})
        ),
        "[graphql] does not support references"
    );
    assert_eq!(
        session.ok("document_symbols", json!({"file": query, "depth": 5})),
        "class PokemonAbilities 1-13\n\
         \x20 field getPokemon 2-12\n\
         \x20   field species 3\n\
         \x20   field abilities 4-11\n\
         \x20     field first 5-7\n\
         \x20       struct AbilityParts 6\n\
         \x20     field hidden 8-10\n\
         \x20       struct AbilityParts 9"
    );
}

/// intelephense on FastRoute as Debian ships it, a second PHP project
/// beside monolog: a documented method is one candidate, found by its
/// bare name and by `Type.method` or `Type::method` though the server
/// names it alone (its class is the symbol's container); methods of one
/// name in two types are told apart by their type; and a caller's
/// diagnostics follow a change to the interface it calls, both ways.
#[test]
fn intelephense_answers_on_fast_route() {
    if !have("intelephense") {
        return skip("intelephense is not on PATH");
    }
    let Some(dir) = real_project("fast-route-1.3.0") else {
        return skip("target/real-projects/fast-route-1.3.0 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let collector = "FastRoute/RouteCollector.php";
    for asked in [
        "addGroup",
        "RouteCollector.addGroup",
        "RouteCollector::addGroup",
    ] {
        let source = session.ok("source", json!({"symbol": asked}));
        assert!(
            source.starts_with(&format!("{collector}:49-63  method addGroup\n")),
            "{asked}: {source}"
        );
    }
    let search = session.ok("search", json!({"query": "addGroup"}));
    assert!(
        search.starts_with(&format!(
            "symbols (1)\n  {collector}\n    method addGroup 57:21\n"
        )),
        "{search}"
    );
    let ambiguous = session.ok("hover", json!({"symbol": "addRoute"}));
    assert!(
        ambiguous.starts_with("`addRoute` is ambiguous (3 matches)"),
        "{ambiguous}"
    );
    let interface = session.ok(
        "find_references",
        json!({"symbol": "DataGenerator.addRoute"}),
    );
    assert!(
        interface.starts_with("3 references in 3 files\nFastRoute/DataGenerator.php (1)\n"),
        "{interface}"
    );
    assert!(
        interface
            .contains("\n  44:39  $this->dataGenerator->addRoute($method, $routeData, $handler);"),
        "{interface}"
    );
    let own = session.ok(
        "find_references",
        json!({"symbol": "RouteCollector.addRoute"}),
    );
    assert!(own.starts_with("7 references in 1 file\n"), "{own}");
    // The interface's and the generator's `addRoute` are other methods of
    // the name, not uses the server missed.
    assert!(!own.contains("note: by text"), "{own}");

    let caller = json!({"file": collector});
    assert_eq!(
        session.ok("diagnostics", caller.clone()),
        format!("{collector}: no problems")
    );
    let generator = dir.path().join("FastRoute/DataGenerator.php");
    let original = std::fs::read_to_string(&generator).unwrap();
    let renamed = original.replace("public function addRoute(", "public function add(");
    std::fs::write(&generator, renamed).unwrap();
    assert_eq!(
        session.ok("diagnostics", caller.clone()),
        format!(
            "{collector}: 1 error\n  44:39 error [intelephense P1013] Undefined method 'addRoute'."
        )
    );
    std::fs::write(&generator, original).unwrap();
    assert_eq!(
        session.ok("diagnostics", caller),
        format!("{collector}: no problems")
    );
}

/// intelephense announces workspace folder changes, but never indexes a
/// folder added later: in a daemon whose intelephense served one copy of
/// the project, a session on another copy was answered with every type of
/// its own undefined, for as long as it asked. A session with other roots
/// gets an intelephense started on them, whether the first session is
/// still attached or gone.
#[test]
fn intelephense_serves_a_second_project_in_one_daemon() {
    if !have("intelephense") {
        return skip("intelephense is not on PATH");
    }
    let copies = (
        real_project("monolog-2.9.1"),
        real_project("monolog-2.9.1"),
        real_project("monolog-2.9.1"),
    );
    let (Some(first), Some(second), Some(third)) = copies else {
        return skip("target/real-projects/monolog-2.9.1 is missing (.ci/run unpacks it)");
    };
    let logger = json!({"file": "Monolog/Logger.php"});
    let clean = "Monolog/Logger.php: 2 hints\n\
                 \x20 18:1 hint [intelephense P1003] Symbol 'LogLevel' is declared but not used.\n\
                 \x20 340:81 hint [intelephense P1078] Implicitly nullable parameters are deprecated.";
    let daemon = Daemon::new();
    let one = daemon.session(&root_arg(first.path()));
    assert_eq!(one.ok("diagnostics", logger.clone()), clean);
    let two = daemon.session(&root_arg(second.path()));
    assert_eq!(
        two.ok("diagnostics", logger.clone()),
        clean,
        "beside the first"
    );
    drop(one);
    drop(two);
    let three = daemon.session(&root_arg(third.path()));
    let alone = (0..100).any(|_| {
        let status = three.ok("status", json!({}));
        status.contains("(1 attached)") || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            false
        }
    });
    assert!(alone, "the first two sessions never detached");
    assert_eq!(three.ok("diagnostics", logger), clean, "after them");
}

/// intelephense, found on PATH, on Monolog's sources as Debian ships them
/// (with the PSR logger interfaces they implement beside them).
#[test]
fn intelephense_answers_on_monolog() {
    if !have("intelephense") {
        return skip("intelephense is not on PATH");
    }
    let Some(dir) = real_project("monolog-2.9.1") else {
        return skip("target/real-projects/monolog-2.9.1 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let logger = "Monolog/Logger.php";
    let clean = "Monolog/Logger.php: 2 hints\n\
                 \x20 18:1 hint [intelephense P1003] Symbol 'LogLevel' is declared but not used.\n\
                 \x20 340:81 hint [intelephense P1078] Implicitly nullable parameters are deprecated.";
    assert_eq!(session.ok("diagnostics", json!({"file": logger})), clean);
    let hover = session.ok(
        "hover",
        json!({"file": logger, "line": 225, "symbol": "pushHandler"}),
    );
    assert!(
        hover.starts_with("__Monolog\\Logger::pushHandler__")
            && hover.contains("Pushes a handler on to the stack.")
            && hover.contains("public function pushHandler(HandlerInterface $handler): Logger"),
        "{hover}"
    );
    assert_eq!(
        session.ok(
            "definition",
            json!({"file": logger, "line": 34, "symbol": "ResettableInterface"})
        ),
        "Monolog/ResettableInterface.php:28:11  interface ResettableInterface"
    );
    // Every use in the package's code: grep finds these and two more, in
    // a comment and in the autoloader's class map.
    let references = session.ok(
        "find_references",
        json!({"file": "Monolog/ResettableInterface.php", "line": 28, "symbol": "ResettableInterface"}),
    );
    assert!(
        references.starts_with("24 references in 10 files\n")
            && references.contains("\n  451:37  if ($handler instanceof ResettableInterface) {"),
        "{references}"
    );
    let outline = session.ok("document_symbols", json!({"file": logger, "depth": 1}));
    assert_eq!(
        outline,
        "namespace Monolog 12\nclass Logger 22-761 (+58 nested)"
    );
    // A documented method named alone is one candidate, at its name, not
    // at its docblock.
    let named = session.ok("hover", json!({"symbol": "pushHandler"}));
    assert!(
        named.starts_with("__Monolog\\Logger::pushHandler__"),
        "{named}"
    );
    let found = session.ok("search", json!({"query": "pushHandler"}));
    assert!(
        found.starts_with(
            "symbols (2)\n  Monolog/Logger.php\n    method pushHandler 225:21\n  \
             Monolog/Handler/PushoverHandler.php\n    class PushoverHandler 28:7\n"
        ),
        "{found}"
    );
    let original = std::fs::read_to_string(dir.path().join(logger)).unwrap();
    let opening = "    public function pushHandler(HandlerInterface $handler): self\n    {\n";
    let broken = original.replace(opening, &format!("{opening}        new UnknownThing();\n"));
    std::fs::write(dir.path().join(logger), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": logger}));
    assert!(
        diagnostics.contains(
            "\n  227:13 error [intelephense P1009] Undefined type 'Monolog\\UnknownThing'."
        ),
        "{diagnostics}"
    );
    std::fs::write(dir.path().join(logger), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": logger})), clean);

    // An interface the agent looked at (so it is open) changes on disk:
    // its caller's answer follows, both ways, though intelephense checks
    // only the file it is told changed.
    let interface = "Monolog/Handler/HandlerInterface.php";
    session.ok("diagnostics", json!({"file": interface}));
    let declared = std::fs::read_to_string(dir.path().join(interface)).unwrap();
    let renamed = declared.replace("public function isHandling(", "public function isHandled(");
    std::fs::write(dir.path().join(interface), renamed).unwrap();
    let undefined = session.ok("diagnostics", json!({"file": logger}));
    assert!(
        undefined.contains("\n  370:36 error [intelephense P1013] Undefined method 'isHandling'.")
            && undefined
                .contains("\n  537:27 error [intelephense P1013] Undefined method 'isHandling'."),
        "{undefined}"
    );
    std::fs::write(dir.path().join(interface), &declared).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": logger})), clean);
}

/// taplo on regex-syntax's Cargo.toml, configured by name so that the
/// crate's Rust files do not start rust-analyzer beside it. Offline it
/// has no schemas, so no hover: its outline and syntax errors are what it
/// gives.
#[test]
fn taplo_answers_on_a_crates_manifest() {
    if !have("taplo") {
        return skip("taplo is not on PATH");
    }
    let Some(dir) = real_project("regex-syntax-0.8.11") else {
        return skip("target/real-projects/regex-syntax-0.8.11 is missing (.ci/run copies it)");
    };
    let session = Session::start_with_user_config("[server.toml]\n", &root_arg(dir.path()));
    let manifest = "Cargo.toml";
    assert_eq!(
        session.ok("diagnostics", json!({"file": manifest})),
        "Cargo.toml: no problems"
    );
    let outline = session.ok("document_symbols", json!({"file": manifest, "depth": 1}));
    assert!(
        outline.starts_with("object package 12-55 (+")
            && outline.contains("\nobject features 57-79 (+"),
        "{outline}"
    );
    let original = std::fs::read_to_string(dir.path().join(manifest)).unwrap();
    std::fs::write(
        dir.path().join(manifest),
        format!("{original}\n[extra]\nbroken = \n"),
    )
    .unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": manifest})),
        "Cargo.toml: 1 error\n  100:10 error [Even Better TOML] expected value"
    );
    std::fs::write(dir.path().join(manifest), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": manifest})),
        "Cargo.toml: no problems"
    );
}

/// taplo on gunicorn's pyproject.toml, a second manifest beside
/// regex-syntax's Cargo.toml: the outline nests dotted tables
/// (`[project.urls]`) in theirs, each range ending at its last key, and a
/// table defined twice is reported at both headers until the edit is
/// undone.
#[test]
fn taplo_answers_on_a_python_projects_manifest() {
    if !have("taplo") {
        return skip("taplo is not on PATH");
    }
    let Some(dir) = real_project("gunicorn-27.0.1") else {
        return skip("target/real-projects/gunicorn-27.0.1 is missing (.ci/run unpacks it)");
    };
    let session = Session::start_with_user_config("[server.toml]\n", &root_arg(dir.path()));
    let manifest = "pyproject.toml";
    let clean = "pyproject.toml: no problems";
    assert_eq!(session.ok("diagnostics", json!({"file": manifest})), clean);
    assert_eq!(
        session.ok("document_symbols", json!({"file": manifest, "depth": 1})),
        "object build-system 1-3 (+2 nested)\n\
         object project 5-76 (+13 nested)\n\
         object tool 78-94 (+2 nested)"
    );
    let outline = session.ok("document_symbols", json!({"file": manifest, "depth": 2}));
    assert!(
        outline.contains("\nobject project 5-76\n  string name 7\n")
            && outline.contains("\n  object urls 39-44 (+5 nested)\n")
            && outline.ends_with("\n  object setuptools 86-94 (+4 nested)"),
        "{outline}"
    );
    let original = std::fs::read_to_string(dir.path().join(manifest)).unwrap();
    std::fs::write(
        dir.path().join(manifest),
        original.replace("[tool.setuptools]\n", "[project]\n"),
    )
    .unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": manifest})),
        "pyproject.toml: 1 error, 1 hint\n\
         \x20 5:2 hint [Even Better TOML] conflicting keys\n\
         \x20 86:2 error [Even Better TOML] conflicting keys"
    );
    std::fs::write(dir.path().join(manifest), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": manifest})), clean);
}

/// vscode-json-language-server on reveal.js's package.json, a second
/// manifest beside bootstrap's: each object's range in the outline, and a
/// key given twice (reported at both) and a missing comma, each until the
/// edit is undone. Offline it has no schema, so no hover.
#[test]
fn json_server_answers_on_reveal_js_manifest() {
    if !have("vscode-json-language-server") {
        return skip("vscode-json-language-server is not on PATH");
    }
    let Some(dir) = real_project("reveal.js-6.0.2") else {
        return skip("target/real-projects/reveal.js-6.0.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let manifest = "package.json";
    let clean = "package.json: no problems";
    assert_eq!(session.ok("diagnostics", json!({"file": manifest})), clean);
    let outline = session.ok("document_symbols", json!({"file": manifest, "depth": 1}));
    assert!(
        outline.starts_with("string name 2\nstring version 3\n")
            && outline.contains(
                "\nmodule exports 21-68 (+11 nested)\nmodule scripts 69-82 (+12 nested)\n"
            )
            && outline.ends_with("\nmodule overrides 120-127 (+2 nested)"),
        "{outline}"
    );
    let original = std::fs::read_to_string(dir.path().join(manifest)).unwrap();
    let version = "\"version\": \"6.0.2\",";
    for (edit, reported) in [
        (
            "\"version\": \"6.0.2\", \"name\": \"x\",",
            "package.json: 2 warnings\n\
             \x20 2:2 warning [json 520] Duplicate object key\n\
             \x20 3:22 warning [json 520] Duplicate object key",
        ),
        (
            "\"version\": \"6.0.2\"",
            "package.json: 1 error\n  4:2 error [json 514] Expected comma",
        ),
    ] {
        std::fs::write(
            dir.path().join(manifest),
            original.replacen(version, edit, 1),
        )
        .unwrap();
        assert_eq!(
            session.ok("diagnostics", json!({"file": manifest})),
            reported
        );
        std::fs::write(dir.path().join(manifest), &original).unwrap();
        assert_eq!(session.ok("diagnostics", json!({"file": manifest})), clean);
    }
}

/// rust-analyzer says through `experimental/serverStatus` when it could
/// not load the crate; `status` shows its words, and every answer while it
/// has not loaded it warns (its references are then none at all).
#[test]
fn rust_analyzer_failing_to_load_a_crate_is_said() {
    if !rust_analyzer_runs() {
        return skip("rust-analyzer is not on PATH (or is only rustup's proxy)");
    }
    let Some(dir) = real_project("regex-syntax-0.8.11") else {
        return skip("target/real-projects/regex-syntax-0.8.11 is missing (.ci/run copies it)");
    };
    std::fs::write(dir.path().join("Cargo.toml"), "[package\n").unwrap();
    let session = Session::start(&root_arg(dir.path()));
    let status = session.wait_for_status(|status| status.contains("last error: [rust]"));
    assert!(
        status.contains("last error: [rust] Failed to load workspaces"),
        "{status}"
    );
    let references = session.ok(
        "find_references",
        json!({"file": "src/lib.rs", "symbol": "escape", "line": 203}),
    );
    assert!(
        references.starts_with("warning: [rust] Failed to load workspaces"),
        "{references}"
    );
}

/// typescript-language-server on immer's sources, which have no
/// tsconfig.json: hover, references across the package, a method named
/// by its class (`Immer.produce`: the server names members alone, with
/// no container), the same name of an interface in one file, and the
/// checks of an edit and of its undo.
#[test]
fn typescript_server_answers_on_immer() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let Some(dir) = real_project("immer-11.2.10") else {
        return skip("target/real-projects/immer-11.2.10 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let common = "src/utils/common.ts";
    let hover = session.ok(
        "hover",
        json!({"file": common, "line": 46, "symbol": "isDraftable"}),
    );
    assert!(
        hover.starts_with("function isDraftable(value: any): boolean\n"),
        "{hover}"
    );
    let references = session.ok(
        "find_references",
        json!({"file": common, "line": 46, "symbol": "isDraftable"}),
    );
    assert!(
        references.contains("21 references in 8 files\n")
            && references.contains("\n  154:8  if (!isDraftable(base)) die(8)\n"),
        "{references}"
    );
    let produce = session.ok("source", json!({"symbol": "Immer.produce"}));
    assert!(
        produce.starts_with("src/core/immerClass.ts:65-136  property produce\n"),
        "{produce}"
    );
    assert_eq!(
        session.ok(
            "source",
            json!({"file": "src/core/immerClass.ts", "symbol": "ProducersFns.produce"})
        ),
        "src/core/immerClass.ts:41-41  property produce\n41  \tproduce: IProduce"
    );
    assert_eq!(
        session.ok("diagnostics", json!({"file": common})),
        "src/utils/common.ts: no problems"
    );
    let original = std::fs::read_to_string(dir.path().join(common)).unwrap();
    let broken = original.replacen(
        "isDraftable(value: any): boolean {",
        "isDraftable(value: any): number {",
        1,
    );
    std::fs::write(dir.path().join(common), broken).unwrap();
    let wrong = "error [typescript 2322] Type 'boolean' is not assignable to type 'number'.";
    assert_eq!(
        session.ok("diagnostics", json!({"file": common})),
        format!("src/utils/common.ts: 2 errors\n  47:14 {wrong}\n  48:2 {wrong}")
    );
    std::fs::write(dir.path().join(common), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": common})),
        "src/utils/common.ts: no problems"
    );
    // Its overload signature, found by text, is one candidate with its
    // body: only the built copies in dist/ are the servers' misses, as a
    // new session that has opened none of them counts them.
    drop(session);
    let fresh = Session::start(&root_arg(dir.path()));
    let freeze = fresh.ok("definition", json!({"symbol": "freeze"}));
    assert!(
        freeze.contains("src/utils/common.ts:267:17  function freeze\n")
            && freeze.contains(
                "\nnote: 4 definitions were found only by text search; the servers did not report them"
            ),
        "{freeze}"
    );
}

/// A GitHub workflow of repo2docker with yaml-language-server: its jobs
/// as the outline, a job (its name hyphenated) shown whole by `source`,
/// and the checks of an edit and of its undo.
#[test]
fn yaml_server_answers_on_repo2docker_workflow() {
    if !have("yaml-language-server") {
        return skip("yaml-language-server is not on PATH");
    }
    let Some(dir) = real_project("jupyter-repo2docker-2026.4.0/.github") else {
        return skip(
            "target/real-projects/jupyter-repo2docker-2026.4.0 is missing (.ci/run unpacks it)",
        );
    };
    let session = Session::start(&root_arg(dir.path()));
    let release = "workflows/release.yml";
    assert_eq!(
        session.ok("document_symbols", json!({"file": release, "depth": 2})),
        "string name 4\nmodule on 6-28\n  module pull_request 7-14 (+1 nested)\n\
         \x20 module push 15-27 (+3 nested)\n  variable workflow_dispatch 28\n\
         module jobs 30-133\n  module build-n-publish 31-62 (+2 nested)\n\
         \x20 module publish-docker 64-133 (+4 nested)"
    );
    let job = session.ok(
        "source",
        json!({"file": release, "symbol": "publish-docker"}),
    );
    assert!(
        job.starts_with(
            "workflows/release.yml:64-133  module publish-docker\n 64    publish-docker:\n"
        ),
        "{job}"
    );
    let clean = "workflows/release.yml: no problems";
    assert_eq!(session.ok("diagnostics", json!({"file": release})), clean);
    let original = std::fs::read_to_string(dir.path().join(release)).unwrap();
    let broken = original.replacen(
        "    runs-on: ubuntu-24.04\n    steps:",
        "    runs-on: ubuntu-24.04\n   bad: [unclosed\n    steps:",
        1,
    );
    std::fs::write(dir.path().join(release), broken).unwrap();
    let diagnostics = session.ok("diagnostics", json!({"file": release}));
    assert!(
        diagnostics.starts_with(
            "workflows/release.yml: 150 errors\n  \
             33:1 error [YAML 0] All mapping items must start at the same column\n"
        ),
        "{diagnostics}"
    );
    std::fs::write(dir.path().join(release), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": release})), clean);
}

/// repo2docker's two-stage Dockerfile with docker-langserver: an
/// instruction continued over lines ends on its last (the server ranges
/// it as its keyword), build arguments found by name though the server
/// answers no workspace symbols, and the checks of an edit and its undo.
#[test]
fn dockerfile_server_answers_on_repo2docker() {
    if !have("docker-langserver") {
        return skip("docker-langserver is not on PATH");
    }
    let Some(dir) = real_project("jupyter-repo2docker-2026.4.0") else {
        return skip(
            "target/real-projects/jupyter-repo2docker-2026.4.0 is missing (.ci/run unpacks it)",
        );
    };
    let session = Session::start(&root_arg(dir.path()));
    let file = "Dockerfile";
    let outline = session.ok("document_symbols", json!({"file": file}));
    assert!(
        outline.contains("\nfunction RUN 14\nfunction RUN 15-19\nfunction FROM 21\n")
            && outline.contains("\nfunction RUN 36-37\n")
            && outline.ends_with("function ENTRYPOINT 46\nfunction EXPOSE 49"),
        "{outline}"
    );
    assert_eq!(
        session.ok("source", json!({"file": file, "line": 15, "symbol": "RUN"})),
        "Dockerfile:15-19  function RUN\n15  RUN mkdir /tmp/wheelhouse \\\n\
         16   && cd /tmp/wheelhouse \\\n17   && pip install wheel \\\n\
         18   && pip wheel --no-cache-dir -r /tmp/src/requirements.txt /tmp/src \\\n\
         19   && ls -l /tmp/wheelhouse"
    );
    assert_eq!(
        session.ok("hover", json!({"symbol": "ALPINE_VERSION"})),
        "3.21"
    );
    // The `# syntax=` directive above it is for the builder, not its doc.
    assert_eq!(
        session.ok("source", json!({"symbol": "ALPINE_VERSION"})),
        "Dockerfile:2-2\n2  ARG ALPINE_VERSION=3.21"
    );
    assert_eq!(
        session.ok("definition", json!({"symbol": "VIRTUAL_ENV"})),
        "`VIRTUAL_ENV` is ambiguous (2 matches); ask again with file and line:\n\
         Dockerfile:8:5  (text) ARG VIRTUAL_ENV=/opt/venv\n\
         Dockerfile:26:5  (text) ARG VIRTUAL_ENV=/opt/venv\n\
         note: 2 definitions were found only by text search; the servers did not report them"
    );
    // Neither the Dockerfile nor the CSS server answers a name asked alone.
    let unknown = session.err("hover", json!({"symbol": "NOT_A_NAME_HERE"}));
    assert!(
        unknown.starts_with("no symbol named `NOT_A_NAME_HERE` found in the workspace\n")
            && unknown.contains("note: the servers of css, dockerfile, less and scss files answer no names asked alone"),
        "{unknown}"
    );
    assert_eq!(
        session.ok("diagnostics", json!({"file": file})),
        "Dockerfile: no problems"
    );
    let original = std::fs::read_to_string(dir.path().join(file)).unwrap();
    let broken = original.replacen("EXPOSE 52000", "EXPOSE port\nHEALTHCHECK CMD", 1);
    std::fs::write(dir.path().join(file), broken).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": file})),
        "Dockerfile: 2 errors\n  49:8 error [dockerfile-utils 24] Invalid containerPort: port\n  \
         50:13 error [dockerfile-utils 46] Missing command after HEALTHCHECK CMD"
    );
    std::fs::write(dir.path().join(file), &original).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": file})),
        "Dockerfile: no problems"
    );
}

/// reveal.js's demo deck (700 lines of slides) with
/// vscode-html-language-server: the outline nested as the page is, a
/// slide by its id, an element's hover, and its inline script checked
/// after an edit and after its undo.
#[test]
fn html_server_answers_on_reveal_js_demo() {
    if !have("vscode-html-language-server") {
        return skip("vscode-html-language-server is not on PATH");
    }
    let Some(dir) = real_project("reveal.js-6.0.2") else {
        return skip("target/real-projects/reveal.js-6.0.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let demo = "demo.html";
    let outline = session.ok("document_symbols", json!({"file": demo, "depth": 4}));
    assert!(
        outline.starts_with("field html 2-700\n  field head 3-25\n    field meta 4\n"),
        "{outline}"
    );
    assert!(
        outline.contains(
            "\n  field body 27-699\n    field div.reveal 28-672\n      \
             field div.slides 30-671 (+34 nested)\n"
        ) && outline.ends_with(
            "    field script 680-698\n      property controls 690\n      \
             property progress 691\n      property center 692\n      property hash 693\n      \
             property plugins 696"
        ),
        "{outline}"
    );
    // The HTML server answers no workspace symbols: by name alone, the
    // element is found by its `id`, with or without its `#`.
    for asked in [
        json!({"file": demo, "symbol": "fragments"}),
        json!({"symbol": "fragments"}),
        json!({"symbol": "#fragments"}),
    ] {
        let slide = session.ok("source", asked);
        assert!(
            slide.starts_with("demo.html:294-306  field section#fragments\n294  \t\t\t\t\t<section id=\"fragments\">\n")
                && slide.ends_with("306  \t\t\t\t\t</section>"),
            "{slide}"
        );
    }
    // Its references are those of the page's scripts: the slide's id has
    // none, and the answer says what the page names it by text.
    assert_eq!(
        session.ok("find_references", json!({"symbol": "fragments"})),
        "no references found for demo.html:294:19\n\
         note: by text, `fragments` also appears in 1 file the server listed no reference in; \
         it looks only in the scripts of the page asked about: demo.html:294,304,309"
    );
    let hover = session.ok("hover", json!({"file": demo, "line": 28, "symbol": "div"}));
    assert!(
        hover.starts_with("The div element has no special meaning at all."),
        "{hover}"
    );
    let clean = "demo.html: no problems";
    assert_eq!(session.ok("diagnostics", json!({"file": demo})), clean);
    let original = std::fs::read_to_string(dir.path().join(demo)).unwrap();
    let broken = original.replacen("controls: true,", "controls: true,,", 1);
    std::fs::write(dir.path().join(demo), broken).unwrap();
    assert_eq!(
        session.ok("diagnostics", json!({"file": demo})),
        "demo.html: 1 error\n  690:20 error [javascript] Property assignment expected."
    );
    std::fs::write(dir.path().join(demo), &original).unwrap();
    assert_eq!(session.ok("diagnostics", json!({"file": demo})), clean);
}
