//! What an edit already written did to the files it did not edit, as
//! data: the control socket carries it to the hosts' `release` hook,
//! which tells the agent of the problems the edit gave its importers and
//! includers, and of those it took away.

use super::diagnostics::FileDiagnostics;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The files an edit changed the problems of, and what was not checked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditEffect {
    /// In the order the roots show them.
    pub elsewhere: Vec<Elsewhere>,
    /// The users of what the edit changed that were not checked, or not
    /// looked for, each with why; and servers that did not answer.
    pub warnings: Vec<String>,
}

/// One file the edit did not touch whose problems it changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Elsewhere {
    pub path: PathBuf,
    /// Its problems with the edit on disk, as they are now.
    pub now: FileDiagnostics,
    /// Its problems with the edited file as it was before the edit.
    pub before: FileDiagnostics,
}
