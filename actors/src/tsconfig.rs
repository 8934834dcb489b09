//! Which files a `tsconfig.json` or `jsconfig.json` puts in its project,
//! as tsserver decides it: the nearest configuration above a file, the
//! projects it references, then the configurations further up. A file in
//! none of them is one tsserver gives a project of its own when it is
//! opened (an "inferred" project, built from everything the file
//! imports): effect's compiled `dist/` beside its sources, Django's admin
//! scripts beside a TypeScript package. Opening hundreds of those kept
//! tsserver busy for minutes, and its workspace symbols then timed out;
//! the index pass asks a TypeScript server only about the files of its
//! projects. Pure but for reading the configurations, once each.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

/// The names of a project's configuration, in the order tsserver looks
/// for them in each directory.
const CONFIG_NAMES: [&str; 2] = ["tsconfig.json", "jsconfig.json"];

/// Whether a file may be a configuration a project reads: one of
/// [`CONFIG_NAMES`] or a file they extend or reference by the same
/// convention (`tsconfig.base.json`, `tsconfig.build.json`).
pub fn is_configuration(path: &Path) -> bool {
    path.file_name()
        .and_then(|name| name.to_str())
        .is_some_and(|name| {
            (name.starts_with("tsconfig") || name.starts_with("jsconfig"))
                && name.ends_with(".json")
        })
}
/// How deep `extends` and `references` are followed.
const MAX_DEPTH: usize = 8;
/// The package directories an `exclude` left unset leaves out (tsserver
/// also keeps its `**` out of them where `exclude` is set; not modelled:
/// Windlass's walk skips what `.gitignore` names, as `node_modules`
/// usually is).
const PACKAGE_DIRECTORIES: [&str; 3] = ["node_modules", "bower_components", "jspm_packages"];
const TYPESCRIPT_EXTENSIONS: [&str; 4] = ["ts", "tsx", "mts", "cts"];
const JAVASCRIPT_EXTENSIONS: [&str; 4] = ["js", "jsx", "mjs", "cjs"];

/// One configuration's project, with every path made absolute.
#[derive(Debug)]
struct Project {
    files: Vec<PathBuf>,
    /// `None` when the configuration names only `files`.
    include: Option<GlobSet>,
    exclude: GlobSet,
    allow_js: bool,
    references: Vec<PathBuf>,
}

/// What a configuration says, `extends` followed: each field as the
/// nearest file that sets it gives it, paths made absolute against that
/// file's directory.
#[derive(Debug, Default)]
struct Settings {
    files: Option<Vec<PathBuf>>,
    include: Option<Vec<String>>,
    exclude: Option<Vec<String>>,
    allow_js: Option<bool>,
    out_dir: Option<PathBuf>,
    references: Vec<PathBuf>,
}

/// The projects of the configurations read so far, each read once.
#[derive(Debug, Default)]
pub struct Projects {
    /// Each configuration file read, `None` when it cannot be understood:
    /// then it is taken to hold every file under its directory, as
    /// before tsserver's own reading of it could say otherwise.
    read: HashMap<PathBuf, Option<Project>>,
    /// Each directory looked in, with the configuration found there.
    found: HashMap<PathBuf, Option<PathBuf>>,
}

impl Projects {
    /// Whether a configuration in the file's directory or above puts it in
    /// its project, or in a project it references.
    pub fn hold(&mut self, file: &Path) -> bool {
        let mut directory = file.parent();
        while let Some(here) = directory {
            if let Some(config) = self.config_in(here)
                && self.holds(&config, file, 0)
            {
                return true;
            }
            directory = here.parent();
        }
        false
    }

    fn config_in(&mut self, directory: &Path) -> Option<PathBuf> {
        self.found
            .entry(directory.to_path_buf())
            .or_insert_with(|| {
                CONFIG_NAMES
                    .iter()
                    .map(|name| directory.join(name))
                    .find(|path| path.is_file())
            })
            .clone()
    }

    fn holds(&mut self, config: &Path, file: &Path, depth: usize) -> bool {
        if depth > MAX_DEPTH {
            return false;
        }
        if !self.read.contains_key(config) {
            let project = read_project(config);
            self.read.insert(config.to_path_buf(), project);
        }
        let references = match self.read.get(config) {
            Some(Some(project)) if project.has(file) => return true,
            Some(Some(project)) => project.references.clone(),
            // Unreadable: every file under its directory, as before.
            _ => return config.parent().is_some_and(|here| file.starts_with(here)),
        };
        references
            .iter()
            .any(|reference| self.holds(reference, file, depth + 1))
    }
}

