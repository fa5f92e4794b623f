//! The app registry (R-UI-9, R-SEC-7): install → upgrade → roll back → disable → enable →
//! remove, the inventory revision counter after each step, refusals that change nothing, and a
//! flipped byte in the cache caught at load and by the start-up check.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use lineup_packages::{ManifestLimits, Package, PackageFiles, PackageLimits};
use lineup_store::{Store, StoreError};

fn package(version: &str, text: &str) -> Package {
    package_as("com.example.dash", version, text)
}

fn package_as(id: &str, version: &str, text: &str) -> Package {
    let manifest = format!(
        r#"{{"id": "{id}", "name": "Dash {version}", "version": "{version}",
            "surfaces": {{"main": {{"html": "index.html", "events": ["refresh"]}}}},
            "assets": ["logo.png"]}}"#
    );
    let files = PackageFiles::from_memory(
        [
            ("manifest.json", manifest.into_bytes()),
            ("index.html", text.as_bytes().to_vec()),
            ("logo.png", vec![0x89, b'P', b'N', b'G']),
        ],
        &PackageLimits::default(),
    )
    .unwrap();
    Package::from_files(files, &ManifestLimits::default()).unwrap()
}

#[test]
fn install_upgrade_rollback_disable_enable_remove() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let v1 = package("1.0.0", "<p>one</p>");
    let v2 = package("1.1.0", "<p>two</p>");
    let revision = std::cell::Cell::new(store.revisions().counter().unwrap());
    let step = |change: lineup_store::AppChange| {
        assert_eq!(change.revision, revision.get() + 1, "{change:?}");
        assert_eq!(store.revisions().counter().unwrap(), change.revision);
        revision.set(change.revision);
        change
    };
    let html = |store: &Store| {
        let p = store.apps().load("com.example.dash").unwrap();
        p.surfaces()
            .values()
            .next()
            .unwrap()
            .bundle()
            .html()
            .to_owned()
    };

    let change = step(store.apps().install(&v1, None).unwrap());
    assert_eq!((change.from, change.to.as_deref()), (None, Some("1.0.0")));
    assert_eq!(html(&store), "<p>one</p>");
    // The cache holds it under its digest; nothing in the listing says where it came from.
    let listed = store.apps().list().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].digest, v1.digest().to_string());
    let listing = serde_json::to_string(&listed).unwrap();
    assert!(!listing.contains(dir.path().to_str().unwrap()), "{listing}");

    // Refusals change nothing, the revision included.
    let twice = store.apps().install(&v1, None).unwrap_err();
    assert!(
        twice
            .to_string()
            .contains("version 1.0.0 is installed: upgrade it instead"),
        "{twice}"
    );
    let older = store
        .apps()
        .upgrade(&package("0.9.0", "<p>old</p>"), None)
        .unwrap_err();
    assert!(
        older
            .to_string()
            .contains("0.9.0 is not newer than the current 1.0.0"),
        "{older}"
    );
    let none = store.apps().rollback("com.example.dash").unwrap_err();
    assert!(
        none.to_string().contains("nothing to roll back to"),
        "{none}"
    );
    assert_eq!(store.revisions().counter().unwrap(), revision.get());
    assert_eq!(html(&store), "<p>one</p>");

    let change = step(store.apps().upgrade(&v2, None).unwrap());
    assert_eq!(change.to.as_deref(), Some("1.1.0"));
    assert_eq!(html(&store), "<p>two</p>");
    assert_eq!(store.apps().list().unwrap()[0].versions, ["1.0.0", "1.1.0"]);

    let change = step(store.apps().rollback("com.example.dash").unwrap());
    assert_eq!(
        (change.from.as_deref(), change.to.as_deref()),
        (Some("1.1.0"), Some("1.0.0"))
    );
    assert_eq!(html(&store), "<p>one</p>");
    assert_eq!(store.apps().list().unwrap()[0].versions, ["1.0.0"]);

    step(store.apps().set_enabled("com.example.dash", false).unwrap());
    let disabled = store.apps().load("com.example.dash").unwrap_err();
    assert!(
        disabled
            .to_string()
            .contains("app com.example.dash: disabled"),
        "{disabled}"
    );
    assert!(store.apps().set_enabled("com.example.dash", false).is_err());
    step(store.apps().set_enabled("com.example.dash", true).unwrap());
    assert_eq!(html(&store), "<p>one</p>");

    // Another process's change is seen through the counter.
    let other = Store::open(dir.path()).unwrap();
    other.apps().upgrade(&v2, None).unwrap();
    assert_eq!(store.revisions().counter().unwrap(), revision.get() + 1);
    revision.set(revision.get() + 1);
    assert_eq!(html(&store), "<p>two</p>");

    let change = step(store.apps().remove("com.example.dash").unwrap());
    assert_eq!(change.to, None);
    assert!(store.apps().list().unwrap().is_empty());
    let gone = store.apps().load("com.example.dash").unwrap_err();
    assert!(gone.to_string().contains("not installed"), "{gone}");
    let cache: Vec<_> = std::fs::read_dir(store.apps().cache_dir())
        .unwrap()
        .collect();
    assert!(cache.is_empty(), "{cache:?}");
}

