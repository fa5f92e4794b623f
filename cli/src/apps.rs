//! `lineup apps`: the local app registry (install, list, enable, disable, upgrade, rollback,
//! remove, verify) and app packages' keys, signatures and checks (R-UI-9, R-SEC-7).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use lineup_packages::{
    ManifestLimits, Package, PackageDigest, PackageError, PackageFiles, PackageLimits,
    PackageSignature, PublicKey, SecretKey,
};
use lineup_store::{AppChange, Store, StoreError};

use crate::data::{DataDirArg, Shown};

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  refused: the package is unsafe or invalid, has another digest or no trusted signature; the
     registry change is not possible (not installed, not newer, nothing to roll back to); or an
     installed package no longer matches its digest
  2  usage error
  3  a file or the store cannot be read or written (a key, a signature, the data directory)";

const EXIT_REFUSED: u8 = 1;
const EXIT_IO: u8 = 3;

/// The local app center and app packages (a folder or tar archive holding manifest.json and the
/// files it names).
#[derive(Debug, Args)]
#[command(after_help = EXIT_CODES)]
pub(crate) struct AppsArgs {
    #[command(subcommand)]
    command: AppsCommand,
    #[command(flatten)]
    data_dir: DataDirArg,
    #[command(flatten)]
    code_limit: CodeLimitArg,
}

/// `--max-package-code`: the per-package code limit (R-SEC-3a), shared by `lineup apps` and
/// `lineup host`.
#[derive(Debug, Args)]
pub(crate) struct CodeLimitArg {
    /// The per-package code limit: all script assets (.js, .mjs) of one package together, in
    /// bytes (R-SEC-3a); a package over it is refused at install and at open [default: 8388608,
    /// 8 MiB]. A package cannot raise it.
    #[arg(long, value_name = "BYTES", global = true)]
    max_package_code: Option<u64>,
}

impl CodeLimitArg {
    /// The manifest limits with this code limit.
    pub(crate) fn manifest_limits(&self) -> ManifestLimits {
        let mut limits = ManifestLimits::default();
        if let Some(bytes) = self.max_package_code {
            limits.max_code_bytes = bytes;
        }
        limits
    }
}

/// How an install or upgrade is verified: one of the two is required.
#[derive(Debug, Args)]
struct Expected {
    /// The digest the package must have (sha256-<base64>), from a source you trust.
    #[arg(long, value_name = "DIGEST", required_unless_present = "signature")]
    digest: Option<String>,
    /// A signature file made by `lineup apps sign`, by one of the --trusted-key keys.
    #[arg(long, value_name = "FILE", requires = "trusted_key")]
    signature: Option<PathBuf>,
    /// A trusted public key (ed25519:<base64>) or a file holding one per line; repeatable.
    #[arg(long = "trusted-key", value_name = "KEY|FILE")]
    trusted_key: Vec<String>,
    /// For an https:// package: trust only the CA certificates in this PEM file instead of the
    /// system's roots.
    #[arg(long, value_name = "PEM")]
    trusted_roots: Option<PathBuf>,
    /// For an https:// package: give up when nothing arrives for this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    stall_timeout: u64,
}

/// `install` and `upgrade`: a package and how it is verified.
#[derive(Debug, Args)]
struct PackageChange {
    /// The package: a folder, a tar archive, or an https:// URL of one.
    package: String,
    #[command(flatten)]
    expected: Expected,
    /// Print the change as JSON {id, from, to, enabled, revision}; `revision` is the app
    /// center's change counter, not a session's inventory revision.
    #[arg(long)]
    json: bool,
}

