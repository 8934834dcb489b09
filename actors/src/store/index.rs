//! The symbol index's tables, in `index.db` beside the event store: per
//! file, the stamp (modification time and size) it had when its outline
//! was read and which server read it; per symbol, its name, kind,
//! container and place; per server and root, when a background pass last
//! went over every file. Names are found by substring through an FTS5
//! trigram table over the symbols' names.
//!
//! The index is a cache of what servers said: a database of another
//! layout is dropped and made again rather than migrated, and a damaged
//! one is set aside as the event store's is.

use rusqlite::{Connection, OptionalExtension, params};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// The layout this build writes; any other is made again.
const LAYOUT: i64 = 1;

const TABLES: &str = "
    CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        server TEXT NOT NULL,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        indexed_at INTEGER NOT NULL
    );
    CREATE TABLE symbols (
        id INTEGER PRIMARY KEY,
        file INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind INTEGER NOT NULL,
        container TEXT,
        line INTEGER NOT NULL,
        column INTEGER NOT NULL,
        end_line INTEGER NOT NULL
    );
    CREATE INDEX symbols_file ON symbols(file);
    CREATE VIRTUAL TABLE symbol_names USING fts5(
        name, content = 'symbols', content_rowid = 'id', tokenize = 'trigram'
    );
    CREATE TRIGGER symbols_named AFTER INSERT ON symbols BEGIN
        INSERT INTO symbol_names (rowid, name) VALUES (new.id, new.name);
    END;
    CREATE TRIGGER symbols_unnamed AFTER DELETE ON symbols BEGIN
        INSERT INTO symbol_names (symbol_names, rowid, name) VALUES ('delete', old.id, old.name);
    END;
    CREATE TABLE passes (
        server TEXT NOT NULL,
        root TEXT NOT NULL,
        at INTEGER NOT NULL,
        PRIMARY KEY (server, root)
    );";

/// What a file was when its outline was read: a file whose stamp differs
/// now has changed since, and nothing indexed of it is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stamp {
    pub mtime_ns: i64,
    pub size: i64,
}

impl Stamp {
    /// The file's stamp now; `None` when it cannot be read (gone).
    pub fn of(path: &Path) -> Option<Self> {
        let metadata = std::fs::metadata(path).ok()?;
        let mtime_ns = metadata
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .and_then(|since| i64::try_from(since.as_nanos()).ok())?;
        Some(Self {
            mtime_ns,
            size: i64::try_from(metadata.len()).unwrap_or(i64::MAX),
        })
    }
}

/// One symbol of an outline, placed by its name: a 0-based line and a
/// 0-based column in code points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutlineSymbol {
    pub name: String,
    pub kind: i64,
    pub container: Option<String>,
    pub line: u32,
    pub column: u32,
    pub end_line: u32,
}

/// A file's symbols as a server outlined it, with the file's stamp as
/// read just before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outline {
    pub path: PathBuf,
    pub stamp: Stamp,
    pub server: String,
    pub symbols: Vec<OutlineSymbol>,
}

/// A symbol found in the index, with its file's stamp when indexed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexedSymbol {
    pub path: PathBuf,
    pub server: String,
    pub stamp: Stamp,
    pub symbol: OutlineSymbol,
}

/// Opens (creating if needed) the index, making it again when its layout
/// is not this build's.
pub fn open(path: &Path) -> rusqlite::Result<Connection> {
    let connection = super::open_cache_at(path, LAYOUT, make_again)?;
    connection.pragma_update(None, "foreign_keys", "ON")?;
    Ok(connection)
}

