//! The built-ins against a [`RecordingDesktop`]: their schemas through the real kernel, the
//! file-name sanitizing, `app.open_url`'s refusals, `device.pick_file`'s cap and the absence of
//! paths, and base64 round trips.
#![allow(clippy::unwrap_used)]

use std::sync::{mpsc, Mutex};
use std::time::Duration;

use lineup_host_core::{
    AppResult, CapabilityEffect, CapabilitySetup, Clock, ConversationId, Effect, Message, PartyId,
    RevisionEpoch, Session, SessionConfig, SessionId, Status, Timestamp, WallClock,
};

use super::*;
use lineup_webview_shell::{read_picked, write_saved};

struct Mono;
impl Clock for Mono {
    fn monotonic(&self) -> Duration {
        Duration::ZERO
    }
}

struct Wall;
impl WallClock for Wall {
    fn now(&self) -> Timestamp {
        Timestamp::from_unix_seconds(1_785_672_000).unwrap()
    }
}

/// One session of the real kernel with some built-ins registered.
struct Kernel {
    session: Session,
}

impl Kernel {
    fn new(builtins: &[Builtin]) -> Self {
        let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
        config.conversation_id = Some(ConversationId::try_from("c1").unwrap());
        let mut session = Session::new(config, Box::new(Mono)).unwrap();
        session
            .enable_capabilities(CapabilitySetup::new(RevisionEpoch(1), Box::new(Wall)))
            .unwrap();
        for builtin in builtins {
            session
                .register_capability(builtin.capability().unwrap())
                .unwrap();
        }
        Self { session }
    }

    /// Sends an `app.call` (its key is looked up in the session's store, in memory): what
    /// follows.
    fn call(&mut self, call_id: &str, capability: &str, arguments: Value) -> Vec<Effect> {
        let envelope = json!({
            "v": 1, "id": format!("m-{call_id}"), "type": "lineup.v1.app.call",
            "conversation_id": "c1", "sender": { "kind": "agent", "id": "a1" },
            "payload": {
                "call_id": call_id, "capability": capability, "reason": "because",
                "expires_at": "2026-08-02T12:10:00Z", "arguments": arguments
            }
        });
        self.session.handle_inbound(envelope.to_string().as_bytes())
    }

    fn answer(&mut self, ticket: Ticket, answer: Answer) -> Vec<Effect> {
        self.session.answered(ticket, answer).unwrap()
    }
}

fn result_of(effects: &[Effect]) -> Option<AppResult> {
    effects.iter().find_map(|e| match e {
        Effect::Send(Message::AppResult(r)) => Some(r.payload.clone()),
        _ => None,
    })
}

fn capability_effect<T>(
    effects: &[Effect],
    pick: impl Fn(&CapabilityEffect) -> Option<T>,
) -> Option<T> {
    effects.iter().find_map(|e| match e {
        Effect::Capability(c) => pick(c),
        _ => None,
    })
}

/// The kernel's verdict on `arguments` for `builtin`: `Ok` when they pass the schema (the call
/// goes on to consent), the failing field otherwise.
fn schema_verdict(builtin: Builtin, arguments: Value) -> Result<(), String> {
    let mut kernel = Kernel::new(&[builtin]);
    let effects = kernel.call("k", builtin.name(), arguments);
    match result_of(&effects) {
        None => Ok(()),
        Some(r) => {
            assert_eq!(r.status, Status::Failed, "{r:?}");
            Err(r.error.and_then(|e| e.field).unwrap_or_default())
        }
    }
}

fn args(value: Value) -> JsonObject {
    JsonObject::try_from(value).unwrap()
}

