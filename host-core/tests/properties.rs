//! Property tests: generated messages round-trip through the typed models, and no input, valid
//! or not, panics the kernel. The fuzz targets' entry points run here on the stable toolchain.
#![allow(clippy::unwrap_used)]

use lineup_host_core::fuzz_targets;
use lineup_host_core::{decode, Limits};
use proptest::prelude::*;
use serde_json::{json, Value};

fn instance_id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9._:-]{1,128}"
}

fn event_name() -> impl Strategy<Value = String> {
    "[A-Za-z][A-Za-z0-9._:-]{0,63}"
}

fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        "[^\u{0}]{0,12}".prop_map(Value::from),
    ]
}

fn json_object() -> impl Strategy<Value = Value> {
    let value = json_leaf().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,6}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-z]{1,6}", value, 0..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

fn wrap(kind: &str, payload: Value) -> Value {
    json!({"v": 1, "id": "m1", "type": kind, "conversation_id": "c1",
           "sender": {"kind": "agent", "id": "a1"}, "payload": payload})
}

fn message() -> impl Strategy<Value = Value> {
    let open = (
        instance_id(),
        "[a-z<>/ ]{0,40}",
        "[a-z{}: ;]{0,40}",
        "[a-z()=.;]{0,40}",
        prop::option::of(json_object()),
    )
        .prop_map(|(id, html, css, js, state)| {
            let mut payload = json!({"instance_id": id, "app": {"id": "com.example.app",
                "name": "N", "version": "1.2.3", "html": html, "css": css, "js": js}});
            if let Some(state) = state {
                payload["state"] = state;
            }
            wrap("lineup.v1.ui.open", payload)
        });
    let patch = (instance_id(), json_object()).prop_map(|(id, state)| {
        wrap(
            "lineup.v1.ui.patch",
            json!({"instance_id": id, "state": state}),
        )
    });
    let close = (instance_id(), prop::option::of("[^\u{0}]{0,20}")).prop_map(|(id, reason)| {
        let mut payload = json!({"instance_id": id});
        if let Some(reason) = reason {
            payload["reason"] = json!(reason);
        }
        wrap("lineup.v1.ui.close", payload)
    });
    let event = (instance_id(), event_name(), json_object()).prop_map(|(id, event, data)| {
        wrap(
            "lineup.v1.ui.event",
            json!({"instance_id": id, "event": event, "data": data}),
        )
    });
    let status = prop::sample::select(vec![
        "completed",
        "rejected",
        "cancelled",
        "expired",
        "unsupported",
        "failed",
    ]);
    let result = ("[a-z_]{1,20}", status, prop::option::of(json_object())).prop_map(
        |(call, status, result)| {
            let mut payload = json!({"call_id": call, "status": status});
            if let Some(result) = result {
                payload["result"] = result;
            }
            wrap("lineup.v1.app.result", payload)
        },
    );
    let call = ("[a-z_]{1,20}", json_object()).prop_map(|(call, args)| {
        wrap(
            "lineup.v1.app.call",
            json!({"call_id": call, "capability": "app.open_url",
            "reason": "r", "expires_at": "2026-08-02T12:10:00Z", "arguments": args}),
        )
    });
    prop_oneof![open, patch, close, event, result, call]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn generated_messages_round_trip(msg in message()) {
        let bytes = serde_json::to_vec(&msg).unwrap();
        let decoded = decode(&bytes, &Limits::default()).unwrap();
        let again: Value = serde_json::from_str(&decoded.to_json()).unwrap();
        prop_assert_eq!(again, msg);
    }

    #[test]
    fn no_bytes_panic_the_envelope_decoder(data in prop::collection::vec(any::<u8>(), 0..512)) {
        fuzz_targets::envelope_decode(&data);
    }

    #[test]
    fn no_json_panics_the_envelope_decoder(msg in message(), cut in 0usize..400, flip in any::<u8>()) {
        let mut bytes = serde_json::to_vec(&msg).unwrap();
        if !bytes.is_empty() {
            let at = cut % bytes.len();
            bytes[at] ^= flip;
        }
        fuzz_targets::envelope_decode(&bytes);
    }

    #[test]
    fn r_std_10_no_nesting_goes_past_the_markdown_depth_cap(
        repeat in any::<u8>(),
        unit in prop::collection::vec(prop::sample::select(vec![">", "- ", "1. ", "*", "_", "[", "]", "`", "  ", "\n", "|", "x", "**", "~~", "(u)"]), 1..12),
    ) {
        let mut data = vec![repeat];
        data.extend(unit.concat().into_bytes());
        fuzz_targets::markdown_nesting(&data);
    }

    #[test]
    fn no_bytes_panic_an_mcp_app_view(data in prop::collection::vec(any::<u8>(), 0..512)) {
        fuzz_targets::mcp_from_view(&data);
    }

    #[test]
    fn r_mcp_6_every_request_of_a_view_is_answered_once(
        id in prop_oneof![any::<i64>().prop_map(Value::from), "[a-z0-9]{0,8}".prop_map(Value::from)],
        method in prop::sample::select(vec!["tools/call", "resources/read", "ui/initialize", "ping",
            "ui/update-model-context", "ui/open-link", "sampling/createMessage", "tools/list", "x"]),
        params in prop_oneof![json_object(), Just(Value::Null), Just(json!([1]))],
    ) {
        let mut request = json!({"jsonrpc": "2.0", "id": id, "method": method});
        if !params.is_null() {
            request["params"] = params;
        }
        fuzz_targets::mcp_from_view(request.to_string().as_bytes());
    }

    #[test]
    fn no_bytes_panic_the_bridge(data in prop::collection::vec(any::<u8>(), 0..512)) {
        fuzz_targets::bridge_decode(&data);
    }

    #[test]
    fn no_bridge_json_panics_the_bridge(event in "[^\u{0}]{0,70}", data in json_object(), kind in prop::sample::select(vec!["event", "ready", "resize", "x"])) {
        let raw = json!({"namespace": "lineup.surface.v1", "type": kind, "event": event, "data": data, "height": 10});
        fuzz_targets::bridge_decode(raw.to_string().as_bytes());
    }
}
