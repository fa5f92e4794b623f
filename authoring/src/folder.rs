//! A bundle folder: its files read, checked (R-UI-6a) and turned into `ui.open` (R-UI-2a).

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{refused, AuthoringError};
use crate::scripts::JoinedScript;
use crate::source::read_text;

use lineup_host_core::{
    AppId, AppVersion, Breakout, ConversationId, Envelope, InlineApp, InlineBundle, InstanceId,
    Integrity, JsonObject, Limits, Message, MessageId, Party, PartyId, SourcePart, SourcePosition,
    SurfaceSource, UiOpen,
};

/// The files of a bundle folder: the body fragment, the style sheet, the script, the state.
pub const FILES: [&str; 4] = ["index.html", "style.css", "script.js", "state.json"];

/// A bundle folder as read from disk: `index.html` (a body fragment, required), `style.css` and
/// `script.js` (empty when absent), and `state.json` (optional).
#[derive(Clone, PartialEq)]
pub struct BundleFolder {
    path: PathBuf,
    bundle: InlineBundle,
    state: Option<JsonObject>,
    warnings: Vec<String>,
}

impl fmt::Debug for BundleFolder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BundleFolder")
            .field("path", &self.path)
            .field("bundle", &self.bundle)
            .field("state", &self.state.is_some())
            .finish()
    }
}

impl BundleFolder {
    /// Reads and checks the folder at `path`: `index.html` must be a body fragment, not a whole
    /// document, and no breakout sequence may end the style or script element early (R-UI-6a);
    /// `state.json`, when present, must be one JSON object (R-UI-3).
    pub fn read(path: impl AsRef<Path>) -> Result<Self, AuthoringError> {
        let path = path.as_ref().to_path_buf();
        let (bundle, warnings) = Self::read_code(&path)?;
        let state_path = path.join("state.json");
        let state = if state_path.is_file() {
            Some(read_state(&state_path)?)
        } else {
            None
        };
        Ok(Self {
            path,
            bundle,
            state,
            warnings,
        })
    }

    /// A reading made of its parts.
    pub(crate) fn from_parts(
        path: PathBuf,
        bundle: InlineBundle,
        state: Option<JsonObject>,
    ) -> Self {
        Self {
            path,
            bundle,
            state,
            warnings: Vec::new(),
        }
    }

    /// Reads and checks only the code of the folder at `path` (`index.html`, `style.css`,
    /// `script.js`), as [`BundleFolder::read`] does, leaving `state.json` alone: a preview
    /// reloads edited code even while the state file is broken.
    ///
    /// The script is `script.js`, after the library files of `scripts/` (`*.js`, in name order)
    /// when the folder has them: each file is checked on its own and joined with a newline after
    /// it, so a trailing line comment cannot swallow the next file, and errors name the file
    /// and its own line.
    pub fn read_bundle(path: impl AsRef<Path>) -> Result<InlineBundle, AuthoringError> {
        Self::read_code(path.as_ref()).map(|(bundle, _)| bundle)
    }

    /// The checked bundle and the warnings an author should see (a script file ending in a
    /// line comment).
    pub(crate) fn read_code(path: &Path) -> Result<(InlineBundle, Vec<String>), AuthoringError> {
        let html = read_text(&path.join("index.html"), true)?;
        let css = read_text(&path.join("style.css"), false)?;
        let script = JoinedScript::read(path)?;
        check_fragment(&html)?;
        if let Some(found) = Breakout::find(&css, "") {
            return Err(refused(
                format!("style.css:{}:{}", found.at.line, found.at.column),
                found.to_string(),
            ));
        }
        let bundle = InlineBundle::new(html, css, script.text)
            .map_err(|e| refused("bundle", e.to_string()))?;
        Ok((bundle, script.warnings))
    }

