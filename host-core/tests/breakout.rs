//! R-UI-6a: the bundle scanner ([`Breakout::find`]) against a real HTML tokenizer (html5ever),
//! and against the exact `<!--` sequences of libraries a Surface may bundle.

use std::cell::RefCell;

use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::TokenizerResult;
use lineup_host_core::{Breakout, InlineBundle, SourcePart};
use proptest::prelude::*;

#[allow(clippy::unwrap_used)] // the shared helpers of the kernel tests
mod support;

/// Records the tokens of one document, switching to the raw text state of `<script>` or
/// `<style>` at their start tag as the tree builder does.
#[derive(Default)]
struct Recorder {
    tokens: RefCell<Vec<Token>>,
}

impl TokenSink for Recorder {
    type Handle = ();
    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let raw = match &token {
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => match &*tag.name {
                "script" => Some(RawKind::ScriptData),
                "style" => Some(RawKind::Rawtext),
                _ => None,
            },
            _ => None,
        };
        self.tokens.borrow_mut().push(token);
        raw.map_or(TokenSinkResult::Continue, TokenSinkResult::RawData)
    }
}

/// Whether html5ever ends the `element` of `<element>` + `content` + `</element>` exactly at that
/// last end tag: everything before its first end tag is `content`, as text.
fn ends_at_the_closing_tag(element: &str, content: &str) -> bool {
    let tokenizer = Tokenizer::new(Recorder::default(), TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(format!(
        "<{element}>{content}</{element}>"
    )));
    while let TokenizerResult::Script(()) = tokenizer.feed(&input) {}
    tokenizer.end();
    let tokens = tokenizer.sink.tokens.into_inner();
    let mut text = String::new();
    for token in tokens.iter().skip(1) {
        match token {
            Token::CharacterTokens(chars) => text.push_str(chars),
            Token::TagToken(tag) if tag.kind == TagKind::EndTag && &*tag.name == element => {
                // The input stream preprocessing turns `\r\n` and `\r` into `\n`.
                return text == content.replace("\r\n", "\n").replace('\r', "\n");
            }
            _ => {}
        }
    }
    false
}

/// Checks the verdict on `js` against the tokenizer: every script whose element would not end at
/// the host's closing tag is refused, and every other one passes unless it contains `</script`,
/// which the rule refuses in every form (stricter than the tokenizer, on purpose).
fn check_js(js: &str) -> Result<(), TestCaseError> {
    let found = Breakout::find("", js);
    let ends = ends_at_the_closing_tag("script", js);
    if js.to_ascii_lowercase().contains("</script") {
        prop_assert!(found.is_some(), "{js:?}: `</script` passed");
    } else {
        prop_assert_eq!(
            found.is_none(),
            ends,
            "{:?}: scanner {:?}, html5ever ends at the closing tag: {}",
            js,
            found,
            ends
        );
    }
    Ok(())
}

/// The same for `css` in `<style>`, raw text that only `</style` can end.
fn check_css(css: &str) -> Result<(), TestCaseError> {
    let found = Breakout::find(css, "");
    let ends = ends_at_the_closing_tag("style", css);
    prop_assert!(
        ends || found.is_some(),
        "{css:?}: the style element broke out"
    );
    prop_assert_eq!(
        found.is_some(),
        css.to_ascii_lowercase().contains("</style"),
        "{:?}",
        css
    );
    Ok(())
}

/// The pieces generated scripts are made of: everything the script data states react to.
const FRAGMENTS: &[&str] = &[
    "<!--",
    "-->",
    "<!-",
    "--",
    "-",
    "!",
    "<",
    ">",
    "/",
    "<script",
    "<script>",
    "<SCRIPT ",
    "<scripts",
    "</script",
    "</script>",
    "</SCRIPT/",
    "</scrip",
    "</",
    "script",
    "SCRIPT",
    "a",
    "é",
    " ",
    "\n",
    "\r",
    "\t",
    "\x0c",
    "<style",
    "</style",
    "</STYLE>",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn r_ui_6a_js_verdict_agrees_with_html5ever(
        parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..24)
    ) {
        check_js(&parts.concat())?;
    }

    #[test]
    fn r_ui_6a_js_verdict_agrees_with_html5ever_without_end_tags(
        parts in prop::collection::vec(
            prop::sample::select(FRAGMENTS).prop_filter("no </script", |f| {
                !f.to_ascii_lowercase().starts_with("</script")
            }),
            0..24,
        )
    ) {
        check_js(&parts.concat())?;
    }

    #[test]
    fn r_ui_6a_css_verdict_agrees_with_html5ever(
        parts in prop::collection::vec(prop::sample::select(FRAGMENTS), 0..16)
    ) {
        check_css(&parts.concat())?;
    }
}

