//! LineUp app packages (R-UI-9, R-SEC-7): what an app center installs once and an agent opens by
//! id.
//!
//! A package is a folder, or a single POSIX tar archive of one, holding `manifest.json` and the
//! files it names: each Surface's `html`, `css` and `js`, the static assets and the script assets
//! (R-SEC-3a). This crate reads
//! one safely ([`PackageFiles`]: no absolute names, no `..`, no links or devices, no duplicate or
//! case-colliding names, caps on entries and sizes), checks it against its manifest
//! ([`Package`]), computes its canonical digest ([`PackageDigest`]), and signs and verifies it
//! with Ed25519 ([`SecretKey`], [`PackageSignature`]). It reads and checks bytes only: where a
//! package comes from and where it is kept are the registry's business.
//!
//! ```
//! use lineup_packages::{ManifestLimits, Package, PackageFiles, PackageLimits, SecretKey};
//!
//! # fn main() -> Result<(), lineup_packages::PackageError> {
//! let manifest = br#"{"id": "com.example.hello", "name": "Hello", "version": "1.0.0",
//!   "surfaces": {"main": {"html": "index.html", "events": ["wave"]}}}"#;
//! let files = PackageFiles::from_memory(
//!     [("manifest.json", manifest.to_vec()), ("index.html", b"<p>Hello</p>".to_vec())],
//!     &PackageLimits::default(),
//! )?;
//! let package = Package::from_files(files, &ManifestLimits::default())?;
//! let key = SecretKey::generate()?;
//! let signature = key.sign(&package.digest());
//! signature.verify(&package.digest(), &[key.public_key()])?;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

mod digest;
mod error;
mod files;
mod manifest;
mod path;
mod signature;

pub use digest::PackageDigest;
pub use error::PackageError;
pub use files::{PackageFiles, PackageLimits};
pub use manifest::{
    asset_mime, is_script_mime, ManifestLimits, Package, PackageSurface, ASSET_EXTENSIONS,
    MANIFEST, SCRIPT_EXTENSIONS, SCRIPT_MIME,
};
pub use path::{PackagePath, MAX_PATH_BYTES};
pub use signature::{PackageSignature, PublicKey, SecretKey, SIGNATURE_CONTEXT};
