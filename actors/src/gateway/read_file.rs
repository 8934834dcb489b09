//! The `read_file` tool: lines of one text file in the roots, numbered,
//! with the file's line count, for MCP clients that have no file tool of
//! their own. Binary files are refused naming what they are, and files
//! the roots' `.gitignore` leaves out are refused unless asked for.

use super::context::Context;
use crate::error::{Error, Result};
use crate::vocabulary::counted::counted;
use crate::vocabulary::root_set::RootSet;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    pub file: String,
    /// First line, 1-based.
    pub start: Option<usize>,
    /// Last line, included.
    pub end: Option<usize>,
    pub include_ignored: Option<bool>,
}

/// Files larger than this are not read: a text file this big is data,
/// and counting its lines would hold a thread for seconds.
const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;
/// How much of a file decides whether it is text.
const SNIFF_BYTES: usize = 8 * 1024;

pub async fn read_file(context: &Context, args: &ReadFileArgs) -> Result<String> {
    let (roots, path) = context.resolve(&args.file).await?;
    let args = args.clone();
    let max_bytes = context.settings.max_output_bytes;
    tokio::task::spawn_blocking(move || read_lines(&roots, &path, &args, max_bytes))
        .await
        .map_err(|_| Error::ShuttingDown)?
}

fn read_lines(
    roots: &RootSet,
    path: &Path,
    args: &ReadFileArgs,
    max_bytes: usize,
) -> Result<String> {
    let given = &args.file;
    if path.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{given} is a directory; list_directory lists it"
        )));
    }
    if !args.include_ignored.unwrap_or(false) && is_ignored(roots, path) {
        return Err(Error::InvalidArgument(format!(
            "{given} is ignored by .gitignore; ask with include_ignored to read it"
        )));
    }
    let unreadable = |error: std::io::Error| Error::InvalidArgument(format!("{given}: {error}"));
    let size = std::fs::metadata(path).map_err(unreadable)?.len();
    if size > MAX_FILE_BYTES {
        return Err(Error::InvalidArgument(format!(
            "{given} is {} MB, more than read_file reads ({} MB)",
            size / (1024 * 1024),
            MAX_FILE_BYTES / (1024 * 1024)
        )));
    }
    let bytes = std::fs::read(path).map_err(unreadable)?;
    if let Some(kind) = binary_kind(&bytes) {
        return Err(Error::InvalidArgument(format!(
            "{given} is a binary file ({kind}), not text"
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    let display = roots.display(path);
    Ok(numbered(&display, &text, args.start, args.end, max_bytes))
}

/// The lines `start`–`end` of `text` under a heading, each with its
/// number, stopping before `max_bytes` with a marker that says where to
/// go on.
fn numbered(
    display: &str,
    text: &str,
    start: Option<usize>,
    end: Option<usize>,
    max_bytes: usize,
) -> String {
    let total = text.lines().count();
    if total == 0 {
        return format!("{display}: empty");
    }
    let first = start.unwrap_or(1).max(1);
    let last = end.unwrap_or(total).min(total);
    if first > last {
        return format!(
            "{display}: has {}; nothing in lines {first}-{}",
            counted(total, "line"),
            end.unwrap_or(first)
        );
    }
    let width = last.to_string().len();
    let mut lines = vec![format!(
        "{display}: lines {first}-{last} of {}",
        counted(total, "line")
    )];
    let mut used = lines[0].len() + 1;
    for (index, line) in text
        .lines()
        .enumerate()
        .skip(first - 1)
        .take(last + 1 - first)
    {
        let number = index + 1;
        let mut entry = format!("{number:>width$}  {line}");
        let room = max_bytes.saturating_sub(used + MARKER_ROOM);
        if entry.len() > room {
            if number == first {
                entry.truncate(floor_char_boundary(&entry, room));
                lines.push(format!("{entry} … (line cut at {max_bytes} bytes)"));
                if number < last {
                    lines.push(resume_marker(number + 1, last));
                }
            } else {
                lines.push(resume_marker(number, last));
            }
            return lines.join("\n");
        }
        used += entry.len() + 1;
        lines.push(entry);
    }
    lines.join("\n")
}

/// What the truncation marker may take, kept free below the limit.
const MARKER_ROOM: usize = 96;

fn resume_marker(next: usize, last: usize) -> String {
    format!("… truncated: lines {next}-{last} not shown; ask again with start={next}")
}

/// The largest char boundary of `text` at or below `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut index = index.min(text.len());
    while !text.is_char_boundary(index) {
        index -= 1;
    }
    index
}

/// What a file is, when it is not text: by its leading bytes where they
/// name a format, else "binary data" when it holds a NUL or is not UTF-8.
fn binary_kind(bytes: &[u8]) -> Option<&'static str> {
    const SIGNATURES: [(&[u8], &str); 14] = [
        (b"\x89PNG\r\n\x1a\n", "PNG image"),
        (b"\xff\xd8\xff", "JPEG image"),
        (b"GIF87a", "GIF image"),
        (b"GIF89a", "GIF image"),
        (b"%PDF-", "PDF document"),
        (b"PK\x03\x04", "zip archive"),
        (b"\x1f\x8b", "gzip data"),
        (b"\x7fELF", "ELF executable"),
        (b"\0asm", "WebAssembly module"),
        (b"SQLite format 3\0", "SQLite database"),
        (b"MZ", "Windows executable"),
        (b"\xfe\xed\xfa\xcf", "Mach-O executable"),
        (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
        (b"\x28\xb5\x2f\xfd", "zstd data"),
    ];
    if let Some((_, kind)) = SIGNATURES
        .iter()
        .find(|(signature, _)| bytes.starts_with(signature))
    {
        return Some(kind);
    }
    let head = &bytes[..bytes.len().min(SNIFF_BYTES)];
    if head.contains(&0) {
        return Some("binary data");
    }
    match std::str::from_utf8(head) {
        Ok(_) => None,
        // A multi-byte character cut by the sniff's end is still text.
        Err(error) if error.error_len().is_none() => None,
        Err(_) => Some("binary data, not UTF-8"),
    }
}

/// Whether the roots' `.gitignore` files leave the file out, as git
/// reads them: a folder left out hides everything in it, and otherwise
/// the deepest file with a pattern for the path decides.
fn is_ignored(roots: &RootSet, path: &Path) -> bool {
    let Some(root) = roots.root_of(path) else {
        return false;
    };
    let mut folders: Vec<&Path> = path
        .ancestors()
        .skip(1)
        .take_while(|folder| folder.starts_with(&root.path))
        .collect();
    folders.reverse();
    let gitignores: Vec<Gitignore> = folders
        .iter()
        .filter_map(|folder| gitignore_in(folder))
        .collect();
    let hidden_folder = folders
        .iter()
        .skip(1)
        .any(|folder| left_out(&gitignores, folder, true));
    hidden_folder || left_out(&gitignores, path, false)
}

/// The `.gitignore` of one folder, if it has one that reads.
fn gitignore_in(folder: &Path) -> Option<Gitignore> {
    let file = folder.join(".gitignore");
    if !file.is_file() {
        return None;
    }
    let mut builder = GitignoreBuilder::new(folder);
    if builder.add(&file).is_some() {
        return None;
    }
    builder.build().ok()
}

/// Whether the deepest of `gitignores` with a pattern for `path` leaves
/// it out.
fn left_out(gitignores: &[Gitignore], path: &Path, is_dir: bool) -> bool {
    let mut ignored = false;
    for gitignore in gitignores
        .iter()
        .filter(|gitignore| path.starts_with(gitignore.path()))
    {
        match gitignore.matched(path, is_dir) {
            ignore::Match::Ignore(_) => ignored = true,
            ignore::Match::Whitelist(_) => ignored = false,
            ignore::Match::None => {}
        }
    }
    ignored
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    const TEXT: &str = "one\ntwo\nthree\nfour\nfive\n";

    #[test]
    fn a_range_is_numbered_under_the_files_line_count() {
        assert_eq!(
            numbered("a.txt", TEXT, Some(2), Some(3), 1_000),
            "a.txt: lines 2-3 of 5 lines\n2  two\n3  three"
        );
        assert_eq!(
            numbered("a.txt", TEXT, None, Some(99), 1_000),
            "a.txt: lines 1-5 of 5 lines\n1  one\n2  two\n3  three\n4  four\n5  five"
        );
        assert_eq!(
            numbered("a.txt", TEXT, Some(7), None, 1_000),
            "a.txt: has 5 lines; nothing in lines 7-7"
        );
        assert_eq!(numbered("a.txt", "", None, None, 1_000), "a.txt: empty");
    }

    #[test]
    fn past_the_cap_a_marker_says_where_to_go_on() {
        let text: String = (1..=100).map(|n| format!("line {n}\n")).collect();
        let answer = numbered("a.txt", &text, None, None, 200);
        assert!(answer.len() <= 200, "{answer}");
        let last = answer.lines().last().unwrap();
        assert!(last.starts_with("… truncated: lines "), "{answer}");
        let next: usize = last.rsplit("start=").next().unwrap().parse().unwrap();
        let shown = answer.lines().nth(answer.lines().count() - 2).unwrap();
        assert!(shown.ends_with(&format!("line {}", next - 1)), "{answer}");
    }

    #[test]
    fn one_line_longer_than_the_cap_is_cut_on_a_character() {
        let text = format!("{}\nnext\n", "é".repeat(500));
        let answer = numbered("a.txt", &text, None, None, 300);
        assert!(answer.len() <= 300, "{}", answer.len());
        assert!(answer.contains("… (line cut at 300 bytes)"), "{answer}");
        assert!(answer.ends_with("ask again with start=2"), "{answer}");
    }

    #[test]
    fn binary_files_are_named_by_their_leading_bytes() {
        assert_eq!(binary_kind(b"\x89PNG\r\n\x1a\n...."), Some("PNG image"));
        assert_eq!(binary_kind(b"\x7fELF\x02\x01"), Some("ELF executable"));
        assert_eq!(binary_kind(b"text\0more"), Some("binary data"));
        assert_eq!(
            binary_kind(b"caf\xe9 au lait"),
            Some("binary data, not UTF-8")
        );
        assert_eq!(binary_kind("naïve text".as_bytes()), None);
        let mut cut = vec![b'a'; SNIFF_BYTES - 1];
        cut.extend("é".as_bytes());
        assert_eq!(binary_kind(&cut), None, "a character cut by the sniff");
    }

    #[test]
    fn gitignore_files_are_read_as_git_reads_them() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("build/keep")).unwrap();
        fs::create_dir_all(root.join("logs")).unwrap();
        fs::write(root.join(".gitignore"), "build/\n*.log\n").unwrap();
        fs::write(root.join("build/keep/.gitignore"), "!wanted.txt\n").unwrap();
        fs::write(root.join("logs/.gitignore"), "!keep.log\n").unwrap();
        let files = [
            "a.log",
            "a.txt",
            "build/out.txt",
            "build/keep/wanted.txt",
            "logs/keep.log",
            "logs/other.log",
        ];
        for file in files {
            fs::write(root.join(file), "x").unwrap();
        }
        let roots = RootSet::new(std::slice::from_ref(&root)).unwrap();
        let ignored = |file: &str| is_ignored(&roots, &root.join(file));
        assert!(ignored("a.log") && !ignored("a.txt"));
        assert!(ignored("build/out.txt"));
        assert!(
            ignored("build/keep/wanted.txt"),
            "git never looks inside a folder left out"
        );
        assert!(!ignored("logs/keep.log") && ignored("logs/other.log"));
    }
}
