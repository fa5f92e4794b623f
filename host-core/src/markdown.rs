//! The one Markdown sanitizer (R-STD-10, R-SEC-6): CommonMark + GFM parsed into a closed tree of
//! [`MarkdownNode`]s, never HTML. Every Markdown sink (`markdown.text`, `alert.body`,
//! `confirm.body`, `form.description`) goes through [`parse_markdown`].

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use serde::Serialize;

use crate::display::is_hidden;
use crate::url_policy::{safe_link, LinkPolicy, SafeLink};

/// The most nodes one document keeps; the rest is cut and [`SafeMarkdown::truncated`] set.
pub const MAX_MARKDOWN_NODES: usize = 2000;
/// The deepest a node may be nested (R-STD-10): a top-level block is at depth 1, its text at 2.
/// An element that would leave no room below it for its text is dropped and its content kept in
/// its parent as flat content, with
/// [`SafeMarkdown::truncated`] set. The tree is bounded where it is built, so that no walk of it
/// (a visit, serialization, a clone, its drop, the renderer's) recurses deeper than this, whatever
/// an agent sends: 20 KB of `>` would otherwise be 20,000 nested quotes.
pub const MAX_MARKDOWN_DEPTH: usize = 16;
/// The most rows of a table (header excluded) that are kept.
pub const MAX_TABLE_ROWS: usize = 50;
/// The most columns of a table that are kept.
pub const MAX_TABLE_COLUMNS: usize = 10;
/// The marker shown before an image's alt text: images are never fetched (R-STD-10).
pub const IMAGE_MARKER: &str = "🖼";

/// One node of the closed Markdown tree. There is no HTML node: raw HTML is [`MarkdownNode::Text`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MarkdownNode {
    /// A paragraph.
    Paragraph {
        /// Its inline content.
        children: Vec<MarkdownNode>,
    },
    /// A heading; levels 4–6 become 3.
    Heading {
        /// 1, 2 or 3.
        level: u8,
        /// Its inline content.
        children: Vec<MarkdownNode>,
    },
    /// Emphasis.
    Emphasis {
        /// Its content.
        children: Vec<MarkdownNode>,
    },
    /// Strong emphasis.
    Strong {
        /// Its content.
        children: Vec<MarkdownNode>,
    },
    /// Strikethrough (GFM).
    Strike {
        /// Its content.
        children: Vec<MarkdownNode>,
    },
    /// Inline code.
    Code {
        /// The code, cleaned.
        text: String,
    },
    /// A fenced or indented code block.
    CodeBlock {
        /// The fence's info string, cleaned, if any.
        language: Option<String>,
        /// The code with its line breaks, cleaned.
        text: String,
    },
    /// A list.
    List {
        /// The first number of an ordered list; `None` for a bullet list.
        start: Option<u64>,
        /// Its items ([`MarkdownNode::Item`]).
        items: Vec<MarkdownNode>,
    },
    /// A list item; a task item shows a disabled check box.
    Item {
        /// `Some` for a GFM task item: whether it is checked.
        task: Option<bool>,
        /// Its content.
        children: Vec<MarkdownNode>,
    },
    /// A block quote.
    Blockquote {
        /// Its content.
        children: Vec<MarkdownNode>,
    },
    /// A GFM table, at most [`MAX_TABLE_ROWS`] × [`MAX_TABLE_COLUMNS`].
    Table {
        /// The header cells.
        header: Vec<Vec<MarkdownNode>>,
        /// The body rows, each a list of cells.
        rows: Vec<Vec<Vec<MarkdownNode>>>,
    },
    /// A thematic break.
    Rule,
    /// A hard line break.
    Break,
    /// Plain text, cleaned by the display rules (hidden and bidi characters removed).
    Text {
        /// The text.
        text: String,
    },
    /// A link that passed the URL policy (R-STD-11); any other becomes its text.
    Link {
        /// Where it leads.
        link: SafeLink,
        /// Its content.
        children: Vec<MarkdownNode>,
    },
    /// An image, never fetched: its alt text after [`IMAGE_MARKER`].
    Image {
        /// The alt text, cleaned.
        alt: String,
    },
}

