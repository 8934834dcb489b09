//! The text searches' trigram filters on disk, in `sketches.db` beside
//! the index, so that a restarted process's first search reads only the
//! files that may hold its text, as the process before it did: each row
//! is one file's filter with the stamp of the file it was made from, and
//! `sketches.rs` uses a row only while the file on disk has that stamp.
//! A cache like the index: made again at another layout, bounded, and
//! deletable at any time. Words are not kept (a file's are made again at
//! its first read after a restart): they are four times the filters.

use rusqlite::{Connection, params};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// This build's layout; another is dropped and made again. 2: filters
/// take the Kelvin sign and the long s as `k` and `s`.
const LAYOUT: i64 = 2;

const TABLES: &str = "
CREATE TABLE sketches (
    path BLOB PRIMARY KEY,
    modified_ns INTEGER NOT NULL,
    changed_ns INTEGER NOT NULL,
    len INTEGER NOT NULL,
    bits BLOB NOT NULL,
    saved_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX sketches_by_age ON sketches (saved_at);
";

/// When a file was last seen as it is: its modification time, which a
/// writer may set back, and its status change time, which none can, with
/// its length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub modified_ns: i64,
    pub changed_ns: i64,
    pub len: u64,
}

impl FileStamp {
    pub fn of(metadata: &std::fs::Metadata) -> Self {
        let nanos = |seconds: i64, nanos: i64| seconds.saturating_mul(1_000_000_000) + nanos;
        Self {
            modified_ns: nanos(metadata.mtime(), metadata.mtime_nsec()),
            changed_ns: nanos(metadata.ctime(), metadata.ctime_nsec()),
            len: metadata.len(),
        }
    }
}

/// One file's filter as kept.
#[derive(Debug, Clone, PartialEq)]
pub struct SavedSketch {
    pub path: PathBuf,
    pub stamp: FileStamp,
    pub bits: Box<[u64]>,
}

/// What a save writes: filters made since the last, and whether every
/// filter was forgotten before them.
#[derive(Debug, Default)]
pub struct Changes {
    pub made: Vec<SavedSketch>,
    pub forgot_all: bool,
}

/// Opens (creating if needed) the filters' file, making it again when
/// its layout is not this build's.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    super::open_cache_at(path, LAYOUT, |connection| {
        connection.execute_batch(&format!("DROP TABLE IF EXISTS sketches; {TABLES}"))
    })
}

/// Every filter kept of a file under `root`.
pub fn under(connection: &Connection, root: &Path) -> rusqlite::Result<Vec<SavedSketch>> {
    // Paths under the root sort between `root/` and `root0` (`0` follows
    // `/`), byte by byte as SQLite compares blobs.
    let root = root.as_os_str().as_bytes();
    let low = [root, b"/"].concat();
    let high = [root, b"0"].concat();
    let mut statement = connection.prepare(
        "SELECT path, modified_ns, changed_ns, len, bits FROM sketches WHERE path > ?1 AND path < ?2",
    )?;
    let rows = statement.query_map(params![low, high], |row| {
        let path: Vec<u8> = row.get(0)?;
        let len: i64 = row.get(3)?;
        let bits: Vec<u8> = row.get(4)?;
        Ok(SavedSketch {
            path: PathBuf::from(std::ffi::OsStr::from_bytes(&path)),
            stamp: FileStamp {
                modified_ns: row.get(1)?,
                changed_ns: row.get(2)?,
                len: u64::try_from(len).unwrap_or_default(),
            },
            bits: words_of(&bits),
        })
    })?;
    rows.collect()
}

/// Writes `changes` at `at` (seconds), then forgets the oldest half of
/// the filters while they take more than `max_bytes`.
pub fn save(
    connection: &mut Connection,
    changes: &Changes,
    at: i64,
    max_bytes: usize,
) -> rusqlite::Result<()> {
    let transaction = connection.transaction()?;
    if changes.forgot_all {
        transaction.execute("DELETE FROM sketches", [])?;
    }
    {
        let mut insert = transaction.prepare_cached(
            "INSERT OR REPLACE INTO sketches (path, modified_ns, changed_ns, len, bits, saved_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?;
        for sketch in &changes.made {
            insert.execute(params![
                sketch.path.as_os_str().as_bytes(),
                sketch.stamp.modified_ns,
                sketch.stamp.changed_ns,
                i64::try_from(sketch.stamp.len).unwrap_or(i64::MAX),
                bytes_of(&sketch.bits),
                at
            ])?;
        }
    }
    let max_bytes = i64::try_from(max_bytes).unwrap_or(i64::MAX);
    loop {
        let (bytes, rows): (i64, i64) = transaction.query_row(
            "SELECT coalesce(sum(length(bits)), 0), count(*) FROM sketches",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        if bytes <= max_bytes || rows == 0 {
            break;
        }
        transaction.execute(
            "DELETE FROM sketches WHERE path IN
               (SELECT path FROM sketches ORDER BY saved_at LIMIT ?1)",
            params![(rows + 1) / 2],
        )?;
    }
    transaction.commit()
}

fn bytes_of(bits: &[u64]) -> Vec<u8> {
    bits.iter().flat_map(|word| word.to_le_bytes()).collect()
}

fn words_of(bytes: &[u8]) -> Box<[u64]> {
    bytes
        .chunks_exact(8)
        .map(|chunk| {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            u64::from_le_bytes(word)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sketch(path: &str, at: i64) -> SavedSketch {
        SavedSketch {
            path: PathBuf::from(path),
            stamp: FileStamp {
                modified_ns: at,
                changed_ns: at + 1,
                len: 10,
            },
            bits: vec![1, u64::MAX, 3].into_boxed_slice(),
        }
    }

    #[test]
    fn filters_come_back_for_their_root_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = crate::store::sketches_path(dir.path());
        let made = vec![
            sketch("/w/a/x.py", 1),
            sketch("/w/a/deep/y.py", 2),
            sketch("/w/a0/z.py", 3),
            sketch("/w/ab.py", 4),
        ];
        {
            let mut db = open(&path).unwrap();
            let changes = Changes {
                made: made.clone(),
                forgot_all: false,
            };
            save(&mut db, &changes, 100, usize::MAX).unwrap();
        }
        let db = open(&path).unwrap();
        let mut found = under(&db, Path::new("/w/a")).unwrap();
        found.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(found, [made[1].clone(), made[0].clone()]);
    }

    #[test]
    fn the_oldest_go_first_past_the_bound_and_forgetting_all_empties_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&crate::store::sketches_path(dir.path())).unwrap();
        for (at, name) in ["/w/old.py", "/w/mid.py", "/w/new.py"].iter().enumerate() {
            let changes = Changes {
                made: vec![sketch(name, 0)],
                forgot_all: false,
            };
            // Each filter is 24 bytes: two fit.
            save(&mut db, &changes, at as i64, 48).unwrap();
        }
        let kept: Vec<PathBuf> = under(&db, Path::new("/w"))
            .unwrap()
            .into_iter()
            .map(|sketch| sketch.path)
            .collect();
        assert_eq!(kept, [PathBuf::from("/w/new.py")]);
        let changes = Changes {
            made: Vec::new(),
            forgot_all: true,
        };
        save(&mut db, &changes, 9, 48).unwrap();
        assert!(under(&db, Path::new("/w")).unwrap().is_empty());
    }
}
