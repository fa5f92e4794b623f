// The entry of the one-file Lit build (scripts/libraries.sh): esbuild bundles the pinned `lit`
// into one ES module, loaded by an installed app's module script.
export { LitElement, html, css, render } from "lit";
