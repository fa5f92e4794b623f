//! The app center in the kernel (R-UI-9, R-INV-3, R-INV-4, R-SEC-7), against a catalog held in
//! memory: open by id, the inventory's applications, undeclared events, deterministic
//! refusals, inline bundles posing as installed apps, and Surfaces closed when their app
//! changes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::time::Duration;

use lineup_host_core::{
    AppCatalog, AppId, AppVersion, Assets, BundlePolicy, CapabilitySetup, CatalogRef,
    CatalogRefusal, Clock, CloseReason, DeclaredSurface, Effect, EventName, GoneReason, InlineApp,
    InlineBundle, Integrity, InventoryApp, ListedApp, PartyId, Reservation, ResolvedSurface,
    RevisionEpoch, Session, SessionConfig, SourceFiles, SourcePart, SurfaceId, SurfaceKey,
    Timestamp, WallClock,
};
use serde_json::{json, Value};

struct Fixed;
impl Clock for Fixed {
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

/// One app, `com.example.dash`, with one Surface `main` declaring `refresh`.
#[derive(Default)]
struct Catalog {
    /// `None`: removed (once installed); `Some((version, enabled, html))`.
    app: RefCell<Option<(String, bool, String)>>,
    ever: RefCell<bool>,
    /// The key the package was installed with, if any.
    signed_by: RefCell<Option<String>>,
}

impl Catalog {
    fn install(&self, version: &str, html: &str) {
        *self.app.borrow_mut() = Some((version.into(), true, html.into()));
        *self.ever.borrow_mut() = true;
    }
    fn bundle(html: &str) -> InlineBundle {
        InlineBundle::new(html, "", "").unwrap()
    }
}

impl AppCatalog for Catalog {
    fn applications(&self) -> Vec<ListedApp> {
        match &*self.app.borrow() {
            Some((version, true, _)) => vec![ListedApp {
                app: InventoryApp {
                    id: AppId::try_from("com.example.dash").unwrap(),
                    version: AppVersion::try_from(version.as_str()).unwrap(),
                    surfaces: vec![DeclaredSurface {
                        id: SurfaceId::try_from("main").unwrap(),
                        events: vec![EventName::try_from("refresh").unwrap()],
                    }],
                },
                signed_by: self.signed_by.borrow().clone(),
            }],
            _ => Vec::new(),
        }
    }

    fn resolve(
        &self,
        id: &AppId,
        version: Option<&AppVersion>,
        surface: &SurfaceId,
    ) -> Result<ResolvedSurface, CatalogRefusal> {
        if id.as_str() != "com.example.dash" {
            return Err(CatalogRefusal::Unknown);
        }
        let app = self.app.borrow();
        let Some((enabled_version, enabled, html)) = &*app else {
            return Err(if *self.ever.borrow() {
                CatalogRefusal::Removed
            } else {
                CatalogRefusal::Unknown
            });
        };
        if !enabled {
            return Err(CatalogRefusal::Disabled);
        }
        let enabled_version = AppVersion::try_from(enabled_version.as_str()).unwrap();
        if version.is_some_and(|v| *v != enabled_version) {
            return Err(CatalogRefusal::OtherVersion {
                enabled: enabled_version,
            });
        }
        if surface.as_str() != "main" {
            return Err(CatalogRefusal::UnknownSurface {
                surfaces: vec![SurfaceId::try_from("main").unwrap()],
            });
        }
        let bundle = Self::bundle(html);
        Ok(ResolvedSurface {
            app: InlineApp {
                id: id.clone(),
                name: Some("Dash".into()),
                version: enabled_version,
                integrity: Some(bundle.digest()),
                bundle,
            },
            events: BTreeSet::from([EventName::try_from("refresh").unwrap()]),
            assets: Assets::default(),
            sources: SourceFiles::named("dash.html", None, Some("app.js")),
            signed_by: self.signed_by.borrow().clone(),
        })
    }

