//! What an edit can break beyond the files it edits. The names it
//! changes are read from the file's outline as it is now: a declaration
//! whose line the edit touches (a rename, a parameter dropped, a type
//! changed), a function or method whose body it touches (its inferred
//! type may follow), anything it removes whole, and the type of a method
//! whose declaration it touches (its subclasses and implementers must
//! match the declaration, and may never name the method). The files of the
//! server's languages that use one of those names as a whole word are
//! its users, with the users of an alias a user gives one; `check_edit`
//! checks them beside the edited files, the most used first, and says which it left out past [`MAX_USERS_CHECKED`].

use super::aliases;
use super::symbols::Symbol;
use super::text_uses;
use super::words::own_name;
use crate::sketches::Sketches;
use crate::vocabulary::root_set::RootSet;
use lsp_types::SymbolKind;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Files not edited that one check looks at, at most: each is checked
/// before and after the edit, so the check's time grows with them.
pub const MAX_USERS_CHECKED: usize = 25;

/// How long the search for users may take in all.
const SEARCH_BUDGET: Duration = Duration::from_secs(3);

/// Names looked for at most, in the outline's order: each is a search of
/// the tree.
const MAX_NAMES: usize = 16;

/// The files that use the names an edit changes.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Users {
    /// The names looked for.
    pub names: Vec<String>,
    /// The names past [`MAX_NAMES`], not looked for.
    pub unsearched: Vec<String>,
    /// The files using them, the one with the most lines naming them
    /// first.
    pub files: Vec<PathBuf>,
    /// Whether every file was searched within the budget.
    pub complete: bool,
}

impl Users {
    /// No names, and so no users.
    pub fn none() -> Self {
        Self {
            complete: true,
            ..Self::default()
        }
    }
}

/// The names whose meaning changes when `old` becomes `new`, by `outline`
/// (the symbols of `old`), each once, in the outline's order.
pub fn changed_names(old: &str, new: &str, outline: &[Symbol]) -> Vec<String> {
    let lines = touched_lines(old, new);
    let texts: Vec<&str> = old.lines().collect();
    let mut names = Vec::new();
    reached(outline, None, &lines, &texts, &mut names);
    names.extend(macros_defined(old, &lines));
    let mut seen = HashSet::new();
    names.retain(|name| seen.insert(name.clone()));
    names
}

/// The files of `languages` under the roots, other than `edited` (as the
/// roots display them), that use one of `names` as a whole word, or an
/// alias a user gives one of them (`aliases.rs`), looked for after them.
pub fn users(
    sketches: &Sketches,
    roots: &RootSet,
    mut names: Vec<String>,
    languages: &[String],
    edited: &HashSet<String>,
) -> Users {
    let deadline = Instant::now() + SEARCH_BUDGET;
    let mut lines: BTreeMap<PathBuf, usize> = BTreeMap::new();
    let mut complete = true;
    let mut searched = 0;
    while searched < names.len().min(MAX_NAMES) {
        let name = names[searched].clone();
        searched += 1;
        let budget = deadline.saturating_duration_since(Instant::now());
        let found = text_uses::unlisted(sketches, roots, &name, languages, edited, None, budget);
        complete &= found.complete;
        for (path, at) in found.files {
            for alias in aliases::given_in(&path, &at, &name) {
                if !names.contains(&alias) {
                    names.push(alias);
                }
            }
            *lines.entry(path).or_default() += at.len();
        }
    }
    let unsearched = names.split_off(searched);
    let mut files: Vec<(PathBuf, usize)> = lines.into_iter().collect();
    // Stable: paths stay in order among files that name them as often.
    files.sort_by_key(|(_, count)| std::cmp::Reverse(*count));
    Users {
        names,
        unsearched,
        files: files.into_iter().map(|(path, _)| path).collect(),
        complete,
    }
}

/// Line pairs compared at most to tell which lines of the middle of a
/// text an edit changed; past it, the whole middle counts as changed.
const MAX_COMPARED: usize = 4_000_000;

