//! The source files under each root as the last walk of it found them,
//! kept while the Watcher vouches that no file has come since. On a tree
//! of 50,000 files the walk, one `readdir` per directory and the ignore
//! rules of each, was most of a warm `search` (159 ms); a kept listing
//! is read in microseconds.
//!
//! A listing says only which files there are; what each holds is read or
//! stamped at every search as before (`sketches.rs`), so a file changed
//! in place needs nothing from here. A file deleted is left in the
//! listing: the search that finds it gone skips it. What a listing cannot
//! know is a file that came: a directory that came, or an ignore file
//! changed (which changes what the walk takes), forgets the root's
//! listing, and the next search walks again. So does a file created or
//! moved in that the listing lacks, if it is still there when the listing
//! is next read: an editor that saves by writing a temporary file and
//! renaming it over the old one leaves nothing new behind, and the walk's
//! own rules, not the Watcher's, decide whether a file that stays is
//! listed. So does anything the Watcher could not see: a root it does not
//! watch whole (inotify's limits), or events the kernel dropped.
//!
//! Each listed file also says whether it is as a search last checked it:
//! its stamp was taken and matched its sketch, and no change of it came
//! since. Such a file's sketch answers without a `stat`: what is left of
//! a warm search on 50,000 files is then a look-up per file.
//!
//! The Watcher tells this of every change as it reads it, and each tool
//! call that reads a listing first has the Watcher read what is queued,
//! so no listing is used past a change made before the call.

use crate::vocabulary::file_changes::ChangeKind;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

/// Files that came and that no listing holds, kept to be looked at when a
/// listing is next read; past this many, their roots walk again at once.
const MAX_ARRIVALS: usize = 64;

/// One file of a listing.
#[derive(Debug)]
pub struct Listed {
    pub path: PathBuf,
    pub language: Option<&'static str>,
    /// The count of changes seen when the Watcher last saw this file
    /// change.
    changed_at: AtomicU64,
    /// One past the count of changes seen before the last search that
    /// found the file as its sketch has it; 0 for never.
    checked_at: AtomicU64,
    /// The Watcher saw the file deleted since the walk listed it.
    gone: AtomicBool,
}

impl Listed {
    pub fn new(path: PathBuf, language: Option<&'static str>) -> Self {
        Self {
            path,
            language,
            changed_at: AtomicU64::new(0),
            checked_at: AtomicU64::new(0),
            gone: AtomicBool::new(false),
        }
    }

    /// Whether the file is as the last search that checked it found it.
    pub fn unchanged(&self) -> bool {
        self.checked_at.load(Ordering::Acquire) > self.changed_at.load(Ordering::Acquire)
    }

    /// A search that began at `check` found the file as its sketch has it.
    pub fn checked(&self, check: Check) {
        self.checked_at.store(check.changes + 1, Ordering::Release);
    }
}

/// The count of changes seen as a search takes a file's stamp: a change
/// seen after it leaves the file unchecked.
#[derive(Debug, Clone, Copy)]
pub struct Check {
    changes: u64,
}

/// The listings of every root, shared by every session and the Watcher.
#[derive(Default)]
pub struct Listings {
    state: Mutex<State>,
    /// Every change the Watcher has told of, counted.
    changes: AtomicU64,
}

#[derive(Default)]
struct State {
    /// Roots under which the Watcher watches every directory.
    watched: Vec<PathBuf>,
    /// Each root's files in path order, as walked while watched.
    by_root: HashMap<PathBuf, Listing>,
    /// Moves on whenever a listing could have been left behind: a walk
    /// that began before is not kept.
    generation: u64,
    /// Files created or moved in that the listings lacked, not yet looked
    /// at: one still there when its root's listing is read forgets it.
    arrivals: Vec<PathBuf>,
}

/// A root's files, and when the walk that found them ended.
struct Listing {
    files: Arc<[Listed]>,
    kept_at: SystemTime,
}

