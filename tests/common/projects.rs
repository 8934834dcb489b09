//! Projects for tests and benchmarks that need more than a few files:
//! big enough that a server takes seconds to load them, or set up the way
//! a real project is (a compilation database).

use super::project;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Two Python modules, one using the other: the small project the
/// real-server tests and benchmarks ask questions about.
pub const SHAPES_PY: &str = "\
class Shape:
    def area(self) -> float:
        return 0.0


def total(shapes: list[Shape]) -> float:
    return sum(s.area() for s in shapes)
";

pub const SHAPES_MAIN_PY: &str = "\
from shapes import Shape, total

size = total([Shape()])
";

/// A TypeScript project big enough that tsserver takes seconds to load
/// it: a chain of modules, each importing the one before.
pub fn big_typescript_project(modules: usize) -> tempfile::TempDir {
    let dir = project(&[(
        "tsconfig.json",
        "{\"compilerOptions\": {\"strict\": true, \"target\": \"es2020\", \"module\": \"commonjs\"}, \"include\": [\"src\"]}\n",
    )]);
    for index in 0..modules {
        let mut text = String::new();
        if index > 0 {
            text.push_str(&format!(
                "import {{ f{} }} from \"./m{}\";\n",
                index - 1,
                index - 1
            ));
        }
        let body = match index {
            0 => "return x;".to_owned(),
            _ => format!("return f{}(x) + 1;", index - 1),
        };
        text.push_str(&format!(
            "export function f{index}(x: number): number {{\n  {body}\n}}\n"
        ));
        for part in 0..20 {
            text.push_str(&format!(
                "export interface I{index}_{part} {{ a: number; b: string; c: I{index}_{part}[] }}\n\
                 export function g{index}_{part}(v: I{index}_{part}): number {{ return v.a + v.b.length + v.c.length; }}\n"
            ));
        }
        write(dir.path(), &format!("src/m{index}.ts"), &text);
    }
    let last = modules - 1;
    write(
        dir.path(),
        "src/main.ts",
        &format!(
            "import {{ f{last} }} from \"./m{last}\";\n\nexport function run(): number {{\n  const unused = 3;\n  return f{last}(1);\n}}\n"
        ),
    );
    dir
}

pub fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A C project with a compilation database naming its files: a header,
/// its implementation, `main.c`, and `callers` more files that each call
/// `area`.
pub fn c_project_with_database(callers: usize) -> tempfile::TempDir {
    let dir = project(&[
        ("include/shapes.h", "int area(int w, int h);\n"),
        (
            "src/shapes.c",
            "#include \"shapes.h\"\nint area(int w, int h) { return w * h; }\n",
        ),
        (
            "src/main.c",
            "#include \"shapes.h\"\nint main(void) { return area(2, 3); }\n",
        ),
    ]);
    let root = dir.path().canonicalize().unwrap();
    let mut files = vec!["src/shapes.c".to_owned(), "src/main.c".to_owned()];
    for index in 0..callers {
        let file = format!("src/caller_{index}.c");
        write(
            &root,
            &file,
            &format!(
                "#include \"shapes.h\"\nint twice_{index}(void) {{ return 2 * area(1, {index}); }}\n"
            ),
        );
        files.push(file);
    }
    let entries: Vec<serde_json::Value> = files
        .iter()
        .map(|file| {
            json!({
                "directory": root.display().to_string(),
                "command": format!("cc -Iinclude -c {file}"),
                "file": file,
            })
        })
        .collect();
    write(
        &root,
        "compile_commands.json",
        &serde_json::to_string_pretty(&entries).unwrap(),
    );
    dir
}

/// A Python project big enough that pyright takes seconds to analyse a
/// file at its end: a chain of modules, each importing the one before,
/// each with `classes` small classes.
pub fn big_python_project(modules: usize, classes: usize) -> tempfile::TempDir {
    let dir = project(&[]);
    for index in 0..modules {
        let mut text = String::new();
        if index > 0 {
            text.push_str(&format!("from m{} import f{}\n\n", index - 1, index - 1));
        }
        let body = match index {
            0 => "x".to_owned(),
            _ => format!("f{}(x) + 1", index - 1),
        };
        text.push_str(&format!(
            "def f{index}(x: int) -> int:\n    return {body}\n\n"
        ));
        for part in 0..classes {
            text.push_str(&format!(
                "class C{index}_{part}:\n    def __init__(self, a: int, b: str) -> None:\n        self.a = a\n        self.b = b\n\n    def size(self) -> int:\n        return self.a + len(self.b)\n\n"
            ));
        }
        write(dir.path(), &format!("m{index}.py"), &text);
    }
    let last = modules - 1;
    write(
        dir.path(),
        "main.py",
        &format!("from m{last} import f{last}\n\nresult = f{last}(1)\n"),
    );
    dir
}

