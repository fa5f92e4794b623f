//! Where the store lives: the XDG data directory by default.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::StoreError;

/// The name of the store's folder inside the XDG data directory.
pub const APP_DIR: &str = "lineup";

/// The default data directory: `$XDG_DATA_HOME/lineup` when `XDG_DATA_HOME` is an absolute path,
/// otherwise `$HOME/.local/share/lineup` (the XDG Base Directory rule).
///
/// # Errors
///
/// [`StoreError::NoDataDir`] when neither variable gives a directory.
pub fn default_data_dir() -> Result<PathBuf, StoreError> {
    data_dir_from(std::env::var_os("XDG_DATA_HOME"), std::env::var_os("HOME"))
}

/// [`default_data_dir`] from given values of `XDG_DATA_HOME` and `HOME`.
fn data_dir_from(xdg: Option<OsString>, home: Option<OsString>) -> Result<PathBuf, StoreError> {
    // The spec says a relative XDG_DATA_HOME is invalid and is to be ignored.
    if let Some(xdg) = xdg.filter(|v| Path::new(v).is_absolute()) {
        return Ok(PathBuf::from(xdg).join(APP_DIR));
    }
    match home.filter(|v| !v.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local/share").join(APP_DIR)),
        None => Err(StoreError::NoDataDir),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(xdg: Option<&str>, home: Option<&str>) -> Option<PathBuf> {
        data_dir_from(xdg.map(Into::into), home.map(Into::into)).ok()
    }

    #[test]
    fn xdg_data_home_wins_when_absolute() {
        assert_eq!(
            dir(Some("/x/data"), Some("/home/u")),
            Some(PathBuf::from("/x/data/lineup"))
        );
    }

    #[test]
    fn relative_or_empty_xdg_data_home_falls_back_to_home() {
        let expected = Some(PathBuf::from("/home/u/.local/share/lineup"));
        assert_eq!(dir(Some("rel/data"), Some("/home/u")), expected);
        assert_eq!(dir(Some(""), Some("/home/u")), expected);
        assert_eq!(dir(None, Some("/home/u")), expected);
    }

    #[test]
    fn neither_variable_is_an_error() {
        assert!(matches!(
            data_dir_from(None, Some("".into())),
            Err(StoreError::NoDataDir)
        ));
        assert!(matches!(
            data_dir_from(Some("rel".into()), None),
            Err(StoreError::NoDataDir)
        ));
    }
}
