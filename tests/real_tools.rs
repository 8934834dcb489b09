//! The rest of the tool surface against real servers: pyright, clangd,
//! typescript-language-server and bash-language-server. Each test skips,
//! saying why, when its server is missing; CI installs them all.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::*;
use serde_json::json;
use std::path::Path;

/// Every file of a project, to compare before and after a tool ran.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = walk(dir)
        .into_iter()
        .map(|path| (path.display().to_string(), std::fs::read(&path).unwrap()))
        .collect();
    files.sort();
    files
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(walk(&path));
        } else {
            found.push(path);
        }
    }
    found
}

const SHAPES_PY: &str = "\
class Shape:
    def area(self) -> float:
        return 0.0


def total(shapes: list[Shape], scale: float) -> float:
    return sum(s.area() for s in shapes) * scale
";

const MAIN_PY: &str = "\
from shapes import Shape, total


def report() -> float:
    return total([Shape()], 2.0)


partial = Sha
";

#[test]
fn pyright_search_map_hierarchy_rename_completion_signature_and_actions() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[("shapes.py", SHAPES_PY), ("main.py", MAIN_PY)]);
    let session = Session::start(&root_arg(dir.path()));
    let before = contents(dir.path());

    let search = session.ok("search", json!({"query": "total"}));
    assert!(
        search.contains("symbols (") && search.contains("  shapes.py\n    function total 6:5"),
        "{search}"
    );
    assert!(search.contains("text (3 matches in 2 files)"), "{search}");

    let map = session.ok("codebase_map", json!({"include_symbols": true}));
    assert!(
        map.contains("  shapes.py: class Shape, function total"),
        "{map}"
    );
    assert!(map.contains("  main.py: "), "{map}");

    let callers = session.ok(
        "call_hierarchy",
        json!({"file": "shapes.py", "line": 6, "symbol": "total", "direction": "incoming"}),
    );
    assert!(
        callers.starts_with("callers of total (1)\nmain.py\n  function report 4:5 — calls at 5:12"),
        "{callers}"
    );
    // pyright calls a method a function; the outline knows better.
    let callees = session.ok(
        "call_hierarchy",
        json!({"file": "shapes.py", "line": 6, "symbol": "total", "direction": "outgoing"}),
    );
    assert!(callees.contains("  method area 2:9"), "{callees}");

    let rename = session.ok(
        "rename",
        json!({"file": "shapes.py", "line": 1, "symbol": "Shape", "new_name": "Figure"}),
    );
    assert!(
        rename.starts_with("4 edits in 2 files (proposed, not applied)"),
        "{rename}"
    );
    assert!(
        rename.contains("  1:7-1:12  \"Shape\" → \"Figure\""),
        "{rename}"
    );

    let completion = session.ok(
        "completion",
        json!({"file": "main.py", "line": 8, "column": 14}),
    );
    assert_eq!(
        completion
            .lines()
            .next()
            .map(|line| line.split_whitespace().next()),
        Some(Some("Shape")),
        "{completion}"
    );

    let signature = session.ok(
        "signature_help",
        json!({"file": "main.py", "line": 5, "column": 29}),
    );
    assert!(signature.contains("«scale: float»"), "{signature}");

    let actions = session.call("code_actions", json!({"file": "main.py", "start_line": 8}));
    assert!(!actions.is_error, "{}", actions.text);

    let type_hierarchy = session.err(
        "type_hierarchy",
        json!({"file": "shapes.py", "line": 1, "symbol": "Shape", "direction": "subtypes"}),
    );
    assert_eq!(type_hierarchy, "[python] does not support type hierarchy");

    assert_eq!(
        contents(dir.path()),
        before,
        "the workspace is byte-identical after rename and code actions"
    );
}

