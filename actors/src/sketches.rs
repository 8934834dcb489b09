//! What the text searches remember of the files they have read: each
//! file's stamp (modification time and length), a Bloom filter of its
//! trigrams, and, once a file has been read a second time, its words,
//! so that a later search reads only the files that may hold what it
//! looks for, and counts a name in a file without reading it. `search`'s
//! heatmap, the definitions found by text and the uses a references answer
//! is checked against all read the whole tree; on a million lines that
//! was 0.15 to 0.4 s of every search.
//!
//! One `Sketches` is shared by every session of the process. A file whose
//! stamp differs from the one its sketch was made at is read again, so a
//! search never answers from a file as it was: a sketch is only ever used
//! for the file as it is on disk at the search.
//!
//! The filters outlive the process (`store/sketches.rs`): a thread saves
//! those made since its last look every few seconds (and the Supervisor
//! saves the rest as the process stops), and the first search
//! of a root in a new process loads those kept of its files. On the
//! million-line tree, the first search after a restart otherwise read and
//! sketched all 94 MB of it (0.8 to 1.8 s).

use crate::listings::{Check, Listed, Listings};
use crate::store::sketches::{self as saved, Changes, FileStamp, SavedSketch};
use crate::vocabulary::root_set::RootSet;
use grep_matcher::{Match, Matcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{Searcher, Sink, SinkError, SinkMatch};
use rusqlite::Connection;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, SystemTime};

/// Files longer than this are searched from disk and never sketched: a
/// generated file or a data dump is read in pieces, not held whole.
const MAX_SKETCHED_FILE: u64 = 8 << 20;

/// Past this many bytes of filters, every sketch is forgotten and the
/// searches begin again: a bound, not an expected size (a million-line
/// tree takes about 10 MiB).
const MAX_BYTES: usize = 64 << 20;

/// Filter bits per byte of text, before rounding up to a power of two:
/// source code has about one distinct trigram in eight bytes, so a filter
/// has 4 to 8 bits for each, and a trigram it lacks passes about once in
/// four to ten; a text of several trigrams far more rarely.
const BITS_PER_BYTE_DIVISOR: u64 = 2;
const MIN_BITS: u64 = 256;
const MAX_BITS: u64 = 1 << 24;

/// How long after its last modification a file's stamp is trusted.
const SETTLED: Duration = Duration::from_secs(2);

/// How often the filters made since the last save are saved.
const SAVE_EVERY: Duration = Duration::from_secs(5);

/// Past this many bytes of word lists, no more are made (the files
/// without one are read as before): about two fifths of the source text
/// they stand for, so a tree of 150 MB of code.
const MAX_WORDS_BYTES: usize = 64 << 20;

/// The remembered files, shared by every session.
#[derive(Default)]
pub struct Sketches {
    files: Mutex<Remembered>,
    /// Where the filters are kept; none for a process without a state
    /// directory.
    saved: Option<Saved>,
    /// Which files there are under each root, for the searches that read
    /// them all.
    listings: Arc<Listings>,
}

#[derive(Default)]
struct Remembered {
    by_path: HashMap<PathBuf, Sketch>,
    /// Of the trigram filters.
    bytes: usize,
    /// Of the word lists.
    words_bytes: usize,
    /// Files whose filters were made since the last save.
    unsaved: HashSet<PathBuf>,
    /// Whether every filter was forgotten since the last save.
    forgot_all: bool,
}

/// The filters' file, opened at its first use.
struct Saved {
    path: PathBuf,
    connection: Mutex<Connecting>,
    /// The roots whose kept filters have been loaded.
    loaded: Mutex<Vec<PathBuf>>,
}

enum Connecting {
    NotYet,
    Open(Connection),
    /// It could not be opened: the filters are not kept.
    Failed,
}

impl FileStamp {
    /// Whether a later write must give the file another stamp: a file
    /// system's clock moves in ticks (a few milliseconds on Linux, two
    /// seconds on FAT), and a write of the same length within the tick of
    /// the last one keeps its stamp. A file modified less than
    /// [`SETTLED`] ago is read at every search, never sketched.
    fn settled(&self) -> bool {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
            });
        let settled = i64::try_from(SETTLED.as_nanos()).unwrap_or(i64::MAX);
        now.saturating_sub(self.modified_ns) >= settled
    }
}

struct Sketch {
    stamp: FileStamp,
    /// The trigram filter; empty for a binary file, which no text search
    /// reads.
    bits: Box<[u64]>,
    /// Made when a file is read a second time: the files that searches
    /// come back to are those worth the memory.
    words: Option<Arc<Words>>,
}

