//! The files a patch names, as the `apply_patch` tools of Codex, Copilot
//! CLI and OpenCode write them: `*** Add File: P`, `*** Update File: P`
//! (optionally followed by `*** Move to: Q`) and `*** Delete File: P`
//! headers between `*** Begin Patch` and `*** End Patch`. Pure: the hooks
//! resolve the paths.

use std::path::PathBuf;

/// What marks a tool's input text as a patch.
pub const BEGIN: &str = "*** Begin Patch";

/// One file a patch touches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patched {
    /// As the patch names it: relative to the host's directory, or
    /// absolute.
    pub path: PathBuf,
    /// The patch removes it (deleted, or moved away from).
    pub removed: bool,
}

/// Every file `patch` touches, each once, in the order the patch names
/// them; a moved file is its old path (removed) and its new one.
pub fn files(patch: &str) -> Vec<Patched> {
    let mut files: Vec<Patched> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        let (path, removed) = if let Some(path) = line.strip_prefix("*** Add File: ") {
            (path, false)
        } else if let Some(path) = line.strip_prefix("*** Update File: ") {
            (path, false)
        } else if let Some(path) = line.strip_prefix("*** Delete File: ") {
            (path, true)
        } else if let Some(path) = line.strip_prefix("*** Move to: ") {
            // The file updated just before moves here: its old path goes.
            if let Some(moved) = files.last_mut() {
                moved.removed = true;
            }
            (path, false)
        } else {
            continue;
        };
        let path = PathBuf::from(path.trim());
        if path.as_os_str().is_empty() {
            continue;
        }
        match files.iter_mut().find(|file| file.path == path) {
            Some(known) => known.removed = removed,
            None => files.push(Patched { path, removed }),
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patched(path: &str, removed: bool) -> Patched {
        Patched {
            path: PathBuf::from(path),
            removed,
        }
    }

    #[test]
    fn every_header_names_its_file_and_a_move_removes_the_old_path() {
        let patch = "*** Begin Patch\n\
            *** Add File: pkg/new.py\n\
            +x = 1\n\
            *** Update File: pkg/app.py\n\
            @@ def f():\n\
            -    return 1\n\
            +    return 2\n\
            *** Update File: old/name.py\n\
            *** Move to: new/name.py\n\
            @@\n\
            -a\n\
            +b\n\
            *** Delete File: /abs/gone.py\n\
            *** End Patch\n";
        assert_eq!(
            files(patch),
            vec![
                patched("pkg/new.py", false),
                patched("pkg/app.py", false),
                patched("old/name.py", true),
                patched("new/name.py", false),
                patched("/abs/gone.py", true),
            ]
        );
    }

    #[test]
    fn crlf_lines_repeated_files_and_text_that_only_mentions_headers() {
        let patch = "*** Begin Patch\r\n*** Update File: a.py\r\n+print('*** Add File: b.py')\r\n*** Update File: a.py\r\n*** End Patch\r\n";
        assert_eq!(files(patch), vec![patched("a.py", false)]);
        assert!(files("no patch here").is_empty());
        assert!(files("*** Add File: \n").is_empty());
    }
}
