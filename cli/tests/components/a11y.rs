//! R-STD-12 as a screen reader meets it: on a private session bus with the accessibility bus
//! (at-spi2-core), each component's controls are read back through AT-SPI (the system Python's
//! `gi.repository.Atspi`, `support/atspi_tree.py`) with their roles and names, each in a
//! region named for its component (its box) in the conversation's one board window: buttons, the
//! entry of an input, a form's fields, a choice's radio buttons in a named group, a named
//! progress bar, the status region and the alert, and no control without a name.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::MutexGuard;

use lineup_tests::x11::X11;

use serde::Deserialize;
use serde_json::json;

use super::screen::{display, screen};
use super::stdio_host::{envelope, StdioHost};
use super::{shown, title, STACK};

/// A session bus of the test's own (`dbus-daemon --session`), killed when dropped; it starts
/// the accessibility bus on demand, as a desktop session does.
pub(super) struct SessionBus {
    child: Child,
    pub(super) address: String,
}

impl SessionBus {
    pub(super) fn start() -> Self {
        let mut child = Command::new("dbus-daemon")
            .args(["--session", "--nofork", "--print-address=1"])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("dbus-daemon (scripts/setup.sh installs it)");
        let mut address = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut address)
            .unwrap();
        let address = address.trim().to_owned();
        assert!(!address.is_empty(), "dbus-daemon printed no address");
        Self { child, address }
    }
}

impl Drop for SessionBus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A `lineup host --stdio` on a session bus of its own (so on an accessibility bus of its
/// own), with the screen held while it runs.
pub(super) struct ReadHost {
    pub(super) host: StdioHost,
    pub(super) bus: SessionBus,
    pub(super) x: X11,
    _home: tempfile::TempDir,
    _screen: MutexGuard<'static, ()>,
}

impl ReadHost {
    /// Starts the host with `env` beside the bus's address, and `args`.
    pub(super) fn start(env: &[(&str, &str)], args: &[&str]) -> Self {
        let screen = screen();
        let x = display();
        let bus = SessionBus::start();
        let home = tempfile::tempdir().unwrap();
        let mut all = vec![("DBUS_SESSION_BUS_ADDRESS", bus.address.as_str())];
        all.extend_from_slice(env);
        let host = StdioHost::start_with_env(home.path(), home.path(), &all, args);
        Self {
            host,
            bus,
            x,
            _home: home,
            _screen: screen,
        }
    }

    /// The accessibility tree once each of `titles` holds a control (`support/atspi_tree.py`).
    pub(super) fn tree(&self, titles: &[String]) -> Vec<Node> {
        let read = Command::new(system_python())
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/support/atspi_tree.py"
            ))
            .arg("30")
            .args(titles)
            .env("DBUS_SESSION_BUS_ADDRESS", &self.bus.address)
            .output()
            .expect("the AT-SPI reader (python3-gi, gir1.2-atspi-2.0)");
        assert!(
            read.status.success(),
            "the AT-SPI reader failed: {}",
            String::from_utf8_lossy(&read.stderr)
        );
        serde_json::from_slice(&read.stdout).unwrap()
    }

    /// Stops the host and checks that it stopped cleanly.
    pub(super) fn stop(self) {
        self.host.stop();
    }
}

/// One accessible as AT-SPI reports it: the window and the web document it is in.
#[derive(Debug, Deserialize)]
pub(super) struct Node {
    pub(super) frame: String,
    document: String,
    pub(super) role: String,
    pub(super) name: String,
    /// Its text, where it has any (a paragraph's, a heading's).
    #[serde(default)]
    pub(super) text: String,
}

/// The system Python, which has the distribution's `gi` bindings.
pub(super) fn system_python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// The roles of controls and live regions that must carry a name.
const NAMED: [&str; 7] = [
    "push button",
    "entry",
    "radio button",
    "toggle button",
    "check box",
    "progress bar",
    "notification",
];