/// A project whose pyright configuration includes only its package:
/// pyright's references leave out the tests that use it unless it has
/// them open, and the answer then names them, found by text, with why.
#[test]
fn pyright_references_name_the_files_its_include_leaves_out() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[
        (
            "pyproject.toml",
            "[project]\nname = \"pkg\"\n\n[tool.pyright]\ninclude = [\"src\"]\n",
        ),
        ("src/pkg/__init__.py", ""),
        ("src/pkg/tools.py", "def helper() -> int:\n    return 1\n"),
        (
            "src/pkg/main.py",
            "from pkg.tools import helper\n\nvalue = helper()\n",
        ),
        (
            "tests/test_tools.py",
            "from pkg.tools import helper\n\n\ndef test_helper() -> None:\n    assert helper() == 1\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let answer = session.ok(
        "find_references",
        json!({"file": "src/pkg/tools.py", "line": 1, "symbol": "helper"}),
    );
    assert!(answer.contains("src/pkg/main.py"), "{answer}");
    // pyright reads a left-out file while it is open (the index pass
    // opens each in turn): then its references are there.
    let listed = answer.contains("tests/test_tools.py (2)");
    let named = answer.contains("it reads only the paths its configuration's `include` names")
        && answer.contains("tests/test_tools.py:1,5");
    assert!(listed != named, "listed or named, once: {answer}");
    // Its symbols, too, are of the included paths only: the test's own
    // function is found by text, and the answer says why.
    let found = session.ok("search", json!({"query": "test_helper"}));
    assert!(
        found.contains(
            "\nwarning: [python] names symbols only in the paths its configuration's `include` names, and the files open; the text matches in 1 file outside them: tests/test_tools.py\n"
        ) && found.contains("definition test_helper 4:5 (text)"),
        "{found}"
    );
}

/// `child` twice on a line, two things: the local and the method. The
/// first is not taken for the caller; each is listed with where it is
/// defined, and the column chooses.
#[test]
fn pyright_a_name_twice_on_a_line_is_chosen_by_column() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let dir = project(&[(
        "tree.py",
        "class Node:\n    def child(self) -> \"Node\":\n        return self\n\n\n\
         def walk(node: Node) -> Node:\n    child = node.child()\n    return child if child else node\n",
    )]);
    let session = Session::start(&root_arg(dir.path()));
    let listed = session.ok(
        "definition",
        json!({"file": "tree.py", "line": 7, "symbol": "child"}),
    );
    assert!(
        listed.starts_with(
            "`child` occurs 2 times on line 7 of tree.py, naming different things; ask again with `column`:"
        ) && listed.contains("column 5: defined at tree.py:7:5  child = node.child()")
            && listed.contains("column 18: defined at tree.py:2:9  def child(self) -> \"Node\":"),
        "{listed}"
    );
    let chosen = session.ok(
        "definition",
        json!({"file": "tree.py", "line": 7, "column": 18}),
    );
    assert!(chosen.contains("tree.py:2:9"), "{chosen}");
    // One thing written twice is not a choice.
    let same = session.ok(
        "find_references",
        json!({"file": "tree.py", "line": 8, "symbol": "child"}),
    );
    assert!(same.starts_with("3 references in 1 file"), "{same}");
}

#[test]
fn pyright_output_stays_compact_on_a_large_file() {
    if !have("pyright-langserver") {
        return skip("pyright-langserver is not on PATH");
    }
    let mut source = String::from("class Shape:\n    pass\n\n\n");
    for index in 0..200 {
        source.push_str(&format!(
            "def func_{index}(s: Shape) -> Shape:\n    return s\n\n\n"
        ));
    }
    let nested = (0..200).fold("None".to_owned(), |inner, index| {
        format!("func_{index}({inner})")
    });
    source.push_str(&format!("ALL = {nested}\n"));
    let dir = project(&[("gen.py", &source)]);
    let session = Session::start(&root_arg(dir.path()));

    let outline = session.ok("document_symbols", json!({"file": "gen.py"}));
    assert!(
        outline.len() < 12 * 1024,
        "document_symbols is {} bytes",
        outline.len()
    );
    assert!(outline.contains("function func_199"), "{outline}");

    let references = session.ok(
        "find_references",
        json!({"file": "gen.py", "line": 1, "symbol": "Shape"}),
    );
    assert!(
        references.len() < 10 * 1024,
        "find_references is {} bytes",
        references.len()
    );
    assert!(
        references.starts_with("401 references in 1 file"),
        "{}",
        &references[..200.min(references.len())]
    );
    let listed = references
        .lines()
        .skip(2)
        .flat_map(|line| line.split_whitespace())
        .count();
    assert_eq!(listed, 401, "every site is listed");

    let search = session.ok("search", json!({"query": "func_1"}));
    assert!(search.len() < 4 * 1024, "search is {} bytes", search.len());
    assert!(search.contains("    function func_1 "), "{search}");
}

