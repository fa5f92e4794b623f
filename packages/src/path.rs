//! The name of a file in a package: relative, `/`-separated, plain UTF-8 components.

use std::fmt;

use crate::PackageError;

/// The longest name of a file in a package, in bytes.
pub const MAX_PATH_BYTES: usize = 255;

/// The name of one file in a package, checked: relative, components separated by `/`, none
/// empty, `.` or `..`, no backslash, no control character, no `:` (a drive or a URL scheme),
/// UTF-8, at most [`MAX_PATH_BYTES`] bytes. Ordered by its UTF-8 bytes, the order of the
/// package digest.
///
/// ```
/// use lineup_packages::PackagePath;
/// assert!(PackagePath::new("assets/logo.png").is_ok());
/// for bad in ["/etc/passwd", "../x", "a/../b", "a//b", "a\\b", "./a", "a/", "C:x"] {
///     assert!(PackagePath::new(bad).is_err(), "{bad}");
/// }
/// ```
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PackagePath(String);

impl PackagePath {
    /// Checks `name`.
    ///
    /// # Errors
    /// [`PackageError::BadPath`] naming the rule it breaks.
    pub fn new(name: &str) -> Result<Self, PackageError> {
        let bad = |reason| PackageError::BadPath {
            name: name.to_owned(),
            reason,
        };
        if name.is_empty() {
            return Err(bad("the name is empty"));
        }
        if name.len() > MAX_PATH_BYTES {
            return Err(bad("the name is longer than 255 bytes"));
        }
        if name.starts_with('/') {
            return Err(bad("an absolute path"));
        }
        if name.contains('\\') {
            return Err(bad("a backslash: names are separated by '/' only"));
        }
        if name.contains(':') {
            return Err(bad("a ':' (a drive letter or URL scheme)"));
        }
        if name.chars().any(char::is_control) {
            return Err(bad("a control character"));
        }
        for component in name.split('/') {
            match component {
                "" => return Err(bad("an empty component ('//' or a trailing '/')")),
                "." => return Err(bad("a '.' component")),
                ".." => return Err(bad("a '..' component")),
                _ => {}
            }
        }
        Ok(Self(name.to_owned()))
    }

    /// Checks raw bytes of an archive entry's name, which must be UTF-8.
    ///
    /// # Errors
    /// [`PackageError::BadPath`].
    pub fn from_bytes(name: &[u8]) -> Result<Self, PackageError> {
        match std::str::from_utf8(name) {
            Ok(name) => Self::new(name),
            Err(_) => Err(PackageError::BadPath {
                name: String::from_utf8_lossy(name).into_owned(),
                reason: "the name is not UTF-8",
            }),
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name as compared for collisions: lower case.
    pub(crate) fn folded(&self) -> String {
        self.0.to_lowercase()
    }

    /// The extension after the last `.` of the last component, if any.
    pub fn extension(&self) -> Option<&str> {
        let file = self.0.rsplit('/').next().unwrap_or(&self.0);
        file.rsplit_once('.')
            .map(|(_, ext)| ext)
            .filter(|e| !e.is_empty())
    }
}

impl fmt::Display for PackagePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for PackagePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}
