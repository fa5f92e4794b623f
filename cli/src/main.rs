//! The `lineup` command: thin commands over the lineup-host library.
//!
//! `lineup host --stdio` lets an agent in any language drive the host: one `lineup.v1` envelope
//! per line on stdin (agent → client), one per line on stdout (client → agent), logs on stderr.
//! `lineup host --connect wss://…` connects out to the agent instead, one envelope per
//! WebSocket text frame, and reconnects when the connection drops (`link/`).
//! One host serves many conversations: each `conversation_id` gets a session of its own, with
//! its own Surfaces, instance ids, inventory and calls (R-SES-1).
//! `lineup grants` and `lineup audit` inspect a host's data directory (lineup-store).
//! `lineup bundle` and `lineup preview` are for Surface authors; `lineup mcp` for MCP App
//! authors (an MCP client, which the library crates do not hold: R-MCP-1, R-MCP-2).

use std::process::ExitCode;
use std::time::Duration;

use clap::{ArgGroup, Args, Parser, Subcommand};
use lineup_host::HostBuilder;
use lineup_host_core::{BundlePolicy, ConversationId, PartyId};
use lineup_transport::{OutboundLimits, StdioLink};

mod apps;
mod audit;
mod bundle;
mod capabilities;
mod data;
mod engine;
mod fetch;
mod grants;
mod kiosk;
mod log;
mod look;
mod mcp;
mod policy;
mod preview;

/// Show LineUp UI Surfaces in isolated webviews.
#[derive(Debug, Parser)]
#[command(name = "lineup", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Host Surfaces for an agent that speaks lineup.v1 over stdio or a WebSocket.
    Host(HostArgs),
    /// List or revoke remembered consent ("always") in a host's data directory.
    Grants(grants::GrantsArgs),
    /// Withdraw capabilities from every agent or hide them from one; running hosts follow.
    Capabilities(policy::PolicyArgs),
    /// Verify or export the audit log of a host's data directory.
    Audit(audit::AuditArgs),
    /// Print a bundle folder as a ready ui.open envelope (or app object), integrity computed.
    Bundle(bundle::BundleArgs),
    /// Show a bundle folder (or bundle JSON) in the real sandbox, reloading as you edit; or
    /// check it and take a screenshot for CI.
    Preview(preview::PreviewArgs),
    /// App packages and the local app center: install, upgrade, rollback, enable, disable,
    /// remove, forget, list; signing keys, signatures and checks.
    Apps(apps::AppsArgs),
    /// Run a kiosk: one fullscreen window on a chosen monitor, Surfaces in fixed regions, a
    /// standby screen while none is on screen, the agent reached over a WebSocket.
    Kiosk(kiosk::KioskArgs),
    /// Run an MCP Apps server over stdio (`lineup mcp -- node dist/index.js --stdio`): list its
    /// tools, call one, read a tool's view, or show the view and relay its requests.
    Mcp(mcp::McpArgs),
}

