//! R-UI-11 on Linux: the colour scheme WebKit's pages see, and whether the desktop asks for high
//! contrast.

use gtk::prelude::*;

use crate::config::Theme;

/// R-UI-11: WebKitGTK's `prefers-color-scheme` follows GTK's process-wide dark-theme
/// preference; [`Theme::System`] leaves it alone, except under an inverse high-contrast desktop
/// theme (`HighContrastInverse`), which is dark although WebKit would read it as light: then it
/// asks for dark, so Surfaces get the dark high-contrast values. WebKit views follow a change
/// live.
///
/// Before GTK is initialised (before the first event loop is made) it does nothing.
pub fn apply_theme(theme: Theme) {
    if !gtk::is_initialized() {
        return;
    }
    let dark = match theme {
        Theme::Dark => true,
        Theme::Light => false,
        _ if desktop_inverse_contrast() => true,
        _ => return,
    };
    if let Some(settings) = gtk::Settings::default() {
        settings.set_gtk_application_prefer_dark_theme(dark);
    }
}

/// R-UI-11, R-MCP-8: whether pages see `prefers-color-scheme: dark` under `theme`: as asked,
/// or for [`Theme::System`] GTK's dark-theme preference, a dark GTK theme (`…-dark`, or
/// `:dark` in `GTK_THEME`) or an inverse high-contrast one. What an MCP App view's
/// `hostContext.theme` says.
pub fn theme_is_dark(theme: Theme) -> bool {
    match theme {
        Theme::Dark => true,
        Theme::Light => false,
        _ => {
            let preferred = gtk::is_initialized()
                && gtk::Settings::default()
                    .is_some_and(|settings| settings.is_gtk_application_prefer_dark_theme());
            preferred
                || desktop_inverse_contrast()
                || desktop_theme_is(|name| name.ends_with("-dark") || name.ends_with(":dark"))
        }
    }
}

/// R-UI-11: whether the desktop asks for high contrast: GTK's theme (or `GTK_THEME`) is a
/// high-contrast one, which is what GNOME's switch sets.
pub fn desktop_high_contrast() -> bool {
    desktop_theme_is(|name| name.contains("highcontrast"))
}

/// R-UI-11: whether the desktop's high-contrast theme is the inverse (light on dark) one:
/// `HighContrastInverse`, or a high-contrast theme's `:dark` variant in `GTK_THEME`.
fn desktop_inverse_contrast() -> bool {
    desktop_theme_is(|name| {
        name.contains("highcontrastinverse")
            || (name.contains("highcontrast") && name.ends_with(":dark"))
    })
}

/// Whether `GTK_THEME`, else GTK's theme name, lowercased, satisfies `test` (`GTK_THEME` only,
/// before GTK is initialised).
fn desktop_theme_is(test: impl Fn(&str) -> bool) -> bool {
    if let Ok(theme) = std::env::var("GTK_THEME") {
        return test(&theme.to_ascii_lowercase());
    }
    if !gtk::is_initialized() {
        return false;
    }
    gtk::Settings::default()
        .and_then(|settings| settings.gtk_theme_name())
        .is_some_and(|name| test(&name.as_str().to_ascii_lowercase()))
}
