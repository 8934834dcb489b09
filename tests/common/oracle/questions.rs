//! The questions an agent asks about a definition before it edits it,
//! judged by the checker: the uses a rename breaks are references the
//! answer must list (and each listed reference must name the definition
//! on its line), a broken use must lead back to the definition, and the
//! definition must be found by its name, shown whole and hovered.

use super::super::{Session, ToolOutcome};
use super::checkers::{CheckerError, Errors};
use super::edits::Edit;
use super::occurrences::occurrences;
use super::{Judge, Verdict, ask};
use regex::Regex;
use serde_json::json;
use std::collections::BTreeSet;
use std::path::Path;

/// The deepest a definition asked for by name is indented: a module's,
/// a class's and a nested class's members.
const MAX_NAMED_INDENT: usize = 8;

/// The occurrences a references answer leaves out that are asked
/// `definition`, at most, for one definition.
const OCCURRENCES_ASKED: usize = 5;

/// Search pages followed at most for one name.
const SEARCH_PAGES: usize = 30;

/// A definition the oracle asks about: where it stands, as published.
pub struct Definition<'a> {
    pub file: &'a str,
    /// 1-based.
    pub line: usize,
    pub name: &'a str,
    /// Its line's text.
    pub text: &'a str,
    /// The type that holds it, for a method: `search` is asked for
    /// `Type.method` too.
    pub holder: Option<String>,
}

impl<'a> Definition<'a> {
    /// The definition an edit changes, in the text of its file.
    pub fn of(edit: &'a Edit, text: &str) -> Option<Self> {
        let lines: Vec<&str> = text.lines().collect();
        let index = lines.iter().position(|line| *line == edit.old)?;
        Some(Self {
            file: &edit.file,
            line: index + 1,
            name: &edit.name,
            text: &edit.old,
            holder: holder(&lines, index),
        })
    }

    fn describe(&self) -> String {
        format!("`{}` ({}:{})", self.name, self.file, self.line)
    }
}

/// The answers to the questions asked before the edit.
pub struct Asked {
    references: ToolOutcome,
    by_name: ToolOutcome,
    source: ToolOutcome,
    hover: ToolOutcome,
    search: Vec<ToolOutcome>,
    /// `search` for `Type.method`, for a method.
    qualified: Option<Vec<ToolOutcome>>,
}

/// Asks about `definition` with the project as published.
pub fn ask_before(session: &Session, definition: &Definition) -> Asked {
    let at = json!({"file": definition.file, "line": definition.line, "symbol": definition.name});
    let named = json!({"symbol": definition.name});
    let qualified = definition
        .holder
        .as_ref()
        .map(|holder| search_pages(session, &format!("{holder}.{}", definition.name)));
    Asked {
        references: ask(session, "find_references", at.clone()),
        by_name: ask(session, "definition", named.clone()),
        source: ask(session, "source", named),
        hover: ask(session, "hover", at),
        search: search_pages(session, definition.name),
        qualified,
    }
}

/// Every page of `search` for `query`, up to [`SEARCH_PAGES`].
fn search_pages(session: &Session, query: &str) -> Vec<ToolOutcome> {
    let mut pages = vec![ask(session, "search", json!({"query": query}))];
    while pages.len() < SEARCH_PAGES {
        let Some(offset) = pages.last().and_then(|page| next_offset(&page.text)) else {
            break;
        };
        pages.push(ask(
            session,
            "search",
            json!({"query": query, "offset": offset}),
        ));
    }
    pages
}

