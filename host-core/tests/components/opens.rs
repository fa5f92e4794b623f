//! Opening standard components: the spec's examples, hostile props refused at the exact field, limits and the namespace shared with Surfaces (R-STD-1..4, R-STD-17, R-UI-1).

use super::*;

#[test]
fn r_std_1_every_example_of_the_spec_is_accepted() {
    let examples = [
        json!({"instance_id":"deploy.ok","component":{"id":"confirm","version":"1","props":{"title":"Deploy to production?","body":"3 services, **no** migrations.","confirm_label":"Deploy","tone":"danger"}}}),
        json!({"instance_id":"m1","component":{"id":"markdown","version":"1"},"state":{"text":"**Build** passed — [log](https://ci.example/1)"}}),
        json!({"instance_id":"t1","component":{"id":"text","version":"1"},"state":{"text":"Queued.","variant":"caption"}}),
        json!({"instance_id":"s1","component":{"id":"status","version":"1"},"state":{"status":"in_progress","title":"Migrating","steps":[{"title":"Backup","status":"complete"}]}}),
        json!({"instance_id":"p1","component":{"id":"progress","version":"1","props":{"label":"Uploading","cancel_label":"Stop"}},"state":{"value":40,"text":"40 of 100 files"}}),
        json!({"instance_id":"e1","component":{"id":"alert","version":"1"},"state":{"severity":"error","title":"Deploy failed","body":"Exit 137: out of memory"}}),
        json!({"instance_id":"c1","component":{"id":"choice","version":"1","props":{"label":"Region","options":[{"value":"eu","label":"Europe"},{"value":"us","label":"US"}],"immediate":true}}}),
        json!({"instance_id":"i1","component":{"id":"input","version":"1","props":{"label":"Ticket title","type":"text","required":true,"max_length":120}}}),
        json!({"instance_id":"f1","component":{"id":"form","version":"1","props":{"title":"New user","fields":[{"name":"email","kind":"input","label":"Email","type":"email"},{"name":"admin","kind":"toggle","label":"Admin"}]}}}),
    ];
    let mut s = session();
    for (i, payload) in examples.into_iter().enumerate() {
        let instance = payload["instance_id"].as_str().unwrap().to_owned();
        let fx = open(&mut s, &format!("m-{i}"), payload);
        assert_eq!(shown(&fx).key.instance.as_str(), instance, "{fx:?}");
    }
    assert_eq!(s.component_count(), 9);
    // The confirm's Markdown body is parsed into the closed tree.
    let mut s = session();
    let fx = open(
        &mut s,
        "m-41",
        json!({"instance_id":"x","component":component("confirm", json!({"title":"Go?","body":"**no**"}))}),
    );
    let doc = shown(&fx).markdown.clone().unwrap();
    let MarkdownNode::Paragraph { children } = &doc.blocks[0] else {
        panic!("{doc:?}")
    };
    assert!(matches!(children[0], MarkdownNode::Strong { .. }));
}

#[test]
fn r_std_1_app_and_component_together_or_neither() {
    let mut s = session();
    let both = json!({"instance_id":"w1","component":component("confirm", json!({"title":"Go?"})),
        "app":{"id":"com.example.w","version":"1.0.0","html":"","css":"","js":""}});
    let fx = open(&mut s, "m1", both);
    assert_eq!(
        refusal(&fx),
        ("invalid_field".into(), "payload.component".into(), None)
    );
    let fx = open(&mut s, "m2", json!({"instance_id":"w1"}));
    assert_eq!(
        refusal(&fx),
        ("missing_field".into(), "payload.app".into(), None)
    );
    // A bare fragment (type and payload only) is refused by its missing envelope field.
    let bare = serde_json::to_vec(&json!({"type":"lineup.v1.ui.open","payload":{"instance_id":"w1","component":component("confirm", json!({"title":"Go?"}))}})).unwrap();
    let fx = s.handle_inbound(&bare);
    assert_eq!(refusal(&fx).1, "v");
    assert_eq!(s.component_count(), 0, "state unchanged");
}

