import type { KubefakeFixture, StartOptions } from './index.js';
export type { Kubefake, KubefakeFixture, StartOptions } from './index.js';
export { startKubefake } from './index.js';

/** One server for the enclosing file or describe block: started in Vitest's beforeAll, stopped in its afterAll. */
export function useKubefake(options?: StartOptions): KubefakeFixture;