/// A Markdown document as the closed tree a renderer builds with text nodes only.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct SafeMarkdown {
    /// The top-level blocks.
    pub blocks: Vec<MarkdownNode>,
    /// Whether a cap ([`MAX_MARKDOWN_NODES`], [`MAX_MARKDOWN_DEPTH`], [`MAX_TABLE_ROWS`],
    /// [`MAX_TABLE_COLUMNS`]) cut something off.
    pub truncated: bool,
}

impl SafeMarkdown {
    /// Calls `f` on every node of the tree, depth first, each node before its content.
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a MarkdownNode)) {
        self.blocks.iter().for_each(|node| node.visit(f));
    }
}

impl MarkdownNode {
    /// Calls `f` on this node, then on every node of its content, depth first.
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a MarkdownNode)) {
        f(self);
        self.children().for_each(|node| node.visit(f));
    }

    /// The nodes directly inside this one, in order; a table's are its cells' content, header
    /// first, row by row.
    pub fn children(&self) -> impl Iterator<Item = &MarkdownNode> + '_ {
        let direct: &[MarkdownNode] = match self {
            MarkdownNode::Paragraph { children }
            | MarkdownNode::Heading { children, .. }
            | MarkdownNode::Emphasis { children }
            | MarkdownNode::Strong { children }
            | MarkdownNode::Strike { children }
            | MarkdownNode::Item { children, .. }
            | MarkdownNode::Blockquote { children }
            | MarkdownNode::Link { children, .. } => children,
            MarkdownNode::List { items, .. } => items,
            MarkdownNode::Table { .. }
            | MarkdownNode::Code { .. }
            | MarkdownNode::CodeBlock { .. }
            | MarkdownNode::Rule
            | MarkdownNode::Break
            | MarkdownNode::Text { .. }
            | MarkdownNode::Image { .. } => &[],
        };
        let cells = match self {
            MarkdownNode::Table { header, rows } => {
                Some(header.iter().chain(rows.iter().flatten()).flatten())
            }
            _ => None,
        };
        direct.iter().chain(cells.into_iter().flatten())
    }
}

/// Parses untrusted Markdown (CommonMark, GFM tables, strikethrough, task lists) into the closed
/// tree (R-STD-10): raw HTML becomes literal text, images their alt text behind a marker, links
/// that break the URL policy (or all links, under [`LinkPolicy::Off`]) their text.
///
/// ```
/// use lineup_host_core::{parse_markdown, LinkPolicy, MarkdownNode};
/// let doc = parse_markdown("**hi** <script>x</script>", LinkPolicy::Confirm);
/// let MarkdownNode::Paragraph { children } = &doc.blocks[0] else { panic!() };
/// assert!(matches!(&children[0], MarkdownNode::Strong { .. }));
/// assert_eq!(children[2], MarkdownNode::Text { text: "<script>".into() });
/// ```
pub fn parse_markdown(text: &str, policy: LinkPolicy) -> SafeMarkdown {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut b = Builder {
        stack: vec![Frame::new(Kind::Root)],
        depth: 0,
        nodes: 0,
        truncated: false,
        policy,
    };
    for event in Parser::new_ext(text, options) {
        if b.nodes >= MAX_MARKDOWN_NODES {
            b.truncated = true;
            break;
        }
        b.event(event);
    }
    while b.stack.len() > 1 {
        b.end();
    }
    let root = b.stack.pop().unwrap_or_else(|| Frame::new(Kind::Root));
    SafeMarkdown {
        blocks: root.children,
        truncated: b.truncated,
    }
}

/// What an open element becomes when it ends.
enum Kind {
    Root,
    Paragraph,
    Heading(u8),
    Quote,
    CodeBlock(Option<String>),
    List(Option<u64>),
    Item,
    Table,
    Row,
    Cell,
    Emphasis,
    Strong,
    Strike,
    Link(Option<SafeLink>),
    Image,
    /// Content kept, element dropped (footnotes, definition lists, metadata…).
    Transparent,
    /// Cut by a table cap: content dropped.
    Discard,
}

impl Kind {
    /// Whether the frame becomes a node nested in its parent (and so counts toward
    /// [`MAX_MARKDOWN_DEPTH`]). Rows and cells are nested in their table's node.
    fn is_element(&self) -> bool {
        !matches!(self, Kind::Root | Kind::Transparent | Kind::Discard)
    }

