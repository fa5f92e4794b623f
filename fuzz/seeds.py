#!/usr/bin/env python3
"""Writes the seed inputs of every fuzz target into its corpus, fuzz/corpus/<target>/.

Seeds are small, valid or nearly valid inputs in each target's input format (see the target's
doc comment): envelopes from the conformance kit's cases, bridge messages as the bridge script
posts them, app packages and their archives, scheme requests, WebSocket frames, prompt text.
Run from anywhere: `python3 fuzz/seeds.py`. Each file is named by the SHA-1 of its content, as
libFuzzer names what it adds, so running it again adds nothing twice and removes nothing (the
corpus also holds what `cargo fuzz cmin` kept from the recorded runs).
"""

import hashlib
import io
import json
import pathlib
import tarfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "fuzz" / "corpus"

seeds = {}


def add(target, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    seeds.setdefault(target, {})[hashlib.sha1(data).hexdigest()] = data


# markdown_nesting: a repeat count, then the unit repeated (the hostile fillers of R-STD-10).
for unit in [">", "- ", "1. ", "> - ", "[", "*_", "`", "  - x\n", "|a|\n|-|\n", "**a", "> |a|\n> |-|\n"]:
    add("markdown_nesting", bytes([255]) + unit.encode("utf-8"))

# envelope_decode: what the conformance kit's cases send, one envelope per seed.
for case in sorted((ROOT / "conformance" / "cases").rglob("*.json")):
    for step in json.loads(case.read_text(encoding="utf-8")).get("steps", []):
        if "send" in step:
            text = json.dumps(step["send"], ensure_ascii=False, separators=(",", ":"))
        elif "send_raw" in step:
            text = step["send_raw"]
        else:
            continue
        if len(text.encode("utf-8")) <= 4096:
            add("envelope_decode", text)

# bridge_decode: each message type the bridge script posts.
NS = '"namespace":"lineup.surface.v1"'
for message in [
    '{%s,"type":"ready","document":"0123456789abcdef0123456789abcdef"}' % NS,
    '{%s,"type":"event","event":"refresh","data":{"unit":"c"}}' % NS,
    '{%s,"type":"event","event":"pick","data":{"n":[1,2.5,null,true],"s":"\\u00e9"}}' % NS,
    '{%s,"type":"resize","height":240.5}' % NS,
    '{%s,"type":"close_attempt"}' % NS,
    '{%s,"type":"diagnostic","kind":"console","level":"warn","message":"x","source":"app.js","line":3,"column":7}' % NS,
    '{%s,"type":"diagnostic","kind":"error","message":"ReferenceError: y","line":1}' % NS,
    '{%s,"type":"diagnostic","kind":"rejection","message":"no"}' % NS,
    '{%s,"type":"diagnostic","kind":"csp","message":"blocked","directive":"connect-src","blocked":"https://x.example/"}' % NS,
    '{"namespace":"x","type":"ready"}',
]:
    add("bridge_decode", message)

# mcp_from_view: what an MCP App view (the ext-apps SDK's App) posts to its host.
for message in [
    {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize",
     "params": {"protocolVersion": "2026-01-26", "appInfo": {"name": "v", "version": "1"},
                "appCapabilities": {"availableDisplayModes": ["inline"]}}},
    {"jsonrpc": "2.0", "method": "ui/notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "get-time", "arguments": {}, "_meta": {"progressToken": 2}}},
    {"jsonrpc": "2.0", "id": "r", "method": "resources/read", "params": {"uri": "ui://s/v"}},
    {"jsonrpc": "2.0", "id": 3, "method": "ui/message",
     "params": {"role": "user", "content": [{"type": "text", "text": "hi"}]}},
    {"jsonrpc": "2.0", "id": 4, "method": "ui/update-model-context", "params": {"content": []}},
    {"jsonrpc": "2.0", "id": 5, "method": "ui/open-link", "params": {"url": "https://example.com/"}},
    {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "x"}},
    {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}},
    {"jsonrpc": "2.0", "method": "ui/notifications/size-changed", "params": {"width": 300, "height": 200}},
    {"jsonrpc": "2.0", "method": "ui/notifications/sandbox-proxy-ready"},
    {"jsonrpc": "2.0", "id": 1, "result": {}},
    {"jsonrpc": "2.0", "id": 6, "method": "ping"},
]:
    add("mcp_from_view", json.dumps(message, separators=(",", ":")))