#[derive(Debug, Args)]
#[command(group(ArgGroup::new("transport").required(true).args(["stdio", "connect"])))]
struct HostArgs {
    /// Read envelopes from stdin and write envelopes to stdout, one per line.
    #[arg(long)]
    stdio: bool,
    /// With --stdio: at end of input keep the host up until the last Surface closes (the user
    /// closes its window, the page or the agent closes it), then exit; at once when none is
    /// open. Without it, end of input closes every Surface and the host exits. For
    /// `lineup bundle hello | lineup host --stdio --until-closed`.
    #[arg(long, requires = "stdio")]
    until_closed: bool,
    /// Connect out to the agent at this WebSocket URL and speak lineup.v1 over it, one envelope
    /// per text frame; reconnect when the connection drops (backoff with full jitter, 1 s
    /// doubling to 60 s). `wss://` (TLS: the system's roots, or --trusted-roots), or `ws://`
    /// only to a loopback host. Needs --conversation and --agent-id: the session exists from
    /// the start and each connection begins with its `client.inventory` (with App Capabilities
    /// on). The token is read from --token-file, `$CREDENTIALS_DIRECTORY/lineup-agent-token`
    /// or the environment variable LINEUP_AGENT_TOKEN (removed from the environment at start,
    /// so web processes never see it), never from the command line; sent as `Authorization:
    /// Bearer`, never logged.
    #[arg(long, value_name = "URL", requires_all = ["conversation", "agent_id"])]
    connect: Option<String>,
    /// With --connect: read the agent's bearer token from this file, which must not be readable
    /// or writable by group or others (mode 0600 or stricter).
    #[arg(long, value_name = "PATH", requires = "connect")]
    token_file: Option<std::path::PathBuf>,
    /// With --connect: how long open Surfaces stay on screen and patchable while the agent is
    /// away; then they close and the agent hears `ui.event` `close` with reason `agent_gone`
    /// after its next `client.inventory` (R-UI-12). A reconnect within it cancels it.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..), requires = "connect")]
    grace_secs: u64,
    /// With --connect: a PEM file of CA certificates that replaces the system's roots for the
    /// agent's TLS certificate.
    #[arg(long, value_name = "PEM", requires = "connect")]
    trusted_roots: Option<std::path::PathBuf>,
    /// The client id written as `sender.id` of every outbound envelope.
    #[arg(long, default_value = "lineup-host")]
    client_id: String,
    /// How many Surfaces may be open at once, in one conversation and over all of them.
    #[arg(long, default_value_t = 256)]
    max_surfaces: usize,
    /// How many Surfaces may have a web process at once; in windows of their own nothing
    /// hibernates, so one more open is refused `too_many_live_surfaces`.
    #[arg(long, default_value_t = 16)]
    max_live_surfaces: usize,
    /// How many blank, isolated webviews to keep started for the next Surfaces (0: none). Each
    /// costs a web process (about 70–80 MiB) while it waits, and makes an open about 5× faster.
    #[arg(long, default_value_t = 1)]
    warm_pool: usize,
    /// Render the standard components (the v1 catalog: markdown, text, status, progress,
    /// alert, confirm, choice, input, form) in trusted windows of the host's own, and list them
    /// in `client.inventory` (R-STD-1, R-STD-14). On by default; accepted for scripts that
    /// pass it.
    #[arg(long, conflicts_with = "no_builtin_components")]
    builtin_components: bool,
    /// Render no standard component and list none in `client.inventory`: a `ui.open` of one is
    /// answered `unsupported`.
    #[arg(long)]
    no_builtin_components: bool,
    /// Show no MCP App view (R-MCP-13): `client.inventory` lists no `mcp_apps`, and every
    /// `ui.open` with `mcp_app` and every `mcp.*` envelope is answered `unsupported`. Without
    /// it, views are shown, each in its own webview under every Surface rule.
    #[arg(long)]
    no_mcp_apps: bool,
    /// Open a session for this conversation at start (with capabilities on, its
    /// `client.inventory` is written at once). Other conversations still get a session each
    /// when an accepted envelope names them (R-SES-1).
    #[arg(long, value_name = "ID")]
    conversation: Option<String>,
    /// How many conversations may have a session at once; an envelope naming one more is
    /// refused `too_many_sessions`.
    #[arg(long, default_value_t = 64)]
    max_sessions: usize,
    /// End a conversation's session after this many seconds without an accepted envelope, an
    /// open Surface or standard component, or a pending call (its calls waiting for consent are cancelled); a later
    /// envelope of it starts a new session. All sessions end at end of input.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..))]
    session_idle_secs: u64,
    /// How many page events (`ui.event` other than the user's `close`) may wait for a slow
    /// reader of stdout (with --connect: for the agent's connection; while it is away, page
    /// events are dropped and counted, answers kept); the newest beyond it is dropped, counted per Surface and reported with
    /// one `client.error` `events_dropped` per Surface once the reader has caught up. Answers
    /// (`client.error`, `app.result`, `client.inventory`, `app.list`, the user's `close`) are
    /// never dropped.
    #[arg(long, default_value_t = 4096)]
    outbound_queue: usize,
    /// How many answers may wait for a slow reader of stdout before the host stops reading stdin
    /// (with --connect: for the agent's connection before it stops reading its frames);
    /// it reads again once fewer than half as many wait. Answers made without input (user closes,
    /// drop reports) can pass it, by about one per Surface.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    max_waiting_answers: u32,
    /// Which bundles are opened (R-SEC-7): `allow` (inline bundles, `integrity` checked when
    /// present), `require-integrity` (inline bundles must carry a matching `integrity`),
    /// `allowlist` (inline bundles only with a digest given by --allow-digest), `signed-only`
    /// (no inline bundles; installed apps installed with a trusted signature), `app-center-only`
    /// (no inline bundles; installed apps). A mismatching `integrity` is always refused.
    #[arg(long, value_name = "POLICY", default_value = "allow", value_parser = ["allow", "require-integrity", "allowlist", "signed-only", "app-center-only"])]
    bundle_policy: String,
    /// With `--bundle-policy allowlist`: a bundle digest (sha256-<base64>, as `lineup bundle`
    /// prints it) that may be opened inline; repeatable.
    #[arg(long, value_name = "DIGEST")]
    allow_digest: Vec<String>,
    /// The web engine: `webkit` (this binary's) or `servo`, which runs `lineup-servo host
    /// --stdio` (built by `scripts/servo.sh`), each Surface in a window of its own. Servo's
    /// isolation is weaker (one process and one storage profile for every Surface, no process
    /// sandbox: see FEATURES.md), so it needs --dangerous-weaker-isolation; it takes --stdio
    /// only, and none of the App Capability flags (their records live in the store, which
    /// lineup-servo cannot link), --warm-pool or the look flags.
    #[arg(long, value_enum, default_value_t = engine::Engine::Webkit)]
    engine: engine::Engine,
    /// With --engine servo: the caller accepts Servo's weaker isolation.
    #[arg(long)]
    dangerous_weaker_isolation: bool,
    #[command(flatten)]
    capabilities: capabilities::CapabilityArgs,
    #[command(flatten)]
    look: look::LookArgs,
}

