//! Diagnostics asked of tsserver itself, through typescript-language-server's
//! `typescript.tsserverRequest` command, rather than waited for.
//!
//! typescript-language-server publishes a document's diagnostics each time
//! one of tsserver's three checks of it (syntax, semantics, suggestions)
//! reports, together with the last report of the other two, and no
//! version says which text they were of: after a change, a publication can
//! hold the new text's syntax beside the old text's type errors. Sixteen
//! agents editing their own files at once had 2 answers in 128 name an
//! error that a file made clean again no longer had. tsserver's
//! `*DiagnosticsSync` commands check the text tsserver holds when asked,
//! and the change went before them down the same pipe, so their answer is
//! the document's as it is now. A server that cannot run the command is
//! waited for again, as one that refuses `textDocument/diagnostic` is
//! (`pull.rs`).

use super::State;
use super::pull::{METHOD_NOT_FOUND, Report};
use crate::error::{Error, Result};
use crate::lsp::protocol::TSSERVER_REQUEST;
use crate::lsp::tsserver::range;
use crate::lsp::uri::path_to_uri;
use crate::messages::language_server::{
    Call, DiagnosticsCall, DiagnosticsReply, LanguageServerMsg, Reply, ServerRequest,
};
use crate::vocabulary::documents::DocumentSnapshot;
use crate::vocabulary::ids::SessionId;
use ractor::{ActorRef, RpcReplyPort};
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// tsserver's checks of one file, in the order it runs them.
const CHECKS: [&str; 3] = [
    "syntacticDiagnosticsSync",
    "semanticDiagnosticsSync",
    "suggestionDiagnosticsSync",
];
/// The languages tsserver checks: its own, and Vue's components, which a
/// server given the Vue plugin takes in (the plugin maps the checks of
/// their compiled TypeScript back onto the component's text).
const LANGUAGES: [&str; 5] = [
    "typescript",
    "typescriptreact",
    "javascript",
    "javascriptreact",
    "vue",
];

impl State {
    /// Whether this server's diagnostics of `language` are asked of tsserver.
    pub(super) fn asks_tsserver(&self, language: &str) -> bool {
        self.spec.tsserver_commands && LANGUAGES.contains(&language)
    }

    /// Asks tsserver for each of its checks of `call.document` as it is
    /// now; the caller is answered with all three together.
    pub(super) fn ask_tsserver_diagnostics(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        call: DiagnosticsCall,
    ) {
        let DiagnosticsCall {
            session,
            document,
            reply,
        } = call;
        let file = document.path.to_string_lossy().into_owned();
        let mut answers = Vec::new();
        for check in CHECKS {
            let (answered, answer) = oneshot::channel::<Result<Reply>>();
            answers.push(answer);
            let request = ServerRequest {
                method: "workspace/executeCommand",
                params: json!({"command": TSSERVER_REQUEST, "arguments": [check, {"file": file}]}),
                document: Some(document.clone()),
                position: None,
                capability: None,
                background: false,
            };
            self.request(
                myself,
                Call {
                    session,
                    request,
                    reply: answered.into(),
                },
            );
        }
        let report = Report::new(self, document.uri.clone());
        let inbox = myself.clone();
        tokio::spawn(async move {
            let mut items = Vec::new();
            let mut last = None;
            for answer in answers {
                let checked = match answer.await {
                    Ok(checked) => checked,
                    Err(_) => Err(Error::ShuttingDown),
                };
                match checked.map(|reply| (diagnostics_of(&reply), reply)) {
                    Ok((Checked::Found(mut found), reply)) => {
                        items.append(&mut found);
                        last = Some(reply);
                    }
                    Ok((Checked::Failed(detail), answered)) => {
                        let error = Error::Diagnostics {
                            server: answered.server,
                            detail: format!("tsserver could not check the file: {detail}"),
                        };
                        return drop(reply.send(Err(error)));
                    }
                    Ok((Checked::Refused, _)) => return refused(&inbox, session, document, reply),
                    Err(Error::ServerError { code, .. }) if code == METHOD_NOT_FOUND => {
                        return refused(&inbox, session, document, reply);
                    }
                    Err(error) => return drop(reply.send(Err(error))),
                }
            }
            let answer = match last {
                Some(last) => Ok(report.answer(items, last)),
                None => Err(Error::ShuttingDown),
            };
            drop(reply.send(answer));
        });
    }
}

/// The server could not run the command: its publications are waited for
/// from now on, this caller's first.
fn refused(
    inbox: &ActorRef<LanguageServerMsg>,
    session: SessionId,
    document: DocumentSnapshot,
    reply: RpcReplyPort<Result<DiagnosticsReply>>,
) {
    let call = DiagnosticsCall {
        session,
        document,
        reply,
    };
    let _stopped = inbox.send_message(LanguageServerMsg::PullRefused(call));
}

