//! Packages (R-UI-9, R-SEC-7): the unpack table (names, entry types, collisions, caps, lying
//! headers) for archives and folders, the manifest table, the canonical digest and signatures.
//! Every refusal table has its positive control: the same shape that is accepted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]

use lineup_packages::{
    ManifestLimits, Package, PackageDigest, PackageError, PackageFiles, PackageLimits,
    PackageSignature, PublicKey, SecretKey,
};
use tar::EntryType;

/// One raw tar entry, written byte by byte so that names the `tar` crate's own builder would
/// refuse (`..`, absolute) can be made; `declared` overrides the header's size.
fn entry(out: &mut Vec<u8>, name: &[u8], kind: EntryType, data: &[u8], declared: Option<u64>) {
    let mut header = tar::Header::new_ustar();
    {
        let field = &mut header.as_old_mut().name;
        field.fill(0);
        field[..name.len()].copy_from_slice(name);
    }
    header.set_mode(0o644);
    header.set_size(declared.unwrap_or(data.len() as u64));
    header.set_entry_type(kind);
    if matches!(kind, EntryType::Symlink | EntryType::Link) {
        header.set_link_name("manifest.json").unwrap();
    }
    header.set_cksum();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(512), 0);
}

fn archive(entries: &[(&[u8], EntryType, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (name, kind, data) in entries {
        entry(&mut out, name, *kind, data, None);
    }
    out.extend_from_slice(&[0; 1024]);
    out
}

const MANIFEST: &[u8] = br#"{"id": "com.example.dash", "name": "Dash", "version": "1.2.0",
  "surfaces": {"main": {"html": "index.html", "css": "style.css", "js": "app/script.js",
                        "events": ["refresh", "pick"]}},
  "assets": ["assets/logo.png", "assets/font.woff2"]}"#;

fn good_files() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("manifest.json", MANIFEST.to_vec()),
        ("index.html", b"<main><img src=logo></main>".to_vec()),
        ("style.css", b"main{}".to_vec()),
        (
            "app/script.js",
            b"LineUpSurface.onState(function(){});".to_vec(),
        ),
        ("assets/logo.png", vec![0x89, b'P', b'N', b'G', 1, 2, 3]),
        ("assets/font.woff2", b"wOF2....".to_vec()),
    ]
}

fn read_tar(bytes: &[u8]) -> Result<PackageFiles, PackageError> {
    PackageFiles::read_tar(bytes, &PackageLimits::default())
}