impl Project {
    fn has(&self, file: &Path) -> bool {
        if !self.takes_extension(file) {
            return false;
        }
        if self.files.iter().any(|named| named == file) {
            return true;
        }
        self.include
            .as_ref()
            .is_some_and(|include| include.is_match(file) && !self.exclude.is_match(file))
    }

    fn takes_extension(&self, file: &Path) -> bool {
        let Some(extension) = file.extension().and_then(|extension| extension.to_str()) else {
            return false;
        };
        let extension = extension.to_ascii_lowercase();
        TYPESCRIPT_EXTENSIONS.contains(&extension.as_str())
            || (self.allow_js && JAVASCRIPT_EXTENSIONS.contains(&extension.as_str()))
    }
}

/// The project of the configuration at `config`; `None` when it cannot be
/// read or understood.
fn read_project(config: &Path) -> Option<Project> {
    let directory = config.parent()?;
    let settings = read_settings(config, 0)?;
    let jsconfig = config
        .file_name()
        .is_some_and(|name| name == "jsconfig.json");
    // Neither `files` nor `include`: everything under the directory.
    let include = match (&settings.files, settings.include) {
        (_, Some(include)) => Some(include),
        (Some(_), None) => None,
        (None, None) => Some(vec![format!("{}/**/*", glob_text(directory)?)]),
    };
    let exclude = settings.exclude.unwrap_or_else(|| {
        let mut exclude: Vec<String> = PACKAGE_DIRECTORIES
            .iter()
            .filter_map(|name| glob_text(&directory.join(name)))
            .collect();
        exclude.extend(settings.out_dir.as_deref().and_then(glob_text));
        exclude
    });
    Some(Project {
        files: settings.files.unwrap_or_default(),
        include: match include {
            Some(patterns) => Some(glob_set(&patterns, Pattern::Include)?),
            None => None,
        },
        exclude: glob_set(&exclude, Pattern::Exclude)?,
        allow_js: settings.allow_js.unwrap_or(jsconfig),
        references: settings.references,
    })
}

/// A configuration's settings with those of the ones it extends under
/// them.
fn read_settings(config: &Path, depth: usize) -> Option<Settings> {
    if depth > MAX_DEPTH {
        return None;
    }
    let directory = config.parent()?;
    let text = std::fs::read_to_string(config).ok()?;
    let value: Value = serde_json::from_str(&without_comments(&text)).ok()?;
    let object = value.as_object()?;
    let mut settings = Settings::default();
    for base in extended(object) {
        let base = resolve_extends(directory, base)?;
        settings = settings.under(read_settings(&base, depth + 1)?);
    }
    settings = Settings {
        files: paths(object.get("files"), directory),
        include: patterns(object.get("include"), directory),
        exclude: patterns(object.get("exclude"), directory),
        allow_js: object
            .get("compilerOptions")
            .and_then(|options| options.get("allowJs"))
            .and_then(Value::as_bool),
        out_dir: object
            .get("compilerOptions")
            .and_then(|options| options.get("outDir"))
            .and_then(Value::as_str)
            .map(|out_dir| normalize(&directory.join(out_dir))),
        references: references(object.get("references"), directory),
    }
    .over(settings);
    Some(settings)
}

impl Settings {
    /// These settings where set, `base`'s elsewhere; references are
    /// never inherited.
    fn over(self, base: Settings) -> Settings {
        Settings {
            files: self.files.or(base.files),
            include: self.include.or(base.include),
            exclude: self.exclude.or(base.exclude),
            allow_js: self.allow_js.or(base.allow_js),
            out_dir: self.out_dir.or(base.out_dir),
            references: self.references,
        }
    }

    /// `base`'s settings where set, these elsewhere: a later entry of
    /// `extends` wins over an earlier one.
    fn under(self, base: Settings) -> Settings {
        Settings {
            references: Vec::new(),
            ..base.over(self)
        }
    }
}