    /// What an author should know about the folder that the host does not refuse: a script
    /// file of `scripts/` that ends in a line comment.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The folder's own name, the default of the instance id and the app id's last label.
    pub fn name(&self) -> String {
        self.path
            .canonicalize()
            .unwrap_or_else(|_| self.path.clone())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The checked bundle.
    pub fn bundle(&self) -> &InlineBundle {
        &self.bundle
    }

    /// Its `integrity` (R-UI-2a).
    pub fn integrity(&self) -> Integrity {
        self.bundle.digest()
    }

    /// The state of `state.json`, if the folder has one.
    pub fn state(&self) -> Option<&JsonObject> {
        self.state.as_ref()
    }

    /// Its size against `limits.max_bundle_bytes` (R-UI-2): `Err` names both when it is over.
    pub fn check_size(&self, limits: &Limits) -> Result<usize, AuthoringError> {
        let size = self.bundle.len();
        if size > limits.max_bundle_bytes {
            return Err(refused(
                "bundle",
                format!(
                    "is {size} bytes of html + css + js; the limit is {} bytes (R-UI-2); \
                     libraries over it can ship as script assets of an installed app: \
                     lineup bundle --package DIR (R-SEC-3a)",
                    limits.max_bundle_bytes
                ),
            ));
        }
        Ok(size)
    }

    /// The `app` object of a `ui.open` with this bundle, inline and with its `integrity`.
    pub fn app(&self, options: &OpenOptions) -> InlineApp {
        InlineApp {
            id: options.app_id.clone(),
            name: options.name.clone(),
            version: options.version.clone(),
            integrity: Some(self.integrity()),
            bundle: self.bundle.clone(),
        }
    }

    /// A ready `lineup.v1.ui.open` envelope: the app, and the state of `options` or else of
    /// `state.json`.
    pub fn ui_open(&self, options: &OpenOptions) -> Result<Message, AuthoringError> {
        let id = MessageId::try_from(format!("open-{}", options.instance_id))
            .map_err(|e| refused("--instance-id", e.to_string()))?;
        Ok(Message::UiOpen(Envelope {
            id,
            conversation_id: options.conversation.clone(),
            sender: Party {
                kind: PartyId::try_from("agent").map_err(|e| refused("sender", e.to_string()))?,
                id: options.sender.clone(),
            },
            target: None,
            payload: UiOpen {
                instance_id: options.instance_id.clone(),
                app: SurfaceSource::Inline(self.app(options)),
                state: options.state.clone().or_else(|| self.state.clone()),
            },
        }))
    }
}

/// The rest of a `ui.open`: ids, names and the state.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct OpenOptions {
    /// `payload.instance_id`; by default the folder's name, sanitised.
    pub instance_id: InstanceId,
    /// `app.id`; by default `com.example.<folder>`.
    pub app_id: AppId,
    /// `app.name`; by default the folder's name.
    pub name: Option<String>,
    /// `app.version`; by default `0.1.0`.
    pub version: AppVersion,
    /// `conversation_id`; by default `conv-1`.
    pub conversation: ConversationId,
    /// `sender.id` (of kind `agent`); by default `agent`.
    pub sender: PartyId,
    /// The state, overriding `state.json`.
    pub state: Option<JsonObject>,
}

impl OpenOptions {
    /// The defaults for `folder`.
    pub fn for_folder(folder: &BundleFolder) -> Result<Self, AuthoringError> {
        let name = folder.name();
        let instance = sanitize(&name, |c| c.is_ascii_alphanumeric() || "._:-".contains(c));
        let label = sanitize(&name.to_ascii_lowercase(), |c| {
            c.is_ascii_alphanumeric() || c == '-'
        });
        let option = |what: &str, e: lineup_host_core::InvalidValue| refused(what, e.to_string());
        Ok(Self {
            instance_id: InstanceId::try_from(if instance.is_empty() {
                "surface".to_owned()
            } else {
                instance.chars().take(128).collect()
            })
            .map_err(|e| option("--instance-id", e))?,
            app_id: AppId::try_from(format!(
                "com.example.{}",
                if label.is_empty() { "surface" } else { &label }
            ))
            .map_err(|e| option("--id", e))?,
            name: (!name.is_empty()).then_some(name),
            version: AppVersion::try_from("0.1.0").map_err(|e| option("--version", e))?,
            conversation: ConversationId::try_from("conv-1")
                .map_err(|e| option("--conversation", e))?,
            sender: PartyId::try_from("agent").map_err(|e| option("--sender", e))?,
            state: None,
        })
    }
}

/// `name` with every character `keep` refuses turned into `-`, runs of `-` folded and `-`
/// trimmed from both ends; at most 63 characters.
fn sanitize(name: &str, keep: impl Fn(char) -> bool) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if keep(c) { c } else { '-' };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    out.trim_matches('-')
        .chars()
        .take(63)
        .collect::<String>()
        .trim_end_matches('-')
        .to_owned()
}

/// Reads `path` as one JSON object (R-UI-3).
fn read_state(path: &Path) -> Result<JsonObject, AuthoringError> {
    let text = read_text(path, true)?;
    serde_json::from_str::<JsonObject>(&text).map_err(|e| {
        let at = match e.line() {
            0 => path.display().to_string(),
            line => format!("{}:{line}:{}", path.display(), e.column()),
        };
        refused(at, format!("is not one JSON object: {e} (R-UI-3)"))
    })
}

impl BundleFolder {
    /// Reads the state of `path` (a `--state` file): one JSON object (R-UI-3).
    pub fn read_state(path: impl AsRef<Path>) -> Result<JsonObject, AuthoringError> {
        read_state(path.as_ref())
    }
}