/// Two TypeScript projects side by side, a question about the first:
/// `search` names what the second defines too. typescript-language-server
/// searches only the projects of the document it opened or used last,
/// and said "none named like" `betaOnly`; tsserver asked without a file
/// searches every project it has loaded.
#[test]
fn typescript_search_names_symbols_of_every_project() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let tsconfig = "{\"compilerOptions\": {\"strict\": true}, \"include\": [\"src\"]}\n";
    let dir = project(&[
        ("a/tsconfig.json", tsconfig),
        ("a/src/x.ts", "export const alpha = 1;\n"),
        ("b/tsconfig.json", tsconfig),
        (
            "b/src/y.ts",
            "export function betaOnly(): number {\n  return 2;\n}\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    assert_eq!(
        session.ok("hover", json!({"file": "a/src/x.ts", "symbol": "alpha"})),
        "const alpha: 1"
    );
    let search = session.ok("search", json!({"query": "betaOnly"}));
    assert!(
        search.starts_with("symbols (1)\n  b/src/y.ts\n    function betaOnly 1:17\n"),
        "{search}"
    );
    let search = session.ok("search", json!({"query": "alpha"}));
    assert!(
        search.starts_with("symbols (1)\n  a/src/x.ts\n    constant alpha 1:14\n"),
        "{search}"
    );
}

#[test]
fn typescript_implementation_call_hierarchy_and_refused_type_hierarchy() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let shapes = "export interface Shape {\n  area(): number;\n}\n\nexport class Square implements Shape {\n  area(): number {\n    return 4;\n  }\n}\n\nexport function measure(shape: Shape): number {\n  return shape.area();\n}\n";
    let main = "import { Square, measure } from \"./shapes\";\n\nexport function run(): number {\n  return measure(new Square());\n}\n";
    let dir = project(&[
        ("shapes.ts", shapes),
        ("main.ts", main),
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}}\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let implementation = session.ok(
        "implementation",
        json!({"file": "shapes.ts", "line": 1, "symbol": "Shape"}),
    );
    assert_eq!(
        implementation,
        "shapes.ts:5:14  export class Square implements Shape {"
    );
    let callers = session.ok(
        "call_hierarchy",
        json!({"file": "shapes.ts", "line": 11, "symbol": "measure", "direction": "incoming"}),
    );
    assert!(
        callers.contains("main.ts\n  function run 3:17 — calls at 4:10"),
        "{callers}"
    );
    let refused = session.err(
        "type_hierarchy",
        json!({"file": "shapes.ts", "line": 5, "symbol": "Square", "direction": "supertypes"}),
    );
    assert_eq!(refused, "[typescript] does not support type hierarchy");
}

/// tsserver publishes a file's errors first and its suggestions (here a
/// deprecated call) in a later round, busy all the while: a fresh
/// session's first answer for a file without errors must wait for them,
/// as final as an answer with errors.
#[test]
fn typescript_first_diagnostics_include_the_suggestion_round() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let old = "/** @deprecated use `next` instead */\nexport function old(): number {\n  return 1;\n}\n\nexport function next(): number {\n  return 2;\n}\n";
    let main = "import { old } from \"./old\";\n\nexport const value: number = old();\n";
    let dir = project(&[
        ("old.ts", old),
        ("main.ts", main),
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}}\n",
        ),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let first = session.ok("diagnostics", json!({"file": "main.ts"}));
    assert!(
        first.contains("hint [typescript 6385] 'old' is deprecated."),
        "{first}"
    );
}