    /// The levels an element needs below its parent for its own structure: a list its items, a
    /// table its rows and cells. An element that would not fit under the cap is dropped whole,
    /// so a list never holds a non-item and a table's cells are never lost.
    fn levels(&self) -> usize {
        match self {
            Kind::Table => 3,
            Kind::List(_) => 2,
            _ => 1,
        }
    }
}

struct Frame {
    kind: Kind,
    children: Vec<MarkdownNode>,
    task: Option<bool>,
    text: String,
    cells: Vec<Vec<MarkdownNode>>,
    header: Vec<Vec<MarkdownNode>>,
    rows: Vec<Vec<Vec<MarkdownNode>>>,
}

impl Frame {
    fn new(kind: Kind) -> Self {
        Self {
            kind,
            children: Vec::new(),
            task: None,
            text: String::new(),
            cells: Vec::new(),
            header: Vec::new(),
            rows: Vec::new(),
        }
    }
}

/// Builds the tree from the parser's events.
///
/// Invariant: `depth` is the number of frames on `stack` that become a node of their own when
/// they end (not the root, not a transparent or discarded frame), and it stays below
/// [`MAX_MARKDOWN_DEPTH`]: so no node of the tree, leaves included, is nested deeper than that.
struct Builder {
    stack: Vec<Frame>,
    depth: usize,
    nodes: usize,
    truncated: bool,
    policy: LinkPolicy,
}

impl Builder {
    fn top(&mut self) -> &mut Frame {
        let last = self.stack.len() - 1;
        &mut self.stack[last]
    }

    fn push_node(&mut self, node: MarkdownNode) {
        self.nodes += 1;
        let top = self.top();
        match top.kind {
            // Text inside a code block or an image is its text.
            Kind::CodeBlock(_) | Kind::Image => {
                if let MarkdownNode::Text { text } = node {
                    top.text.push_str(&text);
                }
            }
            Kind::Discard => {}
            Kind::Root
            | Kind::Paragraph
            | Kind::Heading(_)
            | Kind::Quote
            | Kind::List(_)
            | Kind::Item
            | Kind::Table
            | Kind::Row
            | Kind::Cell
            | Kind::Emphasis
            | Kind::Strong
            | Kind::Strike
            | Kind::Link(_)
            | Kind::Transparent => top.children.push(node),
        }
    }

