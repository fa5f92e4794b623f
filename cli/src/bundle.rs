//! `lineup bundle <folder>`: a bundle folder as a ready `ui.open` envelope (or `app` object) on
//! stdout, its size against the limit and its integrity on stderr (R-UI-2, R-UI-2a, R-UI-6a).
//! Library scripts in the folder's `scripts/` are joined before `script.js`.
//! `lineup bundle FILE.json` of a standard component: `component.rs`.

mod component;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use lineup_authoring::{write_package, BundleFolder, OpenOptions};
use lineup_host_core::{AppId, AppVersion, ConversationId, EventName, InstanceId, Limits, PartyId};
use lineup_packages::ManifestLimits;

/// Prints a bundle folder (`index.html`, `style.css`, `script.js`, optional `state.json`) as a
/// ready `lineup.v1.ui.open` envelope, files inlined and `integrity` computed; or a standard
/// component's `ui.open` payload (a JSON file with `component`), checked as the host checks it.
#[derive(Debug, Args)]
pub(crate) struct BundleArgs {
    /// The folder, or a JSON file holding a standard component's `ui.open` payload.
    folder: PathBuf,
    /// Print only the `app` object, not the whole envelope.
    #[arg(long)]
    app_only: bool,
    /// The initial state, a JSON object (default: the folder's `state.json`, when present).
    #[arg(long, value_name = "FILE")]
    state: Option<PathBuf>,
    /// `payload.instance_id` (default: the folder's name, sanitised).
    #[arg(long)]
    instance_id: Option<String>,
    /// `app.id` (default: `com.example.<folder>`).
    #[arg(long)]
    id: Option<String>,
    /// `app.name` (default: the folder's name).
    #[arg(long)]
    name: Option<String>,
    /// `app.version` (default: 0.1.0).
    #[arg(long)]
    version: Option<String>,
    /// `conversation_id` (default: conv-1).
    #[arg(long)]
    conversation: Option<String>,
    /// `sender.id`, of kind agent (default: agent).
    #[arg(long)]
    sender: Option<String>,
    /// Write an app package folder at DIR instead (R-SEC-3a), for a Surface over the inline
    /// limit: `scripts/*.js` become script assets (within the 8 MiB per-package code limit),
    /// `assets/*` media assets; then print the `ui.open` that opens it by id once installed.
    #[arg(long, value_name = "DIR")]
    package: Option<PathBuf>,
    /// With --package: the event names the package's Surface may send, comma-separated (an
    /// installed app's Surface sends only those its manifest lists).
    #[arg(
        long,
        value_name = "NAMES",
        value_delimiter = ',',
        requires = "package"
    )]
    events: Vec<String>,
}

/// Runs `lineup bundle`: a refusal (an unreadable folder, a breakout, an oversize bundle, a bad
/// option value) is one plain line on stderr, `error: …` naming the file and position or the
/// field, the value and the limit, and exit status 1; nothing goes to stdout.
pub(crate) fn run(args: BundleArgs) -> ExitCode {
    match bundle(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // A plain message for the author, not a log line (issue 30 item 12).
            #[allow(clippy::print_stderr)]
            {
                eprintln!("error: {e}");
            }
            ExitCode::FAILURE
        }
    }
}

fn bundle(args: BundleArgs) -> Result<(), Box<dyn std::error::Error>> {
    if let Some(payload) = component::read(&args.folder)? {
        if args.app_only || args.id.is_some() || args.name.is_some() || args.version.is_some() {
            return Err(
                "--app-only, --id, --name and --version are for a Surface's bundle folder; a \
                 standard component has no app"
                    .into(),
            );
        }
        if args.state.is_some() {
            return Err(
                "--state is for a bundle folder; put a component's state in its file".into(),
            );
        }
        let line = component::envelope(payload, &args.folder, &args)?;
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}")?;
        stdout.flush()?;
        return Ok(());
    }
    let folder = BundleFolder::read(&args.folder)?;
    for warning in folder.warnings() {
        // A plain message for the author, as the errors are.
        #[allow(clippy::print_stderr)]
        {
            eprintln!("warning: {warning}");
        }
    }
    let mut options = OpenOptions::for_folder(&folder)?;
    if let Some(id) = args.instance_id {
        options.instance_id = InstanceId::try_from(id)?;
    }
    if let Some(id) = args.id {
        options.app_id = AppId::try_from(id)?;
    }
    if let Some(name) = args.name {
        options.name = Some(name);
    }
    if let Some(version) = args.version {
        options.version = AppVersion::try_from(version.as_str())?;
    }
    if let Some(conversation) = args.conversation {
        options.conversation = ConversationId::try_from(conversation)?;
    }
    if let Some(sender) = args.sender {
        options.sender = PartyId::try_from(sender)?;
    }
    if let Some(state) = &args.state {
        options.state = Some(BundleFolder::read_state(state)?);
    }
    if let Some(out) = &args.package {
        if args.app_only {
            return Err("--app-only prints an inline app; --package writes a package".into());
        }
        let events = args
            .events
            .iter()
            .map(|e| {
                EventName::try_from(e.as_str()).map_err(|err| format!("--events {e:?}: {err}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let written = write_package(&folder, &options, &events, out, &ManifestLimits::default())?;
        #[allow(clippy::print_stderr)]
        {
            for warning in &written.warnings {
                eprintln!("warning: {warning}");
            }
            eprintln!(
                "package {} {} written to {}: digest {}, {} bytes of script assets of {} \
                 (R-SEC-3a); install it with `lineup apps install {} --digest {}`",
                written.package.id().as_str(),
                written.package.version(),
                out.display(),
                written.package.digest(),
                written.package.code_bytes(),
                ManifestLimits::default().max_code_bytes,
                out.display(),
                written.package.digest()
            );
        }
        let line = written.ui_open(&folder, &options)?.to_json();
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{line}")?;
        stdout.flush()?;
        return Ok(());
    }
    let limits = Limits::default();
    let size = folder.check_size(&limits)?;
    tracing::info!(
        "bundle {}: {size} of {} bytes ({:.1}%), integrity {}",
        folder.path().display(),
        limits.max_bundle_bytes,
        size as f64 * 100.0 / limits.max_bundle_bytes as f64,
        folder.integrity()
    );
    let line = if args.app_only {
        serde_json::to_string(&lineup_host_core::SurfaceSource::Inline(
            folder.app(&options),
        ))?
    } else {
        folder.ui_open(&options)?.to_json()
    };
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")?;
    stdout.flush()?;
    Ok(())
}