#[test]
fn archive_entries_are_refused_by_name_type_and_collision() {
    use EntryType::{Block, Char, Directory, Fifo, Link, Regular, Symlink};
    type Case<'a> = (&'a str, Vec<(&'a [u8], EntryType, &'a [u8])>, &'a str);
    let cases: Vec<Case<'_>> = vec![
        (
            "absolute",
            vec![(b"/etc/passwd", Regular, b"x")],
            "an absolute path",
        ),
        (
            "parent",
            vec![(b"../evil", Regular, b"x")],
            "a '..' component",
        ),
        (
            "inner parent",
            vec![(b"a/../../evil", Regular, b"x")],
            "a '..' component",
        ),
        (
            "backslash",
            vec![(b"a\\..\\b", Regular, b"x")],
            "a backslash",
        ),
        ("drive", vec![(b"C:evil", Regular, b"x")], "':'"),
        ("dot", vec![(b"a/./b", Regular, b"x")], "a '.' component"),
        (
            "empty component",
            vec![(b"a//b", Regular, b"x")],
            "an empty component",
        ),
        (
            "control",
            vec![(b"a\nb", Regular, b"x")],
            "a control character",
        ),
        ("not utf-8", vec![(b"a\xff", Regular, b"x")], "not UTF-8"),
        ("symlink", vec![(b"link", Symlink, b"")], "symbolic link"),
        ("hard link", vec![(b"link", Link, b"")], "hard link"),
        ("char device", vec![(b"dev", Char, b"")], "character device"),
        ("block device", vec![(b"dev", Block, b"")], "block device"),
        ("fifo", vec![(b"pipe", Fifo, b"")], "FIFO"),
        (
            "duplicate",
            vec![(b"a.txt", Regular, b"1"), (b"a.txt", Regular, b"2")],
            "appears twice",
        ),
        (
            "case",
            vec![(b"A.txt", Regular, b"1"), (b"a.txt", Regular, b"2")],
            "differ only by case",
        ),
        (
            "file as folder",
            vec![(b"a", Regular, b"1"), (b"a/b", Regular, b"2")],
            "a file where a folder is needed",
        ),
        (
            "folder then file",
            vec![(b"a/b", Regular, b"1"), (b"A", Regular, b"2")],
            "a file where a folder is needed",
        ),
        (
            "folder case",
            vec![
                (b"Assets/", Directory, b""),
                (b"assets/x.png", Regular, b"2"),
            ],
            "differ only by case",
        ),
    ];
    for (what, entries, expected) in cases {
        let err = read_tar(&archive(&entries)).expect_err(what);
        assert!(err.to_string().contains(expected), "{what}: {err}");
    }
    // Positive control: `./`, folder entries and nested files are fine.
    let files = read_tar(&archive(&[
        (b"./", Directory, b""),
        (b"./assets/", Directory, b""),
        (b"./assets/x.png", Regular, b"png"),
        (b"a.txt", Regular, b"1"),
    ]))
    .unwrap();
    assert_eq!(
        files.names().map(|p| p.as_str()).collect::<Vec<_>>(),
        ["a.txt", "assets/x.png"]
    );
}

#[test]
fn archive_caps_and_lying_headers() {
    let mut limits = PackageLimits::default();
    limits.max_entries = 3;
    limits.max_file_bytes = 10;
    limits.max_total_bytes = 15;
    let read = |bytes: &[u8]| PackageFiles::read_tar(bytes, &limits);
    let r = EntryType::Regular;
    let err = read(&archive(&[
        (b"a", r, b""),
        (b"b", r, b""),
        (b"c", r, b""),
        (b"d", r, b""),
    ]))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("the number of entries is 4, over the limit of 3"),
        "{err}"
    );
    let err = read(&archive(&[(b"a", r, &[7; 11])])).unwrap_err();
    assert!(
        err.to_string()
            .contains("entry \"a\" is 11, over the limit of 10"),
        "{err}"
    );
    let err = read(&archive(&[(b"a", r, &[7; 8]), (b"b", r, &[7; 8])])).unwrap_err();
    assert!(
        err.to_string()
            .contains("total size is 16, over the limit of 15"),
        "{err}"
    );
    // A header that claims 1 GiB is refused from the header, before anything is read.
    let mut huge = Vec::new();
    entry(&mut huge, b"a", r, b"", Some(1 << 30));
    let err = read(&huge).unwrap_err();
    assert!(
        err.to_string()
            .contains("is 1073741824, over the limit of 10"),
        "{err}"
    );
    // A header that claims more than the archive holds: the archive ends after 3 bytes.
    let mut short = Vec::new();
    entry(&mut short, b"a", r, b"abc", Some(9));
    short.truncate(512 + 3);
    let err = read(&short).unwrap_err();
    assert!(
        matches!(
            err,
            PackageError::SizeMismatch {
                declared: 9,
                found: 3,
                ..
            } | PackageError::Archive(_)
        ),
        "{err}"
    );
    // Positive control: at every limit exactly.
    read(&archive(&[
        (b"a", r, &[7; 10]),
        (b"b", r, &[7; 5]),
        (b"c", r, b""),
    ]))
    .unwrap();
}