/// Every distinct word of a file, with how often and between which lines
/// it occurs. A word is a run of ASCII letters, digits and `_`, and of
/// bytes outside ASCII. A text made only of such bytes, whatever its
/// case, never spans two words, so it occurs in the file exactly as
/// often as it occurs in the words, each counted as often as the word.
struct Words {
    /// The words, each followed by a `\n`, in the order they first occur.
    text: Box<[u8]>,
    /// Per word, in the same order.
    seen: Box<[Seen]>,
}

#[derive(Debug, Clone, Copy)]
struct Seen {
    count: u32,
    first_line: u32,
    last_line: u32,
}

/// What a search looks for, as the trigrams a file must hold for it and,
/// for a text made only of word bytes, the matcher that finds it in a
/// file's words, in any case.
pub struct Needle {
    trigrams: Vec<u32>,
    in_words: Option<RegexMatcher>,
}

/// Where a text occurs in one file: how often (as often as the matcher
/// finds it, line by line), and the lines of its first and last matches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    pub matches: u64,
    pub first_line: u64,
    pub last_line: u64,
}

/// What the sketch of a file at its present stamp says of a needle.
enum Known {
    /// Nothing: the file is read, and sketched as `Make` says.
    Unknown(Make),
    /// The file cannot hold it.
    Absent,
    /// The file's words, which answer for it.
    Words(Arc<Words>),
}

/// What a read of a file adds to its sketch.
#[derive(Debug, Clone, Copy)]
struct Make {
    /// A new filter: the file was never sketched, or changed since.
    filter: bool,
    /// Its words: the file had been sketched before, at this stamp or
    /// another.
    words: bool,
}

impl Make {
    const FIRST: Make = Make {
        filter: true,
        words: false,
    };
    const CHANGED: Make = Make {
        filter: true,
        words: true,
    };
    const WORDS: Make = Make {
        filter: false,
        words: true,
    };
}

impl Needle {
    /// The trigrams of `literal`, ASCII letters folded to lower case so
    /// that one filter serves searches with and without case. A trigram
    /// with a byte outside ASCII is left out: its other cases are other
    /// bytes. A literal shorter than three bytes has none, and every file
    /// may hold it.
    pub fn new(literal: &str) -> Self {
        let bytes = literal.as_bytes();
        let mut trigrams: Vec<u32> = bytes
            .windows(3)
            .filter(|window| window.is_ascii())
            .map(trigram)
            .collect();
        trigrams.sort_unstable();
        trigrams.dedup();
        let in_words = (!bytes.is_empty() && bytes.iter().all(|&byte| is_word_byte(byte)))
            .then(|| {
                RegexMatcherBuilder::new()
                    .fixed_strings(true)
                    .case_insensitive(true)
                    .build(literal)
                    .ok()
            })
            .flatten();
        Self { trigrams, in_words }
    }
}

impl Sketches {
    /// Searches the file at `path` with `matcher` into `sink`, as
    /// `Searcher::search_path` does, unless its sketch, made at the
    /// file's present stamp, shows that it cannot hold `needle`. A file
    /// read is sketched for the next search, unless it was modified too
    /// recently for its stamp to be trusted.
    pub fn search<M: Matcher, S: Sink>(
        &self,
        searcher: &mut Searcher,
        matcher: M,
        path: &Path,
        needle: &Needle,
        sink: S,
    ) -> Result<(), S::Error> {
        let metadata = std::fs::metadata(path).map_err(S::Error::error_io)?;
        self.search_at(
            FileStamp::of(&metadata),
            searcher,
            matcher,
            path,
            needle,
            sink,
        )
    }

    /// [`Sketches::search`] of the file as it is at `stamp`.
    fn search_at<M: Matcher, S: Sink>(
        &self,
        stamp: FileStamp,
        searcher: &mut Searcher,
        matcher: M,
        path: &Path,
        needle: &Needle,
        sink: S,
    ) -> Result<(), S::Error> {
        if stamp.len > MAX_SKETCHED_FILE {
            return searcher.search_path(matcher, path, sink);
        }
        let make = match self.known(path, Some(stamp), needle) {
            Known::Absent => return Ok(()),
            Known::Words(words) if !words.hold(needle) => return Ok(()),
            Known::Words(_) => None,
            Known::Unknown(make) => Some(make),
        };
        let text = std::fs::read(path).map_err(S::Error::error_io)?;
        let binary = text.contains(&0);
        if let Some(make) = make.filter(|_| stamp.settled()) {
            self.remember(path, stamp, &text, binary, make);
        }
        match binary {
            true => Ok(()),
            false => searcher.search_slice(matcher, &text, sink),
        }
    }