/// The type that holds the definition on 0-based line `index`: a Go
/// method's receiver, or the class, trait or `impl` block the nearest
/// less indented line above opens.
fn holder(lines: &[&str], index: usize) -> Option<String> {
    let receiver = Regex::new(r"^func\s+\(\s*\w*\s+\*?(?P<type>[A-Za-z_]\w*)").unwrap();
    if let Some(found) = receiver.captures(lines[index]) {
        return Some(found["type"].to_owned());
    }
    let opens = Regex::new(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:abstract\s+|final\s+)*(?:class|interface|trait|impl(?:<[^>]*>)?\s+(?:[\w:]+(?:<[^>]*>)?\s+for\s+)?)\s*(?P<type>[A-Za-z_]\w*)",
    )
    .unwrap();
    let depth = indentation(lines[index]);
    if depth == 0 {
        return None;
    }
    let above = lines[..index]
        .iter()
        .rev()
        .find(|line| !line.trim().is_empty() && indentation(line) < depth)?;
    let found = opens.captures(above)?;
    // A blanket `impl<T: Float> Real for T` holds its methods for no
    // type a search could name.
    (found["type"].len() > 1).then(|| found["type"].to_owned())
}

/// One answer judged: its verdict, the question, and why.
pub type Verdicts = Vec<(Verdict, String, String)>;

/// Judges the answers asked before a rename (`uses`: the places its
/// checker found broken), and asks `definition` from one broken use,
/// with the project as published again.
pub fn judge(
    judge: &Judge,
    session: &Session,
    root: &Path,
    definition: &Definition,
    asked: &Asked,
    uses: Option<&BTreeSet<(String, usize)>>,
) -> Verdicts {
    let place = definition.describe();
    let places = Places {
        judge,
        root,
        definition,
    };
    let references_answer =
        chosen_by_column(&places, session, "find_references", &asked.references);
    let hover = chosen_by_column(&places, session, "hover", &asked.hover);
    let mut verdicts = Vec::new();
    if let Some(uses) = uses {
        let question = format!("find_references of {place}");
        verdicts.push(references(&places, &references_answer, uses, question));
        if let Some(from) = uses
            .iter()
            .find(|(file, _)| file != definition.file)
            .or_else(|| uses.iter().next())
        {
            let answer = ask(
                session,
                "definition",
                json!({"file": from.0, "line": from.1, "symbol": definition.name}),
            );
            verdicts.push(found_in(
                &places,
                &answer,
                format!(
                    "definition of {place} from its use at {}:{}",
                    from.0, from.1
                ),
            ));
        }
    }
    // A definition nested in a function's body (a method of a class a
    // test defines) is nobody's to ask for by name: the servers' names
    // leave it out, as the text search does past two levels.
    let by_name = indentation(definition.text) <= MAX_NAMED_INDENT;
    if by_name {
        verdicts.push(found_in(
            &places,
            &asked.by_name,
            format!("definition of {place} by name"),
        ));
        verdicts.push(source(&places, &asked.source, &place));
    }
    verdicts.push(references_by_occurrence(
        &places,
        session,
        &references_answer,
    ));
    // A decorated definition's hover is the type of what its decorator
    // made of it, which need not name it (ty: `Unknown`, or a context
    // manager's type).
    let decorated = places.decorated(definition.file, definition.line);
    let hovered = hover.text.contains(definition.name)
        || (decorated && !hover.is_error && !hover.text.trim().is_empty())
        || declared_type(definition).is_some_and(|declared| hover.text.contains(declared));
    // "No hover information" is said, not implied: clangd has none for
    // code the preprocessor leaves out.
    let verdict = match (hovered, hover.text.starts_with("no hover information")) {
        (false, true) => Verdict::WrongAndSaid,
        _ => answered(hovered, &hover),
    };
    verdicts.push((verdict, format!("hover of {place}"), hover.text.clone()));
    if by_name {
        verdicts.push(search(&places, &asked.search, &place));
        if let (Some(pages), Some(holder)) = (&asked.qualified, &definition.holder) {
            let (verdict, _, why) = search(&places, pages, &place);
            let question = format!("search of {holder}.{} ({place})", definition.name);
            verdicts.push((verdict, question, why));
        }
    }
    verdicts
}

