//! Patch → onState → event back through `lineup host --stdio`: pipes and a separate process.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::app::{app_json, SMALL};
use crate::lab::envelope;
use crate::report::ms;

/// Patch latency through `lineup host --stdio`, if the `lineup` binary is beside this one.
pub(super) fn stdio_samples(n: usize) -> Result<Option<Vec<f64>>, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let Some(lineup) = exe
        .parent()
        .map(|d| d.join("lineup"))
        .filter(|p| p.exists())
    else {
        return Ok(None);
    };
    let mut child = Command::new(lineup)
        .args(["host", "--stdio"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start lineup: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((Instant::now(), line)).is_err() {
                break;
            }
        }
    });
    let wait_ack = |seq: u64, timeout: Duration| -> Option<Instant> {
        let needle = format!("\"seq\":{seq}}}");
        let deadline = Instant::now() + timeout;
        while let Ok((at, line)) =
            rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
        {
            if line.contains("\"event\":\"ack\"") && line.contains(&needle) {
                return Some(at);
            }
        }
        None
    };
    let mut write = |bytes: Vec<u8>| -> Result<(), String> {
        stdin.write_all(&bytes).map_err(|e| e.to_string())?;
        stdin.write_all(b"\n").map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())
    };
    let mut next = 0;
    let mut env = |kind: &str, payload: Value| {
        next += 1;
        envelope(next, kind, payload)
    };
    let result = (|| {
        write(env(
            "lineup.v1.ui.open",
            json!({ "instance_id": "s", "app": app_json(SMALL), "state": { "seq": 0 } }),
        ))?;
        wait_ack(0, Duration::from_secs(30)).ok_or("the stdio host's Surface never acked")?;
        let pad = "p".repeat(1024);
        let mut samples = Vec::new();
        for seq in 1..=(n as u64 + 3) {
            let bytes = env(
                "lineup.v1.ui.patch",
                json!({ "instance_id": "s", "state": { "seq": seq, "pad": pad } }),
            );
            let start = Instant::now();
            write(bytes)?;
            let at = wait_ack(seq, Duration::from_secs(10))
                .ok_or_else(|| format!("stdio patch {seq} not acknowledged"))?;
            if seq > 3 {
                samples.push(ms(at.duration_since(start)));
            }
        }
        Ok::<_, String>(samples)
    })();
    // End of input: the host closes its Surfaces and exits.
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    result.map(Some)
}