    /// [`Sketches::search`] of a listed file: one unchanged since a
    /// search last checked it is ruled out by its sketch without a `stat`.
    pub fn search_listed<M: Matcher, S: Sink>(
        &self,
        searcher: &mut Searcher,
        matcher: M,
        file: &Listed,
        needle: &Needle,
        sink: S,
    ) -> Result<(), S::Error> {
        if file.unchanged() && self.rules_out(&file.path, needle) {
            return Ok(());
        }
        let check = self.listings.checking();
        let metadata = std::fs::metadata(&file.path).map_err(S::Error::error_io)?;
        let stamp = FileStamp::of(&metadata);
        self.search_at(stamp, searcher, matcher, &file.path, needle, sink)?;
        self.note_checked(file, stamp, check);
        Ok(())
    }

    /// How often `matcher`, which finds `needle`'s text, matches in the
    /// listed file: counted in the file's words when it has them and the
    /// text is made of word bytes, else read. A file unchanged since a
    /// search last checked it is counted from its sketch without a `stat`.
    pub fn tally<M: Matcher>(
        &self,
        searcher: &mut Searcher,
        matcher: M,
        file: &Listed,
        needle: &Needle,
    ) -> std::io::Result<Tally> {
        if file.unchanged() {
            match self.known(&file.path, None, needle) {
                Known::Absent => return Ok(Tally::default()),
                Known::Words(words) if needle.in_words.is_some() => {
                    return Ok(words.tally(&matcher));
                }
                Known::Words(_) | Known::Unknown(_) => {}
            }
        }
        let check = self.listings.checking();
        let stamp = FileStamp::of(&std::fs::metadata(&file.path)?);
        let tally = self.tally_at(stamp, searcher, matcher, &file.path, needle)?;
        self.note_checked(file, stamp, check);
        Ok(tally)
    }

    /// Whether the sketch of the file at `path`, whatever its stamp, shows
    /// it cannot hold `needle`.
    fn rules_out(&self, path: &Path, needle: &Needle) -> bool {
        match self.known(path, None, needle) {
            Known::Absent => true,
            Known::Words(words) => !words.hold(needle),
            Known::Unknown(_) => false,
        }
    }

    /// Marks `file` checked at `check` if its sketch is of the file at
    /// `stamp`, as the search that took it left it.
    fn note_checked(&self, file: &Listed, stamp: FileStamp, check: Check) {
        let sketched = self.files.lock().is_ok_and(|files| {
            files
                .by_path
                .get(&file.path)
                .is_some_and(|sketch| sketch.stamp == stamp)
        });
        if sketched {
            file.checked(check);
        }
    }

    /// [`Sketches::tally`] of the file as it is at `stamp`.
    fn tally_at<M: Matcher>(
        &self,
        stamp: FileStamp,
        searcher: &mut Searcher,
        matcher: M,
        path: &Path,
        needle: &Needle,
    ) -> std::io::Result<Tally> {
        if stamp.len <= MAX_SKETCHED_FILE && needle.in_words.is_some() {
            match self.known(path, Some(stamp), needle) {
                Known::Absent => return Ok(Tally::default()),
                Known::Words(words) => return Ok(words.tally(&matcher)),
                Known::Unknown(_) => {}
            }
        }
        let mut counter = Counter {
            matcher: &matcher,
            tally: Tally::default(),
        };
        self.search_at(stamp, searcher, &matcher, path, needle, &mut counter)?;
        Ok(counter.tally)
    }

    /// What the file's sketch at `stamp` says of `needle`; with no
    /// stamp, what its sketch says, whatever it was made at.
    fn known(&self, path: &Path, stamp: Option<FileStamp>, needle: &Needle) -> Known {
        let Ok(files) = self.files.lock() else {
            return Known::Unknown(Make::FIRST);
        };
        let Some(sketch) = files.by_path.get(path) else {
            return Known::Unknown(Make::FIRST);
        };
        if stamp.is_some_and(|stamp| sketch.stamp != stamp) {
            return Known::Unknown(Make::CHANGED);
        }
        if sketch.bits.is_empty()
            || !needle
                .trigrams
                .iter()
                .all(|&trigram| holds(&sketch.bits, trigram))
        {
            return Known::Absent;
        }
        match &sketch.words {
            Some(words) => Known::Words(words.clone()),
            None => Known::Unknown(Make::WORDS),
        }
    }

