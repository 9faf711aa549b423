/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The Kubernetes client and prom-client are Node-only; keep them out of the bundle.
  serverExternalPackages: ['@kubernetes/client-node', 'prom-client'],
  compress: false,
  // .next/standalone holds a server that runs with `node server.js` alone (the container image, scripts/start.ts).
  output: 'standalone',
  // Trace from this folder, so server.js sits at the top of .next/standalone whatever lies above the repository.
  outputFileTracingRoot: import.meta.dirname,
  // Read at run time, relative to the server's folder: the embedded cluster installs the demo's CRDs from it.
  outputFileTracingIncludes: { '/**': ['./deploy/demo/crds.yaml'] },
};

export default nextConfig;
