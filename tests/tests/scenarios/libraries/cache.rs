//! Where the real libraries are: the cache `scripts/libraries.sh` fills from the npm registry,
//! `${LINEUP_LIBRARIES_DIR:-$HOME/.cache/lineup-libraries}`. A missing or stale cache fails
//! every scenario of the group with the command to run; it never skips one.

use std::path::{Path, PathBuf};

/// The variable that names the cache folder, as in `scripts/libraries.sh`.
pub(crate) const DIR_VAR: &str = "LINEUP_LIBRARIES_DIR";

/// What to run when the cache is missing or stale.
const FIX: &str = "run `bash scripts/libraries.sh` (it fetches the pinned releases of \
                   tests/libraries/package.json from the npm registry)";

/// The fetched libraries: `node_modules/` and the one-file `bundles/` of the cache.
#[derive(Clone, Debug)]
pub(crate) struct Libraries {
    dir: PathBuf,
}

impl Libraries {
    /// Finds the cache from [`DIR_VAR`] or `$HOME` (read before the group's private HOME is
    /// set) and checks that it was made from the committed lock file, byte for byte.
    pub(crate) fn locate() -> Result<Self, String> {
        let dir = match std::env::var_os(DIR_VAR) {
            Some(dir) => PathBuf::from(dir),
            None => match std::env::var_os("HOME") {
                Some(home) => Path::new(&home).join(".cache/lineup-libraries"),
                None => return Err(format!("neither {DIR_VAR} nor HOME is set: {FIX}")),
            },
        };
        let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("libraries/package-lock.json");
        let committed =
            std::fs::read(&committed).map_err(|e| format!("{}: {e}", committed.display()))?;
        let cached = std::fs::read(dir.join("package-lock.json"));
        if !dir.join("stamp").is_file() || cached.as_deref().ok() != Some(&committed[..]) {
            return Err(format!(
                "the library cache {} is missing, unfinished or made from another \
                 tests/libraries/package-lock.json: {FIX}",
                dir.display()
            ));
        }
        Ok(Self { dir })
    }

    /// The text of `path` under the cache (`node_modules/…` or `bundles/…`).
    pub(crate) fn text(&self, path: &str) -> Result<String, String> {
        let full = self.dir.join(path);
        std::fs::read_to_string(&full).map_err(|e| format!("{}: {e}: {FIX}", full.display()))
    }

    /// The bytes of `path` under the cache.
    pub(crate) fn bytes(&self, path: &str) -> Result<Vec<u8>, String> {
        let full = self.dir.join(path);
        std::fs::read(&full).map_err(|e| format!("{}: {e}: {FIX}", full.display()))
    }

    /// The text of `path` under the cache's `node_modules/`.
    pub(crate) fn module(&self, path: &str) -> Result<String, String> {
        self.text(&format!("node_modules/{path}"))
    }

    /// The version of npm package `name`, from its own `package.json` in the cache.
    pub(crate) fn version(&self, name: &str) -> String {
        self.module(&format!("{name}/package.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "?".to_owned())
    }
}