#[test]
fn folders_refuse_links_and_special_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("pkg");
    std::fs::create_dir_all(root.join("assets")).unwrap();
    for (name, bytes) in good_files() {
        std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
        std::fs::write(root.join(name), bytes).unwrap();
    }
    // Positive control: the folder reads, with the same digest as its archive.
    let limits = PackageLimits::default();
    let from_dir = PackageFiles::read_dir(&root, &limits).unwrap();
    let mut tar = Vec::new();
    from_dir.write_tar(&mut tar).unwrap();
    let from_tar = read_tar(&tar).unwrap();
    assert_eq!(from_dir, from_tar);
    assert_eq!(from_dir.digest(), from_tar.digest());

    std::os::unix::fs::symlink("../../etc/passwd", root.join("assets/link.png")).unwrap();
    let err = PackageFiles::read_dir(&root, &limits).unwrap_err();
    assert!(
        err.to_string()
            .contains("assets/link.png\" is a symbolic link"),
        "{err}"
    );
    std::fs::remove_file(root.join("assets/link.png")).unwrap();

    let fifo = root.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let err = PackageFiles::read_dir(&root, &limits).unwrap_err();
    assert!(
        err.to_string()
            .contains("\"pipe\" is a device, FIFO or socket"),
        "{err}"
    );
}

fn package(files: Vec<(&str, Vec<u8>)>) -> Result<Package, PackageError> {
    let files = PackageFiles::from_memory(files, &PackageLimits::default())?;
    Package::from_files(files, &ManifestLimits::default())
}

fn with_manifest(manifest: &str) -> Vec<(&'static str, Vec<u8>)> {
    let mut files = good_files();
    files[0].1 = manifest.as_bytes().to_vec();
    files
}

