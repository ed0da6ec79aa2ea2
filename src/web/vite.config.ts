/**
 * The browser app's build: two entry pages (the app at `/`, the embeddable widget at `/widget/<bot>`),
 * hashed assets under `/assets/`, output in `dist/web` for `src/http/WebApp.ts` to serve. Nothing is
 * inlined as script (the pages' Content-Security-Policy forbids inline script) and nothing is loaded
 * from a CDN.
 *
 * The widget's embed script is the exception to hashing: host pages load it from a stable URL
 * (`/widget.js`), as one classic script (an IIFE, no imports), so esbuild bundles it on its own.
 */
import react from "@vitejs/plugin-react"
import { build as esbuild } from "esbuild"
import { fileURLToPath } from "node:url"
import { defineConfig, type Plugin } from "vite"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

const embedScript = (): Plugin => ({
  name: "cairn-embed-script",
  apply: "build",
  async generateBundle() {
    const result = await esbuild({
      entryPoints: [here("embed/widget.ts")],
      bundle: true,
      format: "iife",
      target: "es2020",
      minify: true,
      write: false,
      logLevel: "warning"
    })
    this.emitFile({ type: "asset", fileName: "widget.js", source: result.outputFiles[0]!.text })
  }
})

export default defineConfig({
  root: here("."),
  base: "/",
  plugins: [react(), embedScript()],
  build: {
    outDir: here("../../dist/web"),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    sourcemap: false,
    target: "es2022",
    modulePreload: { polyfill: false },
    rollupOptions: { input: { app: here("index.html"), widget: here("widget.html") } }
  }
})