/// `rollback`, `enable`, `disable` and `remove`: an installed app.
#[derive(Debug, Args)]
struct AppChangeArgs {
    /// The app id.
    id: String,
    /// Print the change as JSON {id, from, to, enabled, revision}; `revision` is the app
    /// center's change counter, not a session's inventory revision.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Subcommand)]
enum AppsCommand {
    /// Install a package (folder, tar archive, or https:// URL of a tar archive) that is not
    /// installed yet, enabled; it needs --digest or a trusted --signature, and is verified
    /// before anything is kept. A download follows at most 5 redirects, https only, and stops
    /// at 33 MiB (the 32 MiB of files a package may hold, and room for the archive's headers).
    #[command(after_help = EXIT_CODES)]
    Install(PackageChange),
    /// Make a newer version of an installed app current; the one it replaces is kept for
    /// rollback. Verified like install.
    #[command(after_help = EXIT_CODES)]
    Upgrade(PackageChange),
    /// Go back to the version installed before the current one (verified again first). The
    /// current version is removed (a later upgrade installs it anew); running hosts close its
    /// open Surfaces with the reason app_upgraded.
    #[command(after_help = EXIT_CODES)]
    Rollback(AppChangeArgs),
    /// Let agents open an installed app again.
    #[command(after_help = EXIT_CODES)]
    Enable(AppChangeArgs),
    /// Stop agents from opening an app; running hosts close its open Surfaces.
    #[command(after_help = EXIT_CODES)]
    Disable(AppChangeArgs),
    /// Remove an app with all its versions and cached files. Its id stays reserved (R-UI-9):
    /// an inline bundle under it, in any case, is refused `revoked`, and it cannot be
    /// installed again until `lineup apps forget ID`.
    #[command(after_help = EXIT_CODES)]
    Remove(AppChangeArgs),
    /// Forget a removed app's id (its tombstone), recorded on the audit log: the id may be
    /// installed again, and inline bundles under it are no longer refused.
    #[command(after_help = EXIT_CODES)]
    Forget(AppChangeArgs),
    /// List installed apps: id, current version, enabled, versions kept, digest.
    #[command(after_help = EXIT_CODES)]
    List {
        /// Print a JSON array of {id, name, version, digest, enabled, versions}.
        #[arg(long)]
        json: bool,
    },
    /// Make an Ed25519 signing key: FILE (secret, mode 0600) and FILE.pub; prints the public key.
    #[command(after_help = EXIT_CODES)]
    Keygen {
        /// Where to write the secret key; an existing file is never overwritten.
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Sign a package's digest; prints the one-line signature (or writes it to --out).
    #[command(after_help = EXIT_CODES)]
    Sign {
        /// The package: a folder or a tar archive.
        package: PathBuf,
        /// The secret key file made by `lineup apps keygen`.
        #[arg(long, value_name = "FILE")]
        key: PathBuf,
        /// Write the signature here instead of to stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Check a package: safe to unpack, manifest and files agree; with --digest, that digest;
    /// with --signature, signed by one of the --trusted-key keys. Without a package, check
    /// every installed version's cached bytes against its recorded digest.
    #[command(after_help = EXIT_CODES)]
    Verify {
        /// The package: a folder or a tar archive; none for the installed apps.
        package: Option<PathBuf>,
        /// The digest the package must have (sha256-<base64>).
        #[arg(long, value_name = "DIGEST")]
        digest: Option<String>,
        /// A signature file made by `lineup apps sign`.
        #[arg(long, value_name = "FILE", requires = "trusted_key")]
        signature: Option<PathBuf>,
        /// A trusted public key (ed25519:<base64>) or a file holding one per line; repeatable.
        #[arg(long = "trusted-key", value_name = "KEY|FILE")]
        trusted_key: Vec<String>,
        /// Print a JSON object {id, name, version, digest, surfaces, assets, code_bytes,
        /// max_code_bytes, max_bundle_bytes, signed_by}.
        #[arg(long)]
        json: bool,
    },
}

struct Failure {
    code: u8,
    message: String,
}

impl Failure {
    fn store(error: StoreError) -> Self {
        let code = match error {
            StoreError::App { .. } | StoreError::Package(_) => EXIT_REFUSED,
            _ => EXIT_IO,
        };
        Self {
            code,
            message: error.to_string(),
        }
    }

    fn from_data(failure: crate::data::Failure) -> Self {
        Self {
            code: EXIT_IO,
            message: failure.message,
        }
    }

    fn refused(error: PackageError) -> Self {
        let code = match error {
            PackageError::Io { .. } => EXIT_IO,
            _ => EXIT_REFUSED,
        };
        Self {
            code,
            message: error.to_string(),
        }
    }

    fn io(path: &Path, error: io::Error) -> Self {
        Self {
            code: EXIT_IO,
            message: format!("{}: {error}", path.display()),
        }
    }
}

/// Runs `lineup apps …`.
pub(crate) fn run(args: AppsArgs) -> ExitCode {
    match command(
        args.command,
        &args.data_dir,
        &args.code_limit.manifest_limits(),
    ) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            let _ = writeln!(io::stderr().lock(), "lineup: error: {}", failure.message);
            ExitCode::from(failure.code)
        }
    }
}

fn read_package(path: &Path, limits: &ManifestLimits) -> Result<Package, Failure> {
    let files = PackageFiles::read(path, &PackageLimits::default()).map_err(Failure::refused)?;
    Package::from_files(files, limits).map_err(Failure::refused)
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| Failure::io(path, e))
}

