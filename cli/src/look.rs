//! `--theme` and `--contrast` of `lineup host` and `lineup preview`: the colour scheme and
//! contrast Surfaces see (R-UI-11).

use clap::{Args, ValueEnum};
use lineup_host::{Contrast, HostBuilder, Theme};

/// The colour scheme and contrast Surfaces see (R-UI-11).
#[derive(Debug, Clone, Args)]
pub(crate) struct LookArgs {
    /// The colour scheme Surfaces see as `prefers-color-scheme` and in the `--lineup-color-*`
    /// properties: light, dark, or system (the desktop's; an inverse high-contrast desktop
    /// theme such as GTK's HighContrastInverse is dark).
    #[arg(long, value_enum, value_name = "SCHEME", default_value_t = ThemeArg::System)]
    theme: ThemeArg,
    /// Whether Surfaces get the high-contrast values of the `--lineup-*` properties and
    /// `data-lineup-contrast="more"` on their root element: more, normal, or system (high when
    /// the desktop's GTK theme is a high-contrast one), read as each Surface opens.
    #[arg(long, value_enum, value_name = "CONTRAST", default_value_t = ContrastArg::System)]
    contrast: ContrastArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ThemeArg {
    Light,
    Dark,
    System,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ContrastArg {
    More,
    Normal,
    System,
}

impl LookArgs {
    /// Whether neither flag was given (the desktop's scheme and contrast).
    pub(crate) fn is_default(&self) -> bool {
        self.theme == ThemeArg::System && self.contrast == ContrastArg::System
    }

    /// Sets the process's colour scheme as asked (R-UI-11) and returns whether the high-contrast
    /// values apply, for a window the host makes itself (a component's preview).
    pub(crate) fn apply_to_process(&self) -> bool {
        lineup_host::apply_theme(match self.theme {
            ThemeArg::Light => Theme::Light,
            ThemeArg::Dark => Theme::Dark,
            ThemeArg::System => Theme::System,
        });
        match self.contrast {
            ContrastArg::More => true,
            ContrastArg::Normal => false,
            ContrastArg::System => lineup_host::desktop_high_contrast(),
        }
    }

    /// `builder` with the theme and contrast asked for.
    pub(crate) fn apply(&self, builder: HostBuilder) -> HostBuilder {
        let theme = match self.theme {
            ThemeArg::Light => Theme::Light,
            ThemeArg::Dark => Theme::Dark,
            ThemeArg::System => Theme::System,
        };
        let contrast = match self.contrast {
            ContrastArg::More => Contrast::High,
            ContrastArg::Normal => Contrast::Normal,
            ContrastArg::System => Contrast::System,
        };
        builder.theme(theme).contrast(contrast)
    }
}
