/**
 * The browser app's build: two entry pages (the app at `/`, the embeddable widget at `/widget/<bot>`),
 * hashed assets under `/assets/`, output in `dist/web` for `src/http/WebApp.ts` to serve. Nothing is
 * inlined as script (the pages' Content-Security-Policy forbids inline script) and nothing is loaded
 * from a CDN.
 */
import react from "@vitejs/plugin-react"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vite"

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url))

export default defineConfig({
  root: here("."),
  base: "/",
  plugins: [react()],
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
