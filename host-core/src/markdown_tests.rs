//! Tests of the one Markdown sanitizer (R-STD-10, R-STD-11, R-SEC-6).

use super::*;

/// Every text, code and alt string of `nodes`, and every link URL, in order.
fn strings(nodes: &[MarkdownNode], out: &mut Vec<String>) {
    for node in nodes {
        node.visit(&mut |n| match n {
            MarkdownNode::Link { link, .. } => out.push(format!("LINK {}", link.url)),
            MarkdownNode::Code { text }
            | MarkdownNode::CodeBlock { text, .. }
            | MarkdownNode::Text { text } => out.push(text.clone()),
            MarkdownNode::Image { alt } => out.push(format!("IMAGE {alt}")),
            _ => {}
        });
    }
}

fn links(doc: &SafeMarkdown) -> Vec<String> {
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    out.into_iter().filter(|s| s.starts_with("LINK ")).collect()
}

fn count(nodes: &[MarkdownNode]) -> usize {
    let mut out = Vec::new();
    strings(nodes, &mut out);
    out.len()
}

#[test]
fn r_std_10_hostile_markdown_has_no_live_link_and_no_html_node() {
    let attacks = [
        "<script>alert(1)</script>",
        "<svg onload=alert(1)>",
        "<img src=x onerror=alert(1)>",
        "[x](javascript:alert(1))",
        "[x](JaVaScRiPt:alert(1))",
        "[x](&#x6A;avascript:alert(1))",
        "<javascript:alert(1)>",
        "[x][r]\n\n[r]: javascript:alert(1)",
        "[x](data:text/html,<script>alert(1)</script>)",
        "[x](vbscript:msgbox(1))",
        "[x](file:///etc/passwd)",
        "[x](lineup-host://x/)",
        "[x](//evil.example/)",
        "[x](java\tscript:alert(1))",
        "[x](https://bank.example@evil.example/)",
        "<a href=\"https://example.com\">a</a>",
    ];
    for attack in attacks {
        let doc = parse_markdown(attack, LinkPolicy::Confirm);
        assert_eq!(links(&doc), Vec::<String>::new(), "{attack:?} -> {doc:?}");
    }
    // Raw HTML is literal text, never an element.
    let doc = parse_markdown("a <b onclick=x>b</b>", LinkPolicy::Confirm);
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    assert_eq!(out.concat(), "a <b onclick=x>b</b>");
}

#[test]
fn r_std_11_a_good_link_is_live_positive_control_and_off_is_inert() {
    let text = "see [log](https://ci.example/1) and <https://Bücher.example/x>";
    let doc = parse_markdown(text, LinkPolicy::Confirm);
    assert_eq!(
        links(&doc),
        [
            "LINK https://ci.example/1",
            "LINK https://xn--bcher-kva.example/x"
        ]
    );
    let off = parse_markdown(text, LinkPolicy::Off);
    assert!(links(&off).is_empty());
    let mut out = Vec::new();
    strings(&off.blocks, &mut out);
    assert!(out.concat().contains("log"), "the text stays: {out:?}");
}

#[test]
fn r_std_10_images_are_alt_text_never_a_url() {
    let doc = parse_markdown("![the cat](http://127.0.0.1:9/p.png)", LinkPolicy::Confirm);
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    assert_eq!(out, ["IMAGE the cat"]);
    let json = serde_json::to_string(&doc).unwrap_or_default();
    assert!(!json.contains("127.0.0.1"), "{json}");
}

#[test]
fn r_std_10_closed_tree_golden() {
    let doc = parse_markdown(
        "# A\n#### deep\n\n*e* **s** ~~x~~ `c`\n\n- [x] done\n- [ ] todo\n\n> q\n\n---\n\n```rust\nlet a = 1;\n```",
        LinkPolicy::Confirm,
    );
    let json = serde_json::to_value(&doc).unwrap_or_default();
    let blocks = json["blocks"].as_array().cloned().unwrap_or_default();
    let types: Vec<&str> = blocks.iter().filter_map(|b| b["type"].as_str()).collect();
    assert_eq!(
        types,
        [
            "heading",
            "heading",
            "paragraph",
            "list",
            "blockquote",
            "rule",
            "code_block"
        ]
    );
    assert_eq!(blocks[1]["level"], 3, "levels 4-6 become 3");
    let inline: Vec<&str> = blocks[2]["children"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|n| n["type"].as_str())
        .collect();
    assert_eq!(
        inline,
        ["emphasis", "text", "strong", "text", "strike", "text", "code"]
    );
    assert_eq!(blocks[3]["items"][0]["task"], true);
    assert_eq!(blocks[3]["items"][1]["task"], false);
    assert_eq!(blocks[6]["language"], "rust");
    assert_eq!(blocks[6]["text"], "let a = 1;\n");
}

#[test]
fn r_std_10_text_is_cleaned_by_the_display_rules() {
    let doc = parse_markdown("a\u{202E}b\u{200B}c", LinkPolicy::Confirm);
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    assert_eq!(out.concat(), "abc");
}

#[test]
fn r_std_10_tables_are_capped_at_50_by_10() {
    let header = format!("|{}\n|{}\n", "h|".repeat(12), "-|".repeat(12));
    let row = format!("|{}\n", "v|".repeat(12));
    let at_cap = format!("{header}{}", row.repeat(MAX_TABLE_ROWS));
    let doc = parse_markdown(&at_cap, LinkPolicy::Confirm);
    let MarkdownNode::Table { header: h, rows } = &doc.blocks[0] else {
        panic!("{doc:?}")
    };
    assert_eq!((h.len(), rows.len()), (MAX_TABLE_COLUMNS, MAX_TABLE_ROWS));
    assert!(rows.iter().all(|r| r.len() == MAX_TABLE_COLUMNS));
    assert!(doc.truncated, "12 columns were cut");
    let over = format!("{header}{}", row.repeat(MAX_TABLE_ROWS + 1));
    let doc = parse_markdown(&over, LinkPolicy::Confirm);
    let MarkdownNode::Table { rows, .. } = &doc.blocks[0] else {
        panic!()
    };
    assert_eq!(rows.len(), MAX_TABLE_ROWS);
    let small = parse_markdown("|a|b|\n|-|-|\n|1|2|", LinkPolicy::Confirm);
    assert!(!small.truncated, "positive control");
}

#[test]
fn r_std_10_at_most_2000_nodes() {
    let under = "x\n\n".repeat(MAX_MARKDOWN_NODES / 2 - 1);
    let doc = parse_markdown(&under, LinkPolicy::Confirm);
    assert!(!doc.truncated);
    let over = "x\n\n".repeat(MAX_MARKDOWN_NODES);
    let doc = parse_markdown(&over, LinkPolicy::Confirm);
    assert!(doc.truncated);
    assert!(doc.blocks.len() + count(&doc.blocks) <= MAX_MARKDOWN_NODES + 1);
}
