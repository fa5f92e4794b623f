//! `lineup kiosk --config kiosk.toml`: one fullscreen, undecorated window on a chosen monitor,
//! Surfaces placed in its fixed regions, a trusted standby screen whenever none is on screen,
//! the pointer hidden when idle, window-manager close requests ignored, and the agent reached
//! over the WebSocket agent link (or, with `--stdio`, over stdin and stdout).

use std::path::PathBuf;
use std::process::ExitCode;
use std::rc::Rc;

use clap::Args;
use lineup_host::platform::CursorHider;
use lineup_host::{kiosk_window, monitors, HostBuilder, HostHandle, StandbyScreen};
use lineup_host_core::{ConversationId, PartyId};

use crate::capabilities::CapabilityArgs;

mod config;
mod config_error;
mod layout;

use config::KioskConfig;
use layout::RegionLayout;

/// `lineup kiosk`'s arguments.
#[derive(Debug, Args)]
pub(crate) struct KioskArgs {
    /// The kiosk's configuration (see `deploy/kiosk.toml` and docs/kiosk.md). Errors name the
    /// file, line, column and key; exit status 2.
    #[arg(long, value_name = "FILE", required_unless_present = "list_monitors")]
    config: Option<PathBuf>,
    /// Check the configuration and exit (0 when valid, 2 when not).
    #[arg(long)]
    check: bool,
    /// Print the monitors the display server reports (index, name, geometry) and exit.
    #[arg(long)]
    list_monitors: bool,
    /// Speak to the agent over stdin and stdout instead of connecting to `[agent] url`: for an
    /// agent process that starts the kiosk itself. `[agent]`'s conversation and agent id still
    /// apply.
    #[arg(long)]
    stdio: bool,
    /// FOR SCRIPTED TESTS ONLY: register `test.count` (`display_only`) and `test.confirm`, as
    /// `lineup host --dangerous-test-capability FILE` does.
    #[arg(long, value_name = "FILE")]
    dangerous_test_capability: Option<PathBuf>,
}

/// Runs `lineup kiosk`; `env_token` is what `main` took out of the environment at start.
pub(crate) fn run(
    args: KioskArgs,
    env_token: Option<Result<lineup_transport::link::Token, String>>,
) -> ExitCode {
    // Before any thread exists (it changes the environment the web processes inherit).
    if lineup_host::platform::skip_absent_a11y_bus() {
        tracing::info!(
            "no accessibility bus (neither AT_SPI_BUS_ADDRESS nor a session bus): web processes \
             do not look for one (WEBKIT_A11Y_BUS_ADDRESS is set empty)"
        );
    }
    let config = match args.config.as_deref().map(KioskConfig::read).transpose() {
        Ok(config) => config,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::from(2);
        }
    };
    if args.check {
        // Everything that would end the kiosk at start is checked here too (the agent link's
        // URL and token file), so a unit never restarts in a loop on a configuration that
        // `--check` passed.
        if let (Some(config), false) = (&config, args.stdio) {
            if let Err(e) = prepare_link(config, env_token) {
                tracing::error!("{e}");
                return ExitCode::from(2);
            }
        }
        if let Some(path) = &args.config {
            tracing::info!("{}: valid", path.display());
        }
        return ExitCode::SUCCESS;
    }
    match kiosk(config, &args, env_token) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn kiosk(
    config: Option<KioskConfig>,
    args: &KioskArgs,
    env_token: Option<Result<lineup_transport::link::Token, String>>,
) -> Result<(), Box<dyn std::error::Error>> {
    let stdio = if args.stdio {
        Some(lineup_transport::StdioLink::take()?)
    } else {
        None
    };
    // Everything that can be refused is checked before a window or web process exists.
    let connect = match (&config, &stdio) {
        (Some(config), None) => Some(prepare_link(config, env_token)?),
        _ => None,
    };
    let event_loop = lineup_host::event_loop()?;
    if args.list_monitors {
        for monitor in monitors(&event_loop) {
            tracing::info!("monitor {monitor}");
        }
        return Ok(());
    }
    let Some(config) = config else {
        return Err("--config is needed".into());
    };
    let (window, monitor) = kiosk_window(&event_loop, &config.monitor, "LineUp kiosk")?;
    tracing::info!("kiosk on monitor {monitor}");
    // The pointer is the system's to hide; a kiosk that cannot still shows its Surfaces.
    let _cursor = CursorHider::start(config.cursor)
        .map_err(|e| tracing::error!("the pointer stays visible: {e}"))
        .ok();

    let mut limits = lineup_host_core::Limits::default();
    limits.max_surfaces = config.host.max_surfaces;
    // Every Surface of a kiosk is on screen in its region: none hibernates.
    limits.max_live_surfaces = config.host.max_surfaces;
    let standby: StandbyScreen = config.standby.clone().status(if stdio.is_some() {
        "Waiting for the agent"
    } else {
        "Connecting to the agent"
    });
    let mut builder = HostBuilder::new()
        .client_id(PartyId::try_from(config.host.client_id.clone())?)
        .limits(limits)
        .conversation_id(ConversationId::try_from(config.agent.conversation.clone())?)
        .child_views_in(Rc::clone(&window))
        .standby(standby)
        .bundle_policy(crate::bundle_policy(&config.host.bundle_policy, &[])?)
        // R-STD-11: a kiosk has no browser to hand a link to; links are inert text.
        .link_policy(lineup_host_core::LinkPolicy::Off);
    if !config.allow_close {
        builder = builder.ignore_parent_close();
    }
    // R-STD-13: the host draws the standard components in the kiosk's regions.
    builder = builder.builtin_components(
        config
            .host
            .standard_components
            .then(lineup_host::ComponentOptions::default),
    );
    let (with_capabilities, _lease) = CapabilityArgs::for_kiosk(
        &config.agent.agent_id,
        config.host.data_dir.clone(),
        args.dangerous_test_capability.clone(),
    )
    .apply(builder)?;
    builder = with_capabilities;
    let delegate = RegionLayout::new(
        config.regions.clone(),
        crate::log::StderrDelegate::default(),
    );
    builder = builder.delegate(delegate);
    match (stdio, connect) {
        (Some(stdio), _) => stdio.run(builder, event_loop),
        (None, Some(link)) => link.run(builder, event_loop),
        (None, None) => Err("--config is needed".into()),
    }
}

