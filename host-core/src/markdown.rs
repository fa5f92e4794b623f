//! Markdown for trusted host UI: parsed, rendered, then sanitised (R-SEC-6).

use pulldown_cmark::{html, Options, Parser};

/// Renders untrusted Markdown to HTML that is safe to put into a trusted (host) DOM (R-SEC-6).
///
/// The Markdown is parsed with tables, strikethrough and task lists, rendered, and the HTML is
/// sanitised with ammonia: scripts, event-handler attributes, `style`, and links other than
/// `http`, `https` and `mailto` are removed; links get `rel="noopener noreferrer"`.
///
/// ```
/// use lineup_host_core::sanitize_markdown;
/// let html = sanitize_markdown("**hi** <script>alert(1)</script>[x](javascript:alert(1))");
/// assert!(html.contains("<strong>hi</strong>"));
/// assert!(!html.contains("script") && !html.contains("javascript"));
/// ```
pub fn sanitize_markdown(markdown: &str) -> String {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut rendered = String::new();
    html::push_html(&mut rendered, Parser::new_ext(markdown, options));
    ammonia::Builder::default()
        .url_schemes(["http", "https", "mailto"].into_iter().collect())
        .link_rel(Some("noopener noreferrer"))
        .clean(&rendered)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::sanitize_markdown;

    #[test]
    fn r_sec_6_scripts_never_survive() {
        for attack in [
            "<script>alert(1)</script>",
            "<SCRIPT SRC=//x/x.js></SCRIPT>",
            "<img src=x onerror=alert(1)>",
            "<a href=\"#\" onclick=\"alert(1)\">x</a>",
            "[x](javascript:alert(1))",
            "[x](JaVaScRiPt:alert(1))",
            "[x](  javascript:alert(1))",
            "<a href=\"data:text/html,<script>alert(1)</script>\">d</a>",
            "<iframe src=\"https://example.com\"></iframe>",
            "<svg><script>alert(1)</script></svg>",
            "<div style=\"background:url(javascript:alert(1))\">s</div>",
            "![x](javascript:alert(1))",
            "<form action=x><input></form>",
        ] {
            let out = sanitize_markdown(attack).to_ascii_lowercase();
            for banned in [
                "<script",
                "onerror",
                "onclick",
                "javascript:",
                "<iframe",
                "style=",
                "<form",
                "<input",
                "data:text",
            ] {
                assert!(!out.contains(banned), "{attack:?} -> {out:?} kept {banned}");
            }
        }
    }

    #[test]
    fn r_sec_6_golden_links_emphasis_code_tables() {
        assert_eq!(
            sanitize_markdown("*a* **b** ~~c~~"),
            "<p><em>a</em> <strong>b</strong> <del>c</del></p>\n"
        );
        assert_eq!(
            sanitize_markdown("[docs](https://example.com/docs)"),
            "<p><a href=\"https://example.com/docs\" rel=\"noopener noreferrer\">docs</a></p>\n"
        );
        assert_eq!(
            sanitize_markdown("```rust\nlet x = 1 < 2;\n```"),
            "<pre><code>let x = 1 &lt; 2;\n</code></pre>\n"
        );
        assert_eq!(
            sanitize_markdown("| a | b |\n|---|---|\n| 1 | 2 |"),
            "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody>\n<tr><td>1</td><td>2</td></tr>\n</tbody></table>\n"
        );
        assert_eq!(sanitize_markdown("`x`"), "<p><code>x</code></p>\n");
    }
}
