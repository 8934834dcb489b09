//! `workspace/symbol` asked of every server a workspace-wide look-up
//! needs, with the symbol index standing in for a server it has been over
//! for the session's roots: one still loading, one whose last answer took
//! longer than [`INDEX_PATIENCE`], one that has not answered within it,
//! one that fails, one that is down. `search` and names asked alone both
//! ask this way.

use super::context::Context;
use super::indexing;
use crate::error::{Error, Result};
use crate::language::language_id;
use crate::messages::language_server::{Busyness, LanguageServerMsg, Reply, SymbolsPace};
use crate::messages::router::ServerHandle;
use crate::messages::symbol_index::IndexAnswer;
use crate::store::index::IndexedSymbol;
use crate::vocabulary::counted::counted;
use crate::vocabulary::root_set::RootSet;
use ractor::rpc::CallResult;
use std::collections::HashMap;
use std::time::Duration;
use tokio::task::{AbortHandle, JoinSet};

/// How long a server the symbol index has been over is waited on before
/// its names are taken from the index.
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
    /// The languages of every configured server, by label.
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
            Err(_) => return Ok(Answers::starting(index, languages_of(context))),
        },
    };
    let covers = |label: &str| index.covered.iter().any(|(server, _)| server == label);
    let mut by_index: Vec<String> = servers
        .unavailable
        .iter()
        .filter(|name| covers(name))
        .cloned()
        .collect();
    let languages = languages_of(context);
    let covered = servers
        .running
        .iter()
        .filter(|server| covers(&server.label()));
    let mut warnings = Vec::new();
    let aside = not_worth_waiting_for(covered.cloned().collect()).await;
    let mut requests = JoinSet::new();
    let mut asked: HashMap<String, AbortHandle> = HashMap::new();
    for server in servers.running {
        let label = server.label();
        if let Some(reason) = aside.get(&label) {
            warnings.push(reason.clone());
            by_index.push(label);
            continue;
        }
        let context = context.clone();
        let query = query.to_owned();
        let request = requests.spawn(async move {
            let reply = within_limit(&context, &server, &query).await;
            (server, reply)
        });
        asked.insert(label, request);
    }
    let mut patient = true;
    let mut replies = Vec::new();
    loop {
        let waits_on_indexed = asked.keys().any(|label| covers(label));
        let joined = if patient && waits_on_indexed {
            match tokio::time::timeout_at(patience, requests.join_next()).await {
                Ok(joined) => joined,
                Err(_) => {
                    patient = false;
                    let late: Vec<String> = asked
                        .keys()
                        .filter(|label| covers(label))
                        .cloned()
                        .collect();
                    for label in late {
                        if let Some(request) = asked.remove(&label) {
                            request.abort();
                        }
                        warnings.push(format!(
                            "warning: [{label}] has not answered in {}",
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

/// The languages of every configured server, by label.
fn languages_of(context: &Context) -> HashMap<String, Vec<String>> {
    context
        .settings
        .servers
        .iter()
        .map(|spec| (spec.label(), spec.languages.clone()))
        .collect()
}

/// A server's workspace symbols, waited for as long as one request may
/// take, whether the server is loading first or answering: a loading
/// server's question is held until it is ready, and on a tree it has
/// never seen that hold and the answer each took most of the limit (43 s
/// for pyright beside 16 agents on a million lines). Past it the search
/// answers with the others' names and says this one timed out.
async fn within_limit(context: &Context, server: &ServerHandle, query: &str) -> Result<Reply> {
    let limit = context.settings.request_timeout;
    match tokio::time::timeout(limit, context.workspace_symbols(server, query)).await {
        Ok(reply) => reply,
        Err(_) => Err(Error::Timeout {
            server: server.label(),
            method: "workspace/symbol".into(),
            after: limit,
        }),
    }
}

/// [`INDEX_PATIENCE`] as answers say it.
fn patience_text() -> String {
    format!("{:.1} s", INDEX_PATIENCE.as_secs_f64())
}

/// Of the servers the index covers, those not worth asking, with why:
/// one still loading would answer late or partly, and one whose last
/// workspace symbols took longer than the patience would again (pyright
/// took 5 to 8 s for each on a million lines, work that 16 agents'
/// searches would have kept it at). Their actors are asked together.
async fn not_worth_waiting_for(servers: Vec<ServerHandle>) -> HashMap<String, String> {
    let mut asked = JoinSet::new();
    for server in servers {
        asked.spawn(async move {
            let answer = server
                .actor
                .call(LanguageServerMsg::Busyness, Some(LOADING_REPLY))
                .await;
            (server.label(), answer)
        });
    }
    let mut aside = HashMap::new();
    while let Some(Ok((label, answer))) = asked.join_next().await {
        let reason = match answer {
            Ok(CallResult::Success(busyness)) => why_not_wait(&label, &busyness),
            // A server whose actor cannot even say is in no state to answer.
            _ => Some(format!(
                "warning: [{label}] did not say whether it can answer"
            )),
        };
        if let Some(reason) = reason {
            aside.insert(label, reason);
        }
    }
    aside
}

fn why_not_wait(label: &str, busyness: &Busyness) -> Option<String> {
    if busyness.loading {
        return Some(format!("warning: [{label}] is still loading"));
    }
    let pace = busyness
        .symbols
        .filter(|pace| pace.took() > INDEX_PATIENCE)?;
    Some(match pace {
        SymbolsPace::Working(took) => format!(
            "note: [{label}] has been working on workspace symbols for {:.1} s",
            took.as_secs_f64()
        ),
        SymbolsPace::Answered(took) => format!(
            "note: [{label}] took {:.1} s to answer workspace symbols the last time",
            took.as_secs_f64()
        ),
        SymbolsPace::TimedOut(took) => format!(
            "note: [{label}] did not answer workspace symbols within {} s the last time",
            took.as_secs()
        ),
    })
}

impl Answers {
    /// The index's answer for every server it has been over, when the
    /// servers the roots need are still starting (a daemon just started
    /// checks and starts them): those it has not been over are named.
    fn starting(index: IndexAnswer, languages: HashMap<String, Vec<String>>) -> Self {
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
            languages,
        }
    }

    /// The index's symbols for the servers it stands in for.
    pub fn indexed(&self) -> impl Iterator<Item = &IndexedSymbol> {
        self.index
            .symbols
            .iter()
            .filter(|found| self.by_index.contains(&found.server))
    }

    /// The languages of the servers the index stands in for.
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
    /// server no longer configured).
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
