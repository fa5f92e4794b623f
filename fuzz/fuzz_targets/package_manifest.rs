//! Fuzzes an app package's manifest against its files: `PackageFiles::from_memory` over a
//! fuzzed file set, then `Package::from_files`.
//!
//! Input: parts separated by the byte 0xFF (never in UTF-8, so JSON and text parts stay whole).
//! The first part is `manifest.json`; each later part is `name\nbytes` (no `\n`: a name with no
//! bytes).
//!
//! Checks: no panic; a file set that is read is independent of the order its files came in
//! (same files, same digest); a package that is accepted lists every file it holds, every asset
//! has a type, every Surface's bundle is within the bundle limit, its digest is its files'
//! digest, and it survives `write_tar` and `read_tar` with the same files and digest.
#![no_main]

use std::collections::BTreeSet;

use lineup_packages::{asset_mime, ManifestLimits, Package, PackageFiles, PackageLimits, MANIFEST};

fn parts(data: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut parts = data.split(|&b| b == 0xFF);
    let mut files = vec![(
        MANIFEST.to_owned(),
        parts.next().unwrap_or_default().to_vec(),
    )];
    for part in parts {
        let (name, bytes) = match part.iter().position(|&b| b == b'\n') {
            Some(at) => (&part[..at], &part[at + 1..]),
            None => (part, &[][..]),
        };
        files.push((String::from_utf8_lossy(name).into_owned(), bytes.to_vec()));
    }
    files
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let given = parts(data);
    let limits = PackageLimits::default();
    let Ok(files) =
        PackageFiles::from_memory(given.iter().map(|(n, b)| (n.as_str(), b.clone())), &limits)
    else {
        return;
    };
    // The canonical digest does not depend on the order the files arrived in.
    let reversed = PackageFiles::from_memory(
        given.iter().rev().map(|(n, b)| (n.as_str(), b.clone())),
        &limits,
    )
    .expect("the same files in another order were refused");
    assert_eq!(files, reversed, "the order of the files changed the set");
    assert_eq!(
        files.digest(),
        reversed.digest(),
        "the order changed the digest"
    );

    let manifest_limits = ManifestLimits::default();
    let Ok(package) = Package::from_files(files.clone(), &manifest_limits) else {
        return;
    };
    assert_eq!(
        package.digest(),
        files.digest(),
        "the package's digest is not its files'"
    );
    assert_eq!(package.files(), &files);
    assert!(
        !package.surfaces().is_empty(),
        "a package without Surfaces was accepted"
    );
    assert!(package.name().len() <= manifest_limits.max_name_bytes);

    // Every file is the manifest, a Surface's part, or a listed asset.
    let assets: BTreeSet<&str> = package.assets().keys().map(|p| p.as_str()).collect();
    for (path, mime) in package.assets() {
        assert_eq!(
            asset_mime(path),
            Some(*mime),
            "an asset's type is not its extension's"
        );
        assert!(
            files.get(path.as_str()).is_some(),
            "a listed asset is missing"
        );
    }
    for surface in package.surfaces().values() {
        let size = surface.bundle().len();
        assert!(
            size <= manifest_limits.max_bundle_bytes,
            "a bundle over the limit"
        );
    }
    for name in files.names() {
        let name = name.as_str();
        let is_part = package.surfaces().values().any(|s| {
            let b = s.bundle();
            let bytes = files.get(name).unwrap_or_default();
            std::str::from_utf8(bytes).is_ok_and(|text| [b.html(), b.css(), b.js()].contains(&text))
        });
        assert!(
            name == MANIFEST || assets.contains(name) || is_part,
            "file {name:?} is neither the manifest, a Surface's part nor an asset"
        );
    }
    for id in package.surfaces().keys() {
        let app = package.inline_app(id).expect("a listed Surface has no app");
        assert_eq!(&app.id, package.id());
        assert_eq!(
            app.integrity,
            Some(app.bundle.digest()),
            "the integrity is not the bundle's"
        );
    }

    // The archive form keeps every name and byte.
    let mut tar = Vec::new();
    files.write_tar(&mut tar).expect("writing to memory failed");
    let again =
        PackageFiles::read_tar(tar.as_slice(), &limits).expect("its own archive was refused");
    assert_eq!(again, files, "the archive changed the files");
    assert_eq!(again.digest(), package.digest());
});
