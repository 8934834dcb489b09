//! `check_edit` on requests' own sources with pyright and ruff. In a
//! daemon that two sessions share: a type error an edit would add, and
//! one it would fix, each reported by both servers; the file's bytes and
//! modification time unchanged; and the other session's diagnostics of
//! the same file, asked while the check runs, those of the file on disk.
//! A rename's check, of every file the rename edits at once. And what an
//! edit breaks in files it does not touch, open or not, with pyright,
//! typescript-language-server and gopls; with clangd, which cannot check
//! an unsaved header's includers, those files named as not checked.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::projects::real_project;
use common::*;
use serde_json::json;

#[test]
fn check_edit_reports_an_edits_problems_and_no_other_session_sees_it() {
    for server in ["pyright-langserver", "ruff"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let daemon = Daemon::new();
    let args = root_arg(dir.path());
    let (editor, other) = (daemon.session(&args), daemon.session(&args));
    let api = "src/requests/api.py";
    let path = dir.path().join(api);
    let clean = "src/requests/api.py: no problems";
    assert_eq!(editor.ok("diagnostics", json!({"file": api})), clean);
    let original = std::fs::read_to_string(&path).unwrap();
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();

    let breaking = json!({"file": api, "replacements": [
        {"old": "url=url, **kwargs)", "new": "url=undefined_url, **kwargs)"},
    ]});
    let check = editor.call_async("check_edit", breaking);
    let meanwhile = other.call_async("diagnostics", json!({"file": api}));
    let answer = outcome(wait(&check));
    assert_eq!(
        answer.text,
        "src/requests/api.py, if edited (nothing written): 3 new problems, 0 fixed\n\
         \x20 new 71:51 error [Pyright reportUndefinedVariable] \"undefined_url\" is not defined\n\
         \x20 new 71:51 error [Pyright reportUnknownArgumentType] Argument type is unknown Argument corresponds to parameter \"url\" in function \"request\"\n\
         \x20 new 71:51 error [Ruff F821] Undefined name `undefined_url`\n\
         also checked: 14 other files that use `request` (those not named above have no new problems)"
    );
    assert_eq!(outcome(wait(&meanwhile)).text, clean);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), original);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        modified
    );
    assert_eq!(other.ok("diagnostics", json!({"file": api})), clean);

    // Broken on disk, the check of the fix says what it fixes.
    let broken = original.replacen("url=url, **kwargs)", "url=undefined_url, **kwargs)", 1);
    std::fs::write(&path, &broken).unwrap();
    let fixing = json!({"file": api, "replacements": [
        {"old": "url=undefined_url, **kwargs)", "new": "url=url, **kwargs)"},
    ]});
    assert_eq!(
        editor.ok("check_edit", fixing),
        "src/requests/api.py, if edited (nothing written): 0 new problems, 3 fixed\n\
         \x20 fixed 71:51 error [Pyright reportUndefinedVariable] \"undefined_url\" is not defined\n\
         \x20 fixed 71:51 error [Pyright reportUnknownArgumentType] Argument type is unknown Argument corresponds to parameter \"url\" in function \"request\"\n\
         \x20 fixed 71:51 error [Ruff F821] Undefined name `undefined_url`\n\
         also checked: 14 other files that use `request` (those not named above have no new problems)"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), broken);
    let still = other.ok("diagnostics", json!({"file": api}));
    assert!(
        still.starts_with("src/requests/api.py: 3 errors"),
        "{still}"
    );
}

