//! Uses of a name found by text, to cross-check a server's references.
//! A server's index can miss whole files and say nothing: clangd indexes
//! a file that another includes (LZ4's `lz4hc.c` includes `lz4.c` with
//! most of it compiled out) by whichever translation unit came first, so
//! on some runs the calls in `lz4.c` are not in its index at all. The
//! files of the server's languages that name the word but hold none of
//! the references it listed are worth an agent's look, said as text.

use super::{definitions, source_files, words};
use crate::sketches::{Needle, Sketches};
use crate::vocabulary::root_set::RootSet;
use grep_regex::RegexMatcherBuilder;
use grep_searcher::sinks::Lossy;
use std::collections::HashSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long the files are searched at most: a tree too big to search in
/// this time is cross-checked only as far as the search got.
pub const SEARCH_BUDGET: Duration = Duration::from_secs(1);

/// Files named with their lines, at most.
const FILES_SHOWN: usize = 5;
/// Lines named per file, at most.
const LINES_SHOWN: usize = 5;

/// Why a server's references may lack a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// It builds its index in the background (clangd, rust-analyzer).
    BackgroundIndex,
    /// It looks only in the documents it has open (the CSS server).
    OpenFilesOnly,
    /// It reads only the files its settings name, and those open
    /// (bash-language-server, not an extensionless script).
    NamedFilesOnly,
    /// It looks only in the scripts of the page asked about (the HTML
    /// server), so the page's own markup is searched too.
    PageScriptsOnly,
    /// It does not read the files of this language, which import its
    /// modules (typescript-language-server and Svelte components).
    Unread(&'static str),
    /// It reads only the paths its project configuration includes, and
    /// the files open (pyright's `include`).
    ConfiguredFilesOnly,
}

impl Reason {
    fn says(self) -> String {
        match self {
            Self::BackgroundIndex => "its index may be incomplete".into(),
            Self::OpenFilesOnly => "it looks only in the files it has open".into(),
            Self::NamedFilesOnly => {
                "it reads only the files its settings name (by extension) and those open".into()
            }
            Self::PageScriptsOnly => "it looks only in the scripts of the page asked about".into(),
            Self::Unread(language) => format!("it does not read {language} files"),
            Self::ConfiguredFilesOnly => {
                "it reads only the paths its configuration's `include` names, and the files open"
                    .into()
            }
        }
    }
}

/// The files the search found the word in, with the lines.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Unlisted {
    pub files: Vec<(PathBuf, Vec<u64>)>,
    /// Whether every file was searched within the budget.
    pub complete: bool,
}

/// The files of `languages` under the roots that contain `word` as a
/// whole word and are not in `listed` (paths as the roots display them).
/// Lines that `other_definitions` reads as definitions of the word are not
/// counted: given once the server has listed the target's own definition,
/// they define other things of that name (another type's method).
pub fn unlisted(
    sketches: &Sketches,
    roots: &RootSet,
    word: &str,
    languages: &[String],
    listed: &HashSet<String>,
    other_definitions: Option<&definitions::Matchers>,
    budget: Duration,
) -> Unlisted {
    // A name is whole when no character that names are made of touches
    // it: `$` too (PHP, SCSS), and `-` in CSS, SCSS and Less.
    let hyphenated = languages.iter().any(|language| words::hyphenated(language));
    let part = match hyphenated {
        true => r"\w$-",
        false => r"\w$",
    };
    let pattern = format!(
        r"(?:^|[^{part}]){}(?:[^{part}]|$)",
        definitions::regex_escape(word)
    );
    let Ok(matcher) = RegexMatcherBuilder::new().build(&pattern) else {
        return Unlisted::default();
    };
    let mut searcher = source_files::searcher();
    let needle = Needle::new(word);
    let deadline = Instant::now() + budget;
    let mut files = Vec::new();
    sketches.load(roots);
    let complete = source_files::each(roots, |path, language| {
        if Instant::now() > deadline {
            return false;
        }
        if !languages.iter().any(|served| served == language)
            || listed.contains(&roots.display(path))
        {
            return true;
        }
        let mut lines = Vec::new();
        let _unreadable = sketches.search(
            &mut searcher,
            &matcher,
            path,
            &needle,
            Lossy(|line, text| {
                if !other_definitions.is_some_and(|others| others.defines(language, text)) {
                    lines.push(line);
                }
                Ok(true)
            }),
        );
        if !lines.is_empty() {
            files.push((path.to_path_buf(), lines));
        }
        true
    });
    Unlisted { files, complete }
}

