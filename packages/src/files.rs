//! A package's files, read from a folder or a tar archive with every entry checked before its
//! bytes are kept.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::Path;

use crate::{PackageDigest, PackageError, PackagePath};

/// Caps on a package as it is read; an archive past any of them is refused at the entry that
/// passes it, before more is read.
///
/// | cap | default |
/// | --- | --- |
/// | `max_entries` (files, folders and archive extension headers) | 1,000 |
/// | `max_file_bytes` (one file) | 8 MiB |
/// | `max_total_bytes` (all files) | 32 MiB |
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PackageLimits {
    /// Entries of any kind.
    pub max_entries: usize,
    /// Bytes of one file.
    pub max_file_bytes: u64,
    /// Bytes of all files together.
    pub max_total_bytes: u64,
}

impl Default for PackageLimits {
    fn default() -> Self {
        Self {
            max_entries: 1_000,
            max_file_bytes: 8 * 1024 * 1024,
            max_total_bytes: 32 * 1024 * 1024,
        }
    }
}

/// The files of a package by name, checked: names valid ([`PackagePath`]), no two equal or
/// equal but for case, no file where another needs a folder, within [`PackageLimits`].
#[derive(Clone, PartialEq, Eq)]
pub struct PackageFiles {
    files: BTreeMap<PackagePath, Vec<u8>>,
}

impl std::fmt::Debug for PackageFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names and sizes; the bytes are guest code and assets.
        f.debug_map()
            .entries(self.files.iter().map(|(p, b)| (p, b.len())))
            .finish()
    }
}

/// Collects entries, enforcing the caps and the collision rules as they arrive.
struct Collector<'a> {
    limits: &'a PackageLimits,
    entries: usize,
    total: u64,
    files: BTreeMap<PackagePath, Vec<u8>>,
    /// Lower-cased name → the name first seen, for files and for folders.
    folded_files: HashMap<String, PackagePath>,
    folded_dirs: HashMap<String, String>,
}

impl<'a> Collector<'a> {
    fn new(limits: &'a PackageLimits) -> Self {
        Self {
            limits,
            entries: 0,
            total: 0,
            files: BTreeMap::new(),
            folded_files: HashMap::new(),
            folded_dirs: HashMap::new(),
        }
    }

    fn count_entry(&mut self) -> Result<(), PackageError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(PackageError::TooLarge {
                what: "the number of entries".into(),
                value: self.entries as u64,
                limit: self.limits.max_entries as u64,
            });
        }
        Ok(())
    }

    /// Checks a file's declared size before its bytes are read.
    fn check_size(&self, path: &PackagePath, size: u64) -> Result<(), PackageError> {
        if size > self.limits.max_file_bytes {
            return Err(PackageError::TooLarge {
                what: format!("entry {path:?}"),
                value: size,
                limit: self.limits.max_file_bytes,
            });
        }
        let total = self.total.saturating_add(size);
        if total > self.limits.max_total_bytes {
            return Err(PackageError::TooLarge {
                what: "the package's total size".into(),
                value: total,
                limit: self.limits.max_total_bytes,
            });
        }
        Ok(())
    }

    /// Records the folders above `path`, checking none is a file (in any case).
    fn folders_of(&mut self, path: &PackagePath) -> Result<(), PackageError> {
        let name = path.as_str();
        for (i, _) in name.match_indices('/') {
            let dir = &name[..i];
            let folded = dir.to_lowercase();
            if let Some(file) = self.folded_files.get(&folded) {
                return Err(PackageError::Collision {
                    first: file.to_string(),
                    second: name.to_owned(),
                    reason: "a file where a folder is needed",
                });
            }
            match self.folded_dirs.get(&folded) {
                Some(seen) if seen != dir => {
                    return Err(PackageError::Collision {
                        first: seen.clone(),
                        second: dir.to_owned(),
                        reason: "folder names that differ only by case",
                    })
                }
                Some(_) => {}
                None => {
                    self.folded_dirs.insert(folded, dir.to_owned());
                }
            }
        }
        Ok(())
    }

    fn folder(&mut self, path: PackagePath) -> Result<(), PackageError> {
        // A folder entry is the folders of a file inside it.
        let inside = PackagePath::new(&format!("{path}/x"))?;
        self.folders_of(&inside)
    }

    fn file(&mut self, path: PackagePath, bytes: Vec<u8>) -> Result<(), PackageError> {
        self.check_size(&path, bytes.len() as u64)?;
        if self.files.contains_key(&path) {
            return Err(PackageError::Duplicate {
                name: path.to_string(),
            });
        }
        self.folders_of(&path)?;
        let folded = path.folded();
        if let Some(first) = self.folded_files.get(&folded) {
            return Err(PackageError::Collision {
                first: first.to_string(),
                second: path.to_string(),
                reason: "names that differ only by case",
            });
        }
        if let Some(dir) = self.folded_dirs.get(&folded) {
            return Err(PackageError::Collision {
                first: dir.clone(),
                second: path.to_string(),
                reason: "a file where a folder is needed",
            });
        }
        self.folded_files.insert(folded, path.clone());
        self.total += bytes.len() as u64;
        self.files.insert(path, bytes);
        Ok(())
    }
}

