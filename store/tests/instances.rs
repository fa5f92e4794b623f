//! The standard components' records in the SQLite store (R-STD-15): kept per identity and
//! conversation, replaced on each write, forgotten at close, bounded to 256 per identity, read
//! back across connections (a restart), and another identity's never returned.
#![allow(clippy::unwrap_used)]

use lineup_host_core::{
    InstanceRecord, InstanceStore, PartyId, RecordStatus, MAX_RECORDS_PER_IDENTITY,
};
use lineup_store::Store;
use serde_json::json;

fn record(conversation: &str, instance: &str, round: u32) -> InstanceRecord {
    serde_json::from_value(json!({
        "conversation": conversation, "instance_id": instance, "component": "input",
        "version": "1", "props": {"label": "Title"}, "state": {}, "opened_by": "m-1",
        "state_from": "m-1", "opener": {"kind": "agent", "id": "a1"}, "status": "open",
        "round": round, "draft": "half"
    }))
    .unwrap()
}

#[test]
fn r_std_15_records_are_kept_per_identity_replaced_forgotten_and_bounded() {
    let tmp = tempfile::tempdir().unwrap();
    let a1 = PartyId::try_from("a1").unwrap();
    let a2 = PartyId::try_from("a2").unwrap();
    let c1 = "c1".try_into().unwrap();
    {
        let mut store = Store::open(tmp.path()).unwrap();
        store.put_instance(&a1, &record("c1", "i1", 1)).unwrap();
        store.put_instance(&a1, &record("c1", "i1", 2)).unwrap();
        store.put_instance(&a1, &record("c1", "i2", 1)).unwrap();
        store.put_instance(&a1, &record("c2", "i3", 1)).unwrap();
    }
    // Another connection, as after a restart.
    let mut store = Store::open(tmp.path()).unwrap();
    let kept = store.instances(&a1, &c1).unwrap();
    let ids: Vec<(&str, u32)> = kept
        .iter()
        .map(|r| (r.instance_id.as_str(), r.round))
        .collect();
    assert_eq!(ids, vec![("i1", 2), ("i2", 1)]);
    assert_eq!(kept[0].status, RecordStatus::Open);
    assert_eq!(kept[0].draft, Some(json!("half")));
    assert!(
        store.instances(&a2, &c1).unwrap().is_empty(),
        "another identity's"
    );

    store
        .forget_instance(&a1, &c1, &"i1".try_into().unwrap())
        .unwrap();
    let left: Vec<String> = store
        .instances(&a1, &c1)
        .unwrap()
        .iter()
        .map(|r| r.instance_id.to_string())
        .collect();
    assert_eq!(left, vec!["i2"]);

    for i in 0..MAX_RECORDS_PER_IDENTITY + 5 {
        store
            .put_instance(&a2, &record("c9", &format!("n{i}"), 1))
            .unwrap();
    }
    let all = store.instances(&a2, &"c9".try_into().unwrap()).unwrap();
    assert_eq!(all.len(), MAX_RECORDS_PER_IDENTITY);
    assert!(
        all.iter().all(|r| r.instance_id.as_str() != "n0"),
        "the oldest should have gone"
    );
    // The bound is per identity: a1's records are still there.
    assert_eq!(store.instances(&a1, &c1).unwrap().len(), 1);
}

fn surface(conversation: &str, instance: &str, n: u32) -> lineup_host_core::SurfaceRecord {
    serde_json::from_value(json!({
        "conversation": conversation, "instance_id": instance,
        "app": {"id": "com.example.n", "version": "1.0.0", "html": "<p></p>", "css": "", "js": ""},
        "state": {"n": n}, "opened_by": "m-1", "state_from": format!("p-{n}"),
        "opener": {"kind": "agent", "id": "a1"}
    }))
    .unwrap()
}

/// #29: a hibernated Surface's record sits in the same table under kind `surface`: read back
/// apart from the components' records (neither list holds the other's), replaced by instance
/// whatever its kind, forgotten like them, and another identity's never returned.
#[test]
fn hibernated_surfaces_are_kept_beside_the_components_records_and_apart_from_them() {
    let tmp = tempfile::tempdir().unwrap();
    let a1 = PartyId::try_from("a1").unwrap();
    let a2 = PartyId::try_from("a2").unwrap();
    let c1 = "c1".try_into().unwrap();
    {
        let mut store = Store::open(tmp.path()).unwrap();
        store.put_instance(&a1, &record("c1", "i1", 1)).unwrap();
        store.put_surface(&a1, &surface("c1", "w1", 1)).unwrap();
        store.put_surface(&a1, &surface("c1", "w1", 2)).unwrap();
        store.put_surface(&a1, &surface("c1", "w2", 1)).unwrap();
        store.put_surface(&a2, &surface("c1", "w3", 1)).unwrap();
    }
    let mut store = Store::open(tmp.path()).unwrap();
    let surfaces = store.surfaces(&a1, &c1).unwrap();
    let got: Vec<(&str, String)> = surfaces
        .iter()
        .map(|r| (r.instance_id.as_str(), r.state.to_json()))
        .collect();
    assert_eq!(
        got,
        [
            ("w1", r#"{"n":2}"#.to_owned()),
            ("w2", r#"{"n":1}"#.to_owned())
        ]
    );
    assert_eq!(surfaces[0], surface("c1", "w1", 2), "read back whole");
    let components = store.instances(&a1, &c1).unwrap();
    assert_eq!(components.len(), 1, "a surface is not a component");
    // One instance, one record: a component replacing a Surface replaces its record.
    store.put_instance(&a1, &record("c1", "w2", 1)).unwrap();
    assert_eq!(store.surfaces(&a1, &c1).unwrap().len(), 1);
    assert_eq!(store.instances(&a1, &c1).unwrap().len(), 2);
    store
        .forget_instance(&a1, &c1, &"w1".try_into().unwrap())
        .unwrap();
    assert!(store.surfaces(&a1, &c1).unwrap().is_empty());
    assert_eq!(store.surfaces(&a2, &c1).unwrap().len(), 1);
}
