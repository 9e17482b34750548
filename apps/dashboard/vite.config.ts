import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the gateway under /app (gateway/src/dashboard.ts); every page's code is split by route, pdf.js only
// loads with the field editor.
export default defineConfig({
  base: '/app/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 600,
  },
});
