// The entry of the one-file MCP Apps SDK build (scripts/libraries.sh): esbuild wraps the SDK's own
// browser bundle, dist/src/app-with-deps.js of the pinned @modelcontextprotocol/ext-apps (an ES
// module with its dependencies inside), unmodified, into one IIFE whose global is `McpApps`, for
// the inline script of a test view (the `mcp_view` scenario group).
export { App, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-with-deps";
