//! A host process as the runner speaks to it (one `lineup.v1` line each way), and what it sent
//! during a case.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// A host process, spoken to over its stdin and stdout.
pub(crate) struct Host {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

impl Host {
    /// Starts `command`.
    pub(crate) fn spawn(command: &[String]) -> Result<Self, String> {
        let (program, args) = command.split_first().ok_or("no host command")?;
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {program}: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stdin = child.stdin.take();
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            lines: rx,
        })
    }

    /// Sends `line` and a newline.
    pub(crate) fn send(&mut self, line: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("host stdin closed")?;
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("write to host: {e}"))
    }

    /// Ends the process (stdin closed, then killed) and waits for it.
    pub(crate) fn kill(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Everything the host sent during a case, in the case's conversations when it shares its host.
pub(crate) struct Seen {
    messages: Vec<Value>,
    /// The conversations whose envelopes are the case's, beside refusals of lines whose
    /// conversation could not be read; `None`: everything (a host of the case's own).
    conversations: Option<Vec<String>>,
}

impl Seen {
    /// Everything the host sends.
    pub(crate) fn everything() -> Self {
        Self {
            messages: Vec::new(),
            conversations: None,
        }
    }

    /// What the host sends in `conversations`, and refusals of lines whose conversation could
    /// not be read.
    pub(crate) fn accepting(conversations: Vec<String>) -> Self {
        Self {
            messages: Vec::new(),
            conversations: Some(conversations),
        }
    }

    /// What was kept so far, in the order the host sent it.
    pub(crate) fn messages(&self) -> &[Value] {
        &self.messages
    }

    fn accepts(&self, message: &Value) -> bool {
        let Some(conversations) = &self.conversations else {
            return true;
        };
        match message.get("conversation_id").and_then(Value::as_str) {
            Some(c) => c == "unknown" || conversations.iter().any(|mine| mine == c),
            None => true,
        }
    }

    /// Drains until some message satisfies `found` or `deadline` passes; whether one did.
    pub(crate) fn wait_for(
        &mut self,
        host: &Host,
        deadline: Instant,
        found: impl Fn(&Value) -> bool,
    ) -> bool {
        loop {
            if self.messages.iter().any(&found) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            self.drain(
                host,
                (Instant::now() + Duration::from_millis(100)).min(deadline),
            );
        }
    }

    /// Keeps what the host sends until `until`.
    pub(crate) fn drain(&mut self, host: &Host, until: Instant) {
        loop {
            let now = Instant::now();
            if now >= until {
                return;
            }
            match host.lines.recv_timeout(until - now) {
                Ok(line) => {
                    let message = serde_json::from_str(&line).unwrap_or(Value::String(line));
                    if self.accepts(&message) {
                        self.messages.push(message);
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => return,
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    thread::sleep(until - now);
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fake_host(script: &str) -> Host {
        Host::spawn(&["sh".to_owned(), "-c".to_owned(), script.to_owned()]).expect("sh runs")
    }

    #[test]
    fn wait_for_returns_once_a_late_envelope_matches() {
        let host = fake_host(r#"sleep 0.3; echo '{"type":"a"}'; echo '{"type":"b"}'; sleep 5"#);
        let mut seen = Seen::everything();
        let t = Instant::now();
        assert!(seen.wait_for(&host, t + Duration::from_secs(4), |m| m["type"] == "b"));
        assert!(t.elapsed() < Duration::from_secs(3));
        assert_eq!(seen.messages.len(), 2);
    }

    #[test]
    fn wait_for_gives_up_at_its_deadline() {
        let host = fake_host(r#"echo '{"type":"a"}'; sleep 5"#);
        let mut seen = Seen::everything();
        let t = Instant::now();
        assert!(!seen.wait_for(&host, t + Duration::from_millis(500), |m| m["type"] == "b"));
        assert!(t.elapsed() >= Duration::from_millis(500));
        assert_eq!(seen.messages, vec![json!({"type": "a"})]);
    }
}
