//! The files a host's hook said are about to be edited, each kept as it
//! was with the outline its server gave of it (asked in the background,
//! so held as a channel that gives it once it is in), until the hook
//! after the edit asks for the edit's effect (`edit_effect.rs`). Shared
//! by the clones of a session's context.

use super::symbols::Symbol;
use crate::vocabulary::documents::DocumentSnapshot;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Files kept at most: a tool batch's, and some of edits a host refused
/// after the hook ran, which never come back for their effect.
const MAX_PREPARED: usize = 64;

/// The files about to be edited, each as it was before, most recent
/// last. Shared by the clones of a session's context.
#[derive(Clone, Default)]
pub struct PreparedEdits(Arc<Mutex<VecDeque<Prepared>>>);

pub struct Prepared {
    pub document: DocumentSnapshot,
    pub outline: watch::Receiver<Outline>,
}

#[derive(Clone)]
pub enum Outline {
    Asking,
    Given(Vec<Symbol>),
    /// The server gave none, or the file changed before it was asked.
    Missing,
}

impl PreparedEdits {
    pub fn keep(&self, prepared: Prepared) {
        let Ok(mut kept) = self.0.lock() else {
            return;
        };
        kept.retain(|known| known.document.path != prepared.document.path);
        if kept.len() == MAX_PREPARED {
            kept.pop_front();
        }
        kept.push_back(prepared);
    }

    pub fn take(&self, path: &Path) -> Option<Prepared> {
        let mut kept = self.0.lock().ok()?;
        let at = kept.iter().position(|known| known.document.path == path)?;
        kept.remove(at)
    }
}
