//! The `lineup host` flags that turn App Capabilities on: the vouched agent, where records are
//! kept, which built-in capabilities are enabled, and, for scripted tests only, automatic
//! consent and counting test capabilities.

use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};
use lineup_host::{Builtin, HostBuilder, PendingConsent};
use lineup_host_core::{
    Capability, CapabilityName, HandlerError, JsonObject, OpaqueVersion, PartyId, Risk,
};

use lineup_store::HostLease;

/// How prompts are answered under `--dangerous-auto-consent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AutoConsent {
    /// Every prompt is answered "allow" (once).
    Allow,
    /// Every prompt is answered "deny".
    Deny,
    /// Every prompt is answered "allow always" where it offers that (`user_confirmation`):
    /// the grant is remembered for the vouched agent, or without `--agent-id` for the
    /// conversation only. A prompt that does not offer it is answered "allow" (once).
    AllowAlways,
}

/// App Capability flags of `lineup host`.
#[derive(Debug, Args)]
pub(crate) struct CapabilityArgs {
    /// The agent this host vouches for (R-SES-1): an envelope whose `sender.id` is another is
    /// refused `wrong_sender`, and remembered grants belong to this identity. Without it,
    /// "always" lasts one conversation.
    #[arg(long, value_name = "ID")]
    agent_id: Option<String>,
    /// Turn App Capabilities on: the session gets `client.inventory` and `app.list` first, and
    /// `app.call` goes through consent. On when any capability flag is given.
    #[arg(long)]
    capabilities: bool,
    /// Where call records, remembered grants, the audit, revisions and the app center
    /// (`lineup apps`) are kept (SQLite; created on first use). Default: `$XDG_DATA_HOME/lineup`,
    /// else `~/.local/share/lineup`. Several hosts may share one. Its enabled apps are listed
    /// in `client.inventory` and opened by `ui.open` with `app: {id, surface}`.
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// Enable built-in capabilities, a comma-separated list (none by default): `app.open_url`
    /// (open an http or https link in the default browser), `clipboard.write` (put text on the
    /// clipboard), `device.pick_file` (the user picks a file in a file chooser; its name, size,
    /// type and content, at most 1 MiB, go to the agent, never its path), `artifact.save` (the
    /// user saves a file the agent made through a save dialog). Each runs only after the user
    /// allowed it; `device.pick_file` asks every time. Turns App Capabilities on.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = parse_builtin)]
    enable: Vec<Builtin>,
    /// FOR SCRIPTED TESTS ONLY: answer every consent prompt automatically instead of asking
    /// the user: `allow` (once), `deny`, or `allow-always` ("always" where the prompt offers
    /// it, else once). Never use it with a real agent.
    #[arg(long, value_enum, value_name = "ANSWER")]
    dangerous_auto_consent: Option<AutoConsent>,
    /// FOR SCRIPTED TESTS ONLY: register `test.count` (`display_only`) and `test.confirm`
    /// (`user_confirmation`, so it runs only after consent), whose handler appends its `tag`
    /// argument as one line to FILE, then sleeps `sleep_ms` (at most 10 000): capabilities
    /// whose runs can be counted outside the host.
    #[arg(long, value_name = "FILE")]
    dangerous_test_capability: Option<PathBuf>,
    /// The per-package code limit of the app center's apps: all script assets (.js, .mjs) of
    /// one package together, in bytes (R-SEC-3a) [default: 8388608, 8 MiB]. An installed app
    /// over it is refused at start and at open; a package cannot raise it.
    #[arg(long, value_name = "BYTES")]
    max_package_code: Option<u64>,
}

impl CapabilityArgs {
    /// Whether any App Capability flag was given.
    pub(crate) fn any(&self) -> bool {
        self.agent_id.is_some()
            || self.capabilities
            || self.data_dir.is_some()
            || !self.enable.is_empty()
            || self.dangerous_auto_consent.is_some()
            || self.dangerous_test_capability.is_some()
    }