/// R-UI-6a: `index.html` is the body fragment; a whole document (`<!doctype>`, `<html>`,
/// `<head>`, `<body>` first) is refused at its line and column with a hint.
fn check_fragment(html: &str) -> Result<(), AuthoringError> {
    let mut rest = html.trim_start_matches('\u{feff}');
    // Skip white space and comments before the first tag.
    loop {
        let trimmed = rest.trim_start();
        match trimmed
            .strip_prefix("<!--")
            .and_then(|c| c.split_once("-->"))
        {
            Some((_, after)) => rest = after,
            None => {
                rest = trimmed;
                break;
            }
        }
    }
    let lower = rest.get(..9).unwrap_or(rest).to_ascii_lowercase();
    let whole = ["<!doctype", "<html", "<head", "<body"].iter().find(|tag| {
        lower.starts_with(**tag)
            && rest[tag.len()..]
                .chars()
                .next()
                .is_none_or(|c| c.is_whitespace() || c == '>' || c == '/')
    });
    if let Some(tag) = whole {
        let at = SourcePosition::of_offset(SourcePart::Html, html, html.len() - rest.len());
        return Err(refused(
            format!("index.html:{}:{}", at.line, at.column),
            format!(
                "starts with {tag}: index.html is the body fragment, not a whole document \
                 (R-UI-6a); keep what goes inside <body>, move styles to style.css and scripts \
                 to script.js"
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(files: &[(&str, &str)]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "lineup-authoring-{}-{}",
            std::process::id(),
            files.iter().map(|(n, c)| n.len() + c.len()).sum::<usize>()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let dir = dir.join("My Weather!");
        std::fs::create_dir_all(&dir).unwrap();
        for (name, content) in files {
            std::fs::write(dir.join(name), content).unwrap();
        }
        dir
    }

    #[test]
    fn r_ui_6a_a_whole_document_is_refused_with_its_line_and_a_hint() {
        for (html, at) in [
            (
                "<!DOCTYPE html><html><body>x</body></html>",
                "index.html:1:1",
            ),
            ("\n  <!-- c -->\n<HTML lang=en>", "index.html:3:1"),
            ("<body>", "index.html:1:1"),
        ] {
            let err = check_fragment(html).unwrap_err().to_string();
            assert!(
                err.starts_with(at) && err.contains("body fragment"),
                "{html:?}: {err}"
            );
        }
        // Positive control: fragments pass, also ones that merely contain such words.
        for html in [
            "<main>hi</main>",
            "<header>x</header>",
            "<bodyguard/>",
            "",
            "<p>&lt;html&gt;</p>",
        ] {
            assert!(check_fragment(html).is_ok(), "{html:?}");
        }
    }

    #[test]
    fn r_ui_6a_a_breakout_names_file_line_and_column() {
        let dir = folder(&[
            ("index.html", "<p>x</p>"),
            ("script.js", "let a = 1;\nlet s = 'x</SCRIPT>';\n"),
        ]);
        let err = BundleFolder::read(&dir).unwrap_err().to_string();
        assert!(
            err.starts_with("script.js:2:11: contains \"</script\""),
            "{err}"
        );
        let dir = folder(&[
            ("index.html", "<p>y</p>"),
            ("style.css", "a{}\n\n p{content:'</style'}"),
        ]);
        let err = BundleFolder::read(&dir).unwrap_err().to_string();
        assert!(err.starts_with("style.css:3:13:"), "{err}");
    }

    #[test]
    fn r_ui_2a_the_open_carries_the_bundle_its_integrity_and_the_folder_state() {
        let dir = folder(&[
            ("index.html", "<button id=b>Hi</button>"),
            ("script.js", "b.onclick=()=>LineUpSurface.event('hi',{})"),
            ("state.json", "{\"city\":\"北京\"}"),
        ]);
        let folder = BundleFolder::read(&dir).unwrap();
        let options = OpenOptions::for_folder(&folder).unwrap();
        assert_eq!(options.instance_id.as_str(), "My-Weather");
        assert_eq!(options.app_id.as_str(), "com.example.my-weather");
        let json = folder.ui_open(&options).unwrap().to_json();
        let decoded = lineup_host_core::decode(json.as_bytes(), &Limits::default()).unwrap();
        let Message::UiOpen(env) = decoded else {
            panic!("{json}")
        };
        let SurfaceSource::Inline(app) = &env.payload.app else {
            panic!("{json}")
        };
        assert_eq!(app.integrity, Some(app.bundle.digest()));
        assert_eq!(app.bundle.css(), "");
        assert_eq!(env.payload.state.unwrap().to_json(), "{\"city\":\"北京\"}");
        // A bad state file names itself and the position.
        let bad = dir.join("bad.json");
        std::fs::write(&bad, "[1]").unwrap();
        let err = BundleFolder::read_state(&bad).unwrap_err().to_string();
        assert!(err.contains("bad.json") && err.contains("R-UI-3"), "{err}");
        std::fs::write(&bad, "{\"a\":").unwrap();
        let err = BundleFolder::read_state(&bad).unwrap_err().to_string();
        assert!(err.contains("bad.json:1:"), "{err}");
    }
}