/// How long the kiosk waits on `SIGTERM` for the agent link to close its connection.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(3);

/// The agent link of `[agent]`, checked and ready to start once the host is built.
struct Connect {
    config: lineup_transport::link::LinkConfig,
}

/// Checks `[agent]`'s URL and reads its token (`token_file`, else
/// `$CREDENTIALS_DIRECTORY/lineup-agent-token`, else `LINEUP_AGENT_TOKEN`).
fn prepare_link(
    config: &KioskConfig,
    env_token: Option<Result<lineup_transport::link::Token, String>>,
) -> Result<Connect, Box<dyn std::error::Error>> {
    let agent = &config.agent;
    let url =
        lineup_transport::link::check_url(&agent.url).map_err(|e| format!("agent.url: {e}"))?;
    let credentials = std::env::var_os("CREDENTIALS_DIRECTORY").map(PathBuf::from);
    if let Some(path) = &agent.token_file {
        if !path.exists() {
            return Err(format!(
                "agent.token_file: the token file {} does not exist",
                path.display()
            )
            .into());
        }
    }
    let token = lineup_transport::link::token::resolve(
        agent.token_file.as_deref(),
        credentials.as_deref(),
        env_token,
    )
    .map_err(|e| match &agent.token_file {
        Some(_) => format!("agent.token_file: {e}"),
        None => e,
    })?;
    match &token {
        // The kiosk's token file is a configuration key, not `lineup host`'s `--token-file`.
        Some((_, lineup_transport::link::token::Source::File(path))) => {
            tracing::info!("agent token from agent.token_file {}", path.display());
        }
        Some((_, source)) => tracing::info!("agent token from {source}"),
        None => {}
    }
    Ok(Connect {
        config: lineup_transport::link::LinkConfig {
            url,
            token: token.map(|(t, _)| t),
            conversation: ConversationId::try_from(agent.conversation.clone())?,
            agent: Some(PartyId::try_from(agent.agent_id.clone())?),
            grace: agent.grace,
            trusted_roots: agent.trusted_roots.clone(),
            max_message_bytes: lineup_host_core::Limits::default().max_envelope_bytes,
            max_inbound_waiting: 1024,
        },
    })
}

impl Connect {
    /// Builds the host, starts the link, runs until the process ends.
    fn run(
        self,
        builder: HostBuilder,
        event_loop: lineup_host::HostEventLoop,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let Self { mut config } = self;
        // 4096 page events, back-pressure from 1024 answers down to 512.
        let outbound =
            lineup_transport::link::Outbound::new(lineup_transport::OutboundLimits::default());
        let sink = outbound.clone();
        let host = builder
            .on_outbound(move |message| sink.send(message))
            .build(&event_loop)?;
        config.max_message_bytes = host.limits().max_envelope_bytes;
        let handle: HostHandle = host.handle();
        // SIGTERM (systemd stopping the unit): say so, close the agent's connection with 1001
        // (going away), then end; should the link not end the host within a few seconds, the
        // host is ended anyway.
        let (stop, stopping) = tokio::sync::watch::channel(false);
        let ending = handle.clone();
        lineup_host::on_terminate(move |signal| {
            tracing::info!("{signal}: the kiosk is shutting down");
            let _ = stop.send(true);
            let ending = ending.clone();
            let _ = std::thread::Builder::new()
                .name("lineup-shutdown".into())
                .spawn(move || {
                    std::thread::sleep(SHUTDOWN_WAIT);
                    let _ = ending.shutdown();
                });
        })?;
        lineup_transport::link::spawn_stoppable(config, handle, outbound, stopping)?;
        host.run(event_loop)?;
        Ok(())
    }
}
