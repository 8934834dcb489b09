//! A file's text as one tool call read it, and a position in it as agents
//! give it: what a tool hands the server that answers it.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Files larger than this are not opened in a server.
pub const MAX_DOCUMENT_BYTES: u64 = 16 * 1024 * 1024;

/// Why a file cannot be opened in a server.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("is not a file")]
    NotAFile,
    #[error("is larger than {MAX_DOCUMENT_BYTES} bytes")]
    TooLarge,
    #[error("is not UTF-8 text")]
    NotText,
    #[error("could not be read: {0}")]
    Io(#[from] std::io::Error),
}

/// A file's content as read from disk for one tool call, or as an edit
/// would make it (`check_edit`), never written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentSnapshot {
    pub path: PathBuf,
    pub uri: String,
    pub language_id: String,
    pub text: Arc<str>,
    pub hash: u64,
    /// Whether this is the text on disk: a server is told a text was
    /// saved only when it was.
    pub on_disk: bool,
}

impl DocumentSnapshot {
    /// Reads a file as a server should see it, in its language (the
    /// language table's id, which the caller looks up; plain text when it
    /// has none). Plain blocking reads: source files are small, and a hop
    /// to tokio's blocking pool per call costs more than the read itself.
    pub fn read(path: &Path, language_id: Option<&str>) -> Result<Self, ReadError> {
        let language = language_id.unwrap_or("plaintext");
        let metadata = std::fs::metadata(path)?;
        if !metadata.is_file() {
            return Err(ReadError::NotAFile);
        }
        if metadata.len() > MAX_DOCUMENT_BYTES {
            return Err(ReadError::TooLarge);
        }
        let text = String::from_utf8(std::fs::read(path)?).map_err(|_| ReadError::NotText)?;
        Ok(Self::new(path.to_path_buf(), language, text))
    }

    pub fn new(path: PathBuf, language_id: &str, text: String) -> Self {
        let mut hasher = DefaultHasher::new();
        text.hash(&mut hasher);
        Self {
            uri: crate::lsp::uri::path_to_uri(&path),
            path,
            language_id: language_id.to_owned(),
            hash: hasher.finish(),
            text: text.into(),
            on_disk: true,
        }
    }

    /// The same document with `text` as an edit would make it: not on
    /// disk.
    pub fn unsaved(&self, text: String) -> Self {
        Self {
            on_disk: false,
            ..Self::new(self.path.clone(), &self.language_id, text)
        }
    }
}

/// A position in a document as agents give it: 0-based line, 0-based
/// column in Unicode code points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextPosition {
    pub line: usize,
    pub column: usize,
}