#[test]
fn builtins_have_the_spec_names_risks_and_version() {
    let table = [
        (Builtin::OpenUrl, "app.open_url", Risk::UserConfirmation),
        (
            Builtin::ClipboardWrite,
            "clipboard.write",
            Risk::UserConfirmation,
        ),
        (
            Builtin::PickFile,
            "device.pick_file",
            Risk::SystemPermission,
        ),
        (
            Builtin::SaveArtifact,
            "artifact.save",
            Risk::UserConfirmation,
        ),
    ];
    for (builtin, name, risk) in table {
        let capability = builtin.capability().unwrap();
        assert_eq!(capability.name().as_str(), name);
        assert_eq!(capability.version().as_str(), "1.0");
        assert_eq!(capability.risk(), risk);
        assert_eq!(name.parse::<Builtin>().unwrap(), builtin);
    }
}

#[test]
fn an_unknown_builtin_name_is_refused_with_the_known_ones() {
    let e = "shell.exec".parse::<Builtin>().unwrap_err().to_string();
    assert_eq!(
        e,
        "'shell.exec' is not a built-in capability; the built-ins are app.open_url, \
         clipboard.write, device.pick_file, artifact.save"
    );
}

#[test]
fn schemas_accept_valid_arguments_and_name_the_failing_field() {
    let long = "x".repeat(MAX_CLIPBOARD_CHARS + 1);
    let table: Vec<(Builtin, Value, Result<(), &str>)> = vec![
        (
            Builtin::OpenUrl,
            json!({ "url": "https://example.com/docs" }),
            Ok(()),
        ),
        (Builtin::OpenUrl, json!({}), Err("payload.arguments")),
        (
            Builtin::OpenUrl,
            json!({ "url": 5 }),
            Err("payload.arguments/url"),
        ),
        (
            Builtin::OpenUrl,
            json!({ "url": "" }),
            Err("payload.arguments/url"),
        ),
        (
            Builtin::OpenUrl,
            json!({ "url": "https://a.example", "target": "_self" }),
            Err("payload.arguments"),
        ),
        (Builtin::ClipboardWrite, json!({ "text": "北京" }), Ok(())),
        (
            Builtin::ClipboardWrite,
            json!({ "text": ["a"] }),
            Err("payload.arguments/text"),
        ),
        (
            Builtin::ClipboardWrite,
            json!({ "text": long }),
            Err("payload.arguments/text"),
        ),
        (Builtin::ClipboardWrite, json!({}), Err("payload.arguments")),
        (Builtin::PickFile, json!({}), Ok(())),
        (
            Builtin::PickFile,
            json!({ "path": "/etc/passwd" }),
            Err("payload.arguments"),
        ),
        (
            Builtin::SaveArtifact,
            json!({ "file_name": "a.txt", "text": "hi" }),
            Ok(()),
        ),
        (
            Builtin::SaveArtifact,
            json!({ "file_name": "a.bin", "content_base64": "AAE=" }),
            Ok(()),
        ),
        (
            Builtin::SaveArtifact,
            json!({ "file_name": "a.txt", "text": "hi", "content_base64": "AAE=" }),
            Err("payload.arguments"),
        ),
        (
            Builtin::SaveArtifact,
            json!({ "file_name": "a.txt" }),
            Err("payload.arguments"),
        ),
        (
            Builtin::SaveArtifact,
            json!({ "file_name": 7, "text": "hi" }),
            Err("payload.arguments/file_name"),
        ),
        (
            Builtin::SaveArtifact,
            json!({ "file_name": "a.txt", "text": 7 }),
            Err("payload.arguments/text"),
        ),
    ];
    for (builtin, arguments, expected) in table {
        let verdict = schema_verdict(builtin, arguments.clone());
        assert_eq!(
            verdict,
            expected.map_err(str::to_owned),
            "{builtin} with {arguments}"
        );
    }
}