/// The type a field's line declares it with (`insert_per_second: int`),
/// which a hover of the field may give alone (ty's is `int`).
fn declared_type<'a>(definition: &Definition<'a>) -> Option<&'a str> {
    let text = definition.text;
    let after = &text[text.find(definition.name)? + definition.name.len()..];
    let declared = after.trim_start_matches(['?', '!']).strip_prefix(':')?;
    let declared = declared.split(['=', ';', ',']).next()?.trim();
    (!declared.is_empty()).then_some(declared)
}

/// The columns of white space a line starts with, a tab as four.
fn indentation(line: &str) -> usize {
    line.chars()
        .take_while(|character| character.is_whitespace())
        .map(|character| if character == '\t' { 4 } else { 1 })
        .sum()
}

/// The places a rename broke, by the checker's errors it added: each
/// error on a line naming the definition, other than its declarations
/// (a name followed by `::` there is a module's or a type's, as `fmt` in
/// `impl fmt::Display`, not the function's).
pub fn broken_uses(
    judge: &Judge,
    added: &Errors,
    root: &Path,
    definition: &Definition,
) -> BTreeSet<(String, usize)> {
    let places = Places {
        judge,
        root,
        definition,
    };
    let word = Regex::new(&format!(
        r"(?:^|[^\w$]){}(?:$|[^\w$:]|:[^:])",
        regex::escape(definition.name)
    ))
    .unwrap();
    let mut uses = BTreeSet::new();
    for (file, errors) in added {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else {
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        for CheckerError { line, column, .. } in errors {
            // Where the checker points, the name must be: a line may name
            // it for something else (a local `def` beside a property `def`).
            let names_it = lines
                .get(line.wrapping_sub(1))
                .is_some_and(|text| match column {
                    Some(column) => names_at(text, definition.name, *column),
                    None => word.is_match(text),
                });
            if names_it && !places.is_definition(file, *line) {
                uses.insert((file.clone(), *line));
            }
        }
    }
    uses
}

/// Whether `text` writes `name` as a word over its 1-based character
/// `column`.
fn names_at(text: &str, name: &str, column: usize) -> bool {
    let at = text
        .char_indices()
        .nth(column.saturating_sub(1))
        .map_or(text.len(), |(at, _)| at);
    let is_word = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(name).any(|(start, found)| {
        let end = start + found.len();
        start <= at
            && at < end
            && !text[..start].chars().next_back().is_some_and(is_word)
            && !text[end..].chars().next().is_some_and(is_word)
    })
}

/// Where the oracle reads the project, and what it looks for there.
struct Places<'a> {
    judge: &'a Judge,
    root: &'a Path,
    definition: &'a Definition<'a>,
}