impl HostArgs {
    /// The flags `lineup-servo host` takes, or which one it does not.
    fn servo_flags(&self) -> Result<Vec<std::ffi::OsString>, String> {
        if !self.dangerous_weaker_isolation {
            return Err(
                "--engine servo needs --dangerous-weaker-isolation: Servo shows every \
                        Surface in one process with one storage profile and no process sandbox"
                    .to_owned(),
            );
        }
        let refused = [
            (self.connect.is_some(), "--connect"),
            (self.capabilities.any(), "the App Capability flags"),
            (self.warm_pool != 1, "--warm-pool"),
            (!self.look.is_default(), "the look flags"),
            (self.bundle_policy != "allow", "--bundle-policy"),
        ];
        if let Some((_, flag)) = refused.iter().find(|(set, _)| *set) {
            return Err(format!("not available with --engine servo: {flag}"));
        }
        let mut flags: Vec<std::ffi::OsString> = vec![
            "--client-id".into(),
            self.client_id.clone().into(),
            "--max-surfaces".into(),
            self.max_surfaces.to_string().into(),
            "--max-live-surfaces".into(),
            self.max_live_surfaces.to_string().into(),
            "--max-sessions".into(),
            self.max_sessions.to_string().into(),
            "--session-idle-secs".into(),
            self.session_idle_secs.to_string().into(),
        ];
        if let Some(conversation) = &self.conversation {
            flags.extend(["--conversation".into(), conversation.clone().into()]);
        }
        if self.until_closed {
            flags.push("--until-closed".into());
        }
        if !self.no_builtin_components {
            flags.push("--builtin-components".into());
        }
        Ok(flags)
    }
}

/// `--bundle-policy` and `--allow-digest` as a [`BundlePolicy`].
pub(crate) fn bundle_policy(name: &str, digests: &[String]) -> Result<BundlePolicy, String> {
    if !digests.is_empty() && name != "allowlist" {
        return Err(format!(
            "--allow-digest is for --bundle-policy allowlist, not {name}"
        ));
    }
    Ok(match name {
        "require-integrity" => BundlePolicy::RequireIntegrity,
        "allowlist" => BundlePolicy::Allowlist(
            digests
                .iter()
                .map(|d| {
                    lineup_host_core::Integrity::try_from(d.as_str())
                        .map_err(|e| format!("--allow-digest {d}: {e}"))
                })
                .collect::<Result<_, _>>()?,
        ),
        "signed-only" => BundlePolicy::SignedOnly,
        "app-center-only" => BundlePolicy::AppCenterOnly,
        _ => BundlePolicy::SandboxOnly,
    })
}