#[test]
fn r_std_12_a_screen_reader_reads_each_controls_role_and_name() {
    let mut on = ReadHost::start(&[], &["--builtin-components"]);
    let (x, host) = (&on.x, &mut on.host);
    let opens = [
        json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Deploy to production?", "confirm_label": "Deploy",
                         "deny_label": "Keep"}}}),
        json!({"instance_id": "p1", "component": {"id": "progress", "version": "1",
               "props": {"label": "Uploading", "cancel_label": "Stop"}},
               "state": {"value": 40}}),
        json!({"instance_id": "c1", "component": {"id": "choice", "version": "1",
               "props": {"label": "Region", "options": [
                   {"value": "eu", "label": "Europe"},
                   {"value": "us", "label": "US", "description": "Virginia"}]}}}),
        json!({"instance_id": "i1", "component": {"id": "input", "version": "1",
               "props": {"label": "Ticket title", "type": "text"}}}),
        json!({"instance_id": "f1", "component": {"id": "form", "version": "1",
               "props": {"title": "New user", "fields": [
                   {"name": "email", "kind": "input", "label": "Email", "type": "email"},
                   {"name": "admin", "kind": "toggle", "label": "Admin"}]}}}),
        json!({"instance_id": "s1", "component": {"id": "status", "version": "1"},
               "state": {"status": "in_progress", "title": "Migrating"}}),
        json!({"instance_id": "e1", "component": {"id": "alert", "version": "1"},
               "state": {"severity": "error", "title": "Deploy failed"}}),
    ];
    for (i, open) in opens.into_iter().enumerate() {
        host.send(&envelope(&format!("m-{i}"), "ui.open", open));
    }
    let ids = [
        "confirm", "progress", "choice", "input", "form", "status", "alert",
    ];
    let titles: Vec<String> = ids.iter().map(|id| title(id)).collect();
    // R-STD-13: the conversation's components share one window.
    shown(x, STACK);
    let nodes = on.tree(&titles);
    let has = |id: &str, role: &str, name: &str| {
        nodes.iter().any(|n| {
            n.frame == STACK && n.document == title(id) && n.role == role && n.name.trim() == name
        })
    };
    for (id, role, name) in [
        ("confirm", "heading", "Deploy to production?"),
        ("confirm", "push button", "Deploy"),
        ("confirm", "push button", "Keep"),
        ("progress", "progress bar", "Uploading"),
        ("progress", "push button", "Stop"),
        ("choice", "panel", "Region"),
        ("choice", "radio button", "Europe"),
        ("choice", "radio button", "US"),
        ("input", "entry", "Ticket title"),
        ("input", "push button", "Submit"),
        ("form", "entry", "Email"),
        ("form", "toggle button", "Admin"),
        ("status", "status bar", "Migrating"),
        ("alert", "notification", "Deploy failed"),
    ] {
        assert!(
            has(id, role, name),
            "AT-SPI has no {role} {name:?} in the {id} document: {:#?}",
            nodes
                .iter()
                .filter(|n| n.document == title(id))
                .collect::<Vec<_>>()
        );
    }
    let unnamed: Vec<&Node> = nodes
        .iter()
        .filter(|n| NAMED.contains(&n.role.as_str()) && n.name.trim().is_empty())
        .collect();
    assert!(unnamed.is_empty(), "controls without a name: {unnamed:?}");
    on.stop();
}

#[test]
fn r_std_9_in_a_chinese_context_a_screen_reader_reads_the_default_labels_in_chinese() {
    let mut on = ReadHost::start(&[("LC_ALL", "zh_CN.UTF-8")], &[]);
    let (x, host) = (&on.x, &mut on.host);
    // No labels given: the host's own defaults label every button.
    let opens = [
        json!({"instance_id": "k1", "component": {"id": "confirm", "version": "1",
               "props": {"title": "发布到生产环境？"}}}),
        json!({"instance_id": "i1", "component": {"id": "input", "version": "1",
               "props": {"label": "工单标题", "type": "text"}}}),
        json!({"instance_id": "e1", "component": {"id": "alert", "version": "1",
               "props": {"dismissible": true}},
               "state": {"severity": "error", "title": "部署失败"}}),
    ];
    for (i, open) in opens.into_iter().enumerate() {
        host.send(&envelope(&format!("m-{i}"), "ui.open", open));
    }
    let zh = |id: &str| format!("{id} — LineUp 问题");
    shown(x, "问题 — LineUp 问题");
    let nodes = on.tree(&["confirm", "input", "alert"].map(zh));
    let buttons = |id: &str| -> Vec<&str> {
        nodes
            .iter()
            .filter(|n| n.document == zh(id) && n.role == "push button")
            .map(|n| n.name.trim())
            .collect()
    };
    // R-STD-9: the confirm's two defaults, the input's submit and the alert's dismiss, in the
    // host context's language (the English run above reads "Submit" in the same place).
    for (id, want) in [
        ("confirm", &["确认", "取消"][..]),
        ("input", &["提交"][..]),
        ("alert", &["关闭"][..]),
    ] {
        let got = buttons(id);
        for label in want {
            assert!(got.contains(label), "{id}: no {label:?} button in {got:?}");
        }
        for english in ["Confirm", "Cancel", "Submit", "Dismiss"] {
            assert!(
                !got.contains(&english),
                "{id}: an English {english:?} in {got:?}"
            );
        }
    }
    on.stop();
}
