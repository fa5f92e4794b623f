//! Fuzzes the names and the small texts of an app package: `PackagePath::from_bytes` (every
//! archive entry's and manifest's file name), and the digest, key and signature texts a
//! package comes with (`PackageDigest::parse`, `PublicKey::parse`, `PackageSignature::parse`).
//!
//! Checks: no panic; an accepted name is exactly the input, relative, `/`-separated, with no
//! empty, `.` or `..` component, no backslash, `:` or control character, at most
//! `MAX_PATH_BYTES`, and joined under a folder it stays under it; its extension is a suffix of
//! its last component. A digest, key or signature that parses prints as text that parses to
//! the same value, and verifying a parsed signature never panics.
#![no_main]

use std::path::{Component, Path};

use lineup_packages::{PackageDigest, PackagePath, PackageSignature, PublicKey, MAX_PATH_BYTES};

fn check_path(data: &[u8]) {
    let Ok(path) = PackagePath::from_bytes(data) else {
        return;
    };
    let name = path.as_str();
    assert_eq!(name.as_bytes(), data, "the accepted name is not the input");
    assert!(!name.is_empty() && name.len() <= MAX_PATH_BYTES);
    assert!(!name.starts_with('/'), "an absolute name: {name:?}");
    assert!(!name.contains('\\') && !name.contains(':'), "{name:?}");
    assert!(
        !name.chars().any(char::is_control),
        "a control character: {name:?}"
    );
    for component in name.split('/') {
        assert!(
            !matches!(component, "" | "." | ".."),
            "component {component:?} in {name:?}"
        );
    }
    // Under any folder, the name names something inside it.
    let joined = Path::new("/package").join(name);
    assert!(joined.starts_with("/package"), "{name:?} left its folder");
    let mut components = joined.components();
    assert_eq!(components.next(), Some(Component::RootDir));
    assert!(
        components.all(|c| matches!(c, Component::Normal(_))),
        "{name:?} is not plain components"
    );
    if let Some(extension) = path.extension() {
        let last = name.rsplit('/').next().unwrap_or(name);
        assert!(
            last.ends_with(&format!(".{extension}")),
            "{name:?}: {extension:?}"
        );
        assert!(!extension.is_empty());
    }
    assert_eq!(PackagePath::new(name).ok().as_ref(), Some(&path));
}

fn check_texts(text: &str) {
    if let Ok(digest) = PackageDigest::parse(text) {
        let shown = digest.to_string();
        assert_eq!(PackageDigest::parse(&shown).ok(), Some(digest), "{shown}");
    }
    if let Ok(key) = PublicKey::parse(text) {
        let shown = key.to_string();
        assert_eq!(PublicKey::parse(&shown).ok(), Some(key), "{shown}");
    }
    if let Ok(signature) = PackageSignature::parse(text) {
        let shown = signature.to_string();
        assert!(
            !shown.contains('\n'),
            "a signature prints on more than one line"
        );
        assert_eq!(
            PackageSignature::parse(&shown).ok().as_ref(),
            Some(&signature),
            "{shown}"
        );
        let digest = PackageDigest::parse("sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
            .expect("the digest of nothing");
        let _ = signature.verify(&digest, &[signature.key()]);
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    check_path(data);
    if let Ok(text) = std::str::from_utf8(data) {
        check_texts(text);
    }
});