#[test]
fn a_flipped_byte_in_the_cache_is_caught_at_load_and_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let v1 = package("1.0.0", "<p>one</p>");
    store.apps().install(&v1, None).unwrap();
    // Positive control: intact, it loads and verifies.
    store.apps().load("com.example.dash").unwrap();
    assert!(store.apps().verify().unwrap().is_empty());

    let file = std::fs::read_dir(store.apps().cache_dir())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes
        .windows(b"one".len())
        .position(|w| w == b"one")
        .unwrap();
    bytes[at] ^= 0x20; // "One"
    std::fs::write(&file, bytes).unwrap();

    let err = store.apps().load("com.example.dash").unwrap_err();
    assert!(matches!(err, StoreError::Package(_)), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("not the expected {}", v1.digest())),
        "{err}"
    );
    let failed = store.apps().verify().unwrap();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (failed[0].0.as_str(), failed[0].1.as_str()),
        ("com.example.dash", "1.0.0")
    );
    // Installing the same package again repairs the cache file.
    store
        .apps()
        .upgrade(&package("1.0.1", "<p>fixed</p>"), None)
        .unwrap();
    store.apps().rollback("com.example.dash").unwrap_err();
}

#[test]
fn r_ui_9_ids_held_or_once_held_are_reserved_ignoring_case_until_an_audited_forget() {
    use lineup_host_core::{AppCatalog, AppId, Reservation};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let id = |s: &str| AppId::try_from(s).unwrap();
    let held = id("com.example.dash");
    // Positive control: a free id is not reserved.
    assert_eq!(AppCatalog::reservation(&store, &held), None);
    store
        .apps()
        .install(&package("1.0.0", "<p>one</p>"), None)
        .unwrap();
    for asked in ["com.example.dash", "COM.example.Dash"] {
        assert_eq!(
            AppCatalog::reservation(&store, &id(asked)),
            Some(Reservation::Enabled(held.clone())),
            "{asked}"
        );
    }
    // Another spelling of a held id cannot be installed beside it.
    let variant = store
        .apps()
        .install(&package_as("com.example.DASH", "1.0.0", "<p>x</p>"), None)
        .unwrap_err();
    assert!(
        variant.to_string().contains("differs only in case"),
        "{variant}"
    );
    store.apps().set_enabled("com.example.dash", false).unwrap();
    assert_eq!(
        AppCatalog::reservation(&store, &id("com.example.DASH")),
        Some(Reservation::Disabled(held.clone()))
    );
    store.apps().remove("com.example.dash").unwrap();
    // The tombstone outlives the process (a restart between revoke and use).
    let store = Store::open(dir.path()).unwrap();
    assert_eq!(
        AppCatalog::reservation(&store, &id("Com.Example.Dash")),
        Some(Reservation::Removed(held.clone()))
    );
    assert_eq!(store.app_ids().removed().unwrap().len(), 1);
    for again in ["com.example.dash", "com.example.Dash"] {
        let refused = store
            .apps()
            .install(&package_as(again, "2.0.0", "<p>two</p>"), None)
            .unwrap_err();
        assert!(
            refused.to_string().contains("lineup apps forget"),
            "{refused}"
        );
    }
    // Forgetting needs the exact spelling and a tombstone.
    assert!(store.app_ids().forget("com.example.DASH").is_err());
    assert!(store.app_ids().forget("com.example.never").is_err());
    let before = store.audit().verify().unwrap().count;
    let revision = store.revisions().counter().unwrap();
    assert_eq!(
        store.app_ids().forget("com.example.dash").unwrap(),
        revision + 1
    );
    // Audited, and the chain still verifies.
    let head = store.audit().verify().unwrap();
    assert_eq!(head.count, before + 1);
    let mut export = Vec::new();
    store.audit().export(&mut export).unwrap();
    let last = String::from_utf8(export)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .to_owned();
    assert!(last.contains(r#""conversation_id":"operator""#), "{last}");
    assert!(last.contains("app:com.example.dash"), "{last}");
    assert_eq!(AppCatalog::reservation(&store, &held), None);
    store
        .apps()
        .install(&package("2.0.0", "<p>two</p>"), None)
        .unwrap();
}

/// An app with a script asset of `script_bytes` bytes (R-SEC-3a).
fn with_script(script_bytes: usize) -> Package {
    let files = PackageFiles::from_memory(
        [
            (
                "manifest.json",
                br#"{"id": "com.example.chart", "name": "Chart", "version": "1.0.0",
                     "surfaces": {"main": {"html": "index.html"}},
                     "assets": ["lib/chart.js"]}"#
                    .to_vec(),
            ),
            ("index.html", b"<script src=lib/chart.js></script>".to_vec()),
            ("lib/chart.js", vec![b' '; script_bytes]),
        ],
        &PackageLimits::default(),
    )
    .unwrap();
    Package::from_files(files, &ManifestLimits::default()).unwrap()
}

/// R-SEC-3a: the per-package code limit is the host's: a store opened with a lower one refuses
/// to install a package the default takes, naming the file, the total and the limit, and
/// changes nothing; one installed under a higher limit is refused at load (an open) and by the
/// start-up check. A script asset's bytes are covered by the digest and re-verified at load.
#[test]
fn r_sec_3a_the_hosts_code_limit_holds_at_install_and_at_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut strict = ManifestLimits::default();
    strict.max_code_bytes = 1000;
    let app = with_script(1001);
    let low = Store::open(dir.path())
        .unwrap()
        .with_manifest_limits(strict.clone());
    assert_eq!(low.manifest_limits().max_code_bytes, 1000);
    let err = low.apps().install(&app, None).unwrap_err();
    assert!(
        err.to_string().contains(
            "\"lib/chart.js\" (1001 bytes) brings the package's script assets to 1001 bytes, \
             over the per-package code limit of 1000 (R-SEC-3a)"
        ),
        "{err}"
    );
    assert!(low.apps().list().unwrap().is_empty(), "nothing installed");
    // Positive control: the default store takes it, and serves its script at load.
    let default = Store::open(dir.path()).unwrap();
    default.apps().install(&app, None).unwrap();
    let loaded = default.apps().load("com.example.chart").unwrap();
    assert_eq!(loaded.code_bytes(), 1001);
    // Under the lower limit it is refused at open and by the start-up check.
    let err = low.apps().load("com.example.chart").unwrap_err();
    assert!(
        err.to_string()
            .contains("over the per-package code limit of 1000"),
        "{err}"
    );
    assert_eq!(low.apps().verify().unwrap().len(), 1);
    assert!(default.apps().verify().unwrap().is_empty());
    // A changed byte of the script in the cache is caught at load.
    let file = std::fs::read_dir(default.apps().cache_dir())
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(10).position(|w| w == [b' '; 10]).unwrap();
    bytes[at] = b'x';
    std::fs::write(&file, bytes).unwrap();
    let err = default.apps().load("com.example.chart").unwrap_err();
    assert!(err.to_string().contains("not the expected"), "{err}");
}
