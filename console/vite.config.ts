import react from "@vitejs/plugin-react";
import { defineConfig } from "vitest/config";

// The bundle is committed inside the Python package, so `pip install` and
// `make up` need no Node. `make console` rebuilds it; a test rebuilds it into
// a temporary folder and fails when the committed copy differs.
export default defineConfig({
  base: "/console/",
  plugins: [react()],
  build: {
    outDir: "../gateway/console_dist",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    reportCompressedSize: true,
  },
  server: {
    proxy: { "/admin": "http://127.0.0.1:8080" },
  },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
