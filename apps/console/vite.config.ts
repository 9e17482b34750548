import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Served by the gateway under /console (gateway/src/console.ts); every page's code is split by route.
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
    chunkSizeWarningLimit: 600,
  },
});
