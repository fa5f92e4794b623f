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

/// The deepest nesting of `nodes` (a top-level block is at depth 1; a table's cells' content
/// one below the table).
fn depth(nodes: &[MarkdownNode]) -> usize {
    fn of<'a>(nodes: impl Iterator<Item = &'a MarkdownNode>) -> usize {
        nodes.map(|node| of(node.children()) + 1).max().unwrap_or(0)
    }
    of(nodes.iter())
}

/// The Markdown sinks and their byte caps (R-STD-10; `schemas/components/`).
const SINKS: [(&str, usize); 4] = [
    ("markdown.text", 32 * 1024),
    ("alert.body", 4096),
    ("form.description", 4096),
    ("confirm.body", 2048),
];

/// Hostile fillers: the repeated unit, the text after it, and what must survive of it.
const FILLERS: [(&str, &str); 8] = [
    (">", " deep"),
    ("- ", "deep"),
    ("1. ", "deep"),
    ("> - ", "deep"),
    ("[", "deep"),
    ("*_", "deep"),
    ("`", "deep"),
    ("  ", "- deep"),
];

/// `unit` repeated up to `cap` bytes with `tail` at the end.
fn filled(unit: &str, tail: &str, cap: usize) -> String {
    let mut text = unit.repeat((cap - tail.len()) / unit.len());
    text.push_str(tail);
    text
}

#[test]
fn r_std_10_deep_markdown_at_every_sink_cap_is_bounded_where_it_is_built() {
    // The 20 KB that killed the host: `>` × 20,000 then ` deep`.
    let mut texts = vec![(
        "the crash".to_owned(),
        format!("{} deep", ">".repeat(20_000)),
    )];
    for (sink, cap) in SINKS {
        for (unit, tail) in FILLERS {
            texts.push((format!("{sink} {unit:?}"), filled(unit, tail, cap)));
        }
        // Nested emphasis, closed again: `*_*_…deep…_*_*`.
        let half = (cap - 4) / 2;
        let open = "*_".repeat(half / 2);
        let close: String = open.chars().rev().collect();
        texts.push((
            format!("{sink} closed emphasis"),
            format!("{open}deep{close}"),
        ));
        // Indented list items, each one level deeper than the last.
        let mut lists = String::new();
        let mut level = 0;
        while lists.len() + 2 * level + 7 < cap {
            lists.push_str(&format!("{}- deep\n", "  ".repeat(level)));
            level += 1;
        }
        texts.push((format!("{sink} indented lists"), lists));
    }
    for (name, text) in texts {
        // Parsed, walked, serialized (the renderer's input), cloned and dropped on a 256 KiB
        // stack: a tree as deep as its input overflows this stack long before 20,000 levels.
        let worker = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let doc = parse_markdown(&text, LinkPolicy::Confirm);
                let mut nodes = 0;
                doc.visit(&mut |_| nodes += 1);
                let json = serde_json::to_string(&doc).unwrap_or_default();
                let copy = doc.clone();
                assert_eq!(copy, doc);
                let shown = format!("{doc:?}");
                drop(copy);
                (depth(&doc.blocks), doc.truncated, json, shown.len(), nodes)
            })
            .unwrap_or_else(|e| panic!("{name}: no thread: {e}"));
        let (deepest, _, json, _, nodes) = worker
            .join()
            .unwrap_or_else(|_| panic!("{name}: the walk panicked"));
        assert!(
            deepest <= MAX_MARKDOWN_DEPTH,
            "{name}: nested {deepest} deep"
        );
        assert!(
            nodes <= MAX_MARKDOWN_NODES + MAX_MARKDOWN_DEPTH,
            "{name}: {nodes} nodes"
        );
        assert!(json.starts_with("{\"blocks\""), "{name}: {json:.80}");
    }
}

#[test]
fn r_std_10_nesting_past_the_cap_is_kept_as_flat_text_and_marked_truncated() {
    // Positive control: quotes nested to the cap (quotes, a paragraph, its text) keep every
    // level and are not truncated.
    let at_cap = format!("{} x", ">".repeat(MAX_MARKDOWN_DEPTH - 2));
    let doc = parse_markdown(&at_cap, LinkPolicy::Confirm);
    assert_eq!(depth(&doc.blocks), MAX_MARKDOWN_DEPTH, "{doc:?}");
    assert!(!doc.truncated);
    // One more level: the deepest element is dropped, its text kept, and the cut is marked.
    let over = format!("{} deep", ">".repeat(MAX_MARKDOWN_DEPTH - 1));
    let doc = parse_markdown(&over, LinkPolicy::Confirm);
    assert_eq!(depth(&doc.blocks), MAX_MARKDOWN_DEPTH);
    assert!(doc.truncated);
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    assert_eq!(out.concat(), "deep");
    // Far past it, the text is still there, never a refusal.
    let far = format!("{} deep", ">".repeat(20_000));
    let doc = parse_markdown(&far, LinkPolicy::Confirm);
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    assert!(out.concat().contains("deep"), "{out:?}");
    assert!(doc.truncated);
}

#[test]
fn r_std_10_a_list_or_table_at_the_cap_is_dropped_whole_and_its_content_kept() {
    let quotes = ">".repeat(MAX_MARKDOWN_DEPTH - 2);
    // A list needs two levels (list, item); one level short, it becomes its items' content.
    let doc = parse_markdown(&format!("{quotes} - a\n{quotes} - b"), LinkPolicy::Confirm);
    let mut lists = 0;
    doc.visit(&mut |n| {
        if let MarkdownNode::List { items, .. } = n {
            lists += 1;
            assert!(items.iter().all(|i| matches!(i, MarkdownNode::Item { .. })));
        }
    });
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    assert!(
        out.concat().contains('a') && out.concat().contains('b'),
        "{out:?}"
    );
    assert!(depth(&doc.blocks) <= MAX_MARKDOWN_DEPTH);
    // A table needs three levels (table, row, cell); its cells' text is kept without them.
    let table = format!("{quotes} |h|\n{quotes} |-|\n{quotes} |cell|");
    let doc = parse_markdown(&table, LinkPolicy::Confirm);
    let mut out = Vec::new();
    strings(&doc.blocks, &mut out);
    assert!(out.concat().contains("cell"), "{doc:?}");
    assert!(doc.truncated);
    assert!(depth(&doc.blocks) <= MAX_MARKDOWN_DEPTH);
    // Positive control: at the top level, the same table and list are whole.
    let doc = parse_markdown("|h|\n|-|\n|cell|\n\n- a\n- b", LinkPolicy::Confirm);
    assert!(matches!(doc.blocks[0], MarkdownNode::Table { .. }));
    assert!(matches!(doc.blocks[1], MarkdownNode::List { .. }));
    assert!(!doc.truncated);
    let _ = lists;
}