fn main() -> ExitCode {
    // First of all, before logging or any thread starts: the token leaves the environment, which
    // web processes inherit (link/token.rs).
    let env_token = lineup_transport::link::token::take_env_token();
    log::init();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Host(args) if args.engine == engine::Engine::Servo => {
            return match args.servo_flags() {
                Ok(flags) => match engine::servo_host(flags) {
                    Ok(code) => ExitCode::from(code),
                    Err(e) => {
                        tracing::error!("{e}");
                        ExitCode::FAILURE
                    }
                },
                Err(e) => {
                    tracing::error!("{e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Host(args) if args.connect.is_some() => host_connect(args, env_token),
        Command::Host(args) => host_stdio(args),
        Command::Grants(args) => {
            return grants::run(args).map_or_else(data::Failure::report, |()| ExitCode::SUCCESS)
        }
        Command::Audit(args) => {
            return audit::run(args).map_or_else(data::Failure::report, |()| ExitCode::SUCCESS)
        }
        Command::Capabilities(args) => {
            return policy::run(args).map_or_else(data::Failure::report, |()| ExitCode::SUCCESS)
        }
        Command::Bundle(args) => return bundle::run(args),
        Command::Preview(args) => return preview::run(args),
        Command::Apps(args) => return apps::run(args),
        Command::Kiosk(args) => return kiosk::run(args, env_token),
        Command::Mcp(args) => return mcp::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// What `--stdio` and `--connect` set up alike: the builder from the flags, and the process's
/// lease in the data directory, to keep until the host has ended.
fn host_builder(
    args: &HostArgs,
) -> Result<(HostBuilder, Option<lineup_store::HostLease>), Box<dyn std::error::Error>> {
    let client_id = PartyId::try_from(args.client_id.as_str())?;
    let mut limits = lineup_host_core::Limits::default();
    limits.max_surfaces = args.max_surfaces;
    limits.max_live_surfaces = args.max_live_surfaces;
    limits.max_sessions = args.max_sessions;
    let mut builder = HostBuilder::new()
        .client_id(client_id)
        .limits(limits)
        .end_idle_sessions_after(Duration::from_secs(args.session_idle_secs))
        .warm_pool(args.warm_pool);
    if args.no_builtin_components {
        builder = builder.builtin_components(None);
    }
    if args.no_mcp_apps {
        builder = builder.mcp_apps(None);
    }
    builder = args.look.apply(builder);
    if let Some(conversation) = &args.conversation {
        builder = builder.conversation_id(ConversationId::try_from(conversation.as_str())?);
    }
    builder = builder.bundle_policy(bundle_policy(&args.bundle_policy, &args.allow_digest)?);
    Ok(args.capabilities.apply(builder)?)
}

/// The outbound queue's bounds from `--outbound-queue` and `--max-waiting-answers`, for both
/// links: back-pressure releases at half the answers' mark.
fn outbound_limits(args: &HostArgs) -> OutboundLimits {
    let mut limits = OutboundLimits::default();
    limits.max_waiting_events = args.outbound_queue;
    limits.answers_high_water = args.max_waiting_answers as usize;
    limits.answers_low_water = (args.max_waiting_answers as usize / 2).max(1);
    limits
}

fn host_stdio(args: HostArgs) -> Result<(), Box<dyn std::error::Error>> {
    // Before any web process exists: only the protocol writer may reach the real stdout.
    let link = StdioLink::take_with(outbound_limits(&args))?;
    let link = link.until_closed(args.until_closed);
    let (builder, _lease) = host_builder(&args)?;
    let event_loop = lineup_host::event_loop()?;
    link.run(builder.delegate(log::StderrDelegate::default()), event_loop)
}

/// `lineup host --connect URL`: the host with the agent link (`link/`) instead of stdio.
/// Everything that can be refused at start (the URL, the token, the TLS roots) is checked
/// before the event loop or any web process starts.
fn host_connect(
    args: HostArgs,
    env_token: Option<Result<lineup_transport::link::Token, String>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let url = lineup_transport::link::check_url(args.connect.as_deref().unwrap_or_default())?;
    let credentials = std::env::var_os("CREDENTIALS_DIRECTORY").map(std::path::PathBuf::from);
    let token = lineup_transport::link::token::resolve(
        args.token_file.as_deref(),
        credentials.as_deref(),
        env_token,
    )?;
    if let Some((_, source)) = &token {
        tracing::info!("agent token from {source}");
    }
    let (Some(conversation), Some(agent)) = (&args.conversation, args.capabilities.agent_id())
    else {
        return Err("--connect needs --conversation and --agent-id".into());
    };
    let conversation = ConversationId::try_from(conversation.as_str())?;
    let agent = PartyId::try_from(agent)?;
    let (builder, _lease) = host_builder(&args)?;
    let event_loop = lineup_host::event_loop()?;
    let outbound = lineup_transport::link::Outbound::new(outbound_limits(&args));
    let sink = outbound.clone();
    let host = builder
        .on_outbound(move |message| sink.send(message))
        .delegate(log::StderrDelegate::default())
        .build(&event_loop)?;
    let config = lineup_transport::link::LinkConfig {
        url,
        token: token.map(|(t, _)| t),
        conversation,
        agent: Some(agent),
        grace: Duration::from_secs(args.grace_secs),
        trusted_roots: args.trusted_roots.clone(),
        max_message_bytes: host.limits().max_envelope_bytes,
        max_inbound_waiting: args.max_waiting_answers as usize,
    };
    lineup_transport::link::spawn(config, host.handle(), outbound)?;
    host.run(event_loop)?;
    Ok(())
}