impl Places<'_> {
    /// The text of a line of a file as published.
    fn line(&self, file: &str, line: usize) -> Option<String> {
        let text = std::fs::read_to_string(self.root.join(file)).ok()?;
        text.lines().nth(line.checked_sub(1)?).map(str::to_owned)
    }

    /// Whether the definition on 1-based `line` has a decorator: a line
    /// above it starting with `@`, past the lines of a decorator's
    /// arguments written over several (`@pytest.mark.parametrize(`, its
    /// cases, `)`), up to a blank line or the end of a block's header.
    fn decorated(&self, file: &str, line: usize) -> bool {
        let Ok(text) = std::fs::read_to_string(self.root.join(file)) else {
            return false;
        };
        let lines: Vec<&str> = text.lines().take(line.saturating_sub(1)).collect();
        for above in lines.iter().rev().map(|above| above.trim()) {
            if above.starts_with('@') {
                return true;
            }
            if above.is_empty() || above.ends_with(':') {
                return false;
            }
        }
        false
    }

    /// Whether the span's first line past the comments and attributes
    /// that lead it is the definition.
    fn opens_with_definition(&self, file: &str, first: usize, last: usize) -> bool {
        let leading = |text: &str| {
            let text = text.trim_start();
            text.is_empty()
                || ["/*", "*", "//", "#", "@"]
                    .iter()
                    .any(|mark| text.starts_with(mark))
        };
        (first..=last)
            .find(|line| self.line(file, *line).is_none_or(|text| !leading(&text)))
            .is_some_and(|line| self.is_definition(file, line))
    }

    /// Whether `file:line` is the definition's own line, or (where the
    /// language declares a function apart from its body) its body.
    fn is_own(&self, file: &str, line: usize) -> bool {
        (file == self.definition.file && line == self.definition.line)
            || self.judge.body.is_some() && self.is_definition(file, line)
    }

    /// Whether `file:line` is the definition: its own line, another
    /// declaration of the name in its file (a TypeScript overload, a C
    /// prototype beside its body), or (where the language puts a
    /// declaration apart from its body, as C does) the body of the name
    /// anywhere.
    fn is_definition(&self, file: &str, line: usize) -> bool {
        if file == self.definition.file && line == self.definition.line {
            return true;
        }
        let Some(text) = self.line(file, line) else {
            return false;
        };
        let names_it = |pattern: &str| {
            Regex::new(pattern)
                .unwrap()
                .captures(&text)
                .is_some_and(|found| &found["name"] == self.definition.name)
        };
        // A C name a macro stands for (`#define f NAMESPACE(f)`) is
        // defined there first.
        let defined_as_macro = || {
            self.judge.body.is_some()
                && text
                    .trim_start()
                    .strip_prefix('#')
                    .is_some_and(|directive| {
                        directive
                            .trim_start()
                            .strip_prefix("define")
                            .is_some_and(|rest| {
                                rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                                    .find(|word| !word.is_empty())
                                    == Some(self.definition.name)
                            })
                    })
        };
        (file == self.definition.file && names_it(self.judge.definition))
            || self.judge.body.is_some_and(names_it)
            || defined_as_macro()
    }
}

/// The answer again, asked at the column the definition is found from,
/// where it listed the name's occurrences on the line to choose from
/// (`column 23: defined at errors.go:244:23 …`), as an agent that knows
/// what it asks about would choose; the answer itself otherwise.
fn chosen_by_column(
    places: &Places,
    session: &Session,
    tool: &str,
    answer: &ToolOutcome,
) -> ToolOutcome {
    let choice =
        Regex::new(r"^column (?P<column>\d+): defined at (?P<file>[^\s:]+):(?P<line>\d+):")
            .unwrap();
    let column = answer.text.lines().find_map(|line| {
        let found = choice.captures(line)?;
        let line: usize = found["line"].parse().ok()?;
        places
            .is_definition(&found["file"], line)
            .then(|| found["column"].parse::<usize>().ok())?
    });
    let Some(column) = column else {
        return ToolOutcome {
            text: answer.text.clone(),
            is_error: answer.is_error,
        };
    };
    let definition = places.definition;
    ask(
        session,
        tool,
        json!({"file": definition.file, "line": definition.line, "column": column}),
    )
}

/// The references answer against the name's occurrences in code that it
/// does not list (`occurrences.rs`): the first [`OCCURRENCES_ASKED`] are
/// asked `definition`, and those that lead back to the definition are
/// uses it missed.
fn references_by_occurrence(
    places: &Places,
    session: &Session,
    answer: &ToolOutcome,
) -> (Verdict, String, String) {
    let definition = places.definition;
    let listed = referenced(&answer.text);
    let unlisted: Vec<(String, usize)> =
        occurrences(places.root, places.judge.sources, definition.name)
            .into_iter()
            .filter(|place| !listed.contains(place) && !places.is_definition(&place.0, place.1))
            .take(OCCURRENCES_ASKED)
            .collect();
    let uses: BTreeSet<(String, usize)> = unlisted
        .into_iter()
        .filter(|(file, line)| {
            let asked = json!({"file": file, "line": line, "symbol": definition.name});
            // Only to it: a name a type and a value share (TypeScript's
            // interface and const of one name) leads from a value's use
            // to both, and only the type is asked about; and to its own
            // line, not to another declaration of the name in its file
            // (pkg/errors' `withMessage.Cause` beside `withStack.Cause`).
            let found = ask(session, "definition", asked);
            let places_found = located(&found.text);
            !found.is_error
                && places_found
                    .iter()
                    .all(|(file, line)| places.is_definition(file, *line))
                && places_found
                    .iter()
                    .any(|(file, line)| places.is_own(file, *line))
        })
        .collect();
    let question = format!(
        "find_references of {} against `definition` at the name's occurrences",
        definition.describe()
    );
    references(places, answer, &uses, question)
}