/// Drops whatever the file holds and writes this build's tables.
fn make_again(connection: &Connection) -> rusqlite::Result<()> {
    let names: Vec<(String, String)> = {
        let mut statement = connection.prepare(
            "SELECT type, name FROM sqlite_master
             WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
               AND name NOT LIKE 'symbol_names_%'",
        )?;
        statement
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut batch = String::new();
    for (kind, name) in names {
        let kind = if kind == "view" { "VIEW" } else { "TABLE" };
        batch.push_str(&format!("DROP {kind} IF EXISTS \"{name}\";"));
    }
    batch.push_str(TABLES);
    connection.execute_batch(&batch)
}

/// Replaces what the index holds of a file with its new outline.
pub fn record(connection: &mut Connection, outline: &Outline, at: i64) -> rusqlite::Result<()> {
    let transaction = connection.transaction()?;
    let path = path_text(&outline.path);
    transaction.execute("DELETE FROM files WHERE path = ?1", params![path])?;
    transaction.execute(
        "INSERT INTO files (path, server, mtime_ns, size, indexed_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            path,
            outline.server,
            outline.stamp.mtime_ns,
            outline.stamp.size,
            at
        ],
    )?;
    let file = transaction.last_insert_rowid();
    {
        let mut insert = transaction.prepare_cached(
            "INSERT INTO symbols (file, name, kind, container, line, column, end_line)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        )?;
        for symbol in &outline.symbols {
            insert.execute(params![
                file,
                symbol.name,
                symbol.kind,
                symbol.container,
                symbol.line,
                symbol.column,
                symbol.end_line
            ])?;
        }
    }
    transaction.commit()
}

/// Forgets files (their symbols with them).
pub fn forget(connection: &mut Connection, paths: &[PathBuf]) -> rusqlite::Result<()> {
    let transaction = connection.transaction()?;
    {
        let mut delete = transaction.prepare_cached("DELETE FROM files WHERE path = ?1")?;
        for path in paths {
            delete.execute(params![path_text(path)])?;
        }
    }
    transaction.commit()
}

/// Symbols whose name holds `query`, ignoring case, in files under any of
/// `roots`; at most `limit` under each root.
pub fn lookup(
    connection: &Connection,
    query: &str,
    roots: &[PathBuf],
    limit: usize,
) -> rusqlite::Result<Vec<IndexedSymbol>> {
    // Unescaped: the trigram table answers LIKE from its index only
    // without an ESCAPE clause (with one, a look-up on a million lines
    // read every name, 90 ms against 9). A `_` or `%` in the query then
    // matches more, which `holds` takes out again.
    let pattern = format!("%{query}%");
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    // The trigram table answers LIKE from its index for three characters
    // or more; a shorter query reads every name. Shortest names first: an
    // exact match is the shortest name that holds the query, and is never
    // what the limit leaves out.
    let mut statement = connection.prepare_cached(
        "SELECT files.path, files.server, files.mtime_ns, files.size,
                symbols.name, symbols.kind, symbols.container, symbols.line,
                symbols.column, symbols.end_line
         FROM symbol_names
         JOIN symbols ON symbols.id = symbol_names.rowid
         JOIN files ON files.id = symbols.file
         WHERE symbol_names.name LIKE ?1
           AND files.path >= ?2 AND files.path < ?3
         ORDER BY length(symbols.name)
         LIMIT ?4",
    )?;
    let mut found = Vec::new();
    for root in roots {
        let (low, high) = path_range(root);
        let rows = statement.query_map(params![pattern, low, high, limit], indexed_symbol)?;
        for row in rows {
            let row = row?;
            if holds(&row.symbol.name, query) {
                found.push(row);
            }
        }
    }
    Ok(found)
}

fn indexed_symbol(row: &rusqlite::Row<'_>) -> rusqlite::Result<IndexedSymbol> {
    Ok(IndexedSymbol {
        path: PathBuf::from(row.get::<_, String>(0)?),
        server: row.get(1)?,
        stamp: Stamp {
            mtime_ns: row.get(2)?,
            size: row.get(3)?,
        },
        symbol: OutlineSymbol {
            name: row.get(4)?,
            kind: row.get(5)?,
            container: row.get(6)?,
            line: row.get(7)?,
            column: row.get(8)?,
            end_line: row.get(9)?,
        },
    })
}

/// The top-level symbols of each of `paths` the index holds, in the
/// order they come in the file, with the file's stamp when read; a file
/// not indexed is left out.
pub fn top_level(
    connection: &Connection,
    paths: &[PathBuf],
) -> rusqlite::Result<Vec<(PathBuf, Stamp, Vec<OutlineSymbol>)>> {
    let mut file =
        connection.prepare_cached("SELECT id, mtime_ns, size FROM files WHERE path = ?1")?;
    let mut symbols = connection.prepare_cached(
        "SELECT name, kind, line, column, end_line FROM symbols
         WHERE file = ?1 AND container IS NULL
         ORDER BY line, column",
    )?;
    let mut found = Vec::new();
    for path in paths {
        let row = file
            .query_row(params![path_text(path)], |row| {
                Ok((
                    row.get::<_, i64>(0)?,
                    Stamp {
                        mtime_ns: row.get(1)?,
                        size: row.get(2)?,
                    },
                ))
            })
            .optional()?;
        let Some((id, stamp)) = row else {
            continue;
        };
        let top = symbols
            .query_map(params![id], |row| {
                Ok(OutlineSymbol {
                    name: row.get(0)?,
                    kind: row.get(1)?,
                    container: None,
                    line: row.get(2)?,
                    column: row.get(3)?,
                    end_line: row.get(4)?,
                })
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        found.push((path.clone(), stamp, top));
    }
    Ok(found)
}

/// The stamp of every file indexed under `root`.
pub fn stamps_under(
    connection: &Connection,
    root: &Path,
) -> rusqlite::Result<HashMap<PathBuf, Stamp>> {
    let (low, high) = path_range(root);
    let mut statement = connection
        .prepare_cached("SELECT path, mtime_ns, size FROM files WHERE path >= ?1 AND path < ?2")?;
    let rows = statement.query_map(params![low, high], |row| {
        Ok((
            PathBuf::from(row.get::<_, String>(0)?),
            Stamp {
                mtime_ns: row.get(1)?,
                size: row.get(2)?,
            },
        ))
    })?;
    rows.collect()
}

/// The files under `root` indexed with no names.
pub fn nameless_under(connection: &Connection, root: &Path) -> rusqlite::Result<Vec<PathBuf>> {
    let (low, high) = path_range(root);
    let mut statement = connection.prepare_cached(
        "SELECT path FROM files WHERE path >= ?1 AND path < ?2
         AND NOT EXISTS (SELECT 1 FROM symbols WHERE symbols.file = files.id)",
    )?;
    let rows = statement.query_map(params![low, high], |row| {
        Ok(PathBuf::from(row.get::<_, String>(0)?))
    })?;
    rows.collect()
}

/// How many files under `root` a server's outlines are indexed for.
pub fn files_under(connection: &Connection, server: &str, root: &Path) -> rusqlite::Result<u64> {
    let (low, high) = path_range(root);
    connection
        .query_row(
            "SELECT count(*) FROM files WHERE server = ?1 AND path >= ?2 AND path < ?3",
            params![server, low, high],
            |row| row.get::<_, i64>(0),
        )
        .map(|count| u64::try_from(count).unwrap_or_default())
}

/// How many files under `roots` each server's outlines are indexed for.
pub fn files_by_server(
    connection: &Connection,
    roots: &[PathBuf],
) -> rusqlite::Result<Vec<(String, u64)>> {
    let mut statement = connection.prepare_cached(
        "SELECT server, count(*) FROM files WHERE path >= ?1 AND path < ?2
         GROUP BY server",
    )?;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for root in roots {
        let (low, high) = path_range(root);
        let rows = statement.query_map(params![low, high], |row| {
            Ok((row.get::<_, String>(0)?, row.get::<_, i64>(1)?))
        })?;
        for row in rows {
            let (server, files) = row?;
            *counts.entry(server).or_default() += u64::try_from(files).unwrap_or_default();
        }
    }
    Ok(counts.into_iter().collect())
}

/// Records that a pass of `server` went over every file under `root`.
pub fn record_pass(
    connection: &Connection,
    server: &str,
    root: &Path,
    at: i64,
) -> rusqlite::Result<()> {
    connection.execute(
        "INSERT INTO passes (server, root, at) VALUES (?1, ?2, ?3)
         ON CONFLICT (server, root) DO UPDATE SET at = excluded.at",
        params![server, path_text(root), at],
    )?;
    Ok(())
}

/// The servers whose passes went over every one of `roots` (a pass over
/// a folder goes over those under it) and that have files indexed there,
/// with how many.
pub fn covering(
    connection: &Connection,
    roots: &[PathBuf],
) -> rusqlite::Result<Vec<(String, u64)>> {
    let passes: Vec<(String, PathBuf)> = {
        let mut statement = connection.prepare_cached("SELECT server, root FROM passes")?;
        statement
            .query_map([], |row| {
                Ok((row.get(0)?, PathBuf::from(row.get::<_, String>(1)?)))
            })?
            .collect::<rusqlite::Result<_>>()?
    };
    let mut servers: Vec<&String> = passes.iter().map(|(server, _)| server).collect();
    servers.sort_unstable();
    servers.dedup();
    let mut covering = Vec::new();
    for server in servers {
        let covers = |root: &PathBuf| {
            passes
                .iter()
                .any(|(by, over)| by == server && root.starts_with(over))
        };
        if !roots.is_empty() && roots.iter().all(covers) {
            let mut files = 0;
            for root in roots {
                files += files_under(connection, server, root)?;
            }
            // A server with no outline of any file (it gives none) has
            // been over nothing.
            if files > 0 {
                covering.push((server.clone(), files));
            }
        }
    }
    Ok(covering)
}

fn path_text(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// The range of path strings strictly under `root`: `/` sorts just
/// before `0`.
fn path_range(root: &Path) -> (String, String) {
    let root = path_text(root);
    let root = root.trim_end_matches('/');
    (format!("{root}/"), format!("{root}0"))
}

/// Whether `name` holds `query`, ignoring ASCII case as LIKE does.
fn holds(name: &str, query: &str) -> bool {
    name.to_ascii_lowercase()
        .contains(&query.to_ascii_lowercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(name: &str, line: u32) -> OutlineSymbol {
        OutlineSymbol {
            name: name.into(),
            kind: 12,
            container: None,
            line,
            column: 4,
            end_line: line + 2,
        }
    }

    fn outline(path: &str, names: &[&str]) -> Outline {
        Outline {
            path: PathBuf::from(path),
            stamp: Stamp {
                mtime_ns: 7,
                size: 100,
            },
            server: "python".into(),
            symbols: names
                .iter()
                .zip(0..)
                .map(|(name, line)| symbol(name, line))
                .collect(),
        }
    }

    fn names(found: &[IndexedSymbol]) -> Vec<&str> {
        let mut names: Vec<&str> = found.iter().map(|s| s.symbol.name.as_str()).collect();
        names.sort_unstable();
        names
    }

    #[test]
    fn finds_names_by_substring_ignoring_case_under_the_roots() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&dir.path().join("index.db")).unwrap();
        record(
            &mut db,
            &outline("/w/a/m.py", &["read_config", "Config", "go"]),
            1,
        )
        .unwrap();
        record(&mut db, &outline("/w/b/n.py", &["configure"]), 1).unwrap();
        let roots = [PathBuf::from("/w/a")];
        let found = lookup(&db, "config", &roots, 100).unwrap();
        assert_eq!(names(&found), ["Config", "read_config"]);
        let everywhere = [PathBuf::from("/w")];
        assert_eq!(lookup(&db, "CONFIG", &everywhere, 100).unwrap().len(), 3);
        assert_eq!(names(&lookup(&db, "go", &everywhere, 100).unwrap()), ["go"]);
        assert!(lookup(&db, "con%", &everywhere, 100).unwrap().is_empty());
        assert!(
            lookup(&db, "read-config", &everywhere, 100)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            names(&lookup(&db, "d_c", &everywhere, 100).unwrap()),
            ["read_config"]
        );
        assert!(
            lookup(&db, "g_", &everywhere, 100).unwrap().is_empty(),
            "`_` is no wildcard"
        );
        let first = lookup(&db, "config", &everywhere, 1).unwrap();
        assert_eq!(names(&first), ["Config"], "the exact match is kept");
    }

    #[test]
    fn an_outline_read_again_replaces_the_files_symbols() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&dir.path().join("index.db")).unwrap();
        record(&mut db, &outline("/w/m.py", &["old_name"]), 1).unwrap();
        record(&mut db, &outline("/w/m.py", &["new_name"]), 2).unwrap();
        let roots = [PathBuf::from("/w")];
        assert!(lookup(&db, "old_name", &roots, 10).unwrap().is_empty());
        assert_eq!(lookup(&db, "new_name", &roots, 10).unwrap().len(), 1);
        forget(&mut db, &[PathBuf::from("/w/m.py")]).unwrap();
        assert!(lookup(&db, "new_name", &roots, 10).unwrap().is_empty());
        assert!(stamps_under(&db, Path::new("/w")).unwrap().is_empty());
    }

    #[test]
    fn processes_starting_together_open_one_new_index() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        for _ in 0..5 {
            let _removed = std::fs::remove_file(&path);
            std::thread::scope(|scope| {
                let opening: Vec<_> = (0..6).map(|_| scope.spawn(|| open(&path))).collect();
                for opened in opening {
                    let opened = opened.join().unwrap();
                    assert!(opened.is_ok(), "{opened:?}");
                }
            });
        }
    }

    #[test]
    fn survives_reopening_and_is_made_again_at_another_layout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let mut db = open(&path).unwrap();
        record(&mut db, &outline("/w/m.py", &["kept"]), 1).unwrap();
        record_pass(&db, "python", Path::new("/w"), 5).unwrap();
        drop(db);
        let db = open(&path).unwrap();
        let roots = [PathBuf::from("/w")];
        assert_eq!(lookup(&db, "kept", &roots, 10).unwrap().len(), 1);
        assert_eq!(
            covering(&db, &[PathBuf::from("/w")]).unwrap(),
            [("python".to_owned(), 1)]
        );
        let under = [PathBuf::from("/w/sub")];
        assert!(
            covering(&db, &under).unwrap().is_empty(),
            "no file indexed there"
        );
        assert!(covering(&db, &[PathBuf::from("/v")]).unwrap().is_empty());
        assert_eq!(files_under(&db, "python", Path::new("/w")).unwrap(), 1);
        assert_eq!(
            files_by_server(&db, &[PathBuf::from("/w"), PathBuf::from("/v")]).unwrap(),
            [("python".to_owned(), 1)]
        );
        db.execute_batch("PRAGMA user_version = 99").unwrap();
        drop(db);
        let db = open(&path).unwrap();
        assert!(lookup(&db, "kept", &roots, 10).unwrap().is_empty());
    }

    #[test]
    fn files_without_names_are_listed_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&dir.path().join("index.db")).unwrap();
        record(&mut db, &outline("/w/a.ts", &["Shape"]), 1).unwrap();
        record(&mut db, &outline("/w/b.ts", &[]), 1).unwrap();
        record(&mut db, &outline("/x/c.ts", &[]), 1).unwrap();
        assert_eq!(
            nameless_under(&db, Path::new("/w")).unwrap(),
            vec![PathBuf::from("/w/b.ts")]
        );
    }

    #[test]
    fn top_level_symbols_come_in_file_order_without_members() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&dir.path().join("index.db")).unwrap();
        let mut shapes = outline("/w/shapes.py", &["area", "Shape"]);
        shapes.symbols[0].line = 9;
        shapes.symbols.push(OutlineSymbol {
            container: Some("Shape".into()),
            ..symbol("side", 3)
        });
        record(&mut db, &shapes, 1).unwrap();
        let asked = [PathBuf::from("/w/shapes.py"), PathBuf::from("/w/none.py")];
        let found = top_level(&db, &asked).unwrap();
        assert_eq!(found.len(), 1, "a file not indexed is left out");
        let (path, stamp, symbols) = &found[0];
        assert_eq!((path, *stamp), (&asked[0], shapes.stamp));
        let names: Vec<&str> = symbols.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["Shape", "area"]);
    }

    #[test]
    fn stamps_are_listed_only_under_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let mut db = open(&dir.path().join("index.db")).unwrap();
        record(&mut db, &outline("/w/a/m.py", &["x"]), 1).unwrap();
        record(&mut db, &outline("/w/ab/m.py", &["x"]), 1).unwrap();
        let stamps = stamps_under(&db, Path::new("/w/a")).unwrap();
        assert_eq!(stamps.keys().collect::<Vec<_>>(), [Path::new("/w/a/m.py")]);
    }
}
