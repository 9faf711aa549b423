/** The embedded server's gitVersion: kube-apiserver's minor it speaks, marked as embedded for whoever reads /version. */
export const GIT_VERSION = 'v1.35.0-refwatch.embedded';

/** versionInfo is GET /version, in kube-apiserver's version.Info shape. */
export function versionInfo(): Record<string, string> {
  return {
    major: '1',
    minor: '35',
    emulationMajor: '1',
    emulationMinor: '35',
    minCompatibilityMajor: '1',
    minCompatibilityMinor: '34',
    gitVersion: GIT_VERSION,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: '',
    compiler: 'node',
    platform: `${process.platform}/${process.arch}`,
  };
}
