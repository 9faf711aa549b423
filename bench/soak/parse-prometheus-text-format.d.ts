declare module 'parse-prometheus-text-format' {
  /** Metric families of a Prometheus text exposition, with each sample's value as a string and its labels. */
  export default function parsePrometheusTextFormat(text: string): unknown[];
}