/// The words a reference to the definition may be written as: its
/// name, an alias a listed line gives it (`DRAFTABLE as immerable`, then
/// used as `immerable`), and for a constructor its class's name (a
/// `ConfigurationError(…)` call refers to its `__init__`).
fn referred_by(places: &Places, listed: &BTreeSet<(String, usize)>) -> Vec<String> {
    let definition = places.definition;
    let mut words = vec![definition.name.to_owned()];
    let alias = Regex::new(&format!(
        r"(?:^|[^\w$]){}\s+as\s+(?P<alias>[A-Za-z_$][\w$]*)",
        regex::escape(definition.name)
    ))
    .unwrap();
    for (file, line) in listed {
        if let Some(text) = places.line(file, *line) {
            words.extend(
                alias
                    .captures_iter(&text)
                    .map(|found| found["alias"].to_owned()),
            );
        }
    }
    if ["__init__", "__new__", "constructor", "__construct"].contains(&definition.name) {
        words.extend(definition.holder.clone());
    }
    words.sort();
    words.dedup();
    words
}

/// The references answer: every use listed, and every listed place
/// naming the definition on its line.
fn references(
    places: &Places,
    answer: &ToolOutcome,
    uses: &BTreeSet<(String, usize)>,
    question: String,
) -> (Verdict, String, String) {
    if answer.is_error {
        return failed(answer, question);
    }
    let listed = referenced(&answer.text);
    let words: Vec<Regex> = referred_by(places, &listed)
        .iter()
        .map(|word| whole_word(word))
        .collect();
    let missed: Vec<&(String, usize)> = uses.difference(&listed).collect();
    let invented: Vec<&(String, usize)> = listed
        .iter()
        .filter(|(file, line)| {
            places
                .line(file, *line)
                .is_none_or(|text| !words.iter().any(|word| word.is_match(&text)))
        })
        .collect();
    let why = format!(
        "missed {missed:?}, listed where the name is not {invented:?}\n{}",
        answer.text
    );
    // A cross-check by text names files the server listed nothing in.
    let named = named_by_text(&answer.text);
    let said = warned(answer)
        || named.contains("*")
        || (!named.is_empty() && missed.iter().all(|(file, _)| named.contains(file.as_str())));
    let verdict = match (missed.is_empty(), invented.is_empty(), said) {
        (true, true, _) => Verdict::Right,
        (false, true, true) => Verdict::PartialAndSaid,
        (_, _, true) => Verdict::WrongAndSaid,
        (_, _, false) => Verdict::WrongWithoutWarning,
    };
    (verdict, question, why)
}

/// A definition answer, resolved or a list of candidates: right when it
/// names the definition.
fn found_in(places: &Places, answer: &ToolOutcome, question: String) -> (Verdict, String, String) {
    if answer.is_error {
        return failed(answer, question);
    }
    let right = located(&answer.text)
        .iter()
        .any(|(file, line)| places.is_definition(file, *line));
    (answered(right, answer), question, answer.text.clone())
}