    fn remember(&self, path: &Path, stamp: FileStamp, text: &[u8], binary: bool, make: Make) {
        let bits = make.filter.then(|| match binary {
            true => Box::default(),
            false => filter_of(text),
        });
        let words = (make.words && !binary).then(|| Words::of(text));
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        let Some(bits) = bits else {
            return files.add_words(path, stamp, words);
        };
        let size = bits.len() * 8;
        if files.bytes + size > MAX_BYTES {
            files.by_path.clear();
            files.bytes = 0;
            files.words_bytes = 0;
            files.unsaved.clear();
            files.forgot_all = true;
        }
        if let Some(old) = files.by_path.remove(path) {
            files.bytes = files.bytes.saturating_sub(old.bits.len() * 8);
            files.words_bytes = files.words_bytes.saturating_sub(old.words_size());
        }
        files.bytes += size;
        files.by_path.insert(
            path.to_path_buf(),
            Sketch {
                stamp,
                bits,
                words: None,
            },
        );
        if self.saved.is_some() {
            files.unsaved.insert(path.to_path_buf());
        }
        files.add_words(path, stamp, words);
    }

    /// Sketches whose filters are kept in the file at `path`, saved every
    /// [`SAVE_EVERY`] by a thread of their own while they are in use.
    pub fn saved_at(path: PathBuf) -> Arc<Self> {
        let sketches = Arc::new(Self {
            files: Mutex::default(),
            saved: Some(Saved {
                path,
                connection: Mutex::new(Connecting::NotYet),
                loaded: Mutex::default(),
            }),
            listings: Arc::default(),
        });
        let weak = Arc::downgrade(&sketches);
        let spawned = std::thread::Builder::new()
            .name("sketches".into())
            .spawn(move || save_while_in_use(&weak));
        if let Err(error) = spawned {
            tracing::warn!("the text searches' filters will not be kept: {error}");
        }
        sketches
    }

    /// The files under each root, which the Watcher keeps up to date.
    pub fn listings(&self) -> &Arc<Listings> {
        &self.listings
    }

    /// Loads the kept filters of the files under the roots, once per
    /// root: a search calls it before it walks them.
    pub fn load(&self, roots: &RootSet) {
        for root in roots.roots() {
            self.load_under(&root.path);
        }
    }

    /// Loads the kept filters of the files under `root`, once per root: a
    /// file sketched since keeps its own. Filters past the bound are left
    /// on disk. A search that comes while they load waits for them (the
    /// lock is held throughout): reading every file instead takes longer.
    fn load_under(&self, root: &Path) {
        let Some(saved) = &self.saved else {
            return;
        };
        let Ok(mut loaded) = saved.loaded.lock() else {
            return;
        };
        if loaded.iter().any(|done| root.starts_with(done)) {
            return;
        }
        loaded.push(root.to_path_buf());
        let started = std::time::Instant::now();
        let kept = match saved.with(|connection| saved::under(connection, root)) {
            Some(Ok(kept)) => kept,
            Some(Err(error)) => {
                tracing::debug!("the text searches' kept filters could not be read: {error}");
                return;
            }
            None => return,
        };
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        let count = kept.len();
        for sketch in kept {
            let size = sketch.bits.len() * 8;
            if files.bytes + size > MAX_BYTES {
                break;
            }
            if files.by_path.contains_key(&sketch.path) {
                continue;
            }
            files.bytes += size;
            files.by_path.insert(
                sketch.path,
                Sketch {
                    stamp: sketch.stamp,
                    bits: sketch.bits,
                    words: None,
                },
            );
        }
        tracing::debug!(
            root = %root.display(),
            "{count} kept filters loaded in {} ms",
            started.elapsed().as_millis()
        );
    }

    /// Writes the filters made since the last save.
    pub fn save(&self) {
        let Some(saved) = &self.saved else {
            return;
        };
        let changes = {
            let Ok(mut files) = self.files.lock() else {
                return;
            };
            if files.unsaved.is_empty() && !files.forgot_all {
                return;
            }
            let unsaved = std::mem::take(&mut files.unsaved);
            let made = unsaved
                .into_iter()
                .filter_map(|path| {
                    let sketch = files.by_path.get(&path)?;
                    Some(SavedSketch {
                        stamp: sketch.stamp,
                        bits: sketch.bits.clone(),
                        path,
                    })
                })
                .collect();
            Changes {
                made,
                forgot_all: std::mem::take(&mut files.forgot_all),
            }
        };
        let at = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |since| {
                i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
            });
        let written = saved.with(|connection| saved::save(connection, &changes, at, MAX_BYTES));
        if let Some(Err(error)) = written {
            tracing::debug!("the text searches' filters were not saved: {error}");
        }
    }
}

