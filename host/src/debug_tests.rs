//! Logs reach journald (#7 item 7): `Debug` of every type of this crate that holds what a page
//! wrote, the agent's state, arguments or words, or a capability's result shows a length and a
//! digest, never the text in any form.

use std::time::Duration;

use lineup_host_core::leaked_form;

use crate::delegate::Refusal;
use crate::host::HostEvent;
use lineup_builtins::{Deadline, DesktopCall, PickedFile, SaveFile, SaveLocation, SavedFile};
use lineup_webview_shell::ArgumentLine;

const SECRET: &str = "zQ7\"secret-shell-Ω";

/// Fails, naming the form, if any of `shown` carries the secret; each must show a length.
fn assert_redacted(shown: &[String]) {
    for text in shown {
        assert!(text.contains("bytes: "), "a length is shown: {text}");
        assert_eq!(
            leaked_form(text, SECRET),
            None,
            "Debug printed the secret: {text}"
        );
    }
}

/// #7 item 7: a URL the page chose, refused, is page data (as in `ViewEvent`).
#[test]
fn debug_of_a_refused_url_shows_a_fingerprint_as_view_event_does() {
    let url = format!("https://example.invalid/?s={SECRET}");
    let refusals = [
        Refusal::Navigation(url.clone()),
        Refusal::NewWindow(url.clone()),
        Refusal::Download(url.clone()),
    ];
    let mut shown = Vec::new();
    for refusal in &refusals {
        shown.push(format!("{refusal:?}"));
        shown.push(format!("{refusal:#?}"));
        // Display writes the URL out, for the Surface's author.
        assert!(refusal.to_string().contains(&url));
    }
    assert_redacted(&shown);
    assert!(
        shown[0].starts_with("Navigation(Fingerprint { bytes: "),
        "{}",
        shown[0]
    );
    assert_eq!(format!("{:?}", Refusal::Permission), "Permission");
}

/// #7 item 7: an agent's line on its way to the event loop (a state script waiting for the page
/// is the platform layer's `DeliveryQueue`, checked there).
#[test]
fn debug_of_an_inbound_envelope_shows_a_fingerprint() {
    let line = format!(
        r#"{{"v":1,"type":"lineup.v1.ui.patch","payload":{{"instance_id":"w","state":{{"s":{}}}}}}}"#,
        serde_json::to_string(SECRET).unwrap_or_default()
    );
    let event = HostEvent::inbound_line(7, line.into_bytes());
    let shown = [format!("{event:?}"), format!("{event:#?}")];
    assert_redacted(&shown);
    assert!(shown[0].contains("line: Some(7)"), "{}", shown[0]);
}

/// #7 item 7: what the built-ins got from the agent (a URL, clipboard text, a file to save) and
/// what they hand back (a picked or saved file), and the prompt's list of arguments (the prompt's snapshot is checked in the platform layer).
#[test]
fn debug_of_capability_arguments_and_results_shows_a_fingerprint() {
    let bytes = format!("content {SECRET}").into_bytes();
    let name = format!("{SECRET}.txt");
    let calls = [
        DesktopCall::OpenUri(format!("https://example.com/?s={SECRET}")),
        DesktopCall::SetClipboardText(SECRET.to_owned()),
        DesktopCall::SaveFile {
            suggested_name: name.clone(),
        },
        DesktopCall::WriteFile {
            name: name.clone(),
            bytes: bytes.clone(),
        },
    ];
    let save = SaveFile::new(name.clone(), Deadline::after(Duration::from_secs(60)));
    let location = SaveLocation::new(format!("/home/{SECRET}/{name}"));
    let picked = PickedFile::new(&name, bytes);
    let saved = SavedFile::new(&name, 12);
    let line = ArgumentLine {
        key: SECRET.to_owned(),
        value: SECRET.to_owned(),
    };
    let mut shown: Vec<String> = calls.iter().map(|c| format!("{c:?}")).collect();
    for text in [
        format!("{save:?}"),
        format!("{location:?}"),
        format!("{picked:?}"),
        format!("{picked:#?}"),
        format!("{saved:?}"),
        format!("{line:?}"),
    ] {
        shown.push(text);
    }
    assert_redacted(&shown);
    // What is not the agent's or the user's stays readable.
    assert!(format!("{picked:?}").contains("text/plain"));
}