fn trusted_keys(given: &[String]) -> Result<Vec<PublicKey>, Failure> {
    let mut keys = Vec::new();
    for item in given {
        if item.starts_with("ed25519:") {
            keys.push(PublicKey::parse(item).map_err(Failure::refused)?);
            continue;
        }
        let text = read_text(Path::new(item))?;
        for line in text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
        {
            keys.push(PublicKey::parse(line).map_err(Failure::refused)?);
        }
    }
    Ok(keys)
}

fn write_new(path: &Path, text: &str, mode: u32) -> Result<(), Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| Failure::io(path, e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Failure::io(path, e))
}

/// Reads (or downloads) and verifies a package to install: the digest, or a signature by a
/// trusted key (which is returned, for the `signed-only` bundle policy).
fn verified(
    source: &str,
    expected: &Expected,
    limits: &ManifestLimits,
) -> Result<(Package, Option<PublicKey>), Failure> {
    let package = if source.contains("://") {
        let fetch_limits = crate::fetch::FetchLimits {
            max_bytes: PackageLimits::default().max_total_bytes + 1024 * 1024,
            stall: std::time::Duration::from_secs(expected.stall_timeout),
        };
        let bytes = crate::fetch::fetch(source, expected.trusted_roots.as_deref(), &fetch_limits)
            .map_err(|message| Failure {
            code: EXIT_REFUSED,
            message,
        })?;
        let files = PackageFiles::read_tar(bytes.as_slice(), &PackageLimits::default())
            .map_err(Failure::refused)?;
        Package::from_files(files, limits).map_err(Failure::refused)?
    } else {
        read_package(Path::new(source), limits)?
    };
    if let Some(digest) = &expected.digest {
        PackageDigest::parse(digest)
            .and_then(|d| d.check(package.files()))
            .map_err(Failure::refused)?;
    }
    let mut signed_by = None;
    if let Some(file) = &expected.signature {
        let trusted = trusted_keys(&expected.trusted_key)?;
        let signature = PackageSignature::parse(&read_text(file)?).map_err(Failure::refused)?;
        signature
            .verify(&package.digest(), &trusted)
            .map_err(Failure::refused)?;
        signed_by = Some(signature.key());
    }
    Ok((package, signed_by))
}

fn changed(out: &mut impl Write, change: &AppChange, json: bool) -> io::Result<()> {
    if json {
        let value = serde_json::to_string(change).map_err(io::Error::other)?;
        return writeln!(out, "{value}");
    }
    let id = Shown(&change.id);
    let version = |v: &Option<String>| v.as_deref().map(|v| Shown(v).to_string());
    match (version(&change.from), version(&change.to)) {
        (None, Some(to)) => writeln!(out, "installed {id} {to}, enabled")?,
        (Some(from), None) => writeln!(out, "removed {id} (was {from})")?,
        (Some(from), Some(to)) if from == to => writeln!(
            out,
            "{} {id} {to}",
            if change.enabled {
                "enabled"
            } else {
                "disabled"
            }
        )?,
        (Some(from), Some(to)) => writeln!(out, "{id}: {from} -> {to}")?,
        (None, None) => {}
    }
    // Each session's `client.inventory` carries a revision of its own, drawn by its host
    // (R-INV-2); this process cannot know them, so it names none (issue 30 item 12).
    writeln!(
        out,
        "app center change {}; running hosts send each session a new client.inventory within a second",
        change.revision
    )
}