# package_manifest: manifest.json, then 0xFF-separated `name\nbytes` files.
SEP = b"\xff"


def package(manifest, files):
    out = json.dumps(manifest).encode("utf-8")
    for name, body in files:
        out += SEP + name.encode("utf-8") + b"\n" + body
    return out


HELLO = {"id": "com.example.hello", "name": "Hello", "version": "1.0.0",
         "surfaces": {"main": {"html": "index.html", "events": ["wave"]}}}
FULL = {"id": "com.example.full", "name": "Full", "version": "2.1.0-beta.1",
        "surfaces": {"main": {"html": "main.html", "css": "main.css", "js": "main.js",
                              "events": ["a", "b"]},
                     "side": {"html": "side/index.html"}},
        "assets": ["assets/logo.png", "assets/font.woff2", "scripts/lib.js"]}
PNG = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"
for manifest, files in [
    (HELLO, [("index.html", b"<p>Hello</p>")]),
    (FULL, [("main.html", b"<main>m</main>"), ("main.css", b"main{color:red}"),
            ("main.js", b"LineUpSurface.send('a',{})"), ("side/index.html", b"<p>s</p>"),
            ("assets/logo.png", PNG), ("assets/font.woff2", b"wOF2"),
            ("scripts/lib.js", b"window.lib=1;")]),
    (HELLO, [("index.html", b"<p>Hello</p>"), ("extra.txt", b"unlisted")]),
    (dict(HELLO, surfaces={"main": {"html": "../index.html"}}), [("index.html", b"x")]),
    (dict(HELLO, surfaces={"main": {"html": "index.html", "js": "a.js"}}),
     [("index.html", b"x"), ("a.js", b"</script><script>")]),
    (dict(HELLO, assets=["a.exe"]), [("index.html", b"x"), ("a.exe", b"MZ")]),
]:
    add("package_manifest", package(manifest, files))

# package_paths: names, and the digest, key and signature texts of a package.
for name in ["index.html", "assets/logo.png", "a/b/c/d.min.js", "caf\u00e9.css", ".hidden",
             "a..b", "/etc/passwd", "../x", "a/../b", "a//b", "a\\b", "./a", "a/", "C:x",
             "a\tb", "x" * 255, "x" * 256]:
    add("package_paths", name)
try:
    import base64
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives import serialization

    key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    public = key.public_key().public_bytes(serialization.Encoding.Raw,
                                           serialization.PublicFormat.Raw)
    digest = hashlib.sha256(b"").digest()
    message = b"lineup-package-v1\0" + digest
    signature = key.sign(message)
    public_text = "ed25519:" + base64.b64encode(public).decode()
    add("package_paths", public_text)
    add("package_paths", public_text + " " + base64.b64encode(signature).decode() + "\n")
    add("package_paths", "sha256-" + base64.b64encode(digest).decode())
except ImportError:
    pass

# package_tar: archives in each format the tar crate reads.


def archive(entries, fmt=tarfile.USTAR_FORMAT):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=fmt) as tar:
        for name, kind, body in entries:
            info = tarfile.TarInfo(name)
            info.mtime = 0
            info.type = kind
            if kind == tarfile.SYMTYPE:
                info.linkname = "index.html"
            if kind == tarfile.DIRTYPE:
                info.mode = 0o755
            info.size = len(body) if kind == tarfile.REGTYPE else 0
            tar.addfile(info, io.BytesIO(body) if kind == tarfile.REGTYPE else None)
    return out.getvalue()


hello = [("manifest.json", tarfile.REGTYPE, json.dumps(HELLO).encode()),
         ("index.html", tarfile.REGTYPE, b"<p>Hello</p>")]
add("package_tar", archive(hello))
add("package_tar", archive([("./", tarfile.DIRTYPE, b"")]
                           + [("./" + n, k, b) for n, k, b in hello], tarfile.GNU_FORMAT))
add("package_tar", archive(hello + [("assets/", tarfile.DIRTYPE, b""),
                                    ("assets/" + "l" * 120 + ".png", tarfile.REGTYPE, PNG)],
                           tarfile.PAX_FORMAT))