#[test]
fn r_ui_6a_js_verdict_agrees_with_html5ever_on_every_short_script() {
    // Every script of up to four of these pieces: 11 110 scripts.
    const PIECES: [&str; 10] = [
        "<!--",
        "-->",
        "<script>",
        "<script",
        "</script>",
        "-",
        ">",
        "<",
        "/",
        " ",
    ];
    let mut scripts = vec![String::new()];
    let mut last = scripts.clone();
    for _ in 0..4 {
        last = last
            .iter()
            .flat_map(|s| PIECES.iter().map(move |p| format!("{s}{p}")))
            .collect();
        scripts.extend(last.iter().cloned());
    }
    assert_eq!(scripts.len(), 11_111);
    for js in &scripts {
        if let Err(e) = check_js(js) {
            panic!("{e}");
        }
    }
}

/// Exact text around every `<!--` in the minified builds of marked 15.0.12
/// (`marked.min.js`), DOMPurify 3.5.0 (`dist/purify.min.js`) and highlight.js 11.12.0
/// (`@highlightjs/cdn-assets`, `highlight.min.js`), and around its `<script` rule.
const LIBRARY_SNIPPETS: &[(&str, &str)] = &[
    (
        "marked 15.0.12 marked.min.js",
        r#"K=/<!--(?:-?>|[\s\S]*?(?:-->|$))/,Ce=h("^ {0,3}(?:<(script|pre|style|textarea)[\\s>][\\s\\S]*?(?:</\\1>[^\\n]*\\n+|$)|comment[^"#,
    ),
    (
        "DOMPurify 3.5.0 purify.min.js",
        r"$e=h(/<[/\w!]/g),et=h(/<[/\w]/g),tt=h(/<[/\w]|^-?>|--!?>|<!-$/g),nt=h(/<\/no(script|embed|frames)/i),rt=h(/\/>/i),it=h(/((--!?|])>)|<\/(style|script|title|xmp|textarea|noscript|iframe|noembed|noframes)/i),at=h",
    ),
    (
        "DOMPurify 3.5.0 purify.min.js",
        "pn&&(e=`<!-->`),typeof e!=`string`&",
    ),
    (
        "DOMPurify 3.5.0 purify.min.js",
        "i=Xn(`<!---->`),a=i.ownerDocument.i",
    ),
    (
        "highlight.js 11.12.0 highlight.min.js",
        "ame:\"meta\",begin:/<![a-z]/,end:/>/,contains:[i,r,o,s]}]}]\n},e.COMMENT(/<!--/,/-->/,{relevance:10}),{begin:/<!\\[CDATA\\[/,end:/\\]\\]>/,\nrel",
    ),
    (
        "highlight.js 11.12.0 highlight.min.js",
        "begin:/<script(?=\\s|>)/,end:/>/,keywords:{name:\"script\"},contains:[c],starts:{\nend:/<\\/script>/,returnEnd:!0,subLanguage:\"javascript\"}},{",
    ),
    (
        "highlight.js 11.12.0 highlight.js",
        "className: 'doctag',\n                variants: [\n                  {\n                    \
         begin: '///',\n                    relevance: 0\n                  },\n                  \
         { begin: '<!--|-->' },",
    ),
    (
        "highlight.js 11.12.0 highlight.js",
        "hljs.COMMENT(\n          /<!--/,\n          /-->/,\n          { relevance: 10 }\n        ),",
    ),
];

