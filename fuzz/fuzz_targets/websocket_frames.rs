//! Fuzzes the frames of the WebSocket agent link: the bytes an agent sends after the handshake,
//! read by tungstenite 0.30 (what tokio-tungstenite, the link's library, reads with) in the
//! client role with the link's configuration (`transport/src/link/mod.rs`: messages and frames
//! capped at the envelope limit), and classified as the link's reader does.
//!
//! Input: the first byte sets the cap (16 bytes to 2 KiB, or with its top bit the default
//! envelope limit, 1 MiB); the rest is the stream from the agent.
//!
//! Checks: no panic and no endless loop; no text or binary message is over the cap; a message
//! over the cap is refused as `MessageTooLong` naming a size over the cap and the cap itself
//! (what the link answers `too_large` with, R-ENV-4); a text frame is UTF-8 (it is a `str`) and,
//! unless blank, is what the host would decode as one envelope (decoding it never panics).
#![no_main]

use std::io::{Cursor, Read, Write};

use lineup_host_core::Limits;
use tungstenite::error::{CapacityError, Error};
use tungstenite::protocol::{Role, WebSocketConfig};
use tungstenite::{Message, WebSocket};

/// The agent's side of the connection: what it sent, then the end of the stream; what the
/// host writes (pongs, the close) goes nowhere.
struct Wire<'a>(Cursor<&'a [u8]>);

impl Read for Wire<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

impl Write for Wire<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let [first, stream @ ..] = data else {
        return;
    };
    let limits = Limits::default();
    let cap = if first & 0x80 != 0 {
        limits.max_envelope_bytes
    } else {
        16usize << (first % 8)
    };
    // As the link configures its connection.
    let config = WebSocketConfig::default()
        .max_message_size(Some(cap))
        .max_frame_size(Some(cap));
    let mut ws = WebSocket::from_raw_socket(Wire(Cursor::new(stream)), Role::Client, Some(config));
    // Every message takes at least two bytes of the stream; the rest is the closing.
    for _ in 0..stream.len() / 2 + 4 {
        match ws.read() {
            Ok(Message::Text(text)) => {
                assert!(
                    text.len() <= cap,
                    "a text message of {} bytes, over {cap}",
                    text.len()
                );
                if !text.as_bytes().iter().all(u8::is_ascii_whitespace) {
                    let _ = lineup_host_core::decode(text.as_bytes(), &limits);
                }
            }
            Ok(Message::Binary(bytes)) => {
                assert!(
                    bytes.len() <= cap,
                    "a binary message of {} bytes, over {cap}",
                    bytes.len()
                );
            }
            Ok(_) => {}
            Err(Error::Capacity(CapacityError::MessageTooLong { size, max_size })) => {
                assert_eq!(max_size, cap);
                assert!(size > cap, "refused {size} bytes under the cap {cap}");
                return;
            }
            Err(_) => return,
        }
    }
    panic!(
        "the reader did not stop at the end of {} bytes",
        stream.len()
    );
});