/// The configurations `extends` names, in order.
fn extended(object: &Map<String, Value>) -> Vec<&str> {
    match object.get("extends") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Where a configuration extended from `directory` is: a path relative
/// to it, or a package's (its `tsconfig.json` when the name is the
/// package alone) in a `node_modules` here or above.
fn resolve_extends(directory: &Path, name: &str) -> Option<PathBuf> {
    let with_json = |path: PathBuf| {
        if path.is_file() {
            return Some(path);
        }
        let mut named = path.into_os_string();
        named.push(".json");
        let named = PathBuf::from(named);
        named.is_file().then_some(named)
    };
    if name.starts_with("./") || name.starts_with("../") || Path::new(name).is_absolute() {
        return with_json(normalize(&directory.join(name)));
    }
    directory.ancestors().find_map(|here| {
        let package = here.join("node_modules").join(name);
        if package.is_dir() {
            let config = package.join("tsconfig.json");
            return config.is_file().then_some(config);
        }
        with_json(package)
    })
}

fn paths(value: Option<&Value>, directory: &Path) -> Option<Vec<PathBuf>> {
    let list = value?.as_array()?;
    Some(
        list.iter()
            .filter_map(Value::as_str)
            .map(|path| normalize(&directory.join(path)))
            .collect(),
    )
}

/// Glob patterns made absolute against `directory`.
fn patterns(value: Option<&Value>, directory: &Path) -> Option<Vec<String>> {
    let list = value?.as_array()?;
    Some(
        list.iter()
            .filter_map(Value::as_str)
            .filter_map(|pattern| glob_text(&normalize(&directory.join(pattern))))
            .collect(),
    )
}

/// The configurations `references` names: a directory stands for its
/// `tsconfig.json`.
fn references(value: Option<&Value>, directory: &Path) -> Vec<PathBuf> {
    let Some(list) = value.and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|reference| reference.get("path")?.as_str())
        .map(|path| {
            let path = normalize(&directory.join(path));
            match path.is_dir() {
                true => path.join("tsconfig.json"),
                false => path,
            }
        })
        .collect()
}

#[derive(Clone, Copy, PartialEq)]
enum Pattern {
    Include,
    Exclude,
}

/// Patterns as tsserver reads them: one whose last part has neither a
/// wildcard nor an extension names a directory, and so everything under
/// it.
fn glob_set(patterns: &[String], kind: Pattern) -> Option<GlobSet> {
    let mut set = GlobSetBuilder::new();
    for pattern in patterns {
        let last = pattern.rsplit('/').next().unwrap_or_default();
        let wild = last.contains(['*', '?']);
        let directory = !wild && (kind == Pattern::Exclude || !last.contains('.'));
        let mut expanded = vec![pattern.clone()];
        if directory {
            expanded.push(format!("{pattern}/**/*"));
        }
        for pattern in expanded {
            set.add(glob(&pattern)?);
        }
    }
    set.build().ok()
}

fn glob(pattern: &str) -> Option<Glob> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .ok()
}

/// A path as a glob matching it alone; `None` when it is not UTF-8.
fn glob_text(path: &Path) -> Option<String> {
    let text = path.to_str()?;
    Some(text.replace('[', "[[]").replace('{', "[{]"))
}

/// `a/./b/../c` as `a/c`, without asking the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normal.pop();
            }
            other => normal.push(other),
        }
    }
    normal
}

/// JSON with comments and trailing commas (what tsserver reads) as plain
/// JSON: comments become spaces, a comma before `}` or `]` goes.
fn without_comments(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            plain.push(c);
            match c {
                '\\' => plain.extend(chars.next()),
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                plain.push(c);
            }
            ('/', Some('/')) => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        plain.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                plain.push(' ');
            }
            _ => plain.push(c),
        }
    }
    without_trailing_commas(&plain)
}