#[test]
fn manifests_are_checked_against_their_files() {
    // Positive control.
    let good = package(good_files()).unwrap();
    assert_eq!(good.id().as_str(), "com.example.dash");
    assert_eq!(good.version().to_string(), "1.2.0");
    let main = &good.surfaces()[&"main".try_into().unwrap()];
    assert_eq!(main.events().len(), 2);
    assert!(main.bundle().js().contains("onState"));
    assert_eq!(
        good.assets().values().copied().collect::<Vec<_>>(),
        ["font/woff2", "image/png"]
    );

    let manifest = std::str::from_utf8(MANIFEST).unwrap();
    type Files = Vec<(&'static str, Vec<u8>)>;
    let cases: Vec<(&str, Files, &str)> = vec![
        (
            "unknown field",
            with_manifest(&manifest.replace("\"name\"", "\"nmae\": 1, \"name\"")),
            "unknown field `nmae`",
        ),
        (
            "bad id",
            with_manifest(&manifest.replace("com.example.dash", "dash")),
            "manifest.json: id:",
        ),
        (
            "bad version",
            with_manifest(&manifest.replace("1.2.0", "1.2")),
            "manifest.json: version:",
        ),
        (
            "missing file",
            with_manifest(&manifest.replace("style.css", "missing.css")),
            "surfaces.main.css: \"missing.css\" is not in the package",
        ),
        (
            "close event",
            with_manifest(&manifest.replace("\"pick\"", "\"close\"")),
            "surfaces.main.events[1]: \"close\" is the user's",
        ),
        (
            "bad event",
            with_manifest(&manifest.replace("\"pick\"", "\"9pick\"")),
            "surfaces.main.events[1]",
        ),
        (
            "svg asset",
            {
                let mut f = with_manifest(&manifest.replace("assets/logo.png", "assets/logo.svg"));
                f[4].0 = "assets/logo.svg";
                f
            },
            "assets[0]: \"assets/logo.svg\": an asset's extension must be one of",
        ),
        (
            "traversal in the manifest",
            with_manifest(&manifest.replace("index.html", "../index.html")),
            "surfaces.main.html: entry \"../index.html\": a '..' component",
        ),
        (
            "no surfaces",
            with_manifest(
                r#"{"id": "com.example.dash", "name": "Dash", "version": "1.2.0", "surfaces": {}}"#,
            ),
            "surfaces: 0 surfaces",
        ),
        (
            "breakout",
            {
                let mut f = good_files();
                f[3].1 = b"var s = '</script>';".to_vec();
                f
            },
            "surfaces.main:",
        ),
        (
            "over the bundle limit",
            {
                let mut f = good_files();
                f[1].1 = vec![b'x'; 161 * 1024];
                f
            },
            "over the limit of 163840 (R-UI-2)",
        ),
        (
            "unlisted file",
            {
                let mut f = good_files();
                f.push(("notes.txt", b"x".to_vec()));
                f
            },
            "\"notes.txt\" is in the package but not listed",
        ),
    ];
    for (what, files, expected) in cases {
        let err = package(files).expect_err(what);
        assert!(err.to_string().contains(expected), "{what}: {err}");
    }
    let no_manifest = good_files().into_iter().skip(1).collect();
    assert!(matches!(
        package(no_manifest),
        Err(PackageError::NoManifest(_))
    ));
}

#[test]
fn the_digest_covers_every_byte_and_name() {
    let digest = package(good_files()).unwrap().digest();
    assert_eq!(PackageDigest::parse(&digest.to_string()).unwrap(), digest);
    // A flipped byte in an asset, and a renamed file, each change it.
    let mut flipped = good_files();
    flipped[4].1[2] ^= 1;
    let flipped = PackageFiles::from_memory(flipped, &PackageLimits::default()).unwrap();
    assert_ne!(flipped.digest(), digest);
    let err = digest.check(&flipped).unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("not the expected {digest}")),
        "{err}"
    );
    let mut renamed = good_files();
    renamed[4].0 = "assets/logo2.png";
    let renamed = PackageFiles::from_memory(renamed, &PackageLimits::default()).unwrap();
    assert_ne!(renamed.digest(), digest);
    // Positive control: the same files in another order give the same digest.
    let mut reordered = good_files();
    reordered.reverse();
    let reordered = PackageFiles::from_memory(reordered, &PackageLimits::default()).unwrap();
    digest.check(&reordered).unwrap();
    for bad in ["sha256-", "sha512-AAAA", "sha256-!!!", "sha256-AAAA"] {
        assert!(PackageDigest::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn signatures_verify_only_with_a_trusted_key_over_the_same_digest() {
    let digest = package(good_files()).unwrap().digest();
    let key = SecretKey::generate().unwrap();
    let other = SecretKey::generate().unwrap();
    let signature = key.sign(&digest);
    // Round trips through the text forms.
    let signature = PackageSignature::parse(&signature.to_string()).unwrap();
    let key = SecretKey::parse(&key.to_file_text()).unwrap();
    let public = PublicKey::parse(&key.public_key().to_string()).unwrap();
    signature
        .verify(&digest, &[other.public_key(), public])
        .unwrap();
    // Not trusted.
    let err = signature
        .verify(&digest, &[other.public_key()])
        .unwrap_err();
    assert!(
        err.to_string().contains("is not one of the trusted keys"),
        "{err}"
    );
    // Another package's digest.
    let mut flipped = good_files();
    flipped[1].1.push(b' ');
    let flipped = package(flipped).unwrap().digest();
    let err = signature.verify(&flipped, &[public]).unwrap_err();
    assert!(err.to_string().contains("does not verify"), "{err}");
    // A signature by another key claiming this key.
    let forged = other.sign(&digest).to_string();
    let forged = forged.replacen(&other.public_key().to_string(), &public.to_string(), 1);
    let err = PackageSignature::parse(&forged)
        .unwrap()
        .verify(&digest, &[public])
        .unwrap_err();
    assert!(err.to_string().contains("does not verify"), "{err}");
    // The secret key's Debug shows only the public key.
    assert_eq!(format!("{key:?}"), format!("SecretKey({public})"));
    for bad in ["", "ed25519:AAAA x", "rsa:AAAA AAAA"] {
        assert!(PackageSignature::parse(bad).is_err(), "{bad:?}");
    }
}

/// A package with script assets: `lib.js` (classic) and `main.mjs` (module), `chart.umd.js`
/// as big as `size`.
fn with_scripts(size: usize) -> Vec<(&'static str, Vec<u8>)> {
    vec![
        (
            "manifest.json",
            br#"{"id": "com.example.chart", "name": "Chart", "version": "1.0.0",
  "surfaces": {"main": {"html": "index.html"}},
  "assets": ["lib/chart.umd.js", "main.mjs", "assets/logo.png"]}"#
                .to_vec(),
        ),
        (
            "index.html",
            b"<script src=lib/chart.umd.js></script><script type=module src=main.mjs></script>"
                .to_vec(),
        ),
        ("lib/chart.umd.js", vec![b' '; size]),
        ("main.mjs", b"export const x = '</script>';\n".to_vec()),
        ("assets/logo.png", b"\x89PNG".to_vec()),
    ]
}

/// R-SEC-3a: script assets (`.js`, `.mjs`) are served as UTF-8 JavaScript, exempt from the
/// 4 MiB media limit but counted together against the per-package code limit (8 MiB by
/// default, one file may use all of it), and a lower limit set by the host refuses a package
/// the default takes, naming the file, the total and the limit. Inline code in them is not an
/// element, so `</script>` in a script asset is harmless and passes.
#[test]
fn r_sec_3a_script_assets_count_against_the_per_package_code_limit() {
    const MIB: usize = 1024 * 1024;
    let limits = PackageLimits::default();
    let read = |files, manifest: &ManifestLimits| {
        Package::from_files(PackageFiles::from_memory(files, &limits)?, manifest)
    };
    // Positive control: a 5 MiB script, over the media limit, is one package's code.
    let five = read(with_scripts(5 * MIB), &ManifestLimits::default()).unwrap();
    let js = lineup_packages::SCRIPT_MIME;
    assert_eq!(
        five.assets()
            .iter()
            .map(|(p, m)| (p.as_str(), *m))
            .collect::<Vec<_>>(),
        [
            ("assets/logo.png", "image/png"),
            ("lib/chart.umd.js", js),
            ("main.mjs", js)
        ]
    );
    let main_bytes = "export const x = '</script>';\n".len() as u64;
    assert_eq!(five.code_bytes(), 5 * MIB as u64 + main_bytes);
    // One file may use all of the 8 MiB (the package reader's file cap is 8 MiB too).
    let all = 8 * MIB - main_bytes as usize;
    assert_eq!(
        read(with_scripts(all), &ManifestLimits::default())
            .unwrap()
            .code_bytes(),
        8 * MIB as u64
    );
    // One byte more is over, and the refusal names the file, the total and the limit.
    let err = read(with_scripts(all + 1), &ManifestLimits::default()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "manifest.json: assets[1]: \"main.mjs\" ({main_bytes} bytes) brings the \
             package's script assets to 8388609 bytes, over the per-package code limit of \
             8388608 (R-SEC-3a)"
        ),
    );
    // The host's lower limit refuses what the default takes.
    let mut strict = ManifestLimits::default();
    strict.max_code_bytes = MIB as u64;
    let err = read(with_scripts(5 * MIB), &strict).unwrap_err();
    assert!(
        err.to_string().contains(
            "assets[0]: \"lib/chart.umd.js\" (5242880 bytes) brings the package's script \
             assets to 5242880 bytes, over the per-package code limit of 1048576 (R-SEC-3a)"
        ),
        "{err}"
    );
    // A media asset keeps its own 4 MiB limit.
    let mut big_png = with_scripts(10);
    big_png[4].1 = vec![0; 4 * MIB + 1];
    let err = read(big_png, &ManifestLimits::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("over the media asset limit of 4194304"),
        "{err}"
    );
    // A script must be UTF-8.
    let mut latin1 = with_scripts(10);
    latin1[3].1 = b"var s = '\xe9';".to_vec();
    let err = read(latin1, &ManifestLimits::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("assets[1]: \"main.mjs\" is a script and is not UTF-8"),
        "{err}"
    );
}
