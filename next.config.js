/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The Kubernetes client, prom-client and selfsigned are Node-only; keep them out of the bundle.
  serverExternalPackages: ['@kubernetes/client-node', 'prom-client', 'selfsigned'],
  // GET /api/v1/snapshot and other JSON go out gzipped when the client accepts it (route handlers cannot:
  // Next drops their Content-Encoding). The SSE stream says Cache-Control: no-transform, which this skips.
  compress: true,
  // .next/standalone holds a server that runs with `node server.js` alone (the container image, scripts/start.ts).
  output: 'standalone',
  // Trace from this folder, so server.js sits at the top of .next/standalone whatever lies above the repository.
  outputFileTracingRoot: import.meta.dirname,
  // Read at run time, relative to the server's folder (server.js makes it the cwd): the embedded
  // cluster installs the demo's CRDs, the ReferenceRules CRD and the example from these. A file read at
  // run time that is not imported must be listed here, or the standalone server and the image go without it.
  outputFileTracingIncludes: {
    '/**': ['./deploy/demo/**', './deploy/example/**', './deploy/kubernetes/base/referencerules-crd.yaml'],
  },
};

export default nextConfig;