/// A fresh copy of an unpacked package, so that edits stay in the test.
pub fn real_project(name: &str) -> Option<tempfile::TempDir> {
    real_projects(&[(name, ".")])
}

/// Several unpacked packages (or folders of them) copied into one root,
/// each into its own folder, as a monorepo holds them; `None` when one is
/// missing.
pub fn real_projects(parts: &[(&str, &str)]) -> Option<tempfile::TempDir> {
    let kept = kept_projects();
    if !parts.iter().all(|(name, _)| kept.join(name).is_dir()) {
        return None;
    }
    let copy = tempfile::tempdir().unwrap();
    for (name, folder) in parts {
        copy_tree(&kept.join(name), &copy.path().join(folder));
    }
    Some(copy)
}

/// Where .ci/run unpacks the real projects.
fn kept_projects() -> PathBuf {
    std::env::var_os("WINDLASS_REAL_PROJECTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/real-projects"))
}

/// The ESLint configuration a TypeScript project would write: the
/// recommended rules of typescript-eslint for its sources, `any` allowed.
pub const ESLINT_CONFIG: &str = r#"import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["**/*.js", "**/*.cjs", "**/*.d.ts", "**/*.d.cts", "src/**/tests/**"] },
  {
    files: ["src/**/*.ts"],
    extends: [tseslint.configs.recommended],
    rules: { "@typescript-eslint/no-explicit-any": "off" },
  },
);
"#;

/// Makes `folder` a project linted by ESLint: its configuration, and the
/// `node_modules` that `npm install eslint typescript-eslint` gives it
/// (a link to the copy .ci/run installs). `false` when that is missing.
pub fn lint_with_eslint(folder: &Path) -> bool {
    let modules = kept_projects().join("eslint-9.39.5/node_modules");
    if !modules.is_dir() {
        return false;
    }
    std::fs::write(folder.join("eslint.config.mjs"), ESLINT_CONFIG).unwrap();
    std::os::unix::fs::symlink(modules, folder.join("node_modules")).unwrap();
    true
}

/// VitePress's default theme as published, in the install .ci/run makes:
/// Vue components (`<script setup lang="ts">`) over compiled composables.
pub const VITEPRESS_THEME: &str =
    "vitepress-1.6.4/node_modules/vitepress/dist/client/theme-default";

/// A copy of VitePress's default theme made a Vue project
/// ([`as_vitepress_project`]).
pub fn vitepress_theme() -> Option<tempfile::TempDir> {
    let dir = real_project(VITEPRESS_THEME)?;
    as_vitepress_project(dir.path()).then_some(dir)
}

/// The theme of Vue's own documentation as published, in the install
/// .ci/run makes: its sources, Vue components (`<script setup
/// lang="ts">`) over TypeScript composables.
pub const VUE_THEME: &str = "vue-theme-2.4.0/node_modules/@vue/theme";

/// A copy of Vue's documentation theme made a Vue project, as
/// [`as_vitepress_project`] does with its install's `node_modules`.
pub fn vue_theme() -> Option<tempfile::TempDir> {
    let dir = real_project(VUE_THEME)?;
    as_vue_project(dir.path(), "vue-theme-2.4.0").then_some(dir)
}

/// Gives a copy of the theme the dependencies it imports (a link to the
/// `node_modules` .ci/run installs) and the `tsconfig.json` of a Vue
/// project that checks its components. `false` when they are missing.
pub fn as_vitepress_project(root: &Path) -> bool {
    as_vue_project(root, "vitepress-1.6.4")
}

