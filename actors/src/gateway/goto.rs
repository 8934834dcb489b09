//! The go-to requests (definition, declaration, type definition,
//! implementation), each with the capability it needs. They all take the
//! same params, so one [`Goto`] value names each; the navigation tools,
//! `source` and the merging of candidates ask them.

use super::context::Context;
use super::render::{self, Sources, Spot};
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

/// The places inside the roots the server gives as the definition of
/// what `target` names; none when it cannot say.
pub async fn definition_spots(context: &Context, target: &Target) -> Vec<Spot> {
    let Ok(request) = DEFINITION.request(target) else {
        return Vec::new();
    };
    let Ok(mut reply) = context.request(&target.server, request).await else {
        return Vec::new();
    };
    let Ok(locations) = render::locations(&mut reply, DEFINITION.feature) else {
        return Vec::new();
    };
    let mut sources = Sources::new(&target.roots);
    locations
        .into_iter()
        .filter_map(|location| sources.spot(location.uri.as_str(), location.range, reply.encoding))
        .collect()
}