#[test]
fn file_names_are_sanitized() {
    let long_stem = "a".repeat(300);
    let table = [
        ("report.pdf", "report.pdf".to_owned()),
        ("名前 一覧.csv", "名前 一覧.csv".to_owned()),
        ("../../etc/passwd", "_._etc_passwd".to_owned()),
        ("..", "artifact".to_owned()),
        (".", "artifact".to_owned()),
        ("", "artifact".to_owned()),
        ("\u{0}\u{7}", "artifact".to_owned()),
        (".bashrc", "bashrc".to_owned()),
        ("trailing. ", "trailing".to_owned()),
        ("a..b...c.txt", "a.b.c.txt".to_owned()),
        ("C:\\Users\\me\\x.txt", "C__Users_me_x.txt".to_owned()),
        ("dir/file.txt", "dir_file.txt".to_owned()),
        ("what?<>|*\".txt", "what______.txt".to_owned()),
        ("invoice\u{202E}fdp.exe", "invoicefdp.exe".to_owned()),
        ("zero\u{200B}width.txt", "zerowidth.txt".to_owned()),
        ("line\nbreak\ttab.txt", "line break tab.txt".to_owned()),
        (
            &format!("{long_stem}.txt"),
            format!("{}….txt", "a".repeat(MAX_FILE_NAME_GRAPHEMES - 5)),
        ),
    ];
    for (input, expected) in table {
        let name = sanitize_file_name(input);
        assert_eq!(name, expected, "{input:?}");
        assert!(
            !name.contains(['/', '\\']) && !name.contains(".."),
            "{name:?}"
        );
    }
}

#[test]
fn long_multibyte_file_names_stay_within_255_bytes() {
    let family = "👨\u{200D}👩\u{200D}👧";
    let name = sanitize_file_name(&format!("{}.png", family.repeat(100)));
    assert!(name.len() <= 255, "{} bytes", name.len());
    assert!(name.ends_with("….png"), "{name}");
    assert!(name.starts_with(family));
}

#[test]
fn open_url_refuses_what_is_not_a_plain_web_link_before_the_desktop() {
    let desktop = RecordingDesktop::new();
    let refused = [
        "https://user@evil.example/",
        "https://user:pw@bank.example/",
        "http://@bank.example/",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<b>x</b>",
        "https://",
        "not a url",
    ];
    for url in refused {
        let outcome = open_url(&desktop, args(json!({ "url": url })));
        assert!(outcome.is_err(), "{url} was accepted");
    }
    assert!(desktop.calls().is_empty(), "{:?}", desktop.calls());
    // Positive control: a plain link reaches the desktop.
    let opened = open_url(
        &desktop,
        args(json!({ "url": "https://example.com/docs?a=1" })),
    )
    .unwrap();
    assert_eq!(opened.to_json(), r#"{"opened":true}"#);
    assert_eq!(
        desktop.calls(),
        [DesktopCall::OpenUri("https://example.com/docs?a=1".into())]
    );
}

#[test]
fn clipboard_write_hands_the_text_to_the_desktop() {
    let desktop = RecordingDesktop::new();
    let result = clipboard_write(&desktop, args(json!({ "text": "北京 ok" }))).unwrap();
    assert_eq!(result.to_json(), r#"{"copied":true,"chars":5}"#);
    assert_eq!(
        desktop.calls(),
        [DesktopCall::SetClipboardText("北京 ok".into())]
    );
    desktop.fail_with(DesktopError::Failed("there is no display".into()));
    let e = clipboard_write(&desktop, args(json!({ "text": "x" }))).unwrap_err();
    assert_eq!(
        e.message,
        "the desktop could not do it: there is no display"
    );
}

#[test]
fn a_picked_file_gives_name_size_type_and_content_never_a_path() {
    let bytes: Vec<u8> = (0..=255).collect();
    let file = PickedFile::new("/home/someone/secret/report.pdf", bytes.clone());
    let result = picked_result(Ok(file)).unwrap();
    let map = result.as_map();
    let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["content_base64", "mime_type", "name", "size"]);
    assert_eq!(map["name"], "report.pdf");
    assert_eq!(map["size"], 256);
    assert_eq!(map["mime_type"], "application/pdf");
    assert!(!result.to_json().contains("/home"), "{}", result.to_json());
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(map["content_base64"].as_str().unwrap())
        .unwrap();
    assert_eq!(decoded, bytes);
    assert_eq!(
        PickedFile::new("noext", vec![]).mime_type(),
        "application/octet-stream"
    );
}

#[test]
fn a_picked_file_over_1_mib_fails_naming_the_limit() {
    let size = usize::try_from(MAX_PICKED_FILE_BYTES).unwrap();
    let at_limit = picked_result(Ok(PickedFile::new("a.bin", vec![0; size])));
    assert!(at_limit.is_ok());
    let over = picked_result(Ok(PickedFile::new("a.bin", vec![0; size + 1]))).unwrap_err();
    assert_eq!(
        over.message,
        "the chosen file is 1048577 bytes, more than the limit of 1048576 bytes; pick a smaller file"
    );
}

#[test]
fn read_picked_reads_a_file_by_name_and_refuses_big_ones_and_folders() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("notes.txt");
    std::fs::write(&small, "hello").unwrap();
    let file = read_picked(&small, 16).unwrap();
    assert_eq!(
        (file.name(), file.size(), file.mime_type(), file.bytes()),
        ("notes.txt", 5, "text/plain", b"hello".as_slice())
    );
    let big = dir.path().join("big.bin");
    std::fs::write(&big, vec![1u8; 17]).unwrap();
    assert_eq!(
        read_picked(&big, 16).unwrap_err(),
        DesktopError::TooLarge {
            size: 17,
            limit: 16
        }
    );
    let folder = read_picked(dir.path(), 16).unwrap_err().to_string();
    assert!(!folder.contains(&*dir.path().to_string_lossy()), "{folder}");
    let missing = read_picked(&dir.path().join("gone"), 16)
        .unwrap_err()
        .to_string();
    assert!(
        !missing.contains(&*dir.path().to_string_lossy()),
        "{missing}"
    );
}

