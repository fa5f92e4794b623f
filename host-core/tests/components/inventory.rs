//! Links, the inventory of renderable components, and degrading to text (R-STD-11, R-STD-13, R-STD-14).

use super::*;

#[test]
fn r_std_11_markdown_links_follow_the_link_policy() {
    let link = |policy| {
        let mut c = config(ComponentSet::all_v1(), Limits::default());
        c.link_policy = policy;
        let mut s = Session::new(c, Box::new(Still)).unwrap();
        let fx = open(
            &mut s,
            "m1",
            json!({"instance_id":"m","component":{"id":"markdown","version":"1"},"state":{"text":"[log](https://ci.example/1) [x](javascript:alert(1))"}}),
        );
        let doc = shown(&fx).markdown.clone().unwrap();
        serde_json::to_string(&doc)
            .unwrap()
            .matches(r#""type":"link""#)
            .count()
    };
    assert_eq!(link(LinkPolicy::Confirm), 1);
    assert_eq!(link(LinkPolicy::Off), 0);
}

#[test]
fn r_std_14_the_first_line_with_all_nine_components_is_at_most_2_kib() {
    let mut c = config(ComponentSet::all_v1(), Limits::default());
    c.conversation_id = Some(ConversationId::try_from("c1").unwrap());
    let mut s = Session::new(c, Box::new(Still)).unwrap();
    let fx = s
        .enable_capabilities(CapabilitySetup::new(RevisionEpoch(7), Box::new(Wall)))
        .unwrap();
    let line = fx
        .iter()
        .find_map(|e| match e {
            Effect::Send(m @ Message::ClientInventory(_)) => Some(m.to_json()),
            _ => None,
        })
        .unwrap();
    let listed: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        listed["payload"]["standard_components"]
            .as_array()
            .unwrap()
            .len(),
        9
    );
    assert!(line.len() <= 2048, "{} bytes: {line}", line.len());
}

#[test]
fn r_std_14_the_inventory_lists_exactly_the_renderable_set_and_changes_are_revisions() {
    let mut c = config(
        ComponentSet::of([ComponentKind::Confirm]),
        Limits::default(),
    );
    c.conversation_id = Some(ConversationId::try_from("c1").unwrap());
    let mut s = Session::new(c, Box::new(Still)).unwrap();
    let fx = s
        .enable_capabilities(CapabilitySetup::new(RevisionEpoch(7), Box::new(Wall)))
        .unwrap();
    let inventory = |fx: &[Effect]| {
        fx.iter().find_map(|e| match e {
            Effect::Send(Message::ClientInventory(env)) => {
                Some(serde_json::to_value(&env.payload).unwrap())
            }
            _ => None,
        })
    };
    let first = inventory(&fx).unwrap();
    let listed = &first["standard_components"];
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!(listed[0]["id"], "confirm");
    assert_eq!(listed[0]["version"], "1");
    assert_eq!(
        listed[0]["events"],
        json!(["submit", "cancel", "close", "restored"])
    );
    // The schemas by reference: the digest of the published file (R-STD-14).
    assert!(listed[0].get("schema").is_none(), "{listed}");
    let published = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schemas/components/confirm.v1.json"
    ))
    .unwrap();
    let mut hex = String::from("sha256:");
    for byte in <sha2::Sha256 as sha2::Digest>::digest(&published) {
        hex.push_str(&format!("{byte:02x}"));
    }
    assert_eq!(listed[0]["schema_digest"], hex);
    // The entry with the schemas is the published file's parts.
    let full = serde_json::to_value(ComponentKind::Confirm.schema_entry()).unwrap();
    assert_eq!(full["schema"]["answer"]["type"], "boolean");
    assert_eq!(full["schema"]["props"]["additionalProperties"], false);
    assert_eq!(full["schema_digest"], hex);
    let fx = s.set_standard_components(ComponentSet::of([
        ComponentKind::Confirm,
        ComponentKind::Text,
    ]));
    let second = inventory(&fx).unwrap();
    assert_ne!(first["revision"], second["revision"]);
    assert_eq!(second["standard_components"].as_array().unwrap().len(), 2);
    let fx = s.set_standard_components(ComponentSet::of([
        ComponentKind::Text,
        ComponentKind::Confirm,
    ]));
    assert!(inventory(&fx).is_none(), "the same set is no new revision");
    // The default set is empty: today's driver offers nothing.
    let mut c = config(ComponentSet::default(), Limits::default());
    c.conversation_id = Some(ConversationId::try_from("c1").unwrap());
    let mut s = Session::new(c, Box::new(Still)).unwrap();
    let fx = s
        .enable_capabilities(CapabilitySetup::new(RevisionEpoch(8), Box::new(Wall)))
        .unwrap();
    assert_eq!(inventory(&fx).unwrap()["standard_components"], json!([]));
}