/// `check_edit` of pyright's rename of a function used in four files of
/// requests: all four checked together, so a rename that keeps the code
/// right adds no type errors anywhere (only Ruff's import order), while a
/// name that clashes with an import breaks every file that uses it; and
/// nothing is written.
#[test]
fn check_edit_of_a_rename_checks_every_file_together() {
    for server in ["pyright-langserver", "ruff"] {
        if !have(server) {
            return skip(&format!("{server} is not on PATH"));
        }
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let session = Session::start(&root_arg(dir.path()));
    let files = [
        "src/requests/utils.py",
        "src/requests/adapters.py",
        "src/requests/models.py",
        "src/requests/sessions.py",
    ];
    let read = || -> Vec<String> {
        files
            .iter()
            .map(|file| std::fs::read_to_string(dir.path().join(file)).unwrap())
            .collect()
    };
    let original = read();
    let rename = |new_name: &str| {
        session.ok(
            "check_edit",
            json!({"file": files[0], "line": 1070, "symbol": "get_auth_from_url", "new_name": new_name}),
        )
    };

    let kept = rename("auth_from_url");
    let mut lines = kept.lines();
    assert_eq!(
        lines.next(),
        Some("rename to `auth_from_url`: 8 edits in 4 files (checked, nothing written)"),
        "{kept}"
    );
    for file in files {
        assert!(
            kept.lines()
                .any(|line| line.starts_with(&format!("{file}, if edited (nothing written): "))),
            "{file}: {kept}"
        );
    }
    let new: Vec<&str> = kept
        .lines()
        .take_while(|line| !line.contains(", not edited, "))
        .filter(|line| line.starts_with("  new "))
        .collect();
    assert!(
        new.iter().all(|line| line.contains("[Ruff I001]")),
        "checked one at a time, the callers would not find the new name: {kept}"
    );
    // Pyright's rename leaves the tests' import of the old name, which
    // the check finds among the files that use it.
    let tests: Vec<&str> = kept
        .lines()
        .skip_while(|line| {
            !line.starts_with("tests/test_utils.py, not edited, after the edit: 2 new problems")
        })
        .collect();
    assert!(
        tests.get(1).is_some_and(|line| line.contains(
            "error [Pyright reportAttributeAccessIssue] \"get_auth_from_url\" is unknown import symbol"
        )),
        "{kept}"
    );

    let clash = rename("urlparse");
    for (file, problem) in [
        (files[0], "[Ruff F811] Redefinition of unused `urlparse`"),
        (
            files[1],
            "Cannot access attribute \"scheme\" for class \"tuple[str, str]\"",
        ),
        (
            files[3],
            "Cannot access attribute \"hostname\" for class \"tuple[str, str]\"",
        ),
    ] {
        let section: Vec<&str> = clash
            .lines()
            .skip_while(|line| !line.starts_with(&format!("{file}, if edited")))
            .skip(1)
            .take_while(|line| line.starts_with("  "))
            .collect();
        assert!(
            section.iter().any(|line| line.contains(problem)),
            "{file} should show {problem}: {clash}"
        );
    }

    assert_eq!(read(), original, "nothing written");
    for file in files {
        let now = session.ok("diagnostics", json!({"file": file}));
        assert_eq!(now, format!("{file}: no problems"), "the disk text is back");
    }
}

/// `check_edit` of a change of a function's return type in requests'
/// `utils.py`: pyright checks the open files that import it again, and the
/// answer names what the change would break there, though neither file is
/// edited; another session's diagnostics of those files, asked while the
/// check runs and after it, are those of the files on disk.
///
/// Pyright is asked for each open document's diagnostics by default, and
/// waited for (it then checks importers again and publishes them) when
/// configured so: the answers are the same.
#[test]
fn check_edit_reports_what_an_edit_breaks_in_the_open_files_that_import_it() {
    importers_broken_by_an_edit(Daemon::new(), "pull");
}

#[test]
fn check_edit_reports_the_same_from_pyright_waited_for() {
    importers_broken_by_an_edit(
        Daemon::with_user_config("[server.python]\npull_diagnostics = false\n"),
        "version",
    );
}

fn importers_broken_by_an_edit(daemon: Daemon, strategy: &str) {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let args = root_arg(dir.path());
    let (editor, other) = (daemon.session(&args), daemon.session(&args));
    let importers = json!({"files": ["src/requests/adapters.py", "src/requests/sessions.py"]});
    let clean = "src/requests/adapters.py: no problems\nsrc/requests/sessions.py: no problems";
    assert_eq!(other.ok("diagnostics", importers.clone()), clean);

    let check = editor.call_async("check_edit", triple_return());
    let meanwhile = other.call_async("diagnostics", importers.clone());
    let answer = outcome(wait(&check));
    let mismatch = "error [Pyright reportAssignmentType] Expression with type \"tuple[str, str, str]\" cannot be assigned to target tuple";
    let lines: Vec<&str> = answer.text.lines().collect();
    assert!(
        lines[0].starts_with("src/requests/utils.py, if edited (nothing written): no new problems"),
        "{}",
        answer.text
    );
    assert_eq!(
        lines[1], "src/requests/adapters.py, not edited, after the edit: 2 new problems, 0 fixed",
        "{}",
        answer.text
    );
    assert!(
        lines[2].starts_with(&format!("  new 284:13 {mismatch}")),
        "{}",
        answer.text
    );
    assert!(
        lines[3].starts_with(&format!("  new 627:9 {mismatch}")),
        "{}",
        answer.text
    );
    assert_eq!(
        lines[4], "src/requests/models.py, not edited, after the edit: 1 new problem, 0 fixed",
        "{}",
        answer.text
    );
    assert_eq!(
        lines[6], "src/requests/sessions.py, not edited, after the edit: 1 new problem, 0 fixed",
        "{}",
        answer.text
    );
    assert!(
        lines[7].starts_with(&format!("  new 359:13 {mismatch}")),
        "{}",
        answer.text
    );
    assert_eq!(outcome(wait(&meanwhile)).text, clean);
    assert_eq!(other.ok("diagnostics", importers), clean);
    let status = other.ok("status", json!({}));
    assert!(
        status.contains(&format!("diagnostics by {strategy}")),
        "{status}"
    );
}

/// The same edit with neither importer open: the files that use the
/// function are found by its name, checked beside the edit and closed
/// again, so the answer names what it breaks in them, says how many it
/// checked, and another session's diagnostics of them stay those of the
/// files on disk.
#[test]
fn check_edit_reports_what_an_edit_breaks_in_files_no_one_opened() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let daemon = Daemon::new();
    let args = root_arg(dir.path());
    let (editor, other) = (daemon.session(&args), daemon.session(&args));
    let answer = editor.ok("check_edit", triple_return());
    eprintln!("{answer}");
    let lines: Vec<&str> = answer.lines().collect();
    assert!(
        lines[0].starts_with("src/requests/utils.py, if edited (nothing written): no new problems"),
        "{answer}"
    );
    assert!(
        answer.contains(
            "src/requests/adapters.py, not edited, after the edit: 2 new problems, 0 fixed"
        ),
        "{answer}"
    );
    assert!(
        answer.contains(
            "src/requests/sessions.py, not edited, after the edit: 1 new problem, 0 fixed"
        ),
        "{answer}"
    );
    assert!(
        answer.contains("also checked: 4 other files that use `get_auth_from_url`"),
        "{answer}"
    );
    let importers = json!({"files": ["src/requests/adapters.py", "src/requests/sessions.py"]});
    assert_eq!(
        other.ok("diagnostics", importers),
        "src/requests/adapters.py: no problems\nsrc/requests/sessions.py: no problems"
    );
}