impl Unlisted {
    /// The note under a references answer, if the search found anything
    /// or could not look everywhere: on a machine busy enough that the
    /// search stops early, finding nothing is no sign that the server
    /// missed nothing (clangd's first references under load were 6 of
    /// 10, and nothing said so).
    pub fn note(&self, roots: &RootSet, word: &str, reason: Reason) -> Option<String> {
        if self.files.is_empty() {
            return (!self.complete).then(|| {
                format!(
                    "note: the search by text for other uses of `{word}` stopped before the end of the tree; {}",
                    reason.says()
                )
            });
        }
        let shown: Vec<String> = self
            .files
            .iter()
            .take(FILES_SHOWN)
            .map(|(path, lines)| {
                let mut numbers: Vec<String> =
                    lines.iter().take(LINES_SHOWN).map(u64::to_string).collect();
                if lines.len() > LINES_SHOWN {
                    numbers.push("…".into());
                }
                format!("{}:{}", roots.display(path), numbers.join(","))
            })
            .collect();
        let more = self.files.len().saturating_sub(FILES_SHOWN);
        let more = match more {
            0 => String::new(),
            more => format!(" and {more} more"),
        };
        let searched = match self.complete {
            true => "",
            false => " (the search stopped before the end of the tree)",
        };
        Some(format!(
            "note: by text, `{word}` also appears in {} the server listed no reference in{searched}; {}: {}{more}",
            crate::vocabulary::counted::counted(self.files.len(), "file"),
            reason.says(),
            shown.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn finds_whole_words_in_the_servers_languages_outside_the_listed_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::write(root.join("a.c"), "int init(void);\n").unwrap();
        fs::write(root.join("b.c"), "x = init();\ny = initial;\nz = init();\n").unwrap();
        fs::write(root.join("c.c"), "y = initial;\n").unwrap();
        fs::write(root.join("notes.md"), "call init first\n").unwrap();
        let roots = RootSet::new(std::slice::from_ref(&root)).unwrap();
        let sketches = Sketches::default();
        let listed: HashSet<String> = ["a.c".to_owned()].into_iter().collect();
        let languages = vec!["c".to_owned(), "cpp".to_owned()];
        let found = unlisted(
            &sketches,
            &roots,
            "init",
            &languages,
            &listed,
            None,
            SEARCH_BUDGET,
        );
        assert_eq!(
            found,
            Unlisted {
                files: vec![(root.join("b.c"), vec![1, 3])],
                complete: true,
            }
        );
        fs::write(root.join("d.c"), "static int init(void) {\n").unwrap();
        let others = definitions::Matchers::new("init", definitions::Counted::Definitions);
        let without_definitions = unlisted(
            &sketches,
            &roots,
            "init",
            &languages,
            &listed,
            others.as_ref(),
            SEARCH_BUDGET,
        );
        assert_eq!(without_definitions.files, found.files);
        fs::remove_file(root.join("d.c")).unwrap();
        let scss = vec!["scss".to_owned()];
        fs::write(root.join("a.scss"), "$pad: 1px;\n").unwrap();
        fs::write(root.join("b.scss"), "x: $pad-lg;\ny: #{$pad};\n").unwrap();
        let listed: HashSet<String> = ["a.scss".to_owned()].into_iter().collect();
        let hyphenated = unlisted(
            &sketches,
            &roots,
            "$pad",
            &scss,
            &listed,
            None,
            SEARCH_BUDGET,
        );
        assert_eq!(hyphenated.files, vec![(root.join("b.scss"), vec![2])]);
        assert_eq!(
            found.note(&roots, "init", Reason::BackgroundIndex).unwrap(),
            "note: by text, `init` also appears in 1 file the server listed no reference in; its index may be incomplete: b.c:1,3"
        );
        let cut_short = unlisted(
            &sketches,
            &roots,
            "init",
            &languages,
            &listed,
            None,
            Duration::ZERO,
        );
        assert_eq!(cut_short.files, Vec::new());
        assert_eq!(
            cut_short
                .note(&roots, "init", Reason::BackgroundIndex)
                .unwrap(),
            "note: the search by text for other uses of `init` stopped before the end of the tree; its index may be incomplete"
        );
        let searched = Unlisted {
            files: Vec::new(),
            complete: true,
        };
        assert_eq!(searched.note(&roots, "init", Reason::BackgroundIndex), None);
    }
}
