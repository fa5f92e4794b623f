// The entry of the one-file CodeMirror 6 build (scripts/libraries.sh): esbuild bundles what these
// lines name from the pinned packages into one IIFE whose global is `CM`.
export { EditorView, basicSetup } from "codemirror";
export { EditorState } from "@codemirror/state";