/// The same edit checked while another session asks a question every
/// 60 ms, with pyright waited for: pyright goes on checking only 250 ms
/// after the last change or question it was sent, and publishes between
/// slices of its work what it has so far (a file it has read only as
/// another's import, without its type errors). Each answer is whole,
/// and comes.
#[test]
fn check_edit_is_whole_while_another_session_keeps_asking() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let Some(dir) = real_project("requests-2.34.2") else {
        return skip("target/real-projects/requests-2.34.2 is missing (.ci/run unpacks it)");
    };
    let daemon = Daemon::with_user_config("[server.python]\npull_diagnostics = false\n");
    let args = root_arg(dir.path());
    let (editor, asker) = (daemon.session(&args), daemon.session(&args));
    let asking = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let question = json!({"file": "src/requests/models.py", "symbol": "Response"});
            while asking.load(std::sync::atomic::Ordering::Relaxed) {
                assert!(
                    asker
                        .ok("hover", question.clone())
                        .starts_with("class Response")
                );
                std::thread::sleep(std::time::Duration::from_millis(60));
            }
        });
        for _ in 0..2 {
            let answer = editor.ok("check_edit", triple_return());
            for broken in [
                "src/requests/adapters.py, not edited, after the edit: 2 new problems, 0 fixed",
                "src/requests/models.py, not edited, after the edit: 1 new problem, 0 fixed",
                "src/requests/sessions.py, not edited, after the edit: 1 new problem, 0 fixed",
            ] {
                assert!(answer.contains(broken), "{answer}");
            }
        }
        asking.store(false, std::sync::atomic::Ordering::Relaxed);
    });
}

