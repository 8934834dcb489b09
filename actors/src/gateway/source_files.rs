//! The source files under the roots as the searches by text walk them:
//! gitignore-aware, hidden ones left out, in path order, each with its
//! language.

use crate::language;
use crate::vocabulary::root_set::RootSet;
use std::path::Path;

/// Calls `visit` with every file under the roots whose language is known,
/// until it returns `false`. Returns whether the walk went to the end.
pub fn each(roots: &RootSet, mut visit: impl FnMut(&Path, &'static str) -> bool) -> bool {
    for root in roots.roots() {
        let walker = ignore::WalkBuilder::new(&root.path)
            .require_git(false)
            .sort_by_file_path(|a, b| a.cmp(b))
            .build();
        for entry in walker.filter_map(std::result::Result::ok) {
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                continue;
            }
            let Some(language) = language::language_id(entry.path()) else {
                continue;
            };
            if !visit(entry.path(), language) {
                return false;
            }
        }
    }
    true
}