add("package_tar", archive(hello + [("link", tarfile.SYMTYPE, b"")]))
add("package_tar", archive(hello + [("INDEX.html", tarfile.REGTYPE, b"x")]))

# scheme_request: method, URI (`@` = own origin, `!` = another Surface's), asset paths.
for request in ["GET\n@/", "HEAD\n@/index.html", "GET\n@/#top", "POST\n@/",
                "GET\n@/assets/logo.png\nassets/logo.png\nscripts/lib.js",
                "GET\n@/assets/logo.png#x\nassets/logo.png",
                "GET\n@/ASSETS/logo.png\nassets/logo.png", "GET\n@/%2e%2e/\nassets/a.png",
                "GET\n!/", "GET\n!/assets/logo.png\nassets/logo.png", "get\n@/",
                "GET\nlineup-surface://5a5a/", "GET\n@/index.html?x=1\nindex.html"]:
    add("scheme_request", request)

# csp_header: token line, language line, flags byte, html 0xFF css 0xFF js.
for token, lang, flags in [("5a" * 16, "en", 0), ("0123456789abcdef" * 2, "de-DE", 3),
                           ("ABAB" * 8, "de_DE.UTF-8@euro", 7), ("x;y", "C", 1)]:
    add("csp_header", token.encode() + b"\n" + lang.encode() + b"\n" + bytes([flags]) + b"\n"
        + b"<p>hi</p>" + SEP + b"p{color:red}" + SEP + b"LineUpSurface.send('a',{})")

# line_framing: limit byte, chunk byte, stream.
for stream in [b'{"v":1}\n{"v":1}\r\n', b"ab\nabcdef\ncd", b"\n\n\r\n" + b"x" * 70 + b"\r\nend",
               b"a\rb\n"]:
    add("line_framing", bytes([7, 3]) + stream)

# websocket_frames: cap byte, then frames from the agent (unmasked, as a server sends).


def frame(opcode, payload, fin=True):
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 65536:
        head += bytes([126]) + n.to_bytes(2, "big")
    else:
        head += bytes([127]) + n.to_bytes(8, "big")
    return head + payload


envelope = (b'{"v":1,"id":"m","type":"lineup.v1.ui.open","conversation_id":"c","sender":'
            b'{"kind":"agent","id":"a"},"payload":{"instance_id":"w","app":{"id":'
            b'"com.example.w","version":"1.0.0","html":"","css":"","js":""}}}')
for cap, stream in [
    (0x80, frame(1, envelope)),
    (3, frame(1, b"hel", fin=False) + frame(0, b"lo")),
    (0, frame(9, b"ping") + frame(2, b"\x00\x01") + frame(8, b"\x03\xe8bye")),
    (0, frame(1, b"x" * 40)),
    (5, frame(1, b"y" * 300)),
    (0, bytes([0x81, 0x85, 1, 2, 3, 4]) + b"hello"),
    (0, frame(1, b"\xff\xfe")),
    (0, frame(1, b"   \n")),
]:
    add("websocket_frames", bytes([cap]) + stream)

# consent_text: cap byte, then text as an agent or a page might write it.
for text in ["To show you\u202e the shop", "\n a \u202eb\r\n\r\n\r\nc \n",
             "\U0001F468\u200d\U0001F469\u200d\U0001F467 a\u200db", "\u2764\ufe0f x\ufe0f",
             " \u200b\u3164 ", "e\u0301e\u0301e", "<b>x</b>\n y", "https://B\u00fccher.example:8443/x",
             "https://bank.example@evil.example/", "javascript:alert(1)", "http://[::1]/",
             "\u0007bell\u0085next\u2028line\u2029para\u000bvt\u000cff"]:
    add("consent_text", bytes([12]) + text.encode("utf-8"))

# link_token: token files' and agent URLs' text.
for text in ["s3cret-value\n", "  token with spaces \r\n", "ab\ncd", "\u00e9", "", "Bearer x",
             "wss://agent.example/lineup", "ws://127.0.0.1:9000/", "ws://[::1]/x",
             "ws://localhost/", "ws://agent.example/", "wss://user:pw@agent.example/",
             "https://agent.example/", "ws://127.1/", "wss://"]:
    add("link_token", text)

for target, files in sorted(seeds.items()):
    folder = OUT / target
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    print(f"{target}: {len(files)} seeds")
