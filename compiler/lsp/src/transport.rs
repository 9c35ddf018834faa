//! The JSON-RPC transport over a byte stream (stdin and stdout): `Content-Length` framing read
//! and written on two threads that feed the main loop's channels.
//!
//! `lsp-server`'s own stdio transport ends the session on the first malformed message (and
//! allocates whatever `Content-Length` claims up front). Here a message that cannot be read is
//! answered as JSON-RPC says, and the next one is read: a body that is not JSON (truncated, not
//! UTF-8, a lone surrogate escape) gets a parse error (-32700), JSON that is not a message gets
//! an invalid request error (-32600), and a header block without a usable `Content-Length` is
//! answered with a parse error and skipped.

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};
use std::thread;

use crossbeam_channel::{Receiver, Sender, bounded};
use lsp_server::{Connection, Message};

/// The largest body read; a larger claim is skipped unread (a client sending megabytes of
/// text is normal, gigabytes is not).
const MAX_BODY: u64 = 1 << 30;

/// JSON-RPC's code for a body that is not JSON.
const PARSE_ERROR: i32 = -32700;
/// JSON-RPC's code for JSON that is not a request, notification or response.
const INVALID_REQUEST: i32 = -32600;

/// The reader and writer threads of a connection; `join` waits for both after the connection
/// is dropped.
pub struct IoThreads {
    reader: thread::JoinHandle<io::Result<()>>,
    writer: thread::JoinHandle<io::Result<()>>,
}

impl IoThreads {
    pub fn join(self) -> io::Result<()> {
        let reader = self.reader.join().map_err(|_| io::Error::other("the reader thread panicked"))?;
        let writer = self.writer.join().map_err(|_| io::Error::other("the writer thread panicked"))?;
        // The reader ends with an error only when its input does; a closed pipe is the normal
        // end of a session.
        match reader {
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => {}
            other => other?,
        }
        writer
    }
}

/// A connection over stdin and stdout.
pub fn stdio() -> (Connection, IoThreads) {
    streams(io::BufReader::new(io::stdin()), io::stdout())
}

/// A connection over any pair of streams (a child's pipes, a test's buffers).
pub fn streams<R, W>(input: R, output: W) -> (Connection, IoThreads)
where
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
{
    let output = Arc::new(Mutex::new(output));
    let (to_client, outgoing) = bounded::<Message>(0);
    let (incoming, from_client) = bounded::<Message>(0);
    let writer_output = Arc::clone(&output);
    let writer = thread::Builder::new()
        .name("modelc-lsp-writer".to_owned())
        .spawn(move || write_loop(&outgoing, &writer_output))
        .unwrap_or_else(|error| panic!("cannot start the writer thread: {error}"));
    let reader = thread::Builder::new()
        .name("modelc-lsp-reader".to_owned())
        .spawn(move || read_loop(input, &incoming, &output))
        .unwrap_or_else(|error| panic!("cannot start the reader thread: {error}"));
    (Connection { sender: to_client, receiver: from_client }, IoThreads { reader, writer })
}

fn write_loop<W: Write>(outgoing: &Receiver<Message>, output: &Mutex<W>) -> io::Result<()> {
    for message in outgoing {
        let mut output = output.lock().map_err(|_| io::Error::other("output lock poisoned"))?;
        message.write(&mut *output)?;
    }
    Ok(())
}

fn read_loop<R: BufRead, W: Write>(mut input: R, incoming: &Sender<Message>, output: &Mutex<W>) -> io::Result<()> {
    loop {
        let message = match read_frame(&mut input)? {
            Frame::End => return Ok(()),
            Frame::Body(body) => decode(&body),
            Frame::Unreadable(why) => Err((serde_json::Value::Null, PARSE_ERROR, why)),
        };
        match message {
            Ok(message) => {
                let exit = matches!(&message, Message::Notification(n) if n.method == "exit");
                if incoming.send(message).is_err() || exit {
                    return Ok(());
                }
            }
            Err((id, code, why)) => {
                let answer = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "error": { "code": code, "message": why },
                });
                let mut output = output.lock().map_err(|_| io::Error::other("output lock poisoned"))?;
                write_frame(&mut *output, answer.to_string().as_bytes())?;
            }
        }
    }
}

/// A message, or the id (if one could be read), code and text of the error that answers it.
fn decode(body: &[u8]) -> Result<Message, (serde_json::Value, i32, String)> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|error| (serde_json::Value::Null, PARSE_ERROR, format!("the message is not JSON: {error}")))?;
    let id = match value.get("id") {
        Some(id @ (serde_json::Value::Number(_) | serde_json::Value::String(_))) => id.clone(),
        _ => serde_json::Value::Null,
    };
    // A call has a method, an answer a result or an error; `lsp-server` would take an object
    // with only an id (or a malformed method) for an answer.
    let is_call = value.get("method").is_some();
    let is_answer = value.get("result").is_some() || value.get("error").is_some();
    if is_call == is_answer {
        let why = "the message is neither a request or notification (with a method) nor a response (with a result or an error)";
        return Err((id, INVALID_REQUEST, why.to_owned()));
    }
    let has_id = value.get("id").is_some();
    let message = match (is_call, has_id) {
        (true, true) => serde_json::from_value(value).map(Message::Request),
        (true, false) => serde_json::from_value(value).map(Message::Notification),
        (false, _) => serde_json::from_value(value).map(Message::Response),
    };
    message.map_err(|error| (id, INVALID_REQUEST, format!("the message is not a JSON-RPC message: {error}")))
}

