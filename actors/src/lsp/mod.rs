//! The LSP wire code the actors share: framing, messages, the process
//! transport, URIs and position encodings.

pub mod framing;
pub mod message;
pub mod position;
pub mod transport;
pub mod uri;
