//! Every root asked for, and by whom, and the roots that follow from them:
//! valid (existing directories other than `/`), canonical (a link to a
//! directory counts as where it points), and none inside another (a root
//! nested in another is folded into it). Pure, so the rules are tested
//! without an actor.
//!
//! Roots from the command line are pinned: nothing else removes them. A
//! client's roots are its whole list: while it names a valid one, they
//! replace the current directory (used when no `-r` was given), and what
//! hooks added is left out, since a client that follows its host's
//! directories also drops those the user removed. Without client roots,
//! a hook's root (a directory the user added in the host) adds to the
//! current directory.

use crate::messages::roots::{Change, Source};
use crate::vocabulary::root_set::canonical_root;
use std::path::PathBuf;

/// A root in effect, with every source that asked for it or for a
/// directory inside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Effective {
    pub path: PathBuf,
    pub sources: Vec<Source>,
}

/// The roots each source asked for, as given.
#[derive(Debug, Clone, Default)]
pub struct Requested {
    asked: Vec<(PathBuf, Source)>,
}

impl Requested {
    /// The roots a session starts with: pinned when they came from `-r`.
    pub fn new(directories: Vec<PathBuf>, pinned: bool) -> Self {
        let source = if pinned {
            Source::Flag
        } else {
            Source::Default
        };
        Self {
            asked: directories.into_iter().map(|path| (path, source)).collect(),
        }
    }

    /// Applies a change from `source`. Pinned roots are never changed.
    pub fn apply(&mut self, source: Source, change: Change) {
        if source == Source::Flag {
            return;
        }
        match change {
            Change::Set(paths) => {
                self.asked.retain(|(_, from)| *from != source);
                self.add(source, paths);
            }
            Change::Add(paths) => self.add(source, paths),
            Change::Remove(paths) => self
                .asked
                .retain(|(path, from)| *from != source || !paths.contains(path)),
        }
    }

    fn add(&mut self, source: Source, paths: Vec<PathBuf>) {
        for path in paths {
            if !self.asked.contains(&(path.clone(), source)) {
                self.asked.push((path, source));
            }
        }
    }

    /// The roots in effect, in the order first asked for, and why any
    /// asked-for root is not one: the pinned ones, and the client's when
    /// it names a valid one, else the current directory and the hooks'.
    pub fn effective(&self) -> (Vec<Effective>, Vec<String>) {
        let (client, client_refused) = self.valid(|source| source == Source::Client);
        let named_by_client = !client.is_empty();
        let (mut roots, mut refused) = self.valid(|source| match source {
            Source::Flag => true,
            Source::Client => named_by_client,
            Source::Default | Source::Hook => !named_by_client,
        });
        if !named_by_client {
            refused.extend(client_refused);
        }
        // Pinned and client roots first, as before: the order roots were
        // first asked for within each.
        roots.sort_by_key(|root| {
            !root
                .sources
                .iter()
                .any(|source| matches!(source, Source::Flag | Source::Client))
        });
        (roots, refused)
    }

    /// The valid roots asked for by the sources `wanted` takes, folded,
    /// and why the others are not roots.
    fn valid(&self, wanted: impl Fn(Source) -> bool) -> (Vec<Effective>, Vec<String>) {
        let mut roots: Vec<Effective> = Vec::new();
        let mut refused = Vec::new();
        for (asked, source) in self.asked.iter().filter(|(_, source)| wanted(*source)) {
            match canonical_root(asked) {
                Ok(path) => fold(&mut roots, path, *source),
                Err(error) => refused.push(error.to_string()),
            }
        }
        (roots, refused)
    }
}