enum Frame {
    /// The input ended between messages.
    End,
    Body(Vec<u8>),
    /// A header block that gives no body to read; what follows it is read as the next message.
    Unreadable(String),
}

/// Reads one header block and its body.
fn read_frame(input: &mut impl BufRead) -> io::Result<Frame> {
    let mut length: Option<Result<u64, String>> = None;
    let mut started = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return if started {
                Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the input ended inside a header"))
            } else {
                Ok(Frame::End)
            };
        }
        let text = String::from_utf8_lossy(&line);
        let header = text.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if started {
                break;
            }
            // Blank lines between messages are tolerated.
            continue;
        }
        started = true;
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("Content-Length")
        {
            let value = value.trim();
            length = Some(value.parse::<u64>().map_err(|_| format!("Content-Length is not a number: {value:?}")));
        }
    }
    match length {
        None => Ok(Frame::Unreadable("the message has no Content-Length header".to_owned())),
        Some(Err(why)) => Ok(Frame::Unreadable(why)),
        Some(Ok(length)) if length > MAX_BODY => {
            // Skipped unread, so the stream stays in step.
            io::copy(&mut input.take(length), &mut io::sink())?;
            Ok(Frame::Unreadable(format!("the message's {length} bytes are more than modelc reads ({MAX_BODY})")))
        }
        Some(Ok(length)) => {
            let mut body = Vec::new();
            input.take(length).read_to_end(&mut body)?;
            if (body.len() as u64) < length {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the input ended inside a message"));
            }
            Ok(Frame::Body(body))
        }
    }
}

fn write_frame(output: &mut impl Write, body: &[u8]) -> io::Result<()> {
    write!(output, "Content-Length: {}\r\n\r\n", body.len())?;
    output.write_all(body)?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        out.extend_from_slice(body);
        out
    }

    /// Everything the transport wrote back, as JSON values.
    fn answers(written: &[u8]) -> Vec<serde_json::Value> {
        let mut input = written;
        let mut out = Vec::new();
        while let Ok(Frame::Body(body)) = read_frame(&mut input) {
            out.push(serde_json::from_slice(&body).unwrap());
        }
        out
    }

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Runs the reader over `input`, returning the messages it passed on and the answers it
    /// wrote itself.
    fn read_all(input: Vec<u8>) -> (Vec<Message>, Vec<serde_json::Value>) {
        let output = Shared::default();
        let (connection, threads) = streams(io::Cursor::new(input), output.clone());
        let messages: Vec<Message> = connection.receiver.iter().collect();
        drop(connection);
        threads.join().unwrap();
        let written = output.0.lock().unwrap().clone();
        (messages, answers(&written))
    }

    #[test]
    fn malformed_messages_are_answered_and_the_next_one_is_read() {
        let good = br#"{"jsonrpc":"2.0","id":7,"method":"shutdown"}"#;
        let mut input = Vec::new();
        input.extend(frame(br#"{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"text":"\ud800"}}"#));
        input.extend(frame(br#"{"jsonrpc":"2.0","id":1,"meth"#));
        input.extend(frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"\xff\xfe\"}"));
        input.extend(frame(br#"{"jsonrpc":"2.0","id":2,"method":5}"#));
        input.extend(b"X-Nothing: 1\r\n\r\n");
        input.extend(b"Content-Length: many\r\n\r\n");
        input.extend(frame(good));
        let (messages, answers) = read_all(input);
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(matches!(&messages[0], Message::Request(r) if r.method == "shutdown"));
        let codes: Vec<i64> = answers.iter().map(|a| a["error"]["code"].as_i64().unwrap()).collect();
        assert_eq!(
            codes,
            [PARSE_ERROR, PARSE_ERROR, PARSE_ERROR, INVALID_REQUEST, PARSE_ERROR, PARSE_ERROR].map(i64::from)
        );
        // The invalid request keeps its id; parse errors have none.
        assert_eq!(answers[3]["id"], 2);
        assert!(answers[0]["id"].is_null());
        assert!(answers[0]["error"]["message"].as_str().unwrap().contains("not JSON"), "{}", answers[0]);
    }

    #[test]
    fn a_huge_content_length_is_not_allocated() {
        let mut input = b"Content-Length: 99999999999999\r\n\r\n".to_vec();
        input.extend(b"{}");
        let (messages, answers) = read_all(input);
        assert!(messages.is_empty());
        assert_eq!(answers.len(), 1);
        assert!(answers[0]["error"]["message"].as_str().unwrap().contains("more than modelc reads"));
    }

    #[test]
    fn reading_stops_after_exit() {
        let mut input = frame(br#"{"jsonrpc":"2.0","method":"exit"}"#);
        input.extend(frame(br#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#));
        let (messages, _) = read_all(input);
        assert_eq!(messages.len(), 1);
    }
}