impl Saved {
    /// Runs `work` on the file's connection, opening it the first time;
    /// `None` when it cannot be opened.
    fn with<T>(
        &self,
        work: impl FnOnce(&mut Connection) -> rusqlite::Result<T>,
    ) -> Option<rusqlite::Result<T>> {
        let mut connection = self.connection.lock().ok()?;
        if matches!(*connection, Connecting::NotYet) {
            *connection = match saved::open(&self.path) {
                Ok(opened) => Connecting::Open(opened),
                Err(error) => {
                    tracing::debug!(
                        path = %self.path.display(),
                        "the text searches' filters cannot be kept: {error}"
                    );
                    Connecting::Failed
                }
            };
        }
        match &mut *connection {
            Connecting::Open(connection) => Some(work(connection)),
            Connecting::NotYet | Connecting::Failed => None,
        }
    }
}

/// Saves the filters every [`SAVE_EVERY`] until the sketches are dropped.
fn save_while_in_use(sketches: &Weak<Sketches>) {
    loop {
        std::thread::sleep(SAVE_EVERY);
        let Some(sketches) = sketches.upgrade() else {
            return;
        };
        sketches.save();
    }
}

impl Remembered {
    /// Gives the sketch of `path` at `stamp` its words, within the bound.
    fn add_words(&mut self, path: &Path, stamp: FileStamp, words: Option<Words>) {
        let Some(words) = words else {
            return;
        };
        let size = words.size();
        if self.words_bytes + size > MAX_WORDS_BYTES {
            return;
        }
        if let Some(sketch) = self.by_path.get_mut(path)
            && sketch.stamp == stamp
            && sketch.words.is_none()
        {
            sketch.words = Some(Arc::new(words));
            self.words_bytes += size;
        }
    }
}

impl Sketch {
    fn words_size(&self) -> usize {
        self.words.as_ref().map_or(0, |words| words.size())
    }
}

/// Whether `byte` may be part of a word: ASCII letters, digits and `_`,
/// and every byte of a character outside ASCII (so that every case of a
/// letter, `K` and the Kelvin sign alike, is inside a word).
fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || !byte.is_ascii()
}

impl Words {
    /// The words of `text`, in one pass.
    fn of<'t>(text: &'t [u8]) -> Self {
        // foldhash, seeded per process: every word of the file is hashed,
        // and SipHash's resistance is not needed against a file's words.
        let mut places: foldhash::HashMap<&'t [u8], usize> = foldhash::HashMap::default();
        let mut words = Vec::new();
        let mut seen: Vec<Seen> = Vec::new();
        let mut line = 1u32;
        let mut add = |word: &'t [u8], line: u32| {
            let place = *places.entry(word).or_insert_with(|| {
                words.extend_from_slice(word);
                words.push(b'\n');
                seen.push(Seen {
                    count: 0,
                    first_line: line,
                    last_line: line,
                });
                seen.len() - 1
            });
            if let Some(seen) = seen.get_mut(place) {
                seen.count = seen.count.saturating_add(1);
                seen.last_line = line;
            }
        };
        let mut start = None;
        for (index, &byte) in text.iter().enumerate() {
            if is_word_byte(byte) {
                start.get_or_insert(index);
                continue;
            }
            if let Some(start) = start.take() {
                add(&text[start..index], line);
            }
            if byte == b'\n' {
                line = line.saturating_add(1);
            }
        }
        if let Some(start) = start {
            add(&text[start..], line);
        }
        Self {
            text: words.into_boxed_slice(),
            seen: seen.into_boxed_slice(),
        }
    }

    fn size(&self) -> usize {
        self.text.len() + self.seen.len() * std::mem::size_of::<Seen>()
    }

    /// Whether the needle's text is in some word, in any case.
    fn hold(&self, needle: &Needle) -> bool {
        let Some(matcher) = &needle.in_words else {
            return true;
        };
        !matches!(matcher.find(&self.text), Ok(None))
    }

    /// Every match of `matcher` in the words, each counted as often as
    /// its word occurs.
    fn tally<M: Matcher>(&self, matcher: &M) -> Tally {
        let mut tally = Tally::default();
        // The word of a match is the number of line ends before it.
        let (mut word, mut scanned) = (0, 0);
        let _ = matcher.find_iter(&self.text, |found: Match| {
            word += self.text[scanned..found.start()]
                .iter()
                .filter(|&&byte| byte == b'\n')
                .count();
            scanned = found.start();
            if let Some(seen) = self.seen.get(word) {
                tally.add(
                    u64::from(seen.count),
                    seen.first_line.into(),
                    seen.last_line.into(),
                );
            }
            true
        });
        tally
    }
}