#[test]
fn r_std_2_a_patch_never_carries_the_question() {
    let mut s = session();
    open(
        &mut s,
        "m1",
        json!({"instance_id":"c","component":component("confirm", json!({"title":"Go?"}))}),
    );
    for member in ["component", "props"] {
        let mut payload = json!({"instance_id":"c","state":{}});
        payload[member] = json!({"title": "Other?"});
        let fx = s.handle_inbound(&envelope("m2", "ui.patch", payload));
        assert_eq!(
            refusal(&fx),
            (
                "patch_carries_code".into(),
                format!("payload.{member}"),
                None
            )
        );
    }
}

/// One hostile open: the component, the state, and the refusal `(code, field, limit)`.
struct Case {
    name: &'static str,
    component: Value,
    state: Option<Value>,
    want: (&'static str, &'static str, Option<u64>),
}

pub(super) fn options(n: usize) -> Value {
    Value::Array(
        (0..n)
            .map(|i| json!({"value": format!("v{i}"), "label": format!("L{i}")}))
            .collect(),
    )
}

fn nested(depth: usize) -> Value {
    (0..depth).fold(json!(1), |inner, _| json!({ "a": inner }))
}

#[test]
fn r_std_3_hostile_components_are_refused_with_the_exact_field() {
    let e_acute = "e\u{301}";
    let cases = [
        Case {
            name: "51 options",
            component: component("choice", json!({"label":"L","options":options(51)})),
            state: None,
            want: ("invalid_field", "payload.component.props.options", Some(50)),
        },
        Case {
            name: "121-grapheme option label",
            component: component(
                "choice",
                json!({"label":"L","options":[{"value":"a","label":"x".repeat(121)}]}),
            ),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.options.0.label",
                Some(120),
            ),
        },
        Case {
            name: "201-grapheme label (combining marks count once)",
            component: component("input", json!({"label":e_acute.repeat(201)})),
            state: None,
            want: ("invalid_field", "payload.component.props.label", Some(200)),
        },
        Case {
            name: "label of hidden characters only",
            component: component("input", json!({"label":"\u{202E}\u{200B}"})),
            state: None,
            want: ("invalid_field", "payload.component.props.label", None),
        },
        Case {
            name: "duplicate option values",
            component: component(
                "choice",
                json!({"label":"L","options":[{"value":"a","label":"A"},{"value":"b","label":"B"},{"value":"a","label":"C"}]}),
            ),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.options.2.value",
                None,
            ),
        },
        Case {
            name: "default outside the options",
            component: component(
                "choice",
                json!({"label":"L","options":options(2),"default":"zz"}),
            ),
            state: None,
            want: ("invalid_field", "payload.component.props.default", None),
        },
        Case {
            name: "max_selected above the options",
            component: component(
                "choice",
                json!({"label":"L","options":options(2),"multiple":true,"max_selected":3}),
            ),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.max_selected",
                Some(2),
            ),
        },
        Case {
            name: "min_selected above max_selected",
            component: component(
                "choice",
                json!({"label":"L","options":options(3),"multiple":true,"min_selected":3,"max_selected":2}),
            ),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.min_selected",
                None,
            ),
        },
        Case {
            name: "max_length 3001",
            component: component("input", json!({"label":"L","max_length":3001})),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.max_length",
                Some(3000),
            ),
        },
        Case {
            name: "min above max",
            component: component(
                "input",
                json!({"label":"L","type":"number","min":5,"max":1}),
            ),
            state: None,
            want: ("invalid_field", "payload.component.props.min", None),
        },
        Case {
            name: "a pattern that does not compile",
            component: component("input", json!({"label":"L","pattern":"(a"})),
            state: None,
            want: ("invalid_field", "payload.component.props.pattern", None),
        },
        Case {
            name: "11 fields",
            component: component(
                "form",
                json!({"fields": (0..11).map(|i| json!({"name":format!("f{i}"),"kind":"toggle","label":"T"})).collect::<Vec<_>>()}),
            ),
            state: None,
            want: ("invalid_field", "payload.component.props.fields", Some(10)),
        },
        Case {
            name: "duplicate field names",
            component: component(
                "form",
                json!({"fields":[{"name":"a","kind":"toggle","label":"T"},{"name":"a","kind":"toggle","label":"U"}]}),
            ),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.fields.1.name",
                None,
            ),
        },
        Case {
            name: "an unknown member of a form field",
            component: component(
                "form",
                json!({"fields":[{"name":"a","kind":"toggle","label":"T","color":"red"}]}),
            ),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.fields.0.color",
                None,
            ),
        },
        Case {
            name: "a color",
            component: component("confirm", json!({"title":"Go?","color":"red"})),
            state: None,
            want: ("invalid_field", "payload.component.props.color", None),
        },
        Case {
            name: "an unknown member of component",
            component: json!({"id":"confirm","version":"1","props":{"title":"Go?"},"color":"red"}),
            state: None,
            want: ("invalid_field", "payload.component.color", None),
        },
        Case {
            name: "a missing required member",
            component: component("confirm", json!({})),
            state: None,
            want: ("missing_field", "payload.component.props.title", None),
        },
        Case {
            name: "a non-empty confirm state",
            component: component("confirm", json!({"title":"Go?"})),
            state: Some(json!({"x":1})),
            want: ("invalid_field", "payload.state.x", None),
        },
        Case {
            name: "value above max",
            component: component("progress", json!({"label":"Up","max":10})),
            state: Some(json!({"value":11})),
            want: ("invalid_field", "payload.state.value", None),
        },
        Case {
            name: "depth 9",
            component: component("input", json!({"label":"L"})),
            state: Some(nested(8)),
            want: ("invalid_field", "payload.state.a.a.a.a.a.a.a.a", Some(8)),
        },
        Case {
            name: "U+0000",
            component: component("input", json!({"label":"a\u{0}b"})),
            state: None,
            want: ("invalid_field", "payload.component.props.label", None),
        },
        Case {
            name: "an integer above 2^53",
            component: component(
                "input",
                json!({"label":"L","type":"number","max":9_007_199_254_740_993_u64}),
            ),
            state: None,
            want: (
                "invalid_field",
                "payload.component.props.max",
                Some(1 << 53),
            ),
        },
        Case {
            name: "an impossible expires_at",
            component: component(
                "confirm",
                json!({"title":"Go?","expires_at":"2026-02-30T00:00:00Z"}),
            ),
            state: None,
            want: ("invalid_field", "payload.component.props.expires_at", None),
        },
        Case {
            name: "fallback_text on an interactive component",
            component: json!({"id":"confirm","version":"1","props":{"title":"Go?"},"fallback_text":"go?"}),
            state: None,
            want: ("invalid_field", "payload.component.fallback_text", None),
        },
        Case {
            name: "fallback_text over 4 KiB",
            component: json!({"id":"text","version":"1","fallback_text":"x".repeat(4097)}),
            state: Some(json!({"text":"t"})),
            want: ("too_large", "payload.component.fallback_text", Some(4096)),
        },
        Case {
            name: "Markdown at 32 KiB + 1",
            component: component("markdown", json!({})),
            state: Some(json!({"text":"x".repeat(32 * 1024 + 1)})),
            want: ("too_large", "payload.state.text", Some(32 * 1024)),
        },
        Case {
            name: "a component at 64 KiB + 1",
            component: component("markdown", json!({})),
            state: Some(json!({"text":"x".repeat(64 * 1024)})),
            want: ("too_large", "payload.component", Some(64 * 1024)),
        },
    ];
    for case in cases {
        let mut s = session();
        let mut payload = json!({"instance_id":"x","component":case.component});
        if let Some(state) = case.state {
            payload["state"] = state;
        }
        let fx = open(&mut s, "m1", payload);
        let (code, field, limit) = case.want;
        assert_eq!(
            refusal(&fx),
            (code.to_owned(), field.to_owned(), limit),
            "{}",
            case.name
        );
        assert_eq!(s.component_count(), 0, "{}: nothing opened", case.name);
    }
}

