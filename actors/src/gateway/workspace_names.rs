//! `workspace/symbol` asked of every server a workspace-wide look-up
//! needs, with the symbol index standing in for a server it has been over
//! for the session's roots: one still loading after [`INDEX_PATIENCE`],
//! one that fails, one that is down. `search` and names asked alone both
//! ask this way.

use super::context::Context;
use super::indexing;
use crate::error::{Error, Result};
use crate::language::language_id;
use crate::messages::language_server::{LanguageServerMsg, Reply};
use crate::messages::router::ServerHandle;
use crate::messages::symbol_index::IndexAnswer;
use crate::store::index::IndexedSymbol;
use crate::vocabulary::counted::counted;
use crate::vocabulary::root_set::RootSet;
use ractor::rpc::CallResult;
use std::collections::HashMap;
use std::time::Duration;
use tokio::task::{AbortHandle, JoinSet};

/// How long a server the symbol index has been over is waited on before,
/// if it is still loading, its names are taken from the index.
const INDEX_PATIENCE: Duration = Duration::from_millis(500);
/// How long a server's actor may take to say whether it is loading.
const LOADING_REPLY: Duration = Duration::from_millis(500);

/// What every server answered, and what the index answers for those that
/// could not.
pub struct Answers {
    /// Each running server asked and its answer, as they came; a server
    /// given up on for the index is not among them.
    pub replies: Vec<(ServerHandle, Result<Reply>)>,
    /// Servers the roots need that are down.
    pub unavailable: Vec<String>,
    /// Why servers were given up on.
    pub warnings: Vec<String>,
    /// The servers whose names are the index's.
    by_index: Vec<String>,
    index: IndexAnswer,
    /// The languages of every running server, by label.
    languages: HashMap<String, Vec<String>>,
}

/// Asks every server the workspace needs for the symbols matching
/// `query`, and the index beside them.
pub async fn ask(context: &Context, roots: &RootSet, query: &str) -> Result<Answers> {
    let patience = tokio::time::Instant::now() + INDEX_PATIENCE;
    // The index is asked first, of the disk as it is now: it answers at
    // once, and says whether servers starting are worth waiting for.
    context.take_in_changes().await?;
    let index = {
        let paths = roots.roots().iter().map(|root| root.path.clone()).collect();
        indexing::lookup(context, query, paths).await
    };
    let servers = match index.covered.is_empty() {
        true => context.workspace_servers().await?,
        false => match tokio::time::timeout_at(patience, context.workspace_servers()).await {
            Ok(servers) => servers?,
            Err(_) => return Ok(Answers::starting(index)),
        },
    };
    let covers = |label: &str| index.covered.iter().any(|(server, _)| server == label);
    let mut by_index: Vec<String> = servers
        .unavailable
        .iter()
        .filter(|name| covers(name))
        .cloned()
        .collect();
    let languages = servers
        .running
        .iter()
        .map(|server| (server.label(), server.spec.languages.clone()))
        .collect();
    let mut requests = JoinSet::new();
    let mut asked: HashMap<String, (ServerHandle, AbortHandle)> = HashMap::new();
    for server in servers.running {
        let context = context.clone();
        let query = query.to_owned();
        let handle = server.clone();
        let request = requests.spawn(async move {
            let reply = context.workspace_symbols(&server, &query).await;
            (server, reply)
        });
        asked.insert(handle.label(), (handle, request));
    }
    let mut patient = true;
    let mut replies = Vec::new();
    let mut warnings = Vec::new();
    loop {
        let waits_on_indexed = asked.keys().any(|label| covers(label));
        let joined = if patient && waits_on_indexed {
            match tokio::time::timeout_at(patience, requests.join_next()).await {
                Ok(joined) => joined,
                Err(_) => {
                    patient = false;
                    for label in still_loading(&asked, &covers).await {
                        if let Some((_, request)) = asked.remove(&label) {
                            request.abort();
                        }
                        warnings.push(format!(
                            "warning: [{label}] is still loading and has not answered in {}",
                            patience_text()
                        ));
                        by_index.push(label);
                    }
                    continue;
                }
            }
        } else {
            requests.join_next().await
        };
        let Some(joined) = joined else { break };
        let Ok((server, reply)) = joined else {
            continue;
        };
        let label = server.label();
        asked.remove(&label);
        if let Err(error) = &reply
            && !matches!(error, Error::Unsupported { .. })
            && covers(&label)
        {
            by_index.push(label);
        }
        replies.push((server, reply));
    }
    let answers = Answers {
        replies,
        unavailable: servers.unavailable,
        warnings,
        by_index,
        index,
        languages,
    };
    if answers.changed() > 0 {
        tokio::spawn(indexing::read_changed(context.clone()));
    }
    Ok(answers)
}