impl PackageFiles {
    /// A package from names and bytes held in memory (tests, tools that build packages).
    ///
    /// # Errors
    /// As for an archive: a bad name, a duplicate, a collision or a cap.
    pub fn from_memory<'n>(
        files: impl IntoIterator<Item = (&'n str, Vec<u8>)>,
        limits: &PackageLimits,
    ) -> Result<Self, PackageError> {
        let mut collector = Collector::new(limits);
        for (name, bytes) in files {
            collector.count_entry()?;
            collector.file(PackagePath::new(name)?, bytes)?;
        }
        Ok(Self {
            files: collector.files,
        })
    }

    /// Reads a package folder. Symbolic links (also to files inside the folder), devices,
    /// FIFOs and sockets are refused, like names that are not valid [`PackagePath`]s.
    ///
    /// # Errors
    /// [`PackageError`] naming the entry and the rule or cap.
    pub fn read_dir(dir: &Path, limits: &PackageLimits) -> Result<Self, PackageError> {
        let mut collector = Collector::new(limits);
        let mut stack = vec![(dir.to_path_buf(), String::new())];
        while let Some((folder, prefix)) = stack.pop() {
            let mut names = Vec::new();
            for entry in std::fs::read_dir(&folder).map_err(PackageError::io(&folder))? {
                let entry = entry.map_err(PackageError::io(&folder))?;
                names.push(entry.file_name());
            }
            names.sort();
            for os_name in names {
                collector.count_entry()?;
                let Some(name) = os_name.to_str() else {
                    return Err(PackageError::BadPath {
                        name: format!("{prefix}{}", os_name.to_string_lossy()),
                        reason: "the name is not UTF-8",
                    });
                };
                let full = format!("{prefix}{name}");
                let path = PackagePath::new(&full)?;
                let on_disk = folder.join(&os_name);
                let meta =
                    std::fs::symlink_metadata(&on_disk).map_err(PackageError::io(&on_disk))?;
                let kind = meta.file_type();
                if kind.is_dir() {
                    collector.folder(path)?;
                    stack.push((on_disk, format!("{full}/")));
                } else if kind.is_file() {
                    collector.check_size(&path, meta.len())?;
                    let mut bytes = Vec::new();
                    std::fs::File::open(&on_disk)
                        .map_err(PackageError::io(&on_disk))?
                        .take(limits.max_file_bytes.saturating_add(1))
                        .read_to_end(&mut bytes)
                        .map_err(PackageError::io(&on_disk))?;
                    collector.file(path, bytes)?;
                } else {
                    return Err(PackageError::NotAFile {
                        name: full,
                        kind: if kind.is_symlink() {
                            "symbolic link"
                        } else {
                            "device, FIFO or socket"
                        },
                    });
                }
            }
        }
        Ok(Self {
            files: collector.files,
        })
    }