/// A `source` answer by name: the definition's own line among the lines
/// it shows, or the definition among its candidates.
fn source(places: &Places, answer: &ToolOutcome, place: &str) -> (Verdict, String, String) {
    let question = format!("source of {place} by name");
    if answer.is_error {
        return failed(answer, question);
    }
    let definition = places.definition;
    // Line numbers are right-aligned to the widest shown.
    let shown = format!("{}  {}", definition.line, definition.text);
    let right = answer.text.lines().any(|line| line.trim_start() == shown)
        || located(&answer.text)
            .iter()
            .any(|(file, line)| places.is_definition(file, *line))
        || spans(&answer.text)
            .iter()
            .any(|(file, first, last)| places.opens_with_definition(file, *first, *last));
    (answered(right, answer), question, answer.text.clone())
}

/// The spans a `source` answer shows, as `file:first-last`.
fn spans(text: &str) -> Vec<(String, usize, usize)> {
    let span = Regex::new(r"^(?P<file>[^\s:]+):(?P<first>\d+)-(?P<last>\d+)\b").unwrap();
    text.lines()
        .filter_map(|line| {
            let found = span.captures(line)?;
            let first = found["first"].parse().ok()?;
            let last = found["last"].parse().ok()?;
            Some((found["file"].to_owned(), first, last))
        })
        .collect()
}

/// The pages of a `search` answer: the definition among its symbols.
fn search(places: &Places, pages: &[ToolOutcome], place: &str) -> (Verdict, String, String) {
    let question = format!("search of {place}");
    let Some(first) = pages.first() else {
        return (Verdict::WrongWithoutWarning, question, "not asked".into());
    };
    if let Some(failed_page) = pages.iter().find(|page| page.is_error) {
        return failed(failed_page, question);
    }
    let name = places.definition.name;
    let right = pages.iter().any(|page| {
        symbols_named(&page.text, name)
            .iter()
            .any(|(file, line)| places.is_definition(file, *line))
    });
    let text: Vec<&str> = pages.iter().map(|page| page.text.as_str()).collect();
    // Every page is read: only a last page cut by the pages followed
    // says more are left out.
    let last = pages.last().unwrap_or(first);
    (answered(right, last), question, text.join("\n---\n"))
}

/// The files a references answer's cross-checks by text name as holding
/// the word where the server listed nothing: `note: by text, `w` also
/// appears in 2 files …: a.py:3,9 b.py:4`, or `… also appears inside
/// `macro_rules!` bodies …: src/title.rs:60`; every file when one says
/// there are more than it names.
fn named_by_text(text: &str) -> BTreeSet<&str> {
    let mut named = BTreeSet::new();
    let notes = text.lines().filter(|line| {
        line.starts_with("note: by text, ")
            && (line.contains(" also appears in ") || line.contains(" also appears inside "))
    });
    for note in notes {
        let listed = note.rsplit(": ").next().unwrap_or_default();
        let (listed, more) = listed.split_once(" and ").unwrap_or((listed, ""));
        if !more.is_empty() {
            named.insert("*");
        }
        named.extend(
            listed
                .split_whitespace()
                .filter_map(|place| place.split_once(':').map(|(file, _)| file)),
        );
    }
    named
}

/// The places a references answer lists, by file and line.
pub fn referenced(text: &str) -> BTreeSet<(String, usize)> {
    let header = Regex::new(r"^(\S.*) \((\d+)\)$").unwrap();
    let mut file: Option<String> = None;
    let mut listed = BTreeSet::new();
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("  ") {
            let Some(file) = &file else {
                continue;
            };
            let tokens: Vec<&str> = rest.split_whitespace().collect();
            // Bare positions list many on a line; with source lines, the
            // first token is the only position.
            let bare = tokens
                .iter()
                .all(|token| is_position(token) || *token == "…");
            let positions = match bare {
                true => &tokens[..],
                false => &tokens[..tokens.len().min(1)],
            };
            for position in positions {
                if let Some(line) = position
                    .split_once(':')
                    .and_then(|(line, _)| line.parse().ok())
                {
                    listed.insert((file.clone(), line));
                }
            }
        } else if let Some(found) = header.captures(line) {
            file = Some(found[1].to_owned());
        }
    }
    listed
}