#[test]
fn r_ui_6a_library_comment_openers_pass_unchanged() {
    for (library, js) in LIBRARY_SNIPPETS {
        assert_eq!(Breakout::find("", js), None, "{library}: {js}");
        let bundle = InlineBundle::new("", "", *js).unwrap_or_else(|e| panic!("{library}: {e}"));
        assert_eq!(bundle.js(), *js, "{library}: passed unchanged");
        assert!(
            ends_at_the_closing_tag("script", js),
            "{library}: html5ever agrees"
        );
    }
    // All of them in one script, in every order of two.
    for (_, a) in LIBRARY_SNIPPETS {
        for (_, b) in LIBRARY_SNIPPETS {
            check_js(&format!("{a}\n{b}")).unwrap();
        }
    }
}

#[test]
fn r_ui_6a_every_break_out_form_is_refused() {
    for (js, at, script_at) in [
        ("s='</script>'", (1, 4), None),
        ("s='</SCRIPT '", (1, 4), None),
        ("s='</script/'", (1, 4), None),
        ("s='</script\n>'", (1, 4), None),
        ("s='<!--<script>'", (1, 4), Some((1, 8))),
        ("s='<!-- <script '", (1, 4), Some((1, 9))),
        ("s='<!--\\n<ScRiPt/x'", (1, 4), Some((1, 10))),
        ("a;\n<!--\n<script>\n-- >", (2, 1), Some((3, 1))),
    ] {
        let found = Breakout::find("", js).unwrap_or_else(|| panic!("{js:?} passed"));
        assert_eq!(found.part, SourcePart::Js);
        assert_eq!((found.at.line, found.at.column), at, "{js:?}");
        assert_eq!(
            found.script_at.map(|p| (p.line, p.column)),
            script_at,
            "{js:?}"
        );
        let err = InlineBundle::new("", "", js).unwrap_err();
        assert_eq!(err.kind, "app.js");
        assert!(
            err.reason.contains(&format!("\" at {}:{} ", at.0, at.1))
                && err.reason.contains("(line:column, columns in characters)")
                && err.reason.contains(found.hint)
                && err.reason.contains("R-UI-6a"),
            "{err}"
        );
        // Positive control: html5ever does not end the element at the host's closing tag.
        assert!(!ends_at_the_closing_tag("script", js), "{js:?}");
    }
}

/// Whole builds of the libraries authors use, as `scripts/libraries.sh` fetches them (the pinned
/// npm releases of `tests/libraries/package.json`) into `LINEUP_LIBRARIES_DIR` (default
/// `~/.cache/lineup-libraries`): paths inside that cache.
const LIBRARY_BUILDS: [&str; 16] = [
    "node_modules/marked/lib/marked.umd.js",
    "node_modules/dompurify/dist/purify.min.js",
    "node_modules/@highlightjs/cdn-assets/highlight.min.js",
    "node_modules/chart.js/dist/chart.umd.js",
    "node_modules/echarts/dist/echarts.min.js",
    "node_modules/katex/dist/katex.min.js",
    "node_modules/leaflet/dist/leaflet.js",
    "node_modules/preact/dist/preact.umd.js",
    "node_modules/@alpinejs/csp/dist/cdn.min.js",
    "node_modules/alpinejs/dist/cdn.min.js",
    "node_modules/three/build/three.module.js",
    "node_modules/three/build/three.core.js",
    "node_modules/d3/dist/d3.min.js",
    "node_modules/uplot/dist/uPlot.iife.min.js",
    "bundles/codemirror.iife.min.js",
    "bundles/lit.min.mjs",
];

/// Every whole library build of the cache passes (R-UI-6a): none is taken for a breakout, and
/// html5ever agrees that each ends only at the host's closing tag. The cache is made by
/// `scripts/libraries.sh`, which CI runs before the tests; under CI (`CI=true`) a missing cache
/// fails this test, elsewhere it is named and the test has nothing to scan.
#[test]
fn r_ui_6a_whole_library_builds_pass() {
    let Some(dir) = support::library_cache("stamp") else {
        return;
    };
    for build in LIBRARY_BUILDS {
        let path = dir.join(build);
        let js = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        assert!(js.len() > 10_000, "{path:?} is not a whole build");
        assert_eq!(Breakout::find("", &js), None, "{path:?}");
        assert!(ends_at_the_closing_tag("script", &js), "{path:?}");
    }
}
