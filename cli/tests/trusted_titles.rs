//! R-SEC-5 over `lineup host --stdio` and real windows under Xvfb: a Surface whose app is named
//! `Permission request` (or an imitation with confusable letters) never opens in a window titled
//! like the consent prompt; it is titled by its app id with the host-owned marker. Positive
//! control: a real consent prompt, raised by an `app.open_url` call, is titled
//! `Permission request`, and an ordinary Surface keeps its name before the marker.
//!
//! Run with `xvfb-run -a cargo test -p lineup-cli --test trusted_titles`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr,
    missing_docs
)]

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use lineup_tests::x11::X11;
use serde_json::{json, Value};

const PROMPT: &str = "Permission request";
const MARKER: &str = " — LineUp Surface";

fn envelope(id: &str, kind: &str, payload: Value) -> String {
    json!({
        "v": 1,
        "id": id,
        "type": format!("lineup.v1.{kind}"),
        "conversation_id": "conv_titles",
        "sender": {"kind": "agent", "id": "agent_titles"},
        "payload": payload,
    })
    .to_string()
}

fn open(instance: &str, app_id: &str, name: &str) -> String {
    envelope(
        &format!("open_{instance}"),
        "ui.open",
        json!({
            "instance_id": instance,
            "app": {"id": app_id, "name": name, "version": "1.0.0",
                    "html": "<main>hi</main>", "css": "", "js": ""},
            "state": {},
        }),
    )
}

/// The shown window titled exactly `title`, waiting up to 30 s.
fn shown(x: &X11, title: &str) -> Option<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(w) = x.find_window_by_title(title).filter(|w| x.is_viewable(*w)) {
            return Some(w);
        }
        thread::sleep(Duration::from_millis(100));
    }
    None
}

fn in_two_minutes() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 120;
    let days = (secs / 86_400) as i64;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let s = secs % 86_400;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        s / 3600,
        s / 60 % 60,
        s % 60
    )
}

struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn r_sec_5_no_surface_window_is_titled_like_the_consent_prompt() {
    let x = X11::connect().unwrap_or_else(|e| panic!("no X server ({e}); run under `xvfb-run -a`"));
    let home = std::env::temp_dir().join(format!("lineup-titles-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&home);
    for sub in ["home", "data", "cache", "config"] {
        std::fs::create_dir_all(home.join(sub)).unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_lineup"))
        .args(["host", "--stdio", "--agent-id", "agent_titles"])
        .args(["--enable", "app.open_url"])
        .env("HOME", home.join("home"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CACHE_HOME", home.join("cache"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let guard = Kill(child);
    let mut send = |line: String| {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    };

    send(open("plain", "com.lineup.weather", "Weather"));
    send(open("fake", "com.lineup.fake", "Permission request"));
    send(open(
        "confusable",
        "com.lineup.fake2",
        "\u{420}ermission  REQUEST",
    ));
    // Positive control: an ordinary name is kept before the marker.
    assert!(
        shown(&x, &format!("Weather{MARKER}")).is_some(),
        "the ordinary Surface"
    );
    assert!(
        shown(&x, &format!("com.lineup.fake{MARKER}")).is_some(),
        "the fake prompt"
    );
    assert!(
        shown(&x, &format!("com.lineup.fake2{MARKER}")).is_some(),
        "the confusable fake prompt"
    );
    assert_eq!(
        x.find_window_by_title(PROMPT),
        None,
        "no window may be titled like the prompt while no prompt is up"
    );
    assert_eq!(x.find_window_by_title(&format!("{PROMPT}{MARKER}")), None);

    // Positive control: the real prompt is titled `Permission request`.
    send(envelope(
        "msg_call",
        "app.call",
        json!({"call_id": "c1", "capability": "app.open_url", "reason": "show the page",
               "expires_at": in_two_minutes(), "arguments": {"url": "https://example.org/"}}),
    ));
    assert!(
        shown(&x, PROMPT).is_some(),
        "the real prompt shows, titled {PROMPT:?}"
    );
    drop(guard);
    let _ = std::fs::remove_dir_all(&home);
}
