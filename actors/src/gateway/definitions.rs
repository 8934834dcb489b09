//! Definitions found by text, to cross-check what servers say about a
//! name: a server whose index is partial (a file it could not parse, a
//! project it has not loaded) misses definitions that a search of the
//! files still finds. Lines that read like a definition of the name count:
//! in any language a keyword before it (`def`, `function`, `class`,
//! `struct`, …); in shell scripts also `name() {`; in C and C++ also a
//! function whose parameter list is followed by its body rather than `;`
//! (and, when declarations are asked for too, a prototype ending in `;`),
//! and a macro's `#define`.
//! (In Python or JavaScript `name()` alone is a call.) In a Dockerfile, a
//! build argument (`ARG name`), an environment variable (`ENV name`) and
//! a build stage (`FROM image AS name`).

use super::source_files;
use super::words::find_word;
use crate::sketches::{Needle, Sketches};
use crate::vocabulary::root_set::RootSet;
use grep_matcher::Matcher;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::sinks::Lossy;
use std::path::PathBuf;
use std::sync::Mutex;

/// Definitions listed at most.
const MAX_DEFINITIONS: usize = 50;

/// Languages whose files hold prose or data rather than definitions.
const NOT_CODE: &[&str] = &["markdown", "plaintext", "json", "toml", "yaml"];

/// Which lines count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Counted {
    Definitions,
    /// A C or C++ prototype too (`int area(int w);`): what a name that
    /// nothing defines in the roots has (declared for others to define,
    /// or defined only in code the preprocessor leaves out, which clangd
    /// does not index).
    AlsoDeclarations,
}

/// A line that reads like a definition of the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextDefinition {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    /// 1-based, in code points, of the name on the line as written.
    pub column: usize,
    /// The line, trimmed.
    pub text: String,
    /// The file's language id.
    pub language: &'static str,
}

/// The note on `count` definitions found by text that no server named.
pub fn only_by_text(count: usize) -> String {
    format!(
        "note: {} found only by text search; the servers did not report {}",
        match count {
            1 => "1 definition was".to_owned(),
            count => format!("{count} definitions were"),
        },
        if count == 1 { "it" } else { "them" }
    )
}

/// A line that declares without defining: a prototype, ending in `;`.
pub fn is_declaration(line: &str) -> bool {
    line.trim_end().ends_with(';')
}

/// Every definition-looking line of `name` in the source files under the
/// roots, gitignore-aware, in path order: the first [`MAX_DEFINITIONS`].
/// Each root's files are searched by a thread per core, and what they
/// find is put in order after.
pub fn find(
    sketches: &Sketches,
    roots: &RootSet,
    name: &str,
    counted: Counted,
) -> Vec<TextDefinition> {
    let Some(matchers) = Matchers::new(name, counted) else {
        return Vec::new();
    };
    // Every pattern holds the name, less the sigil it may be asked with
    // (an element's `#id`, a style sheet's `$pad`, `--gap` or `%base`).
    let needle = Needle::new(name.trim_start_matches(['#', '$', '@', '%', '-']));
    let mut found = Vec::new();
    sketches.load(roots);
    for root in roots.roots() {
        let in_root = Mutex::new(Vec::new());
        source_files::search_in_parallel(sketches.listings(), &root.path, |searcher, file| {
            let Some(language) = file
                .language
                .filter(|language| !NOT_CODE.contains(language))
            else {
                return;
            };
            let path = file.path.as_path();
            let mut in_file = Vec::new();
            let _unreadable = sketches.search_listed(
                searcher,
                matchers.for_language(language),
                file,
                &needle,
                Lossy(|line, text| {
                    in_file.push(TextDefinition {
                        path: path.to_path_buf(),
                        line: usize::try_from(line).unwrap_or(usize::MAX),
                        column: find_word(text, name, 0).map_or(1, |column| column + 1),
                        text: text.trim().to_owned(),
                        language,
                    });
                    Ok(in_file.len() < MAX_DEFINITIONS)
                }),
            );
            if let (false, Ok(mut in_root)) = (in_file.is_empty(), in_root.lock()) {
                in_root.extend(in_file);
            }
        });
        let mut in_root = in_root.into_inner().unwrap_or_default();
        // Paths compare by component, as the walk in path order visits.
        in_root.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        found.extend(in_root);
        if found.len() >= MAX_DEFINITIONS {
            break;
        }
    }
    found.truncate(MAX_DEFINITIONS);
    found
}

