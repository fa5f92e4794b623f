// A fake MCP server for cli/tests/mcp.rs: JSON-RPC lines over stdio, with what the official
// example servers never do (a view of another MIME type, an oversize view, a blob, the
// deprecated resource key, an app-only view, an `isError` result, `_meta.ui` on the listing only,
// paged tools), and it echoes the client's capabilities. Its first argument picks a misbehaviour:
// `crash` (a line on stderr, then exit 3), `silent` (never answers tools/call), `endless` (every
// tools/list page has a next cursor).
import { createInterface } from "node:readline";

const mode = process.argv[2] ?? "plain";
if (mode === "crash") {
  process.stderr.write("fake server: crashed on purpose\n");
  process.exit(3);
}

const MIME = "text/html;profile=mcp-app";
const object = { type: "object" };
const tools = [
  { name: "echo-capabilities", inputSchema: object },
  { name: "app-only", inputSchema: object, _meta: { ui: { resourceUri: "ui://blob", visibility: ["app"] } } },
  { name: "old-key", inputSchema: object, _meta: { "ui/resourceUri": "ui://blob" } },
  { name: "plain-html", inputSchema: object, _meta: { ui: { resourceUri: "ui://plain" } } },
  { name: "oversize", inputSchema: object, _meta: { ui: { resourceUri: "ui://oversize" } } },
  { name: "fails", inputSchema: object },
];
const contents = {
  "ui://blob": { uri: "ui://blob", mimeType: MIME, blob: Buffer.from("<p>blob</p>").toString("base64") },
  "ui://plain": { uri: "ui://plain", mimeType: "text/html", text: "<p>plain</p>" },
  // One byte over the 8 MiB a host opens (R-MCP-4).
  "ui://oversize": { uri: "ui://oversize", mimeType: MIME, text: "x".repeat(8 * 1024 * 1024 + 1) },
};
const listed = [{ uri: "ui://blob", name: "blob", mimeType: MIME, _meta: { ui: { prefersBorder: true } } }];

let capabilities = null;
const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
const answer = (id, result) => send({ id, result });
const refuse = (id, code, message) => send({ id, error: { code, message } });

function call(id, { name, arguments: args }) {
  if (mode === "silent") return;
  if (name === "echo-capabilities") {
    answer(id, { content: [{ type: "text", text: "capabilities" }], structuredContent: capabilities });
  } else if (name === "fails") {
    answer(id, { content: [{ type: "text", text: "failed on purpose" }], isError: true });
  } else if (tools.some((tool) => tool.name === name)) {
    answer(id, { content: [{ type: "text", text: JSON.stringify(args ?? {}) }] });
  } else {
    refuse(id, -32602, `no tool ${name}`);
  }
}

function page(id, params) {
  // Two tools a page: the client must follow the cursors.
  const from = Number(params?.cursor ?? 0);
  const next = from + 2 < tools.length || mode === "endless" ? String(from + 2) : undefined;
  answer(id, { tools: tools.slice(from, from + 2), ...(next ? { nextCursor: next } : {}) });
}

createInterface({ input: process.stdin }).on("line", (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const { id, method, params } = message;
  if (method === "initialize") {
    capabilities = params.capabilities;
    answer(id, {
      protocolVersion: params.protocolVersion,
      capabilities: { tools: {}, resources: {} },
      serverInfo: { name: "fake", version: "0" },
    });
  } else if (method === "tools/list") {
    page(id, params);
  } else if (method === "tools/call") {
    call(id, params);
  } else if (method === "resources/read") {
    const found = contents[params.uri];
    if (found) answer(id, { contents: [found] });
    else refuse(id, -32002, `no resource ${params.uri}`);
  } else if (method === "resources/list") {
    answer(id, { resources: listed });
  } else {
    refuse(id, -32601, `no method ${method}`);
  }
});
