//! R-STD-12's announcements as a screen reader hears them through `lineup host --stdio`: an
//! AT-SPI reader on the host's accessibility bus (`support/atspi_announcements.py`) records
//! the text of every component box's live region as it changes. 24 status changes over 6 s are
//! announced at most once per 2 s, the last change after its wait; a status opened with
//! `announce: false` says nothing through the same changes (the announced one is its control).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::json;

use super::a11y::{system_python, ReadHost, SessionBus};
use super::stdio_host::envelope;
use super::{shown, title, STACK};

/// One announcement: the component box it came from and what it said.
#[derive(Debug, Deserialize)]
struct Said {
    region: String,
    text: String,
}

/// The AT-SPI listener, killed when dropped.
struct Listener {
    child: Child,
    said: Receiver<Said>,
}

impl Listener {
    /// Starts the listener on `bus` and waits until it is registered.
    fn start(bus: &SessionBus) -> Self {
        let mut child = Command::new(system_python())
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/support/atspi_announcements.py"
            ))
            .arg("120")
            .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
            .stdout(Stdio::piped())
            .spawn()
            .expect("the AT-SPI listener (python3-gi, gir1.2-atspi-2.0)");
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let first = lines.next().and_then(Result::ok);
        assert_eq!(
            first.as_deref(),
            Some("ready"),
            "the listener did not start"
        );
        let (tx, said) = channel();
        thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let said: Said = serde_json::from_str(&line).expect("the listener's line");
                if tx.send(said).is_err() {
                    return;
                }
            }
        });
        Self { child, said }
    }

    /// What was said in `region` until `done` holds for something said there (or 60 s pass),
    /// and then for `after` more.
    fn until(&self, region: &str, done: impl Fn(&str) -> bool, after: Duration) -> Vec<String> {
        let mut heard = Vec::new();
        let mut end = Instant::now() + Duration::from_secs(60);
        let mut finished = false;
        while let Some(left) = end.checked_duration_since(Instant::now()) {
            match self.said.recv_timeout(left) {
                Ok(said) if said.region == region => {
                    if !finished && done(&said.text) {
                        finished = true;
                        end = Instant::now() + after;
                    }
                    heard.push(said.text);
                }
                Ok(_) => {}
                Err(_) => break,
            }
        }
        assert!(
            finished,
            "the awaited announcement never came; heard {heard:?}"
        );
        heard
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn r_std_12_a_burst_of_changes_is_announced_at_most_once_per_two_seconds() {
    let mut on = ReadHost::start(&[], &[]);
    let listener = Listener::start(&on.bus);
    let (x, host) = (&on.x, &mut on.host);
    let region = title("status");
    let status = |id: &str, announce: bool, words: &str| {
        json!({"instance_id": id,
               "component": {"id": "status", "version": "1", "props": {"announce": announce}},
               "state": {"status": "in_progress", "title": words}})
    };
    host.send(&envelope("m-1", "ui.open", status("loud", true, "Step 0")));
    host.send(&envelope(
        "m-2",
        "ui.open",
        status("quiet", false, "Quiet 0"),
    ));
    shown(x, STACK);
    // The open is announced at once: the 2 s of the burst below count from it.
    let opened = listener.until(&region, |t| t.contains("Step 0"), Duration::ZERO);
    // One change every 250 ms for 6 s: 24 changes, each held long enough to be read.
    for n in 1..=24 {
        for (id, words) in [("loud", "Step"), ("quiet", "Quiet")] {
            host.send(&envelope(
                &format!("m-{id}-{n}"),
                "ui.patch",
                json!({"instance_id": id,
                       "state": {"status": "in_progress", "title": format!("{words} {n}")}}),
            ));
        }
        thread::sleep(Duration::from_millis(250));
    }
    // The last change waits for its turn and is said; 3 s more hear anything said late.
    let heard = listener.until(&region, |t| t.ends_with("Step 24"), Duration::from_secs(3));
    let said: Vec<&String> = heard.iter().filter(|t| t.contains("Step")).collect();
    // Once per 2 s over the 6 s of changes is four announcements (at 2, 4, 6 and 8 s from the
    // open's); a loaded machine that handles the changes later stretches that, so up to six
    // pass. Unthrottled, each change is said: the reader, every 50 ms, reads most of the 24.
    assert!(
        !said.is_empty() && said.len() <= 6,
        "24 changes were announced {} times: {said:?} (before them: {opened:?})",
        said.len()
    );
    assert!(
        said.last().is_some_and(|t| t.ends_with("Step 24")),
        "the last change was not the last said: {said:?}"
    );
    // `announce: false` turns them off: its 31 states said nothing, beside the loud one's.
    let quiet: Vec<&String> = opened
        .iter()
        .chain(&heard)
        .filter(|t| t.contains("Quiet"))
        .collect();
    assert!(
        quiet.is_empty(),
        "the quiet status was announced: {quiet:?}"
    );
    on.stop();
}