/// The 0-based lines of `old` that `new` changes or removes, and for each
/// line `new` inserts, the line of `old` it comes before: the lines that
/// differ between the first and last difference, by their longest common
/// subsequence, so that a rename's scattered edits touch only their own
/// lines.
fn touched_lines(old: &str, new: &str) -> BTreeSet<usize> {
    let (old, new): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let same_start = old
        .iter()
        .zip(&new)
        .take_while(|(old, new)| old == new)
        .count();
    let same_end = old[same_start..]
        .iter()
        .rev()
        .zip(new[same_start..].iter().rev())
        .take_while(|(old, new)| old == new)
        .count();
    let middle = (
        &old[same_start..old.len() - same_end],
        &new[same_start..new.len() - same_end],
    );
    if middle.0.len().saturating_mul(middle.1.len()) > MAX_COMPARED {
        return (same_start..old.len() - same_end).collect();
    }
    differing(middle.0, middle.1)
        .into_iter()
        .map(|line| line + same_start)
        .collect()
}

/// The macros a `#define` on one of `lines` (0-based) of `old` defines:
/// clangd's outline leaves macros out, yet a macro renamed or redefined
/// breaks or changes every file that expands it.
fn macros_defined(old: &str, lines: &BTreeSet<usize>) -> Vec<String> {
    old.lines()
        .enumerate()
        .filter(|(index, _)| lines.contains(index))
        .filter_map(|(_, line)| {
            let directive = line.trim_start().strip_prefix('#')?.trim_start();
            let rest = directive.strip_prefix("define")?;
            if !rest.starts_with([' ', '\t']) {
                return None;
            }
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            (!name.is_empty()).then_some(name)
        })
        .collect()
}

/// The lines of `old` not in a longest common subsequence with `new`, and
/// the line of `old` before which each line of `new` not in it stands.
fn differing(old: &[&str], new: &[&str]) -> BTreeSet<usize> {
    let width = new.len() + 1;
    // `common[i * width + j]`: the longest common subsequence of
    // `old[i..]` and `new[j..]`.
    let mut common = vec![0u32; (old.len() + 1) * width];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            common[i * width + j] = match old[i] == new[j] {
                true => common[(i + 1) * width + j + 1] + 1,
                false => common[(i + 1) * width + j].max(common[i * width + j + 1]),
            };
        }
    }
    let mut touched = BTreeSet::new();
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            (i, j) = (i + 1, j + 1);
        } else if i == old.len()
            || (j < new.len() && common[i * width + j + 1] >= common[(i + 1) * width + j])
        {
            // Insertions first: a line replaced is then touched once.
            touched.insert(i);
            j += 1;
        } else {
            touched.insert(i);
            i += 1;
        }
    }
    touched
}

/// Adds the names of `symbols` (held by `holder`, and their children)
/// that the changed `lines` of `texts` reach.
fn reached(
    symbols: &[Symbol],
    holder: Option<&str>,
    lines: &BTreeSet<usize>,
    texts: &[&str],
    names: &mut Vec<String>,
) {
    for symbol in symbols {
        let (start, end) = (
            symbol.range.start.line as usize,
            symbol.range.end.line as usize,
        );
        let inside = lines.range(start..=end).count();
        if inside == 0 {
            continue;
        }
        let declaration = symbol.selection_range.start.line as usize;
        let whole = inside == end - start + 1;
        let own = written_name(&symbol.name, texts.get(declaration).copied());
        match symbol.kind {
            // What a body does can change what calling it gives; its
            // locals are nobody else's. A constructor or an operator
            // (`__getitem__`) is used through its type's name, and a
            // method's declaration is what the type's subclasses and
            // implementers must match: renaming aiosql's
            // `AsyncGenericAdapter.select_cursor` broke a subclass in a
            // file that never names the method.
            SymbolKind::FUNCTION | SymbolKind::METHOD | SymbolKind::CONSTRUCTOR => {
                let through_type = symbol.kind == SymbolKind::CONSTRUCTOR
                    || is_special(&own)
                    || lines.contains(&declaration);
                names.push(own);
                names.extend(holder.filter(|_| through_type).map(str::to_owned));
            }
            SymbolKind::CLASS
            | SymbolKind::INTERFACE
            | SymbolKind::STRUCT
            | SymbolKind::ENUM
            | SymbolKind::MODULE
            | SymbolKind::NAMESPACE
            | SymbolKind::PACKAGE
            | SymbolKind::OBJECT => {
                if whole || lines.contains(&declaration) {
                    names.push(own.clone());
                }
                reached(&symbol.children, Some(&own), lines, texts, names);
            }
            _ => {
                names.push(own.clone());
                reached(&symbol.children, Some(&own), lines, texts, names);
            }
        }
    }
}