    fn reservation(&self, id: &AppId) -> Option<Reservation> {
        if !id.as_str().eq_ignore_ascii_case("com.example.dash") || !*self.ever.borrow() {
            return None;
        }
        let held = AppId::try_from("com.example.dash").unwrap();
        Some(match &*self.app.borrow() {
            Some((_, true, _)) => Reservation::Enabled(held),
            Some((_, false, _)) => Reservation::Disabled(held),
            None => Reservation::Removed(held),
        })
    }
}

fn session(catalog: Option<Rc<Catalog>>) -> Session {
    session_with(catalog, BundlePolicy::default())
}

fn session_with(catalog: Option<Rc<Catalog>>, policy: BundlePolicy) -> Session {
    let mut config = SessionConfig::new(PartyId::try_from("desktop").unwrap(), "out");
    config.bundle_policy = policy;
    config.app_catalog = catalog.map(|c| CatalogRef(c as Rc<dyn AppCatalog>));
    let mut s = Session::new(config, Box::new(Fixed)).unwrap();
    s.enable_capabilities(CapabilitySetup::new(RevisionEpoch(7), Box::new(Wall)))
        .unwrap();
    s
}

fn envelope(id: &str, kind: &str, payload: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "v": 1, "id": id, "type": format!("lineup.v1.{kind}"), "conversation_id": "c1",
        "sender": {"kind": "agent", "id": "a1"}, "payload": payload
    }))
    .unwrap()
}

fn open_by_id(id: &str, version: Option<&str>, surface: &str) -> Vec<u8> {
    let mut app = json!({"id": id, "surface": surface});
    if let Some(v) = version {
        app["version"] = json!(v);
    }
    envelope(
        "m-open",
        "ui.open",
        json!({"instance_id": "d1", "app": app}),
    )
}

fn sent(effects: &[Effect]) -> Vec<Value> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send(m) => Some(serde_json::from_str(&m.to_json()).unwrap()),
            _ => None,
        })
        .collect()
}

fn of_type<'a>(sent: &'a [Value], kind: &str) -> Vec<&'a Value> {
    sent.iter()
        .filter(|m| m["type"] == format!("lineup.v1.{kind}"))
        .collect()
}