/// A function's prototype in a header and its body in a source file are
/// one function: named alone, it is answered, not listed as ambiguous.
/// Two static functions that share a name in two files are two.
#[test]
fn clangd_takes_a_declaration_and_its_definition_for_one_symbol() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        (
            "lib.h",
            "#ifndef LIB_H\n#define LIB_H\n/* Adds two numbers. */\nint add_numbers(int a, int b);\n#endif\n",
        ),
        (
            "lib.c",
            "#include \"lib.h\"\n\nint add_numbers(int a, int b) {\n    return a + b;\n}\n\nstatic int helper(void) { return 1; }\nint use_lib(void) { return helper(); }\n",
        ),
        (
            "main.c",
            "#include \"lib.h\"\n\nstatic int helper(void) { return 2; }\nint main(void) {\n    return add_numbers(1, helper());\n}\n",
        ),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let references = session.ok("find_references", json!({"symbol": "add_numbers"}));
    assert!(
        references.contains("3 references in 3 files"),
        "{references}"
    );
    assert!(
        references.contains("lib.c (1)\n  3:5  int add_numbers"),
        "{references}"
    );
    let helper = session.ok("find_references", json!({"symbol": "helper"}));
    assert!(
        helper.contains("`helper` is ambiguous (2 matches)"),
        "{helper}"
    );
}