impl Tally {
    fn add(&mut self, matches: u64, first_line: u64, last_line: u64) {
        if self.matches == 0 || first_line < self.first_line {
            self.first_line = first_line;
        }
        self.last_line = self.last_line.max(last_line);
        self.matches += matches;
    }
}

/// A sink that tallies the matches of the lines a search finds.
struct Counter<'m, M> {
    matcher: &'m M,
    tally: Tally,
}

impl<M: Matcher> Sink for Counter<'_, M> {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        let line = found.line_number().unwrap_or(0);
        let mut count = 0;
        let _ = self.matcher.find_iter(found.bytes(), |_| {
            count += 1;
            true
        });
        self.tally.add(count.max(1), line, line);
        Ok(true)
    }
}

/// The Bloom filter of every trigram of `text`, letters folded. The
/// trigram rolls along the text a byte at a time: this runs over every
/// byte of every file the first search reads.
///
/// The two letters outside ASCII whose case folds into it, the Kelvin
/// sign and the long s, are taken as the `k` and `s` a search without
/// case matches them as; their own bytes are in no needle's trigrams.
fn filter_of(text: &[u8]) -> Box<[u64]> {
    let bits = (text.len() as u64 / BITS_PER_BYTE_DIVISOR)
        .next_power_of_two()
        .clamp(MIN_BITS, MAX_BITS);
    let mut filter = vec![0u64; usize::try_from(bits / 64).unwrap_or(1)].into_boxed_slice();
    let mut trigram = 0u32;
    let mut taken = 0usize;
    let mut index = 0;
    while let Some(&byte) = text.get(index) {
        let (byte, width) = match byte {
            0xE2 if text.get(index + 1..index + 3) == Some(&[0x84, 0xAA][..]) => (b'k', 3),
            0xC5 if text.get(index + 1) == Some(&0xBF) => (b's', 2),
            _ => (byte, 1),
        };
        index += width;
        taken += 1;
        trigram = (trigram << 8 | u32::from(byte.to_ascii_lowercase())) & 0xFF_FFFF;
        if taken >= 3 {
            let (first, second) = places(trigram, bits);
            if let Some(word) = filter.get_mut(first / 64) {
                *word |= 1 << (first % 64);
            }
            if let Some(word) = filter.get_mut(second / 64) {
                *word |= 1 << (second % 64);
            }
        }
    }
    filter
}

fn holds(filter: &[u64], trigram: u32) -> bool {
    let bits = filter.len() as u64 * 64;
    let (first, second) = places(trigram, bits);
    let set = |place: usize| {
        filter
            .get(place / 64)
            .is_some_and(|word| word & (1 << (place % 64)) != 0)
    };
    set(first) && set(second)
}

/// Three bytes as one number, ASCII letters folded to lower case.
fn trigram(window: &[u8]) -> u32 {
    window.iter().fold(0, |trigram, byte| {
        trigram << 8 | u32::from(byte.to_ascii_lowercase())
    })
}