/// What a walk about to begin needs to have its listing kept.
#[derive(Debug, Clone, Copy)]
pub struct Walk {
    generation: u64,
}

impl Listings {
    /// The files of `root` as kept, if a walk since the last file came
    /// listed them.
    pub fn get(&self, root: &Path) -> Option<Arc<[Listed]>> {
        let arrivals = {
            let mut state = self.state.lock().ok()?;
            state.by_root.get(root)?;
            state.take_arrivals(root)
        };
        // Looked at without the lock, so that the Watcher telling of the
        // next change waits on no `stat`. Those gone (a save's temporary
        // file) are let go.
        let stayed = arrivals.iter().any(|path| path.symlink_metadata().is_ok());
        let mut state = self.state.lock().ok()?;
        if stayed {
            state.forget(|listed| listed == root);
            return None;
        }
        state.by_root.get(root).map(|listing| listing.files.clone())
    }

    /// Marks the moment before a search takes a file's stamp.
    pub fn checking(&self) -> Check {
        Check {
            changes: self.changes.load(Ordering::Acquire),
        }
    }

    /// Marks the start of a walk of a root.
    pub fn begin(&self) -> Walk {
        Walk {
            generation: self.state.lock().map_or(u64::MAX, |state| state.generation),
        }
    }

    /// Keeps what the walk of `root` begun at `walk` found, unless a file
    /// may have come since it began or the root is not watched.
    pub fn keep(&self, root: &Path, walk: Walk, mut files: Vec<Listed>) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if state.generation != walk.generation || !state.is_watched(root) {
            return;
        }
        files.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        // A file that came and that the walk found is no longer lacking.
        state.arrivals.retain(|path| {
            !path.starts_with(root)
                || files
                    .binary_search_by(|listed| listed.path.as_path().cmp(path))
                    .is_err()
        });
        let listing = Listing {
            files: files.into(),
            kept_at: SystemTime::now(),
        };
        state.by_root.insert(root.to_path_buf(), listing);
    }

    /// The Watcher watches every directory under `root`.
    pub fn watching(&self, root: &Path) {
        if let Ok(mut state) = self.state.lock()
            && !state.watched.iter().any(|watched| watched == root)
        {
            state.watched.push(root.to_path_buf());
        }
    }

    /// The Watcher no longer watches `root` whole: its listings (and
    /// those of the roots under it) are forgotten.
    pub fn not_watching(&self, root: &Path) {
        if let Ok(mut state) = self.state.lock() {
            state.watched.retain(|watched| watched != root);
            state.forget(|listed| listed.starts_with(root));
        }
    }

    /// The Watcher may have missed changes anywhere (the kernel dropped
    /// events, or a directory could not be watched): every listing is
    /// forgotten.
    pub fn missed_changes(&self) {
        if let Ok(mut state) = self.state.lock() {
            state.forget(|_| true);
        }
    }

    /// The Watcher saw `path` change: a listing that may now lack a file
    /// is forgotten. Returns the change as a server should hear it: a file
    /// moved in over one every listing held since before the move (`sed
    /// -i`, an editor's safe write) is the same file with new content.
    pub fn changed(&self, path: &Path, kind: ChangeKind, is_dir: bool) -> ChangeKind {
        let Some(held_since) = self.note_change(path, kind, is_dir) else {
            return kind;
        };
        if kind == ChangeKind::MovedIn && !is_dir && came_after(path, held_since) {
            ChangeKind::Changed
        } else {
            kind
        }
    }

    /// Marks the change in the listings; returns when the last of the
    /// listings that held the file there before it were kept.
    fn note_change(&self, path: &Path, kind: ChangeKind, is_dir: bool) -> Option<SystemTime> {
        let Ok(mut state) = self.state.lock() else {
            return None;
        };
        let changes = self.changes.fetch_add(1, Ordering::AcqRel) + 1;
        let came = matches!(kind, ChangeKind::Created | ChangeKind::MovedIn);
        // Whether every listing that may hold the file does, and since
        // when it was there in all of them.
        let mut listed_before = None;
        let mut held_since = Some(SystemTime::UNIX_EPOCH);
        for (_, listing) in state
            .by_root
            .iter()
            .filter(|(root, _)| path.starts_with(root))
        {
            let files = &listing.files;
            let listed = files
                .binary_search_by(|listed| listed.path.as_path().cmp(path))
                .ok()
                .and_then(|at| files.get(at));
            match listed {
                Some(listed) => {
                    listed.changed_at.store(changes, Ordering::Release);
                    let was_gone = listed
                        .gone
                        .swap(kind == ChangeKind::Deleted, Ordering::AcqRel);
                    held_since = held_since
                        .filter(|_| !was_gone)
                        .map(|since| since.max(listing.kept_at));
                }
                None => held_since = None,
            }
            listed_before = Some(listed_before.unwrap_or(true) && listed.is_some());
        }
        let listed_before = listed_before.unwrap_or(false);
        if kind == ChangeKind::Deleted {
            // A walk under way may have listed the file before it went,
            // and would hold it as there.
            state.generation += 1;
        }
        if is_ignore_file(path) || (came && is_dir) {
            state.forget(|root| path.starts_with(root));
        } else if came && !listed_before {
            // Looked at when a listing is read, so also after a walk under
            // way that passed the file's directory before it came.
            state.arrivals.push(path.to_path_buf());
            if state.arrivals.len() > MAX_ARRIVALS {
                let arrivals = std::mem::take(&mut state.arrivals);
                state.forget(|root| arrivals.iter().any(|path| path.starts_with(root)));
            }
        }
        held_since.filter(|_| listed_before)
    }
}