/// The definition-looking lines of `name` in `paths`, each file read
/// whole: for the few files a text search matched where no server named
/// the name.
pub fn in_files(paths: &[PathBuf], name: &str) -> Vec<TextDefinition> {
    let Some(matchers) = Matchers::new(name, Counted::Definitions) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for path in paths {
        let Some(language) = crate::language::language_id(path) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        for (index, line) in text.lines().enumerate() {
            let Some(column) = find_word(line, name, 0) else {
                continue;
            };
            if matchers.defines(language, line) {
                found.push(TextDefinition {
                    path: path.clone(),
                    line: index + 1,
                    column: column + 1,
                    text: line.trim().to_owned(),
                    language,
                });
            }
        }
    }
    found
}

/// The definition patterns of one name, by language family.
pub(super) struct Matchers {
    general: RegexMatcher,
    shell: RegexMatcher,
    c: RegexMatcher,
    styles: RegexMatcher,
    dockerfile: RegexMatcher,
    html: RegexMatcher,
}

impl Matchers {
    pub(super) fn new(name: &str, counted: Counted) -> Option<Self> {
        let styles = styles(name)?;
        // An element's `id`, asked with or without the `#` that selects it.
        let html = format!(
            r#"(?:^|\s)id\s*=\s*["']{}["']"#,
            regex_escape(name.trim_start_matches('#'))
        );
        let name = regex_escape(name);
        let keyword = r"(?:def|class|function|fn|func|struct|enum|union|interface|trait|type|module|namespace|macro)";
        let modifiers = r"(?:(?:export|default|declare|async|static|public|private|protected|pub(?:\([^)]*\))?|local|extern|inline|abstract)\s+)*";
        // Variables count only at the top level: a local of the same name
        // is no definition anyone asks for by name.
        let general = [
            format!(r"^\s{{0,8}}{modifiers}{keyword}\s+\*?{name}\b"),
            format!(r"^{modifiers}(?:const|let|var)\s+{name}\b"),
        ];
        let shell_function = format!(r"^\s*{name}\s*\(\s*\)\s*(?:\{{.*)?$");
        // At the top level, a parameter list left open at the line's end
        // (`static int name(` with one parameter a line) is a definition's
        // or a declaration's too: calls are indented inside a body.
        let ending = match counted {
            Counted::Definitions => r"\s*(?:\{.*)?",
            Counted::AlsoDeclarations => r"\s*(?:\{.*|;)?",
        };
        let c_function =
            format!(r"^[A-Za-z_][\w\s\*&:<>,]*[\s\*&]{name}\s*\((?:[^)]*\){ending}|(?:[^)]*,)?)$");
        // clangd names no macro among its symbols.
        let c_macro = format!(r"^\s*#\s*define\s+{name}\b");
        // Instructions are case-insensitive; the names they define are not.
        let dockerfile = [
            format!(r"^\s*(?i:ARG|ENV)\s+{name}(?:[=\s]|$)"),
            format!(r"^\s*(?i:FROM)\s.*\s(?i:AS)\s+{name}\s*$"),
        ];
        let build = |extra: &[&str]| {
            let mut patterns: Vec<&str> = general.iter().map(String::as_str).collect();
            patterns.extend(extra);
            RegexMatcherBuilder::new().build(&patterns.join("|")).ok()
        };
        Some(Self {
            general: build(&[])?,
            shell: build(&[&shell_function])?,
            c: build(&[&c_function, &c_macro])?,
            styles,
            dockerfile: RegexMatcherBuilder::new()
                .build(&dockerfile.join("|"))
                .ok()?,
            html: RegexMatcherBuilder::new().build(&html).ok()?,
        })
    }

    /// Whether `line` of a file in `language` reads like a definition of
    /// the name.
    pub(super) fn defines(&self, language: &str, line: &str) -> bool {
        !NOT_CODE.contains(&language)
            && self
                .for_language(language)
                .is_match(line.trim_end().as_bytes())
                .unwrap_or(false)
    }

