//! Diagnostics asked for (`textDocument/diagnostic`) rather than waited
//! for: a server that answers it computes the answer against the text it
//! holds when asked, so the answer is fresh by definition and no
//! publication, progress or CPU sample has to tell when it is done.
//!
//! A server is asked when its configuration says so (a server that
//! publishes nothing, such as tsgo; pyright, which checks a document it is
//! asked about at once but publishes only a quarter of a second after the
//! last change), or once it has shown that it
//! publishes nothing while announcing `diagnosticProvider`; one that then
//! refuses the question as an unknown method is waited for again, and
//! never asked again. The question
//! travels the request path like any other: held while the server loads,
//! within its session's share, shared with identical questions, sent again
//! after `ContentModified`, handed to the next process on a restart.

use super::diagnostics::Asking;
use super::watched::registrations;
use super::{Phase, State};
use crate::error::{Error, Result};
use crate::lsp::protocol::{Capabilities, Feature, TSSERVER_REQUEST};
use crate::messages::language_server::{
    Call, DiagnosticsCall, DiagnosticsReply, LanguageServerMsg, Reply, ServerRequest,
};
use crate::messages::recorder::{RecorderMsg, server_event};
use crate::vocabulary::events::EventKind;
use crate::vocabulary::ids::ServerId;
use ractor::ActorRef;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::oneshot;

/// The method that asks.
const METHOD: &str = "textDocument/diagnostic";
/// JSON-RPC's code for a method the server does not handle.
pub(super) const METHOD_NOT_FOUND: i64 = -32601;

impl State {
    /// Whether this server's diagnostics are asked for.
    pub(super) fn pulls(&self) -> bool {
        self.diagnostics.observations.asking == Asking::Yes
    }

    /// From now on, asks a server that announced `diagnosticProvider` (or
    /// tsserver's command, `tsserver_diagnostics.rs`) for its diagnostics;
    /// returns whether it can be asked: it announced it, and has not
    /// refused it since.
    pub(super) fn start_pulling(&mut self, capabilities: &Capabilities) -> bool {
        let announced = match self.spec.tsserver_commands {
            true => capabilities.runs_command(TSSERVER_REQUEST),
            false => capabilities.supports(Feature::PullDiagnostics),
        };
        let asking = &mut self.diagnostics.observations.asking;
        let can = announced && *asking != Asking::Refused;
        if can && *asking == Asking::No {
            tracing::info!(server = %self.spec.name, "diagnostics of this server are asked for");
            *asking = Asking::Yes;
        }
        can
    }

    /// The server registered capabilities after it started: one that
    /// registers diagnostics on request (pyright does, and only then
    /// answers them) is asked from now on, the callers already waiting for
    /// a publication included.
    pub(super) fn capabilities_registered(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        params: &Value,
    ) {
        let Phase::Ready(capabilities) = &self.phase else {
            return;
        };
        let mut updated = None;
        for registration in registrations(params) {
            let options = registration.register_options.unwrap_or(Value::Null);
            let current = updated.as_ref().unwrap_or(capabilities.as_ref());
            if let Some(registered) = current.registered(&registration.method, &options) {
                updated = Some(registered);
            }
        }
        let Some(capabilities) = updated else {
            return;
        };
        let can_pull = self.spec.pull_diagnostics && self.start_pulling(&capabilities);
        self.phase = Phase::Ready(Arc::new(capabilities));
        if can_pull {
            let waiting: Vec<u64> = self.waits.keys().copied().collect();
            for id in waiting {
                if let Some(parked) = self.waits.remove(&id) {
                    self.pull_diagnostics(myself, parked.into_call(), Vec::new());
                }
            }
        }
    }

    /// The server refused to be asked: waits for its publications from
    /// now on, this caller first.
    pub(super) fn pull_refused(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: DiagnosticsCall,
    ) {
        if self.pulls() {
            tracing::info!(server = %self.spec.name, "the server refused to be asked for diagnostics: its publications are waited for");
        }
        self.diagnostics.observations.asking = Asking::Refused;
        self.diagnostics(myself, call);
    }