fn list(out: &mut impl Write, store: &Store, json: bool) -> Result<(), Failure> {
    let apps = store.apps().list().map_err(Failure::store)?;
    let stdout = Path::new("stdout");
    if json {
        let value = serde_json::to_string(&apps).map_err(|e| Failure::io(stdout, e.into()))?;
        return writeln!(out, "{value}").map_err(|e| Failure::io(stdout, e));
    }
    let removed = store.app_ids().removed().map_err(Failure::store)?;
    let write = |out: &mut dyn Write| -> io::Result<()> {
        if apps.is_empty() {
            writeln!(out, "no apps installed")?;
        } else {
            writeln!(
                out,
                "{:<32} {:<12} {:<8} {:<10} DIGEST",
                "ID", "VERSION", "ENABLED", "VERSIONS"
            )?;
        }
        for app in &apps {
            writeln!(
                out,
                "{:<32} {:<12} {:<8} {:<10} {}",
                Shown(&app.id).to_string(),
                Shown(&app.version).to_string(),
                if app.enabled { "yes" } else { "no" },
                app.versions.len(),
                app.digest
            )?;
        }
        if !removed.is_empty() {
            writeln!(out, "removed, ids reserved until `lineup apps forget ID`:")?;
            for (id, at) in &removed {
                writeln!(out, "  {:<32} removed {at}", Shown(id).to_string())?;
            }
        }
        Ok(())
    };
    write(out).map_err(|e| Failure::io(stdout, e))
}