#[test]
fn r_std_3_boundary_values_pass_positive_control() {
    let e_acute = "e\u{301}";
    let accepted = [
        (
            component("choice", json!({"label":"L","options":options(50)})),
            None,
        ),
        (
            component(
                "choice",
                json!({"label":"L","options":[{"value":"a","label":"x".repeat(120)}]}),
            ),
            None,
        ),
        (
            component("input", json!({"label":e_acute.repeat(200)})),
            None,
        ),
        (
            component(
                "input",
                json!({"label":"L","max_length":3000,"pattern":"(a+)+$"}),
            ),
            None,
        ),
        (
            component(
                "form",
                json!({"fields": (0..10).map(|i| json!({"name":format!("f{i}"),"kind":"toggle","label":"T"})).collect::<Vec<_>>()}),
            ),
            None,
        ),
        (
            component("progress", json!({"label":"Up","max":10})),
            Some(json!({"value":10})),
        ),
        (
            component("input", json!({"label":"L"})),
            Some(json!({"error": "x"})),
        ),
        (
            component(
                "input",
                json!({"label":"L","type":"number","max":9_007_199_254_740_992_u64}),
            ),
            None,
        ),
        (
            component("markdown", json!({})),
            Some(json!({"text":"x".repeat(32 * 1024)})),
        ),
        (
            json!({"id":"text","version":"1","fallback_text":"x".repeat(4096)}),
            Some(json!({"text":"t"})),
        ),
        (
            component(
                "choice",
                json!({"label":"L","options":options(3),"multiple":true,"min_selected":1,"max_selected":3,"default":["v0","v2"]}),
            ),
            None,
        ),
    ];
    for (component, state) in accepted {
        let mut s = session();
        let mut payload = json!({"instance_id":"x","component":component});
        if let Some(state) = state {
            payload["state"] = state;
        }
        let fx = open(&mut s, "m1", payload.clone());
        shown(&fx);
        // One more level of nesting is refused where seven are fine.
        let _ = payload;
    }
    let mut s = session();
    let fx = open(
        &mut s,
        "m1",
        json!({"instance_id":"x","component":component("input", json!({"label":" a\u{202E}b "}))}),
    );
    assert_eq!(
        shown(&fx).props.as_map()["label"],
        "ab",
        "cleaned by the display rules"
    );
}