/// `get_auth_from_url` made to return three strings: its two importers
/// unpack two.
fn triple_return() -> serde_json::Value {
    json!({"file": "src/requests/utils.py", "replacements": [
        {"old": "def get_auth_from_url(url: str) -> tuple[str, str]:",
         "new": "def get_auth_from_url(url: str) -> tuple[str, str, str]:"},
        {"old": "        auth = (\"\", \"\")\n", "new": "        auth = (\"\", \"\", \"\")\n"},
        {"old": "unquote(parsed.password))", "new": "unquote(parsed.password), \"\")"},
    ]})
}

/// `check_edit` of a C header with clangd, which checks each file against
/// the headers it includes as saved: the files that use the prototype it
/// changes are named as not checked, never called unchanged.
#[test]
fn check_edit_of_a_header_names_the_files_it_could_not_check() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = common::projects::c_project_with_database(2);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok(
        "check_edit",
        json!({"file": "include/shapes.h", "replacements": [{"old": "int area(int w, int h);", "new": "int area(int w);"}]}),
    );
    assert_eq!(
        answer,
        "include/shapes.h, if edited (nothing written): no new problems, none fixed (0 problems as now)\n\
         warning: 4 other files that use `area` not checked ([c,cpp] checks each file against the files it includes as saved, not as edited): \
         src/caller_0.c src/caller_1.c src/main.c src/shapes.c; write the edit and ask `diagnostics` of them"
    );
    session.keep(dir);
}

/// `check_edit` of a method renamed by hand in TypeScript: the two files
/// that call it, neither open, break.
#[test]
fn check_edit_of_a_typescript_method_reaches_its_callers() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let dir = project(&[
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}, \"include\": [\"src\"]}\n",
        ),
        (
            "src/shape.ts",
            "export class Shape {\n  area(): number {\n    return 0;\n  }\n}\n",
        ),
        (
            "src/a.ts",
            "import { Shape } from \"./shape\";\nexport const a = new Shape().area();\n",
        ),
        (
            "src/b.ts",
            "import { Shape } from \"./shape\";\nexport function b(s: Shape): number {\n  return s.area() * 2;\n}\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok(
        "check_edit",
        json!({"file": "src/shape.ts", "replacements": [{"old": "  area(): number {", "new": "  size(): number {"}]}),
    );
    assert_eq!(
        answer,
        "src/shape.ts, if edited (nothing written): no new problems, none fixed (0 problems as now)\n\
         src/a.ts, not edited, after the edit: 1 new problem, 0 fixed\n\
         \x20 new 2:30 error [typescript 2339] Property 'area' does not exist on type 'Shape'.\n\
         src/b.ts, not edited, after the edit: 1 new problem, 0 fixed\n\
         \x20 new 3:12 error [typescript 2339] Property 'area' does not exist on type 'Shape'.\n\
         also checked: 2 other files that use `area`, `Shape` (those not named above have no new problems)"
    );
    session.keep(dir);
}

