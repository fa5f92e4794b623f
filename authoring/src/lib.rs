//! What Surface authors work with: a bundle folder (`index.html`, `style.css`, `script.js`,
//! library scripts in `scripts/`, optionally `state.json`) read and checked as production would, and turned into a ready
//! `lineup.v1.ui.open` envelope or `app` object with its `integrity` (R-UI-2a, R-UI-6a).
//!
//! ```no_run
//! use lineup_authoring::{BundleFolder, OpenOptions};
//!
//! # fn main() -> Result<(), lineup_authoring::AuthoringError> {
//! let folder = BundleFolder::read("weather")?;
//! let options = OpenOptions::for_folder(&folder)?;
//! println!("{}", folder.ui_open(&options)?.to_json());
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod error;
mod folder;
mod package;
mod preview;
mod scripts;
mod source;
mod syntax;
mod to_package;

pub use error::AuthoringError;
pub use folder::{BundleFolder, OpenOptions, FILES};
pub use package::PreviewCatalog;
pub use preview::{
    PackageReading, PreviewBundle, PreviewSource, SizeReport, SourceWatcher, DEBOUNCE,
};
pub use scripts::SCRIPTS_DIR;
pub use syntax::{check_script, SyntaxError};
pub use to_package::{write_package, WrittenPackage, ASSETS_DIR, PACKAGE_SURFACE};
