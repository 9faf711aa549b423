/** @type {import('next').NextConfig} */
const nextConfig = {
  reactStrictMode: true,
  poweredByHeader: false,
  // The Kubernetes client and prom-client are Node-only; keep them out of the bundle.
  serverExternalPackages: ['@kubernetes/client-node', 'prom-client'],
  compress: false,
};

export default nextConfig;
