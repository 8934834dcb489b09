//! The go-to requests (definition, declaration, type definition,
//! implementation), each with the capability it needs. They all take the
//! same params, so one [`Goto`] value names each; the navigation tools,
//! `source` and the merging of candidates ask them.

use super::target::Target;
use crate::error::Result;
use crate::lsp::protocol::Feature;
use crate::messages::language_server::ServerRequest;
use lsp_types::request::{
    GotoDeclaration, GotoDefinition, GotoImplementation, GotoTypeDefinition, Request,
};
use lsp_types::{GotoDefinitionParams, PartialResultParams, WorkDoneProgressParams};

/// One of the go-to requests, with the capability it needs.
#[derive(Debug, Clone, Copy)]
pub struct Goto {
    pub method: &'static str,
    pub feature: Feature,
}

pub const DEFINITION: Goto = Goto {
    method: GotoDefinition::METHOD,
    feature: Feature::Definition,
};
pub const DECLARATION: Goto = Goto {
    method: GotoDeclaration::METHOD,
    feature: Feature::Declaration,
};
pub const TYPE_DEFINITION: Goto = Goto {
    method: GotoTypeDefinition::METHOD,
    feature: Feature::TypeDefinition,
};
pub const IMPLEMENTATION: Goto = Goto {
    method: GotoImplementation::METHOD,
    feature: Feature::Implementation,
};

impl Goto {
    /// The request at `target`: the go-to requests all take the same
    /// params.
    pub fn request(self, target: &Target) -> Result<ServerRequest> {
        let params = GotoDefinitionParams {
            text_document_position_params: target.position_params()?,
            work_done_progress_params: WorkDoneProgressParams::default(),
            partial_result_params: PartialResultParams::default(),
        };
        target.request(self.method, &params, self.feature)
    }
}
