//! LSP base-protocol framing: `Content-Length` headers around JSON bodies.
//!
//! Pure functions over bytes, shared by the bridge's reader task and by
//! mockls. The decoder is a push parser so that a reader can feed it whatever
//! the pipe delivers (a byte at a time from a slow writer, or many messages in
//! one read) and pull complete bodies out.

use thiserror::Error;

/// The largest body a peer may send. Anything larger is refused unread so a
/// flooding server cannot make the bridge allocate without bound.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Headers longer than this are not a header block but garbage.
const MAX_HEADER_BYTES: usize = 8 * 1024;

/// What can go wrong while cutting a byte stream into messages.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FramingError {
    #[error("header block without Content-Length")]
    MissingLength,
    #[error("invalid Content-Length header: {0}")]
    InvalidLength(String),
    #[error("message of {0} bytes exceeds the {MAX_BODY_BYTES}-byte limit")]
    TooLarge(usize),
    #[error("header block longer than {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    #[error("header line is not UTF-8")]
    HeaderNotUtf8,
}

/// Frames one message body.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend_from_slice(body);
    framed
}

/// Accumulates bytes and yields complete message bodies.
#[derive(Debug, Default)]
pub struct FrameDecoder {
    buffer: Vec<u8>,
    /// Body length announced by the header block already consumed, if any.
    expected: Option<usize>,
    /// Bytes of an oversize body still to be thrown away.
    discarding: usize,
}

impl FrameDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes read from the stream.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Returns the next complete body, `Ok(None)` when more bytes are needed.
    ///
    /// After an error the decoder has resynchronised past the bad frame (an
    /// oversize body is skipped, a bad header block is dropped), so the caller
    /// may keep calling it.
    pub fn next_body(&mut self) -> Result<Option<Vec<u8>>, FramingError> {
        self.skip_discarded();
        if self.discarding > 0 {
            return Ok(None);
        }
        let length = match self.expected {
            Some(length) => length,
            None => match self.take_header()? {
                Some(length) => length,
                None => return Ok(None),
            },
        };
        if self.buffer.len() < length {
            self.expected = Some(length);
            return Ok(None);
        }
        self.expected = None;
        let rest = self.buffer.split_off(length);
        Ok(Some(std::mem::replace(&mut self.buffer, rest)))
    }

    fn skip_discarded(&mut self) {
        let skipped = self.discarding.min(self.buffer.len());
        self.buffer.drain(..skipped);
        self.discarding -= skipped;
    }

    /// Consumes one header block and returns its Content-Length.
    fn take_header(&mut self) -> Result<Option<usize>, FramingError> {
        let Some(end) = find_header_end(&self.buffer) else {
            if self.buffer.len() > MAX_HEADER_BYTES {
                self.buffer.clear();
                return Err(FramingError::HeaderTooLong);
            }
            return Ok(None);
        };
        let header: Vec<u8> = self.buffer.drain(..end + 4).collect();
        let length = parse_content_length(&header[..end])?;
        if length > MAX_BODY_BYTES {
            self.discarding = length;
            self.skip_discarded();
            return Err(FramingError::TooLarge(length));
        }
        Ok(Some(length))
    }
}

fn find_header_end(buffer: &[u8]) -> Option<usize> {
    buffer.windows(4).position(|window| window == b"\r\n\r\n")
}

fn parse_content_length(header: &[u8]) -> Result<usize, FramingError> {
    let text = std::str::from_utf8(header).map_err(|_| FramingError::HeaderNotUtf8)?;
    for line in text.split("\r\n") {
        // Searching inside the line, not only at its start, resynchronises
        // after a peer whose previous Content-Length understated its body.
        let Some(at) = line.to_ascii_lowercase().rfind("content-length:") else {
            continue;
        };
        let value = line[at + "content-length:".len()..].trim();
        return value
            .parse()
            .map_err(|_| FramingError::InvalidLength(value.to_owned()));
    }
    Err(FramingError::MissingLength)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_all(bytes: &[u8]) -> Vec<Result<Vec<u8>, FramingError>> {
        let mut decoder = FrameDecoder::new();
        decoder.push(bytes);
        let mut out = Vec::new();
        loop {
            match decoder.next_body() {
                Ok(Some(body)) => out.push(Ok(body)),
                Ok(None) => return out,
                Err(error) => out.push(Err(error)),
            }
        }
    }

    #[test]
    fn round_trips_one_message() {
        let framed = encode(br#"{"a":1}"#);
        assert_eq!(framed, b"Content-Length: 7\r\n\r\n{\"a\":1}".to_vec());
        assert_eq!(decode_all(&framed), vec![Ok(br#"{"a":1}"#.to_vec())]);
    }

    #[test]
    fn splits_two_messages_in_one_read() {
        let mut bytes = encode(b"{}");
        bytes.extend(encode(b"[1]"));
        assert_eq!(
            decode_all(&bytes),
            vec![Ok(b"{}".to_vec()), Ok(b"[1]".to_vec())]
        );
    }

    #[test]
    fn reassembles_byte_by_byte() {
        let framed = encode("{\"é\":\"😀\"}".as_bytes());
        let mut decoder = FrameDecoder::new();
        let mut bodies = Vec::new();
        for byte in &framed {
            decoder.push(std::slice::from_ref(byte));
            if let Ok(Some(body)) = decoder.next_body() {
                bodies.push(body);
            }
        }
        assert_eq!(bodies, vec!["{\"é\":\"😀\"}".as_bytes().to_vec()]);
    }

    #[test]
    fn accepts_content_type_and_any_header_case() {
        let bytes = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{}";
        assert_eq!(decode_all(bytes), vec![Ok(b"{}".to_vec())]);
    }

    #[test]
    fn reports_missing_and_invalid_lengths() {
        assert_eq!(
            decode_all(b"Content-Type: x\r\n\r\n"),
            vec![Err(FramingError::MissingLength)]
        );
        assert_eq!(
            decode_all(b"Content-Length: abc\r\n\r\n"),
            vec![Err(FramingError::InvalidLength("abc".into()))]
        );
    }

    #[test]
    fn skips_an_oversize_body_and_recovers() {
        let mut bytes = format!("Content-Length: {}\r\n\r\n", MAX_BODY_BYTES + 1).into_bytes();
        let mut decoder = FrameDecoder::new();
        decoder.push(&bytes);
        assert_eq!(
            decoder.next_body(),
            Err(FramingError::TooLarge(MAX_BODY_BYTES + 1))
        );
        bytes = vec![b'x'; MAX_BODY_BYTES + 1];
        bytes.extend(encode(b"{}"));
        decoder.push(&bytes);
        assert_eq!(decoder.next_body(), Ok(Some(b"{}".to_vec())));
    }

    #[test]
    fn resynchronises_after_an_understated_length() {
        let mut bytes = b"Content-Length: 5\r\n\r\n{\"a\":1}".to_vec();
        bytes.extend(encode(b"{}"));
        assert_eq!(
            decode_all(&bytes),
            vec![Ok(b"{\"a\":".to_vec()), Ok(b"{}".to_vec())]
        );
    }

    #[test]
    fn drops_an_endless_header() {
        let bytes = vec![b'a'; MAX_HEADER_BYTES + 1];
        assert_eq!(decode_all(&bytes), vec![Err(FramingError::HeaderTooLong)]);
    }
}
