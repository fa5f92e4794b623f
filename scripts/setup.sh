#!/usr/bin/env bash
# Installs the system packages lineup-host builds and tests against (WebKitGTK, GTK, libsoup, Xvfb,
# Node.js and npm, bubblewrap, Xorg's dummy driver and xrandr, systemd-analyze, D-Bus and the
# accessibility bus with its Python client) when they are missing, checks the Rust toolchain, and
# installs the MCP Apps example servers (scripts/mcp-servers.sh). Safe to run again.
set -euo pipefail

debian_packages=(
    libwebkit2gtk-4.1-dev # WebKitGTK 4.1, the webview engine wry drives on Linux
    libgtk-3-dev          # GTK 3, the windowing toolkit under tao and WebKitGTK
    libsoup-3.0-dev       # libsoup 3, the HTTP library WebKitGTK 4.1 links against
    xvfb                  # Xvfb and xvfb-run, a virtual X server for the webview tests
    xauth                 # used by xvfb-run
    pkg-config            # finds the libraries above for the -sys crates
    build-essential       # C compiler and linker for the -sys crates
    nodejs                # runs the bridge-script test
    bubblewrap            # WebKit's web-process sandbox
    fonts-dejavu-core     # a real font file for the app-asset test (a font served to a Surface)
    fonts-wqy-microhei    # a CJK font: the host's own words in Simplified Chinese (R-STD-9)
    xserver-xorg-core         # Xorg, for the kiosk test's two-monitor display
    xserver-xorg-video-dummy  # its virtual video driver, with RandR outputs (two monitors)
    x11-xserver-utils         # xrandr, which turns the second output on
    systemd                   # systemd-analyze, which checks the kiosk's systemd unit
    python3                   # the architecture map's check and the kiosk tests' helpers
    dbus                      # dbus-daemon: the private session bus of the screen-reader test
    at-spi2-core              # the accessibility bus and registry a screen reader reads (R-STD-12)
    python3-gi                # the screen-reader test's AT-SPI client (system Python)
    gir1.2-atspi-2.0          # its Atspi bindings
)
fedora_packages=(webkit2gtk4.1-devel gtk3-devel libsoup3-devel xorg-x11-server-Xvfb nodejs bubblewrap dejavu-sans-fonts wqy-microhei-fonts xorg-x11-server-Xorg xorg-x11-drv-dummy xrandr systemd python3 dbus-daemon at-spi2-core python3-gobject)
arch_packages=(webkit2gtk-4.1 gtk3 libsoup3 xorg-server-xvfb nodejs bubblewrap ttf-dejavu wqy-microhei xorg-server xf86-video-dummy xorg-xrandr systemd python dbus at-spi2-core python-gobject)

say() { printf 'setup: %s\n' "$*"; }
fail() {
    printf 'setup: error: %s\n' "$1" >&2
    shift
    for line in "$@"; do printf '  %s\n' "$line" >&2; done
    exit 1
}

is_debian() { command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; }

missing_debian_packages() {
    local package
    for package in "${debian_packages[@]}"; do
        if [[ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" != "install ok installed" ]]; then
            printf '%s\n' "$package"
        fi
    done
}

install_debian_packages() {
    local missing=("$@")
    local runner=()
    if [[ "$(id -u)" -ne 0 ]]; then
        if ! command -v sudo >/dev/null 2>&1; then
            fail "missing packages and no sudo to install them; as root, run:" \
                "apt-get update && apt-get install -y ${missing[*]}"
        fi
        if ! sudo -n true 2>/dev/null; then
            fail "missing packages, and sudo needs a password, which this script will not ask for; run:" \
                "sudo apt-get update && sudo apt-get install -y ${missing[*]}"
        fi
        runner=(sudo -n)
    fi
    say "installing ${missing[*]}"
    "${runner[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    "${runner[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
}

# What the build and the tests use, checked the same way on every distribution.
missing_tools() {
    local library tool
    if ! command -v pkg-config >/dev/null 2>&1; then
        printf '%s\n' pkg-config
    else
        for library in webkit2gtk-4.1 gtk+-3.0 libsoup-3.0; do
            pkg-config --exists "$library" || printf '%s\n' "$library (pkg-config)"
        done
    fi
    for tool in cc xvfb-run xauth node npm bwrap Xorg xrandr systemd-analyze python3 dbus-daemon; do
        command -v "$tool" >/dev/null 2>&1 || printf '%s\n' "$tool"
    done
}

print_other_distributions() {
    printf '  Fedora:        sudo dnf install %s\n' "${fedora_packages[*]}" >&2
    printf '  Arch:          sudo pacman -S --needed %s\n' "${arch_packages[*]}" >&2
    printf '  Debian/Ubuntu: sudo apt-get install %s\n' "${debian_packages[*]}" >&2
    printf '  and a C compiler, pkg-config and xauth where the list above does not bring them\n' >&2
}

if is_debian; then
    mapfile -t missing < <(missing_debian_packages)
    if ((${#missing[@]} > 0)); then
        install_debian_packages "${missing[@]}"
    else
        say "system packages present: ${debian_packages[*]}"
    fi
    # Debian's nodejs comes without npm (NodeSource's brings its own): the npm caches need it.
    if ! command -v npm >/dev/null 2>&1; then
        install_debian_packages npm
    fi
fi

mapfile -t missing < <(missing_tools)
if ((${#missing[@]} > 0)); then
    printf 'setup: error: not found: %s\n' "${missing[*]}" >&2
    if is_debian; then
        fail "the packages above are installed but these are still missing; check PATH and pkg-config"
    fi
    printf 'setup: this script installs packages on Debian and Ubuntu only; install them with:\n' >&2
    print_other_distributions
    exit 1
fi
say "found webkit2gtk-4.1, gtk+-3.0, libsoup-3.0, cc, xvfb-run, xauth, node, npm, bwrap, python3"

# shellcheck source=scripts/env.sh
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
if ! command -v cargo >/dev/null 2>&1; then
    fail "cargo not found; install Rust with rustup (https://rustup.rs), then open a new shell"
fi

# The JavaScript parser of lineup-authoring (oxc) needs Rust 1.95 or newer.
min_rust="1.95"
rust_version="$(rustc --version | awk '{print $2}')"
if [[ "$(printf '%s\n%s\n' "$min_rust" "$rust_version" | sort -V | head -n1)" != "$min_rust" ]]; then
    if ! command -v rustup >/dev/null 2>&1; then
        fail "Rust $rust_version is older than $min_rust; update your toolchain"
    fi
    say "Rust $rust_version is older than $min_rust: updating the stable toolchain"
    rustup update stable
    rustup default stable
fi

missing_components=()
cargo fmt --version >/dev/null 2>&1 || missing_components+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || missing_components+=(clippy)
if ((${#missing_components[@]} > 0)); then
    if ! command -v rustup >/dev/null 2>&1; then
        fail "missing Rust components: ${missing_components[*]}; install them for your toolchain"
    fi
    say "adding Rust components: ${missing_components[*]}"
    rustup component add "${missing_components[@]}"
fi
say "found $(cargo --version), rustfmt and clippy"

# The MCP Apps example servers `lineup mcp` and its tests run, and a Node.js 20 or newer for them
# (the pinned one from the npm registry where the system's is older, as Debian 12's 18 is).
bash "$(dirname "${BASH_SOURCE[0]}")/mcp-servers.sh"
