//! The show loop against a real MCP server over stdio (the CLI tests' fake server on Node.js):
//! the view's requests the host forwards reach the server and come back as `mcp.answer`s, each
//! request answered once, the agent's refusals and the server's errors as JSON-RPC errors; the
//! view's notes reach the agent; the view's close ends the loop (R-MCP-6).
#![allow(clippy::unwrap_used, clippy::panic, missing_docs)]

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lineup_host_core::mcp::INVALID_PARAMS;
use lineup_host_core::{decode, ConversationId, InstanceId, Limits, Message, PartyId};
use lineup_mcp_agent::{Flow, FromHost, McpServer, Outbox, Show, ShowEnd, ShowEvent};
use serde_json::{json, Value};
use tokio::sync::mpsc;

/// `node fake_server.mjs plain`, on the MCP server cache's node when there is one; `None`
/// (said on stderr) when there is no node at all, outside CI.
#[allow(clippy::print_stderr)]
fn fake_server() -> Option<Vec<OsString>> {
    let cache = std::env::var_os("LINEUP_MCP_SERVERS_DIR")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/lineup-mcp-servers"))
        });
    let node = cache
        .map(|dir| dir.join("bin/node"))
        .filter(|node| node.exists())
        .map(PathBuf::into_os_string)
        .or_else(|| {
            let found = std::process::Command::new("node").arg("--version").output();
            found
                .ok()
                .filter(|o| o.status.success())
                .map(|_| "node".into())
        });
    let Some(node) = node else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no node: run scripts/mcp-servers.sh"
        );
        eprintln!("no node (scripts/mcp-servers.sh installs one); nothing checked");
        return None;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/tests/mcp/fake_server.mjs");
    Some(vec![node, script.into(), "plain".into()])
}

/// An envelope of the host, as `lineup host` writes it.
fn hosts(kind: &str, payload: Value) -> Message {
    let envelope = json!({"v": 1, "id": format!("h-{kind}"), "type": format!("lineup.v1.{kind}"),
        "conversation_id": "c1", "sender": {"kind": "client", "id": "desktop"}, "payload": payload});
    decode(envelope.to_string().as_bytes(), &Limits::default()).unwrap()
}

/// The view's request `id`, forwarded by the host.
fn request(id: u64, server: &str, method: &str, params: Value) -> Message {
    hosts(
        "mcp.request",
        json!({"instance_id": "v1", "generation": 3, "server": server, "request_id": id,
            "method": method, "params": params}),
    )
}