    /// A kiosk's: capabilities on, the vouched `agent`, records and apps in `data_dir` (or the
    /// default data directory), no built-ins.
    pub(crate) fn for_kiosk(
        agent: &str,
        data_dir: Option<PathBuf>,
        dangerous_test_capability: Option<PathBuf>,
    ) -> Self {
        Self {
            agent_id: Some(agent.to_owned()),
            capabilities: true,
            data_dir,
            enable: Vec::new(),
            dangerous_auto_consent: None,
            dangerous_test_capability,
            max_package_code: None,
        }
    }

    /// `--agent-id`, as given.
    pub(crate) fn agent_id(&self) -> Option<&str> {
        self.agent_id.as_deref()
    }

    /// Applies the flags to `builder`. With a data directory, the returned lease names this
    /// process; keep it until the host has ended (dropping it deletes the grants of the
    /// unvouched sessions, R-SES-1).
    pub(crate) fn apply(
        &self,
        mut builder: HostBuilder,
    ) -> Result<(HostBuilder, Option<HostLease>), String> {
        if let Some(agent) = &self.agent_id {
            let agent =
                PartyId::try_from(agent.as_str()).map_err(|e| format!("--agent-id: {e}"))?;
            builder = builder.vouched_agent(agent);
        }
        let on = self.capabilities
            || self.data_dir.is_some()
            || !self.enable.is_empty()
            || self.dangerous_auto_consent.is_some()
            || self.dangerous_test_capability.is_some();
        let (dir, store) = if on {
            let dir = match &self.data_dir {
                Some(dir) => dir.clone(),
                None => lineup_store::default_data_dir().map_err(|e| format!("data dir: {e}"))?,
            };
            let store = lineup_store::Store::open(&dir)
                .map_err(|e| format!("cannot open the data dir {}: {e}", dir.display()))?;
            (dir, store)
        } else {
            // R-INV-1, R-UI-9: the app center is there whenever a data directory is; a plain
            // host opens the default one if it exists and never creates it.
            let Some(dir) = lineup_store::default_data_dir()
                .ok()
                .filter(|dir| dir.join(lineup_store::DB_FILE).is_file())
            else {
                tracing::info!("no data directory: no app center; App Capabilities off");
                return Ok((builder, None));
            };
            let store = lineup_store::Store::open_existing(&dir)
                .map_err(|e| format!("cannot open the data dir {}: {e}", dir.display()))?;
            (dir, store)
        };
        tracing::info!("capability records and apps in {}", dir.display());
        // R-SES-1: the "always" of unvouched sessions is kept in the store under this
        // process's lease, listed and revocable by `lineup grants`, deleted when it ends.
        let lease = HostLease::take(&dir, &store)
            .map_err(|e| format!("the data dir {}: {e}", dir.display()))?;
        builder = builder
            .unvouched_grants_scope(lease.scope())
            .capability_store(store.with_host_lease(&lease));
        if on {
            builder = builder.enable_capabilities();
        }
        // R-UI-9: the data dir's app center, on its own connection; checked once at start.
        let mut limits = lineup_packages::ManifestLimits::default();
        if let Some(bytes) = self.max_package_code {
            limits.max_code_bytes = bytes;
        }
        let apps = lineup_store::Store::open_existing(&dir)
            .map_err(|e| format!("cannot open the data dir {}: {e}", dir.display()))?
            .with_manifest_limits(limits);
        match apps.apps().verify() {
            Ok(failed) => {
                for (id, version, error) in failed {
                    tracing::error!(
                        "app {id} {version} is refused until reinstalled: {error} (R-SEC-7)"
                    );
                }
            }
            Err(e) => tracing::error!("the app center cannot be read: {e}"),
        }
        builder = builder.app_center(std::rc::Rc::new(apps));
        // The operator's policy (`lineup capabilities`), on a connection of its own.
        let policy = lineup_store::Store::open_existing(&dir)
            .map_err(|e| format!("cannot open the data dir {}: {e}", dir.display()))?;
        builder = builder.capability_policy(std::rc::Rc::new(policy));
        // R-STD-15: the standard components of vouched sessions, kept for a restart, on a
        // connection of their own.
        let records = lineup_store::Store::open_existing(&dir)
            .map_err(|e| format!("cannot open the data dir {}: {e}", dir.display()))?;
        builder = builder.component_store(records);
        if !self.enable.is_empty() {
            tracing::info!(
                "built-in capabilities: {}",
                self.enable
                    .iter()
                    .map(|b| b.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            builder = builder.builtins(&self.enable);
        }
        if let Some(answer) = self.dangerous_auto_consent {
            let named = match answer {
                AutoConsent::Allow => "allow",
                AutoConsent::Deny => "deny",
                AutoConsent::AllowAlways => "allow-always",
            };
            tracing::warn!("--dangerous-auto-consent {named}: no user is asked");
            builder = builder.consent_prompt(move |pending: PendingConsent| match answer {
                AutoConsent::Allow => pending.allow(),
                AutoConsent::Deny => pending.deny(),
                AutoConsent::AllowAlways => {
                    if let Err(refused) = pending.allow_always() {
                        refused.into_pending().allow();
                    }
                }
            });
        }
        if let Some(file) = &self.dangerous_test_capability {
            tracing::warn!("--dangerous-test-capability: test.count and test.confirm registered");
            builder = builder
                .capability(
                    test_capability("test.count", Risk::DisplayOnly)?,
                    counting(file.clone()),
                )
                .capability(
                    test_capability("test.confirm", Risk::UserConfirmation)?,
                    counting(file.clone()),
                );
        }
        Ok((builder, Some(lease)))
    }
}

/// `--enable`'s values: a built-in's name; an unknown one is refused with the list of known ones.
fn parse_builtin(name: &str) -> Result<Builtin, String> {
    name.trim().parse::<Builtin>().map_err(|e| e.to_string())
}

/// A test capability `name` at `risk`, taking `{tag, sleep_ms}`.
fn test_capability(name: &str, risk: Risk) -> Result<Capability, String> {
    let schema: JsonObject = serde_json::from_str(
        r#"{"type":"object","required":["tag"],"properties":{
            "tag":{"type":"string","maxLength":128},
            "sleep_ms":{"type":"integer","minimum":0,"maximum":10000}}}"#,
    )
    .map_err(|e| e.to_string())?;
    let name = CapabilityName::try_from(name).map_err(|e| e.to_string())?;
    let version = OpaqueVersion::try_from("1").map_err(|e| e.to_string())?;
    Capability::new(name, version, risk, schema).map_err(|e| e.to_string())
}

/// Appends the `tag` to `file` (flushed to disk before it returns), then sleeps.
fn counting(file: PathBuf) -> impl Fn(JsonObject) -> Result<JsonObject, HandlerError> {
    move |arguments: JsonObject| {
        let map = arguments.as_map();
        let tag = map.get("tag").and_then(|t| t.as_str()).unwrap_or_default();
        let sleep = map
            .get("sleep_ms")
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        let mut out = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .map_err(|e| HandlerError::new(format!("cannot open the count file: {e}")))?;
        // One write of the whole line: handlers run at once on their own threads, and O_APPEND
        // keeps a single small write whole, where `writeln!` may split it in two.
        out.write_all(format!("{tag}\n").as_bytes())
            .and_then(|()| out.sync_all())
            .map_err(|e| HandlerError::new(format!("cannot write the count file: {e}")))?;
        std::thread::sleep(Duration::from_millis(sleep.min(10_000)));
        let mut result = serde_json::Map::new();
        result.insert("tag".into(), serde_json::Value::String(tag.to_owned()));
        Ok(JsonObject::from(result))
    }
}
