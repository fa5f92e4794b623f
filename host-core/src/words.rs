//! The words the host draws itself in its own documents, in the host context's language, from
//! one table (R-STD-9: default labels localized): the standard components' default labels and
//! the words of their severities and states, and the consent prompt's buttons and headings.
//! English, and Simplified Chinese for a `zh` language tag; any other language gets English.

use serde_json::{Map, Value};

use crate::LanguageTag;

/// Each word: its key, in English, in Simplified Chinese.
const TABLE: [(&str, &str, &str); 53] = [
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
    // The consent prompt's window and lines (R-CAP-3, #49 item 4).
    ("prompt_title", crate::CONSENT_PROMPT_TITLE, "权限请求"),
    ("asks_to_use", "asks to use “{name}”", "请求使用“{name}”"),
    ("unnamed_agent", "(unnamed agent)", "（未署名的智能体）"),
    ("empty_key", "(empty)", "（空）"),
    ("list_one", "a list of 1 item", "含 1 项的列表"),
    ("list_many", "a list of {n} items", "含 {n} 项的列表"),
    ("object_one", "an object with 1 field", "含 1 个字段的对象"),
    ("object_many", "an object with {n} fields", "含 {n} 个字段的对象"),
    ("in_label", "in {name}", "来自“{name}”"),
    ("in_agent_words", "in the conversation the agent calls “{name}”", "来自智能体称为“{name}”的对话"),
    ("in_withheld", "in a conversation whose name imitates this window; it is not shown", "来自一个名称模仿本窗口的对话；名称未显示"),
    // The link confirm of a component's link (R-STD-12).
    ("link_headline", "sent a link: open it in your browser?", "发来一个链接：要在浏览器中打开吗？"),
    ("link_in_message", "You chose a link in its {name} message.", "你选择了它的 {name} 消息中的一个链接。"),
    ("link_leads_to_host", "It leads to {name}.", "它指向 {name}。"),
    ("unidentified_agent", "an unidentified agent", "一个身份未经确认的智能体"),
    // The activity notice (§5.3).
    ("notice_title", "LineUp activity", "LineUp 活动"),
    ("ran", "{name} ran", "{name} 已执行"),
    ("for_agent", "for agent {name}", "代表智能体 {name}"),
    ("for_the_agent", "for the agent", "代表智能体"),
    ("grant_policy", "display_only", "仅显示"),
    ("grant_prompt", "the user's consent", "用户的同意"),
    ("grant_remembered", "a remembered grant", "已记住的授权"),
    ("grant_hook", "the permission check", "权限检查"),
    ("grant_host", "the host", "宿主"),
    // Window titles (R-SEC-5): the host-owned markers after an agent's name.
    ("surface_marker", " — LineUp Surface", " — LineUp 界面"),
    ("untitled", "Untitled", "未命名"),
    ("question_marker", " — LineUp question", " — LineUp 问题"),
    ("questions", "questions", "问题"),
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

/// One word of the table with `{name}` and `{n}` in it replaced (`{n}` by `n`'s decimal
/// digits); an unknown key gives the empty string, which a test of every caller's keys rules
/// out.
///
/// ```
/// use lineup_host_core::{host_word_with, LanguageTag};
/// let zh = LanguageTag::try_from("zh").unwrap();
/// assert_eq!(host_word_with(&zh, "asks_to_use", "app.open_url", 0), "请求使用“app.open_url”");
/// assert_eq!(host_word_with(&LanguageTag::english(), "list_many", "", 3), "a list of 3 items");
/// ```
pub fn host_word_with(language: &LanguageTag, key: &str, name: &str, n: usize) -> String {
    host_word(language, key)
        .unwrap_or_default()
        .replace("{n}", &n.to_string())
        .replace("{name}", name)
}

/// One word of the table in every language it has (for checks that must hold whichever
/// language a window is in, such as R-SEC-5's title check).
pub fn host_word_everywhere(key: &str) -> impl Iterator<Item = &'static str> + '_ {
    TABLE
        .iter()
        .filter(move |(k, _, _)| *k == key)
        .flat_map(|(_, en, zh)| [*en, *zh])
}

/// The consent prompt's own lines in every language of the table: its title, its remembering
/// button and the words it shows for each risk (R-STD-5: no component draws them).
pub(crate) fn prompt_lines() -> impl Iterator<Item = &'static str> {
    TABLE
        .iter()
        .filter(|(key, _, _)| {
            *key == "always_allow" || *key == "prompt_title" || key.starts_with("risk_")
        })
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