    fn for_language(&self, language: &str) -> &RegexMatcher {
        match language {
            "shellscript" => &self.shell,
            "c" | "cpp" => &self.c,
            "css" | "scss" | "less" => &self.styles,
            "dockerfile" => &self.dockerfile,
            "html" => &self.html,
            _ => &self.general,
        }
    }
}

/// Style sheets' definitions, whose names hold hyphens and are asked with
/// or without their sigil: a Sass mixin, function or placeholder, and a
/// Sass (`$name:`), Less (`@name:`) or custom property (`--name:`)
/// variable. The CSS servers answer no workspace symbols, so these are
/// how a name alone finds them.
fn styles(name: &str) -> Option<RegexMatcher> {
    let bare = name
        .trim_start_matches(['$', '@', '%'])
        .trim_start_matches("--");
    if bare.is_empty() {
        return None;
    }
    let bare = regex_escape(bare);
    // A hyphen continues a name, so `\b` would end `navbar-fixed` inside
    // `navbar-fixed-top`.
    let end = r"(?:[^\w-]|$)";
    let patterns = [
        format!(r"^\s*@(?:mixin|function)\s+{bare}{end}"),
        format!(r"^\s*%{bare}{end}"),
        format!(r"^\s*(?:\$|@|--){bare}\s*:"),
    ];
    RegexMatcherBuilder::new().build(&patterns.join("|")).ok()
}