#[test]
fn artifact_save_decodes_base64_and_reports_no_path() {
    let desktop = RecordingDesktop::new();
    let bytes: Vec<u8> = (0..=255).rev().collect();
    let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
    let result = save_artifact(
        &desktop,
        args(json!({ "file_name": "../out\u{202E}.bin", "content_base64": encoded })),
        Ok(SaveLocation::new("_out.bin")),
    )
    .unwrap();
    assert_eq!(
        desktop.calls(),
        [DesktopCall::WriteFile {
            name: "_out.bin".into(),
            bytes
        }]
    );
    assert_eq!(
        result.to_json(),
        r#"{"saved":true,"file_name":"_out.bin","size":256}"#
    );

    // The user renamed it in the dialog, somewhere deep: only the name comes back.
    let renamed = save_artifact(
        &desktop,
        args(json!({ "file_name": "draft.txt", "text": "hi" })),
        Ok(SaveLocation::new("/home/me/Documents/final.txt")),
    )
    .unwrap();
    assert_eq!(
        renamed.to_json(),
        r#"{"saved":true,"file_name":"final.txt","size":2}"#
    );

    let broken = save_artifact(
        &desktop,
        args(json!({ "file_name": "a.bin", "content_base64": "not base64!" })),
        Ok(SaveLocation::new("a.bin")),
    )
    .unwrap_err();
    assert!(
        broken
            .message
            .starts_with("content_base64 is not valid base64"),
        "{}",
        broken.message
    );
    let failed = save_artifact(
        &desktop,
        args(json!({ "file_name": "a.bin", "text": "x" })),
        Err(DesktopError::Failed(
            "the GUI thread did not show the file dialog".into(),
        )),
    )
    .unwrap_err();
    assert!(
        failed.message.contains("did not show"),
        "{}",
        failed.message
    );
    assert_eq!(desktop.calls().len(), 2, "nothing written after a failure");
}

