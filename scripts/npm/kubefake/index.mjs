// ES module entry point (Node's test runner, Vitest): the CommonJS implementation re-exported.
import kubefake from './index.cjs';

export const { startKubefake, useKubefakeWith, binaryPath, platformPackage } = kubefake;
export default kubefake;