/// `check_edit` of a function's return type, where the one file that
/// breaks calls it only by the alias another file exports it as (zod's
/// `_uppercase`, `export { _uppercase as uppercase }`).
#[test]
fn check_edit_reaches_the_users_of_an_alias() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let dir = project(&[
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}, \"include\": [\"src\"]}\n",
        ),
        (
            "src/core.ts",
            "export function _upper(text: string): string {\n  return text.toUpperCase();\n}\n",
        ),
        (
            "src/checks.ts",
            "export {\n  _upper as upper,\n} from \"./core\";\n",
        ),
        (
            "src/use.ts",
            "import { upper } from \"./checks\";\nexport const shout: string = upper(\"hey\");\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok(
        "check_edit",
        json!({"file": "src/core.ts", "replacements": [{"old": "(text: string): string {", "new": "(text: string): number {"}]}),
    );
    assert!(
        answer.contains("src/use.ts, not edited, after the edit: 1 new problem, 0 fixed\n  new 2:14 error [typescript 2322]")
            && answer.ends_with("also checked: 2 other files that use `_upper`, `upper` (those not named above have no new problems)"),
        "{answer}"
    );
    session.keep(dir);
}

/// `check_edit` of a method renamed where it implements an abstract one:
/// the subclass in another file, which never names the method, becomes
/// abstract by accident (aiosql's `select_cursor`, basedpyright's
/// `reportImplicitAbstractClass`). It names the type, which the method's
/// declaration reaches.
#[test]
fn check_edit_of_a_method_declaration_reaches_its_types_subclasses() {
    if !have("basedpyright-langserver") {
        return skip("basedpyright-langserver is not on PATH");
    }
    let dir = project(&[
        (
            "proto.py",
            "from abc import ABC, abstractmethod\n\n\nclass Base(ABC):\n    @abstractmethod\n    def select_cursor(self) -> int: ...\n",
        ),
        (
            "generic.py",
            "from proto import Base\n\n\nclass Generic(Base):\n    def select_cursor(self) -> int:\n        return 1\n",
        ),
        (
            "fmt.py",
            "from generic import Generic\n\n\nclass Fmt(Generic):\n    pass\n",
        ),
    ]);
    let session = Session::start_with_user_config("[server.basedpyright]\n", &root_arg(dir.path()));
    let answer = session.ok(
        "check_edit",
        json!({"file": "generic.py", "replacements": [{"old": "    def select_cursor(self) -> int:", "new": "    def select_rows(self) -> int:"}]}),
    );
    assert!(
        answer.contains("fmt.py, not edited, after the edit: ")
            && answer.contains("error [basedpyright reportImplicitAbstractClass]"),
        "{answer}"
    );
    session.keep(dir);
}