/// The filter's two bits for `trigram`, from one multiplicative hash:
/// `bits` is a power of two.
fn places(trigram: u32, bits: u64) -> (usize, usize) {
    let hash = u64::from(trigram).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mask = bits - 1;
    ((hash >> 40 & mask) as usize, (hash >> 17 & mask) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use grep_regex::RegexMatcherBuilder;
    use grep_searcher::SearcherBuilder;
    use grep_searcher::sinks::Lossy;

    /// The lines of the file at `path` that hold `literal`, as a search
    /// through `sketches` finds them.
    fn lines(sketches: &Sketches, path: &Path, literal: &str) -> Vec<u64> {
        let matcher = RegexMatcherBuilder::new()
            .fixed_strings(true)
            .case_smart(true)
            .build(literal)
            .unwrap();
        let mut searcher = SearcherBuilder::new().line_number(true).build();
        let mut found = Vec::new();
        sketches
            .search(
                &mut searcher,
                &matcher,
                path,
                &Needle::new(literal),
                Lossy(|line, _| {
                    found.push(line);
                    Ok(true)
                }),
            )
            .unwrap();
        found
    }

    #[test]
    fn a_sketch_rules_out_what_a_file_does_not_hold() {
        let filter = filter_of(b"def reap_workers(self):\n    pass\n");
        let held = |literal: &str| {
            Needle::new(literal)
                .trigrams
                .iter()
                .all(|&trigram| holds(&filter, trigram))
        };
        assert!(held("reap_workers"));
        assert!(held("REAP"));
        assert!(held("ss"));
        assert!(!held("close_on_exec"));
    }

    /// Writes `text` at `path`, modified `seconds` ago.
    fn write_aged(path: &Path, text: &str, seconds: u64) {
        std::fs::write(path, text).unwrap();
        let modified = SystemTime::now() - std::time::Duration::from_secs(seconds);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
    }

    #[test]
    fn a_changed_file_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        write_aged(&path, "x = 1\n", 60);
        let sketches = Sketches::default();
        assert!(lines(&sketches, &path, "greet").is_empty());
        // Longer: a new length.
        write_aged(&path, "x = 1\ngreet()\n", 50);
        assert_eq!(lines(&sketches, &path, "greet"), [2]);
        // As long, written later: a new modification time.
        write_aged(&path, "x = 2\nhello()\n", 40);
        assert!(lines(&sketches, &path, "greet").is_empty());
        assert_eq!(lines(&sketches, &path, "hello"), [2]);
    }

    #[test]
    fn a_file_written_a_moment_ago_is_read_every_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
        let sketches = Sketches::default();
        assert!(lines(&sketches, &path, "greet").is_empty());
        // Written again within the same tick of the file system's clock:
        // as long, and modified at the same instant.
        std::fs::write(&path, "greet\n").unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(modified)
            .unwrap();
        assert_eq!(lines(&sketches, &path, "greet"), [1]);
    }

    #[test]
    fn case_and_other_scripts_are_found_as_the_matcher_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "class Greeter:\nCAFÉ = 1\n").unwrap();
        let sketches = Sketches::default();
        assert!(lines(&sketches, &path, "nothing here").is_empty());
        assert_eq!(lines(&sketches, &path, "greeter"), [1]);
        assert_eq!(lines(&sketches, &path, "Greeter"), [1]);
        assert_eq!(lines(&sketches, &path, "café"), [2]);
    }

    /// The tally of `literal` in `text` read line by line, and from the
    /// text's words, with and without case.
    fn tallies(text: &str, literal: &str) -> [(Tally, Tally); 2] {
        [true, false].map(|case_insensitive| {
            let matcher = RegexMatcherBuilder::new()
                .fixed_strings(true)
                .case_insensitive(case_insensitive)
                .build(literal)
                .unwrap();
            let mut counter = Counter {
                matcher: &matcher,
                tally: Tally::default(),
            };
            SearcherBuilder::new()
                .line_number(true)
                .build()
                .search_slice(&matcher, text.as_bytes(), &mut counter)
                .unwrap();
            (counter.tally, Words::of(text.as_bytes()).tally(&matcher))
        })
    }

    #[test]
    fn words_count_a_name_as_reading_the_file_does() {
        let text = "def greet(name):\n    greet_all(name)  # greet\nGREET = greet\nx";
        for (read, counted) in tallies(text, "greet") {
            assert_eq!(read, counted);
        }
        let [(insensitive, _), (sensitive, _)] = tallies(text, "greet");
        assert_eq!((insensitive.matches, insensitive.last_line), (5, 3));
        assert_eq!((sensitive.matches, sensitive.first_line), (4, 1));
        // Matches inside a word do not overlap, as on a line.
        let [(read, counted), _] = tallies("aaaa aaa\n", "aa");
        assert_eq!((read.matches, counted.matches), (3, 3));
    }

    proptest::proptest! {
        #[test]
        fn words_always_count_as_reading_does(
            text in "([a-cA-CK_0-9 .(\n]|é|É|ſ|\u{212A}){0,80}",
            literal in "([a-cA-CKks_0-9]|é|ſ){1,3}",
        ) {
            let [(insensitive, _), _] = tallies(&text, &literal);
            for (read, counted) in tallies(&text, &literal) {
                proptest::prop_assert_eq!(read, counted);
            }
            // A file is passed over only when it cannot hold the text.
            let held = Words::of(text.as_bytes()).hold(&Needle::new(&literal));
            proptest::prop_assert_eq!(held, insensitive.matches > 0);
        }
    }

    /// `literal` with each letter in one of the cases a search without
    /// case matches it in, chosen by `choices`.
    fn other_case(literal: &str, choices: &[u8]) -> String {
        literal
            .chars()
            .zip(choices.iter().cycle())
            .map(|(letter, choice)| {
                let cases: &[char] = match letter.to_ascii_lowercase() {
                    'k' => &['k', 'K', '\u{212A}'],
                    's' => &['s', 'S', 'ſ'],
                    _ => &[letter.to_ascii_lowercase(), letter.to_ascii_uppercase()],
                };
                cases[usize::from(*choice) % cases.len()]
            })
            .collect()
    }

    proptest::proptest! {
        #[test]
        fn a_filter_holds_what_a_search_without_case_finds(
            literal in "[a-ckKsS_]{3,8}",
            choices in proptest::collection::vec(0u8..3, 1..8),
            before in "[a-z \n]{0,10}",
        ) {
            let text = format!("{before}{}\n", other_case(&literal, &choices));
            let [(insensitive, _), _] = tallies(&text, &literal);
            proptest::prop_assert!(insensitive.matches > 0);
            let filter = filter_of(text.as_bytes());
            let held = Needle::new(&literal)
                .trigrams
                .iter()
                .all(|&trigram| holds(&filter, trigram));
            proptest::prop_assert!(held, "{text:?} hides {literal:?}");
        }
    }

    #[test]
    fn a_file_read_again_is_counted_from_its_words() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        write_aged(&path, "import os\nos.path\n", 60);
        let sketches = Sketches::default();
        assert_eq!(lines(&sketches, &path, "os"), [1, 2]);
        assert_eq!(lines(&sketches, &path, "path"), [2]);
        let words = |sketches: &Sketches| {
            let files = sketches.files.lock().unwrap();
            files.by_path.get(&path).unwrap().words.is_some()
        };
        assert!(words(&sketches), "the second read keeps the words");
        assert!(lines(&sketches, &path, "spa").is_empty());
        let matcher = RegexMatcherBuilder::new().build("os").unwrap();
        let tally = sketches
            .tally(
                &mut SearcherBuilder::new().line_number(true).build(),
                &matcher,
                &Listed::new(path.clone(), None),
                &Needle::new("os"),
            )
            .unwrap();
        assert_eq!(
            (tally.matches, tally.first_line, tally.last_line),
            (2, 1, 2)
        );
        // Changed, the file is read again and its old words forgotten.
        write_aged(&path, "import sys\n", 30);
        assert!(lines(&sketches, &path, "os").is_empty());
        assert_eq!(lines(&sketches, &path, "sys"), [1]);
    }

    #[test]
    fn a_new_process_takes_up_the_filters_kept_for_files_unchanged_since() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        let (kept, changed) = (tree.join("a.py"), tree.join("b.py"));
        write_aged(&kept, "def greet():\n    pass\n", 60);
        write_aged(&changed, "x = 1\n", 60);
        let roots = RootSet::new(std::slice::from_ref(&tree)).unwrap();
        let db = dir.path().join("state/sketches.db");
        let filters = |sketches: &Sketches| {
            let files = sketches.files.lock().unwrap();
            let mut filters: Vec<(PathBuf, FileStamp, Box<[u64]>)> = files
                .by_path
                .iter()
                .map(|(path, sketch)| (path.clone(), sketch.stamp, sketch.bits.clone()))
                .collect();
            filters.sort_by(|a, b| a.0.cmp(&b.0));
            filters
        };
        let before = {
            let sketches = Sketches::saved_at(db.clone());
            sketches.load(&roots);
            assert_eq!(lines(&sketches, &kept, "greet"), [1]);
            assert!(lines(&sketches, &changed, "greet").is_empty());
            sketches.save();
            filters(&sketches)
        };
        assert_eq!(before.len(), 2);
        let sketches = Sketches::saved_at(db);
        sketches.load(&roots);
        assert_eq!(filters(&sketches), before);
        // Changed while no process ran: read again, never answered from
        // the filter kept.
        write_aged(&changed, "greet()\n", 30);
        assert_eq!(lines(&sketches, &changed, "greet"), [1]);
        assert_eq!(lines(&sketches, &kept, "greet"), [1]);
    }

    #[test]
    fn binary_files_are_not_searched() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.bin");
        std::fs::write(&path, b"needle\0needle\n").unwrap();
        let sketches = Sketches::default();
        assert!(lines(&sketches, &path, "needle").is_empty());
        assert!(lines(&sketches, &path, "needle").is_empty());
    }
}