    /// Reads a package archive: a POSIX tar archive (ustar, with pax or GNU long names), not
    /// compressed. Every entry is checked before its bytes are kept: regular files and folders
    /// only (links, devices, FIFOs and sparse files are refused), names as
    /// [`PackagePath`] (a leading `./` is allowed and dropped), the caps of `limits`, and the
    /// header's size against the bytes there.
    ///
    /// # Errors
    /// [`PackageError`] naming the entry and the rule or cap.
    pub fn read_tar(archive: impl Read, limits: &PackageLimits) -> Result<Self, PackageError> {
        use tar::EntryType;
        let bad_archive = |e: std::io::Error| PackageError::Archive(e.to_string());
        let mut collector = Collector::new(limits);
        let mut archive = tar::Archive::new(archive);
        for entry in archive.entries().map_err(bad_archive)? {
            let entry = entry.map_err(bad_archive)?;
            collector.count_entry()?;
            let kind = entry.header().entry_type();
            if kind == EntryType::XGlobalHeader {
                continue;
            }
            let raw = entry.path_bytes();
            let raw: &[u8] = raw.as_ref();
            let raw = raw.strip_prefix(b"./").unwrap_or(raw);
            let is_dir = kind == EntryType::Directory;
            let raw = if is_dir {
                raw.strip_suffix(b"/").unwrap_or(raw)
            } else {
                raw
            };
            if is_dir && raw.is_empty() {
                continue; // "./" itself
            }
            let name = String::from_utf8_lossy(raw).into_owned();
            let refuse = |kind| PackageError::NotAFile {
                name: name.clone(),
                kind,
            };
            match kind {
                EntryType::Regular | EntryType::Continuous => {}
                EntryType::Directory => {
                    collector.folder(PackagePath::from_bytes(raw)?)?;
                    continue;
                }
                EntryType::Symlink => return Err(refuse("symbolic link")),
                EntryType::Link => return Err(refuse("hard link")),
                EntryType::Char => return Err(refuse("character device")),
                EntryType::Block => return Err(refuse("block device")),
                EntryType::Fifo => return Err(refuse("FIFO")),
                EntryType::GNUSparse => return Err(refuse("sparse file")),
                _ => return Err(refuse("entry of an unknown type")),
            }
            let path = PackagePath::from_bytes(raw)?;
            let declared = entry.header().size().map_err(bad_archive)?;
            collector.check_size(&path, declared)?;
            let mut bytes = Vec::new();
            entry
                .take(declared.saturating_add(1))
                .read_to_end(&mut bytes)
                .map_err(bad_archive)?;
            if bytes.len() as u64 != declared {
                return Err(PackageError::SizeMismatch {
                    name,
                    declared,
                    found: bytes.len() as u64,
                });
            }
            collector.file(path, bytes)?;
        }
        Ok(Self {
            files: collector.files,
        })
    }

    /// Reads `path`: a folder, or else a tar archive.
    ///
    /// # Errors
    /// As [`read_dir`](Self::read_dir) and [`read_tar`](Self::read_tar).
    pub fn read(path: &Path, limits: &PackageLimits) -> Result<Self, PackageError> {
        let meta = std::fs::metadata(path).map_err(PackageError::io(path))?;
        if meta.is_dir() {
            Self::read_dir(path, limits)
        } else {
            let file = std::fs::File::open(path).map_err(PackageError::io(path))?;
            Self::read_tar(std::io::BufReader::new(file), limits)
        }
    }

    /// Writes the files as a tar archive (ustar; regular files, mode 0644, time 0, owner 0), in
    /// name order: the same files always give the same bytes.
    ///
    /// # Errors
    /// Only those of `out`.
    pub fn write_tar(&self, out: impl std::io::Write) -> std::io::Result<()> {
        let mut builder = tar::Builder::new(out);
        for (path, bytes) in &self.files {
            let mut header = tar::Header::new_gnu();
            header.set_size(bytes.len() as u64);
            header.set_mode(0o644);
            header.set_mtime(0);
            header.set_uid(0);
            header.set_gid(0);
            header.set_entry_type(tar::EntryType::Regular);
            builder.append_data(&mut header, path.as_str(), bytes.as_slice())?;
        }
        builder.into_inner()?.flush()
    }

    /// The bytes of a file.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        PackagePath::new(name)
            .ok()
            .and_then(|p| self.files.get(&p))
            .map(Vec::as_slice)
    }

    /// The names, in digest order.
    pub fn names(&self) -> impl Iterator<Item = &PackagePath> {
        self.files.keys()
    }

    /// The files by name, in digest order.
    pub fn iter(&self) -> impl Iterator<Item = (&PackagePath, &[u8])> {
        self.files.iter().map(|(p, b)| (p, b.as_slice()))
    }

    /// How many files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// The bytes of all files.
    pub fn total_bytes(&self) -> u64 {
        self.files.values().map(|b| b.len() as u64).sum()
    }

    /// The package digest of these files ([`PackageDigest::of`]).
    pub fn digest(&self) -> PackageDigest {
        PackageDigest::of(self)
    }

    /// The names as a set, for checks against the manifest.
    pub(crate) fn name_set(&self) -> BTreeSet<&str> {
        self.files.keys().map(PackagePath::as_str).collect()
    }
}