/// Gives a copy of a Vue package the `node_modules` of `install` (one of
/// the installs .ci/run makes) and the `tsconfig.json` of a Vue project
/// that checks its components. `false` when they are missing.
fn as_vue_project(root: &Path, install: &str) -> bool {
    let modules = kept_projects().join(install).join("node_modules");
    if !modules.is_dir() {
        return false;
    }
    std::os::unix::fs::symlink(modules, root.join("node_modules")).unwrap();
    write(
        root,
        "tsconfig.json",
        r#"{
  "compilerOptions": {
    "target": "ESNext",
    "module": "ESNext",
    "moduleResolution": "Bundler",
    "allowJs": true,
    "noEmit": true,
    "skipLibCheck": true
  },
  "include": ["**/*.vue", "**/*.ts", "**/*.js"],
  "exclude": ["node_modules"]
}
"#,
    );
    true
}

/// Writes the compile database an LZ4 build would write for its
/// library's sources into a copy of the LZ4 package; `false` when it
/// cannot.
pub fn compile_lz4(root: &Path) -> bool {
    let Ok(root) = root.canonicalize() else {
        return false;
    };
    let library = root.join("lz4libs");
    let commands: Vec<Value> = ["lz4.c", "lz4hc.c", "lz4frame.c", "xxhash.c"]
        .iter()
        .map(|file| {
            json!({
                "directory": library.display().to_string(),
                "file": library.join(file).display().to_string(),
                "arguments": ["cc", "-c", "-I.", file],
            })
        })
        .collect();
    serde_json::to_string_pretty(&commands)
        .is_ok_and(|text| std::fs::write(root.join("compile_commands.json"), text).is_ok())
}

/// Writes the compile database a build of Brotli's C library would write
/// (its common, decoder and encoder sources, against its public headers)
/// into a copy of the Brotli package; `false` when it cannot.
pub fn compile_brotli(root: &Path) -> bool {
    let Ok(root) = root.canonicalize() else {
        return false;
    };
    let include = format!("-I{}", root.join("c/include").display());
    let mut commands: Vec<Value> = Vec::new();
    for part in ["common", "dec", "enc"] {
        let folder = root.join("c").join(part);
        let Some(sources) = c_sources(&folder) else {
            return false;
        };
        commands.extend(sources.iter().map(|source| {
            json!({
                "directory": folder.display().to_string(),
                "file": source.display().to_string(),
                "arguments": ["cc", "-c", &include, source.display().to_string()],
            })
        }));
    }
    serde_json::to_string_pretty(&commands)
        .is_ok_and(|text| std::fs::write(root.join("compile_commands.json"), text).is_ok())
}

/// The C sources directly in `folder`, in path order; `None` when it
/// cannot be read.
fn c_sources(folder: &Path) -> Option<Vec<PathBuf>> {
    let mut sources: Vec<PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|extension| extension == "c"))
        .collect();
    sources.sort();
    Some(sources)
}

/// Writes the compile database PyCryptodome's build would write (each
/// C source of `src` and of its tests, with the macros its `setup.py`
/// defines on a 64-bit Linux) into a copy of the package; `false` when
/// it cannot.
pub fn compile_pycryptodome(root: &Path) -> bool {
    let Ok(root) = root.canonicalize() else {
        return false;
    };
    let sources = root.join("src");
    let mut commands: Vec<Value> = Vec::new();
    for folder in [sources.clone(), sources.join("test")] {
        let Some(files) = c_sources(&folder) else {
            return false;
        };
        commands.extend(files.iter().map(|file| {
            let mut arguments = vec![
                "cc".to_owned(),
                "-c".to_owned(),
                format!("-I{}", sources.display()),
            ];
            arguments.extend(
                [
                    "HAVE_STDINT_H",
                    "HAVE_UINT128",
                    "HAVE_POSIX_MEMALIGN",
                    "HAVE_CPUID_H",
                    "HAVE_X86INTRIN_H",
                    "USE_SSE2",
                ]
                .map(|macro_name| format!("-D{macro_name}")),
            );
            arguments.push(file.display().to_string());
            json!({
                "directory": folder.display().to_string(),
                "file": file.display().to_string(),
                "arguments": arguments,
            })
        }));
    }
    serde_json::to_string_pretty(&commands)
        .is_ok_and(|text| std::fs::write(root.join("compile_commands.json"), text).is_ok())
}