fn is_position(token: &str) -> bool {
    token.split_once(':').is_some_and(|(line, column)| {
        line.parse::<usize>().is_ok() && column.parse::<usize>().is_ok()
    })
}

/// The places an answer names as `file:line:column` at the start of a
/// line (definitions, candidates) or as `file:first-last` (source spans).
fn located(text: &str) -> Vec<(String, usize)> {
    // A name written twice on the line asked about lists each
    // occurrence's definition, to be chosen by column: the one asked
    // about among them is found.
    let place =
        Regex::new(r"^(?:column \d+: defined at )?(?P<file>[^\s:]+):(?P<line>\d+)[:-]").unwrap();
    text.lines()
        .filter_map(|line| {
            let found = place.captures(line)?;
            Some((found["file"].to_owned(), found["line"].parse().ok()?))
        })
        .collect()
}

/// The places of the symbols named `name` in a search answer's symbols
/// section: `  file` then `    kind name line:column`.
pub fn symbols_named(text: &str, name: &str) -> Vec<(String, usize)> {
    let mut file: Option<&str> = None;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with("text (") {
            break;
        }
        if let Some(symbol) = line.strip_prefix("    ") {
            let tokens: Vec<&str> = symbol.split_whitespace().collect();
            let named = tokens.iter().any(|token| {
                // PHP's properties are listed with their sigil.
                let token = token.strip_prefix('$').unwrap_or(token);
                token == name || token.rsplit(['.', ':', '#']).next() == Some(name)
            });
            let position = tokens.iter().find(|token| is_position(token));
            if let (true, Some(file), Some(position)) = (named, file, position)
                && let Some(line) = position
                    .split_once(':')
                    .and_then(|(line, _)| line.parse().ok())
            {
                found.push((file.to_owned(), line));
            }
        } else if let Some(shown) = line.strip_prefix("  ") {
            file = Some(shown.trim());
        }
    }
    found
}

/// The offset a paged answer says shows the rest of its symbols.
pub fn next_offset(text: &str) -> Option<usize> {
    text.lines()
        .find(|line| line.contains("more symbols (call again with offset="))
        .and_then(|line| line.rsplit("offset=").next())
        .and_then(|rest| rest.trim_end_matches(')').parse().ok())
}

fn whole_word(name: &str) -> Regex {
    Regex::new(&format!(r"(?:^|[^\w$]){}(?:$|[^\w$])", regex::escape(name))).unwrap()
}

/// Whether the answer warns that it may be partial or wrong.
fn warned(answer: &ToolOutcome) -> bool {
    answer
        .text
        .lines()
        .any(|line| line.starts_with("warning:") || line.contains("may be incomplete"))
}

/// Right; or partial, saying more are left out (candidates past those
/// listed); or wrong and said or not.
fn answered(right: bool, answer: &ToolOutcome) -> Verdict {
    let more_left = answer
        .text
        .lines()
        .any(|line| line.starts_with("… ") && line.contains(" more"));
    match (right, more_left, warned(answer)) {
        (true, _, _) => Verdict::Right,
        (false, true, _) => Verdict::PartialAndSaid,
        (false, false, true) => Verdict::WrongAndSaid,
        (false, false, false) => Verdict::WrongWithoutWarning,
    }
}

/// A tool error: said, unless it is no answer at all.
fn failed(answer: &ToolOutcome, question: String) -> (Verdict, String, String) {
    let verdict = match answer.text.starts_with("no answer") {
        true => Verdict::WrongWithoutWarning,
        false => Verdict::WrongAndSaid,
    };
    (verdict, question, answer.text.clone())
}
