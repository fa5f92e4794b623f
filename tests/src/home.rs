//! A private HOME for a test process, so that nothing a webview writes lands in the real one, and
//! a search of it for bytes that must not have been written.

use std::path::{Path, PathBuf};

/// Points HOME and the XDG directories at a fresh directory under the temporary directory and
/// returns it; also tells WebKit not to look for an accessibility bus. Call first thing in
/// `main`, before any thread starts.
pub fn private_home(name: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("lineup-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for sub in [
        "home",
        "data",
        "cache",
        "config",
        "runtime",
        "home/Downloads",
    ] {
        if let Err(e) = std::fs::create_dir_all(root.join(sub)) {
            panic!("cannot create {}: {e}", root.join(sub).display());
        }
    }
    std::env::set_var("HOME", root.join("home"));
    std::env::set_var("XDG_DATA_HOME", root.join("data"));
    std::env::set_var("XDG_CACHE_HOME", root.join("cache"));
    std::env::set_var("XDG_CONFIG_HOME", root.join("config"));
    std::env::set_var("XDG_DOWNLOAD_DIR", root.join("home/Downloads"));
    // There is no accessibility bus under Xvfb; an empty address keeps every web process from
    // warning that it cannot reach one.
    std::env::set_var("WEBKIT_A11Y_BUS_ADDRESS", "");
    root
}

/// Every file under `dir` whose bytes contain `needle`.
pub fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(entries) = std::fs::read_dir(&path) {
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        } else if meta.is_file() {
            if let Ok(bytes) = std::fs::read(&path) {
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    found.push(path);
                }
            }
        }
    }
    found
}