/// Escapes the characters a regex gives meaning to.
pub(super) fn regex_escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(character) {
            escaped.push('\\');
        }
        escaped.push(character);
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(files: &[(&str, &str)], name: &str) -> Vec<(String, usize)> {
        counted_lines(files, name, Counted::Definitions)
    }

    fn counted_lines(files: &[(&str, &str)], name: &str, counted: Counted) -> Vec<(String, usize)> {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        find(&Sketches::default(), &roots, name, counted)
            .into_iter()
            .map(|found| {
                let file = found
                    .path
                    .file_name()
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                (file, found.line)
            })
            .collect()
    }

    #[test]
    fn finds_definitions_in_many_languages_but_not_uses() {
        let found = lines(
            &[
                (
                    "a.py",
                    "def greet(x):\n    return greet(x)\nclass greet2: pass\n",
                ),
                (
                    "b.sh",
                    "greet() {\n  echo hi\n}\ngreet world\nfunction greet { :; }\n",
                ),
                (
                    "c.c",
                    "int greet(int x);\nstatic int greet(int x) { return x; }\nint y = greet(2);\n\
                     static int greet(\n  int x) {}\nint greet(int x,\n  int y) {}\n  z = greet(\n    1);\n",
                ),
                (
                    "d.ts",
                    "export function greet(): void {}\nexport const greet = 1;\ngreet();\nfunction f() {\n  const greet = 2;\n}\n",
                ),
                ("README.md", "def greet(x):\n"),
            ],
            "greet",
        );
        assert_eq!(
            found,
            vec![
                ("a.py".to_owned(), 1),
                ("b.sh".to_owned(), 1),
                ("b.sh".to_owned(), 5),
                ("c.c".to_owned(), 2),
                ("c.c".to_owned(), 4),
                ("c.c".to_owned(), 6),
                ("d.ts".to_owned(), 1),
                ("d.ts".to_owned(), 2),
            ]
        );
    }

    #[test]
    fn a_prototype_is_a_declaration_and_a_body_is_not() {
        assert!(is_declaration("int area(int w, int h);"));
        assert!(is_declaration(
            "LZ4LIB_API int LZ4_compressBound(int inputSize);  "
        ));
        assert!(!is_declaration("int area(int w, int h) { return w * h; }"));
        assert!(!is_declaration("int area(int w, int h)"));
    }

    #[test]
    fn a_macro_is_defined_by_its_define() {
        let files = [(
            "port.h",
            "#ifdef STATIC\n#  define LIB_API extern\n#else\n#define LIB_API\n#endif\nLIB_API int run(void);\n#if defined(LIB_API)\n",
        )];
        assert_eq!(
            counted_lines(&files, "LIB_API", Counted::Definitions),
            vec![("port.h".to_owned(), 2), ("port.h".to_owned(), 4)]
        );
    }

    #[test]
    fn prototypes_count_when_declarations_are_asked_for() {
        let files = [(
            "init.h",
            "#if LAZY\nINTERNAL void lazy_init(void);\n#endif\nvoid run(void) { lazy_init(); }\n  lazy_init();\n",
        )];
        assert_eq!(
            counted_lines(&files, "lazy_init", Counted::Definitions),
            vec![]
        );
        assert_eq!(
            counted_lines(&files, "lazy_init", Counted::AlsoDeclarations),
            vec![("init.h".to_owned(), 2)]
        );
    }

    #[test]
    fn hidden_folders_are_looked_in_but_not_version_controls() {
        let found = lines(
            &[
                (
                    ".scripts/tally.ts",
                    "export function tally() {}
",
                ),
                (
                    ".git/hooks/tally.sh",
                    "tally() { :; }
",
                ),
            ],
            "tally",
        );
        assert_eq!(found, vec![("tally.ts".to_owned(), 1)]);
    }

    #[test]
    fn the_column_is_the_name_s_on_the_line_as_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("a.py"),
            "class A:\n    def close(self):\n        pass\n",
        )
        .unwrap();
        let roots = RootSet::new(&[dir.path().to_path_buf()]).unwrap();
        let found = find(&Sketches::default(), &roots, "close", Counted::Definitions);
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].line, found[0].column), (2, 9));
        assert_eq!(found[0].text, "def close(self):");
    }

    #[test]
    fn names_are_matched_literally() {
        assert!(lines(&[("a.py", "def a_b(): pass\n")], "a.b").is_empty());
        assert_eq!(lines(&[("a.js", "function $x() {}\n")], "$x").len(), 1);
    }

    #[test]
    fn dockerfiles_define_arguments_variables_and_stages() {
        let file = [(
            "Dockerfile",
            "ARG VIRTUAL_ENV=/opt/venv\nFROM alpine:3 as build\nenv VIRTUAL_ENV_X 1\n\
             ENV PATH=${VIRTUAL_ENV}/bin\nCOPY --from=build /a /b\nENV VIRTUAL_ENV /venv\n",
        )];
        let at = |line| vec![("Dockerfile".to_owned(), line)];
        assert_eq!(lines(&file, "VIRTUAL_ENV"), [at(1), at(6)].concat());
        assert_eq!(lines(&file, "build"), at(2));
        assert_eq!(lines(&file, "PATH"), at(4));
    }

    #[test]
    fn pages_define_their_elements_ids() {
        let page = [(
            "demo.html",
            "<section id=\"intro\">\n<a href=\"#fragments\">x</a>\n<section id='fragments' class=\"s\">\n\
             <div data-id=\"fragments\"></div>\n",
        )];
        let at = |line| vec![("demo.html".to_owned(), line)];
        assert_eq!(lines(&page, "fragments"), at(3));
        assert_eq!(lines(&page, "#fragments"), at(3));
        assert_eq!(lines(&page, "intro"), at(1));
    }

    #[test]
    fn style_sheets_define_mixins_and_variables_with_or_without_their_sigil() {
        let sheets = [
            (
                "navbar.scss",
                "@mixin navbar-fixed {\n  top: 0;\n}\n@mixin navbar-fixed-top {}\n.a { @include navbar-fixed; }\n",
            ),
            (
                "vars.scss",
                "$radius-small: 2px !default;\n$radius-small-x: 1px;\n.b { border-radius: $radius-small; }\n",
            ),
            (
                "root.css",
                ":root {\n  --radius-small: 2px;\n}\n.c { width: var(--radius-small); }\n",
            ),
            (
                "theme.less",
                "@radius-small: 2px;\n%placeholder-x { a: b; }\n",
            ),
        ];
        assert_eq!(
            lines(&sheets, "navbar-fixed"),
            vec![("navbar.scss".to_owned(), 1)]
        );
        let variable = vec![
            ("root.css".to_owned(), 2),
            ("theme.less".to_owned(), 1),
            ("vars.scss".to_owned(), 1),
        ];
        let mut found = lines(&sheets, "radius-small");
        found.sort();
        assert_eq!(found, variable);
        let mut sigil = lines(&sheets, "$radius-small");
        sigil.sort();
        assert_eq!(sigil, variable);
        assert_eq!(
            lines(&sheets, "placeholder-x"),
            vec![("theme.less".to_owned(), 2)]
        );
    }
}
