//! The host's language as a BCP 47 tag, and the mapping from POSIX locale names (R-UI-11).

use std::fmt;

use crate::ids::InvalidValue;

/// A BCP 47 language tag as WebKit and `Intl` accept it: a primary language of 2 to 8 letters,
/// then subtags of 1 to 8 letters or digits, joined by `-` (`en`, `de-DE`, `sr-Latn-RS`,
/// `zh-Hant-TW`), at most 64 characters. Never `C` or `POSIX` (R-UI-11).
///
/// ```
/// use lineup_host_core::LanguageTag;
/// assert_eq!(LanguageTag::try_from("de-DE").unwrap().as_str(), "de-DE");
/// assert!(LanguageTag::try_from("C").is_err());
/// assert!(LanguageTag::try_from("de_DE").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct LanguageTag(String);

impl LanguageTag {
    /// `en`, the tag of the POSIX locale.
    pub fn english() -> Self {
        Self("en".to_owned())
    }

    /// The tag.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The tag of a POSIX locale name such as `LANG` holds (R-UI-11): the codeset and
    /// modifier go (`de_DE.UTF-8@euro` → `de-DE`), except a script modifier (`sr_RS@latin` →
    /// `sr-Latn-RS`); the POSIX locale (`C`, `POSIX`, `C.UTF-8`) is `en`. `None` for an empty
    /// or unreadable name.
    ///
    /// ```
    /// use lineup_host_core::LanguageTag;
    /// let tag = |s| LanguageTag::from_locale(s).map(|t| t.as_str().to_owned());
    /// assert_eq!(tag("de_DE.UTF-8@euro").as_deref(), Some("de-DE"));
    /// assert_eq!(tag("C.UTF-8").as_deref(), Some("en"));
    /// assert_eq!(tag("").as_deref(), None);
    /// ```
    pub fn from_locale(locale: &str) -> Option<Self> {
        let locale = locale.trim();
        let (name, modifier) = match locale.split_once('@') {
            Some((name, modifier)) => (name, Some(modifier)),
            None => (locale, None),
        };
        let name = name.split_once('.').map_or(name, |(name, _)| name);
        if name.is_empty() {
            return None;
        }
        if name == "C" || name == "POSIX" {
            return Some(Self::english());
        }
        let (language, territory) = match name.split_once('_') {
            Some((language, territory)) => (language, Some(territory)),
            None => (name, None),
        };
        let script = match modifier {
            Some("latin") => Some("Latn"),
            Some("cyrillic") => Some("Cyrl"),
            Some("devanagari") => Some("Deva"),
            _ => None,
        };
        let mut tag = language.to_ascii_lowercase();
        if let Some(script) = script {
            tag.push('-');
            tag.push_str(script);
        }
        if let Some(territory) = territory {
            tag.push('-');
            tag.push_str(&territory.to_ascii_uppercase());
        }
        Self::try_from(tag.as_str()).ok()
    }

    /// The language of a process whose locale variables are these (R-UI-11): the first set and
    /// readable of `LC_ALL`, `LC_MESSAGES` and `LANG`, as POSIX resolves them; `en` when none is.
    ///
    /// ```
    /// use lineup_host_core::LanguageTag;
    /// let tag = LanguageTag::from_locale_variables(None, Some(""), Some("fr_CA.UTF-8"));
    /// assert_eq!(tag.as_str(), "fr-CA");
    /// ```
    pub fn from_locale_variables(
        lc_all: Option<&str>,
        lc_messages: Option<&str>,
        lang: Option<&str>,
    ) -> Self {
        [lc_all, lc_messages, lang]
            .into_iter()
            .flatten()
            .find(|value| !value.trim().is_empty())
            .and_then(Self::from_locale)
            .unwrap_or_else(Self::english)
    }
}

impl TryFrom<&str> for LanguageTag {
    type Error = InvalidValue;
    fn try_from(value: &str) -> Result<Self, InvalidValue> {
        let bad = |reason: &str| InvalidValue::new("language tag", value, reason.to_owned());
        if value.len() > 64 {
            return Err(bad("is longer than 64 characters (R-UI-11)"));
        }
        if value.eq_ignore_ascii_case("posix") || value.eq_ignore_ascii_case("c") {
            return Err(bad("is the POSIX locale, not a language; use en (R-UI-11)"));
        }
        let mut subtags = value.split('-');
        let primary = subtags.next().unwrap_or_default();
        if !(2..=8).contains(&primary.len()) || !primary.bytes().all(|b| b.is_ascii_alphabetic()) {
            return Err(bad(
                "must start with a language of 2 to 8 letters, like en or de-DE (R-UI-11)",
            ));
        }
        if subtags
            .any(|s| !(1..=8).contains(&s.len()) || !s.bytes().all(|b| b.is_ascii_alphanumeric()))
        {
            return Err(bad(
                "has a subtag that is not 1 to 8 letters or digits; subtags are joined by '-' (R-UI-11)",
            ));
        }
        Ok(Self(value.to_owned()))
    }
}

impl TryFrom<String> for LanguageTag {
    type Error = InvalidValue;
    fn try_from(value: String) -> Result<Self, InvalidValue> {
        Self::try_from(value.as_str())
    }
}

impl fmt::Display for LanguageTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-UI-11: the mapping table from POSIX locale names to BCP 47.
    #[test]
    fn r_ui_11_posix_locales_map_to_bcp47() {
        for (locale, tag) in [
            ("de_DE.UTF-8@euro", Some("de-DE")),
            ("de_DE.UTF-8", Some("de-DE")),
            ("en_US", Some("en-US")),
            ("pt_BR.utf8", Some("pt-BR")),
            ("zh_CN.GB18030", Some("zh-CN")),
            ("sr_RS@latin", Some("sr-Latn-RS")),
            ("ca_ES@valencia", Some("ca-ES")),
            ("ja", Some("ja")),
            ("C", Some("en")),
            ("POSIX", Some("en")),
            ("C.UTF-8", Some("en")),
            ("C.utf8", Some("en")),
            ("", None),
            (".UTF-8", None),
            ("x", None),
            ("en_US;rm -rf", None),
        ] {
            assert_eq!(
                LanguageTag::from_locale(locale).map(|t| t.0).as_deref(),
                tag,
                "{locale:?}"
            );
        }
    }

    #[test]
    fn r_ui_11_locale_variables_in_posix_order_and_en_by_default() {
        let tag = |a, m, l| LanguageTag::from_locale_variables(a, m, l).0;
        assert_eq!(tag(Some("de_DE"), Some("fr_FR"), Some("it_IT")), "de-DE");
        assert_eq!(tag(None, Some("fr_FR"), Some("it_IT")), "fr-FR");
        assert_eq!(tag(Some(""), None, Some("it_IT.UTF-8")), "it-IT");
        assert_eq!(tag(None, None, Some("C.UTF-8")), "en");
        assert_eq!(tag(None, None, None), "en");
    }

    #[test]
    fn r_ui_11_tags_are_checked() {
        for ok in ["en", "de-DE", "sr-Latn-RS", "zh-Hant-TW", "es-419"] {
            assert!(LanguageTag::try_from(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "C",
            "POSIX",
            "de_DE",
            "e",
            "de-",
            "de--DE",
            "de-DE\"",
            "toolonglang",
        ] {
            assert!(LanguageTag::try_from(bad).is_err(), "{bad}");
        }
    }
}
