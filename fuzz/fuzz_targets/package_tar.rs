//! Fuzzes the reading of an app package archive: `PackageFiles::read_tar` over arbitrary bytes,
//! with small caps so that the fuzzer reaches them, then `Package::from_files` on what it read.
//!
//! Checks: no panic; an archive that is read holds at most the caps' entries and bytes, valid
//! names only, no two names (of files or folders) equal but for case and no file where another
//! needs a folder; and written back with `write_tar` it reads to the same files and digest.
#![no_main]

use std::collections::{BTreeMap, BTreeSet};

use lineup_packages::{ManifestLimits, Package, PackageFiles, PackageLimits, PackagePath};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let mut limits = PackageLimits::default();
    limits.max_entries = 16;
    limits.max_file_bytes = 4096;
    limits.max_total_bytes = 16 * 1024;
    let Ok(files) = PackageFiles::read_tar(data, &limits) else {
        return;
    };
    assert!(files.len() <= limits.max_entries);
    assert!(files.total_bytes() <= limits.max_total_bytes);
    let folded: BTreeSet<String> = files.names().map(|p| p.as_str().to_lowercase()).collect();
    assert_eq!(folded.len(), files.len(), "two names equal but for case");
    let mut folders: BTreeMap<String, &str> = BTreeMap::new();
    for (path, bytes) in files.iter() {
        assert!(bytes.len() as u64 <= limits.max_file_bytes);
        assert_eq!(PackagePath::new(path.as_str()).ok().as_ref(), Some(path));
        for (at, _) in path.as_str().match_indices('/') {
            let folder = &path.as_str()[..at];
            assert!(
                !folded.contains(&folder.to_lowercase()),
                "a file where the folder {folder:?} is needed"
            );
            let seen = *folders.entry(folder.to_lowercase()).or_insert(folder);
            assert_eq!(seen, folder, "folder names that differ only by case");
        }
    }
    let mut tar = Vec::new();
    files.write_tar(&mut tar).expect("writing to memory failed");
    let again =
        PackageFiles::read_tar(tar.as_slice(), &limits).expect("its own archive was refused");
    assert_eq!(again, files, "the archive changed the files");
    assert_eq!(again.digest(), files.digest());
    let _ = Package::from_files(files, &ManifestLimits::default());
});