/// A name only declared, under a branch the preprocessor leaves out
/// (Brotli's `BrotliEncoderLazyStaticInit`): clangd indexes none of it,
/// and `search` lists the prototype by text, as a declaration.
#[test]
fn clangd_search_lists_a_prototype_it_does_not_index() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let dir = project(&[
        (
            "init.h",
            "#ifndef INIT_H\n#define INIT_H\n#if defined(LAZY_INIT)\nvoid lazy_static_init(void);\n#endif\nint ready(void);\n#endif\n",
        ),
        (
            "init.c",
            "#include \"init.h\"\n\nint ready(void) { return 1; }\n",
        ),
        ("compile_flags.txt", "-xc\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    session.ok("diagnostics", json!({"file": "init.c"}));
    let found = session.ok("search", json!({"query": "lazy_static_init"}));
    assert!(
        found.contains("init.h") && found.contains("declaration lazy_static_init 4:6 (text)"),
        "{found}"
    );
}

#[test]
fn clangd_incoming_calls_and_type_hierarchy() {
    if !have("clangd") {
        return skip("clangd is not on PATH");
    }
    let c =
        "static int helper(int x) { return x + 1; }\n\nint main(void) {\n  return helper(1);\n}\n";
    let cpp = "struct Base { virtual ~Base(); };\nstruct Mid : Base {};\nstruct Leaf : Mid {};\n";
    let dir = project(&[
        ("main.c", c),
        ("shapes.cpp", cpp),
        ("compile_flags.txt", "-std=c++17\n"),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    let callers = session.ok(
        "call_hierarchy",
        json!({"file": "main.c", "line": 1, "symbol": "helper", "direction": "incoming"}),
    );
    assert_eq!(
        callers,
        "warning: [c,cpp] has no compile_commands.json, so it knows only the files it has opened; \
         references, renames and callers may be incomplete\n\
         callers of helper (1)\nmain.c\n  function main 3:5 — calls at 4:10"
    );
    let up = session.ok(
        "type_hierarchy",
        json!({"file": "shapes.cpp", "line": 2, "symbol": "Mid", "direction": "supertypes"}),
    );
    assert_eq!(up, "supertypes of Mid (1)\nshapes.cpp\n  struct Base 1:8");
    let down = session.ok(
        "type_hierarchy",
        json!({"file": "shapes.cpp", "line": 2, "symbol": "Mid", "direction": "subtypes"}),
    );
    assert_eq!(
        down,
        "warning: [c,cpp] has no compile_commands.json, so it knows only the files it has opened; \
         references, renames and callers may be incomplete\n\
         subtypes of Mid (1)\nshapes.cpp\n  struct Leaf 3:8",
        "subtypes depend on the whole project; supertypes do not"
    );
}

#[test]
fn bash_language_server_outlines_and_finds_shell_functions() {
    if !have("bash-language-server") {
        return skip("bash-language-server is not on PATH");
    }
    let script = "#!/usr/bin/env bash\ngreet() {\n  echo \"hello $1\"\n}\n\nfarewell() {\n  echo bye\n}\n\ngreet world\n";
    let dir = project(&[("run.sh", script)]);
    let session = Session::start(&root_arg(dir.path()));
    let outline = session.ok("document_symbols", json!({"file": "run.sh"}));
    assert!(
        outline.contains("function greet 2-4") && outline.contains("function farewell 6-8"),
        "{outline}"
    );
    let definition = session.ok(
        "definition",
        json!({"file": "run.sh", "line": 10, "symbol": "greet"}),
    );
    assert_eq!(definition, "run.sh:2:1  greet() {");
    let search = session.ok("search", json!({"query": "greet"}));
    assert!(search.contains("text (2 matches in 1 file)"), "{search}");
}

/// tsserver outlines a file of its loaded project without the file being
/// opened (`navtree`): the map names what typescript-language-server's own
/// outline of the opened file names, and a file changed on disk as it is
/// now, since tsserver is told of the change before the question.
#[test]
fn typescript_map_outlines_unopened_files_as_they_are_now() {
    if !have("typescript-language-server") {
        return skip("typescript-language-server is not on PATH");
    }
    let lib = "\
export interface Sized {\n  size(): number;\n}\n\
export class Box implements Sized {\n  size(): number {\n    return 1;\n  }\n}\n\
export const make = (): Box => new Box();\n\
export enum Color {\n  Red,\n}\n\
export function paint(box: Box): Color {\n  const inner = () => Color.Red;\n  return inner();\n}\n\
export default function () {\n  return 0;\n}\n";
    let dir = project(&[
        (
            "tsconfig.json",
            "{\"compilerOptions\": {\"strict\": true}, \"include\": [\"src\"]}\n",
        ),
        (
            "src/main.ts",
            "import { make } from \"./lib\";\nexport const box = make();\n",
        ),
        ("src/lib.ts", lib),
    ]);
    let session = Session::start(&root_arg(dir.path()));
    assert_eq!(
        session.ok("hover", json!({"file": "src/main.ts", "symbol": "box"})),
        "const box: Box"
    );
    // The map's symbols of lib.ts, and the outline's top-level ones, in
    // the order of their names.
    let mapped = |map: &str| -> Vec<String> {
        let line = map
            .lines()
            .find_map(|line| line.trim_start().strip_prefix("lib.ts: "))
            .unwrap_or_default();
        let mut symbols: Vec<String> = line.split(", ").map(str::to_owned).collect();
        symbols.sort();
        symbols
    };
    let outlined = |outline: &str| -> Vec<String> {
        let mut symbols: Vec<String> = outline
            .lines()
            .filter(|line| !line.starts_with(' '))
            .filter_map(|line| line.rsplit_once(' ').map(|(symbol, _)| symbol.to_owned()))
            .collect();
        symbols.sort();
        symbols
    };
    let first = mapped(&session.ok("codebase_map", json!({"include_symbols": true})));
    assert_eq!(
        first,
        [
            "class Box",
            "constant make",
            "enum Color",
            "function default",
            "function paint",
            "interface Sized"
        ]
    );
    std::fs::write(
        dir.path().join("src/lib.ts"),
        format!("{lib}export function sharpen(): void {{}}\n"),
    )
    .unwrap();
    let second = mapped(&session.ok("codebase_map", json!({"include_symbols": true})));
    let outline = session.ok("document_symbols", json!({"file": "src/lib.ts"}));
    assert!(
        second.contains(&"function sharpen".to_owned()),
        "{second:?}"
    );
    assert_eq!(second, outlined(&outline), "{outline}");
}