/// Whether the file at `path` took its place after `since`: a file renamed
/// during the walk that listed the path may be one the walk found, and so
/// new to the servers. A file's times come from a clock that lags the
/// real one by a tick at most, so this errs towards "not after".
fn came_after(path: &Path, since: SystemTime) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(metadata) = path.symlink_metadata() else {
        return false;
    };
    let (Ok(seconds), Ok(nanos)) = (
        u64::try_from(metadata.ctime()),
        u32::try_from(metadata.ctime_nsec()),
    ) else {
        return false;
    };
    let ctime = SystemTime::UNIX_EPOCH + std::time::Duration::new(seconds, nanos);
    ctime > since
}

impl State {
    /// The files that came under `root`, taken out to be looked at.
    fn take_arrivals(&mut self, root: &Path) -> Vec<PathBuf> {
        let (under, elsewhere) = std::mem::take(&mut self.arrivals)
            .into_iter()
            .partition(|path| path.starts_with(root));
        self.arrivals = elsewhere;
        under
    }

    fn is_watched(&self, root: &Path) -> bool {
        self.watched.iter().any(|watched| root.starts_with(watched))
    }

    /// Forgets the listings of the roots `which` picks, and any walk under
    /// way.
    fn forget(&mut self, which: impl Fn(&Path) -> bool) {
        self.generation += 1;
        self.by_root.retain(|root, _| !which(root));
    }
}

