//! The words the host draws itself in its own documents, in the host context's language, from
//! one table (R-STD-9: default labels localized): the standard components' default labels and
//! the words of their severities and states, and the consent prompt's buttons and headings.
//! English, and Simplified Chinese for a `zh` language tag; any other language gets English.

use serde_json::{Map, Value};

use crate::LanguageTag;

/// Each word: its key, in English, in Simplified Chinese.
const TABLE: [(&str, &str, &str); 25] = [
    ("cancel", "Cancel", "取消"),
    ("submit", "Submit", "提交"),
    ("confirm", "Confirm", "确认"),
    ("dismiss", "Dismiss", "关闭"),
    ("info", "Info", "信息"),
    ("success", "Success", "成功"),
    ("warning", "Warning", "警告"),
    ("error", "Error", "错误"),
    ("pending", "Pending", "等待中"),
    ("in_progress", "In progress", "进行中"),
    ("complete", "Complete", "已完成"),
    ("cancelled", "Cancelled", "已取消"),
    ("shortened", "Shortened by the host.", "内容过长，已由宿主截断。"),
    ("more", "and {n} more", "另有 {n} 项"),
    ("deny", "Deny", "拒绝"),
    ("allow", "Allow", "允许"),
    ("always_allow", "Always allow", "始终允许"),
    ("link_leads_to", "The link leads to", "链接指向"),
    ("details", "Details", "详细信息"),
    ("reason", "The agent's reason", "智能体给出的理由"),
    ("version", "version", "版本"),
    ("risk_display_only", "It only shows something; nothing changes.", "它只显示内容，不做任何更改。"),
    ("risk_user_confirmation", "It acts only if you allow it.", "只有在你允许后它才会执行。"),
    ("risk_system_permission", "It needs a system permission. You are asked every time; it is never remembered.", "它需要系统权限。每次都会询问你，不会被记住。"),
    ("risk_restricted", "It is restricted and needs an extra check. You are asked every time; it is never remembered.", "它受到限制，需要额外检查。每次都会询问你，不会被记住。"),
];

/// The host's words in `language`: every key of the table with its text, as a JSON object for
/// a host-written document's data.
///
/// ```
/// use lineup_host_core::{host_words, LanguageTag};
/// let zh = host_words(&LanguageTag::try_from("zh-CN").unwrap());
/// assert_eq!(zh["cancel"], "取消");
/// assert_eq!(host_words(&LanguageTag::english())["cancel"], "Cancel");
/// ```
pub fn host_words(language: &LanguageTag) -> Map<String, Value> {
    let chinese = is_chinese(language);
    TABLE
        .iter()
        .map(|(key, en, zh)| {
            let text = if chinese { zh } else { en };
            ((*key).to_owned(), Value::String((*text).to_owned()))
        })
        .collect()
}

/// One word of the table in `language` (`None`: no such key).
pub fn host_word(language: &LanguageTag, key: &str) -> Option<&'static str> {
    let chinese = is_chinese(language);
    TABLE
        .iter()
        .find(|(k, _, _)| *k == key)
        .map(|(_, en, zh)| if chinese { *zh } else { *en })
}

/// The consent prompt's own lines in every language of the table: its remembering button and
/// the words it shows for each risk (R-STD-5: no component draws them).
pub(crate) fn prompt_lines() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .filter(|(key, _, _)| *key == "always_allow" || key.starts_with("risk_"))
        .flat_map(|(_, en, zh)| [*en, *zh])
}

fn is_chinese(language: &LanguageTag) -> bool {
    let primary = language
        .as_str()
        .split(['-', '_'])
        .next()
        .unwrap_or_default();
    primary.eq_ignore_ascii_case("zh")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r_std_9_every_word_has_both_languages_and_no_key_twice() {
        let mut keys: Vec<&str> = TABLE.iter().map(|(k, _, _)| *k).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), TABLE.len());
        for (key, en, zh) in TABLE {
            assert!(!en.is_empty() && !zh.is_empty() && en != zh, "{key}");
        }
    }

    #[test]
    fn the_language_tag_picks_the_table() {
        for (tag, cancel) in [
            ("zh", "取消"),
            ("zh-Hans-CN", "取消"),
            ("ZH-tw", "取消"),
            ("en-GB", "Cancel"),
            ("fr", "Cancel"),
        ] {
            let language = LanguageTag::try_from(tag).unwrap_or_else(|_| LanguageTag::english());
            assert_eq!(host_word(&language, "cancel"), Some(cancel), "{tag}");
        }
    }
}