/// A symbol's name as its declaration writes it: without the type or
/// the sigil a server puts before it (`FlagSet.GetString`, SCSS's
/// `$pad` asked as `pad`), but with a `$` the declaration writes, where
/// it is part of the name (TypeScript's `$ZodNullInternals`).
fn written_name(name: &str, declaration: Option<&str>) -> String {
    let member = name.rsplit(['.', ':', '#']).next().unwrap_or(name);
    match member.starts_with('$') && declaration.is_some_and(|line| line.contains(member)) {
        true => member.to_owned(),
        false => own_name(name).to_owned(),
    }
}

/// The names among `names` that code uses through an operator or a
/// built-in rather than by name: a file that applies one to a value
/// whose type it never names is not found by any name.
pub fn used_through_operators(names: &[String]) -> Vec<&String> {
    names.iter().filter(|name| is_special(name)).collect()
}

/// A method the language calls for an operator or a built-in: Python's
/// `__getitem__`, `__init__`, `__eq__`.
fn is_special(name: &str) -> bool {
    name.len() > 4 && name.starts_with("__") && name.ends_with("__")
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn symbol(name: &str, kind: SymbolKind, lines: (u32, u32), children: Vec<Symbol>) -> Symbol {
        let range = Range::new(Position::new(lines.0, 0), Position::new(lines.1, 1));
        Symbol {
            name: name.into(),
            kind,
            range,
            selection_range: Range::new(Position::new(lines.0, 4), Position::new(lines.0, 8)),
            children,
        }
    }

    /// A module as pyright outlines it: a constant, a function with a
    /// local, and a class with a method.
    fn outline() -> Vec<Symbol> {
        vec![
            symbol("LIMIT", SymbolKind::CONSTANT, (0, 0), Vec::new()),
            symbol(
                "parse",
                SymbolKind::FUNCTION,
                (2, 5),
                vec![symbol("parts", SymbolKind::VARIABLE, (3, 3), Vec::new())],
            ),
            symbol(
                "Reader",
                SymbolKind::CLASS,
                (7, 12),
                vec![symbol("read", SymbolKind::METHOD, (9, 12), Vec::new())],
            ),
        ]
    }

    fn text(changed: &[usize]) -> (String, String) {
        let old: Vec<String> = (0..14).map(|line| format!("line {line}")).collect();
        let mut new = old.clone();
        for &line in changed {
            new[line] = format!("changed {line}");
        }
        (old.join("\n"), new.join("\n"))
    }

    fn names_for(changed: &[usize]) -> Vec<String> {
        let (old, new) = text(changed);
        changed_names(&old, &new, &outline())
    }

    #[test]
    fn a_body_reaches_its_function_and_not_its_locals() {
        assert_eq!(names_for(&[3]), ["parse"]);
        assert_eq!(names_for(&[11]), ["read"]);
    }

    #[test]
    fn a_class_is_reached_by_its_declaration_not_by_a_method_body() {
        assert_eq!(names_for(&[7]), ["Reader"]);
        assert_eq!(names_for(&[10]), ["read"]);
    }

    #[test]
    fn a_methods_declaration_reaches_its_type() {
        assert_eq!(names_for(&[9]), ["read", "Reader"]);
        assert_eq!(names_for(&[2]), ["parse"], "a function has no type");
    }

    #[test]
    fn nothing_changed_reaches_nothing() {
        assert!(names_for(&[]).is_empty());
        assert!(names_for(&[13]).is_empty());
    }

    #[test]
    fn an_operator_method_reaches_its_type() {
        let outline = vec![symbol(
            "CaseInsensitiveDict",
            SymbolKind::CLASS,
            (0, 4),
            vec![symbol(
                "__getitem__",
                SymbolKind::METHOD,
                (2, 4),
                Vec::new(),
            )],
        )];
        let (old, new) = text(&[3]);
        assert_eq!(
            changed_names(&old, &new, &outline),
            ["__getitem__", "CaseInsensitiveDict"]
        );
    }

    #[test]
    fn a_macro_renamed_or_redefined_is_reached_though_no_outline_names_it() {
        let old = "#ifndef PORT_H\n#define PORT_H\n#  define API_64_BITS 1\n#define SQUARE(x) ((x) * (x))\nint area(int w);\n";
        let new = old
            .replace("API_64_BITS 1", "API_64_BITS_RENAMED 1")
            .replace("((x) * (x))", "((x) + (x))");
        assert_eq!(changed_names(old, &new, &[]), ["API_64_BITS", "SQUARE"]);
        let guarded = old.replace("#ifndef PORT_H", "#ifndef PORT_H_");
        assert!(
            changed_names(old, &guarded, &[]).is_empty(),
            "an `#ifndef` defines nothing"
        );
    }

    #[test]
    fn a_dollar_is_kept_where_the_declaration_writes_it() {
        let declaration = Some("export interface $ZodNullInternals extends $ZodTypeInternals {");
        assert_eq!(
            written_name("$ZodNullInternals", declaration),
            "$ZodNullInternals"
        );
        assert_eq!(written_name("$pad", Some("pad: 1px;")), "pad");
        assert_eq!(written_name("FlagSet.GetString", None), "GetString");
    }

    #[test]
    fn lines_between_two_changes_are_not_changed() {
        assert_eq!(names_for(&[0, 11]), ["LIMIT", "read"]);
    }

    #[test]
    fn an_insertion_touches_the_line_after_it() {
        let touched =
            |old: &str, new: &str| -> Vec<usize> { touched_lines(old, new).into_iter().collect() };
        assert_eq!(touched("a\nb\nc", "a\nx\nb\nc"), [1]);
        assert_eq!(touched("a\nb", "a\nb\nc"), [2]);
        assert_eq!(touched("a\nb\nc", "a\nc"), [1]);
        assert_eq!(touched("a\nb\nc\nd", "x\nb\nc\ny"), [0, 3]);
        assert_eq!(touched("a\nb\nc", "a\nb\nc"), Vec::<usize>::new());
    }

    #[test]
    fn users_are_ordered_by_how_often_they_name_what_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("lib.py"), "def parse(): pass\n").unwrap();
        std::fs::write(root.join("a.py"), "from lib import parse\n").unwrap();
        std::fs::write(root.join("b.py"), "parse()\nparse()\nReader\n").unwrap();
        std::fs::write(root.join("c.py"), "parser = 1\n").unwrap();
        std::fs::write(root.join("d.md"), "parse\n").unwrap();
        let roots = RootSet::new(std::slice::from_ref(&root)).unwrap();
        let edited: HashSet<String> = ["lib.py".to_owned()].into_iter().collect();
        let found = users(
            &Sketches::default(),
            &roots,
            vec!["parse".into(), "Reader".into()],
            &["python".to_owned()],
            &edited,
        );
        assert_eq!(found.files, [root.join("b.py"), root.join("a.py")]);
        assert!(found.complete);
    }

    #[test]
    fn the_users_of_an_alias_are_users() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join("api.ts"), "export function _upper() {}\n").unwrap();
        std::fs::write(
            root.join("checks.ts"),
            "export {\n  _upper as upper,\n} from \"./api\";\n",
        )
        .unwrap();
        std::fs::write(
            root.join("test.ts"),
            "import { upper } from \"./checks\";\n",
        )
        .unwrap();
        let roots = RootSet::new(std::slice::from_ref(&root)).unwrap();
        let edited: HashSet<String> = ["api.ts".to_owned()].into_iter().collect();
        let found = users(
            &Sketches::default(),
            &roots,
            vec!["_upper".into()],
            &["typescript".to_owned()],
            &edited,
        );
        assert_eq!(found.names, ["_upper", "upper"]);
        assert_eq!(found.files, [root.join("checks.ts"), root.join("test.ts")]);
    }
}
