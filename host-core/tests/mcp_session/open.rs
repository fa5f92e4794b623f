//! Opening MCP App views: the configuration's switch (R-MCP-13), the HTML inline or by digest
//! in chunks (R-MCP-3, R-MCP-4), and the instance namespace shared with Surfaces (R-UI-1,
//! R-SES-1).

use base64::Engine as _;
use lineup_host_core::mcp::ResourceDigest;
use sha2::{Digest as _, Sha256};

use super::*;

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn digest_of(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// Sends `bytes` as `mcp.resource` chunks of `chunk` raw bytes each; every chunk's effects.
fn send_chunks(rig: &mut Rig, bytes: &[u8], chunk: usize) -> Vec<Vec<Effect>> {
    let digest = digest_of(bytes);
    bytes
        .chunks(chunk)
        .enumerate()
        .map(|(i, part)| {
            rig.agent(
                "mcp.resource",
                json!({"digest": digest, "size": bytes.len(), "offset": i * chunk,
                    "data": b64(part)}),
            )
        })
        .collect()
}

#[test]
fn r_mcp_13_mcp_app_is_refused_unsupported_unless_the_session_shows_views() {
    let payload = open_payload("v1", json!({"text": "<p>t</p>"}), json!({}));
    let chunk = json!({"digest": digest_of(b"x"), "size": 1, "offset": 0, "data": "eA=="});
    // Off (the default): the open and every mcp.* envelope are refused, and nothing opens.
    let mut off = Rig::with(Limits::default(), None);
    let fx = off.agent("ui.open", payload.clone());
    assert_eq!(
        refusal(&fx),
        ("unsupported".into(), Some("payload.mcp_app".into()), None)
    );
    assert!(!fx.iter().any(|e| matches!(e, Effect::Mcp(_))), "{fx:?}");
    let fx = off.agent("mcp.resource", chunk.clone());
    assert_eq!(refusal(&fx).0, "unsupported");
    assert_eq!(off.session.surface_count(), 0);
    // Positive control: the same envelopes in a session that shows views.
    let mut on = Rig::new();
    let fx = on.agent("ui.open", payload);
    assert_eq!(opened(&fx).tool.name.as_str(), "get-time");
    assert!(sent_of(&fx, "client.error").is_empty(), "{fx:?}");
    assert!(sent_of(&on.agent("mcp.resource", chunk), "client.error").is_empty());
    assert_eq!(on.session.surface_count(), 1);
}

#[test]
fn r_mcp_3_a_view_opens_inline_from_text_or_base64_with_its_digest_and_tool() {
    let html = "<!doctype html><p>時刻</p>";
    for form in [
        json!({ "text": html }),
        json!({"blob": b64(html.as_bytes())}),
    ] {
        let mut rig = Rig::new();
        let fx = rig.agent("ui.open", open_payload("v1", form.clone(), json!({})));
        let open = opened(&fx);
        assert_eq!(&*open.html, html.as_bytes(), "{form}");
        assert_eq!(open.digest, ResourceDigest::of(html.as_bytes()));
        assert_eq!(open.uri, "ui://get-time/view");
        assert_eq!(open.ui.prefers_border, Some(true));
        assert_eq!(open.server.as_str(), "basic-server");
        assert_eq!(open.key.instance.as_str(), "v1");
        // Nothing goes upstream for an open (R-UI-1).
        assert!(sent(&fx).is_empty(), "{fx:?}");
    }
}

#[test]
fn r_mcp_4_a_view_over_1_mib_opens_through_its_digest_chunks() {
    let mut rig = Rig::new();
    // 1.25 MiB: more than an envelope holds (R-ENV-4), so only chunks can bring it.
    let html: Vec<u8> = (0..1_310_720u32)
        .map(|i| b"<p>mcp-app</p>"[i as usize % 14])
        .collect();
    let digest = digest_of(&html);
    let payload = open_payload("big", json!({ "digest": digest }), json!({}));
    let chunks = send_chunks(&mut rig, &html[..1_000_000], 384 * 1024);
    assert!(chunks.iter().all(|fx| sent(fx).is_empty()), "{chunks:?}");
    // Before its last chunk the digest opens nothing: unknown_resource, naming the field.
    let early = rig.agent("ui.open", payload.clone());
    assert_eq!(
        refusal(&early),
        (
            "unknown_resource".into(),
            Some("payload.mcp_app.resource.digest".into()),
            None
        )
    );
    let mut rig = Rig::new();
    let chunks = send_chunks(&mut rig, &html, 384 * 1024);
    assert_eq!(chunks.len(), 4);
    assert!(chunks.iter().all(|fx| sent(fx).is_empty()), "{chunks:?}");
    let fx = rig.agent("ui.open", payload.clone());
    assert_eq!(&*opened(&fx).html, html.as_slice());
    // Sent once, it opens again by its digest (R-MCP-4).
    let again = rig.agent(
        "ui.open",
        open_payload("big-2", json!({ "digest": digest }), json!({})),
    );
    assert_eq!(opened(&again).html.len(), html.len());
}

#[test]
fn r_mcp_4_a_resource_of_8_mib_and_one_byte_is_refused_naming_its_limit() {
    let limit = 8 * 1024 * 1024u64;
    let mut rig = Rig::new();
    let first =
        |size: u64| json!({"digest": digest_of(b"any"), "size": size, "offset": 0, "data": "AAAA"});
    let fx = rig.agent("mcp.resource", first(limit + 1));
    assert_eq!(
        refusal(&fx),
        ("too_large".into(), Some("payload.size".into()), Some(limit))
    );
    let message = &sent_of(&fx, "client.error")[0]["payload"]["message"];
    assert!(message.as_str().unwrap().contains("8388609"), "{message}");
    // Exactly 8 MiB may arrive (positive control).
    assert!(sent(&rig.agent("mcp.resource", first(limit))).is_empty());
}

/// The code, the field and the limit a refusal names.
type Refused = (&'static str, &'static str, Option<u64>);

#[test]
fn r_mcp_4_chunks_out_of_order_too_large_or_not_matching_their_digest_are_refused() {
    let bytes = b"<p>a view of some bytes</p>";
    let digest = digest_of(bytes);
    let chunk = |digest: &str, offset: usize, data: &[u8]| json!({"digest": digest, "size": bytes.len(), "offset": offset, "data": b64(data)});
    let table: Vec<(&str, Value, Refused)> = vec![
        (
            "a first chunk that does not start at 0",
            chunk(&digest, 4, &bytes[4..8]),
            ("out_of_order", "payload.offset", None),
        ),
        (
            "bytes whose digest is another",
            chunk(&digest_of(b"other"), 0, bytes),
            ("integrity_mismatch", "payload.digest", None),
        ),
        (
            "a chunk longer than 512 KiB of base64",
            json!({"digest": digest, "size": 600_000, "offset": 0,
                "data": b64(&vec![b'a'; 400_000])}),
            ("too_large", "payload.data", Some(512 * 1024)),
        ),
        (
            "data that is not base64",
            json!({"digest": digest, "size": bytes.len(), "offset": 0, "data": "<p>"}),
            ("invalid_field", "payload.data", None),
        ),
    ];
    for (what, payload, (code, field, limit)) in table {
        let mut rig = Rig::new();
        let fx = rig.agent("mcp.resource", payload);
        assert_eq!(
            refusal(&fx),
            (code.into(), Some(field.into()), limit),
            "{what}"
        );
        // The refusal changed nothing: the digest opens nothing.
        let open = rig.agent(
            "ui.open",
            open_payload("v", json!({ "digest": digest }), json!({})),
        );
        assert_eq!(refusal(&open).0, "unknown_resource", "{what}");
    }
}

#[test]
fn r_ui_1_a_view_and_a_surface_replace_each_other_under_one_instance_id() {
    let mut rig = Rig::new();
    let surface = json!({"instance_id": "w", "app": {"id": "com.example.w", "version": "1.0.0",
        "html": "<b>hi</b>", "css": "", "js": ""}});
    let fx = rig.agent("ui.open", surface.clone());
    let Some(Effect::Open(open)) = fx.first() else {
        panic!("{fx:?}")
    };
    let surface_key = open.key.clone();
    // A view opened under the Surface's id closes the Surface, telling the agent nothing.
    let fx = rig.agent(
        "ui.open",
        open_payload("w", json!({"text": "<p/>"}), json!({})),
    );
    assert!(closes(&fx, &surface_key), "{fx:?}");
    let view = opened(&fx).key.clone();
    assert!(sent(&fx).is_empty(), "{fx:?}");
    assert_eq!(rig.session.surface_count(), 1);
    // A Surface opened under the view's id takes its place; the view, never initialized, closes
    // at once.
    let fx = rig.agent("ui.open", surface);
    assert!(closes(&fx, &view), "{fx:?}");
    assert!(matches!(fx.last(), Some(Effect::Open(_))), "{fx:?}");
    assert_eq!(rig.session.surface_count(), 1);
}

#[test]
fn r_ses_1_views_count_toward_max_surfaces_with_the_surfaces() {
    let mut limits = Limits::default();
    limits.max_surfaces = 1;
    let mut rig = Rig::with(limits, Some(McpLimits::default()));
    rig.open("v1");
    let fx = rig.agent(
        "ui.open",
        open_payload("v2", json!({"text": "<p/>"}), json!({})),
    );
    assert_eq!(refusal(&fx).0, "too_many_surfaces");
    let surface = json!({"instance_id": "w", "app": {"id": "com.example.w", "version": "1.0.0",
        "html": "", "css": "", "js": ""}});
    assert_eq!(
        refusal(&rig.agent("ui.open", surface.clone())).0,
        "too_many_surfaces"
    );
    // Replacing the view under its own id is no new one (positive control).
    let fx = rig.agent(
        "ui.open",
        open_payload("v1", json!({"text": "<p/>"}), json!({})),
    );
    assert!(sent_of(&fx, "client.error").is_empty(), "{fx:?}");
}

#[test]
fn r_mcp_5_a_view_has_no_state_a_patch_of_it_is_refused() {
    let mut rig = Rig::new();
    rig.open("v1");
    let fx = rig.agent("ui.patch", json!({"instance_id": "v1", "state": {"a": 1}}));
    assert_eq!(
        refusal(&fx),
        (
            "unsupported".into(),
            Some("payload.instance_id".into()),
            None
        )
    );
}
