//! The LSP wire code the actors share: framing, messages, the process
//! transport, URIs, position encodings, and what a client says to a server
//! and reads from it (`protocol`), and tsserver's own answers as LSP's
//! (`tsserver`).

pub mod framing;
pub mod message;
pub mod position;
pub mod protocol;
pub mod transport;
pub mod tsserver;
pub mod uri;