/// Adds `path` to `roots`: into the root that contains it, or in place of
/// the roots it contains.
fn fold(roots: &mut Vec<Effective>, path: PathBuf, source: Source) {
    if let Some(outer) = roots.iter_mut().find(|root| path.starts_with(&root.path)) {
        if !outer.sources.contains(&source) {
            outer.sources.push(source);
        }
        return;
    }
    let mut sources = vec![source];
    let mut at = None;
    let mut index = 0;
    while index < roots.len() {
        if roots[index].path.starts_with(&path) {
            let inner = roots.remove(index);
            at.get_or_insert(index);
            for source in inner.sources {
                if !sources.contains(&source) {
                    sources.push(source);
                }
            }
        } else {
            index += 1;
        }
    }
    let root = Effective { path, sources };
    match at {
        Some(index) => roots.insert(index, root),
        None => roots.push(root),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        for name in ["a/sub", "b", "c"] {
            fs::create_dir_all(base.join(name)).unwrap();
        }
        fs::write(base.join("file.txt"), "x").unwrap();
        (dir, base)
    }

    fn paths(effective: &[Effective]) -> Vec<PathBuf> {
        effective.iter().map(|root| root.path.clone()).collect()
    }

    #[test]
    fn client_roots_join_pinned_ones_and_replace_the_default() {
        let (_dir, base) = tree();
        let mut pinned = Requested::new(vec![base.join("a")], true);
        pinned.apply(Source::Client, Change::Set(vec![base.join("b")]));
        assert_eq!(
            paths(&pinned.effective().0),
            vec![base.join("a"), base.join("b")]
        );
        pinned.apply(Source::Client, Change::Set(vec![]));
        assert_eq!(
            paths(&pinned.effective().0),
            vec![base.join("a")],
            "pinned stays"
        );
        pinned.apply(Source::Flag, Change::Set(vec![]));
        assert_eq!(paths(&pinned.effective().0), vec![base.join("a")]);

        let mut default = Requested::new(vec![base.join("a")], false);
        default.apply(Source::Client, Change::Set(vec![base.join("b")]));
        assert_eq!(paths(&default.effective().0), vec![base.join("b")]);
        default.apply(Source::Client, Change::Remove(vec![base.join("b")]));
        assert_eq!(
            paths(&default.effective().0),
            vec![base.join("a")],
            "the current directory is back once nobody names roots"
        );
        default.apply(Source::Client, Change::Set(vec![base.join("missing")]));
        assert_eq!(
            paths(&default.effective().0),
            vec![base.join("a")],
            "nor while the roots named are all invalid"
        );
    }

    #[test]
    fn a_hooks_root_adds_to_the_current_directory_until_the_client_names_roots() {
        let (_dir, base) = tree();
        let mut requested = Requested::new(vec![base.join("a")], false);
        requested.apply(Source::Hook, Change::Add(vec![base.join("b")]));
        assert_eq!(
            paths(&requested.effective().0),
            vec![base.join("a"), base.join("b")],
            "an added directory adds to the project"
        );
        requested.apply(
            Source::Client,
            Change::Set(vec![base.join("a"), base.join("b")]),
        );
        requested.apply(Source::Client, Change::Set(vec![base.join("a")]));
        assert_eq!(
            paths(&requested.effective().0),
            vec![base.join("a")],
            "a directory the host's own list dropped is gone, whoever added it"
        );
    }

    #[test]
    fn invalid_roots_are_refused_with_their_reason() {
        let (_dir, base) = tree();
        let mut requested = Requested::new(vec![base.join("a")], true);
        requested.apply(
            Source::Client,
            Change::Add(vec![
                base.join("missing"),
                base.join("file.txt"),
                PathBuf::from("/"),
            ]),
        );
        let (roots, refused) = requested.effective();
        assert_eq!(paths(&roots), vec![base.join("a")]);
        assert_eq!(refused.len(), 3, "{refused:?}");
        assert!(refused[0].contains("missing") && refused[0].contains("No such file"));
        assert!(refused[1].ends_with("is not a directory"));
        assert_eq!(refused[2], "root / is the whole filesystem");
    }

    #[test]
    fn nested_roots_fold_into_the_outer_one() {
        let (_dir, base) = tree();
        let mut requested = Requested::new(vec![base.join("a/sub"), base.join("c")], true);
        requested.apply(Source::Client, Change::Add(vec![base.join("a")]));
        let (roots, _) = requested.effective();
        assert_eq!(paths(&roots), vec![base.join("a"), base.join("c")]);
        assert_eq!(roots[0].sources, vec![Source::Client, Source::Flag]);
        requested.apply(Source::Client, Change::Add(vec![base.join("a/sub")]));
        assert_eq!(requested.effective().0.len(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_directory_is_the_directory() {
        let (_dir, base) = tree();
        std::os::unix::fs::symlink(base.join("b"), base.join("link")).unwrap();
        let mut requested = Requested::new(vec![base.join("a")], true);
        requested.apply(
            Source::Client,
            Change::Add(vec![base.join("link"), base.join("b")]),
        );
        assert_eq!(
            paths(&requested.effective().0),
            vec![base.join("a"), base.join("b")]
        );
    }
}