/// Drops each comma that only whitespace separates from a closing `}`
/// or `]`, outside strings.
fn without_trailing_commas(text: &str) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut pending_comma: Option<usize> = None;
    for c in text.chars() {
        if in_string {
            kept.push(c);
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            '}' | ']' => {
                if let Some(at) = pending_comma.take() {
                    kept.replace_range(at..=at, " ");
                }
            }
            ',' => {
                pending_comma = Some(kept.len());
                kept.push(c);
                continue;
            }
            c if c.is_whitespace() => {
                kept.push(c);
                continue;
            }
            '"' => in_string = true,
            _ => {}
        }
        pending_comma = None;
        kept.push(c);
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        dir
    }

    fn held(dir: &tempfile::TempDir, files: &[&str]) -> Vec<bool> {
        let mut projects = Projects::default();
        files
            .iter()
            .map(|file| projects.hold(&dir.path().join(file)))
            .collect()
    }

    #[test]
    fn include_names_the_sources_and_compiled_javascript_stays_out() {
        let dir = tree(&[
            (
                "tsconfig.json",
                r#"{
                    // the sources only
                    "compilerOptions": {"strict": true,},
                    "include": ["lib/src/**/*.ts"], /* not dist */
                }"#,
            ),
            ("lib/src/a.ts", ""),
        ]);
        assert_eq!(
            held(
                &dir,
                &[
                    "lib/src/a.ts",
                    "lib/src/deep/b.ts",
                    "lib/dist/a.js",
                    "lib/dist/a.d.ts",
                    "other/Gruntfile.js",
                ]
            ),
            [true, true, false, false, false]
        );
    }

    #[test]
    fn without_include_everything_but_packages_and_the_output() {
        let dir = tree(&[(
            "tsconfig.json",
            r#"{"compilerOptions": {"outDir": "./build", "allowJs": true}}"#,
        )]);
        assert_eq!(
            held(
                &dir,
                &[
                    "a.ts",
                    "src/b.js",
                    "node_modules/x/index.ts",
                    "build/a.js",
                    "README.md"
                ]
            ),
            [true, true, false, false, false]
        );
    }

    #[test]
    fn javascript_needs_allow_js_or_a_jsconfig() {
        let ts = tree(&[("tsconfig.json", "{}")]);
        assert_eq!(held(&ts, &["a.js", "a.ts"]), [false, true]);
        let js = tree(&[("jsconfig.json", "{}")]);
        assert_eq!(held(&js, &["a.js", "a.mjs"]), [true, true]);
    }

    #[test]
    fn a_directory_in_include_or_exclude_means_what_is_under_it() {
        let dir = tree(&[(
            "tsconfig.json",
            r#"{"include": ["src"], "exclude": ["src/generated", "**/*.spec.ts"]}"#,
        )]);
        assert_eq!(
            held(
                &dir,
                &[
                    "src/a.ts",
                    "src/generated/b.ts",
                    "src/a.spec.ts",
                    "test/c.ts"
                ]
            ),
            [true, false, false, false]
        );
    }

    #[test]
    fn extends_gives_what_the_file_does_not_set_relative_to_its_own_directory() {
        let dir = tree(&[
            (
                "config/base.json",
                r#"{"include": ["../packages/*/src"], "compilerOptions": {"allowJs": true}}"#,
            ),
            ("tsconfig.json", r#"{"extends": "./config/base"}"#),
            (
                "node_modules/@tsconfig/strictest/tsconfig.json",
                r#"{"compilerOptions": {"allowJs": false}}"#,
            ),
            (
                "app/tsconfig.json",
                r#"{"extends": ["../config/base.json", "@tsconfig/strictest"], "include": ["."]}"#,
            ),
        ]);
        assert_eq!(
            held(&dir, &["packages/one/src/a.js", "packages/one/test/a.ts"]),
            [true, false]
        );
        // The later `extends` wins; `include` is the file's own.
        assert_eq!(held(&dir, &["app/main.ts", "app/main.js"]), [true, false]);
    }

    #[test]
    fn a_solution_holds_the_files_of_the_projects_it_references() {
        let dir = tree(&[
            (
                "tsconfig.json",
                r#"{"files": [], "references": [{"path": "./tsconfig.app.json"}, {"path": "./tools"}]}"#,
            ),
            ("tsconfig.app.json", r#"{"include": ["src"]}"#),
            ("tools/tsconfig.json", r#"{"files": ["build.ts"]}"#),
        ]);
        assert_eq!(
            held(
                &dir,
                &[
                    "src/main.ts",
                    "tools/build.ts",
                    "tools/other.ts",
                    "vite.config.ts"
                ]
            ),
            [true, true, false, false]
        );
    }

    #[test]
    fn a_file_left_out_by_the_nearest_configuration_may_be_in_one_above() {
        let dir = tree(&[
            ("tsconfig.json", r#"{"include": ["packages/**/*"]}"#),
            ("packages/one/tsconfig.json", r#"{"include": ["src"]}"#),
        ]);
        assert_eq!(
            held(
                &dir,
                &["packages/one/src/a.ts", "packages/one/test/a.ts", "b.ts"]
            ),
            [true, true, false]
        );
    }

    #[test]
    fn a_configuration_that_cannot_be_read_holds_everything_under_it() {
        let dir = tree(&[("tsconfig.json", "{ not json")]);
        assert_eq!(held(&dir, &["a.js", "deep/b.ts"]), [true, true]);
    }

    #[test]
    fn no_configuration_holds_nothing() {
        let dir = tree(&[("src/a.ts", "")]);
        assert_eq!(held(&dir, &["src/a.ts"]), [false]);
    }

    #[test]
    fn comments_and_trailing_commas_go_and_strings_stay() {
        let text = "{\"a\": \"// not a comment, ]\", // one\n \"b\": [1, 2,], /* two */ \"c\": \"\\\"/*\",\n}";
        let plain: Value = serde_json::from_str(&without_comments(text)).unwrap();
        assert_eq!(
            plain,
            serde_json::json!({"a": "// not a comment, ]", "b": [1, 2], "c": "\"/*"})
        );
    }
}