fn command(
    command: AppsCommand,
    data_dir: &DataDirArg,
    limits: &ManifestLimits,
) -> Result<(), Failure> {
    let stdout = Path::new("stdout");
    let mut out = io::stdout().lock();
    let open = || {
        data_dir
            .open()
            .map(|store| store.with_manifest_limits(limits.clone()))
            .map_err(Failure::from_data)
    };
    match command {
        AppsCommand::Install(change) => {
            let (package, signed_by) = verified(&change.package, &change.expected, limits)?;
            let store = data_dir
                .open_or_create()
                .map_err(Failure::from_data)?
                .with_manifest_limits(limits.clone());
            let done = store
                .apps()
                .install(&package, signed_by.as_ref())
                .map_err(Failure::store)?;
            changed(&mut out, &done, change.json).map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::Upgrade(change) => {
            let (package, signed_by) = verified(&change.package, &change.expected, limits)?;
            let done = open()?
                .apps()
                .upgrade(&package, signed_by.as_ref())
                .map_err(Failure::store)?;
            changed(&mut out, &done, change.json).map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::Rollback(app) => {
            let done = open()?.apps().rollback(&app.id).map_err(Failure::store)?;
            changed(&mut out, &done, app.json).map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::Enable(app) => {
            let done = open()?
                .apps()
                .set_enabled(&app.id, true)
                .map_err(Failure::store)?;
            changed(&mut out, &done, app.json).map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::Disable(app) => {
            let done = open()?
                .apps()
                .set_enabled(&app.id, false)
                .map_err(Failure::store)?;
            changed(&mut out, &done, app.json).map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::Remove(app) => {
            let done = open()?.apps().remove(&app.id).map_err(Failure::store)?;
            changed(&mut out, &done, app.json).map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::Forget(app) => {
            let revision = open()?.app_ids().forget(&app.id).map_err(Failure::store)?;
            let done = AppChange {
                id: app.id.clone(),
                from: None,
                to: None,
                enabled: false,
                revision,
            };
            if app.json {
                return changed(&mut out, &done, true).map_err(|e| Failure::io(stdout, e));
            }
            writeln!(
                out,
                "forgot removed app {} (audited); its id may be installed again (app center change {revision})",
                Shown(&app.id)
            )
            .map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::List { json } => list(&mut out, &open()?, json),
        AppsCommand::Verify { package: None, .. } => {
            let store = open()?;
            let failed = store.apps().verify().map_err(Failure::store)?;
            if failed.is_empty() {
                let count = store.apps().list().map_err(Failure::store)?.len();
                return writeln!(out, "{count} installed apps verified")
                    .map_err(|e| Failure::io(stdout, e));
            }
            for (id, version, error) in &failed {
                writeln!(out, "FAILED {} {}: {error}", Shown(id), Shown(version))
                    .map_err(|e| Failure::io(stdout, e))?;
            }
            Err(Failure {
                code: EXIT_REFUSED,
                message: format!(
                    "{} installed versions no longer match their digest; they are refused at open",
                    failed.len()
                ),
            })
        }
        AppsCommand::Keygen { out: path } => {
            let key = SecretKey::generate().map_err(Failure::refused)?;
            let public = path.with_file_name(format!(
                "{}.pub",
                path.file_name()
                    .map_or("key".into(), |n| n.to_string_lossy())
            ));
            if public.exists() {
                return Err(Failure::io(
                    &public,
                    io::Error::new(io::ErrorKind::AlreadyExists, "exists; not overwritten"),
                ));
            }
            write_new(&path, &key.to_file_text(), 0o600)?;
            write_new(&public, &format!("{}\n", key.public_key()), 0o644)?;
            writeln!(out, "{}", key.public_key()).map_err(|e| Failure::io(stdout, e))
        }
        AppsCommand::Sign {
            package,
            key,
            out: to,
        } => {
            let package = read_package(&package, limits)?;
            let key = SecretKey::parse(&read_text(&key)?).map_err(Failure::refused)?;
            let line = format!("{}\n", key.sign(&package.digest()));
            match to {
                Some(path) => write_new(&path, &line, 0o644),
                None => out
                    .write_all(line.as_bytes())
                    .map_err(|e| Failure::io(stdout, e)),
            }
        }
        AppsCommand::Verify {
            package: Some(path),
            digest,
            signature,
            trusted_key,
            json,
        } => {
            let package = read_package(&path, limits)?;
            if let Some(expected) = digest {
                PackageDigest::parse(&expected)
                    .and_then(|d| d.check(package.files()))
                    .map_err(Failure::refused)?;
            }
            let signed_by = match signature {
                Some(file) => {
                    let trusted = trusted_keys(&trusted_key)?;
                    let signature =
                        PackageSignature::parse(&read_text(&file)?).map_err(Failure::refused)?;
                    signature
                        .verify(&package.digest(), &trusted)
                        .map_err(Failure::refused)?;
                    Some(signature.key())
                }
                None => None,
            };
            report(&mut out, &package, limits, signed_by, json).map_err(|e| Failure::io(stdout, e))
        }
    }
}

fn report(
    out: &mut impl Write,
    package: &Package,
    limits: &ManifestLimits,
    signed_by: Option<PublicKey>,
    json: bool,
) -> io::Result<()> {
    let surfaces: Vec<_> = package
        .surfaces()
        .iter()
        .map(|(id, s)| {
            serde_json::json!({
                "id": id.as_str(),
                "bytes": s.bundle().len(),
                "integrity": s.bundle().digest().to_string(),
                "events": s.events().iter().map(|e| e.as_str()).collect::<Vec<_>>(),
            })
        })
        .collect();
    let assets: Vec<_> = package
        .assets()
        .iter()
        .map(|(path, mime)| {
            let bytes = package.files().get(path.as_str()).map_or(0, <[u8]>::len);
            serde_json::json!({"path": path.as_str(), "type": mime, "bytes": bytes,
                               "script": lineup_packages::is_script_mime(mime)})
        })
        .collect();
    if json {
        let value = serde_json::json!({
            "id": package.id().as_str(),
            "name": package.name(),
            "version": package.version().to_string(),
            "digest": package.digest().to_string(),
            "surfaces": surfaces,
            "assets": assets,
            "code_bytes": package.code_bytes(),
            "max_code_bytes": limits.max_code_bytes,
            "max_bundle_bytes": limits.max_bundle_bytes,
            "signed_by": signed_by.map(|k| k.to_string()),
        });
        return writeln!(out, "{value}");
    }
    writeln!(
        out,
        "{} {} ({:?}): a valid package",
        package.id().as_str(),
        package.version(),
        package.name()
    )?;
    writeln!(out, "digest    {}", package.digest())?;
    for surface in &surfaces {
        writeln!(
            out,
            "surface   {} ({} bytes of {}, R-UI-2), events: {}",
            surface["id"].as_str().unwrap_or_default(),
            surface["bytes"],
            limits.max_bundle_bytes,
            surface["events"]
        )?;
    }
    for asset in &assets {
        writeln!(
            out,
            "{}{} ({}, {} bytes)",
            if asset["script"] == true {
                "script    "
            } else {
                "asset     "
            },
            asset["path"].as_str().unwrap_or_default(),
            asset["type"].as_str().unwrap_or_default(),
            asset["bytes"]
        )?;
    }
    writeln!(
        out,
        "code      {} bytes of script assets, of {} (R-SEC-3a)",
        package.code_bytes(),
        limits.max_code_bytes
    )?;
    match signed_by {
        Some(key) => writeln!(out, "signature valid, by trusted key {key}"),
        None => writeln!(out, "signature not checked (no --signature)"),
    }
}