/// A file whose change changes what a walk takes.
fn is_ignore_file(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|name| name == ".gitignore" || name == ".ignore")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(path: &str) -> Listed {
        Listed::new(PathBuf::from(path), None)
    }

    fn kept(files: &[&str]) -> Listings {
        let listings = Listings::default();
        listings.watching(Path::new("/r"));
        let walk = listings.begin();
        listings.keep(
            Path::new("/r"),
            walk,
            files.iter().map(|f| listed(f)).collect(),
        );
        listings
    }

    fn is_kept(listings: &Listings) -> bool {
        listings.get(Path::new("/r")).is_some()
    }

    #[test]
    fn a_root_not_watched_is_never_kept() {
        let listings = Listings::default();
        let walk = listings.begin();
        listings.keep(Path::new("/r"), walk, vec![listed("/r/a.py")]);
        assert!(!is_kept(&listings));
    }

    #[test]
    fn files_changed_or_deleted_in_place_keep_the_listing() {
        let listings = kept(&["/r/b.py", "/r/a.py"]);
        listings.changed(Path::new("/r/a.py"), ChangeKind::Changed, false);
        listings.changed(Path::new("/r/b.py"), ChangeKind::Deleted, false);
        listings.changed(Path::new("/r/a.py"), ChangeKind::MovedIn, false);
        listings.changed(Path::new("/elsewhere/c.py"), ChangeKind::Created, false);
        let files = listings.get(Path::new("/r")).unwrap();
        let paths: Vec<&Path> = files.iter().map(|file| file.path.as_path()).collect();
        assert_eq!(paths, [Path::new("/r/a.py"), Path::new("/r/b.py")]);
    }

    #[test]
    fn a_file_checked_is_unchanged_until_a_change_of_it_is_seen() {
        let listings = kept(&["/r/a.py", "/r/b.py"]);
        let files = listings.get(Path::new("/r")).unwrap();
        let [a, b] = &files[..] else { panic!() };
        assert!(!a.unchanged(), "never checked");
        let check = listings.checking();
        a.checked(check);
        b.checked(check);
        assert!(a.unchanged() && b.unchanged());
        listings.changed(Path::new("/r/a.py"), ChangeKind::Changed, false);
        assert!(!a.unchanged() && b.unchanged());
        a.checked(listings.checking());
        assert!(a.unchanged());
    }

    #[test]
    fn a_check_begun_before_a_change_does_not_vouch_for_the_file() {
        let listings = kept(&["/r/a.py"]);
        let files = listings.get(Path::new("/r")).unwrap();
        let check = listings.checking();
        listings.changed(Path::new("/r/a.py"), ChangeKind::MovedIn, false);
        files[0].checked(check);
        assert!(!files[0].unchanged());
    }

    #[test]
    fn a_directory_or_ignore_file_that_came_forgets_the_listing() {
        for (path, kind, is_dir) in [
            ("/r/src", ChangeKind::Created, true),
            ("/r/sub/.gitignore", ChangeKind::Changed, false),
            ("/r/.ignore", ChangeKind::Deleted, false),
        ] {
            let listings = kept(&["/r/a.py"]);
            listings.changed(Path::new(path), kind, is_dir);
            assert!(!is_kept(&listings), "{path} {kind:?}");
        }
    }

    /// A file that came forgets the listing if it is still there when the
    /// listing is read; a save's temporary file, gone by then, does not.
    #[test]
    fn a_file_that_came_and_stayed_forgets_the_listing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let listings = Listings::default();
        listings.watching(root);
        let keep = |files: &[&str]| {
            let walk = listings.begin();
            let files = files
                .iter()
                .map(|name| listed(&root.join(name).to_string_lossy()));
            listings.keep(root, walk, files.collect());
        };
        keep(&["a.py"]);
        let temporary = root.join(".a.py.swp");
        std::fs::write(&temporary, "x").unwrap();
        listings.changed(&temporary, ChangeKind::Created, false);
        std::fs::rename(&temporary, root.join("a.py")).unwrap();
        listings.changed(&root.join("a.py"), ChangeKind::MovedIn, false);
        assert!(listings.get(root).is_some(), "the temporary file is gone");

        for kind in [ChangeKind::Created, ChangeKind::MovedIn] {
            keep(&["a.py"]);
            std::fs::write(root.join("new.py"), "x").unwrap();
            listings.changed(&root.join("new.py"), kind, false);
            assert!(listings.get(root).is_none(), "{kind:?}");
            std::fs::remove_file(root.join("new.py")).unwrap();
        }
    }

    /// A walk that began before a file came may have passed its directory
    /// already: the file is looked at once the walk's listing is kept.
    #[test]
    fn a_walk_that_a_new_file_overtook_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let listings = Listings::default();
        listings.watching(root);
        let walk = listings.begin();
        std::fs::write(root.join("new.py"), "x").unwrap();
        listings.changed(&root.join("new.py"), ChangeKind::Created, false);
        listings.keep(
            root,
            walk,
            vec![listed(&root.join("a.py").to_string_lossy())],
        );
        assert!(listings.get(root).is_none());
        let walk = listings.begin();
        std::fs::write(root.join("newer.py"), "x").unwrap();
        listings.changed(&root.join("newer.py"), ChangeKind::Created, false);
        let found =
            ["a.py", "new.py", "newer.py"].map(|name| listed(&root.join(name).to_string_lossy()));
        listings.keep(root, walk, found.into());
        assert!(listings.get(root).is_some(), "the walk found it");
    }

    /// A file renamed over one the listing held (a safe write) is the
    /// same file changed; one whose old self was deleted, or that took
    /// its place before the listing was kept (a walk may have found the
    /// new file), is told as it came.
    #[test]
    fn a_file_moved_in_over_a_listed_one_is_changed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let listings = Listings::default();
        listings.watching(root);
        let (a, b) = (root.join("a.py"), root.join("b.py"));
        let save = |path: &Path| {
            let temporary = root.join(".saving");
            std::fs::write(&temporary, "x").unwrap();
            std::fs::rename(&temporary, path).unwrap();
            listings.changed(&temporary, ChangeKind::Deleted, false);
            listings.changed(path, ChangeKind::MovedIn, false)
        };
        let before_the_walk = save(&a);
        assert_eq!(before_the_walk, ChangeKind::MovedIn, "nothing listed");
        std::fs::write(&b, "x").unwrap();
        let walk = listings.begin();
        // The walk finds a file renamed into place while it runs, whose
        // event is read after the listing is kept.
        std::fs::write(root.join(".saving"), "x").unwrap();
        std::fs::rename(root.join(".saving"), root.join("c.py")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let found = ["a.py", "b.py", "c.py"].map(|name| listed(&root.join(name).to_string_lossy()));
        listings.keep(root, walk, found.into());
        assert_eq!(
            listings.changed(&root.join("c.py"), ChangeKind::MovedIn, false),
            ChangeKind::MovedIn,
            "it may be the file the walk found"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(save(&a), ChangeKind::Changed);
        assert_eq!(save(&a), ChangeKind::Changed, "and again");
        std::fs::remove_file(&b).unwrap();
        listings.changed(&b, ChangeKind::Deleted, false);
        assert_eq!(
            save(&b),
            ChangeKind::MovedIn,
            "deleted first: new to a server"
        );
        assert_eq!(save(&b), ChangeKind::Changed, "there since");
    }

    /// A file deleted while a walk that listed it runs would be held as
    /// there: the walk is not kept.
    #[test]
    fn a_walk_that_a_deletion_overtook_is_not_kept() {
        let listings = Listings::default();
        listings.watching(Path::new("/r"));
        let walk = listings.begin();
        listings.changed(Path::new("/r/a.py"), ChangeKind::Deleted, false);
        listings.keep(Path::new("/r"), walk, vec![listed("/r/a.py")]);
        assert!(!is_kept(&listings));
    }

    #[test]
    fn missed_changes_and_unwatched_roots_forget() {
        let listings = kept(&["/r/a.py"]);
        listings.missed_changes();
        assert!(!is_kept(&listings));
        let listings = kept(&["/r/a.py"]);
        listings.not_watching(Path::new("/r"));
        assert!(!is_kept(&listings));
        let walk = listings.begin();
        listings.keep(Path::new("/r"), walk, vec![listed("/r/a.py")]);
        assert!(!is_kept(&listings));
    }
}