/// `check_edit` of a Go function losing a parameter: its callers in two
/// other packages, neither open, break.
#[test]
fn check_edit_of_a_go_function_reaches_its_callers_in_other_packages() {
    if !have("gopls") {
        return skip("gopls is not on PATH");
    }
    let dir = project(&[
        ("go.mod", "module example.com/shapes\n\ngo 1.19\n"),
        (
            "geometry/area.go",
            "package geometry\n\n// Area is w times h.\nfunc Area(w, h int) int {\n\treturn w * h\n}\n",
        ),
        (
            "main.go",
            "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/shapes/geometry\"\n)\n\nfunc main() {\n\tfmt.Println(geometry.Area(2, 3))\n}\n",
        ),
        (
            "report/report.go",
            "package report\n\nimport \"example.com/shapes/geometry\"\n\n// Double is twice an area.\nfunc Double() int {\n\treturn 2 * geometry.Area(1, 1)\n}\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok(
        "check_edit",
        json!({"file": "geometry/area.go", "replacements": [
            {"old": "func Area(w, h int) int {", "new": "func Area(w int) int {"},
            {"old": "return w * h", "new": "return w * w"},
        ]}),
    );
    let wrong_count = "error [compiler WrongArgCount] too many arguments in call to geometry.Area have (number, number) want (int)";
    assert_eq!(
        answer,
        format!(
            "geometry/area.go, if edited (nothing written): no new problems, none fixed (0 problems as now)\n\
             main.go, not edited, after the edit: 1 new problem, 0 fixed\n\
             \x20 new 10:31 {wrong_count}\n\
             report/report.go, not edited, after the edit: 1 new problem, 0 fixed\n\
             \x20 new 7:30 {wrong_count}\n\
             also checked: 2 other files that use `Area` (those not named above have no new problems)"
        )
    );
    session.keep(dir);
}

/// clangd's note naming the declaration of a function called wrongly
/// gives the header by its absolute path; the answer shows it as the
/// roots show files.
#[test]
fn clangd_notes_name_files_as_the_roots_show_them() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = common::projects::c_project_with_database(1);
    std::fs::write(
        dir.path().join("src/main.c"),
        "#include \"shapes.h\"\nint main(void) { return area(2); }\n",
    )
    .unwrap();
    let session = Session::start(&root_arg(dir.path()));
    assert_eq!(
        session.ok("diagnostics", json!({"file": "src/main.c"})),
        "src/main.c: 1 error\n\
         \x20 2:31 error [clang typecheck_call_too_few_args] Too few arguments to function call, \
         expected 2, have 1 include/shapes.h:1:5: note: 'area' declared here"
    );
    session.keep(dir);
}

/// A C function asked for by name, alone or with the file that defines
/// it named, is its body, though clangd gives the prototype in the header
/// (from a definition it goes to the declaration, and from a declaration
/// to itself until its index has the body's file).
#[test]
fn a_c_function_asked_by_name_is_its_body() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = common::projects::c_project_with_database(1);
    let session = Session::start(&root_arg(dir.path()));
    let note = "note: [c,cpp] gave only the declaration; the definition below was found by text";
    for args in [
        json!({"symbol": "area"}),
        json!({"symbol": "area", "file": "src/shapes.c"}),
    ] {
        assert_eq!(
            session.ok("definition", args.clone()),
            format!("{note}\nsrc/shapes.c:2:5  int area(int w, int h) {{ return w * h; }}"),
            "{args}"
        );
        let source = session.ok("source", args.clone());
        assert!(
            source.starts_with(&format!("{note}\nsrc/shapes.c:")),
            "{args}: {source}"
        );
        assert!(source.contains("return w * h;"), "{args}: {source}");
    }
    session.keep(dir);
}

/// A class renamed leaves what its users infer from it unknown, on lines
/// that never name it (pyright, strict): the files that use *them* may
/// break too, and the answer says they were not checked.
#[test]
fn check_edit_says_what_users_infer_from_a_renamed_class_is_not_followed() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[
        (
            "models.py",
            "class Prepared:\n    def body(self) -> int:\n        return 1\n",
        ),
        (
            "sessions.py",
            "from models import Prepared\n\n\ndef make() -> Prepared:\n    return Prepared()\n\n\ndef body_of():\n    return make().body()\n",
        ),
        (
            "api.py",
            "from sessions import body_of\n\nvalue = body_of()\n",
        ),
        ("pyrightconfig.json", r#"{"typeCheckingMode": "strict"}"#),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let check = session.ok(
        "check_edit",
        json!({"file": "models.py", "replacements": [{"old": "class Prepared:", "new": "class PreparedRenamed:"}]}),
    );
    assert!(
        check.contains("9:12 error [Pyright reportUnknownMemberType] Type of \"body\" is unknown")
            && check.ends_with(
                "warning: the new errors of 1 file stand where `Prepared` is not written (what they infer from it changed); the files that use them without naming it were not checked: sessions.py"
            ),
        "{check}"
    );
}
