/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The Kubernetes client, prom-client and selfsigned are Node-only; keep them out of the bundle.
  serverExternalPackages: ['@kubernetes/client-node', 'prom-client', 'selfsigned'],
  compress: false,
};

export default nextConfig;