#[test]
fn write_saved_writes_the_bytes_and_gives_the_name_only() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    let saved = write_saved(&path, &[1, 2, 3]).unwrap();
    assert_eq!((saved.name(), saved.size()), ("out.bin", 3));
    assert_eq!(std::fs::read(&path).unwrap(), [1, 2, 3]);
}

/// Runs a `device.pick_file` call through the kernel and [`Builtins`] with `desktop` deciding
/// the chooser: the call's final result.
fn pick_through_the_kernel(desktop: RecordingDesktop) -> AppResult {
    dialog_through_the_kernel(desktop, Builtin::PickFile, json!({}))
}

/// Runs a call of `builtin` (one with a dialog) through the kernel and [`Builtins`], the user
/// allowing it in the prompt and `desktop` deciding the dialog: the call's final result.
fn dialog_through_the_kernel(
    desktop: RecordingDesktop,
    builtin: Builtin,
    arguments: Value,
) -> AppResult {
    let mut kernel = Kernel::new(&[builtin]);
    let (mut builtins, _) = Builtins::start(BuiltinConfig {
        enabled: [builtin].into(),
        desktop: Some(Arc::new(desktop)),
    })
    .unwrap()
    .unwrap();
    let (tx, rx) = mpsc::channel();
    let tx = Mutex::new(tx);
    let sink: AnswerSink = Arc::new(move |_session, ticket, answer| {
        let _ = tx.lock().unwrap().send((ticket, answer));
    });
    let effects = kernel.call("p1", builtin.name(), arguments);
    let prompt = capability_effect(&effects, |e| match e {
        CapabilityEffect::Prompt(p) => Some(p.clone()),
        _ => None,
    })
    .expect("the prompt first");
    assert_eq!(
        prompt.may_remember,
        builtin != Builtin::PickFile,
        "R-CAP-3: system_permission is never remembered"
    );
    let effects = kernel.answer(
        prompt.ticket,
        Answer::Consent(lineup_host_core::ConsentAnswer::Allow),
    );
    let hook = capability_effect(&effects, |e| match e {
        CapabilityEffect::Hook(h) => Some(h.clone()),
        _ => None,
    })
    .expect("then the permission check");
    assert!(builtins.owns_hook(&hook));
    builtins.hook(SessionId::STANDALONE, hook, &sink);
    let (ticket, answer) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
    let mut effects = kernel.answer(ticket, answer);
    loop {
        if let Some(result) = result_of(&effects) {
            return result;
        }
        let run = capability_effect(&effects, |e| match e {
            CapabilityEffect::Run(r) => Some(r.clone()),
            _ => None,
        })
        .expect("a result or a run");
        assert!(
            builtins.run(SessionId::STANDALONE, run, &sink).is_none(),
            "a built-in's run"
        );
        let (ticket, answer) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
        effects = kernel.answer(ticket, answer);
    }
}

#[test]
fn pick_file_runs_the_chooser_as_its_permission_and_hands_over_the_file() {
    let desktop = RecordingDesktop::new();
    desktop.answer_pick(Ok(Some(PickedFile::new("/tmp/x/photo.png", vec![7; 10]))));
    let result = pick_through_the_kernel(desktop.clone());
    assert_eq!(result.status, Status::Completed, "{result:?}");
    let value = result.result.unwrap();
    assert_eq!(value.as_map()["name"], "photo.png");
    assert_eq!(value.as_map()["mime_type"], "image/png");
    assert_eq!(value.as_map()["content_base64"], "BwcHBwcHBwcHBw==");
    assert_eq!(
        desktop.calls(),
        [DesktopCall::ChooseFile {
            max_bytes: MAX_PICKED_FILE_BYTES
        }]
    );
}

#[test]
fn cancelling_the_chooser_cancels_the_pick() {
    let desktop = RecordingDesktop::new();
    let result = pick_through_the_kernel(desktop);
    assert_eq!(result.status, Status::Cancelled, "{result:?}");
}