    /// Asks the server for the diagnostics of `call.document` as it is
    /// now; the caller is answered when the server answers.
    /// Asks the server for the diagnostics of the caller's document, and
    /// answers with them and `besides` (what the server publishes but
    /// does not give when asked).
    pub(super) fn pull_diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: DiagnosticsCall,
        besides: Vec<Value>,
    ) {
        let DiagnosticsCall {
            session,
            document,
            reply,
        } = call;
        let uri = document.uri.clone();
        let asked = document.clone();
        let request = ServerRequest {
            method: METHOD,
            params: json!({"textDocument": {"uri": uri}}),
            document: Some(document),
            position: None,
            capability: Some(Feature::PullDiagnostics),
            background: false,
        };
        let (answered, answer) = oneshot::channel::<Result<Reply>>();
        let report = Report::new(self, uri);
        let inbox = myself.clone();
        tokio::spawn(async move {
            let answer = match answer.await {
                Ok(answer) => answer,
                Err(_) => Err(Error::ShuttingDown),
            };
            match answer {
                Err(Error::ServerError { code, .. }) if code == METHOD_NOT_FOUND => {
                    let call = DiagnosticsCall {
                        session,
                        document: asked,
                        reply,
                    };
                    let _stopped = inbox.send_message(LanguageServerMsg::PullRefused(call));
                }
                answer => {
                    let answer = answer
                        .and_then(|reply| report.read(reply))
                        .map(|pulled| with_besides(pulled, besides));
                    drop(reply.send(answer));
                }
            }
        });
        self.request(
            myself,
            Call {
                session,
                request,
                reply: answered.into(),
            },
        );
    }
}

/// What is needed to read and record one server's answer off its actor.
pub(super) struct Report {
    /// As events name it.
    name: String,
    id: ServerId,
    uri: String,
    recorder: ActorRef<RecorderMsg>,
}

impl Report {
    pub(super) fn new(state: &State, uri: String) -> Self {
        Self {
            name: state.spec.name.clone(),
            id: state.id,
            uri,
            recorder: state.recorder.clone(),
        }
    }

    fn read(self, reply: Reply) -> Result<DiagnosticsReply> {
        let items = items_of(&reply)?;
        Ok(self.answer(items, reply))
    }

    /// Records the answer's diagnostics, and gives them to the caller.
    pub(super) fn answer(self, items: Vec<Value>, reply: Reply) -> DiagnosticsReply {
        let _stopped = self.recorder.send_message(server_event(
            EventKind::Diagnostics,
            &self.name,
            self.id,
            json!({"uri": self.uri, "count": items.len(), "pulled": true}),
        ));
        DiagnosticsReply {
            items: Some(items.into()),
            encoding: reply.encoding,
            file_problem: reply.file_problem,
            warnings: reply.warnings,
        }
    }
}

/// The diagnostics asked for, and those kept beside them.
fn with_besides(pulled: DiagnosticsReply, besides: Vec<Value>) -> DiagnosticsReply {
    if besides.is_empty() {
        return pulled;
    }
    let mut items: Vec<Value> = pulled.items.as_deref().unwrap_or_default().to_vec();
    items.extend(besides);
    DiagnosticsReply {
        items: Some(items.into()),
        ..pulled
    }
}

/// A document diagnostic report, read only as far as Windlass uses it:
/// the diagnostics stay JSON until the gateway reads each one, so that one
/// a server wrote wrong costs only itself.
#[derive(Deserialize)]
struct PulledReport {
    kind: String,
    #[serde(default)]
    items: Vec<Value>,
}

/// The diagnostics of a report. Windlass never names a previous result,
/// so a server must answer with the full set.
fn items_of(reply: &Reply) -> Result<Vec<Value>> {
    let report: PulledReport = reply.read(Feature::PullDiagnostics)?;
    match report.kind.as_str() {
        "full" => Ok(report.items),
        other => Err(Error::Malformed {
            server: reply.server.clone(),
            detail: format!(
                "it answered a request for diagnostics with a `{other}` report, though no earlier result was named"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_report_gives_its_items_and_any_other_kind_is_malformed() {
        let full = Reply::bare(json!({"kind": "full", "items": [{"message": "x"}, 7]}));
        assert_eq!(items_of(&full).unwrap().len(), 2);
        let unchanged = Reply::bare(json!({"kind": "unchanged", "resultId": "1"}));
        let error = items_of(&unchanged).unwrap_err().to_string();
        assert!(error.contains("`unchanged` report"), "{error}");
        assert!(matches!(
            items_of(&Reply::bare(json!([]))),
            Err(Error::Malformed { .. })
        ));
    }
}
