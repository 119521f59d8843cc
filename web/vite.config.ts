import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

// The web app: plain React + viem, TSX through Vite's esbuild (no React plugin needed for a production build).
export default defineConfig({
  root,
  base: "/",
  esbuild: { jsx: "automatic" },
  build: { outDir: "dist", emptyOutDir: true, sourcemap: true, chunkSizeWarningLimit: 1500 },
  // The dev server (`npx vite web`) proxies the backend so the session cookie stays same-origin.
  server: {
    proxy: {
      "/app": process.env.WEB_API_URL ?? "http://127.0.0.1:8080",
      "/v1": process.env.WEB_API_URL ?? "http://127.0.0.1:8080",
    },
  },
});