#[test]
fn r_std_4_unknown_or_unoffered_components_are_unsupported_withdrawn_ones_revoked() {
    let mut s = session();
    let chart = json!({"instance_id":"x","component":{"id":"chart","version":"1"}});
    let fx = open(&mut s, "m1", chart);
    assert_eq!(
        refusal(&fx),
        ("unsupported".into(), "payload.component.id".into(), None)
    );
    let nine = json!({"instance_id":"x","component":{"id":"confirm","version":"9","props":{"title":"Go?"}}});
    let fx = open(&mut s, "m2", nine);
    assert_eq!(
        refusal(&fx),
        (
            "unsupported".into(),
            "payload.component.version".into(),
            None
        )
    );
    let Some(Effect::Send(Message::ClientError(err))) = fx.last() else {
        panic!()
    };
    assert!(
        err.payload.message.contains("[1]"),
        "{}",
        err.payload.message
    );
    // Offered, then withdrawn: revoked.
    s.set_standard_components(ComponentSet::of([ComponentKind::Markdown]));
    let fx = open(
        &mut s,
        "m3",
        json!({"instance_id":"x","component":component("confirm", json!({"title":"Go?"}))}),
    );
    assert_eq!(
        refusal(&fx),
        ("revoked".into(), "payload.component.id".into(), None)
    );
    // Today's driver renders none: nothing is offered.
    let mut today = Session::new(
        config(ComponentSet::default(), Limits::default()),
        Box::new(Still),
    )
    .unwrap();
    let fx = open(
        &mut today,
        "m1",
        json!({"instance_id":"x","component":component("confirm", json!({"title":"Go?"}))}),
    );
    assert_eq!(refusal(&fx).0, "unsupported");
    assert_eq!(today.component_count(), 0);
}