#[tokio::test]
async fn r_mcp_6_the_views_requests_reach_the_server_and_each_is_answered_once() {
    let Some(command) = fake_server() else {
        return;
    };
    let server = McpServer::connect(&command, Duration::from_secs(20), false)
        .await
        .unwrap();
    let outbox = Outbox::new(
        ConversationId::try_from("c1").unwrap(),
        PartyId::try_from("agent").unwrap(),
    );
    let show = Show::prepare(
        &server,
        "fake".to_owned().try_into().unwrap(),
        None,
        serde_json::Map::new(),
        InstanceId::try_from("v1").unwrap(),
        outbox,
    )
    .await
    .unwrap();
    let (to_host, mut host_reads) = mpsc::unbounded_channel::<Vec<u8>>();
    let (host_writes, mut from_host) = mpsc::unbounded_channel::<FromHost>();
    let mut notes = Vec::new();
    let mut forwarded = Vec::new();
    let mut tools = Vec::new();
    let to_host = |bytes| to_host.send(bytes).is_ok();
    let relaying = show.run(&mut from_host, to_host, |event| {
        match event {
            ShowEvent::Note(note) => {
                notes.push((note.method(), Value::Object(note.params().clone())))
            }
            ShowEvent::Forwarded(forward) => {
                forwarded.push(forward.method());
                if let Some(tool) = forward.tool() {
                    tools.push(tool.to_owned());
                }
            }
            _ => {}
        }
        Flow::Continue
    });
    let host = async {
        // The first envelopes: the view (the fake's model-visible tool `old-key`, its blob
        // decoded, inline), the call's input and result.
        let mut first = Vec::new();
        for _ in 0..3 {
            let bytes = host_reads.recv().await.unwrap();
            first.push(decode(&bytes, &Limits::default()).unwrap());
        }
        let Message::McpAppOpen(open) = &first[0] else {
            panic!("{first:?}")
        };
        assert_eq!(open.payload.mcp_app.tool().name.as_str(), "old-key");
        assert!(matches!(first[1], Message::McpTool(_)) && matches!(first[2], Message::McpTool(_)));
        let asked = [
            request(
                1,
                "fake",
                "tools/call",
                json!({"name": "app-only", "arguments": {"x": 1}}),
            ),
            request(2, "fake", "tools/call", json!({"name": "fails"})),
            request(3, "fake", "tools/call", json!({"name": "missing"})),
            request(4, "fake", "resources/read", json!({"uri": "ui://blob"})),
            request(5, "fake", "resources/templates/list", json!({})),
            request(6, "fake", "resources/list", json!({})),
            request(
                7,
                "fake",
                "ui/message",
                json!({"role": "user", "content": []}),
            ),
            request(8, "other", "resources/list", json!({})),
        ];
        for message in asked {
            host_writes.send(message.into()).unwrap();
        }
        host_writes
            .send(FromHost::from(hosts(
                "mcp.notify",
                json!({"instance_id": "v1", "generation": 3, "server": "fake",
                    "method": "ui/update-model-context", "params": {"content": [{"type": "text", "text": "ctx"}]}}),
            )))
            .unwrap();
        let mut answers = BTreeMap::new();
        while answers.len() < 8 {
            let bytes = host_reads.recv().await.unwrap();
            let Message::McpAnswer(answer) = decode(&bytes, &Limits::default()).unwrap() else {
                panic!("not an answer")
            };
            assert_eq!(answer.payload.generation, 3);
            let previous = answers.insert(answer.payload.request_id, answer.payload.outcome);
            assert!(previous.is_none(), "answered twice");
        }
        host_writes
            .send(FromHost::from(hosts(
                "ui.event",
                json!({"instance_id": "v1", "event": "close", "data": {}}),
            )))
            .unwrap();
        answers
    };
    let (ran, answers) = tokio::join!(relaying, host);
    let (end, relay) = ran.unwrap();
    assert_eq!(end, ShowEnd::Closed(None));
    let ok = |id: u64| answers[&id].clone().unwrap().to_json();
    let error = |id: u64| answers[&id].clone().unwrap_err();
    assert!(ok(1).contains(r#"{\"x\":1}"#), "{}", ok(1));
    assert!(ok(2).contains(r#""isError":true"#), "{}", ok(2));
    assert_eq!(error(3).code, INVALID_PARAMS);
    assert!(ok(4).contains("PHA+YmxvYjwvcD4="), "{}", ok(4));
    // The server's own error, passed through.
    assert_eq!(error(5).code, -32601, "{:?}", error(5));
    assert!(ok(6).contains("ui://blob"), "{}", ok(6));
    assert_eq!(ok(7), "{}");
    assert!(error(8).message.contains("\"other\""), "{:?}", error(8));
    // Only what the server answers was forwarded; the rest the agent answered itself.
    forwarded.sort_unstable();
    assert_eq!(
        forwarded,
        [
            "resources/list",
            "resources/read",
            "resources/templates/list",
            "tools/call",
            "tools/call"
        ]
    );
    tools.sort_unstable();
    assert_eq!(tools, ["app-only", "fails"]);
    assert_eq!(notes[0].0, "ui/message");
    assert_eq!(notes[1].0, "ui/update-model-context");
    let context = relay.model_context().map(|c| Value::Object(c.clone()));
    assert_eq!(
        context,
        Some(json!({"content": [{"type": "text", "text": "ctx"}]}))
    );
    server.close().await;
}
