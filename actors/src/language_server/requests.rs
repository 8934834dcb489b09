//! The request path: new work is admitted (or queued while the server
//! initializes, or handed to the restart when the process is dying), its
//! document synced at once, then held until the server can answer it
//! truthfully or sent with what the caller should know.

use super::{Admission, LanguageServerMsg, Pending, Phase, Reply, ServerRequest, State, Work};
use crate::error::{Error, Result};
use ractor::{ActorRef, RpcReplyPort};

impl State {
    /// What becomes of new work now: sent to a ready process, queued
    /// until `initialize` is answered, or, when the process has died,
    /// handed back to the Supervisor for the next process.
    pub(super) fn admit(&mut self) -> Admission {
        let dying = self.transport.pid().is_some_and(crate::monitor::is_dying);
        if self.exiting || self.transport.has_exited() || dying {
            return Admission::Dead;
        }
        match &self.phase {
            Phase::Initializing(_) => Admission::Queue,
            Phase::Ready(capabilities) => Admission::Ready(capabilities.clone()),
        }
    }

    /// Keeps work that cannot be sent yet, or hands it on.
    pub(super) fn defer(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        admission: Admission,
        work: Work,
    ) {
        match (admission, &mut self.phase) {
            (Admission::Queue, Phase::Initializing(queued)) => queued.push(work),
            _ => {
                self.orphans.push(work);
                self.exited(myself);
            }
        }
    }

    pub(super) fn request(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        request: ServerRequest,
        reply: RpcReplyPort<Result<Reply>>,
    ) {
        let capabilities = match self.admit() {
            Admission::Ready(capabilities) => capabilities,
            other => return self.defer(myself, other, Work::Request(request, reply)),
        };
        if reply.is_closed() {
            return;
        }
        if let Some((provider, feature)) = request.capability
            && !capabilities.supports(provider)
        {
            let refusal = Error::Unsupported {
                server: self.spec.label(),
                feature: feature.into(),
            };
            let _gone = reply.send(Err(refusal));
            return;
        }
        // The document is synced at once, so a server that loads a
        // project only for an open file starts loading it now.
        if let Some(document) = &request.document {
            self.sync_document(document.clone(), &capabilities);
        }
        if self.blocks(&request) {
            return self.hold(myself, request, reply);
        }
        self.send(myself, request, reply);
    }

    /// Sends a request now, with what the caller should know about it.
    pub(super) fn send(
        &mut self,
        myself: &ActorRef<LanguageServerMsg>,
        request: ServerRequest,
        reply: RpcReplyPort<Result<Reply>>,
    ) {
        let Phase::Ready(capabilities) = &self.phase else {
            return drop(reply.send(Err(Error::ShuttingDown)));
        };
        if reply.is_closed() {
            return;
        }
        let params = self.request_params(&request, capabilities.encoding);
        let mut warnings: Vec<String> = self.unready_warning().into_iter().collect();
        warnings.extend(self.coverage.warnings_for(
            &self.spec.label(),
            request.method,
            &request.params,
        ));
        let (file_problem, problems) = match &request.document {
            Some(document) => (self.coverage.problem(&document.uri), Vec::new()),
            None => (None, self.coverage.problems()),
        };
        let id = self.send_request(request.method, params, myself);
        self.pending.insert(
            id,
            Pending::Caller {
                method: request.method,
                reply,
                warnings,
                file_problem,
                problems,
            },
        );
    }
}
