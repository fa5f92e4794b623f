//! Where a Surface's frames may navigate (R-SEC-2, R-SEC-2a), whatever the engine.

/// R-SEC-2a: the document itself (a `#fragment` changes nothing), and `about:srcdoc`, which
/// engines ask about for srcdoc subframes without saying which frame asks.
///
/// `about:blank` is refused in every frame: a main frame sent there by its own sandboxed page
/// takes its web process down (WebKitGTK 2.50), and a subframe loses nothing by the refusal,
/// since an iframe's initial document is that empty document already and stays.
///
/// ```
/// use lineup_webview_shell::navigation_allowed;
///
/// let doc = "lineup-surface://00112233445566778899aabbccddeeff/";
/// assert!(navigation_allowed(doc, &format!("{doc}#top")));
/// assert!(!navigation_allowed(doc, "https://example.com/"));
/// ```
pub fn navigation_allowed(document: &str, uri: &str) -> bool {
    same_document(document, uri) || uri == "about:srcdoc"
}

/// Whether `uri` is the Surface's document, whatever its fragment.
pub fn same_document(document: &str, uri: &str) -> bool {
    uri.split_once('#').map_or(uri, |(before, _)| before) == document
}

#[cfg(test)]
mod tests {
    use super::navigation_allowed;

    const DOC: &str = "lineup-surface://00112233445566778899aabbccddeeff/";

    #[test]
    fn r_sec_2a_navigation_allows_only_the_document_and_srcdoc_subframes() {
        assert!(navigation_allowed(DOC, DOC));
        assert!(navigation_allowed(DOC, &format!("{DOC}#section")));
        assert!(navigation_allowed(DOC, "about:srcdoc"));
        for refused in [
            "about:blank",
            "https://example.com/",
            "lineup-surface://ffeeddccbbaa99887766554433221100/",
            "lineup-surface://00112233445566778899aabbccddeeff/index.html",
            "lineup-surface://00112233445566778899aabbccddeeff/other",
            "lineup-surface://00112233445566778899aabbccddeeff",
            "about:blank#x",
            "about:srcdoc?x",
            "data:text/html,hi",
            "blob:lineup-surface://00112233445566778899aabbccddeeff/1",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "",
        ] {
            assert!(
                !navigation_allowed(DOC, refused),
                "{refused} must be refused"
            );
        }
    }
}