/// [`INDEX_PATIENCE`] as answers say it.
fn patience_text() -> String {
    format!("{:.1} s", INDEX_PATIENCE.as_secs_f64())
}

/// Of the servers still asked that the index covers, those loading: a
/// loaded server that is slow is waited on, its answer being the truth.
async fn still_loading(
    asked: &HashMap<String, (ServerHandle, AbortHandle)>,
    covers: &impl Fn(&str) -> bool,
) -> Vec<String> {
    let mut loading = Vec::new();
    for (label, (server, _)) in asked {
        if !covers(label) {
            continue;
        }
        let answer = server
            .actor
            .call(LanguageServerMsg::Busyness, Some(LOADING_REPLY))
            .await;
        // A server whose actor cannot even say is in no state to answer.
        let loaded = matches!(answer, Ok(CallResult::Success(busyness)) if !busyness.loading);
        if !loaded {
            loading.push(label.clone());
        }
    }
    loading
}

impl Answers {
    /// The index's answer for every server it has been over, when the
    /// servers the roots need are still starting (a daemon just started
    /// checks and starts them): those it has not been over are named.
    fn starting(index: IndexAnswer) -> Self {
        let by_index = index
            .covered
            .iter()
            .map(|(server, _)| server.clone())
            .collect();
        let warning = format!(
            "warning: the servers are still starting after {}; a server the index has not been over is not asked",
            patience_text()
        );
        Self {
            replies: Vec::new(),
            unavailable: Vec::new(),
            warnings: vec![warning],
            by_index,
            index,
            languages: HashMap::new(),
        }
    }

    /// The index's symbols for the servers it stands in for.
    pub fn indexed(&self) -> impl Iterator<Item = &IndexedSymbol> {
        self.index
            .symbols
            .iter()
            .filter(|found| self.by_index.contains(&found.server))
    }

    /// The languages of the servers the index stands in for, as far as
    /// they are known (not for a server that is down).
    pub fn indexed_languages(&self) -> Vec<String> {
        self.by_index
            .iter()
            .filter_map(|server| self.languages.get(server))
            .flatten()
            .cloned()
            .collect()
    }

    /// What the names from the index are, and what they may lack; `None`
    /// when the index stands in for no server.
    pub fn index_note(&self) -> Option<String> {
        if self.by_index.is_empty() {
            return None;
        }
        let files: u64 = self
            .index
            .covered
            .iter()
            .filter(|(server, _)| self.by_index.contains(server))
            .map(|(_, files)| files)
            .sum();
        let servers: Vec<String> = self
            .by_index
            .iter()
            .map(|server| format!("[{server}]"))
            .collect();
        let mut note = format!(
            "note: so the names of {} marked (index) are from Windlass's index of {}, each unchanged on disk since its server outlined it",
            servers.join(", "),
            counted(files, "file"),
        );
        let changed = self.changed();
        if changed > 0 {
            note.push_str(&format!(
                "; {} changed since and not yet read again (text finds what they say)",
                counted(changed, "file")
            ));
        }
        if !self.index.checked {
            note.push_str("; files changed while Windlass was not running are found as their names come up, until its pass has compared every file");
        }
        Some(note)
    }

    /// How many of the files changed since the index read them are in the
    /// languages of the servers it stands in for (any language, for a
    /// server that is down).
    fn changed(&self) -> usize {
        if self.by_index.is_empty() {
            return 0;
        }
        self.index
            .changed
            .iter()
            .filter(|path| {
                let language = language_id(path);
                self.by_index.iter().any(|server| {
                    self.languages.get(server).is_none_or(|served| {
                        language.is_some_and(|language| served.iter().any(|one| one == language))
                    })
                })
            })
            .count()
    }
}