#[test]
fn artifact_save_asks_the_dialog_before_it_runs_and_writes_where_the_user_chose() {
    let desktop = RecordingDesktop::new();
    let result = dialog_through_the_kernel(
        desktop.clone(),
        Builtin::SaveArtifact,
        json!({ "file_name": "../report\u{202E}.csv", "text": "a,b\n" }),
    );
    assert_eq!(result.status, Status::Completed, "{result:?}");
    assert_eq!(
        desktop.calls(),
        [
            DesktopCall::SaveFile {
                suggested_name: "_report.csv".into()
            },
            DesktopCall::WriteFile {
                name: "_report.csv".into(),
                bytes: b"a,b\n".to_vec()
            }
        ]
    );
}

#[test]
fn cancelling_the_save_dialog_cancels_the_call_and_writes_nothing() {
    let desktop = RecordingDesktop::new();
    desktop.answer_save(Ok(None));
    let result = dialog_through_the_kernel(
        desktop.clone(),
        Builtin::SaveArtifact,
        json!({ "file_name": "a.txt", "text": "hi" }),
    );
    assert_eq!(result.status, Status::Cancelled, "{result:?}");
    assert_eq!(
        desktop.calls(),
        [DesktopCall::SaveFile {
            suggested_name: "a.txt".into()
        }]
    );
}

#[test]
fn a_pick_over_the_limit_fails_naming_it() {
    let desktop = RecordingDesktop::new();
    desktop.answer_pick(Err(DesktopError::TooLarge {
        size: 5_000_000,
        limit: MAX_PICKED_FILE_BYTES,
    }));
    let result = pick_through_the_kernel(desktop);
    assert_eq!(result.status, Status::Failed, "{result:?}");
    let message = result.message.unwrap_or_default();
    assert!(message.contains("limit of 1048576 bytes"), "{message}");
}

#[test]
fn a_withdrawn_deadline_is_over() {
    let until = Deadline::after(Duration::from_secs(60));
    assert!(!until.is_over() && until.remaining() > Duration::ZERO);
    until.clone().withdraw();
    assert!(until.is_over() && until.is_withdrawn());
    assert_eq!(until.remaining(), Duration::ZERO);
}

/// R-CAP-4: each built-in words its own prompt; `app.open_url` shows where the link leads, by
/// host-core's link rule, and a link that rule refuses gets no prompt at all.
#[test]
fn r_cap_4_builtins_word_their_own_prompts() {
    let (builtins, _) = Builtins::start(BuiltinConfig {
        enabled: Builtin::ALL.into_iter().collect(),
        desktop: Some(Arc::new(RecordingDesktop::new())),
    })
    .unwrap()
    .unwrap();
    let args = |v: serde_json::Value| JsonObject::try_from(v).unwrap();
    let name = |n: &str| CapabilityName::try_from(n).unwrap();
    let open = builtins
        .prompt_wording(
            &name("app.open_url"),
            &args(json!({"url": "https://bücher.example/a"})),
        )
        .unwrap()
        .unwrap();
    assert_eq!(open.headline, "asks to open a link in your browser");
    assert_eq!(open.link_host.as_deref(), Some("xn--bcher-kva.example"));
    for refused in [
        json!({"url": "https://bank.example@evil.example/"}),
        json!({"url": 5}),
        json!({}),
    ] {
        assert!(
            builtins
                .prompt_wording(&name("app.open_url"), &args(refused.clone()))
                .unwrap()
                .is_err(),
            "{refused}"
        );
    }
    let copy = builtins
        .prompt_wording(&name("clipboard.write"), &args(json!({"text": "x"})))
        .unwrap()
        .unwrap();
    assert_eq!(copy.headline, "asks to copy text to your clipboard");
    assert_eq!(copy.link_host, None);
    assert!(builtins
        .prompt_wording(&name("weather.set_unit"), &args(json!({})))
        .is_none());
}