#[test]
fn r_std_13_a_display_component_without_a_renderer_degrades_to_text_with_a_receipt() {
    let mut s = session();
    // An unknown id with a fallback: shown as `text`, and `degraded` names from, to and why.
    let fx = open(
        &mut s,
        "m-1",
        json!({"instance_id": "chart.1",
               "component": {"id": "chart", "version": "1", "props": {"series": [1, 2]},
                             "fallback_text": "Sales\u{202E} up 4 %"}}),
    );
    let show = shown(&fx);
    assert_eq!(show.kind, ComponentKind::Text);
    assert!(show.props.as_map().is_empty(), "{:?}", show.props);
    let text = show.state.as_map()["text"].as_str().unwrap_or_default();
    assert!(
        text.starts_with("Sales") && !text.contains('\u{202E}'),
        "{text:?}"
    );
    assert_eq!(
        sent_events(&fx),
        vec![(
            "degraded".to_owned(),
            json!({"from": {"id": "chart", "version": "1"}, "to": {"id": "text", "version": "1"},
                   "reason": "unknown_component"})
        )]
    );

    // A catalog display id at a version this host lacks.
    let fx = open(
        &mut s,
        "m-2",
        json!({"instance_id": "md.9",
               "component": {"id": "markdown", "version": "9", "fallback_text": "Build passed"}}),
    );
    assert_eq!(shown(&fx).kind, ComponentKind::Text);
    assert_eq!(sent_events(&fx)[0].1["reason"], "unsupported_version");

    // A fallback longer than `text` holds is cut to its 4,000 graphemes.
    let fx = open(
        &mut s,
        "m-3",
        json!({"instance_id": "long",
               "component": {"id": "chart", "version": "1", "fallback_text": "a".repeat(4096)}}),
    );
    let text = shown(&fx).state.as_map()["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        text.chars().count() <= 4_000,
        "{} chars",
        text.chars().count()
    );

    // Without a fallback, it stays `unsupported` (R-STD-4), and nothing is shown.
    let fx = open(
        &mut s,
        "m-4",
        json!({"instance_id": "chart.2", "component": {"id": "chart", "version": "1"}}),
    );
    assert_eq!(refusal(&fx).0, "unsupported");
    assert!(sent_events(&fx).is_empty());

    // An interactive component never degrades: its fallback is refused (R-STD-13).
    let fx = open(
        &mut s,
        "m-5",
        json!({"instance_id": "q", "component": {"id": "confirm", "version": "1",
               "props": {"title": "Go?"}, "fallback_text": "Go?"}}),
    );
    assert_eq!(
        refusal(&fx),
        (
            "invalid_field".into(),
            "payload.component.fallback_text".into(),
            None
        )
    );
}

#[test]
fn r_std_13_a_display_component_the_renderer_declines_degrades_only_when_text_renders() {
    let set = ComponentSet::of([ComponentKind::Text, ComponentKind::Confirm]);
    let mut s = Session::new(config(set, Limits::default()), Box::new(Still)).unwrap();
    let fx = open(
        &mut s,
        "m-1",
        json!({"instance_id": "m", "component": {"id": "markdown", "version": "1",
               "fallback_text": "Build passed"}, "state": {"text": "**Build** passed"}}),
    );
    assert_eq!(shown(&fx).kind, ComponentKind::Text);
    assert_eq!(sent_events(&fx)[0].1["reason"], "renderer_declined");

    // No `text` renderer: no stand-in, the open is refused as before.
    let set = ComponentSet::of([ComponentKind::Confirm]);
    let mut s = Session::new(config(set, Limits::default()), Box::new(Still)).unwrap();
    let fx = open(
        &mut s,
        "m-1",
        json!({"instance_id": "m", "component": {"id": "chart", "version": "1",
               "fallback_text": "Sales up"}}),
    );
    assert_eq!(refusal(&fx).0, "unsupported");
}