fn opened(effects: &[Effect]) -> (SurfaceKey, InlineApp) {
    effects
        .iter()
        .find_map(|e| match e {
            Effect::Open(open) => Some((open.key.clone(), open.app.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no open in {effects:?}"))
}

fn event(name: &str) -> String {
    format!(r#"{{"namespace":"lineup.surface.v1","type":"event","event":"{name}","data":{{}}}}"#)
}

#[test]
fn r_ui_9_open_by_id_serves_the_catalogs_bytes_and_lists_the_app() {
    let catalog = Rc::new(Catalog::default());
    catalog.install("1.0.0", "<p>installed</p>");
    let mut s = session(Some(catalog.clone()));
    let fx = s.handle_inbound(&open_by_id("com.example.dash", None, "main"));
    let out = sent(&fx);
    // R-INV-3: the first inventory lists the enabled app, with nothing of the machine.
    let inventory = of_type(&out, "client.inventory");
    assert_eq!(
        inventory[0]["payload"]["applications"],
        json!([{"id": "com.example.dash", "version": "1.0.0",
                "surfaces": [{"id": "main", "events": ["refresh"]}]}])
    );
    let (key, app) = opened(&fx);
    assert_eq!(app.bundle.html(), "<p>installed</p>");
    assert_eq!(app.integrity, Some(app.bundle.digest()));
    // R-DIAG-1: the view is made with the manifest's file names, for positions in diagnostics.
    let sources = fx
        .iter()
        .find_map(|e| match e {
            Effect::Open(open) => Some(open.sources.clone()),
            _ => None,
        })
        .expect("an open");
    assert_eq!(sources.name(SourcePart::Js), "app.js");
    assert_eq!(sources.name(SourcePart::Html), "dash.html");

    // Declared events go up; undeclared ones are dropped and counted.
    s.handle_bridge(&key, r#"{"namespace":"lineup.surface.v1","type":"ready","document":"0123456789abcdef0123456789abcdef"}"#);
    let up = sent(&s.handle_bridge(&key, &event("refresh")));
    assert_eq!(of_type(&up, "ui.event").len(), 1);
    let fx = s.handle_bridge(&key, &event("exfiltrate"));
    assert!(sent(&fx).is_empty());
    assert!(
        matches!(&fx[..], [Effect::Dropped { error, .. }] if error.to_string().contains("not declared"))
    );
    assert_eq!(s.stats().undeclared_events, 1);
}

#[test]
fn r_inv_4_refusals_are_deterministic_and_load_nothing() {
    let catalog = Rc::new(Catalog::default());
    let refusal = |s: &mut Session, bytes: &[u8]| {
        let fx = s.handle_inbound(bytes);
        assert!(!fx.iter().any(|e| matches!(e, Effect::Open(_))), "{fx:?}");
        let out = sent(&fx);
        of_type(&out, "client.error")[0]["payload"].clone()
    };
    // Not installed.
    let mut s = session(Some(catalog.clone()));
    let e = refusal(&mut s, &open_by_id("com.example.dash", None, "main"));
    assert_eq!(e["code"], "unsupported", "{e}");
    // Installed: another version, another surface.
    catalog.install("1.0.0", "<p>one</p>");
    let e = refusal(
        &mut s,
        &open_by_id("com.example.dash", Some("2.0.0"), "main"),
    );
    assert_eq!(e["code"], "unsupported");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("enabled at version 1.0.0"),
        "{e}"
    );
    assert_eq!(e["field"], "payload.app.version");
    let e = refusal(&mut s, &open_by_id("com.example.dash", None, "settings"));
    assert!(
        e["message"].as_str().unwrap().contains("it has main"),
        "{e}"
    );
    // Disabled, then removed: revoked.
    catalog.app.borrow_mut().as_mut().unwrap().1 = false;
    let e = refusal(&mut s, &open_by_id("com.example.dash", None, "main"));
    assert_eq!(e["code"], "revoked", "{e}");
    *catalog.app.borrow_mut() = None;
    let e = refusal(&mut s, &open_by_id("com.example.dash", None, "main"));
    assert_eq!(e["code"], "revoked", "{e}");
    // Without an app center at all.
    let mut plain = session(None);
    let e = refusal(&mut plain, &open_by_id("com.example.dash", None, "main"));
    assert!(
        e["message"].as_str().unwrap().contains("no app center"),
        "{e}"
    );
    // Positive control: enabled again, it opens.
    catalog.install("1.0.0", "<p>one</p>");
    opened(&s.handle_inbound(&open_by_id("com.example.dash", Some("1.0.0"), "main")));
}

/// `ui.open` of inline bytes under app id `id`, at `instance`.
fn inline_as(id: &str, html: &str, instance: &str) -> Vec<u8> {
    envelope(
        "m-inline",
        "ui.open",
        json!({"instance_id": instance, "app": {
            "id": id, "name": "Dash", "version": "1.0.0", "html": html, "css": "", "js": ""}}),
    )
}

#[test]
fn r_ui_9_an_id_held_or_once_held_is_reserved_in_any_case_whatever_the_bytes() {
    let catalog = Rc::new(Catalog::default());
    catalog.install("1.0.0", "<p>verified</p>");
    let mut s = session(Some(catalog.clone()));
    let refusal = |s: &mut Session, id: &str, html: &str| -> Value {
        let fx = s.handle_inbound(&inline_as(id, html, "x"));
        assert!(!fx.iter().any(|e| matches!(e, Effect::Open(_))), "{fx:?}");
        let out = sent(&fx);
        of_type(&out, "client.error")[0]["payload"].clone()
    };
    // Enabled: even its own verified bytes do not open inline; only by id (policy_violation).
    for (id, html) in [
        ("com.example.dash", "<p>verified</p>"),
        ("com.example.dash", "<p>impostor</p>"),
        ("com.example.DASH", "<p>verified</p>"),
        ("COM.EXAMPLE.DASH", "<p>other</p>"),
    ] {
        let e = refusal(&mut s, id, html);
        assert_eq!(e["code"], "policy_violation", "{id}: {e}");
        assert_eq!(e["field"], "payload.app.id", "{e}");
    }
    // Disabled and removed: `revoked`, in any case.
    catalog.app.borrow_mut().as_mut().unwrap().1 = false;
    for id in ["com.example.dash", "Com.Example.Dash"] {
        let e = refusal(&mut s, id, "<p>verified</p>");
        assert_eq!(e["code"], "revoked", "{id}: {e}");
        assert_eq!(e["field"], "payload.app.id", "{e}");
    }
    *catalog.app.borrow_mut() = None;
    for id in ["com.example.dash", "com.example.dasH"] {
        let e = refusal(&mut s, id, "<p>anything</p>");
        assert_eq!(e["code"], "revoked", "{id}: {e}");
    }
    // Positive control: an id the app center never held opens inline.
    opened(&s.handle_inbound(&inline_as("com.example.fresh", "<p>new</p>", "y")));
}

#[test]
fn r_inv_1_the_inventory_lists_only_what_the_bundle_policy_opens() {
    for (policy, signed, listed) in [
        (BundlePolicy::default(), false, true),
        (BundlePolicy::RequireIntegrity, false, true),
        (BundlePolicy::AppCenterOnly, false, true),
        (BundlePolicy::Allowlist(BTreeSet::new()), false, true),
        (BundlePolicy::SignedOnly, false, false),
        (BundlePolicy::SignedOnly, true, true),
    ] {
        let catalog = Rc::new(Catalog::default());
        catalog.install("1.0.0", "<p>one</p>");
        if signed {
            *catalog.signed_by.borrow_mut() = Some("ed25519:key".into());
        }
        let mut s = session_with(Some(catalog), policy.clone());
        let fx = s.handle_inbound(&open_by_id("com.example.dash", None, "main"));
        let out = sent(&fx);
        let apps = &of_type(&out, "client.inventory")[0]["payload"]["applications"];
        let opens = fx.iter().any(|e| matches!(e, Effect::Open(_)));
        assert_eq!(
            apps.as_array().unwrap().len() == 1,
            listed,
            "{policy:?} signed={signed}: {apps}"
        );
        // What is listed is exactly what opens (R-INV-1).
        assert_eq!(opens, listed, "{policy:?} signed={signed}");
    }
}

#[test]
fn r_ui_12_surfaces_close_when_their_app_changes_and_the_inventory_follows() {
    let catalog = Rc::new(Catalog::default());
    catalog.install("1.0.0", "<p>one</p>");
    let mut s = session(Some(catalog.clone()));
    let (key, _) = opened(&s.handle_inbound(&open_by_id("com.example.dash", None, "main")));
    // Nothing changed: nothing happens.
    assert!(s.apps_changed().is_empty());

    catalog.install("1.1.0", "<p>two</p>");
    let fx = s.apps_changed();
    assert!(fx.contains(&Effect::Close {
        key: key.clone(),
        reason: CloseReason::Gone(GoneReason::AppUpgraded)
    }));
    let out = sent(&fx);
    assert_eq!(
        of_type(&out, "ui.event")[0]["payload"]["data"],
        json!({"reason": "app_upgraded"})
    );
    let inventory = of_type(&out, "client.inventory");
    assert_eq!(
        inventory[0]["payload"]["applications"][0]["version"],
        "1.1.0"
    );

    let (key, _) = opened(&s.handle_inbound(&open_by_id("com.example.dash", None, "main")));
    catalog.app.borrow_mut().as_mut().unwrap().1 = false;
    let fx = s.apps_changed();
    let out = sent(&fx);
    assert!(fx.contains(&Effect::Close {
        key,
        reason: CloseReason::Gone(GoneReason::AppDisabled)
    }));
    assert_eq!(
        of_type(&out, "ui.event")[0]["payload"]["data"],
        json!({"reason": "app_disabled"})
    );
    assert_eq!(
        of_type(&out, "client.inventory")[0]["payload"]["applications"],
        json!([])
    );
}

fn inline(html: &str, integrity: Option<Integrity>) -> Vec<u8> {
    let mut app = json!({"id": "com.example.other", "name": "Other", "version": "1.0.0",
                         "html": html, "css": "", "js": ""});
    if let Some(i) = integrity {
        app["integrity"] = json!(i.to_string());
    }
    envelope(
        "m-inline",
        "ui.open",
        json!({"instance_id": "i1", "app": app}),
    )
}

fn refused_code(s: &mut Session, bytes: &[u8]) -> Option<String> {
    let fx = s.handle_inbound(bytes);
    if fx.iter().any(|e| matches!(e, Effect::Open(_))) {
        return None;
    }
    let out = sent(&fx);
    let errors = of_type(&out, "client.error");
    Some(errors[0]["payload"]["code"].as_str().unwrap().to_owned())
}

#[test]
fn r_sec_7_bundle_policies() {
    let allowed = Catalog::bundle("<p>allowed</p>").digest();
    let catalog = Rc::new(Catalog::default());
    catalog.install("1.0.0", "<p>installed</p>");

    // allowlist: only listed digests inline; a wrong integrity is refused whatever the list.
    let mut s = session_with(
        Some(catalog.clone()),
        BundlePolicy::Allowlist(BTreeSet::from([allowed])),
    );
    assert_eq!(refused_code(&mut s, &inline("<p>allowed</p>", None)), None);
    assert_eq!(
        refused_code(&mut s, &inline("<p>other</p>", None)).as_deref(),
        Some("policy_violation")
    );
    let wrong = Catalog::bundle("<p>other</p>").digest();
    assert_eq!(
        refused_code(&mut s, &inline("<p>allowed</p>", Some(wrong))).as_deref(),
        Some("integrity_mismatch")
    );
    assert_eq!(
        refused_code(&mut s, &open_by_id("com.example.dash", None, "main")),
        None
    );

    // app-center-only: no inline bundle at all, installed apps open.
    let mut s = session_with(Some(catalog.clone()), BundlePolicy::AppCenterOnly);
    assert_eq!(
        refused_code(&mut s, &inline("<p>allowed</p>", Some(allowed))).as_deref(),
        Some("policy_violation")
    );
    assert_eq!(
        refused_code(&mut s, &open_by_id("com.example.dash", None, "main")),
        None
    );

    // signed-only: an app installed by digest (no signature) is refused; signed, it opens.
    let mut s = session_with(Some(catalog.clone()), BundlePolicy::SignedOnly);
    assert_eq!(
        refused_code(&mut s, &open_by_id("com.example.dash", None, "main")).as_deref(),
        Some("policy_violation")
    );
    assert_eq!(
        refused_code(&mut s, &inline("<p>allowed</p>", Some(allowed))).as_deref(),
        Some("policy_violation")
    );
    *catalog.signed_by.borrow_mut() = Some("ed25519:key".into());
    assert_eq!(
        refused_code(&mut s, &open_by_id("com.example.dash", None, "main")),
        None
    );

    // Positive control: the default policy opens the same inline bundle.
    let mut s = session(Some(catalog));
    assert_eq!(refused_code(&mut s, &inline("<p>other</p>", None)), None);
}