/// A copy of the LZ4 package with its compile database, and its
/// canonical root; `None` when .ci/run has not unpacked it.
pub fn lz4_project() -> Option<(tempfile::TempDir, PathBuf)> {
    let dir = real_project("lz4-4.4.4")?;
    let root = dir.path().canonicalize().unwrap();
    assert!(compile_lz4(&root), "writing LZ4's compile database");
    Some((dir, root))
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Five published packages in one root, as a monorepo holds them: the
/// gunicorn example (Python, YAML, Dockerfile, shell), bootstrap (SCSS,
/// JSON, JavaScript), zod (TypeScript, linted by ESLint), Monolog (PHP)
/// and regex-syntax (Rust, TOML). `None` when one, or the ESLint that
/// zod is linted with, is missing.
pub fn monorepo() -> Option<tempfile::TempDir> {
    let dir = real_projects(&[
        ("gunicorn-27.0.1/examples/celery_alternative", "service"),
        ("bootstrap-5.3.8", "web"),
        ("zod-4.6.7", "lib"),
        ("monolog-2.9.1", "php"),
        ("regex-syntax-0.8.11", "crate"),
    ])?;
    lint_with_eslint(&dir.path().join("lib")).then_some(dir)
}

/// A file of each of the monorepo's languages, what an edit appends to
/// it, and the problem its servers must then report (with the line the
/// edit lands on).
pub const MONOREPO_EDITS: [(&str, &str, &str); 10] = [
    (
        "service/app.py",
        "\nprint(undefined_total)\n",
        "  463:7 error [Ruff F821] Undefined name `undefined_total`",
    ),
    (
        "service/Dockerfile",
        "\nFROMM nothing\n",
        "  48:1 error [dockerfile-utils 38] Unknown instruction: FROMM",
    ),
    (
        "service/docker-compose.yml",
        "\nbroken: [\n",
        "  81:1 error [YAML 0] Flow sequence in block collection must be sufficiently indented and end with a ]",
    ),
    (
        "service/run_tests.sh",
        "\necho $undefined_total\n",
        "  37:6 warning [shellcheck SC2154] undefined_total is referenced but not assigned.",
    ),
    (
        "web/scss/_buttons.scss",
        "\n.broken { colr: red; }\n",
        "  218:11 warning [scss unknownProperties] Unknown property: 'colr'",
    ),
    (
        "web/package.json",
        "\n}\n",
        "  212:1 error [json 0] End of file expected.",
    ),
    (
        "lib/src/v4/core/parse.ts",
        "\nconst count: number = \"many\";\n",
        "  311:7 error [typescript 2322] Type 'string' is not assignable to type 'number'.",
    ),
    (
        "crate/src/parser.rs",
        "\nfn broken() -> u32 {\n    \"text\"\n}\n",
        "  257:5 error [rust-analyzer E0308] expected u32, found &'static str",
    ),
    (
        "crate/Cargo.toml",
        "\n[extra]\nbroken = \n",
        "  100:10 error [Even Better TOML] expected value",
    ),
    (
        "php/Monolog/Logger.php",
        "\nnew UnknownThing();\n",
        "  763:5 error [intelephense P1009] Undefined type 'Monolog\\UnknownThing'.",
    ),
];

/// The servers the monorepo needs, by the command each runs.
pub const MONOREPO_SERVERS: [&str; 13] = [
    "pyright-langserver",
    "ruff",
    "docker-langserver",
    "yaml-language-server",
    "bash-language-server",
    "shellcheck",
    "vscode-css-language-server",
    "vscode-json-language-server",
    "typescript-language-server",
    "intelephense",
    "vscode-eslint-language-server",
    "rust-analyzer",
    "taplo",
];

/// Mixed questions about the shapes project ([`SHAPES_PY`],
/// [`SHAPES_MAIN_PY`]) that benchmarks ask in turn, with their arguments.
pub fn shapes_questions() -> Vec<(&'static str, Value)> {
    vec![
        (
            "hover",
            json!({"file": "main.py", "line": 3, "symbol": "total"}),
        ),
        (
            "definition",
            json!({"file": "main.py", "line": 3, "symbol": "Shape"}),
        ),
        (
            "find_references",
            json!({"file": "shapes.py", "line": 6, "symbol": "total"}),
        ),
        ("document_symbols", json!({"file": "shapes.py"})),
        ("diagnostics", json!({"file": "main.py"})),
        (
            "hover",
            json!({"file": "shapes.py", "line": 2, "symbol": "area"}),
        ),
    ]
}