#[test]
fn r_std_17_at_most_max_components_counted_apart_from_surfaces() {
    let mut limits = Limits::default();
    limits.max_components = 2;
    limits.max_surfaces = 1;
    let mut s = Session::new(config(ComponentSet::all_v1(), limits), Box::new(Still)).unwrap();
    let surface = json!({"instance_id":"w","app":{"id":"com.example.w","version":"1.0.0","html":"","css":"","js":""}});
    assert!(matches!(open(&mut s, "m0", surface)[..], [Effect::Open(_)]));
    let text = |i: &str| json!({"instance_id":i,"component":{"id":"text","version":"1"},"state":{"text":"t"}});
    shown(&open(&mut s, "m1", text("a")));
    shown(&open(&mut s, "m2", text("b")));
    let fx = open(&mut s, "m3", text("c"));
    assert_eq!(
        refusal(&fx),
        (
            "too_many_components".into(),
            "payload.instance_id".into(),
            Some(2)
        )
    );
    // Replacing one does not count as one more.
    shown(&open(&mut s, "m4", text("b")));
    assert_eq!((s.component_count(), s.surface_count()), (2, 1));
}

#[test]
fn r_std_17_opens_share_the_surfaces_rate_window() {
    let mut limits = Limits::default();
    limits.max_opens_per_window = 2;
    let mut s = Session::new(config(ComponentSet::all_v1(), limits), Box::new(Still)).unwrap();
    let surface = json!({"instance_id":"w","app":{"id":"com.example.w","version":"1.0.0","html":"","css":"","js":""}});
    open(&mut s, "m0", surface);
    let text = |i: &str| json!({"instance_id":i,"component":{"id":"text","version":"1"},"state":{"text":"t"}});
    shown(&open(&mut s, "m1", text("a")));
    let fx = open(&mut s, "m2", text("b"));
    assert_eq!(
        refusal(&fx),
        ("rate_limited".into(), "payload.instance_id".into(), Some(2))
    );
}

#[test]
fn r_ui_1_components_and_surfaces_share_one_namespace() {
    let mut s = session();
    let surface = json!({"instance_id":"w","app":{"id":"com.example.w","version":"1.0.0","html":"","css":"","js":""}});
    let fx = open(&mut s, "m0", surface.clone());
    let Effect::Open(first) = &fx[0] else {
        panic!()
    };
    let old = first.key.clone();
    let fx = open(
        &mut s,
        "m1",
        json!({"instance_id":"w","component":component("confirm", json!({"title":"Go?"}))}),
    );
    assert!(
        matches!(&fx[0], Effect::Close { key, reason: CloseReason::Replaced } if *key == old),
        "{fx:?}"
    );
    let comp = shown(&fx).key.clone();
    assert!(sent_events(&fx).is_empty(), "nothing upstream (R-UI-5)");
    assert_eq!((s.surface_count(), s.component_count()), (0, 1));
    let fx = open(&mut s, "m2", surface);
    assert!(
        matches!(&fx[0], Effect::Component(ComponentEffect::Hide { key, reason: ComponentClosed::Replaced }) if *key == comp),
        "{fx:?}"
    );
    assert!(matches!(&fx[1], Effect::Open(_)));
    assert_eq!((s.surface_count(), s.component_count()), (1, 0));
    // A component replaced by a component, then closed; a later patch is unknown_instance.
    open(
        &mut s,
        "m3",
        json!({"instance_id":"c","component":component("confirm", json!({"title":"Go?"}))}),
    );
    let fx = s.handle_inbound(&envelope("m4", "ui.close", json!({"instance_id":"c"})));
    assert!(matches!(
        &fx[0],
        Effect::Component(ComponentEffect::Hide {
            reason: ComponentClosed::Agent(None),
            ..
        })
    ));
    assert!(sent_events(&fx).is_empty());
    let fx = s.handle_inbound(&envelope(
        "m5",
        "ui.patch",
        json!({"instance_id":"c","state":{}}),
    ));
    assert_eq!(refusal(&fx).0, "unknown_instance");
}
