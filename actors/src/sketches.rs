//! What the text searches remember of the files they have read: each
//! file's stamp (modification time and length) and a Bloom filter of its
//! trigrams, so that a later search reads only the files that may hold
//! what it looks for. `search`'s heatmap, the definitions found by text
//! and the uses a references answer is checked against all read the whole
//! tree; on a million lines that was 0.15 to 0.4 s of every search.
//!
//! One `Sketches` is shared by every session of the process. A file whose
//! stamp differs from the one its sketch was made at is read again, so a
//! search never answers from a file as it was: a sketch only ever says
//! that a file cannot hold a text, never what it holds.

use grep_matcher::Matcher;
use grep_searcher::{Searcher, Sink, SinkError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

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

/// The remembered files, shared by every session.
#[derive(Default)]
pub struct Sketches {
    files: Mutex<Remembered>,
}

#[derive(Default)]
struct Remembered {
    by_path: HashMap<PathBuf, Sketch>,
    bytes: usize,
}

/// When a file was last seen as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified: Option<SystemTime>,
    len: u64,
}

impl Stamp {
    fn of(metadata: &std::fs::Metadata) -> Self {
        Self {
            modified: metadata.modified().ok(),
            len: metadata.len(),
        }
    }
}

struct Sketch {
    stamp: Stamp,
    /// The trigram filter; empty for a binary file, which no text search
    /// reads.
    bits: Box<[u64]>,
}

/// What a search looks for, as the trigrams a file must hold for it.
pub struct Needle {
    trigrams: Vec<u32>,
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
        Self { trigrams }
    }
}

impl Sketches {
    /// Searches the file at `path` with `matcher` into `sink`, as
    /// `Searcher::search_path` does, unless its sketch, made at the
    /// file's present stamp, shows that it cannot hold `needle`. A file
    /// read is sketched for the next search.
    pub fn search<M: Matcher, S: Sink>(
        &self,
        searcher: &mut Searcher,
        matcher: M,
        path: &Path,
        needle: &Needle,
        sink: S,
    ) -> Result<(), S::Error> {
        let metadata = std::fs::metadata(path).map_err(S::Error::error_io)?;
        let stamp = Stamp::of(&metadata);
        if stamp.len > MAX_SKETCHED_FILE {
            return searcher.search_path(matcher, path, sink);
        }
        if self.cannot_hold(path, stamp, needle) {
            return Ok(());
        }
        let text = std::fs::read(path).map_err(S::Error::error_io)?;
        let binary = text.contains(&0);
        self.remember(path, stamp, &text, binary);
        match binary {
            true => Ok(()),
            false => searcher.search_slice(matcher, &text, sink),
        }
    }

    /// Whether the file's sketch at `stamp` rules `needle` out.
    fn cannot_hold(&self, path: &Path, stamp: Stamp, needle: &Needle) -> bool {
        let Ok(files) = self.files.lock() else {
            return false;
        };
        let Some(sketch) = files.by_path.get(path) else {
            return false;
        };
        if sketch.stamp != stamp {
            return false;
        }
        if sketch.bits.is_empty() {
            return true;
        }
        !needle
            .trigrams
            .iter()
            .all(|&trigram| holds(&sketch.bits, trigram))
    }

    fn remember(&self, path: &Path, stamp: Stamp, text: &[u8], binary: bool) {
        let bits = match binary {
            true => Box::default(),
            false => filter_of(text),
        };
        let Ok(mut files) = self.files.lock() else {
            return;
        };
        let size = bits.len() * 8;
        if files.bytes + size > MAX_BYTES {
            files.by_path.clear();
            files.bytes = 0;
        }
        files.bytes += size;
        if let Some(old) = files
            .by_path
            .insert(path.to_path_buf(), Sketch { stamp, bits })
        {
            files.bytes = files.bytes.saturating_sub(old.bits.len() * 8);
        }
    }
}

/// The Bloom filter of every trigram of `text`, letters folded. The
/// trigram rolls along the text a byte at a time: this runs over every
/// byte of every file the first search reads.
fn filter_of(text: &[u8]) -> Box<[u64]> {
    let bits = (text.len() as u64 / BITS_PER_BYTE_DIVISOR)
        .next_power_of_two()
        .clamp(MIN_BITS, MAX_BITS);
    let mut filter = vec![0u64; usize::try_from(bits / 64).unwrap_or(1)].into_boxed_slice();
    let mut trigram = 0u32;
    for (index, byte) in text.iter().enumerate() {
        trigram = (trigram << 8 | u32::from(byte.to_ascii_lowercase())) & 0xFF_FFFF;
        if index >= 2 {
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

    #[test]
    fn a_changed_file_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.py");
        std::fs::write(&path, "x = 1\n").unwrap();
        let sketches = Sketches::default();
        assert!(lines(&sketches, &path, "greet").is_empty());
        // Longer: a new length.
        std::fs::write(&path, "x = 1\ngreet()\n").unwrap();
        assert_eq!(lines(&sketches, &path, "greet"), [2]);
        // As long, written later: a new modification time.
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        std::io::Write::write_all(&mut &file, b"x = 2\nhello()\n").unwrap();
        let later = std::fs::metadata(&path).unwrap().modified().unwrap()
            + std::time::Duration::from_secs(1);
        file.set_modified(later).unwrap();
        drop(file);
        assert!(lines(&sketches, &path, "greet").is_empty());
        assert_eq!(lines(&sketches, &path, "hello"), [2]);
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
