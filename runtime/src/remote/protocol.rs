//! What the two ends of a connection say to each other: frames of a JSON header and raw bytes.
//!
//! A frame is the header's length and the payload's length (4 bytes each, big-endian), the
//! header (a [`Message`] as JSON), then the payload (a file's content; empty for every other
//! message). Calls are numbered by the side that makes them and answered in any order, so many
//! resources of one host run at once over one connection.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use modelc_ir::Resource;
use serde::{Deserialize, Serialize};

use crate::handler::Done;

/// The protocol's version: both ends are the same binary, but a cached helper of another build
/// must never be spoken to.
pub const PROTOCOL: u32 = 2;

/// Larger headers are refused: a resource's JSON is far smaller.
const MAX_HEADER: u32 = 256 << 20;
/// Larger payloads are refused: file content is held in memory on both ends.
const MAX_PAYLOAD: u32 = 1 << 30;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Message {
    /// The helper is ready (its first frame).
    Hello(Hello),
    /// Deploy these resources with these contexts: one, or the members of an autogroup.
    Deploy { call: u64, resources: Vec<Resource>, contexts: Vec<CallContext> },
    /// A call's handler needs a file's content (helper → this machine).
    NeedContent { call: u64, hash: String },
    /// The content asked for, in the payload; `found: false` when this machine has none.
    Content { call: u64, hash: String, found: bool },
    /// A call's results, one per resource.
    Results { call: u64, results: Vec<Result<Done, String>> },
    /// Evaluate a resource's guards (meta `creates`, `only_if`, `not_if`) there.
    Guard { call: u64, resource: Box<Resource> },
    /// Why its guards keep it from deploying; `None`: they do not.
    Guarded { call: u64, reason: Option<String> },
    /// Do an operation of a module's handler there ([`crate::operations`]); the payload is the
    /// data it writes.
    Operate { call: u64, op: String, args: Vec<serde_json::Value>, has_data: bool },
    /// What it gave (the payload holds the bytes it read, when `has_data`), or why it failed.
    Operated { call: u64, result: Result<serde_json::Value, crate::operations::Failure>, has_data: bool },
    /// Nothing more will be asked: stop.
    Bye,
    /// The passwords of the sudo hops a relaying helper starts, outermost first (this machine →
    /// the first helper of a chain, before anything else; each relay uses the first and passes
    /// the rest on).
    Secrets { sudo: Vec<Option<String>> },
}

/// Who answered: the helper at the end of the chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// modelc's version.
    pub version: String,
    pub user: String,
    pub uid: u32,
    pub pid: u32,
}

/// A handler's [`Context`](crate::handler::Context) as it travels: the content source stays on
/// this machine and answers [`Message::NeedContent`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CallContext {
    pub dry_run: bool,
    pub refresh: bool,
    pub timeout_ms: Option<u64>,
    /// The directories of the run on that host that the resource's paths are in.
    pub directories: Vec<PathBuf>,
}

/// Writes one frame and flushes it.
pub fn write_frame(out: &mut impl Write, message: &Message, payload: &[u8]) -> io::Result<()> {
    let header = serde_json::to_vec(message).map_err(io::Error::other)?;
    let too_large = || io::Error::new(io::ErrorKind::InvalidInput, "a frame too large to send");
    let header_len = u32::try_from(header.len()).ok().filter(|&n| n <= MAX_HEADER).ok_or_else(too_large)?;
    let payload_len = u32::try_from(payload.len()).ok().filter(|&n| n <= MAX_PAYLOAD).ok_or_else(too_large)?;
    let mut prefix = [0u8; 8];
    prefix[..4].copy_from_slice(&header_len.to_be_bytes());
    prefix[4..].copy_from_slice(&payload_len.to_be_bytes());
    out.write_all(&prefix)?;
    out.write_all(&header)?;
    out.write_all(payload)?;
    out.flush()
}

/// Reads one frame; `None` at a clean end (nothing more before the channel closed).
pub fn read_frame(input: &mut impl Read) -> io::Result<Option<(Message, Vec<u8>)>> {
    let mut prefix = [0u8; 8];
    let mut filled = 0;
    while filled < prefix.len() {
        match input.read(&mut prefix[filled..]) {
            Ok(0) if filled == 0 => return Ok(None),
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let header_len = u32::from_be_bytes(prefix[..4].try_into().unwrap_or_default());
    let payload_len = u32::from_be_bytes(prefix[4..].try_into().unwrap_or_default());
    if header_len > MAX_HEADER || payload_len > MAX_PAYLOAD {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "a frame larger than the protocol allows"));
    }
    let mut header = vec![0u8; header_len as usize];
    input.read_exact(&mut header)?;
    let mut payload = vec![0u8; payload_len as usize];
    input.read_exact(&mut payload)?;
    let message = serde_json::from_slice(&header)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("a frame that is not a message: {e}")))?;
    Ok(Some((message, payload)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_with_their_payload() {
        let mut wire = Vec::new();
        let content = Message::Content { call: 7, hash: "ab".into(), found: true };
        write_frame(&mut wire, &content, b"\x00binary\xff").unwrap();
        write_frame(&mut wire, &Message::Bye, &[]).unwrap();
        let mut input = wire.as_slice();
        assert_eq!(read_frame(&mut input).unwrap(), Some((content, b"\x00binary\xff".to_vec())));
        assert_eq!(read_frame(&mut input).unwrap(), Some((Message::Bye, Vec::new())));
        assert_eq!(read_frame(&mut input).unwrap(), None);
    }

    #[test]
    fn a_cut_or_oversized_frame_is_an_error() {
        let mut wire = Vec::new();
        write_frame(&mut wire, &Message::Bye, &[]).unwrap();
        assert!(read_frame(&mut &wire[..wire.len() - 1]).is_err());
        let mut huge = Vec::from(u32::MAX.to_be_bytes());
        huge.extend([0; 4]);
        assert!(read_frame(&mut huge.as_slice()).is_err());
    }
}