/// What one tsserver check answered.
#[derive(Debug, PartialEq)]
enum Checked {
    /// Its diagnostics, as LSP has them.
    Found(Vec<Value>),
    /// tsserver could not check the file, and said why.
    Failed(String),
    /// No tsserver response: the command is not there to run.
    Refused,
}

fn diagnostics_of(reply: &Reply) -> Checked {
    let response = &reply.result;
    if response.get("success") == Some(&Value::Bool(false)) {
        let message = response.get("message").and_then(Value::as_str);
        return Checked::Failed(message.unwrap_or("no reason given").to_owned());
    }
    let Some(body) = response.get("body").and_then(Value::as_array) else {
        return Checked::Refused;
    };
    Checked::Found(
        body.iter()
            .map(|diagnostic| as_lsp(diagnostic).unwrap_or_else(|| diagnostic.clone()))
            .collect(),
    )
}

/// One tsserver diagnostic as an LSP one, as typescript-language-server
/// publishes it; `None` for one not as tsserver writes them (kept as it
/// came, for the gateway to say it could not read it).
fn as_lsp(diagnostic: &Value) -> Option<Value> {
    let severity = match diagnostic.get("category").and_then(Value::as_str) {
        Some("error") => 1,
        Some("warning") => 2,
        Some("suggestion") => 4,
        _ => 3,
    };
    let source = diagnostic
        .get("source")
        .and_then(Value::as_str)
        .unwrap_or("typescript");
    let mut lsp = json!({
        "range": range(diagnostic)?,
        "severity": severity,
        "source": source,
        "message": diagnostic.get("text")?.as_str()?,
    });
    if let Some(code) = diagnostic.get("code").filter(|code| !code.is_null()) {
        lsp["code"] = code.clone();
    }
    let tags: Vec<u8> = [("reportsUnnecessary", 1), ("reportsDeprecated", 2)]
        .into_iter()
        .filter(|(field, _)| diagnostic.get(field).and_then(Value::as_bool) == Some(true))
        .map(|(_, tag)| tag)
        .collect();
    if !tags.is_empty() {
        lsp["tags"] = json!(tags);
    }
    let related: Vec<Value> = diagnostic
        .get("relatedInformation")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(related)
        .collect();
    if !related.is_empty() {
        lsp["relatedInformation"] = json!(related);
    }
    Some(lsp)
}

fn related(information: &Value) -> Option<Value> {
    let span = information.get("span")?;
    let file = span.get("file")?.as_str()?;
    Some(json!({
        "location": {"uri": path_to_uri(std::path::Path::new(file)), "range": range(span)?},
        "message": information.get("message")?.as_str()?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tsserver_diagnostic_reads_as_typescript_language_server_publishes_it() {
        let error = json!({
            "start": {"line": 3, "offset": 14}, "end": {"line": 3, "offset": 19},
            "text": "Type 'string' is not assignable to type 'number'.",
            "code": 2322, "category": "error",
            "relatedInformation": [{
                "span": {"start": {"line": 1, "offset": 5}, "end": {"line": 1, "offset": 8}, "file": "/p/a.ts"},
                "message": "The expected type comes from here.",
                "category": "message", "code": 6500
            }]
        });
        assert_eq!(
            as_lsp(&error),
            Some(json!({
                "range": {"start": {"line": 2, "character": 13}, "end": {"line": 2, "character": 18}},
                "severity": 1, "source": "typescript", "code": 2322,
                "message": "Type 'string' is not assignable to type 'number'.",
                "relatedInformation": [{
                    "location": {"uri": "file:///p/a.ts", "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 7}}},
                    "message": "The expected type comes from here."
                }]
            }))
        );
        let unused = json!({
            "start": {"line": 1, "offset": 1}, "end": {"line": 1, "offset": 4},
            "text": "'x' is declared but its value is never read.",
            "code": 6133, "category": "suggestion", "reportsUnnecessary": true
        });
        let read = as_lsp(&unused).unwrap();
        assert_eq!(
            (read["severity"].clone(), read["tags"].clone()),
            (json!(4), json!([1]))
        );
    }

    #[test]
    fn a_diagnostic_not_as_tsserver_writes_them_is_kept_as_it_came() {
        let reply = Reply::bare(json!({"success": true, "body": [{"text": "no span"}]}));
        assert_eq!(
            diagnostics_of(&reply),
            Checked::Found(vec![json!({"text": "no span"})])
        );
    }

    #[test]
    fn a_failed_check_says_why_and_no_response_is_a_refusal() {
        let failed = Reply::bare(json!({"success": false, "message": "No Project."}));
        assert_eq!(
            diagnostics_of(&failed),
            Checked::Failed("No Project.".into())
        );
        assert_eq!(diagnostics_of(&Reply::bare(Value::Null)), Checked::Refused);
    }
}