    fn text(&mut self, raw: &str) {
        let code = matches!(self.top().kind, Kind::CodeBlock(_));
        let text = if code {
            clean_code(raw)
        } else {
            clean_inline(raw)
        };
        if !text.is_empty() {
            self.push_node(MarkdownNode::Text { text });
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(end) => {
                if !matches!(end, TagEnd::TableHead) {
                    self.end();
                } else {
                    self.end_head();
                }
            }
            Event::Text(t) => self.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => self.text(&t),
            Event::InlineMath(t) | Event::DisplayMath(t) => self.text(&t),
            Event::FootnoteReference(t) => self.text(&format!("[^{t}]")),
            Event::Code(t) => self.push_node(MarkdownNode::Code {
                text: clean_inline(&t),
            }),
            Event::SoftBreak => self.push_node(MarkdownNode::Text { text: " ".into() }),
            Event::HardBreak => self.push_node(MarkdownNode::Break),
            Event::Rule => self.push_node(MarkdownNode::Rule),
            Event::TaskListMarker(checked) => {
                if let Some(item) = self
                    .stack
                    .iter_mut()
                    .rev()
                    .find(|f| matches!(f.kind, Kind::Item))
                {
                    item.task = Some(checked);
                }
            }
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let discard = matches!(self.top().kind, Kind::Discard);
        let kind = match tag {
            _ if discard => Kind::Discard,
            Tag::Paragraph | Tag::HtmlBlock => Kind::Paragraph,
            Tag::Heading { level, .. } => Kind::Heading(match level {
                HeadingLevel::H1 => 1,
                HeadingLevel::H2 => 2,
                _ => 3,
            }),
            Tag::BlockQuote(_) => Kind::Quote,
            Tag::CodeBlock(CodeBlockKind::Fenced(info)) => {
                let language = clean_inline(&info);
                Kind::CodeBlock((!language.is_empty()).then_some(language))
            }
            Tag::CodeBlock(CodeBlockKind::Indented) => Kind::CodeBlock(None),
            Tag::List(start) => Kind::List(start),
            Tag::Item => Kind::Item,
            Tag::Table(_) => Kind::Table,
            // A row or cell whose table or row was dropped at the depth cap is dropped too,
            // its content kept flat.
            Tag::TableHead | Tag::TableRow if !matches!(self.top().kind, Kind::Table) => {
                Kind::Transparent
            }
            Tag::TableCell if !matches!(self.top().kind, Kind::Row) => Kind::Transparent,
            Tag::TableHead | Tag::TableRow => {
                let table = self.top();
                if table.rows.len() >= MAX_TABLE_ROWS {
                    self.truncated = true;
                    Kind::Discard
                } else {
                    Kind::Row
                }
            }
            Tag::TableCell => {
                if self.top().cells.len() >= MAX_TABLE_COLUMNS {
                    self.truncated = true;
                    Kind::Discard
                } else {
                    Kind::Cell
                }
            }
            Tag::Emphasis => Kind::Emphasis,
            Tag::Strong => Kind::Strong,
            Tag::Strikethrough => Kind::Strike,
            Tag::Link { dest_url, .. } => Kind::Link(safe_link(&dest_url, self.policy)),
            Tag::Image { .. } => Kind::Image,
            _ => Kind::Transparent,
        };
        let kind = if kind.is_element() && self.depth + kind.levels() >= MAX_MARKDOWN_DEPTH {
            // R-STD-10: too deep; its content joins the parent's.
            self.truncated = true;
            Kind::Transparent
        } else {
            kind
        };
        if kind.is_element() {
            self.depth += 1;
        }
        self.stack.push(Frame::new(kind));
    }

    /// Takes the top frame off the stack, keeping the depth count true.
    fn pop(&mut self) -> Option<Frame> {
        if self.stack.len() < 2 {
            return None;
        }
        let frame = self.stack.pop()?;
        if frame.kind.is_element() {
            self.depth -= 1;
        }
        Some(frame)
    }

    /// The header row ends: its cells become the table's header.
    fn end_head(&mut self) {
        let Some(row) = self.pop() else { return };
        match row.kind {
            Kind::Row => self.top().header = row.cells,
            // A head past the depth cap: its content, flat, in the parent.
            Kind::Transparent => self.top().children.extend(row.children),
            _ => {}
        }
    }

    fn end(&mut self) {
        let Some(frame) = self.pop() else {
            return;
        };
        let children = frame.children;
        let node = match frame.kind {
            Kind::Root | Kind::Discard => return,
            Kind::Transparent => {
                for child in children {
                    self.top().children.push(child);
                }
                return;
            }
            Kind::Row => {
                self.top().rows.push(frame.cells);
                return;
            }
            Kind::Cell => {
                self.top().cells.push(children);
                return;
            }
            Kind::Paragraph => MarkdownNode::Paragraph { children },
            Kind::Heading(level) => MarkdownNode::Heading { level, children },
            Kind::Quote => MarkdownNode::Blockquote { children },
            Kind::CodeBlock(language) => MarkdownNode::CodeBlock {
                language,
                text: frame.text,
            },
            Kind::List(start) => MarkdownNode::List {
                start,
                items: children,
            },
            Kind::Item => MarkdownNode::Item {
                task: frame.task,
                children,
            },
            Kind::Table => MarkdownNode::Table {
                header: frame.header,
                rows: frame.rows,
            },
            Kind::Emphasis => MarkdownNode::Emphasis { children },
            Kind::Strong => MarkdownNode::Strong { children },
            Kind::Strike => MarkdownNode::Strike { children },
            Kind::Link(Some(link)) => MarkdownNode::Link { link, children },
            Kind::Link(None) => {
                // Inert: the link's text, in place.
                for child in children {
                    self.top().children.push(child);
                }
                return;
            }
            Kind::Image => MarkdownNode::Image {
                alt: clean_inline(&frame.text),
            },
        };
        self.push_node(node);
    }
}

/// Inline text with hidden, control and bidi characters removed and every white space
/// character a space (the display rules of R-SEC-8, without trimming: spacing between inline
/// nodes is meaningful).
fn clean_inline(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if is_hidden(c) {
                None
            } else {
                Some(c)
            }
        })
        .collect()
}

/// Code with its line breaks and tabs kept and every other hidden character removed.
fn clean_code(s: &str) -> String {
    s.chars()
        .filter(|c| matches!(c, '\n' | '\t' | ' ') || !(is_hidden(*c) || c.is_whitespace()))
        .collect()
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
